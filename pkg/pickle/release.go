package pickle

import "math"

// Keep lets the machine release what its consumer will never read
// (docs/engine.md §2.1, finality). A consumer that reads the call log and,
// of every other value, only a bounded view (pk scan describes a call's
// arguments a few levels deep) sets it; the store then holds what is
// still live, not the whole stream.
//
// What is kept, at each compaction (see machine.compact):
//   - in full, everything reachable from the call log (calls, globals,
//     mutated objects, persistent ids, EXT codes, buffers: their parts,
//     arguments and operations);
//   - of every node still named by the stack, the metastack or a memo
//     entry that the plan (pass 1, PlanStream) says a later opcode reads,
//     and of the nodes dropped by POP or left at STOP, the node and Depth
//     levels below it, the first Items kid positions of each container
//     (dict: key and value count as two);
//   - the owner of each kept node, as a stub when the owner itself is not
//     kept.
//
// Everything else is final (no later opcode can name it) and is released.
// A container whose items were cut, and the one stub that stands for every
// released node a kept node still refers to, carry FlagReleased. Node IDs
// are renumbered at each compaction, in creation order.
type Keep struct {
	Depth int // levels kept below a node that only the stack or the memo holds
	Items int // kid positions kept of each such container
}

// MinCompact is the store size (records) below which the machine never
// compacts: a small stream costs no plan and no pass. Tests lower it to
// make every fixture compact.
var MinCompact = 1 << 14

// keepFull is the level of a node kept with everything it reaches.
const keepFull = math.MaxInt32

// maybeCompact compacts the store when it has doubled since the last
// compaction (amortised linear: each pass costs what it keeps and drops).
func (m *machine) maybeCompact() {
	if len(m.s.recs) < m.nextCompact {
		return
	}
	if m.memo.plan == nil {
		p := m.planStream()
		if p == nil {
			m.nextCompact = math.MaxInt
			return
		}
		m.memo.adopt(p)
	}
	before := len(m.s.recs)
	m.compact()
	m.nextCompact = max(MinCompact, 2*len(m.s.recs))
	if len(m.s.recs) > before-before/4 {
		// most of the stream is still live (a cloudpickle state, a graph
		// of calls): compacting it again would copy it again for little;
		// it is held whole from here, as without Keep
		m.nextCompact = math.MaxInt
		m.spare = spareSet{}
		m.project = true
	}
}

// spareSet is the set of arrays a compaction writes into.
type spareSet struct {
	recs []rec
	kids []ID
	text []byte
	ext  []ext
	muts []smut
}

// planStream runs pass 1 over the current stream (from its first byte, read
// again from Options.Replay); nil when it cannot (the main pass then reports
// whatever is wrong with the bytes, and the stream is held whole).
func (m *machine) planStream() *Plan {
	if m.replay == nil {
		return nil
	}
	rd := NewReaderAt(m.replay, m.rd.Size(), m.rd.Name(), m.s.Begin)
	rd.BlobThreshold = m.rd.BlobThreshold
	p, err := PlanStream(rd)
	if r, ok := m.replay.(interface{ Release() }); ok {
		r.Release() // a decompressor read again: not held while pass 2 goes on
	}
	if err != nil {
		return nil
	}
	return p
}

// adopt switches the memo to the plan: only the indices the plan reads keep
// a dense slot; the others become bits.
func (t *memoTable) adopt(p *Plan) {
	t.plan = p
	n := len(p.dense)
	nd := make([]int32, n)
	copy(nd, t.dense)
	for i := n; i < len(t.dense); i++ {
		if t.dense[i] != 0 {
			j := i - n
			for len(t.seen) <= j>>6 {
				t.seen = append(t.seen, 0)
			}
			t.seen[j>>6] |= 1 << (j & 63)
		}
	}
	t.dense = nd
	for i, id := range t.sparse {
		if i >= 0 && i < int64(n) {
			// a Python 2 pickler numbers from 1: its writes went to the map
			nd[i] = int32(id) + 1
			delete(t.sparse, i)
		}
	}
}

