package pickle

import (
	"math"
	"os"
)

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

	// Final, when set, is given at each compaction, in log order, the
	// events of the call log (calls, mutations, persistent ids, buffers;
	// not global resolutions or EXT lookups, which stay until STOP) whose
	// node is final with everything it reaches: nothing a later opcode can
	// name is reachable from it, so what a consumer reads of it now is what
	// it would read at STOP. When Final returns true the events leave the
	// log, and their nodes are kept only as far as other nodes need them;
	// the lists of popped and left nodes then drop what is released. A
	// consumer that reads the log as it goes (pk scan) so holds what is
	// live, not every call. Its node IDs are valid until Final returns.
	// A stream that fails after some of its events were handed over
	// (bytes after the last complete pickle that do not form one) is not
	// among the file's streams: the consumer learns it from the file's
	// Trailing or the error, and drops what it took of that stream.
	Final func(s *Store, evs []SEvent) bool
	// Taints, when set, says which named nodes make what reaches them not
	// final for Final's consumer: those whose later changes (items added,
	// operations applied) it would read through another event. Nil: every
	// named node. An event whose own node is named is never final (its
	// fate, popped or kept, is still open).
	Taints func(k Kind) bool
	// Fold, when set, is given at each compaction the roots of the final
	// subtrees of plain data that hang off kept containers (fold.go), and
	// sets out[i] for roots[i]: what it made of it, or OK false. keys[i]
	// is NoID, or the key of the dict entry whose value roots[i] is: the
	// entry goes whole. shared
	// says, by node ID, how many nodes refer to each (2: two or more).
	// Runs of folded items become KindFolded nodes. The IDs and tables are
	// valid until Fold returns.
	Fold func(s *Store, roots, keys []ID, shared []uint8, out []Folded)
	// FoldArgs, when set, is offered at each REDUCE the call node c just
	// made (s's last node, the stack's top) when FoldCall wants c's
	// arguments and its argument tuple is the node made right before it
	// and owns everything made since its first item, the nodes lo..c-1
	// (Copier.Owned copies them): None, bool, int, float, str, bytes,
	// tuples and frozensets of them, named by nothing but the memo
	// (foldargs.go). It returns what it made of the tuple, as Fold does for
	// a root (OK false: the tuple stays); IDs are valid until it returns. A
	// tuple folded becomes a KindFolded node with FlagFoldArgs in its
	// place, and what it owned leaves the store but for what the memo
	// names. Released, when set, is then called with each node cut, in
	// creation order, the tuple last, before any node moves: at the
	// tuple, the store is still as FoldArgs saw it (pk trace's sink reads
	// the nodes cut there).
	FoldArgs func(s *Store, c, lo ID) Folded
	// FoldCall, set with FoldArgs, is asked first, before any walk of the
	// arguments, whether FoldArgs would fold those of call c (by what it
	// calls, s's last node's items but the tuple); when it answers true,
	// FoldArgs is offered c right after or not at all.
	FoldCall func(s *Store, c ID) bool
	// FoldArgsMin is the fewest items of an argument tuple FoldCall is
	// asked about (the cheapest test, made first, in the machine's step).
	FoldArgsMin int32
	// Active, when set, is asked before each compaction whether the
	// consumer still wants one in this stream (false: the stream is held
	// whole from here, and pass 1 is not run if it has not been). With
	// Fold, compaction goes on at each doubling of the store while Active
	// says so, however much stays live (the doubling keeps it linear).
	Active func(s *Store) bool
	// Released, when set, is called with each node a compaction releases,
	// before its ID goes (a consumer that counts what the whole stream
	// held: pk diff's census of dicts and sets).
	Released func(s *Store, id ID)
	// OneNone, for a consumer that reads values only (never a node's
	// offset, Self or owner, nor how often a value is named), makes each
	// NONE after a stream's first push that first None again, as a GET of
	// it would (shareNone): a None costs its item, not a record (29 % of
	// a cloudpickle state's records).
	OneNone bool
	// OneEmpty, for a consumer that reads values only as OneNone's does
	// and gives every place that names a shared empty container
	// (Store.SharedEmpty) an object of its own (pk hash's digest), makes
	// the empty dicts and lists that no later opcode can name or fill
	// share one record per kind once the store is held whole (no more
	// compaction): when a container made by EMPTY_DICT or EMPTY_LIST is
	// taken as an item while it is the store's last record, with no item,
	// operation or flag but FlagMemo, never pushed again (FlagShared) and
	// written to no memo index a later opcode reads (the plan), its record
	// goes and the item names the shared one (shareEmpties). A cloudpickle
	// state writes {} and [] for its functions' unused state fields:
	// 96,000 of its 371,000 records.
	OneEmpty bool
	// SharedNone, when set (it may be set while a stream is read: from
	// then on), shares the Nones as OneNone does, in a store that keeps
	// each node's Self and owner: each NONE after the first pushes that
	// None again with its opcode's byte pending for its consumer (whose
	// Self it joins) and calls SharedNone with the None's ID; the
	// consumer counts them (pk trace --top of a code-carrying state:
	// sink_args.go). What would make such a None differ from a None of
	// its own fails with Error.Released, on which the input is read again
	// without Keep: a memo write or DUP of a None, an operation on a
	// shared one, one popped or left on the stack or returned at STOP.
	SharedNone func(s *Store, id ID)
	// Lean, for a consumer that reads no node's Self nor owner (pk
	// canon's writer), makes the store lean (Store.Lean: no side array, 8
	// bytes a node), as OneNone does, without sharing the Nones.
	Lean bool
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
	if m.keep.Active != nil && !m.keep.Active(m.s) {
		// the consumer wants nothing released in this stream: it is held
		// whole from here, as without Keep
		m.nextCompact, m.project = math.MaxInt, true
		m.wholeNow()
		return
	}
	if m.plan() == nil {
		m.nextCompact = math.MaxInt
		m.wholeNow()
		return
	}
	before := len(m.s.recs)
	m.compact()
	m.nextCompact = max(MinCompact, 2*len(m.s.recs))
	if len(m.s.recs) <= before-before/4 {
		m.liveRuns = 0
	} else {
		m.liveRuns++
	}
	// a consumer that folds gets three chances, and compaction of a store
	// below 64K records costs little: rows built in a batch of APPENDS are
	// on the stack, not final, until the batch is appended
	if m.liveRuns > 0 && (m.keep.Fold == nil || m.liveRuns >= 3 && before >= 1<<16) {
		// most of the stream is still live (a cloudpickle state, a graph
		// of calls): compacting it again would copy it again for little;
		// it is held whole from here, as without Keep
		m.nextCompact = math.MaxInt
		m.spare = spareSet{}
		m.project = true
		m.wholeNow()
	}
}

