package pickle

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
	if n < 0 || n > int(r.nkid) || r.kind == KindCall || s.recs[dst].kind == KindCall {
		panic("pickle: ShareItems out of range")
	}
	d := &s.recs[dst]
	d.kid, d.nkid = r.kid, int32(n)
	if x := s.x(dst); x != nil {
		x.kcap = 0
	}
}
