package trace

import (
	"container/heap"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

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

// offerBounded is offer for the default view: the nodes of folded root r
// (sequence seq; owned, as subtree lists them, r first, each node's owned
// nodes side by side) go into the heap when they would have a line of
// their own and are among the n best so far. Their roles are read from
// one walk of each owner's children, not one a node: a row of a million
// children, many of which enter the heap one after another as they grow,
// costs its children once.
func (sk *topSink) offerBounded(st *StreamTree, owned []pickle.ID, r pickle.ID, seq int32) {
	s := st.Store
	worthy := func(x pickle.ID) (sunkCand, bool) {
		size := st.incl.at(x)
		if isScalar(s, x) && size < SmallScalar {
			return sunkCand{}, false // (counted in its parent's aggregate line, never a line)
		}
		c := sunkCand{size: size, num: sk.num[x], seq: seq, folded: true, up: -1}
		return c, len(sk.h) < sk.n || better(&c, &sk.h[0])
	}
	for i := 0; i < len(owned); {
		// the run of owned nodes with one owner (the root alone first)
		j := i + 1
		if owned[i] != r {
			for o := s.Owner(owned[i]); j < len(owned) && s.Owner(owned[j]) == o; j++ {
			}
		}
		group := owned[i:j]
		i = j
		var roles map[pickle.ID]string
		for _, x := range group {
			c, ok := worthy(x)
			if !ok {
				continue
			}
			if x != r {
				o := s.Owner(x)
				if roles == nil {
					roles = sk.rolesIn(st, o, group)
				}
				c.up, c.role = sk.num[o], roles[x]
			}
			it := st.nodeItem(x, "", nil)
			f := st.sunkFacts(x)
			st.eachNodeKid(x, func(kid) { f.kids++ })
			c.self, c.facts = it.Self, &f
			sk.push(c)
		}
	}
}

// rolesIn returns the roles under o of its owned nodes in group, from one
// walk of o's children.
func (sk *topSink) rolesIn(st *StreamTree, o pickle.ID, group []pickle.ID) map[pickle.ID]string {
	s := st.Store
	roles := make(map[pickle.ID]string, len(group))
	for _, x := range group {
		roles[x] = ""
	}
	eachChild(s, o, func(x pickle.ID, r role, _ bool) bool {
		if v, ok := roles[x]; ok && v == "" {
			roles[x] = r.str(s)
		}
		return true
	})
	for _, x := range group {
		if roles[x] == "" {
			roles[x] = role{kind: rOwned, i: int(x)}.str(s) // (as roleIn: owned, in no role)
		}
	}
	return roles
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

// argsBounded is offerBounded for the argument tuple lo..a the machine is
// cutting (argsDone, s as it stood): the nodes cut that would have a line
// of their own and are among the n best so far, with their roles under
// their owners (read once an owner) and the numbers of those.
func (sk *topSink) argsBounded(s *pickle.Store, lo, a pickle.ID) {
	as := sk.args
	st := &as.st
	*st = StreamTree{Store: s, upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root, doc: sk.doc}
	var worthy []pickle.ID
	for x := lo; x < a; x++ {
		if !as.cut[x-lo] || isScalar(s, x) && as.incl[x-lo] < SmallScalar {
			continue
		}
		c := sunkCand{size: as.incl[x-lo], num: as.nums[x-lo]}
		if len(sk.h) < sk.n || better(&c, &sk.h[0]) {
			worthy = append(worthy, x)
		}
	}
	byOwner := map[pickle.ID][]pickle.ID{}
	for _, x := range worthy {
		o := s.Owner(x)
		byOwner[o] = append(byOwner[o], x)
	}
	roles := map[pickle.ID]map[pickle.ID]string{}
	for _, x := range worthy {
		c := sunkCand{size: as.incl[x-lo], num: as.nums[x-lo], seq: int32(as.folds.n - 1), folded: true}
		if len(sk.h) == sk.n && !better(&c, &sk.h[0]) {
			continue
		}
		o := s.Owner(x)
		if roles[o] == nil {
			roles[o] = sk.rolesIn(st, o, byOwner[o])
		}
		c.up, c.role = as.nums[o-lo], roles[o][x]
		f := st.sunkFacts(x)
		f.num = int64(c.num)
		eachChild(s, x, func(_ pickle.ID, _ role, folded bool) bool {
			if !folded {
				f.kids++
			}
			return true
		})
		c.self, c.facts = s.Self(x)-as.noneBytes(s, x), &f
		sk.push(c)
	}
}

// finishArgsBounded is finishBounded for a store whose code objects'
// arguments the sink folded (finishArgs has checked that the folds give
// the whole stream): false when a node that may have a line (one of the n
// best that would) hangs below a folded tuple (the memo kept it; its role
// there is gone) or names a shared None (nones.go).
func (sk *topSink) finishArgsBounded(t *Tree, st *StreamTree) bool {
	s := st.Store
	n := s.Len()
	// the n best nodes that would have lines: the heap's and the store's
	best := append(candHeap(nil), sk.h...)
	offer := func(id pickle.ID) {
		c := sunkCand{size: st.incl.at(id), id: id}
		if len(best) == sk.n && c.size < best[0].size {
			return
		}
		c.num = int32(st.numOf(id))
		switch {
		case len(best) < sk.n:
			heap.Push(&best, c)
		case better(&c, &best[0]):
			best[0] = c
			heap.Fix(&best, 0)
		}
	}
	competing := func(id pickle.ID) bool {
		return s.Kind(id) != pickle.KindFolded && !(isScalar(s, id) && st.incl.at(id) < SmallScalar)
	}
	for id := range pickle.ID(n) {
		if competing(id) {
			offer(id)
		}
	}
	up := upChain{s: s, mark: make([]uint8, n), hit: func(x pickle.ID) bool { return s.Kind(x) == pickle.KindFolded }}
	for _, c := range best {
		if c.folded {
			continue
		}
		if o := s.Owner(c.id); o != pickle.NoID && up.of(o) != 2 || sk.args.namesShared(st, c.id) {
			return false // (below a folded tuple, or malformed ownership)
		}
	}
	kids := make(map[int64][]Item, len(sk.h))
	for i := range sk.h {
		c := &sk.h[i]
		kids[int64(c.up)] = append(kids[int64(c.up)], Item{Kind: ItemNode, Stream: st, Node: pickle.NoID, Role: c.role, Size: c.size, Self: c.self, sunk: c.facts})
	}
	t.sunkKids = kids
	return true
}