// wholeNow notes that the store is held whole from here (no compaction
// renumbers it again): with Keep.OneEmpty, empty containers share their
// records from here on (shareEmpties).
func (m *machine) wholeNow() {
	m.emptyOn = m.keep.OneEmpty && m.s.Lean()
}

// shareEmpties gives the empty containers just taken as items by node by
// (dst: the items takeInto wrote) that no later opcode can name or fill
// the stream's shared record of their kind (Keep.OneEmpty), dropping
// their own while they are the store's last (but for by, with move: by,
// the last record, made by this opcode for these items and named by
// nothing yet, then moves down to the first free ID). The first of each
// kind becomes the shared one. It returns by's ID.
func (m *machine) shareEmpties(dst []ID, by ID, move bool) ID {
	s := m.s
	last := ID(len(s.recs) - 1)
	if s.hi != nil || len(dst) == 0 {
		return by
	}
	// (most items taken are no empty container: when the record below
	// by's is none, nothing is looked at further)
	if t := last - b2i(last == by); t < 0 || !emptyOp(s.recs[t].op) || s.recs[t].v != 0 {
		return by
	}
	var br rec
	lifted := last == by
	if lifted {
		if !move {
			return by
		}
		br, s.recs = s.recs[by], s.recs[:by]
		last--
	}
	popped := false
	for j := len(dst) - 1; j >= 0 && last >= 0; j-- {
		if dst[j] != last {
			if dst[j] > last {
				break // (a shared record, named again)
			}
			continue // an older node (a GET, a shared None): the last record may be further down
		}
		r := &s.recs[last]
		k := 0
		switch {
		case r.kind == KindDict && r.op == EMPTY_DICT:
		case r.kind == KindList && r.op == EMPTY_LIST:
			k = 1
		default:
			j = 0 // (done)
			continue
		}
		// no items (v), no operation or far entry (flagExt), not pushed
		// again (FlagShared), no memo write a later opcode reads (pinned)
		if r.v != 0 || r.flags&^(FlagMemo|flagOwned) != 0 || last <= m.pinned || last+1 == s.empty[k] {
			break
		}
		if s.empty[k] == 0 {
			s.empty[k] = last + 1 // (the first stays: it is the shared one)
			break
		}
		dst[j] = s.empty[k] - 1
		s.recs = s.recs[:last]
		last--
		popped = true
	}
	if lifted {
		// by back on top, at its new ID when records below it went
		nb := ID(len(s.recs))
		s.recs = append(s.recs, br)
		if nb != by {
			s.sideNew(nb)
			for _, c := range dst {
				if c >= 0 && int(c) >= len(s.recs)-ownWin && s.ring[c&(ownWin-1)] == by {
					s.ring[c&(ownWin-1)] = nb
				}
			}
		}
		by = nb
	}
	if popped {
		m.effectAt = min(m.effectAt, len(s.recs))
	}
	return by
}

