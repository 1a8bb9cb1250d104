package trace

import (
	"os"
	"sort"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Shared Nones (pickle.Keep.SharedNone): once the top sink folds a code
// object's arguments (sink_args.go: a code-carrying state), every NONE
// after a stream's first pushes that None again instead of a node of its
// own, as pk hash's OneNone does: 150,401 of the 521,661 records of the
// cloudpickle state of states.sh were Nones, 16 bytes of record, 8 of
// Self and owner and 5 of sizing each. What --top reads of them is kept
// here:
//
//   - its byte: the machine puts it in its consumer's Self, so every
//     size is what it was; a line's own bytes ("self") leave it out again
//     (noneBytes: the shared Nones among the node's children, but the one
//     it owns);
//   - its number (creation order, "#N"): where each NONE was read (the ID
//     the next node was to have, noneAt), so that a node's number counts
//     the Nones made before it (argSink.num);
//   - the shared Nones' IDs (shared), renumbered or dropped as a fold cuts
//     what follows lo (cutNones).
//
// The machine refuses what would make a shared None differ from a None of
// its own (a memo write, DUP, an operation, a pop; the input is then read
// again without the sink). At STOP the Nones' bytes must be in the Self
// of the nodes that list them (nonesAddUp), and no None that is no node
// may be among the N printed (every node of the heap is larger than one
// byte): else the file is read again without the sink.

// noShareNones turns the shared Nones off (PK_TRACE_NONES=0: to measure or
// cross-check them).
var noShareNones = os.Getenv("PK_TRACE_NONES") == "0"

// sharedNone is the sink's pickle.Keep.SharedNone.
func (as *argSink) sharedNone(s *pickle.Store, id pickle.ID) {
	as.pushes++
	if k := len(as.shared); k == 0 || as.shared[k-1] != id {
		as.shared = append(as.shared, id)
	}
	as.noneAt.push(pickle.ID(s.Len()))
}

// nonesIn returns how many shared Nones were read after node a was made
// and before node b was (a < e <= b for each entry e of noneAt).
func (as *argSink) nonesIn(a, b pickle.ID) int64 {
	if as.noneAt.n == 0 || b <= a {
		return 0
	}
	return as.nonesUpTo(b) - as.nonesUpTo(a)
}

// nonesUpTo returns the number of entries of noneAt at most v.
func (as *argSink) nonesUpTo(v pickle.ID) int64 {
	lo, hi := int64(0), as.noneAt.n
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		if *as.noneAt.at(m) <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// isShared reports whether x is a shared None.
func (as *argSink) isShared(x pickle.ID) bool {
	i := sort.Search(len(as.shared), func(i int) bool { return as.shared[i] >= x })
	return i < len(as.shared) && as.shared[i] == x
}

// noneBytes returns the bytes of the shared Nones' NONEs in the Self of
// node x of s: the shared Nones among its children, but the one it owns.
func (as *argSink) noneBytes(s *pickle.Store, x pickle.ID) int64 {
	if len(as.shared) == 0 {
		return 0
	}
	return noneBytesBy(s, x, as.isShared)
}

// noneBytesBy is noneBytes with shared telling the shared Nones.
func noneBytesBy(s *pickle.Store, x pickle.ID, shared func(pickle.ID) bool) int64 {
	switch s.Kind(x) {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes, pickle.KindByteArray, pickle.KindFolded:
		return 0
	}
	var k int64
	origin := false
	switch s.Kind(x) {
	case pickle.KindList, pickle.KindTuple, pickle.KindDict, pickle.KindSet, pickle.KindFrozenSet:
		if s.NMuts(x) == 0 {
			// (its children are its items: eachChild's, without the walk)
			for _, c := range s.Items(x) {
				if c >= 0 && s.Kind(c) == pickle.KindNone && shared(c) {
					if !origin && s.Owner(c) == x {
						origin = true
					} else {
						k++
					}
				}
			}
			return k
		}
	}
	eachChild(s, x, func(c pickle.ID, _ role, _ bool) bool {
		if c >= 0 && s.Kind(c) == pickle.KindNone && shared(c) {
			if !origin && s.Owner(c) == x {
				origin = true // (its own: made where x took it)
			} else {
				k++
			}
		}
		return true
	})
	return k
}

// cutNones brings noneAt and shared past the fold of lo..a under way: the
// NONEs read while the tuple was made leave noneAt (the numbers of the
// nodes they preceded are kept: argsDone), and a shared None the fold
// cuts leaves shared, one it keeps takes its new ID (lo and up, the kept
// in order).
func (as *argSink) cutNones(lo, fid pickle.ID) {
	if as.noneAt.n == 0 {
		return
	}
	as.noneAt.truncate(as.nonesUpTo(lo))
	i := sort.Search(len(as.shared), func(i int) bool { return as.shared[i] >= lo })
	out := as.shared[:i]
	for _, x := range as.shared[i:] {
		if x > as.a || as.cut[x-lo] {
			continue
		}
		nx := lo
		for y := lo; y < x; y++ {
			if !as.cut[y-lo] {
				nx++
			}
		}
		if nx < fid {
			out = append(out, nx)
		}
	}
	as.shared = out
}

// nonesAddUp reports whether the bytes of every NONE of a shared None are
// in the Self of a node that lists it (or of one the folds cut).
func (as *argSink) nonesAddUp(st *StreamTree) bool {
	if as.pushes == 0 {
		return true
	}
	s := st.Store
	n := s.Len()
	bits := make([]uint64, (n+63)/64)
	for _, x := range as.shared {
		if x < 0 || int(x) >= n || s.Kind(x) != pickle.KindNone {
			return false
		}
		bits[x>>6] |= 1 << (x & 63)
	}
	shared := func(x pickle.ID) bool { return int(x) < n && bits[x>>6]&(1<<(x&63)) != 0 }
	k := as.cutK
	for id := range pickle.ID(n) {
		k += noneBytesBy(s, id, shared)
	}
	return k == as.pushes
}

// namesShared reports whether the label of node x would name a shared
// None's number (a setstate of None: its number is no None's of its own).
func (as *argSink) namesShared(st *StreamTree, x pickle.ID) bool {
	if len(as.shared) == 0 || st.Store.Kind(x) != pickle.KindCall {
		return false
	}
	s := st.Store
	switch callee(s, x) {
	case "cloudpickle._function_setstate", "cloudpickle._class_setstate":
		tg := arg(s, x, 0)
		return tg != pickle.NoID && as.isShared(tg)
	}
	return false
}

// numsFrom appends to out the numbers of nodes lo..a, all made after the
// last fold's call (argSink.num of each, in one pass).
func (as *argSink) numsFrom(lo, a pickle.ID, out []int32) []int32 {
	var after int32
	from := pickle.ID(-1)
	if k := as.folds.n; k > 0 {
		f := as.folds.at(k - 1)
		after, from = f.after, f.fid
	}
	j := as.nonesUpTo(lo - 1)
	base := j - as.nonesUpTo(from)
	for x := lo; x <= a; x++ {
		for j < as.noneAt.n && *as.noneAt.at(j) <= x {
			j++
			base++
		}
		out = append(out, int32(x)+after+int32(base))
	}
	return out
}
