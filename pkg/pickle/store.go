package pickle

import (
	"encoding/binary"
	"iter"
	"math"
	"math/big"
	"runtime"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/internal/huge"
	"github.com/pk-tools/pk/pkg/internal/spill"
)

// ID names one node of a Store: its index in creation order. NoID is no
// node (a call without keyword arguments, the owner of a top node).
type ID int32

// NoID is the ID of no node.
const NoID ID = -1

// A Store holds one pickle stream as the machine read it, in the compact
// form of docs/engine.md §2.1: one fixed-size record per node and a few
// arenas, indexed by int32 IDs, with no Go pointer per node (the garbage
// collector scans none of it, so the process keeps the default GC pace).
//
// What a *Node holds, a Store holds by ID: kind, creating opcode and its
// offset, flags, the bytes attributed (Self), the scalar value, the text
// (str, bytes, a global's module and name, a PERSID line), the items, the
// parts of a call, the operations applied after creation and the owner.
// Texts live in one byte arena and items in one ID arena; a container that
// grows after it was built (APPEND(S), SETITEM(S), ADDITEMS) moves its items
// to the end of the arena with room to double, as a slice does, so growth
// stays amortised O(1).
//
// A Store is read-only once its stream is complete, except through the
// Add methods, with which a consumer appends nodes of its own (a producer
// rule's replacement); they get IDs after the stream's.
type Store struct {
	// Stream facts, as in Stream.
	Index         int
	Begin         int64  // first byte (Stream.Offset)
	End           int64  // one past STOP
	Proto         int    // the last PROTO seen (0 when none)
	Root          ID     // what pickle.load returns
	hiLast        uint32 // the high word of the offsets of the last run in hi (0: none)
	Tops          []ID   // nodes without an owner (see Stream.Tops)
	Popped        []ID   // discarded by POP or POP_MARK where they were built
	Leftover      []ID   // left under the result at STOP
	LeftoverMarks int    // MARKs still open at STOP
	StreamSelf    int64  // bytes attributed to the stream itself (Stream.Self)

	log []sev // the call log (Event)

	// empty is 1 + the ID of the record the empty dicts ([0]) and lists
	// ([1]) share (Keep.OneEmpty; 0: none)
	empty [2]ID

	recs []rec
	// sides is each node's Self and owner by ID; a node past its length
	// has neither (it grows as they are set). A lean store (Keep.OneNone
	// or Keep.Lean, for a consumer that reads neither) has none: ring holds the owners
	// of its last ownWin nodes only, at ID % ownWin, for foldArgs.
	sides []side
	ring  []ID
	out   *spill.File // the sides while they are out of memory (SidesOut)
	kids  []ID        // items, call parts and mutation arguments
	text  []byte      // payloads of str/bytes nodes, global names, PERSID lines
	ext   []ext       // what some nodes need: operations, grown items
	far   []far       // what few nodes need: big ints, blobs, long texts, large Self
	muts  []smut      // operations applied after creation, chained per target

	// grow, while the machine writes the store, projects how far a full
	// arena grows (arenaRoom); nil doubles it (room)
	grow *arenaGrowth
	hi   *offHigh // where the offsets pass 4 GiB (nil: they never do)
	// the same for the operations' offsets (smut.off), whose runs are of
	// indices in muts
	mutHi     *offHigh
	mutHiLast uint32
}

// rec is one node: 16 bytes (a cloudpickle state makes 851,261; a
// million levels of objects, three million). Its Self and owner are in
// Store.sides, which a lean store does without.
//
// v holds a node's value or where its data is, by what its kind holds
// (recHolds): a node has a scalar value or a text or items, never two of
// them, so they share one word. A global has names and may have items (a
// STACK_GLOBAL's module and name): its names' offset follows its items in
// Store.kids (namesBit). A consumer's own kinds hold items; a value set on
// them (SetInt) is kept in far.
type rec struct {
	kind  Kind
	op    Opcode
	flags Flags // with flagExt and flagOwned, which Flags never returns
	// off is the offset's low word (its high word: Store.hi) or, with
	// flagExt, 1 + the node's index in Store.ext, which then holds it (a
	// node that needs an ext gives up its offset word, so that no record
	// holds an index most never use)
	off uint32
	// holdsValue: the int, float bits, bool, EXT code or buffer index.
	// holdsText: the text's offset in Store.text << textLenBits | its
	// length (textInFar: both in far).
	// holdsItems: the first item in Store.kids (low word), the number of
	// items (high word, with namesBit).
	// holdsFold: the offset in Store.text of the run's foldRec.
	v int64
}

// What a node's v holds (recHolds).
const (
	holdsItems  = iota // containers, globals, calls, BINPERSID, a consumer's kinds
	holdsValue         // None, bool, int, float, EXT, buffer
	holdsText          // str, bytes, bytearray, PERSID
	holdsFold          // KindFolded
	holdsPersID        // (table only) PERSID: holdsText, BINPERSID: holdsItems
)

var kindHolds = [256]uint8{
	KindNone: holdsValue, KindBool: holdsValue, KindInt: holdsValue, KindFloat: holdsValue, KindExt: holdsValue, KindBuffer: holdsValue,
	KindStr: holdsText, KindBytes: holdsText, KindByteArray: holdsText, KindPersID: holdsPersID,
	KindFolded: holdsFold,
}

// holds returns what r.v holds.
func (r *rec) holds() uint8 {
	h := kindHolds[r.kind]
	if h == holdsPersID {
		if r.op == PERSID {
			return holdsText
		}
		return holdsItems
	}
	return h
}

// flagExt marks a record whose off is its index in Store.ext (rec.off),
// flagOwned one that has an owner (what the machine asks of a node it
// takes, which a lean store's ring does not say of every node): the
// store's own, never returned by Flags nor set or cleared by a consumer.
const (
	flagExt      Flags = 1 << 15
	flagOwned    Flags = 1 << 14
	flagsPrivate       = flagExt | flagOwned
)

// (a constant below zero does not compile: the public flags stay below flagOwned)
const _ Flags = flagOwned - flagsPublic

// xi returns 1 + the node's index in Store.ext, 0 when it has none.
func (r *rec) xi() int32 {
	if r.flags&flagExt == 0 {
		return 0
	}
	return int32(r.off)
}

