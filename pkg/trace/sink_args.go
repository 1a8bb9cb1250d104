package trace

import (
	"math"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Code objects' arguments folded at their REDUCE (the top sink's second
// way of folding, for --top N of a code-carrying state; docs/engine.md §4,
// session 32). A cloudpickle or dill state is held whole (the top sink's
// compactions do not take it: producerState), and most of its nodes are
// its code objects' argument tuples (bytecode, names, constants, line
// tables): 330,000 of the 851,000 records of the cloudpickle state of
// states.sh. The machine folds such a tuple at its REDUCE
// (pickle.Keep.FoldArgs, foldargs.go: a KindFolded node with FlagFoldArgs
// in its place, the nodes it owned cut but for those the memo will read
// again), and the sink keeps of it what --top reads:
//
//   - the tuple's own bytes, its item count (its label) and the bytes of
//     every node cut (the folded node's share of the sizes: selfOf);
//   - the code object's name (its label and a function's that has no name
//     of its own: codeNameOf);
//   - the numbers (creation order, "#N" and "id") of the nodes kept and of
//     the tuple, and how far the nodes after the call are from their
//     numbers (numOf);
//   - the nodes cut that are among the N largest folded so far, each with
//     its size, its own bytes, its facts and its path below the call, in
//     the top sink's heap (sk.h), as for a folded row.
//
// The machine calls Released for the nodes it cuts in creation order, the
// tuple last, before it moves anything: at the tuple the sink reads them
// all in the store as it stood (argsDone). At STOP (finishArgs) the
// folded node is the tuple (its label, its own bytes), the store's nodes
// and the heap's compete in Top's order, and a folded one's path is its
// call's path and its roles below the call. Where it cannot give the
// answer exactly, the file is read again without the sink: a node kept
// below a tuple cut among the N printed (its path below the tuple is not
// kept), a node kept or a folded node changed after the fold (hostile
// input: its bytes or what it owns would differ), a file of more than one
// stream, sizes that do not add up.

// argFold is one argument tuple the machine folded (48 bytes: a
// cloudpickle state folds 22,400).
type argFold struct {
	lo, fid pickle.ID // after the fold: the nodes kept are lo..fid-1, the folded node fid, the call fid+1
	after   int32     // past the call, a node's number is its ID + after (the folded node's: fid + after)
	kept    int32     // where the numbers of the nodes kept start in argSink.keptNum
	self    uint32    // the tuple's own bytes
	nItems  uint32    // its items (its label)
	cut     int64     // the bytes of every node cut, the tuple's with them
	name    string    // the code object's name
}

// argSink is what the top sink keeps of the argument tuples it folded.
type argSink struct {
	folds    pages[argFold]
	keptNum  pages[int32]
	keptSelf int64 // the own bytes of the nodes kept, at their folds
	// the fold under way: FoldArgs said yes to the tuple lo..a, Released
	// names the nodes cut (by ID - lo)
	pend  bool
	lo, a pickle.ID
	cut   []bool
	incl  []int64 // scratch: the sizes of lo..a
	st    StreamTree
	// the Nones shared (pickle.Keep.SharedNone, from the first fold on;
	// nones.go): where each NONE that pushed a shared None was read (the
	// ID the next node was to have), the shared Nones' IDs, the NONEs
	// read and what the nodes cut had of them
	noneAt       pages[pickle.ID]
	shared       []pickle.ID
	pushes, cutK int64
	nums         []int32 // scratch: the numbers of lo..a-1
}

// codeArgsMin is the fewest items of an argument tuple the sink is asked
// about (a code object's: 16 or more since Python 3.8; canon's bound).
const codeArgsMin = 15

// argsKeep adds the fold of code objects' arguments to kp.
func (sk *topSink) argsKeep(kp *pickle.Keep) {
	sk.kp = kp
	kp.FoldArgs, kp.FoldCall, kp.FoldArgsMin = sk.foldArgs, sk.foldCall, codeArgsMin
}

// foldCall is the sink's pickle.Keep.FoldCall: a code object's call, in
// the first stream, in a store the sink never compacted.
func (sk *topSink) foldCall(s *pickle.Store, c pickle.ID) bool {
	if s.Index != 0 || sk.num != nil || sk.lost || sk.n <= 0 {
		return false
	}
	return calleeIs(s, c, "types.CodeType", "dill._create_code")
}

// foldArgs is the sink's pickle.Keep.FoldArgs: it folds the tuple c-1,
// which owns lo..c-2, when each of those is owned by a later node of the
// range (so sized in one pass up) and its own bytes fit in 31 bits; what
// it keeps of it is read as the machine names the nodes it cuts
// (released, argsDone).
func (sk *topSink) foldArgs(s *pickle.Store, c, lo pickle.ID) pickle.Folded {
	a := c - 1
	if lo > a || s.Self(a) > math.MaxUint32 || s.NItems(a) > math.MaxUint32 {
		return pickle.Folded{}
	}
	for x := lo; x < a; x++ {
		if o := s.Owner(x); o <= x || o > a {
			return pickle.Folded{}
		}
	}
	if sk.args == nil {
		sk.args = &argSink{}
		if sk.kp != nil && !noShareNones {
			sk.kp.SharedNone = sk.args.sharedNone // (from here: nones.go)
		}
	}
	as := sk.args
	n := int(a-lo) + 1
	as.cut = grow.Reuse(as.cut, n)
	clear(as.cut)
	as.pend, as.lo, as.a = true, lo, a
	return pickle.Folded{Off: int64(as.folds.n), Len: 1, OK: true}
}

// argReleased notes that the machine cuts node id of the fold under way;
// at the tuple, the last, the fold is read (argsDone).
func (as *argSink) released(sk *topSink, s *pickle.Store, id pickle.ID) {
	if id < as.lo || id > as.a {
		sk.lost = true
		return
	}
	as.cut[id-as.lo] = true
	if id == as.a {
		as.pend = false
		sk.argsDone(s)
	}
}

// argsDone reads the fold under way in s as it stood before the machine
// cut it (see above).
func (sk *topSink) argsDone(s *pickle.Store) {
	as := sk.args
	lo, a := as.lo, as.a
	c := a + 1
	n := int(a-lo) + 1
	// sizes, owned before owner (foldArgs checked it)
	incl := grow.Reuse(as.incl, n)
	clear(incl)
	as.incl = incl
	for x := lo; x <= a; x++ {
		incl[x-lo] += s.Self(x)
		if x < a {
			incl[s.Owner(x)-lo] += incl[x-lo]
		}
	}
	// the numbers of lo..a as the store stands (all past the last fold)
	nums := as.numsFrom(lo, a, as.nums[:0])
	as.nums = nums
	f := argFold{lo: lo, kept: int32(as.keptNum.n), nItems: uint32(s.NItems(a)), self: uint32(s.Self(a) - as.noneBytes(s, a))}
	nKept := int32(0)
	for x := lo; x < a; x++ {
		if as.cut[x-lo] {
			f.cut += s.Self(x)
			as.cutK += as.noneBytes(s, x)
			continue
		}
		as.keptNum.push(nums[x-lo])
		as.keptSelf += s.Self(x)
		nKept++
	}
	f.cut += s.Self(a)
	as.cutK += as.noneBytes(s, a)
	f.fid = lo + pickle.ID(nKept)
	f.after = nums[a-lo] - int32(f.fid)
	f.name = strings.Clone(codeName(s, c)) // (the store's text moves at the cut)
	as.cutNones(lo, f.fid)
	as.folds.push(f)
	// the nodes cut among the n largest folded so far
	if sk.n <= 0 {
		return
	}
	st := &as.st
	if sk.bview {
		sk.argsBounded(s, lo, a)
		return
	}
	for x := lo; x < a; x++ {
		if !as.cut[x-lo] {
			continue
		}
		cand := sunkCand{size: incl[x-lo], num: as.nums[x-lo], seq: int32(as.folds.n - 1), folded: true}
		if len(sk.h) == sk.n && !better(&cand, &sk.h[0]) {
			continue
		}
		*st = StreamTree{Store: s, upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root, doc: sk.doc}
		below, skip := st.pathParts(x, c)
		if skip > 0 {
			sk.lost = true // (the call's own role left out: not met)
			return
		}
		facts := st.sunkFacts(x)
		facts.num = int64(cand.num)
		cand.self, cand.below, cand.facts = s.Self(x)-as.noneBytes(s, x), below, &facts
		sk.push(cand)
	}
}

// argFoldOf returns the fold of node x when x is a folded argument tuple
// of the store the sink read.
func (st *StreamTree) argFoldOf(x pickle.ID) (*argFold, bool) {
	sk := st.sink
	if sk == nil || sk.args == nil || x < 0 || st.Store.Kind(x) != pickle.KindFolded || st.Store.Flags(x)&pickle.FlagFoldArgs == 0 {
		return nil, false
	}
	off, _, _, _ := st.Store.FoldedRun(x)
	as := sk.args
	if off < 0 || off >= int64(as.folds.n) || as.folds.at(off).fid != x {
		return nil, false
	}
	return as.folds.at(off), true
}

// isArgFold reports whether x is a folded argument tuple (argFoldOf).
func (st *StreamTree) isArgFold(x pickle.ID) bool {
	_, ok := st.argFoldOf(x)
	return ok
}

// codeNameOf is codeName of call n, whose arguments the sink may have
// folded.
func (st *StreamTree) codeNameOf(n pickle.ID) string {
	if f, ok := st.argFoldOf(st.Store.Args(n)); ok {
		return f.name
	}
	return codeName(st.Store, n)
}

// argNum returns the number of node id of a store whose arguments the
// sink folded (see argFold).
func (as *argSink) num(id pickle.ID) int64 {
	lo, hi := int64(0), as.folds.n // the first fold past id
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		if as.folds.at(m).lo <= id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return int64(id) + as.nonesIn(-1, id)
	}
	f := as.folds.at(lo - 1)
	if id >= f.fid {
		return int64(id) + int64(f.after) + as.nonesIn(f.fid, id) // (the folded node: the tuple's number)
	}
	return int64(*as.keptNum.at(int64(f.kept) + int64(id-f.lo)))
}

