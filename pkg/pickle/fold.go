package pickle

import (
	"encoding/binary"
	"slices"
)

// Folding (docs/engine.md §2.1, item 5): at each compaction, the machine
// hands a consumer that asks (Keep.Fold) the subtrees of plain data that
// are final and hang off a container still kept, and replaces each run of
// them that the consumer summarised by one KindFolded node. The consumer
// keeps the summaries' bytes (pk hash: their canonical encoding); the
// store keeps, per run, where they are, how many items the run stands for
// and a word of the consumer's. What the run held is then unreachable and
// released by the same compaction, so a table of a million rows holds its
// open rows and one node per run, not a node per value.
//
// A subtree is offered when all of its nodes are plain (None, bool, int,
// float, str, bytes, bytearray, list, tuple, dict, set, frozenset, a global,
// a call and the operations applied to it, or a run folded before), none
// of them is named (on the stack or the metastack, in a memo entry a later
// opcode reads, popped or left at STOP) unless it is frozen (a scalar, a
// global, or a tuple or frozenset of frozen nodes, which nothing can
// change), and its root is an item of a kept list, or a value of a kept
// dict, referred to by nothing else. Its content cannot change any more:
// nothing that could change it can name it. Keys of dicts and items of
// sets are never offered (their order is computed from them at STOP);
// neither are items of tuples. The call-log entries of the calls and
// operations folded leave the log (the consumer has them in its bytes);
// a global's resolution stays.

// Folded is what a consumer made of one offered subtree (Keep.Fold).
type Folded struct {
	Off     int64 // where its bytes start, in the consumer's own memory
	Len     int32 // how many bytes
	Word    int32 // the consumer's (pk hash: ordinals the subtree used)
	OK      bool  // false: not folded, the subtree stays in the store
	Effects bool  // it holds a call, an operation or a global (FlagFoldEffects on its run)
}

// FoldedRun returns what a KindFolded node stands for: the consumer's
// bytes (offset and length), the number of items (of a list) or entries
// (of a dict, FlagFoldEntries: key and value each) of its container it
// replaces, and the sum of the consumer's words of those.
func (s *Store) FoldedRun(id ID) (off int64, n int, items int, word int) {
	r := &s.recs[id]
	f := s.text[r.v : r.v+foldRecLen]
	return int64(binary.LittleEndian.Uint64(f)), int(int32(binary.LittleEndian.Uint32(f[8:]))), int(int32(binary.LittleEndian.Uint32(f[16:]))), int(int32(binary.LittleEndian.Uint32(f[12:])))
}

// addFolded appends a KindFolded node made by op at off with flags fl
// and owner, its foldRec (the consumer's bytes at off of length n, its
// word, the count of items it stands for) in the text arena, and returns
// its ID.
func (s *Store) addFolded(op Opcode, at int64, fl Flags, owner ID, off int64, n, word, count int32) ID {
	v := int64(len(s.text))
	s.text = binary.LittleEndian.AppendUint64(s.text, uint64(off))
	s.text = binary.LittleEndian.AppendUint32(s.text, uint32(n))
	s.text = binary.LittleEndian.AppendUint32(s.text, uint32(word))
	s.text = binary.LittleEndian.AppendUint32(s.text, uint32(count))
	id := ID(len(s.recs))
	s.recs = append(s.recs, rec{kind: KindFolded, op: op, flags: fl, v: v})
	s.sideNew(id)
	s.setOff(id, at)
	s.SetOwner(id, owner)
	s.AddSelf(id, int64(count))
	return id
}

// ItemCount returns the number of items a list or dict stands for: its
// items, with each folded run counting the items it replaced.
func (s *Store) ItemCount(id ID) int {
	r := &s.recs[id]
	if r.flags&FlagHasFolded == 0 {
		return s.NItems(id)
	}
	n := 0
	for _, c := range s.Items(id) {
		if c >= 0 && s.recs[c].kind == KindFolded {
			_, _, k, _ := s.FoldedRun(c)
			n += k
		} else {
			n++
		}
	}
	return n
}

// foldScratch is what foldFinal reuses from one compaction to the next.
type foldScratch struct {
	indeg   []uint8
	frozen  []bool
	inFold  []bool
	pending []bool
	cands   []foldCand
	roots   []ID
	keys    []ID
	out     []Folded
}

// foldCand is one offered subtree: the position of its root among the
// store's kids.
type foldCand struct {
	parent ID
	pos    int32 // index in s.kids (an entry: of its key)
	key    ID    // an entry of a dict: its key (the root is its value); NoID: an item
}

// plainKind reports whether nodes of kind k can be part of a folded
// subtree.
func plainKind(k Kind) bool {
	switch k {
	case KindNone, KindBool, KindInt, KindFloat, KindStr, KindBytes, KindByteArray,
		KindList, KindTuple, KindDict, KindSet, KindFrozenSet, KindGlobal, KindCall, KindFolded:
		return true
	}
	return false
}