// offHigh is where a store's offsets pass 4 GiB: the runs of IDs whose
// offsets share a high word (rec.off holds the low word), each from its
// first ID to the next run's. Records are appended in stream order, so a
// stream has one run per 4 GiB it spans past the first; a consumer's node
// added out of that order (AddFrom, a compaction's stub) may start one
// more. Below 4 GiB there is none: a store of any smaller input has no
// offHigh at all.
type offHigh struct {
	from []ID     // the first ID of each run, increasing
	hi   []uint32 // the high word of its offsets
}

// at returns the high word of the offset of node id.
func (h *offHigh) at(id ID) uint32 {
	lo, hi := 0, len(h.from) // (the first run that starts after id)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.from[mid] <= id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	return h.hi[lo-1]
}

// noteOff records the high word of off, the offset of id, the node last
// appended to a store whose runs are *h and *last (see offHigh).
func noteOff(h **offHigh, last *uint32, id ID, off int64) {
	w := uint32(uint64(off) >> 32)
	if w == *last {
		return
	}
	if *h == nil {
		*h = &offHigh{}
	}
	(*h).from = append((*h).from, id)
	(*h).hi = append((*h).hi, w)
	*last = w
}

// setOff sets the offset of id, the node last appended.
func (s *Store) setOff(id ID, off int64) {
	if r := &s.recs[id]; r.flags&flagExt != 0 {
		s.ext[r.off-1].off = uint32(off)
	} else {
		r.off = uint32(off)
	}
	if uint32(uint64(off)>>32) != s.hiLast {
		noteOff(&s.hi, &s.hiLast, id, off)
	}
}

// hasItems reports whether v is the node's items (kid, nkid).
func (r *rec) hasItems() bool { return r.holds() == holdsItems }

// kid and nkid are the first item in Store.kids and the number of items
// of a node that holds items (hasItems); setKids sets them (and clears
// namesBit: a global's setter puts its names after the items).
func (r *rec) kid() int32  { return int32(uint32(r.v)) }
func (r *rec) nkid() int32 { return int32(uint32(r.v>>32) &^ namesBit) }
func (r *rec) setKids(kid, n int32) {
	r.v = int64(uint32(kid)) | int64(uint32(n))<<32
}

// namesBit, in the high word of a global's v, says that the two entries
// of Store.kids after its items are the low and high words of the offset
// of its names in Store.text (globalText). Without it the global has no
// names (a dynamic STACK_GLOBAL, or a consumer's before SetStr).
const namesBit = 1 << 31

// A text's offset and length share v: textLenBits of length, the rest
// offset. A text with a length of textInFar or more, or an offset past
// 512 GiB, has both in far, and textInFar as its length.
const (
	textLenBits = 24
	textInFar   = 1<<textLenBits - 1
)

// foldRec is what a KindFolded node holds beyond its record, in
// Store.text at its v: the consumer's offset, length and word, and its
// count of items (FoldedRun; a store that is not lean has the count as
// the node's Self too, which pk trace reads).
const foldRecLen = 20

// ext is what some nodes need beyond their record: the operations applied
// to them after creation (16 bytes), the index of what few need beyond
// that, and the offset's low word the record gave up for the index
// (rec.off).
// (The count of operations is the last one's smut.idx + 1.) A million
// levels of objects built (cost shape nest_newobj_build) have one each:
// the capacity of a container's items that grew, which few need, is in
// far, not here (20 bytes).
type ext struct {
	mut, end int32  // 1 + first and last operation in Store.muts; 0: none
	far      int32  // 1 + index in Store.far; 0: none
	off      uint32 // the node's offset's low word (as rec.off without flagExt)
}

// nmut returns the number of operations of a node with an ext.
func (s *Store) nmut(x *ext) int32 {
	if x.end == 0 {
		return 0
	}
	return s.muts[x.end-1].idx + 1
}

// far is what few nodes need: a big int, a streamed payload, a text longer
// than textInFar, a Self of 4 GiB or more, the value of a node that holds
// items, the capacity of a container's items that grew.
type far struct {
	big     *big.Int
	blob    *Blob
	textOff int64 // a text whose length is textInFar or more (or offset past 512 GiB)
	textLen int64
	self    int64 // Self when its side holds selfInExt
	val     int64 // Int of a node whose v holds items (SetInt on a consumer's kind)
	kcap    int32 // capacity of a container's items after it grew (AppendItems; 0: as many as it holds)
}

// smut is one operation applied to a node after its creation (see Mut):
// 20 bytes (24 with the opcode in a field of its own: a million objects
// built, cost shape nest_newobj_build, hold a million).
type smut struct {
	off  uint32 // the offset's low word (its high word: Store.mutHi)
	kid  int32  // arguments in Store.kids
	next int32  // 1 + the next operation on the same target; 0: last
	idx  int32  // its index in Muts(target) (an EvMut's SEvent.Mut)
	opn  uint32 // the opcode << 24 | the number of arguments (mutArgsFar: see there)
}

// mutArgsFar, as an operation's number of arguments (smut.opn's low 24
// bits, mutArgsMask), says that the number is in Store.kids right before
// the arguments: an operation of 16M arguments or more (an APPENDS of that
// many items). (A variable for the tests, which lower it.)
var mutArgsFar int32 = mutArgsMask

const mutArgsMask = 1<<24 - 1

// op returns the operation's opcode.
func (m *smut) op() Opcode { return Opcode(m.opn >> 24) }

// mutHead appends to kids what goes before an operation's n arguments (n
// itself, when it is mutArgsFar or more) and returns kids and the smut.opn
// of op with n arguments.
func mutHead(kids []ID, op Opcode, n int) ([]ID, uint32) {
	if n >= int(mutArgsFar) {
		return append(kids, ID(n)), uint32(op)<<24 | uint32(mutArgsFar)
	}
	return kids, uint32(op)<<24 | uint32(n)
}

// nargs returns the number of arguments of operation m.
func (s *Store) nargs(m *smut) int32 {
	if n := int32(m.opn & mutArgsMask); n != mutArgsFar {
		return n
	}
	return int32(s.kids[m.kid-1])
}

// mutArgs returns the arguments of operation m (the store's memory).
func (s *Store) mutArgs(m *smut) []ID {
	n := m.kid + s.nargs(m)
	return s.kids[m.kid:n:n]
}

// mutOff returns the offset of operation i of Store.muts.
func (s *Store) mutOff(i int32) int64 {
	off := int64(s.muts[i].off)
	if s.mutHi != nil {
		off |= int64(s.mutHi.at(ID(i))) << 32
	}
	return off
}

