package canon

// Sealing in the streaming hash (see fast.go): a container consumed by
// another becomes final: its header and the canonical order of its body
// are decided then. Its bytes do not move: the arena holds the encodings
// of the leaves (scalars, pure composites) in stream order, and a sealed
// container is a record (fastEnc.recs) that says where its body lies in
// the arena, what header goes before it, which records lie inside it
// (its kids, in stream order) and, for a dict whose entries are reordered,
// the order of its entries. The canonical bytes of a value are written by
// emit, which walks the records with an explicit stack. So sealing costs
// the header and the sort, never the size of what is inside, and a
// million nested containers cost a million records, not a million copies
// of everything below them.

import (
	"bytes"
	"slices"
)

// frec is a sealed container.
type frec struct {
	off, end int   // its body in the arena
	hdr      int   // its header: fastEnc.hdrs[hdr:hdr+hlen]
	hlen     int32 //
	kh, kt   int32 // the records inside its body (first, last), -1 when none
	next     int32 // the next record in the chain it is part of
	ents     int32 // dict entries in canonical order: fastEnc.ents[ents:ents+nents], when reordered or holding placeholders
	nents    int32
	holds    bool // its values may be placeholders of dropped values (emit replays them)
}

// recBlocks holds the records in blocks of a fixed size: growing it
// never copies (a million nested containers would otherwise leave a
// trail of ever larger copies for the collector).
type recBlocks struct {
	b [][]frec
	n int32
}

const recBlock = 4096

func (r *recBlocks) at(i int32) *frec { return &r.b[i/recBlock][i%recBlock] }

func (r *recBlocks) add(x frec) int32 {
	if int(r.n/recBlock) == len(r.b) {
		r.b = append(r.b, make([]frec, recBlock))
	}
	*r.at(r.n) = x
	r.n++
	return r.n - 1
}

// cut drops the records from n on (their blocks stay for reuse but one).
func (r *recBlocks) cut(n int32) {
	r.n = n
	if keep := int(n/recBlock) + 2; keep < len(r.b) {
		clear(r.b[keep:])
		r.b = r.b[:keep]
	}
}

// fent is one dict entry of a reordered dict: key bytes [klo, vlo), value
// bytes [vlo, vhi) with the records kh..kt inside the value.
type fent struct {
	klo, vlo, vhi int
	kh, kt        int32
}

// link appends the chain kh..kt to the chain (*h, *t).
func (e *fastEnc) link(h, t *int32, kh, kt int32) {
	if kh < 0 {
		return
	}
	if *h < 0 {
		*h, *t = kh, kt
		return
	}
	e.recs.at(*t).next = kh
	*t = kt
}

// cut drops the arena from off and the records from r0 (with their
// headers and entries): what the slots from there on held.
func (e *fastEnc) cut(off int, r0 int32) {
	e.arena = e.arena[:off]
	if r0 < e.recs.n {
		r := e.recs.at(r0)
		e.hdrs = e.hdrs[:r.hdr]
		e.ents = e.ents[:r.ents]
		e.recs.cut(r0)
	}
}

// slotEnd is where the bytes of slot i end.
func (e *fastEnc) slotEnd(i int) int {
	if i+1 < len(e.stack) {
		return e.stack[i+1].off
	}
	return len(e.arena)
}