func b2i(b bool) ID {
	if b {
		return 1
	}
	return 0
}

// emptyOp reports whether op makes an empty container that Keep.OneEmpty
// may share.
func emptyOp(op Opcode) bool { return op == EMPTY_DICT || op == EMPTY_LIST }

// spareSet is the set of arrays a compaction writes into.
type spareSet struct {
	recs  []rec
	sides []side
	kids  []ID
	text  []byte
	ext   []ext
	far   []far
	muts  []smut
}

// plan returns the current stream's plan (pass 1), made and adopted by the
// memo the first time compaction or foldArgs asks for it; nil when it
// cannot be made (planStream: tried once a stream). A plan begun beside
// the machine (planAhead) is waited for.
func (m *machine) plan() *Plan {
	if m.ahead != nil {
		<-m.ahead.done
		p := m.ahead.p
		m.ahead = nil
		if p != nil {
			m.memo.adopt(p)
		}
	}
	if m.memo.plan == nil && !m.planTried {
		m.planTried = true
		if p := m.planStream(); p != nil {
			m.memo.adopt(p)
		}
	}
	return m.memo.plan
}

// aheadPlan is pass 1 of one stream run on a goroutine of its own
// (planAhead): p is set, nil when the plan cannot be made, before done is
// closed.
type aheadPlan struct {
	done chan struct{}
	p    *Plan
}

// planAheadAt is the input left at a file's first stream from which the
// machine begins that stream's pass 1 beside it (planAhead; tests lower
// it).
var planAheadAt int64 = 1 << 20

// planAhead begins pass 1 of the stream just begun on a goroutine of its
// own, for plan to take when it is first asked for, when the stream is
// the first of a file with planAheadAt bytes or more left and the
// consumer folds code objects' arguments (Keep.FoldArgs: a cloudpickle or
// dill state, whose first code object comes at once and whose plan the
// machine used to wait for there, a tenth of its time on a state). The
// input must be a file (Options.Replay an *os.File), which each pass reads
// at its own offsets: the two share nothing but the plan handed over. The
// store is the same as when plan makes it: only the time it is made moves
// to the other CPU. A stream's end waits for it (endStream).
func (m *machine) planAhead() {
	if m.keep == nil || m.keep.FoldArgs == nil || m.s.Index != 0 || m.rd.Size()-m.s.Begin < planAheadAt {
		return
	}
	if _, ok := m.replay.(*os.File); !ok {
		return
	}
	m.planTried = true
	if planAheadHook != nil {
		planAheadHook()
	}
	rd := m.replayReader()
	a := &aheadPlan{done: make(chan struct{})}
	m.ahead = a
	go func() {
		if p, err := PlanStream(rd); err == nil {
			a.p = p
		}
		close(a.done)
	}()
}

// planAheadHook, when set (tests), is called as planAhead begins pass 1.
var planAheadHook func()

// replayReader reads the current stream again from its first byte
// (Options.Replay), for pass 1.
func (m *machine) replayReader() *Reader {
	rd := NewReaderAt(m.replay, m.rd.Size(), m.rd.Name(), m.s.Begin)
	rd.BlobThreshold = m.rd.BlobThreshold
	return rd
}

// planStream runs pass 1 over the current stream (from its first byte, read
// again from Options.Replay); nil when it cannot (the main pass then reports
// whatever is wrong with the bytes, and the stream is held whole).
func (m *machine) planStream() *Plan {
	if m.replay == nil {
		return nil
	}
	p, err := PlanStream(m.replayReader())
	if r, ok := m.replay.(interface{ Release() }); ok {
		r.Release() // a decompressor read again: not held while pass 2 goes on
	}
	if err != nil {
		return nil
	}
	return p
}