// sev is one entry of the call log: 8 bytes, where an SEvent takes 24 (a
// million levels of objects made and built log two million). The rest of
// an SEvent is its node's kind, opcode and offset or, for EvMut, those of
// its operation (with its index in Muts(node): smut.idx).
type sev struct {
	node ID
	at   int32 // EvMut: index of the operation in Store.muts; -1: another kind
}

// evKinds is the kind of the event that logs a node of each kind (other
// than EvMut).
var evKinds = [256]EventKind{KindGlobal: EvGlobal, KindCall: EvCall, KindPersID: EvPersID, KindExt: EvExt, KindBuffer: EvBuffer}

// NEvents returns the number of entries in the call log.
func (s *Store) NEvents() int { return len(s.log) }

// Event returns entry i of the call log: every call, global resolution,
// operation applied after creation, persistent id, EXT lookup and buffer,
// in stream order.
func (s *Store) Event(i int) SEvent {
	e := &s.log[i]
	if e.at >= 0 {
		m := &s.muts[e.at]
		return SEvent{Offset: s.mutOff(e.at), Node: e.node, Mut: m.idx, Kind: EvMut, Op: m.op()}
	}
	r := &s.recs[e.node]
	return SEvent{Offset: s.Offset(e.node), Node: e.node, Mut: -1, Kind: evKinds[r.kind], Op: r.op}
}

// Events iterates over the call log (Event): index and entry.
func (s *Store) Events() iter.Seq2[int, SEvent] {
	return func(yield func(int, SEvent) bool) {
		for i := range s.log {
			if !yield(i, s.Event(i)) {
				return
			}
		}
	}
}

// SEvent is one entry of a Store's call log (see Event): Node is the node
// created or, for EvMut, mutated; Mut then indexes Store.Muts(Node).
type SEvent struct {
	Offset int64
	Node   ID
	Mut    int32
	Kind   EventKind
	Op     Opcode
}

// SMut is one operation applied after creation, as Store.Muts returns it.
type SMut struct {
	Op     Opcode
	Offset int64
	Args   []ID
}

// SharedEmpty reports whether node id is the record a store read with
// Keep.OneEmpty shares between empty dicts or between empty lists that no
// opcode names again: each place that names it holds an empty container
// of its own, distinct from every other (one object each, as when each
// had its record).
func (s *Store) SharedEmpty(id ID) bool {
	return id >= 0 && (id+1 == s.empty[0] || id+1 == s.empty[1])
}

// Len returns the number of nodes.
func (s *Store) Len() int { return len(s.recs) }

// CollectRead collects the garbage the machine left while it read a large
// store (its memo, stack, log and scratch, the tables it outgrew), so that
// what a consumer allocates next (pk hash's view and digest, pk trace's
// sizes) takes those pages rather than new ones. The store holds no
// pointers, so a collection costs little beside a store of collectMin
// records or more; a smaller store is left as it is. Peak RSS, means of
// 8-12 runs: pk hash of a dill state 29.3 -> 27.3 MB, pk trace --top 20 of
// the cloudpickle and dill states 49.4 -> 45.9 and 42.2 -> 38.6 MB.
//
// It also hands back to the system the pages of the store's arrays past
// their length (huge.Trim), which the machine reserved from its projection
// of the stream's size and the stream did not fill: the record array is
// backed by huge pages (adviseHuge), so the one its last record is written
// in stays resident whole, and an arena the allocator cleared in memory it
// reused is resident to its capacity (1.4-1.9 MB of the cloudpickle
// state's record array, 0.6 MB of its text). Peak RSS of pk hash, 8
// interleaved runs: 29.1-31.6 -> 28.5-29.1 MB (cloudpickle state), 23.7-25.6
// -> 23.5-23.9 MB (dill).
func (s *Store) CollectRead() {
	if len(s.recs) >= collectMin {
		s.trim()
		runtime.GC()
	}
}

// trim hands back the pages past the length of the store's arrays (the
// store's own, a stream of ParseEach: a window of Parse's ends at its
// length, the rest is the next stream's).
func (s *Store) trim() {
	huge.Trim(s.recs)
	huge.Trim(s.sides)
	huge.Trim(s.kids)
	huge.Trim(s.text)
	huge.Trim(s.ext)
	huge.Trim(s.muts)
	huge.Trim(s.log)
}

// collectMin is the size of a store (records) from which CollectRead
// collects.
const collectMin = 1 << 16

// Length is the stream's length in bytes.
func (s *Store) Length() int64 { return s.End - s.Begin }

// Kind, Op, Flags, Offset, Self and Owner return the node's fields as
// Node has them.
func (s *Store) Kind(id ID) Kind   { return s.recs[id].kind }
func (s *Store) Op(id ID) Opcode   { return s.recs[id].op }
func (s *Store) Flags(id ID) Flags { return s.recs[id].flags &^ flagsPrivate }
func (s *Store) Offset(id ID) int64 {
	r := &s.recs[id]
	off := int64(r.off)
	if r.flags&flagExt != 0 {
		off = int64(s.ext[off-1].off)
	}
	if s.hi != nil {
		off |= int64(s.hi.at(id)) << 32
	}
	return off
}

// A lean store (Keep.OneNone, Keep.Lean) has no Self (0), and the owners only of its
// last ownWin nodes while the machine writes it.
func (s *Store) Self(id ID) int64 {
	if int(id) >= len(s.sides) {
		return 0
	}
	if v := s.sides[id].self; v != selfInExt {
		return int64(v)
	}
	return s.far[s.ext[s.recs[id].off-1].far-1].self // (a far entry needs an ext)
}
func (s *Store) Owner(id ID) ID {
	if int(id) < len(s.sides) {
		return s.sides[id].owner
	}
	return NoID
}

// ownerOf is Owner, in a lean store of the last ownWin nodes (foldArgs).
func (s *Store) ownerOf(id ID) ID {
	if s.ring != nil {
		return s.ring[id&(ownWin-1)]
	}
	return s.Owner(id)
}
func (s *Store) Has(id ID, f Flags) bool { return s.recs[id].flags&f&^flagsPrivate != 0 }

// Lean reports whether the store keeps no Self and no owners (Self).
func (s *Store) Lean() bool { return s.ring != nil }