// compact releases what is final and renumbers what is kept (see Keep).
func (m *machine) compact() {
	s := m.s
	now := m.op.Offset
	n := len(s.recs)
	if cap(m.lvl) < n {
		m.lvl = make([]int32, n)
	}
	lvl := m.lvl[:n]
	clear(lvl)
	work := m.work[:0]
	raise := func(id ID, l int32) {
		if id >= 0 && int(id) < n && lvl[id] < l {
			lvl[id] = l
			work = append(work, id)
		}
	}
	named := int32(m.keep.Depth) + 1
	items := int32(max(m.keep.Items, 1))
	for _, ev := range s.Log {
		raise(ev.Node, keepFull)
	}
	for _, sl := range m.stack {
		raise(sl.n, named)
	}
	for _, l := range [][]ID{s.Tops, s.Popped, s.Leftover} {
		for _, id := range l {
			raise(id, named)
		}
	}
	t := &m.memo
	for i, v := range t.dense {
		if v > 0 {
			if t.plan.ReadAfter(int64(i), now) {
				raise(ID(v-1), named)
			} else {
				t.dense[i] = memoDead
			}
		}
	}
	for i, id := range t.sparse {
		if id >= 0 {
			if t.plan.ReadAfter(i, now) {
				raise(id, named)
			} else {
				t.sparse[i] = deadID
			}
		}
	}
	for len(work) > 0 {
		id := work[len(work)-1]
		work = work[:len(work)-1]
		r := &s.recs[id]
		l := lvl[id]
		if l != keepFull && (r.kind == KindCall || r.kind == KindGlobal || r.kind == KindPersID || (r.x != 0 && s.ext[r.x-1].nmut > 0)) {
			// parts, operands and operations are not cut: what such a
			// node holds is kept whole
			l = keepFull
			lvl[id] = l
		}
		if l == keepFull {
			if r.hasItems() {
				for _, c := range s.kids[r.kid : r.kid+r.nkid] {
					raise(c, keepFull)
				}
			}
			if r.x != 0 {
				x := &s.ext[r.x-1]
				for i := x.mut; i != 0; i = s.muts[i-1].next {
					mu := &s.muts[i-1]
					for _, c := range s.kids[mu.kid : mu.kid+mu.nkid] {
						raise(c, keepFull)
					}
				}
			}
			continue
		}
		if l > 1 && r.hasItems() {
			k := min(r.nkid, items)
			for _, c := range s.kids[r.kid : r.kid+k] {
				raise(c, l-1)
			}
		}
	}
	m.work = work[:0]

	// renumber in creation order; the stub comes last
	newID := m.newIDs(n)
	kept := 0
	for i, l := range lvl {
		if l > 0 {
			newID[i] = ID(kept)
			kept++
		} else {
			newID[i] = NoID
		}
	}
	stub := ID(kept) // always added: cut item lists and released owners point to it
	mapID := func(id ID) ID {
		if id < 0 {
			return id
		}
		if nid := newID[id]; nid != NoID {
			return nid
		}
		return stub
	}
	// the arrays of the compaction before this one are used again (the
	// store's are, at the next): two sets per stream, no allocation per pass
	next := max(MinCompact, 2*(kept+1))
	recs, kids, text, exts, muts := m.spare.recs[:0], m.spare.kids[:0], m.spare.text[:0], m.spare.ext[:0], m.spare.muts[:0]
	if cap(recs) < next+1024 {
		recs = make([]rec, 0, next+1024)
	}
	for i, l := range lvl {
		if l == 0 {
			continue
		}
		r := s.recs[i]
		id := ID(i)
		if r.owner >= 0 {
			r.owner = mapID(r.owner)
		}
		if !r.hasItems() {
			// the text of a str, bytes, bytearray or PERSID
			off, tl := s.textOf(id)
			r.val = int64(len(text))
			text = append(text, s.text[off:off+tl]...)
		}
		if r.x != 0 {
			x := s.ext[r.x-1]
			if r.kind == KindGlobal {
				mo := int64(len(text))
				text = append(text, s.text[x.modOff:x.modOff+x.modLen]...)
				no := int64(len(text))
				text = append(text, s.text[x.nameOff:x.nameOff+x.nameLen]...)
				x.modOff, x.nameOff = mo, no
			}
			x.kcap = 0
			if x.nmut > 0 {
				first, prev := int32(0), int32(0)
				for j := s.ext[r.x-1].mut; j != 0; j = s.muts[j-1].next {
					mu := s.muts[j-1]
					start := int32(len(kids))
					for _, c := range s.kids[mu.kid : mu.kid+mu.nkid] {
						kids = append(kids, mapID(c))
					}
					muts = append(muts, smut{op: mu.op, off: mu.off, kid: start, nkid: mu.nkid})
					k := int32(len(muts))
					if prev != 0 {
						muts[prev-1].next = k
					} else {
						first = k
					}
					prev = k
				}
				x.mut, x.end = first, prev
			}
			exts = append(exts, x)
			r.x = int32(len(exts))
		}
		if r.hasItems() {
			keep := r.nkid
			if l != keepFull {
				if l > 1 {
					keep = min(keep, items)
				} else {
					keep = min(keep, 1)
				}
			}
			start := int32(len(kids))
			for j, c := range s.kids[r.kid : r.kid+keep] {
				if l == 1 || int32(j) >= items {
					kids = append(kids, stub)
				} else {
					kids = append(kids, mapID(c))
				}
			}
			if keep < r.nkid || l == 1 && keep > 0 {
				r.flags |= FlagReleased
			}
			r.kid, r.nkid = start, keep
		}
		recs = append(recs, r)
	}
	recs = append(recs, rec{kind: KindNone, op: NONE, off: s.Begin, owner: NoID, flags: FlagReleased})
	for i := range s.Log {
		s.Log[i].Node = mapID(s.Log[i].Node)
	}
	for i := range m.stack {
		m.stack[i].n = mapID(m.stack[i].n)
	}
	for _, l := range [][]ID{s.Tops, s.Popped, s.Leftover} {
		for i := range l {
			l[i] = mapID(l[i])
		}
	}
	for i, v := range t.dense {
		if v > 0 {
			t.dense[i] = int32(mapID(ID(v-1))) + 1
		}
	}
	for i, id := range t.sparse {
		if id >= 0 {
			t.sparse[i] = mapID(id)
		}
	}
	clear(s.ext) // no pointers (big ints, blobs) kept alive from the spare set
	m.spare = spareSet{s.recs, s.kids, s.text, s.ext, s.muts}
	s.recs, s.kids, s.text, s.ext, s.muts = recs, kids, text, exts, muts
	m.released += int64(n - kept)
}

// newIDs returns a scratch slice of n IDs.
func (m *machine) newIDs(n int) []ID {
	if cap(m.ids) < n {
		m.ids = make([]ID, n)
	}
	return m.ids[:n]
}
