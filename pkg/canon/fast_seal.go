package canon

// Sealing in the streaming hash (see fast.go): a container consumed by
// another gets its header, its entries or items in canonical order, and
// its place in the arena (or in the hash).

import (
	"bytes"
	"slices"
)

// sealFrom makes the values stack[x:] final (containers get their header
// and sorted body) and leaves their kinds and arena offsets in e.kinds and
// e.offs; the slots stay on the stack.
func (e *fastEnc) sealFrom(x int) error {
	e.kinds, e.offs = e.kinds[:0], e.offs[:0]
	open := false
	for _, s := range e.stack[x:] {
		if s.c >= 0 {
			open = true
			break
		}
	}
	if !open {
		for _, s := range e.stack[x:] {
			e.kinds = append(e.kinds, s.kind)
			e.offs = append(e.offs, s.off)
		}
		return nil
	}
	start := e.stack[x].off
	if len(e.arena)-start > inPlaceTail && len(e.stack)-x <= inPlaceItems {
		return e.sealInPlace(x)
	}
	tail := append(e.tmp[:0], e.arena[start:]...)
	e.tmp = tail
	if err := e.move(2 * len(tail)); err != nil {
		return err
	}
	e.arena = e.arena[:start]
	var err error
	for i := x; i < len(e.stack); i++ {
		s := &e.stack[i]
		lo := s.off - start
		hi := len(tail)
		if i+1 < len(e.stack) {
			hi = e.stack[i+1].off - start
		}
		s.off = len(e.arena)
		if s.c < 0 {
			e.arena = append(e.arena, tail[lo:hi]...)
		} else if e.arena, err = e.sealCont(e.arena, s, tail[lo:hi]); err != nil {
			return err
		}
		e.kinds = append(e.kinds, s.kind)
		e.offs = append(e.offs, s.off)
	}
	return nil
}

// Above inPlaceTail bytes of items to seal, and at most inPlaceItems of
// them, containers are sealed in place (their headers inserted by moving
// what follows) rather than through a copy of everything: a large list
// inside a dict then costs no second copy of itself.
const (
	inPlaceTail  = 1 << 20
	inPlaceItems = 64
)

// sealInPlace is sealFrom for a few large items.
func (e *fastEnc) sealInPlace(x int) error {
	for i := len(e.stack) - 1; i >= x; i-- {
		s := &e.stack[i]
		if s.c < 0 {
			continue
		}
		hi := len(e.arena)
		if i+1 < len(e.stack) {
			hi = e.stack[i+1].off
		}
		region := e.arena[s.off:hi]
		if e.conts[s.c].holds {
			return errSlow // placeholders would move: the graph path
		}
		head, err := e.sealHeader(e.tmp[:0], s, region)
		if err != nil {
			return err
		}
		e.tmp = head
		reordered := len(e.pieces) != 1 || len(e.pieces[0]) != len(region)
		if reordered {
			// the body in its new order, after the header, in the scratch
			for _, p := range e.pieces {
				e.tmp = append(e.tmp, p...)
			}
		}
		h := len(head)
		// make room for the header: everything from the region on moves by h
		e.arena = append(e.arena, make([]byte, h)...)
		copy(e.arena[s.off+h:], e.arena[s.off:len(e.arena)-h])
		if err := e.move(len(e.arena) - s.off); err != nil {
			return err
		}
		if reordered {
			copy(e.arena[s.off:], e.tmp)
		} else {
			copy(e.arena[s.off:], head)
		}
		for j := i + 1; j < len(e.stack); j++ {
			e.stack[j].off += h
		}
		e.release(s)
	}
	e.kinds, e.offs = e.kinds[:0], e.offs[:0]
	for _, s := range e.stack[x:] {
		e.kinds = append(e.kinds, s.kind)
		e.offs = append(e.offs, s.off)
	}
	return nil
}

// sealOut writes the final encodings of stack[x:] (appended to the list
// result) to the hash, and drops them from the arena.
func (e *fastEnc) sealOut(x int) error {
	start := e.stack[x].off
	var err error
	for i := x; i < len(e.stack); i++ {
		s := &e.stack[i]
		hi := len(e.arena)
		if i+1 < len(e.stack) {
			hi = e.stack[i+1].off
		}
		if s.c < 0 {
			e.out = append(e.out, e.arena[s.off:hi]...)
		} else if e.out, err = e.sealCont(e.out, s, e.arena[s.off:hi]); err != nil {
			return err
		}
	}
	e.arena = e.arena[:start]
	if len(e.out) >= 64<<10 {
		e.h.Write(e.out)
		e.out = e.out[:0]
	}
	return nil
}

// sealCont appends the final encoding of the container in slot s, whose
// body is region, to dst, and releases the container.
func (e *fastEnc) sealCont(dst []byte, s *fslot, region []byte) ([]byte, error) {
	dst, err := e.sealHeader(dst, s, region)
	if err != nil {
		return dst, err
	}
	holds := e.conts[s.c].holds
	for _, p := range e.pieces {
		if holds && len(p) > 0 && p[0] == 0 {
			e.phs = append(e.phs, len(dst)) // where the placeholder lands
		}
		dst = append(dst, p...)
	}
	e.release(s)
	return dst, nil
}