// side is what a store that is not lean holds of each node beside its
// record.
type side struct {
	self  uint32 // Self (selfInExt: in its far entry)
	owner ID
}

// ownWin is how many of its last nodes' owners a lean store keeps: twice
// the most a folded argument tuple may own (foldArgsMax), within which
// foldArgs reads them.
const ownWin = 2 * foldArgsMax

// Int returns the value of an int (when it fits int64; see Big), bool
// (0/1), EXT code or buffer index, or the IEEE-754 bits of a float (or
// what SetInt set on another kind; 0 for texts).
func (s *Store) Int(id ID) int64 {
	r := &s.recs[id]
	if kindHolds[r.kind] == holdsValue {
		return r.v
	}
	if r.hasItems() {
		if f := s.fr(id); f != nil {
			return f.val
		}
	}
	return 0
}

// Float returns the value of a float node.
func (s *Store) Float(id ID) float64 { return math.Float64frombits(uint64(s.Int(id))) }

func (s *Store) x(id ID) *ext {
	r := &s.recs[id]
	if r.flags&flagExt == 0 {
		return nil
	}
	return &s.ext[r.off-1]
}

// fr returns the node's far entry, nil when it has none.
func (s *Store) fr(id ID) *far {
	if x := s.x(id); x != nil && x.far != 0 {
		return &s.far[x.far-1]
	}
	return nil
}

// kcap returns the capacity of a container's items that grew (far.kcap),
// 0 when they did not: the container holds just its items.
func (s *Store) kcap(r *rec) int32 {
	if xi := r.xi(); xi != 0 {
		if f := s.ext[xi-1].far; f != 0 {
			return s.far[f-1].kcap
		}
	}
	return 0
}

// dropKcap forgets the room a container's items had (its items were set
// anew, or now share another node's).
func (s *Store) dropKcap(id ID) {
	if f := s.fr(id); f != nil {
		f.kcap = 0
	}
}

// namesAt returns the offset in Store.text of a global's names (see
// namesBit), false when it has none.
func (s *Store) namesAt(r *rec) (int64, bool) {
	if uint32(r.v>>32)&namesBit == 0 {
		return 0, false
	}
	i := r.kid() + r.nkid()
	return int64(uint32(s.kids[i])) | int64(s.kids[i+1])<<32, true
}

// globalText returns where a global's module and name are in Store.text:
// its names (namesAt) are uvarint(len(module)) uvarint(len(name)) module
// name, so that a global needs no ext.
func (s *Store) globalText(r *rec) (modOff, modLen, nameOff, nameLen int64) {
	p, ok := s.namesAt(r)
	if !ok {
		return 0, 0, 0, 0
	}
	ml, n1 := binary.Uvarint(s.text[p:])
	nl, n2 := binary.Uvarint(s.text[p+int64(n1):])
	modOff = p + int64(n1) + int64(n2)
	return modOff, int64(ml), modOff + int64(ml), int64(nl)
}

// setGlobalText writes a global's module and name into the text arena.
func (s *Store) setGlobalText(id ID, module, name string) {
	s.setGlobal(id, module, name, s.Items(id))
}

// setGlobal gives a global its module and name and its items.
func (s *Store) setGlobal(id ID, module, name string, items []ID) {
	off := int64(len(s.text))
	s.text = binary.AppendUvarint(s.text, uint64(len(module)))
	s.text = binary.AppendUvarint(s.text, uint64(len(name)))
	s.text = append(s.text, module...)
	s.text = append(s.text, name...)
	s.putGlobal(id, items, off)
}

// putGlobal gives a global items and its names at off in Store.text: a
// new range of the item arena holds the items, then the names' offset.
func (s *Store) putGlobal(id ID, items []ID, off int64) {
	start := int32(len(s.kids))
	s.kids = append(arenaRoom(s, s.kids, len(items)+2, arenaKids), items...) // (items may be in the old arena: append copies them first)
	s.kids = append(s.kids, ID(uint32(off)), ID(off>>32))
	r := &s.recs[id]
	r.setKids(start, int32(len(items)))
	r.v = int64(uint64(r.v) | namesBit<<32)
}

// Big returns the value of an int node as a big.Int (a new one when it fits
// int64).
func (s *Store) Big(id ID) *big.Int {
	if f := s.fr(id); f != nil && f.big != nil {
		return f.big
	}
	return big.NewInt(s.Int(id))
}

// IsBig reports whether an int does not fit int64.
func (s *Store) IsBig(id ID) bool {
	f := s.fr(id)
	return f != nil && f.big != nil
}

// Blob returns the streamed payload of a large str/bytes/bytearray, or nil.
func (s *Store) Blob(id ID) *Blob {
	if f := s.fr(id); f != nil {
		return f.blob
	}
	return nil
}

// textOf returns offset and length of a node's text.
func (s *Store) textOf(id ID) (int64, int64) {
	r := &s.recs[id]
	switch {
	case r.kind == KindGlobal:
		mo, ml, _, _ := s.globalText(r)
		return mo, ml
	case r.holds() != holdsText:
		return 0, 0 // (BINPERSID: its id is an item)
	}
	if off, n, ok := r.vText(); ok {
		return off, n
	}
	f := s.fr(id)
	return f.textOff, f.textLen
}

// Str returns the text of a str (UTF-8), bytes or bytearray (raw bytes; the
// blob's prefix when streamed), of a PERSID, or a global's module. The
// string shares the store's memory: it is valid as long as the store is.
func (s *Store) Str(id ID) string {
	if r := &s.recs[id]; kindHolds[r.kind] == holdsText {
		// a str, bytes or bytearray whose text is in its v (textOf)
		if off, n, ok := r.vText(); ok {
			if n == 0 {
				return ""
			}
			return unsafe.String(&s.text[off], int(n))
		}
	}
	return s.strSlow(id)
}

// vText is the offset and length of a node's text held in its v, and
// whether v holds them (not when the text's place is in far).
func (r *rec) vText() (off, n int64, ok bool) {
	return int64(uint64(r.v) >> textLenBits), r.v & textInFar, r.v&textInFar != textInFar
}

// strSlow is Str of a node whose text is not in its v.
func (s *Store) strSlow(id ID) string {
	switch s.recs[id].kind {
	case KindStr, KindBytes, KindByteArray, KindPersID, KindGlobal:
	default:
		return ""
	}
	off, n := s.textOf(id)
	if n == 0 {
		return ""
	}
	return unsafe.String(&s.text[off], int(n))
}