// finishArgs sets t's Top from the store of its only stream st, whose
// code objects' arguments the sink folded, and the folded candidates;
// false when it cannot give it exactly (see above).
func (sk *topSink) finishArgs(t *Tree, st *StreamTree) bool {
	if !sk.argsSettle(t, st) {
		return false
	}
	if sk.bview {
		return sk.finishArgsBounded(t, st)
	}
	s := st.Store
	n := s.Len()
	as := sk.args
	for id := range pickle.ID(n) {
		c := sunkCand{size: st.incl.at(id), id: id}
		if len(sk.h) == sk.n && c.size < sk.h[0].size {
			continue // (not better whatever its number: no search for it)
		}
		c.num = int32(st.numOf(id))
		if len(sk.h) < sk.n || better(&c, &sk.h[0]) {
			sk.push(c)
		}
	}
	h := sk.h
	if as.pushes > 0 && (len(h) < sk.n || h[0].size <= 1) {
		return false // (a None of one byte that is no node could be among the n)
	}
	sort.Slice(h, func(i, j int) bool { return better(&h[i], &h[j]) })
	items := make([]Item, 0, len(h))
	for i := range h {
		c := &h[i]
		if !c.folded {
			// (a node kept below a folded tuple: its roles there are gone)
			for x, k := s.Owner(c.id), 0; x != pickle.NoID; x, k = s.Owner(x), k+1 {
				if s.Kind(x) == pickle.KindFolded || k > n {
					return false
				}
			}
			if as.namesShared(st, c.id) {
				return false
			}
			items = append(items, st.nodeItem(c.id, "", link(nil, t.PathOf(st, c.id))))
			continue
		}
		call := as.folds.at(int64(c.seq)).fid + 1
		p := t.PathOf(st, call)
		for k := len(c.below) - 1; k >= 0; k-- {
			p += c.below[k]
		}
		items = append(items, Item{Kind: ItemNode, Stream: st, Node: pickle.NoID, pl: link(nil, p), Size: c.size, Self: c.self, sunk: c.facts})
	}
	t.fast = &fastTop{n: sk.n, items: items}
	return true
}