// sealHeader appends the header of the container in slot s (body region)
// to dst and leaves its body, in canonical order, in e.pieces (slices of
// region).
func (e *fastEnc) sealHeader(dst []byte, s *fslot, region []byte) ([]byte, error) {
	c := &e.conts[s.c]
	if c.stream || c.drop > 0 || (c.holds && !e.allowRoot) {
		return dst, errSlow // the result, or a dropped value, consumed by something
	}
	e.pieces = append(e.pieces[:0], region)
	switch s.kind {
	case fkList:
		dst = append(dst, 'N', 'l')
		dst = appendUvarint(dst, uint64(c.n))
		dst = append(dst, 0)
	case fkDict:
		dst = append(dst, 'N', 'd')
		dst = appendUvarint(dst, uint64(c.n))
		dst = append(dst, 0)
		perm, err := e.dictOrder(region, c.bounds)
		if err != nil {
			return dst, err
		}
		if perm != nil {
			e.pieces = e.pieces[:0]
			for _, i := range perm {
				e.pieces = append(e.pieces, boundsAt(region, c.bounds, 2*i), boundsAt(region, c.bounds, 2*i+1))
			}
		} else if len(e.drops) > 0 {
			e.pieces = e.pieces[:0]
			for i := range c.bounds {
				e.pieces = append(e.pieces, boundsAt(region, c.bounds, i))
			}
		}
	case fkSet:
		order, err := e.order(region, c.bounds, 0, true)
		if err != nil {
			return dst, err
		}
		dst = append(dst, 'N', 'e')
		dst = appendUvarint(dst, uint64(len(order)))
		dst = append(dst, 0)
		e.pieces = append(e.pieces[:0], order...)
	case fkCall:
		dst = append(dst, 'N', 'C', c.form)
		dst = appendUvarint(dst, uint64(len(c.ops)))
		for _, o := range c.ops {
			dst = append(dst, o.tag)
			dst = appendUvarint(dst, uint64(o.n))
		}
	default:
		return dst, errSlow
	}
	return dst, nil
}

// release marks the container in slot s final and frees its record.
func (e *fastEnc) release(s *fslot) {
	s.kind = fkIdent
	e.free = append(e.free, s.c)
	s.c = -1
}

// boundsAt returns piece i of region, whose pieces start at bounds.
func boundsAt(region []byte, bounds []int, i int) []byte {
	hi := len(region)
	if i+1 < len(bounds) {
		hi = bounds[i+1]
	}
	return region[bounds[i]:hi]
}

// order returns the items of a set or frozenset (region with item starts
// offs-base) sorted by their encoding; equal items make it give up.
func (e *fastEnc) order(region []byte, offs []int, base int, rel bool) ([][]byte, error) {
	items := e.sortKeys[:0]
	for i, off := range offs {
		lo := off
		if !rel {
			lo -= base
		}
		hi := len(region)
		if i+1 < len(offs) {
			hi = offs[i+1]
			if !rel {
				hi -= base
			}
		}
		items = append(items, region[lo:hi])
	}
	slices.SortStableFunc(items, bytes.Compare)
	for i := 1; i < len(items); i++ {
		if bytes.Equal(items[i-1], items[i]) {
			return nil, errSlow
		}
	}
	e.sortKeys = items
	return items, nil
}

// dictOrder returns the order of the entries of a dict body (region, with
// key and value starts in bounds) sorted by key, or nil to keep stream order
// (KeepDictOrder); duplicate keys make it give up.
func (e *fastEnc) dictOrder(region []byte, bounds []int) ([]int, error) {
	n := len(bounds) / 2
	at := func(i int) []byte { return boundsAt(region, bounds, i) }
	// the order of the keys: the last dict's when its keys were the same
	same := len(e.lastOffs) == n+1
	if same {
		for i := 0; i < n && same; i++ {
			same = bytes.Equal(at(2*i), e.lastKeys[e.lastOffs[i]:e.lastOffs[i+1]])
		}
	}
	if !same {
		e.lastKeys, e.lastOffs = e.lastKeys[:0], append(e.lastOffs[:0], 0)
		for i := 0; i < n; i++ {
			e.lastKeys = append(e.lastKeys, at(2*i)...)
			e.lastOffs = append(e.lastOffs, len(e.lastKeys))
		}
		perm := e.lastPerm[:0]
		for i := 0; i < n; i++ {
			perm = append(perm, i)
		}
		key := func(i int) []byte { return e.lastKeys[e.lastOffs[i]:e.lastOffs[i+1]] }
		slices.SortStableFunc(perm, func(a, b int) int { return bytes.Compare(key(a), key(b)) })
		for i := 1; i < n; i++ {
			if bytes.Equal(key(perm[i-1]), key(perm[i])) {
				e.lastOffs = e.lastOffs[:0]
				return nil, errSlow // duplicate keys: Python's rules, on the graph path
			}
		}
		e.lastPerm = perm
	}
	if e.opt.KeepDictOrder {
		return nil, nil
	}
	return e.lastPerm, nil
}