// Name returns a global's name (after the Python 2 name mapping).
func (s *Store) Name(id ID) string {
	r := &s.recs[id]
	if r.kind != KindGlobal {
		return ""
	}
	_, _, no, nl := s.globalText(r)
	if nl == 0 {
		return ""
	}
	return unsafe.String(&s.text[no], int(nl))
}

// Qualified returns "module.name" for a resolved global, else "".
func (s *Store) Qualified(id ID) string {
	if s.recs[id].kind != KindGlobal || s.recs[id].flags&FlagDynamic != 0 {
		return ""
	}
	return s.Str(id) + "." + s.Name(id)
}

// PayloadLen returns the payload length of a str/bytes/bytearray node.
func (s *Store) PayloadLen(id ID) int64 {
	if b := s.Blob(id); b != nil {
		return b.Len
	}
	_, n := s.textOf(id)
	return n
}

// Items returns the items of a container (dicts: key, value, ...), of a
// STACK_GLOBAL (module, name) or a BINPERSID (its id). A call's parts are
// read with Func, Args and Kwargs. The slice shares the store's memory.
func (s *Store) Items(id ID) []ID {
	r := &s.recs[id]
	if noItems[r.kind] && (r.kind != KindPersID || r.op == PERSID) {
		return nil
	}
	k, n := r.kid(), r.nkid()
	if n == 0 {
		return nil
	}
	return s.kids[k : k+n : k+n]
}

// noItems is, by kind, whether Items returns nothing: the kinds whose v
// holds no items (kindHolds), a call (whose parts are read with Func, Args
// and Kwargs), a PERSID (a BINPERSID holds its id as an item). One lookup
// instead of holds' two keeps Items within the compiler's inlining budget:
// pk hash reads the items of a cloudpickle state 1.2 million times.
var noItems = func() (t [256]bool) {
	for k := range t {
		h := kindHolds[k]
		t[k] = h != holdsItems || Kind(k) == KindCall
	}
	return t
}()

// NItems returns len(Items(id)).
func (s *Store) NItems(id ID) int {
	if r := &s.recs[id]; r.hasItems() && r.kind != KindCall {
		return int(r.nkid())
	}
	return 0
}

// Func, Args and Kwargs return the parts of a call (NoID when absent).
func (s *Store) Func(id ID) ID { return s.part(id, 0) }
func (s *Store) Args(id ID) ID { return s.part(id, 1) }
func (s *Store) Kwargs(id ID) ID {
	return s.part(id, 2)
}

func (s *Store) part(id ID, i int32) ID {
	r := &s.recs[id]
	if r.kind != KindCall || i >= r.nkid() {
		return NoID
	}
	return s.kids[r.kid()+i]
}

// NMuts returns the number of operations applied to the node after its
// creation.
func (s *Store) NMuts(id ID) int {
	if x := s.x(id); x != nil {
		return int(s.nmut(x))
	}
	return 0
}

// Muts returns the operations applied after creation, in stream order
// (a new slice; its Args share the store's memory).
func (s *Store) Muts(id ID) []SMut {
	x := s.x(id)
	if x == nil || x.mut == 0 {
		return nil
	}
	out := make([]SMut, 0, s.nmut(x))
	for i := x.mut; i != 0; i = s.muts[i-1].next {
		m := &s.muts[i-1]
		out = append(out, SMut{Op: m.op(), Offset: s.mutOff(i - 1), Args: s.mutArgs(m)})
	}
	return out
}

// Children appends to buf every node id refers to, in Node.Children's
// order: items, then call parts, then mutation arguments.
func (s *Store) Children(id ID, buf []ID) []ID {
	if r := &s.recs[id]; r.hasItems() {
		buf = append(buf, s.kids[r.kid():r.kid()+r.nkid()]...)
	}
	if x := s.x(id); x != nil {
		for i := x.mut; i != 0; i = s.muts[i-1].next {
			m := &s.muts[i-1]
			buf = append(buf, s.mutArgs(m)...)
		}
	}
	return buf
}

// Footprint returns the bytes the store holds (records, arenas, side
// tables, lists), for benchmarks and bounds.
func (s *Store) Footprint() int64 {
	n := int64(cap(s.recs))*int64(unsafe.Sizeof(rec{})) + 8*int64(cap(s.sides)) + int64(cap(s.kids))*4 + int64(cap(s.text)) +
		int64(cap(s.ext))*int64(unsafe.Sizeof(ext{})) + int64(cap(s.far))*int64(unsafe.Sizeof(far{})) + int64(cap(s.muts))*int64(unsafe.Sizeof(smut{})) +
		int64(cap(s.log))*int64(unsafe.Sizeof(sev{})) + 4*int64(cap(s.Tops)+cap(s.Popped)+cap(s.Leftover))
	return n
}

// bytes returns the bytes the store's nodes fill in its arrays (by
// length: a store of ParseEach keeps the capacity of the largest stream
// before it).
func (s *Store) bytes() int64 {
	return int64(len(s.recs))*int64(unsafe.Sizeof(rec{})) + 8*int64(len(s.sides)) + int64(len(s.kids))*4 + int64(len(s.text)) +
		int64(len(s.ext))*int64(unsafe.Sizeof(ext{})) + int64(len(s.muts))*int64(unsafe.Sizeof(smut{})) + int64(len(s.log))*int64(unsafe.Sizeof(sev{}))
}

// --- building ---

// Add appends a node of kind k created by op at off, and returns its ID.
func (s *Store) Add(k Kind, op Opcode, off int64) ID {
	id := ID(len(s.recs))
	s.recs = append(s.recs, rec{kind: k, op: op})
	s.sideNew(id)
	s.setOff(id, off)
	return id
}

// growSides gives a store that is not lean room for n sides, as its
// records have (the machine's growRecs), adding the bytes of the sides it
// outgrew to *outgrown.
func (s *Store) growSides(n int, outgrown *int) {
	if !s.Lean() && cap(s.sides) < n {
		*outgrown += len(s.sides) * int(unsafe.Sizeof(side{}))
		s.sides = grow.To(s.sides, n)
	}
}

