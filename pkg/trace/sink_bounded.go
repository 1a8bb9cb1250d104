package trace

import "github.com/pk-tools/pk/pkg/pickle"

// The default view's sink: `pk trace` without a view flag (WriteBounded)
// of a bare pickle file of one stream read through the top sink (sink.go),
// so that a table of rows the fast paths do not take (objects, namespaces,
// rows beside a call) is not held whole to choose its 40 lines.
//
// The lines the view shows are the largest competing objects (bounded.go:
// an object is larger than anything it holds, so the lines chosen from the
// top down are the first of all competing objects in size order, ties in
// creation order). So of what the sink folds, the view can show only the
// budget's number of the best competing nodes: the sink keeps those
// (offerBounded: the heap of --top, with the lines' facts, their display
// children's count and their role under their parent), and at STOP hangs
// them below the nodes they belong to (finishBounded: Tree.sunkKids, by the
// parent's number), where the view's walk offers them beside the store's
// own children (boundedOf). A folded run among a list's children counts
// the items it stands for, none of which competes there itself.

// offerBounded is offer for the default view: node x of folded root r
// (sequence seq) goes into the heap when it would have a line of its own
// and is among the n best so far.
func (sk *topSink) offerBounded(st *StreamTree, x, r pickle.ID, seq int32) {
	s := st.Store
	size := st.incl.at(x)
	if isScalar(s, x) && size < SmallScalar {
		return // (counted in its parent's aggregate line, never a line)
	}
	c := sunkCand{size: size, num: sk.num[x], seq: seq, folded: true, up: -1}
	if len(sk.h) == sk.n && !better(&c, &sk.h[0]) {
		return
	}
	if x != r {
		o := s.Owner(x)
		c.up = sk.num[o]
		c.role, _ = st.roleIn(o, x)
	}
	it := st.nodeItem(x, "", nil)
	f := st.factsOf(x)
	f.code, f.label = st.describe(x)
	f.memo = s.Has(x, pickle.FlagMemo)
	st.eachNodeKid(x, func(kid) { f.kids++ })
	c.self, c.facts = it.Self, &f
	sk.push(c)
}

// finishBounded gives t the folded lines the default view may show, by the
// number of the node each hangs below (a root: its run's list, with its
// index there as its role); false when the sink cannot give them exactly.
func (sk *topSink) finishBounded(t *Tree, st *StreamTree, gone []uint8) bool {
	if sk.lost {
		return false
	}
	s := st.Store
	runs := foldedRuns(s)
	kids := make(map[int64][]Item, len(sk.h))
	for i := range sk.h {
		c := &sk.h[i]
		rs, up := c.role, int64(c.up)
		if c.up < 0 {
			ra, r, ok := runs.of(s, c.seq, gone)
			if !ok {
				return false
			}
			rs, up = r.str(s), st.numOf(ra.list)
		}
		kids[up] = append(kids[up], Item{Kind: ItemNode, Stream: st, Node: pickle.NoID, Role: rs, Size: c.size, Self: c.self, sunk: c.facts})
	}
	t.sunkKids = kids
	return true
}