// adopt switches the memo to the plan: only the indices the plan reads keep
// a dense slot (memoTable.slot); the others become bits.
func (t *memoTable) adopt(p *Plan) {
	old := t.dense
	t.plan = p
	if p.sealed() {
		t.dense, t.seenBase = make([]int32, len(p.last)), 0
	} else {
		t.dense, t.seenBase = make([]int32, p.dense()), p.dense()
	}
	for i, v := range old {
		if v == 0 {
			continue
		}
		if r, ok := t.slot(int64(i)); ok {
			t.dense[r] = v
			continue
		}
		j := int64(i) - t.seenBase
		for int64(len(t.seen)) <= j>>6 {
			t.seen = append(t.seen, 0)
		}
		t.seen[j>>6] |= 1 << (j & 63)
	}
	for i, id := range t.sparse {
		if r, ok := t.slot(i); ok {
			// a Python 2 pickler numbers from 1: its writes went to the map
			t.dense[r] = int32(id) + 1
			delete(t.sparse, i)
		}
	}
}

// readAfterSlot is ReadAfter of the index in slot r of dense.
func (t *memoTable) readAfterSlot(r int, now int64) bool {
	if t.plan.sealed() {
		return t.plan.lastAt(r) > now
	}
	return t.plan.ReadAfter(int64(r), now)
}