// sideNew gives node id, just appended, no Self and no owner: its side,
// or in a lean store its place in the ring (past the length of sides,
// which a consumer's copies may leave behind, a node has neither).
func (s *Store) sideNew(id ID) {
	switch {
	case s.ring != nil:
		s.ring[id&(ownWin-1)] = NoID
	case len(s.sides) == int(id):
		// (every node of the machine's stores: own sets its owner in place)
		s.sides = append(s.sides, side{owner: NoID})
	}
}

// cut drops the nodes from n on, which a later node may take the ID of.
func (s *Store) cut(n ID) {
	s.recs = s.recs[:n]
	s.sides = s.sides[:min(int(n), len(s.sides))]
}

// Reset empties a store a consumer builds with Add, keeping its arrays'
// room, so that a scratch store used again allocates nothing.
func (s *Store) Reset() {
	clear(s.far) // (big ints and blobs)
	*s = Store{Root: NoID, recs: s.recs[:0], sides: s.sides[:0], kids: s.kids[:0], text: s.text[:0], ext: s.ext[:0], far: s.far[:0], muts: s.muts[:0]}
}

// Reserve makes room for nodes more nodes and items more items (Add,
// SetItems), for a consumer that adds its nodes one at a time and calls it
// before each. Appended to one at a time, a large array grows by a quarter
// at a time and so allocates and copies about 5 times its final length
// (the view of a cloudpickle state adds 77,000 nodes: 15 MB allocated for
// 3 MB of records). An array that must grow here is sized for the length
// projected from done of total, how far the consumer is through the work
// that adds the nodes (0, 0: unknown), bounded to 8 times its length
// (mostly one copy in all), else doubled.
func (s *Store) Reserve(nodes, items int, done, total int64) {
	if len(s.recs)+nodes > cap(s.recs) {
		s.recs = grownTo(s.recs, reserved(len(s.recs), nodes, done, total))
	}
	if len(s.kids)+items > cap(s.kids) {
		s.kids = grownTo(s.kids, reserved(len(s.kids), items, done, total))
	}
}

// reserved is the capacity Reserve gives an array of length n that needs
// room for k more.
func reserved(n, k int, done, total int64) int {
	c := 2 * int64(n)
	if done > 0 && done < total && n >= 256 {
		proj := int64(n)*total/done + int64(n)/16
		c = min(max(proj, int64(n)+int64(n)/4), 8*int64(n))
	}
	return max(int(c), n+k, 16)
}

// grownTo returns a copy of buf with capacity n. Unlike append and
// slices.Grow, which clear the new capacity at once, it leaves the room
// untouched: a large array fresh from the system costs memory only as it
// is filled.
func grownTo[T any](buf []T, n int) []T {
	out := make([]T, len(buf), n)
	grow.Copy(out, buf)
	return out
}

// AddFrom appends a copy of node src's record (kind, opcode, offset, flags,
// value, text, items and extras shared, no operations) and returns its ID;
// a consumer edits the copy with the Set methods.
func (s *Store) AddFrom(src ID) ID {
	id := ID(len(s.recs))
	r := s.recs[src]
	if r.flags&flagExt != 0 {
		x := s.ext[r.off-1]
		x.mut, x.end = 0, 0
		if x.far != 0 {
			s.far = append(s.far, s.far[x.far-1])
			x.far = int32(len(s.far))
		}
		s.ext = append(s.ext, x)
		r.off = uint32(len(s.ext))
	}
	r.flags &^= flagOwned
	s.recs = append(s.recs, r)
	s.sideNew(id)
	s.setOff(id, s.Offset(src))
	if self := s.Self(src); self != 0 {
		s.AddSelf(id, self)
	}
	return id
}

func (s *Store) xw(id ID) *ext {
	r := &s.recs[id]
	if r.flags&flagExt == 0 {
		// (its offset's low word moves to the ext, whose index takes its word)
		s.ext = append(arenaRoom(s, s.ext, 1, arenaExt), ext{off: r.off})
		r.off = uint32(len(s.ext))
		r.flags |= flagExt
	}
	return &s.ext[r.off-1]
}

// fw returns the node's far entry, made when it has none.
func (s *Store) fw(id ID) *far {
	x := s.xw(id)
	if x.far == 0 {
		s.far = append(s.far, far{})
		x.far = int32(len(s.far))
	}
	return &s.far[x.far-1]
}

// SetInt sets the scalar value (int, bool, float bits, EXT code, buffer;
// on a node that holds items, a consumer's kind, it is kept in far). A
// text has none: it is ignored there.
func (s *Store) SetInt(id ID, v int64) {
	r := &s.recs[id]
	switch r.holds() {
	case holdsValue:
		r.v = v
	case holdsItems:
		if v != 0 || s.fr(id) != nil {
			s.fw(id).val = v
		}
	}
}

// SetBig sets the value of an int that does not fit int64.
func (s *Store) SetBig(id ID, b *big.Int) {
	s.fw(id).big = b
	if b.IsInt64() {
		s.SetInt(id, b.Int64())
	}
}

// SetFlags adds flags.
func (s *Store) SetFlags(id ID, f Flags) { s.recs[id].flags |= f &^ flagsPrivate }

// ClearFlags removes flags.
func (s *Store) ClearFlags(id ID, f Flags) { s.recs[id].flags &^= f &^ flagsPrivate }

// AddSelf attributes n more bytes to the node (nothing in a lean store).
func (s *Store) AddSelf(id ID, n int64) {
	// (one comparison says that n is not negative and that the sum stays
	// below selfInExt, so the Self is kept in its word, not in far)
	if int(id) < len(s.sides) && uint64(n) < selfInExt-uint64(s.sides[id].self) {
		s.sides[id].self += uint32(n)
		return
	}
	s.addSelfSlow(id, n)
}

// addSelfSlow is AddSelf of a node past sides, or where the sum goes to
// the node's far entry.
//
//go:noinline (keeps its caller within the inlining budget)
func (s *Store) addSelfSlow(id ID, n int64) {
	if s.Lean() {
		return
	}
	if int(id) >= len(s.sides) {
		s.sides = grownBy(s.sides, int(id)+1, side{owner: NoID})
		if uint64(n) < selfInExt {
			s.sides[id].self = uint32(n)
			return
		}
	}
	cur := s.Self(id)
	s.fw(id).self = cur + n
	s.sides[id].self = selfInExt
}

// selfInExt marks a Self kept in the node's far entry.
const selfInExt = math.MaxUint32

