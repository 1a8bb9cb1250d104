package pickle

import "slices"

// Folding an argument tuple at its REDUCE (Keep.FoldArgs): a code object's
// arguments (its bytecode, names, constants, line table) are most of a
// cloudpickle or dill state's nodes, and nothing reads them after their
// call but the memo's few later GETs. When the consumer has summarised the
// tuple, the machine puts a KindFolded node (FlagFoldArgs) in its place and
// cuts what the tuple owned off the tail of the store, at once: no pass,
// no plan, no compaction.
//
// What may be cut: the nodes made since the tuple's first item, all of
// them owned by the tuple or by its items (built in the slot the tuple or
// an item consumed: ownership, take), None, bool, int, float, str, bytes,
// tuples and frozensets with nothing in a side record, while nothing but
// the stack and the memo could come to name them (no operation applied
// and no item added anywhere since the first: machine.effectAt). Such
// nodes are not in the call log, and nothing older names them. Of those
// the memo names, a later GET may read the ones pass 1's plan says a later
// opcode reads (all of them without a plan: no Options.Replay, or bytes
// Skim cannot read): they stay, with what they hold, renumbered right after the nodes
// before the tuple, and their memo entries follow them (machine.memoTail);
// the others' entries are released (a GET the plan did not foresee is
// then Error.Released, on which the input is read again without Keep). The
// tuple's own entry names the folded node (a GET of it sets FlagShared
// there, which the consumer then sees). The plan is made at the first
// tuple folded in a stream (machine.plan).

// foldArgsMax is the most nodes a tuple folded at its REDUCE may own (a
// larger one stays: the walks here stay within a constant of the opcodes
// that made it).
const foldArgsMax = 1 << 12

// memoTailMax is the most memo writes machine.memoTail holds; past it the
// machine forgets them and folds no tuple begun before.
const memoTailMax = 1 << 12

// foldArgScratch is what foldArgs reuses from one call to the next.
type foldArgScratch struct {
	owned []ID     // the tuple and what it owns
	stamp []uint32 // by ID - lo: gen when owned, gen+1 when kept
	gen   uint32
	newID []ID // by ID - lo: the kept node's new ID
}

// effect notes that the current opcode may have made an older node (or the
// log) name nodes made before it: no tuple begun before may be cut
// (foldArgs).
func (m *machine) effect() { m.effectAt = len(m.s.recs) }

// noteMemo remembers memo index i, written by the current opcode, for
// foldArgs (the entries to renumber). The list is emptied at every logged
// node: a tuple that a call, global or such was made inside of is never
// folded.
func (m *machine) noteMemo(i int64) {
	if len(m.memoTail) >= memoTailMax {
		m.memoTail = m.memoTail[:0]
		m.effect()
	}
	m.memoTail = append(m.memoTail, i)
}