// compact releases what is final and renumbers what is kept (see Keep).
func (m *machine) compact() {
	s := m.s
	m.oneNone = 0 // (renumbered or released)
	now := m.op.Offset
	t := &m.memo
	for r, v := range t.dense {
		if v > 0 && !t.readAfterSlot(r, now) {
			t.dense[r] = memoDead
		}
	}
	for i, id := range t.sparse {
		if id >= 0 && !t.plan.ReadAfter(i, now) {
			t.release(i)
		}
	}
	if m.keep.Fold != nil {
		m.foldFinal()
	}
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
	named := int32(min(m.keep.Depth, keepFull-1)) + 1
	items := int32(max(m.keep.Items, 1))
	if m.keep.Final != nil {
		m.finalEvents()
	}
	for _, ev := range s.log {
		raise(ev.node, keepFull)
	}
	m.eachNamed(func(id ID) { raise(id, named) })
	if m.keep.Final == nil {
		for _, l := range [][]ID{s.Tops, s.Popped, s.Leftover} {
			for _, id := range l {
				raise(id, named)
			}
		}
	}
	for len(work) > 0 {
		id := work[len(work)-1]
		work = work[:len(work)-1]
		r := &s.recs[id]
		l := lvl[id]
		if l != keepFull && (r.kind == KindCall || r.kind == KindGlobal || r.kind == KindPersID || (r.xi() != 0 && s.ext[r.xi()-1].mut != 0)) {
			// parts, operands and operations are not cut: what such a
			// node holds is kept whole
			l = keepFull
			lvl[id] = l
		}
		if l == keepFull {
			if r.hasItems() {
				for _, c := range s.kids[r.kid() : r.kid()+r.nkid()] {
					raise(c, keepFull)
				}
			}
			if xi := r.xi(); xi != 0 {
				x := &s.ext[xi-1]
				for i := x.mut; i != 0; i = s.muts[i-1].next {
					mu := &s.muts[i-1]
					for _, c := range s.mutArgs(mu) {
						raise(c, keepFull)
					}
				}
			}
			continue
		}
		if l > 1 && r.hasItems() {
			k := min(r.nkid(), items)
			for _, c := range s.kids[r.kid() : r.kid()+k] {
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
			if m.keep.Released != nil {
				m.keep.Released(s, ID(i))
			}
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
	recs, kids, text, exts, fars, muts := m.spare.recs[:0], m.spare.kids[:0], m.spare.text[:0], m.spare.ext[:0], m.spare.far[:0], m.spare.muts[:0]
	sides := m.spare.sides[:0]
	if cap(m.mutAt) < len(s.muts) {
		m.mutAt = make([]int32, len(s.muts))
	}
	mutAt := m.mutAt[:len(s.muts)] // new index of each operation kept (for the log)
	if cap(recs) < next+1024 {
		recs = make([]rec, 0, next+1024)
	}
	var hi, mutHi *offHigh // the new records' and operations' runs of offsets past 4 GiB (offHigh)
	var hiLast, mutHiLast uint32
	for i, l := range lvl {
		if l == 0 {
			continue
		}
		r := s.recs[i]
		id := ID(i)
		if !s.Lean() {
			sd := side{owner: NoID}
			if i < len(s.sides) {
				sd = s.sides[i] // (selfInExt: in far, copied below)
				sd.owner = mapID(sd.owner)
			}
			sides = append(sides, sd)
		}
		names, hasNames := int64(0), false
		switch r.holds() {
		case holdsText:
			// the text of a str, bytes, bytearray or PERSID
			off, tl := s.textOf(id)
			if r.v&textInFar == textInFar {
				s.fr(id).textOff = int64(len(text)) // (copied to fars below)
			} else {
				r.v = int64(len(text))<<textLenBits | tl
			}
			text = append(text, s.text[off:off+tl]...)
		case holdsFold:
			// its foldRec
			at := int64(len(text))
			text = append(text, s.text[r.v:r.v+foldRecLen]...)
			r.v = at
		case holdsItems:
			if start, ok := s.namesAt(&r); ok && r.kind == KindGlobal {
				// its names, with their lengths before them (globalText)
				_, _, no, nl := s.globalText(&r)
				names, hasNames = int64(len(text)), true
				text = append(text, s.text[start:no+nl]...)
			}
		}
		if xi := r.xi(); xi != 0 {
			x := s.ext[xi-1] // (with the node's offset: rec.off)
			if x.far != 0 {
				// (its items are copied without room: a far entry made
				// only for that room goes)
				f := s.far[x.far-1]
				f.kcap = 0
				x.far = 0
				if f != (far{}) {
					fars = append(fars, f)
					x.far = int32(len(fars))
				}
			}
			if x.mut != 0 {
				first, prev := int32(0), int32(0)
				for j := s.ext[xi-1].mut; j != 0; j = s.muts[j-1].next {
					mu := &s.muts[j-1]
					args := s.mutArgs(mu)
					var opn uint32
					kids, opn = mutHead(kids, mu.op(), len(args))
					start := int32(len(kids))
					for _, c := range args {
						kids = append(kids, mapID(c))
					}
					muts = append(muts, smut{opn: opn, off: mu.off, kid: start, idx: mu.idx})
					k := int32(len(muts))
					noteOff(&mutHi, &mutHiLast, ID(k-1), s.mutOff(j-1))
					mutAt[j-1] = k - 1
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
			r.off = uint32(len(exts))
		}
		if r.hasItems() {
			kid, nkid := r.kid(), r.nkid()
			keep := nkid
			if l != keepFull {
				if l > 1 {
					keep = min(keep, items)
				} else {
					keep = min(keep, 1)
				}
			}
			start := int32(len(kids))
			for j, c := range s.kids[kid : kid+keep] {
				switch {
				case c == foldGone:
					// a place a folded run took (foldFinal)
				case l != keepFull && (l == 1 || int32(j) >= items):
					kids = append(kids, stub)
				default:
					kids = append(kids, mapID(c))
				}
			}
			if keep < nkid || l == 1 && keep > 0 {
				r.flags |= FlagReleased
			}
			r.setKids(start, int32(len(kids))-start)
			if hasNames {
				kids = append(kids, ID(uint32(names)), ID(names>>32))
				r.v = int64(uint64(r.v) | namesBit<<32)
			}
		}
		recs = append(recs, r)
		noteOff(&hi, &hiLast, ID(len(recs)-1), s.Offset(id))
	}
	recs = append(recs, rec{kind: KindNone, op: NONE, off: uint32(s.Begin), flags: FlagReleased})
	if !s.Lean() {
		sides = append(sides, side{owner: NoID})
	} else {
		// (the ring's IDs are renumbered: foldArgs reads no owner made
		// before, m.effect below, and the machine asks flagOwned)
		for i := range s.ring {
			s.ring[i] = NoID
		}
	}
	noteOff(&hi, &hiLast, ID(len(recs)-1), s.Begin)
	for i := range s.log {
		e := &s.log[i]
		e.node = mapID(e.node)
		if e.at >= 0 {
			e.at = mutAt[e.at]
		}
	}
	for i := range m.stack {
		m.stack[i] = mapID(m.stack[i])
	}
	if m.keep.Final != nil {
		// without a consumer of finals these lists are roots; with one,
		// what they name may have gone
		s.Tops, s.Popped, s.Leftover = keptOnly(s.Tops, newID), keptOnly(s.Popped, newID), keptOnly(s.Leftover, newID)
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
	clear(s.far) // no pointers (big ints, blobs) kept alive from the spare set
	m.spare = spareSet{s.recs, s.sides, s.kids, s.text, s.ext, s.far, s.muts}
	s.recs, s.kids, s.text, s.ext, s.far, s.muts = recs, kids, text, exts, fars, muts
	if !s.Lean() {
		s.sides = sides
	}
	s.hi, s.hiLast = hi, hiLast
	s.mutHi, s.mutHiLast = mutHi, mutHiLast
	m.effect() // (renumbered: foldArgs cuts nothing made before)
	if m.memoTail != nil {
		m.memoTail = m.memoTail[:0]
	}
}

// newIDs returns a scratch slice of n IDs.
func (m *machine) newIDs(n int) []ID {
	if cap(m.ids) < n {
		m.ids = make([]ID, n)
	}
	return m.ids[:n]
}

// keptOnly drops from l, in place, the nodes that compact released.
func keptOnly(l []ID, newID []ID) []ID {
	out := l[:0]
	for _, id := range l {
		if id >= 0 && newID[id] != NoID {
			out = append(out, id)
		}
	}
	return out
}

// finalEvents hands Keep.Final the events whose nodes are final with all
// they reach, and drops them from the log when it takes them. A node is
// tainted when it is named (on the stack or the metastack, or in a memo
// entry read later) or reaches a tainted node; the rest cannot change.
func (m *machine) finalEvents() {
	s := m.s
	n := len(s.recs)
	taint, isNamed := m.taintTables(n)
	name := func(id ID) {
		isNamed[id] = true
		if m.keep.Taints == nil || m.keep.Taints(s.recs[id].kind) {
			taint[id] = 1
		}
	}
	m.eachNamed(name)
	m.propagate(taint)
	final := func(ev sev) bool {
		if k := s.recs[ev.node].kind; ev.at < 0 && (k == KindGlobal || k == KindExt) {
			return false
		}
		return taint[ev.node] == 2 && !isNamed[ev.node]
	}
	var batch []SEvent
	for i, ev := range s.log {
		if final(ev) {
			batch = append(batch, s.Event(i))
		}
	}
	if len(batch) == 0 || !m.keep.Final(s, batch) {
		return
	}
	keep := s.log[:0]
	for _, ev := range s.log {
		if !final(ev) {
			keep = append(keep, ev)
		}
	}
	s.log = keep
}

// propagate completes taint (1 for the nodes that taint, 0 for the rest):
// 1 for every node that reaches a tainted one, 2 for the others. Children
// before parents, with an explicit stack.
func (m *machine) propagate(taint []uint8) {
	s := m.s
	// each frame's children sit in kids[from:to], pushed with the frame
	// and popped with it: every edge is looked at once
	st := m.frames[:0]
	kids := m.walkKids[:0]
	for root := range taint {
		if taint[root] != 0 {
			continue
		}
		taint[root] = 3 // on the walk
		kids = s.Children(ID(root), kids[:0])
		st = append(st[:0], walkFrame{ID(root), 0, len(kids)})
		for len(st) > 0 {
			f := &st[len(st)-1]
			if f.next < f.to {
				c := kids[f.next]
				f.next++
				switch taint[c] {
				case 0:
					taint[c] = 3
					from := len(kids)
					kids = s.Children(c, kids)
					st = append(st, walkFrame{c, from, len(kids)})
				case 1, 3:
					// named, or a cycle back to a node on the walk: a
					// cycle that reaches nothing named is final, but one
					// node of it cannot tell yet; counting it as tainted
					// only defers its events to STOP
					taint[f.id] = 1
				}
				continue
			}
			if taint[f.id] == 3 {
				taint[f.id] = 2
			}
			done := f.id
			st = st[:len(st)-1]
			if len(st) > 0 {
				kids = kids[:st[len(st)-1].to]
				if taint[done] == 1 {
					taint[st[len(st)-1].id] = 1
				}
			}
		}
	}
	m.frames, m.walkKids = st[:0], kids[:0]
}

// walkFrame is one node on finalEvents' walk: its children are
// walkKids[next:to].
type walkFrame struct {
	id       ID
	next, to int
}

// eachNamed calls fn with every node a later opcode can still name: those
// on the stack and the metastack, and those of the memo entries the plan
// says are read again.
func (m *machine) eachNamed(fn func(ID)) {
	for _, id := range m.stack {
		fn(id)
	}
	t := &m.memo
	for _, v := range t.dense {
		if v > 0 {
			fn(ID(v - 1))
		}
	}
	for _, id := range t.sparse {
		if id >= 0 {
			fn(id)
		}
	}
}