// grownBy returns buf with length n, the new entries v.
func grownBy[T any](buf []T, n int, v T) []T {
	for len(buf) < n {
		buf = append(buf, v)
	}
	return buf
}

// SetOwner sets the node that consumed id where it was built.
func (s *Store) SetOwner(id, owner ID) {
	if owner >= 0 {
		if int(id) >= len(s.sides) && s.ring == nil {
			s.sides = grownBy(s.sides, int(id)+1, side{owner: NoID})
		}
		s.own(id, owner)
		return
	}
	s.recs[id].flags &^= flagOwned
	switch {
	case int(id) < len(s.sides):
		s.sides[id].owner = NoID
	case s.ring != nil && int(id) >= len(s.recs)-ownWin:
		s.ring[id&(ownWin-1)] = NoID
	}
}

// own makes by the owner of id, which has a side or is in a lean store:
// SetOwner in a few instructions, for the machine, which owns a node as
// it takes it (every node of its stores has a side). A lean store's ring
// keeps it only for the last ownWin nodes.
func (s *Store) own(id, by ID) {
	s.recs[id].flags |= flagOwned
	if int(id) < len(s.sides) {
		s.sides[id].owner = by
	} else if s.ring != nil && int(id) >= len(s.recs)-ownWin {
		s.ring[id&(ownWin-1)] = by
	}
}

// moveSides gives node id the owner and Self of the node that moves to
// its place (foldArgs renumbers what it keeps).
func (s *Store) moveSides(id, owner ID, self int64) {
	s.SetOwner(id, owner)
	if int(id) < len(s.sides) {
		s.sides[id].self = 0
	}
	s.AddSelf(id, self)
}

// putText copies t into the text arena.
func (s *Store) putText(t string) int64 {
	off := int64(len(s.text))
	s.text = append(s.text, t...)
	return off
}

// SetStr sets the text of a str/bytes/bytearray/PERSID/global (module) node.
func (s *Store) SetStr(id ID, t string) {
	if s.recs[id].kind == KindGlobal {
		s.setGlobalText(id, t, s.Name(id))
		return
	}
	off := s.putText(t)
	if n := int64(len(t)); n < textInFar && off < 1<<(63-textLenBits) {
		s.recs[id].v = off<<textLenBits | n
		return
	}
	s.recs[id].v = textInFar
	f := s.fw(id)
	f.textOff, f.textLen = off, int64(len(t))
}

// SetBlob sets the streamed payload of a large str/bytes/bytearray; its
// prefix becomes the node's text.
func (s *Store) SetBlob(id ID, b *Blob) {
	s.SetStr(id, b.Prefix)
	s.fw(id).blob = b
}

// SetName sets a global's name.
func (s *Store) SetName(id ID, name string) {
	s.setGlobalText(id, s.Str(id), name)
}

// SetItems sets the items of a node (a call: func, args[, kwargs]) to a
// copy of items. A node that holds a value or a text has no items: its
// value would be lost.
func (s *Store) SetItems(id ID, items []ID) {
	r := &s.recs[id]
	if off, ok := s.namesAt(r); ok && r.kind == KindGlobal {
		s.putGlobal(id, items, off)
	} else {
		r.setKids(int32(len(s.kids)), int32(len(items)))
		s.kids = append(arenaRoom(s, s.kids, len(items), arenaKids), items...)
	}
	s.dropKcap(id)
}

// AppendItems appends items to a container's items.
func (s *Store) AppendItems(id ID, items []ID) {
	if len(items) == 0 {
		return
	}
	r := &s.recs[id]
	if r.kind == KindGlobal {
		// (its names follow its items: a new range for both)
		s.SetItems(id, append(s.Items(id), items...))
		return
	}
	kid, nkid := r.kid(), r.nkid()
	kcap := s.kcap(r)
	if nkid == 0 && kcap == 0 {
		s.SetItems(id, items)
		return
	}
	kcap = max(kcap, nkid)
	need := nkid + int32(len(items))
	if need <= kcap {
		copy(s.kids[kid+nkid:], items)
		r.setKids(kid, need)
		return
	}
	// move to the end with room to double
	ncap := max(2*kcap, need, 4)
	s.kids = arenaRoom(s, s.kids, int(ncap), arenaKids)
	start := int32(len(s.kids))
	s.kids = append(s.kids, s.kids[kid:kid+nkid]...)
	s.kids = append(s.kids, items...)
	for i := need; i < ncap; i++ {
		s.kids = append(s.kids, NoID)
	}
	s.recs[id].setKids(start, need)
	s.fw(id).kcap = ncap
}

// AddMut records an operation applied to target after its creation and
// returns its index in Muts(target).
func (s *Store) AddMut(target ID, op Opcode, off int64, args []ID) int {
	x := s.xw(target)
	idx := s.nmut(x)
	kids, opn := mutHead(arenaRoom(s, s.kids, len(args)+1, arenaKids), op, len(args))
	kid := int32(len(kids))
	s.kids = append(kids, args...)
	s.muts = append(arenaRoom(s, s.muts, 1, arenaMuts), smut{opn: opn, off: uint32(off), kid: kid, idx: idx})
	i := int32(len(s.muts))
	if uint32(uint64(off)>>32) != s.mutHiLast {
		noteOff(&s.mutHi, &s.mutHiLast, ID(i-1), off)
	}
	if x.end == 0 {
		x.mut = i
	} else {
		s.muts[x.end-1].next = i
	}
	x.end = i
	return int(idx)
}

// --- the graph, both ways ---