// argsSettle checks that st, the store of t's only stream at STOP, whose
// code objects' arguments the sink folded, and the folds give the whole
// stream exactly (see above).
func (sk *topSink) argsSettle(t *Tree, st *StreamTree) bool {
	if sk.lost || sk.num != nil || sk.args.pend || t.nStreams != 1 || len(t.Streams) != 1 || t.Streams[0] != st || t.File.Trailing != nil || len(t.top) > 0 {
		return false
	}
	s := st.Store
	n := s.Len()
	as := sk.args
	// nothing the folds read changed since: the nodes kept and the folded
	// nodes have their bytes and no operation
	var kept int64
	for i := range as.folds.n {
		f := as.folds.at(i)
		if f.fid >= pickle.ID(n) || s.Kind(f.fid) != pickle.KindFolded || s.Self(f.fid) != 1 || s.NMuts(f.fid) != 0 {
			return false
		}
		for x := f.lo; x < f.fid; x++ {
			if s.NMuts(x) != 0 {
				return false
			}
			kept += s.Self(x)
		}
	}
	if kept != as.keptSelf {
		return false
	}
	// the bytes add up
	total := s.StreamSelf
	for id := range pickle.ID(n) {
		if s.Owner(id) == pickle.NoID {
			total += st.incl.at(id)
		}
	}
	if total != s.Length() {
		return false
	}
	// every NONE of a shared None is in its consumer's Self (nones.go)
	if !as.nonesAddUp(st) {
		return false
	}
	return true
}

// pages is a table appended to in pages of pageLen entries, each allocated
// once at its full size (append grows a slice by a quarter at a time past
// a few hundred entries, allocating four to five times its length; at
// pk's collector pace that garbage piles up while a state is read). The
// fast paths' paged has pages of 64K entries, for tables of millions.
type pages[T any] struct {
	p [][]T
	n int64
}

const pageLen = 1 << 10

func (q *pages[T]) push(v T) {
	if q.n%pageLen == 0 {
		q.p = append(q.p, make([]T, 0, pageLen))
	}
	l := len(q.p) - 1
	q.p[l] = append(q.p[l], v)
	q.n++
}

func (q *pages[T]) at(i int64) *T { return &q.p[i/pageLen][i%pageLen] }

// truncate keeps the first n entries (n at most q.n).
func (q *pages[T]) truncate(n int64) {
	q.p = q.p[:(n+pageLen-1)/pageLen]
	if l := len(q.p) - 1; l >= 0 {
		q.p[l] = q.p[l][:n-int64(l)*pageLen]
	}
	q.n = n
}