// sealFrom makes the values stack[x:] final (containers become records);
// the slots stay on the stack.
func (e *fastEnc) sealFrom(x int) error {
	for i := x; i < len(e.stack); i++ {
		if s := &e.stack[i]; s.c >= 0 {
			if err := e.seal(s, e.slotEnd(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotOffs returns the arena offsets of stack[x:] (in e.offs, valid until
// the next call).
func (e *fastEnc) slotOffs(x int) []int {
	e.offs = e.offs[:0]
	for i := x; i < len(e.stack); i++ {
		e.offs = append(e.offs, e.stack[i].off)
	}
	return e.offs
}

// seal turns the container in slot s, whose body ends at end, into a
// record: the slot then holds that one record.
func (e *fastEnc) seal(s *fslot, end int) error {
	c := &e.conts[s.c]
	r := frec{off: s.off, end: end, hdr: len(e.hdrs), kh: s.kh, kt: s.kt, next: -1, ents: int32(len(e.ents)), holds: c.holds}
	hdrs, perm, err := e.head(e.hdrs, s, end)
	e.hdrs = hdrs
	if err != nil {
		return err
	}
	if s.kind == fkDict && (perm != nil || c.holds) {
		n := len(c.bounds) / 2
		for k := 0; k < n; k++ {
			i := k
			if perm != nil {
				i = perm[k]
			}
			vhi := end - s.off
			if 2*i+2 < len(c.bounds) {
				vhi = c.bounds[2*i+2]
			}
			e.ents = append(e.ents, fent{})
			en := &e.ents[len(e.ents)-1] // set in place (see pushSlot)
			en.klo, en.vlo, en.vhi, en.kh, en.kt = s.off+c.bounds[2*i], s.off+c.bounds[2*i+1], s.off+vhi, c.vk[2*i], c.vk[2*i+1]
		}
		r.nents = int32(n)
	}
	r.hlen = int32(len(e.hdrs) - r.hdr)
	k := e.recs.add(r)
	s.kh, s.kt = k, k
	e.release(s)
	return nil
}

// head appends to dst the header of the container in slot s, whose body
// ends at end, and decides the canonical order of its body: a set's items
// are sorted in place (they are pure: no record lies among them); a dict's
// entries are in perm's order (nil: as they are). It is where every rule of
// a sealed container's form lies (seal makes a record of it, sealOut writes
// it out at once).
func (e *fastEnc) head(dst []byte, s *fslot, end int) ([]byte, []int, error) {
	c := &e.conts[s.c]
	if c.stream || c.drop > 0 || (c.holds && !e.allowRoot) {
		return dst, nil, errSlow // the result, or a dropped value, consumed by something
	}
	region := e.arena[s.off:end]
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
			return dst, nil, err
		}
		for i, p := range perm {
			if p != i {
				return dst, perm, nil
			}
		}
	case fkSet:
		order, err := e.order(region, c.bounds, 0, true)
		if err != nil {
			return dst, nil, err
		}
		dst = append(dst, 'N', 'e')
		dst = appendUvarint(dst, uint64(len(order)))
		dst = append(dst, 0)
		// the items are pure (no record inside): sorted in place
		e.tmp = e.tmp[:0]
		for _, b := range order {
			e.tmp = append(e.tmp, b...)
		}
		copy(region, e.tmp)
	case fkCall:
		dst = append(dst, 'N', 'C', c.form)
		dst = appendUvarint(dst, uint64(len(c.ops)))
		for _, o := range c.ops {
			dst = append(dst, o.tag)
			dst = appendUvarint(dst, uint64(o.n))
		}
	default:
		return dst, nil, errSlow
	}
	return dst, nil, nil
}

// ident makes the values stack[p:] (sealed) the body of a new identity
// value with the given header (an impure tuple), left in their place.
func (e *fastEnc) ident(p int, head []byte) {
	start, r0 := len(e.arena), e.recs.n
	if p < len(e.stack) {
		start, r0 = e.stack[p].off, e.stack[p].r0
	}
	r := frec{off: start, end: len(e.arena), hdr: len(e.hdrs), hlen: int32(len(head)), kh: -1, kt: -1, next: -1, ents: int32(len(e.ents))}
	for i := p; i < len(e.stack); i++ {
		e.link(&r.kh, &r.kt, e.stack[i].kh, e.stack[i].kt)
	}
	e.hdrs = append(e.hdrs, head...)
	k := e.recs.add(r)
	e.stack = e.stack[:p]
	e.pushSlot(start, r0, fkIdent, -1, 0, k, k)
}

// sealOut writes the final encodings of stack[x:] (appended to the list
// result) to the hash, and drops them from the arena. A container with no
// record inside (a row of scalars) is written at once, header and body,
// without becoming a record; one that holds records is sealed and emitted.
func (e *fastEnc) sealOut(x int) error {
	// the lazy digests of stack[x:] (all in runs of values: a container
	// settles what it takes) go out with them
	k0 := len(e.pend)
	for k0 > 0 && e.pend[k0-1].pos >= e.stack[x].off {
		k0--
	}
	k := k0
	for i := x; i < len(e.stack); i++ {
		s := &e.stack[i]
		if s.c < 0 && s.kh < 0 {
			// a run of values with no record: their bytes at once
			j := i + 1
			for j < len(e.stack) && e.stack[j].c < 0 && e.stack[j].kh < 0 {
				j++
			}
			k = e.writeRun(s.off, e.slotEnd(j-1), k)
			i = j - 1
			continue
		}
		end := e.slotEnd(i)
		switch {
		case s.c >= 0 && s.kh < 0:
			if len(e.out) >= 64<<10 {
				e.flush()
			}
			out, perm, err := e.head(e.out, s, end)
			e.out = out
			if err != nil {
				return err
			}
			e.writeBody(s, end, perm)
			e.release(s)
		case s.c >= 0:
			if err := e.seal(s, end); err != nil {
				return err
			}
			fallthrough
		default:
			if err := e.emit(true, s.off, end, [2]int32{s.kh, s.kt}); err != nil {
				return err
			}
		}
	}
	if k0 < len(e.pend) {
		e.pend = e.pend[:k0]
		e.pendBody = e.pendBody[:0]
		if k0 > 0 {
			e.pendBody = e.pendBody[:e.pend[k0-1].hi]
		}
	}
	s := e.stack[x]
	e.cut(s.off, s.r0)
	return nil
}

// writeRun writes arena[lo:hi], a run of values, to the hash with the lazy
// digests e.pend[k:] that lie in it; it returns the index of the first
// lazy digest after it.
func (e *fastEnc) writeRun(lo, hi, k int) int {
	if k == len(e.pend) || e.pend[k].pos >= hi {
		e.write(e.arena[lo:hi])
		return k
	}
	base := len(e.out) - lo
	for ; k < len(e.pend) && e.pend[k].pos < hi; k++ {
		p := e.pend[k]
		b := len(e.outBody)
		e.outBody = append(e.outBody, e.pendBody[p.lo:p.hi]...)
		e.outSums = append(e.outSums, lazySum{pos: base + p.pos, lo: b, hi: len(e.outBody)})
	}
	e.out = append(e.out, e.arena[lo:hi]...)
	if len(e.out) >= 64<<10 {
		e.flush()
	}
	return k
}

// writeBody writes the body of the container in slot s (ending at end,
// with no record inside) to the hash, a dict's entries in perm's order.
func (e *fastEnc) writeBody(s *fslot, end int, perm []int) {
	if perm == nil {
		e.write(e.arena[s.off:end])
		return
	}
	bounds := e.conts[s.c].bounds
	for _, p := range perm {
		lo, hi := s.off+bounds[2*p], end
		if 2*p+2 < len(bounds) {
			hi = s.off + bounds[2*p+2]
		}
		e.emitPut(true, e.arena[lo:hi])
	}
}

// chainFrom links the records of stack[x:] into one chain and returns its
// first and last.
func (e *fastEnc) chainFrom(x int) [2]int32 {
	h, t := int32(-1), int32(-1)
	for i := x; i < len(e.stack); i++ {
		e.link(&h, &t, e.stack[i].kh, e.stack[i].kt)
	}
	return [2]int32{h, t}
}

// encoding returns the canonical bytes of arena[lo:hi], whose records are
// the chain ch: the arena's own bytes when no record lies there, else a
// copy in e.encBuf, valid until the next call.
func (e *fastEnc) encoding(lo, hi int, ch [2]int32) []byte {
	if ch[0] < 0 {
		return e.arena[lo:hi]
	}
	e.encBuf = e.encBuf[:0]
	e.emit(false, lo, hi, ch)
	return e.encBuf
}

// release marks the container in slot s final and frees its record.
func (e *fastEnc) release(s *fslot) {
	s.kind = fkIdent
	e.free = append(e.free, s.c)
	s.c = -1
}

// eframe is one step of emit: arena[pos:hi] with the records of the chain
// kid..last inside it, or (ents >= 0) the entries of a reordered dict.
type eframe struct {
	pos, hi   int
	kid, last int32
	ents, n   int32 // entries of a dict: fastEnc.ents[ents:ents+n]; -1 for a range
	holds     bool
}

// emit writes the canonical bytes of arena[lo:hi], whose records are the
// chain ch, to the hash (toHash, through e.out as write does) or to
// e.encBuf. A placeholder of a dropped value (a value of a dict record that
// holds them) is replayed from the file by replay (only when writing to the
// hash). Explicit stack: no recursion over the depth.
func (e *fastEnc) emit(toHash bool, lo, hi int, ch [2]int32) error {
	stack := pushRange(e.estack[:0], lo, hi, ch[0], ch[1])
	defer func() { e.estack = stack[:0] }()
	for len(stack) > 0 {
		if toHash && len(e.out) >= 64<<10 {
			e.flush()
		}
		f := &stack[len(stack)-1]
		if f.ents >= 0 {
			if f.n == 0 {
				stack = stack[:len(stack)-1]
				continue
			}
			en := e.ents[f.ents]
			f.ents++
			f.n--
			if f.holds && en.vhi > en.vlo && e.arena[en.vlo] == 0 {
				e.emitPut(toHash, e.arena[en.klo:en.vlo])
				if err := e.replayAt(e.arena[en.vlo:en.vhi]); err != nil {
					return err
				}
				continue
			}
			if en.kh < 0 {
				// no record in the value: the key and the value lie
				// together in the arena
				e.emitPut(toHash, e.arena[en.klo:en.vhi])
				continue
			}
			e.emitPut(toHash, e.arena[en.klo:en.vlo])
			stack = pushRange(stack, en.vlo, en.vhi, en.kh, en.kt)
			continue
		}
		if f.kid < 0 {
			e.emitPut(toHash, e.arena[f.pos:f.hi])
			stack = stack[:len(stack)-1]
			continue
		}
		r := e.recs.at(f.kid)
		e.emitPut(toHash, e.arena[f.pos:r.off])
		e.emitPut(toHash, e.hdrs[r.hdr:r.hdr+int(r.hlen)])
		f.pos = r.end
		if f.kid == f.last {
			f.kid = -1
		} else {
			f.kid = r.next
		}
		if f.kid < 0 && f.pos == f.hi {
			stack = stack[:len(stack)-1] // nothing after the record: its body replaces the frame
		}
		if r.nents > 0 || r.holds {
			if r.nents == 0 {
				// holds placeholders but keeps stream order: entries not
				// listed, none can be a placeholder (see seal)
				stack = pushRange(stack, r.off, r.end, r.kh, r.kt)
				continue
			}
			stack = pushEnts(stack, r.ents, r.nents, r.holds)
			continue
		}
		if r.kh < 0 {
			// a record with no record inside: its body at once
			e.emitPut(toHash, e.arena[r.off:r.end])
			continue
		}
		stack = pushRange(stack, r.off, r.end, r.kh, r.kt)
	}
	return nil
}

// pushRange and pushEnts add a frame to emit's stack, its fields set in
// place (see pushSlot).
func pushRange(stack []eframe, pos, hi int, kid, last int32) []eframe {
	stack = append(stack, eframe{})
	f := &stack[len(stack)-1]
	f.pos, f.hi, f.kid, f.last, f.ents = pos, hi, kid, last, -1
	return stack
}

func pushEnts(stack []eframe, ents, n int32, holds bool) []eframe {
	stack = append(stack, eframe{})
	f := &stack[len(stack)-1]
	f.ents, f.n, f.holds = ents, n, holds
	return stack
}

// emitPut is emit's write: to e.out (large pieces straight to the hash,
// as write does) or to e.encBuf.
func (e *fastEnc) emitPut(toHash bool, b []byte) {
	if toHash && len(b) < 64<<10 {
		e.out = append(e.out, b...)
		return
	}
	e.emitPutRest(toHash, b)
}

//go:noinline
func (e *fastEnc) emitPutRest(toHash bool, b []byte) {
	if !toHash {
		e.encBuf = append(e.encBuf, b...)
	} else {
		e.write(b)
	}
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