// FromGraph returns the store of a stream read as a graph: the same nodes
// under the same IDs (Node.ID), the same stream facts.
func FromGraph(st *Stream) *Store {
	s := &Store{Index: st.Index, Begin: st.Offset, End: st.End, Proto: st.Proto, Root: idOf(st.Root),
		LeftoverMarks: st.LeftoverMarks, StreamSelf: st.Self}
	s.recs = make([]rec, 0, len(st.All))
	nk := 0
	for _, n := range st.All {
		nk += len(n.Items)
	}
	s.kids = make([]ID, 0, nk+len(st.All)/4)
	var buf []ID
	for _, n := range st.All {
		id := s.Add(n.Kind, n.Op, n.Offset)
		r := &s.recs[id]
		r.flags = n.Flags &^ flagsPrivate
		s.SetInt(id, n.Int)
		s.AddSelf(id, n.Self)
		s.SetOwner(id, idOf(n.Owner))
		switch n.Kind {
		case KindStr, KindBytes, KindByteArray, KindPersID, KindGlobal:
			s.SetStr(id, n.Str)
		}
		if n.X != nil {
			if n.X.Big != nil {
				s.fw(id).big = n.X.Big
			}
			if n.X.Blob != nil {
				s.fw(id).blob = n.X.Blob
			}
			if n.Kind == KindGlobal {
				s.SetName(id, n.X.Name)
			}
		}
		buf = buf[:0]
		if n.Kind == KindCall {
			if n.X != nil {
				buf = append(buf, idOf(n.X.Func), idOf(n.X.Args))
				if n.X.Kwargs != nil {
					buf = append(buf, idOf(n.X.Kwargs))
				}
			}
		} else {
			for _, c := range n.Items {
				buf = append(buf, idOf(c))
			}
		}
		if len(buf) > 0 {
			s.SetItems(id, buf)
		}
	}
	for _, n := range st.All {
		for _, m := range n.Muts() {
			buf = buf[:0]
			for _, a := range m.Args {
				buf = append(buf, idOf(a))
			}
			s.AddMut(ID(n.ID), m.Op, m.Offset, buf)
		}
	}
	s.Tops = idsOf(st.Tops)
	s.Popped = idsOf(st.Popped)
	s.Leftover = idsOf(st.Leftover)
	s.log = make([]sev, len(st.Log))
	for i, e := range st.Log {
		s.log[i] = sev{node: idOf(e.Node), at: -1}
		if e.Kind == EvMut {
			// (a node's operations were added one after the other above)
			s.log[i].at = s.x(idOf(e.Node)).mut - 1 + int32(e.Mut)
		}
	}
	return s
}

func idOf(n *Node) ID {
	if n == nil {
		return NoID
	}
	return ID(n.ID)
}

func idsOf(ns []*Node) []ID {
	if len(ns) == 0 {
		return nil
	}
	out := make([]ID, len(ns))
	for i, n := range ns {
		out[i] = idOf(n)
	}
	return out
}

// needsExtra reports whether the graph's node of id has an Extra, as the
// graph machine gave one: calls, resolved globals, big ints, blobs,
// mutated nodes.
func (s *Store) needsExtra(id ID) bool {
	r := &s.recs[id]
	if r.kind == KindCall || (r.kind == KindGlobal && r.flags&FlagDynamic == 0) {
		return true
	}
	x := s.x(id)
	return x != nil && (x.far != 0 && (s.far[x.far-1].big != nil || s.far[x.far-1].blob != nil) || x.mut != 0)
}

// Graph returns the stream as a *Node graph with the same nodes under the
// same IDs: for the consumers that still walk the graph (docs/engine.md §3).
// Every node, item list and extra is carved from a few exact-size slabs.
func (s *Store) Graph() *Stream {
	st := &Stream{Index: s.Index, Offset: s.Begin, End: s.End, Proto: s.Proto,
		LeftoverMarks: s.LeftoverMarks, Self: s.StreamSelf, Graph: &Graph{}}
	n := len(s.recs)
	slab := make([]Node, n)
	all := make([]*Node, n)
	nx := 0
	for i := range slab {
		all[i] = &slab[i]
		if s.needsExtra(ID(i)) {
			nx++
		}
	}
	extras := make([]Extra, nx)
	kids := make([]*Node, len(s.kids))
	for i, k := range s.kids {
		if k >= 0 && int(k) < n {
			// (a global's names offset, after its items, is no ID: it
			// is in no slice of kids handed out)
			kids[i] = all[k]
		}
	}
	node := func(id ID) *Node {
		if id < 0 {
			return nil
		}
		return all[id]
	}
	for i := range slab {
		id := ID(i)
		r := &s.recs[i]
		nd := &slab[i]
		*nd = Node{Kind: r.kind, Op: r.op, Flags: r.flags &^ flagsPrivate, ID: int32(i), Offset: s.Offset(id), Self: s.Self(id), Int: s.Int(id), Owner: node(s.Owner(id))}
		switch r.kind {
		case KindStr, KindBytes, KindByteArray, KindPersID, KindGlobal:
			nd.Str = s.Str(id)
			nd.Int = 0
		}
		if s.needsExtra(id) {
			x := &extras[0]
			extras = extras[1:]
			if r.kind == KindGlobal {
				x.Name = s.Name(id)
			}
			if e := s.x(id); e != nil {
				if f := s.fr(id); f != nil {
					x.Big, x.Blob = f.big, f.blob
				}
				if e.mut != 0 {
					x.Muts = make([]Mut, 0, s.nmut(e))
					for j := e.mut; j != 0; j = s.muts[j-1].next {
						m := &s.muts[j-1]
						n := m.kid + s.nargs(m)
						x.Muts = append(x.Muts, Mut{Op: m.op(), Offset: s.mutOff(j - 1), Args: kids[m.kid:n:n]})
					}
				}
			}
			nd.X = x
		}
		if r.kind == KindCall {
			x := nd.X
			x.Func, x.Args, x.Kwargs = node(s.Func(id)), node(s.Args(id)), node(s.Kwargs(id))
		} else if k, n := r.kid(), r.nkid(); r.hasItems() && n > 0 {
			nd.Items = kids[k : k+n : k+n]
		}
	}
	st.All = all
	st.Root = node(s.Root)
	nodes := func(ids []ID) []*Node {
		if len(ids) == 0 {
			return nil
		}
		out := make([]*Node, len(ids))
		for i, id := range ids {
			out[i] = all[id]
		}
		return out
	}
	st.Tops, st.Popped, st.Leftover = nodes(s.Tops), nodes(s.Popped), nodes(s.Leftover)
	st.Log = make([]Event, len(s.log))
	for i := range s.log {
		e := s.Event(i)
		st.Log[i] = Event{Kind: e.Kind, Op: e.Op, Offset: e.Offset, Node: node(e.Node), Mut: int(e.Mut)}
	}
	return st
}

// room is grow.Room for the store's and the machine's arrays that append
// fills one entry at a time: a small one grows as append grows it (a
// stream of one None allocates next to nothing), a large one doubles
// (append's quarter steps allocate five times its final size, all of it
// held at the collector's quiet pace: a million levels of objects' BUILDs
// and stack slots, cost shape nest_newobj_build).
func room[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) || cap(s) < 1024 {
		return s
	}
	return grow.Room(s, n)
}