// frozenTable sets, by node ID, whether each node is frozen: a scalar, a
// global, or a tuple or frozenset of frozen nodes, with no operation
// applied. Items are created before their tuple, so one pass in creation
// order decides.
func (m *machine) frozenTable(n int) []bool {
	s := m.s
	if cap(m.fs.frozen) < n {
		m.fs.frozen = make([]bool, n)
	}
	fz := m.fs.frozen[:n]
	for i := range s.recs {
		r := &s.recs[i]
		f := false
		if r.xi() == 0 || s.ext[r.xi()-1].mut == 0 {
			switch r.kind {
			case KindNone, KindBool, KindInt, KindFloat, KindStr, KindBytes:
				f = true
			case KindGlobal:
				f = r.flags&FlagDynamic == 0
			case KindTuple, KindFrozenSet:
				f = true
				for _, c := range s.kids[r.kid() : r.kid()+r.nkid()] {
					if c < 0 || int(c) >= i || !fz[c] {
						f = false
						break
					}
				}
			}
		}
		fz[i] = f
	}
	return fz
}

// foldFinal offers the consumer the final plain subtrees and puts a folded
// node for each run it summarised (before compact marks what it keeps).
func (m *machine) foldFinal() {
	if m.fs == nil {
		m.fs = &foldScratch{}
	}
	s := m.s
	n := len(s.recs)
	taint, isNamed := m.taintTables(n)
	frozen := m.frozenTable(n)
	name := func(id ID) {
		if id >= 0 && int(id) < n {
			isNamed[id] = true
			if !frozen[id] {
				taint[id] = 1
			}
		}
	}
	m.eachNamed(name)
	for _, l := range [][]ID{s.Tops, s.Popped, s.Leftover} {
		for _, id := range l {
			name(id)
		}
	}
	for _, ev := range s.log {
		if ev.at < 0 && s.recs[ev.node].kind != KindCall {
			name(ev.node) // (a call's or an operation's node is final as any other)
		}
	}
	if cap(m.fs.indeg) < n {
		m.fs.indeg = make([]uint8, n)
	}
	indeg := m.fs.indeg[:n]
	clear(indeg)
	bump := func(cs []ID) {
		for _, c := range cs {
			if c >= 0 && int(c) < n && indeg[c] < 2 {
				indeg[c]++
			}
		}
	}
	for i := range s.recs {
		r := &s.recs[i]
		if !plainKind(r.kind) || r.flags&FlagReleased != 0 {
			taint[i] = 1
		}
		if r.hasItems() {
			bump(s.kids[r.kid() : r.kid()+r.nkid()])
		}
		if x := r.xi(); x != 0 {
			for j := s.ext[x-1].mut; j != 0; j = s.muts[j-1].next {
				mu := &s.muts[j-1]
				bump(s.mutArgs(mu))
			}
		}
	}
	m.propagate(taint)
	pending := m.pendingTable(n)

	cands := m.fs.cands[:0]
	for p := range s.recs {
		r := &s.recs[p]
		if r.kind != KindList && r.kind != KindDict {
			continue
		}
		kid, nkid := r.kid(), r.nkid()
		if taint[p] != 1 || nkid < foldMinItems || nkid < foldPendingItems && pending[p] {
			// (a small container is folded whole once it is final; so is
			// one waiting on the stack for its batch, a row of a table in
			// a batch of APPENDS: offering its items first would encode
			// them twice)
			continue
		}
		for j := int32(0); j < nkid; j++ {
			if r.kind == KindDict {
				// keys stay, or go with their value (below); a run of
				// entries folded before takes one place
				if c := s.kids[kid+j]; c >= 0 && int(c) < n && s.recs[c].kind == KindFolded && s.recs[c].flags&FlagFoldEntries != 0 {
					continue
				}
				if j++; j >= nkid {
					break
				}
			}
			c := s.kids[kid+j]
			if c < 0 || int(c) >= n || taint[c] != 2 || indeg[c] != 1 || isNamed[c] || s.recs[c].kind == KindFolded {
				continue // (a run folded before stays as it is)
			}
			if r.kind == KindList {
				cands = append(cands, foldCand{ID(p), kid + j, NoID})
				continue
			}
			// a dict's entry whose key is a str or bytes nothing can change
			// goes whole (runs of entries); else only a value that is a
			// container or a call is worth a node of its own
			if k := s.kids[kid+j-1]; k >= 0 && int(k) < n && (s.recs[k].kind == KindStr || s.recs[k].kind == KindBytes) &&
				(taint[k] == 2 || isNamed[k] && frozen[k]) {
				cands = append(cands, foldCand{ID(p), kid + j - 1, k})
				continue
			}
			if k := s.recs[c].kind; k == KindList || k == KindDict || k == KindTuple || k == KindSet || k == KindFrozenSet || k == KindCall {
				cands = append(cands, foldCand{ID(p), kid + j, NoID})
			}
		}
	}
	m.fs.cands = cands[:0]
	if len(cands) == 0 {
		return
	}
	roots, keys := m.fs.roots[:0], m.fs.keys[:0]
	for _, c := range cands {
		if c.key != NoID {
			roots, keys = append(roots, s.kids[c.pos+1]), append(keys, c.key)
		} else {
			roots, keys = append(roots, s.kids[c.pos]), append(keys, NoID)
		}
	}
	m.fs.keys = keys[:0]
	out := slices.Grow(m.fs.out[:0], len(roots))[:len(roots)]
	clear(out)
	m.keep.Fold(s, roots, keys, indeg, out)
	m.dropFolded(roots, out, isNamed)
	// runs: consecutive positions of one parent, folded, their bytes one
	// after the other
	for i := 0; i < len(cands); {
		if !out[i].OK {
			i++
			continue
		}
		j := i + 1
		total := int64(out[i].Len)
		word := int64(out[i].Word)
		effects := out[i].Effects
		step := int32(1) // items of a list; entries of a dict take two places
		if cands[i].key != NoID {
			step = 2
		}
		for j < len(cands) && out[j].OK && cands[j].parent == cands[i].parent && cands[j].pos == cands[j-1].pos+step && (cands[j].key != NoID) == (step == 2) &&
			out[j].Off == out[j-1].Off+int64(out[j-1].Len) && total+int64(out[j].Len) < 1<<30 && word+int64(out[j].Word) < 1<<30 {
			total += int64(out[j].Len)
			word += int64(out[j].Word)
			effects = effects || out[j].Effects
			j++
		}
		root := roots[i]
		var fl Flags
		if effects {
			fl = FlagFoldEffects
		}
		if step == 2 {
			fl |= FlagFoldEntries
		}
		id := s.addFolded(s.recs[root].op, s.Offset(root), fl, cands[i].parent, out[i].Off, int32(total), int32(word), int32(j-i))
		s.recs[cands[i].parent].flags |= FlagHasFolded
		s.kids[cands[i].pos] = id
		for k := cands[i].pos + 1; k < cands[j-1].pos+step; k++ {
			s.kids[k] = foldGone
		}
		i = j
	}
	m.fs.roots, m.fs.out = roots[:0], out[:0]
}

