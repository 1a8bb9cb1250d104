package diff

import (
	"bytes"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Lockstep equality: whether two nodes whose fingerprints cannot decide
// (on or above a cycle, or reaching an object twice) have equal canonical
// forms, without encoding either.
//
// canon encodes a node depth first, its children in canonical order, an
// object met a second time as a reference to the ordinal of its first
// visit. Two nodes' encodings are equal exactly when a walk of both in
// step, child i of one side beside child i of the other, meets pairs whose
// own parts are equal (kind, counts, call form, operation names: the
// fingerprint pass's header; a pure value's or a leaf object's
// fingerprint), and meets an object again exactly when it meets its
// partner again: the walk keeps the pairing both ways and a pair that
// breaks it differs. A pair of clean nodes (no object reached twice below
// them) is decided by its fingerprints.
//
// Asked for every pair along a chain, that walk (like canon's Digest, which
// the walk replaces here) would cost the chain's length each time: a
// million dicts closing a cycle took a million squared. So what a walk
// finds is kept: when it ends equal, every pair it paired is equal (the
// walk from any of them is a part of this one); when it ends at a pair
// whose own parts differ, every pair on the way from the pair asked to it
// differs (each reaches that difference by the same path on both sides).
// The diff's walk down the chain then asks again only past the
// difference, once. All walks together visit at most lockBudget pairs;
// past that the answer is not known, as canon's refused digests were.

// lockBudget is the number of pairs lockstep walks may visit in all for
// one pair of tables: 32 per node of the larger view, plus 2^20, the bound
// canon puts on the node visits of the digests these walks replace (a
// walk that ends equal is not taken as a shortcut by the next one, so
// objects sharing a large part each walk it).
func lockBudget(ta, tb *fpTable) int64 {
	return 32*int64(max(ta.n(), tb.n())) + 1<<20
}

// lockState is a table's side of the lockstep walks: what was found (by
// ID of this side: 1 + the partner's ID) and the pairing of the walk under
// way.
type lockState struct {
	peer    *fpTable // the other side these answers are about
	known   []int32  // 1 + the partner known equal, -(1 + it) known different (side A's)
	pair    []int32  // the walk's pairing: 1 + the partner
	touched []pickle.ID
	kids    []pickle.ID
	hdrs    []byte
	queue   []lockItem // (side A's: the walk's)
	budget  int64      // (side A's: what the walks may still visit)
}

func (s *lockState) reset(n int, peer *fpTable, answers bool) {
	s.peer = peer
	if len(s.pair) < n {
		s.pair = make([]int32, n)
	}
	if !answers {
		s.known = nil
	} else if len(s.known) < n {
		s.known = make([]int32, n)
	} else {
		clear(s.known)
	}
}

// lockItem is a pair the walk has met and will open: the place in the
// walk's queue of the pair it was met under (-1: the pair asked).
type lockItem struct {
	a, b   pickle.ID
	parent int32
}

// lockstep reports whether a (of ta's view) and b (of tb's) have equal
// canonical forms; known is false when the walks' budget is spent or a
// node has no fingerprint.
//
// The walk is breadth first: which pairs it meets does not depend on the
// order (child i is paired with child i whatever the order), and a walk
// that differs finds the difference nearest the pair asked first. Depth
// first, a walk down a chain of objects whose back-references differ one
// level down went to the end of the chain first, at every level the diff
// asked (two chains of 20,000 lists, each holding its parent on one side
// and its grandparent on the other: 10 s).
func lockstep(ta *fpTable, a canon.Ref, tb *fpTable, b canon.Ref) (eq, known bool) {
	sa, sb := &ta.lock, &tb.lock
	if sa.peer != tb || sb.peer != ta || sa.known == nil {
		// (a table answers for the side it is asked as: one asked as B
		// keeps no answers)
		sa.reset(ta.n(), tb, true)
		sb.reset(tb.n(), ta, false)
		sa.budget = lockBudget(ta, tb)
	}
	x, y := a.ID(), b.ID()
	if int(x) >= len(sa.known) || int(y) >= len(sb.pair) {
		return false, false
	}
	switch sa.known[x] {
	case int32(y) + 1:
		return true, true
	case -int32(y) - 1:
		return false, true
	}
	if sa.budget <= 0 {
		return false, false
	}
	queue := sa.queue[:0]
	// meet meets the pair (x, y) under the pair at queue[parent]: 1
	// equal so far (nothing below it to walk, or queued), 0 different in
	// their own parts, 2 different in what they were paired with before,
	// -1 not known
	meet := func(x, y pickle.ID, parent int32) int {
		sa.budget--
		if x < 0 || y < 0 {
			return b2i(x == y)
		}
		if int(x) >= len(sa.pair) || int(x) >= len(sa.known) || int(y) >= len(sb.pair) {
			return -1
		}
		pa, pb := sa.pair[x], sb.pair[y]
		if pa != 0 || pb != 0 {
			// met before in this walk: a reference to the same ordinal
			if pa == int32(y)+1 && pb == int32(x)+1 {
				return 1
			}
			return 2
		}
		if sa.known[x] == -int32(y)-1 {
			// found different by an earlier walk: reached by the same
			// path on both sides, it makes every pair on the way differ
			// too (a walk down a chain of shared objects stops at the
			// level the last one found different, not at the bottom)
			return 0
		}
		if !ta.has(x) || !tb.has(y) {
			return -1
		}
		fx, fy := ta.flags[x], tb.flags[y]
		if fx&fpPure != 0 || fy&fpPure != 0 {
			// a value: no identity, its fingerprint is its embedding
			return b2i(fx&fy&fpPure != 0 && ta.fps[x] == tb.fps[y])
		}
		if fx&fpDone == 0 || fy&fpDone == 0 {
			return -1
		}
		sa.pair[x], sb.pair[y] = int32(y)+1, int32(x)+1
		// (the lists grow by doubling: append's quarter steps copied a
		// walk around a million-node cycle many times over)
		sa.touched, sb.touched = append(grow.Room(sa.touched, 1), x), append(grow.Room(sb.touched, 1), y)
		if fx&fy&fpClean != 0 && fx&fy&fpCyclic == 0 {
			return b2i(ta.fps[x] == tb.fps[y])
		}
		queue = append(grow.Room(queue, 1), lockItem{a: x, b: y, parent: parent})
		return 1
	}
	sa.touched, sb.touched = sa.touched[:0], sb.touched[:0]
	r := meet(x, y, -1)
	at := int32(-1) // the pair under which the walk found a difference in own parts
	for i := 0; r == 1 && i < len(queue); i++ {
		it := queue[i]
		sa.kids, sb.kids = sa.kids[:0], sb.kids[:0]
		sa.hdrs, sb.hdrs = sa.hdrs[:0], sb.hdrs[:0]
		var okA, okB bool
		sa.kids, sa.hdrs, okA = children(a.Under(it.a), sa.hdrs, grow.Room(sa.kids, 16))
		sb.kids, sb.hdrs, okB = children(b.Under(it.b), sb.hdrs, grow.Room(sb.kids, 16))
		if !okA || !okB {
			// an object that is no container: its fingerprint is canon's
			// digest of it
			if okA != okB || ta.fps[it.a] != tb.fps[it.b] {
				r, at = 0, int32(i)
			}
			continue
		}
		if !bytes.Equal(sa.hdrs, sb.hdrs) || len(sa.kids) != len(sb.kids) {
			r, at = 0, int32(i)
			break
		}
		for k, cx := range sa.kids {
			if sa.budget <= 0 {
				r = -1
				break
			}
			if r = meet(cx, sb.kids[k], int32(i)); r != 1 {
				if r == 0 {
					at = int32(i)
				}
				break
			}
		}
	}
	switch r {
	case 1:
		// every pair paired is equal
		for i, x := range sa.touched {
			sa.known[x] = int32(sb.touched[i]) + 1
		}
	case 0:
		// every pair on the way from the one asked reaches the difference
		// by the same path on both sides
		for k := at; k >= 0; k = queue[k].parent {
			sa.known[queue[k].a] = -int32(queue[k].b) - 1
		}
		fallthrough
	case 2:
		// (a pairing broken: the pairs on the way may be equal by
		// themselves, what they met before was met elsewhere)
		sa.known[x] = -int32(y) - 1
	}
	for _, x := range sa.touched {
		sa.pair[x] = 0
	}
	for _, y := range sb.touched {
		sb.pair[y] = 0
	}
	sa.queue = queue
	for _, s := range []*lockState{sa, sb} {
		s.touched, s.kids, s.hdrs, s.queue = s.touched[:0], s.kids[:0], s.hdrs[:0], s.queue[:0]
		if cap(s.touched)+cap(s.kids)+cap(s.queue) > 1<<14 {
			// (a walk around a large cycle leaves tens of MB the diff's
			// walk would hold: the next such walk makes its own)
			s.touched, s.kids, s.hdrs, s.queue = nil, nil, nil, nil
		}
	}
	if r < 0 {
		return false, false
	}
	return r == 1, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