// foldArgs offers Keep.FoldArgs the REDUCE call c, just made and on the
// stack, before it is logged, whose argument tuple is the node made right
// before it, with Keep.FoldArgsMin items or more (step tests that); it
// cuts the tuple when the consumer folds it (see above) and returns the
// call's ID then.
func (m *machine) foldArgs(c ID) ID {
	s := m.s
	rc := &s.recs[c]
	a := c - 1
	if s.recs[a].flags&FlagShared != 0 || rc.xi() != 0 || s.hi != nil || m.effectAt > int(a) {
		return c
	}
	if !m.keep.FoldCall(s, c) {
		return c // (most calls: no walk)
	}
	if m.fa == nil {
		// (owned holds distinct IDs within foldArgsMax of the tuple's: it
		// never grows)
		m.fa = &foldArgScratch{owned: make([]ID, 0, foldArgsMax), stamp: make([]uint32, foldArgsMax), newID: make([]ID, foldArgsMax)}
	}
	fa := m.fa
	if fa.gen >= 1<<31 {
		clear(fa.stamp)
		fa.gen = 0
	}
	fa.gen += 2
	gen := fa.gen
	// what the tuple owns, each node once (a node a GET or DUP put twice
	// in one container is owned through its first place)
	owned := append(fa.owned[:0], a)
	fa.stamp[0] = gen
	lo, kids, text := a, int64(0), int64(0)
	kidsAt, textAt := int64(len(s.kids)), int64(len(s.text))
	for i := 0; i < len(owned); i++ {
		x := owned[i]
		r := &s.recs[x]
		if r.xi() != 0 {
			return c
		}
		switch r.kind {
		case KindNone, KindBool, KindInt, KindFloat:
		case KindStr, KindBytes:
			off, n := s.textOf(x)
			text += n
			textAt = min(textAt, off)
		case KindTuple, KindFrozenSet:
			if n := r.nkid(); n > 0 {
				kids += int64(n)
				kidsAt = min(kidsAt, int64(r.kid()))
			}
			for _, ch := range s.kids[r.kid() : r.kid()+r.nkid()] {
				if ch < 0 || ch >= a || a-ch >= foldArgsMax || s.ownerOf(ch) != x || fa.stamp[a-ch] == gen {
					continue
				}
				fa.stamp[a-ch] = gen
				owned = append(owned, ch)
			}
		default:
			return c
		}
		lo = min(lo, x)
	}
	// nothing else made since the first, nothing named since, and the
	// arenas' tails are the owned nodes' (and the call's two parts)
	if int(a-lo)+1 != len(owned) || m.effectAt > int(lo) ||
		int64(rc.kid()) < kidsAt || kids+2 != int64(len(s.kids))-kidsAt || text != int64(len(s.text))-textAt {
		return c
	}
	out := m.keep.FoldArgs(s, c, lo)
	if !out.OK {
		return c
	}
	// the kept: what a memo entry that a later opcode may read names, and
	// what that holds; the entries the plan says no later opcode reads are
	// released with what they name (their writes since the tuple's first
	// item are all in memoTail)
	p, now := m.plan(), m.op.Offset
	stack := m.work[:0]
	for _, i := range m.memoTail {
		id, ok := m.memo.get(i)
		switch {
		case !ok || id < lo || id >= a:
		case p != nil && !p.ReadAfter(i, now):
			m.memo.release(i)
		default:
			stack = append(stack, id)
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if fa.stamp[a-x] != gen {
			continue
		}
		fa.stamp[a-x] = gen + 1
		r := &s.recs[x]
		if r.hasItems() {
			for _, ch := range s.kids[r.kid() : r.kid()+r.nkid()] {
				if ch >= lo && ch < a {
					stack = append(stack, ch)
				}
			}
		}
	}
	m.work = stack[:0]
	// new IDs: the kept ones in order from lo, then the folded node and
	// the call; what is cut (and the tuple) maps to the folded node
	next := lo
	for x := lo; x < a; x++ {
		if fa.stamp[a-x] == gen+1 {
			fa.newID[a-x] = next
			next++
		}
	}
	fid, nc := next, next+1
	for x := lo; x <= a; x++ {
		if x == a || fa.stamp[a-x] != gen+1 {
			fa.newID[a-x] = fid
			if m.keep.Released != nil {
				m.keep.Released(s, x)
			}
		}
	}
	// the kept nodes move down, their items and texts with them (each
	// arena's tail was written in creation order: every move is down)
	call, args := *rc, s.recs[a]
	fn := s.kids[rc.kid()]
	kw, tw := kidsAt, textAt
	for x := lo; x < a; x++ {
		if fa.stamp[a-x] != gen+1 {
			continue
		}
		r := s.recs[x]
		nx := fa.newID[a-x]
		o, self := s.ownerOf(x), s.Self(x)
		if o >= lo && o <= a {
			o = fa.newID[a-o] // (the folded node for one cut)
		}
		switch r.holds() {
		case holdsText:
			off, n, _ := r.vText()
			copy(s.text[tw:], s.text[off:off+n])
			r.v = tw<<textLenBits | n
			tw += n
		case holdsItems:
			k0, n := r.kid(), r.nkid()
			for j := int32(0); j < n; j++ {
				ch := s.kids[k0+j]
				if ch >= lo {
					ch = fa.newID[a-ch] // (kept: what a kept node holds is)
				}
				s.kids[kw+int64(j)] = ch
			}
			r.setKids(int32(kw), n)
			kw += int64(n)
		}
		s.recs[nx] = r
		s.moveSides(nx, o, self)
	}
	s.kids, s.text = s.kids[:kw], s.text[:tw]
	callOwner, callSelf := s.ownerOf(c), s.Self(c)
	s.cut(fid)
	fl := FlagFoldArgs | args.flags&FlagMemo
	s.addFolded(args.op, int64(args.off), fl, nc, out.Off, out.Len, out.Word, 1)
	s.recs = append(s.recs, call)
	s.sideNew(nc)
	s.moveSides(nc, callOwner, callSelf)
	s.recs[nc].setKids(int32(len(s.kids)), 2)
	s.kids = append(s.kids, fn, fid)
	if s.ring == nil && fn >= 0 && s.Owner(fn) == c {
		// the callable, made before the tuple, is the call's at its new
		// ID (c may be a later node's ID now: a store that keeps owners
		// sizes the callable in its call, pk trace's)
		s.SetOwner(fn, nc)
	}
	for _, i := range m.memoTail {
		if id, ok := m.memo.get(i); ok && id >= lo && id <= a {
			m.memo.set(i, fa.newID[a-id]) // (the tuple's: the folded node)
		}
	}
	if m.oneNone > lo {
		m.oneNone = 0 // (the shared None was cut or renumbered)
	}
	for k, e := range s.empty {
		if e > lo {
			s.empty[k] = 0 // (never: an empty container is no argument Owned copies)
		}
	}
	if m.pinned >= lo {
		m.pinned = ID(len(s.recs)) // (as above: what is left is not shared)
	}
	m.stack[len(m.stack)-1] = nc
	return nc
}

// A Copier copies a frozen node and what it holds from one store to
// another (Keep.FoldArgs's consumer encodes the copy in a store of its
// own), its work stacks reused from one copy to the next.
type Copier struct {
	stack []copyFrame
	done  []ID
	items []ID // Owned's: one tuple's items, translated
}

// Owned appends to dst a copy of node root of src, which owns src's nodes
// lo..root and nothing else made since lo (as Keep.FoldArgs offers an
// argument tuple), in one pass over those nodes in creation order: a node
// of the range named in two places is copied once; what they name from
// before lo is copied as Frozen copies it, after the range. It returns
// the copy's ID; false when a node is not frozen, src or dst has offsets
// past 4 GiB, or there are more than max nodes and places. Each node of
// src copied gets the consumer's flags mark (so may some of a copy that
// fails).
func (c *Copier) Owned(dst, src *Store, lo, root ID, max int, mark Flags) (ID, bool) {
	n := int(root-lo) + 1
	if lo < 0 || n > max || src.hi != nil || dst.hiLast != 0 {
		return NoID, false
	}
	base := ID(len(dst.recs))
	dst.recs = slices.Grow(dst.recs, n)[:int(base)+n]
	count := n
	for x := lo; x <= root; x++ {
		r := &src.recs[x]
		if r.xi() != 0 {
			return NoID, false
		}
		nr := &dst.recs[base+x-lo]
		switch {
		case copyLeaf(nr, dst, src, r):
		case r.kind == KindTuple || r.kind == KindFrozenSet:
			items := c.items[:0]
			for _, ch := range src.kids[r.kid() : r.kid()+r.nkid()] {
				switch {
				case ch >= lo && ch < x:
					ch = base + ch - lo
				case ch >= 0 && ch < lo && count < max:
					dst.recs = append(dst.recs, rec{})
					nr = &dst.recs[base+x-lo] // (moved when dst.recs grew)
					if copyLeaf(&dst.recs[len(dst.recs)-1], dst, src, &src.recs[ch]) {
						// (a scalar, most of them: no walk)
						src.recs[ch].flags |= mark
						count++
						ch = ID(len(dst.recs) - 1)
						break
					}
					dst.recs = dst.recs[:len(dst.recs)-1]
					id, ok := c.Frozen(dst, src, ch, max-count, mark)
					if !ok {
						return NoID, false
					}
					count += int(ID(len(dst.recs)) - id)
					nr = &dst.recs[base+x-lo]
					ch = id
				default:
					return NoID, false
				}
				items = append(items, ch)
			}
			c.items = items[:0]
			nr.setKids(int32(len(dst.kids)), int32(len(items)))
			dst.kids = append(dst.kids, items...)
		default:
			return NoID, false
		}
		r.flags |= mark
	}
	return base + root - lo, true
}

type copyFrame struct {
	x     ID
	next  int32
	first int // where its items' copies start in done
}

// Frozen appends to dst a copy of node root of src and of what it holds
// (None, bool, int, float, str, bytes, tuples and frozensets of them, with
// nothing in a side record), a node for each place, and returns the
// copy's ID; false when src holds anything else there, or more than max
// places. Each node of src copied gets the consumer's flags mark (so may
// some of a copy that fails).
func (c *Copier) Frozen(dst, src *Store, root ID, max int, mark Flags) (ID, bool) {
	mark &^= flagsPrivate
	stack, done := c.stack[:0], c.done[:0]
	defer func() { c.stack, c.done = stack[:0], done[:0] }()
	// add copies node x, whose items' copies are done[first:]; false for a
	// node that is not frozen
	add := func(x ID, first int) bool {
		r := &src.recs[x]
		if r.xi() != 0 {
			return false
		}
		id := ID(len(dst.recs))
		var nr rec
		switch {
		case copyLeaf(&nr, dst, src, r):
		case r.kind == KindTuple || r.kind == KindFrozenSet:
			nr.setKids(int32(len(dst.kids)), int32(len(done)-first))
			dst.kids = append(dst.kids, done[first:]...)
			done = done[:first]
		default:
			return false
		}
		dst.recs = append(dst.recs, nr)
		if src.hi != nil || dst.hiLast != 0 {
			dst.setOff(id, src.Offset(x))
		}
		r.flags |= mark
		done = append(done, id)
		return true
	}
	if k := src.recs[root].kind; k != KindTuple && k != KindFrozenSet {
		if !add(root, 0) {
			return NoID, false
		}
		return done[0], true
	}
	stack = append(stack, copyFrame{x: root})
	for count := 1; len(stack) > 0; {
		f := &stack[len(stack)-1]
		r := &src.recs[f.x]
		if f.next < r.nkid() {
			ch := src.kids[r.kid()+f.next]
			f.next++
			if count++; ch < 0 || count > max {
				return NoID, false
			}
			if k := src.recs[ch].kind; k == KindTuple || k == KindFrozenSet {
				stack = append(stack, copyFrame{x: ch, first: len(done)})
			} else if !add(ch, len(done)) {
				return NoID, false
			}
			continue
		}
		if !add(f.x, f.first) {
			return NoID, false
		}
		stack = stack[:len(stack)-1]
	}
	return done[0], true
}

// copyLeaf sets *nr to the record of a copy in dst of src's node r and
// reports whether that is whole: r is None, bool, int, float, str or
// bytes (its text appended to dst's) with nothing in a side record.
// Otherwise *nr is r's with no owner, for a container's copy to set its
// items.
func copyLeaf(nr *rec, dst, src *Store, r *rec) bool {
	*nr = rec{kind: r.kind, op: r.op, flags: r.flags &^ flagOwned, off: r.off, v: r.v}
	if r.xi() != 0 {
		return false
	}
	switch r.kind {
	case KindNone, KindBool, KindInt, KindFloat:
		return true
	case KindStr, KindBytes:
		off, n, ok := r.vText()
		if !ok {
			return false
		}
		nr.v = int64(len(dst.text))<<textLenBits | n
		dst.text = append(dst.text, src.text[off:off+n]...)
		return true
	}
	return false
}