// foldMinItems is the fewest item places a kept container must have for
// its items to be offered; foldPendingItems the fewest for a container
// waiting on the stack for its batch (pendingTable).
const (
	foldMinItems     = 16
	foldPendingItems = 256
)

// pendingTable returns, for m's n records, which are containers waiting on
// the stack above a MARK for the opcode that will consume them (an item of
// a batch of APPENDS, SETITEMS or ADDITEMS, or of a TUPLE, LIST or DICT):
// every slot above the first mark except the ones right below a mark,
// which a batch may be filling.
func (m *machine) pendingTable(n int) []bool {
	if cap(m.fs.pending) < n {
		m.fs.pending = make([]bool, n)
	}
	pd := m.fs.pending[:n]
	clear(pd)
	if len(m.marks) == 0 {
		return pd
	}
	k := 0 // the marks, bottom up
	for j := m.marks[0].pos; j < len(m.stack); j++ {
		for k < len(m.marks) && m.marks[k].pos <= j {
			k++
		}
		if k < len(m.marks) && m.marks[k].pos == j+1 {
			continue // (right below a mark: maybe the target of its batch)
		}
		if id := m.stack[j]; id >= 0 && int(id) < n {
			pd[id] = true
		}
	}
	return pd
}

// foldGone marks, in a kept container's items, the places a folded run
// took beyond its first; compact drops them.
const foldGone ID = -3

// taintTables returns m's taint and named tables for n records, cleared.
func (m *machine) taintTables(n int) ([]uint8, []bool) {
	if cap(m.taint) < n {
		m.taint = make([]uint8, n)
	}
	taint := m.taint[:n]
	clear(taint)
	if cap(m.namedSet) < n {
		m.namedSet = make([]bool, n)
	}
	isNamed := m.namedSet[:n]
	clear(isNamed)
	return taint, isNamed
}

// dropFolded takes out of the call log the calls and operations of the
// nodes the consumer folded: every node reachable from a folded root that
// nothing names (a named node, frozen, stays whole in the store).
func (m *machine) dropFolded(roots []ID, out []Folded, isNamed []bool) {
	s := m.s
	any := false
	for i := range roots {
		if out[i].OK && out[i].Effects {
			any = true
			break
		}
	}
	if !any {
		return
	}
	n := len(s.recs)
	if cap(m.fs.inFold) < n {
		m.fs.inFold = make([]bool, n)
	}
	in := m.fs.inFold[:n]
	clear(in)
	stack := m.work[:0]
	for i, r := range roots {
		if !out[i].OK || !out[i].Effects {
			continue
		}
		stack = append(stack, r)
		in[r] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			m.walkKids = s.Children(x, m.walkKids[:0])
			for _, c := range m.walkKids {
				if c >= 0 && int(c) < n && !in[c] && !isNamed[c] {
					in[c] = true
					stack = append(stack, c)
				}
			}
		}
	}
	m.work = stack[:0]
	keep := s.log[:0]
	for _, ev := range s.log {
		if ev.node >= 0 && int(ev.node) < n && in[ev.node] && (ev.at >= 0 || s.recs[ev.node].kind == KindCall) {
			continue
		}
		keep = append(keep, ev)
	}
	s.log = keep
}
