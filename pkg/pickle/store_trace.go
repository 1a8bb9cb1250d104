package pickle

import "slices"

// SetNoItems gives id n items that are all NoID, appended to the ID arena
// in place (no temporary slice; the arena grows once). With ShareItems it
// gives the containers of a synthetic store their item counts.
func (s *Store) SetNoItems(id ID, n int) {
	if s.recs[id].kind == KindCall || n < 0 {
		panic("pickle: SetNoItems of a call")
	}
	if s.recs[id].kind == KindGlobal {
		items := make([]ID, n)
		for i := range items {
			items[i] = NoID
		}
		s.SetItems(id, items) // (its names follow its items)
		return
	}
	s.kids = slices.Grow(s.kids, n)
	s.recs[id].setKids(int32(len(s.kids)), int32(n))
	for range n {
		s.kids = append(s.kids, NoID)
	}
	s.dropKcap(id)
}

// ShareItems gives dst the first n items of src without copying them: dst's
// items become a view of src's part of the ID arena (no Go pointer; n is at
// most NItems(src), neither node a call). pkg/trace's streaming fast paths
// build small synthetic stores in which a container's items matter only by
// their count (its label says "list[N]"): one run of NoIDs, set on the
// container with the most items, serves them all, as one slice of nils did
// for the *Node form. A later AppendItems on dst moves its items first
// (dst has no spare capacity), so src's items are never overwritten.
func (s *Store) ShareItems(dst, src ID, n int) {
	r := &s.recs[src]
	if n < 0 || n > int(r.nkid()) || r.kind == KindCall || s.recs[dst].kind == KindCall {
		panic("pickle: ShareItems out of range")
	}
	if s.recs[dst].kind == KindGlobal {
		s.SetItems(dst, s.Items(src)[:n]) // (its names follow its items)
		return
	}
	s.recs[dst].setKids(r.kid(), int32(n))
	s.dropKcap(dst)
}

// MutIter walks the operations applied to a node after its creation, in
// stream order, without allocating (Muts makes a new slice each call,
// which a consumer that looks at every node's operations, as pkg/trace's
// labels and child lists do, pays per node). It holds no Go pointer into
// the arenas but the store itself.
type MutIter struct {
	s *Store
	i int32 // 1 + the next operation in Store.muts; 0: done
}

// MutIter returns an iterator over the operations applied to id.
func (s *Store) MutIter(id ID) MutIter {
	if x := s.x(id); x != nil {
		return MutIter{s: s, i: x.mut}
	}
	return MutIter{}
}

// Next returns the next operation (its Args share the store's memory), or
// false when there is none.
func (it *MutIter) Next() (SMut, bool) {
	if it.i == 0 {
		return SMut{}, false
	}
	i := it.i - 1
	m := &it.s.muts[i]
	it.i = m.next
	return SMut{Op: m.op(), Offset: it.s.mutOff(i), Args: it.s.mutArgs(m)}, true
}
