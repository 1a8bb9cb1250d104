package canon

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// encState is the per-view state of the encoding: purity and digests of
// pure composites (memoised per node, so shared tuples stay linear),
// isolated digests (sort keys of mutable set elements and dict keys).
type encState struct {
	// pure, by node ID: 0 unknown, 1 pure, 2 identity, 3 being decided,
	// 4 pure and composite (leaf 3: a tuple, frozenset or dynamic global
	// encoded by its digest), so that the encoding of a pure node reads
	// its class here instead of classifying it again (composite)
	pure []uint8
	// pslot, by node ID: for a pure node, 1 + index of its digest in pdig
	// (0: none yet); for an identity node, 1 + its ordinal in the main
	// encoder (0: not reached yet). The two never share a node, so one
	// table serves both (4 bytes a node less); the payload digest of an
	// identity node (a long bytearray, a str with operations) is in idPay.
	// Made at its first write (setSlot, a main encoder): a view that is
	// never encoded whole and digests few pure composites (pk diff's two
	// views) holds none, 4 bytes a node a side. In a view of slotTabFrom
	// nodes or more the pure slots are in ptab while they are few (a
	// cloudpickle state: 7,200 of 380,000 nodes), and the main encoder
	// keeps its ordinals apart (encoder.ordBits): pslot is then made only
	// when ptab outgrows a byte a node (slots), in spare's memory when it
	// is large enough (docScratch.pslot).
	pslot   []int32
	ptab    *slotTab
	spare   []int32
	idPay   map[pickle.ID]int32
	pdig    digests
	npd     int                 // pure digests computed (pureDigest), for smallPD
	smallPD *smallBodies        // the last digests of short bodies, once npd passes smallAfter
	mains   int                 // main encoders made on this state
	isoSlot []int32             // by node ID: 1 + index of the isolated digest in isoDig
	isoMap  map[pickle.ID]int32 // isoSlot while few nodes have one (isoSlot nil; isoGet)
	isoDig  digests
	eqSlot  []int32 // by node ID: 1 + index of the equality digest in eqDig (eqKey)
	eqDig   digests
	// stacks and buffers of the walks above (taken and given back, so that
	// a nested walk allocates its own instead of sharing them)
	stk  []pickle.ID
	body []byte
	// Ordinals of the outermost isolated encoder, by node ID, valid when
	// ordGen holds its generation (nested isolated encoders use a map);
	// while they are few, in ordTab instead (ordtab.go: ordGen nil).
	ordGen  []uint32
	ordVal  []int32
	ordTab  *ordTab
	gen     uint32
	genBusy bool
	encPool []*encoder // finished isolated encoders, for reuse
	active  map[pickle.ID]bool
	depth   int
	budget  int64
	covered []uint64 // bitset by node ID: reachable from the result or already encoded
	// effects: the call-log places of the effects an encoding of the
	// stream found (encodeStream), which effectIndexes then gives without
	// covering the graph again; known once one encoding finished them
	effects      []int
	effectsKnown bool
	// plain: the pure tuples and frozensets (decide found them) whose
	// items, and theirs, are neither replaced nor anything but None, bool,
	// int, float, str, bytes, placeholders and such tuples and frozensets:
	// nothing the call log can name (a global, a call, a node with
	// operations), so that cover need not walk them
	plain nodeSet
	err   error
	// bytes of the stream encoding written so far, and their bound
	// (MaxExpansion)
	written, limit int64
}

// errExpansion: see MaxExpansion.
var errExpansion = fmt.Errorf("the canonical encoding of this stream would exceed %d times its size plus %d MiB (many references to a large number); pk refuses it (see docs/canonical-form.md)", MaxExpansion, MaxExpansionSlack>>20)

// budgetError: the isolated digests of sort keys need more node visits than
// the bound (32 x nodes + 2^20).
func budgetError(nodes int32) error {
	return fmt.Errorf("canonical ordering needs more than %d node visits (pk's bound: 32 x %d nodes + 2^20) for this input (sets or dict keys of mutable objects sharing a large graph); see docs/canonical-form.md", 32*int64(nodes)+1<<20, nodes)
}

func (v *View) state() *encState {
	if v.enc != nil {
		return v.enc // (the encoding asks for it at every node: kept inlinable)
	}
	return v.newState()
}

// newState makes the encoding state of the view (see state).
func (v *View) newState() *encState {
	n := int(v.nsyn)
	if s := v.scr; s != nil {
		// the previous stream of the input is done with them
		prev := &s.st
		if cap(prev.pslot) > cap(s.pslot) {
			s.pslot = prev.pslot // (made by slots)
		}
		s.pure = grow.Reuse(s.pure, n)
		var pslot []int32
		if n < slotTabFrom {
			s.pslot = grow.Reuse(s.pslot, n)
			pslot = s.pslot
		}
		s.st = encState{pure: s.pure, pslot: pslot, spare: s.pslot, budget: 32*int64(n) + 1<<20,
			pdig: prev.pdig.reset(), isoDig: prev.isoDig.reset(), eqDig: prev.eqDig.reset(),
			stk: prev.stk[:0], body: prev.body[:0], plain: prev.plain[:0]}
		v.enc = &s.st
	} else {
		v.enc = &encState{budget: 32*int64(n) + 1<<20}
		v.enc.pure = make([]uint8, n)
	}
	return v.enc
}

// slot is n's pslot (0: none yet, or no table yet).
func (st *encState) slot(n pickle.ID) int32 {
	if st.pslot != nil {
		return st.pslot[n]
	}
	if st.ptab != nil {
		s, _ := st.ptab.get(n)
		return s
	}
	return 0
}

// setSlot sets n's pslot.
func (st *encState) setSlot(n pickle.ID, s int32) {
	if st.pslot != nil {
		st.pslot[n] = s
		return
	}
	st.setSlotApart(n, s)
}

// setSlotApart is setSlot without pslot: in ptab while it has room.
func (st *encState) setSlotApart(n pickle.ID, s int32) {
	if len(st.pure) >= slotTabFrom {
		if st.ptab == nil {
			// (at most a byte a node: 8 bytes an entry, half full)
			st.ptab = newSlotTab(0, len(st.pure)/16)
		}
		if st.ptab.set(n, s) {
			return
		}
	}
	st.slots()[n] = s
}

// slots is the pslot table, made at its first use (with ptab's entries).
func (st *encState) slots() []int32 {
	if st.pslot == nil {
		st.pslot = grow.Reuse(st.spare, len(st.pure))
		st.spare = nil
		if st.ptab != nil {
			st.ptab.each(func(n pickle.ID, s int32) { st.pslot[n] = s })
			st.ptab = nil
		}
	}
	return st.pslot
}

// digests holds fixed-size digests in chunks that never move: adding one
// copies nothing (a doubling slice copies each digest about twice and
// holds the old array while it does), and a digest returned stays valid.
type digests struct {
	chunks [][]byte
	n      int
}

const digChunk = 2048 // digests per chunk: 64 KiB of SHA-256

// add appends H(data) and returns its slot (1 + index).
func (d *digests) add(a Algo, data []byte) int32 {
	return d.put(a.Size(), func(b []byte) []byte { return a.sum(b, data) })
}

// addSum appends h's sum and returns its slot.
func (d *digests) addSum(size int, h hash.Hash) int32 { return d.put(size, h.Sum) }

// keep appends a copy of digest x and returns its slot (eachStream: a
// file's stream digests wait for their count, a million streams' 32 MB with
// no copies of them).
func (d *digests) keep(x []byte) int32 {
	return d.put(len(x), func(b []byte) []byte { return append(b, x...) })
}

func (d *digests) put(size int, app func([]byte) []byte) int32 {
	c := d.n / digChunk
	if c == len(d.chunks) {
		d.chunks = append(d.chunks, make([]byte, 0, digChunk*size))
	}
	d.chunks[c] = app(d.chunks[c])
	d.n++
	return int32(d.n)
}

// reset empties d, keeping its first chunk for reuse (the next stream of
// an input of many small ones allocates nothing; a large stream's chunks
// are not held for the streams after it).
func (d digests) reset() digests {
	if len(d.chunks) == 0 {
		return digests{}
	}
	clear(d.chunks[1:])
	return digests{chunks: append(d.chunks[:0], d.chunks[0][:0])}
}

// get returns the digest in slot s (1 + index).
func (d *digests) get(s int32, size int) []byte {
	i := int(s - 1)
	o := (i % digChunk) * size
	return d.chunks[i/digChunk][o : o+size : o+size]
}

// takeStack returns the shared walk stack, empty (a new one when a walk
// holds it); putStack gives it back.
func (st *encState) takeStack() []pickle.ID {
	s := st.stk[:0]
	st.stk = nil
	return s
}

func (st *encState) putStack(s []pickle.ID) { st.stk = s[:0] }

func (st *encState) takeBody() []byte {
	b := st.body[:0]
	st.body = nil
	return b
}

func (st *encState) putBody(b []byte) { st.body = b[:0] }

// docScratch holds what the streams of one input hashed one after the
// other can share (a file of a million small pickles must not pay for a
// fresh set of tables and a hasher each).
type docScratch struct {
	header string
	h      hash.Hash
	pure   []uint8
	pslot  []int32
	cls    []nodeClass
	buf    []byte
	st     encState
	enc    encoder
	view   View
}

// ---- purity ----

// leaf classifies n without looking at its items: 1 pure, 2 identity,
// 3 pure if all items are pure.
func (v *View) leaf(n pickle.ID) uint8 {
	switch v.specialOf(n) {
	case 'P':
		return 1
	case 't', 'A', 'S', 'J':
		return 2
	}
	if v.extraSet.has(n) || v.nmuts(n) > 0 { // (extraSet: the nodes extra has calls for)
		return 2
	}
	switch v.kind(n) {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes, pickle.KindExt:
		return 1
	case pickle.KindGlobal:
		if v.flags(n)&pickle.FlagDynamic != 0 {
			return 3
		}
		return 1
	case pickle.KindTuple, pickle.KindFrozenSet:
		return 3
	}
	return 2
}

// isPure reports whether n (resolved) is encoded by value.
func (v *View) isPure(n pickle.ID) bool { return v.purity(n, false) }

// isPureDigest is isPure for a node about to be embedded: the walk that
// decides a composite pure also digests it (see decide).
func (v *View) isPureDigest(n pickle.ID) bool { return v.purity(n, true) }

// purity is isPure, with decide's digest when its walk runs.
func (v *View) purity(n pickle.ID, digest bool) bool {
	st := v.state()
	switch p := st.pure[n]; p {
	case 1, 2, 4:
		return p != 2
	case 0:
		if l := v.leaf(n); l != 3 {
			st.pure[n] = l // (a scalar, most nodes: no walk)
			return l == 1
		}
	}
	return v.decide(st, n, digest)
}

// decide walks the undecided composite n and what it holds. With digest,
// each composite it finds pure gets its digest (pureDigest's) as soon as
// it is decided, while its items are at hand: the walk of pureDigest
// after it would read them all again.
func (v *View) decide(st *encState, n pickle.ID, digest bool) bool {
	var buf []byte
	if digest {
		buf = st.takeBody()
	}
	stack := append(st.takeStack(), n)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		if p := st.pure[x]; p == 1 || p == 2 || p == 4 {
			stack = stack[:len(stack)-1]
			continue
		}
		l := v.leaf(x)
		if l != 3 {
			st.pure[x] = l
			stack = stack[:len(stack)-1]
			continue
		}
		if st.pure[x] == 0 {
			st.pure[x] = 3
			// its items: leaves decided here, composites pushed; with none
			// pushed (a tuple of scalars, most of them) x is decided in
			// this visit (a leaf pushed cost a visit, and x a second walk
			// of its items)
			pushed := false
			for _, c := range v.items(x) {
				c = v.res(c)
				if st.pure[c] != 0 {
					continue
				}
				if l := v.leaf(c); l != 3 {
					st.pure[c] = l
					continue
				}
				stack = grow.Push(stack, c)
				pushed = true
			}
			if pushed {
				continue
			}
		}
		// all items decided (or on a cycle: then identity)
		res := uint8(4)
		plain := v.kind(x) != pickle.KindGlobal
		for _, c := range v.items(x) {
			r := v.res(c)
			p := st.pure[r]
			if p != 1 && p != 4 {
				res = 2
				break
			}
			plain = plain && r == c && (p == 4 && st.plain.has(r) || p == 1 && v.plainScalar(r))
		}
		st.pure[x] = res
		if res == 4 && plain {
			st.plain.add(x)
		}
		if res == 4 && digest && st.slot(x) == 0 {
			buf = v.pureBody(buf[:0], x)
			st.setSlot(x, st.pureSlot(v.Opt.Algo, buf))
		}
		stack = stack[:len(stack)-1]
	}
	st.putStack(stack)
	if digest {
		st.putBody(buf)
	}
	p := st.pure[n]
	return p == 1 || p == 4
}

// plainScalar reports whether pure leaf n is a placeholder or a None,
// bool, int, float, str or bytes (see encState.plain).
func (v *View) plainScalar(n pickle.ID) bool {
	if v.specialOf(n) == 'P' {
		return true
	}
	switch v.kind(n) {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes:
		return true
	}
	return false
}

// composite reports whether pure node n is encoded by its digest (leaf 3)
// rather than as a scalar: from the purity table once isPure has decided n
// (always, on the paths that encode a pure node), else as leaf says.
func (v *View) composite(st *encState, n pickle.ID) bool {
	switch st.pure[n] {
	case 1:
		return false
	case 4:
		return true
	}
	return v.leaf(n) == 3
}

// ---- scalar encodings ----

func appendUvarint(b []byte, u uint64) []byte { return binary.AppendUvarint(b, u) }

func appendStr(b []byte, s string) []byte {
	b = appendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendPayload encodes a str/bytes payload: short tag + length + bytes up
// to InlineMax bytes, long tag + length + H(content) above.
func (v *View) appendPayload(b []byte, short, long byte, n pickle.ID) []byte {
	if bl := v.blob(n); bl != nil {
		b = append(b, long)
		b = appendUvarint(b, uint64(bl.Len))
		if len(bl.Digest) != v.Opt.Algo.Size() {
			if v.state().err == nil {
				v.state().err = fmt.Errorf("offset %d: payload of %d bytes was read without a %s digest (open the input with canon.ReadOptions)", v.offset(n), bl.Len, v.Opt.Algo)
			}
			return append(b, make([]byte, v.Opt.Algo.Size())...)
		}
		return append(b, bl.Digest...)
	}
	text := v.text(n)
	if len(text) <= InlineMax {
		b = append(b, short)
		return appendStr(b, text)
	}
	b = append(b, long)
	b = appendUvarint(b, uint64(len(text)))
	// The digest is computed once per node: a long string read back many
	// times through the memo is hashed once, not at every reference.
	st := v.state()
	size := v.Opt.Algo.Size()
	if st.pure[n] == 2 { // identity: its pslot is its ordinal
		if s, ok := st.idPay[n]; ok {
			return append(b, st.pdig.get(s, size)...)
		}
		s := st.pdig.add(v.Opt.Algo, unsafe.Slice(unsafe.StringData(text), len(text)))
		if st.idPay == nil {
			st.idPay = map[pickle.ID]int32{}
		}
		st.idPay[n] = s
		return append(b, st.pdig.get(s, size)...)
	}
	if s := st.slot(n); s > 0 {
		return append(b, st.pdig.get(s, size)...)
	}
	s := st.pdig.add(v.Opt.Algo, unsafe.Slice(unsafe.StringData(text), len(text)))
	st.setSlot(n, s)
	return append(b, st.pdig.get(s, size)...)
}

func (v *View) appendInt(b []byte, n pickle.ID) []byte {
	if v.isBig(n) {
		return appendIntVal(b, 0, v.bigOf(n))
	}
	return appendIntVal(b, v.ival(n), nil)
}

// appendIntVal encodes the int i, or x when x is not nil.
func appendIntVal(b []byte, i int64, x *big.Int) []byte {
	b = append(b, 'i')
	if x == nil {
		u := uint64(i)
		sign := byte('+')
		if i < 0 {
			sign = '-'
			u = uint64(-(i + 1)) + 1
		}
		var mag [8]byte
		binary.BigEndian.PutUint64(mag[:], u)
		m := mag[8-(bits.Len64(u)+7)/8:] // no leading zero byte
		b = append(b, sign)
		b = appendUvarint(b, uint64(len(m)))
		return append(b, m...)
	}
	sign := byte('+')
	if x.Sign() < 0 {
		sign = '-'
	}
	m := new(big.Int).Abs(x).Bytes()
	b = append(b, sign)
	b = appendUvarint(b, uint64(len(m)))
	return append(b, m...)
}

// appendScalar encodes a pure leaf.
func (v *View) appendScalar(b []byte, n pickle.ID) []byte {
	if v.specialOf(n) == 'P' {
		b = append(b, 'P')
		return appendStr(b, v.text(n))
	}
	switch v.kind(n) {
	case pickle.KindNone:
		return append(b, 'n')
	case pickle.KindBool:
		return append(b, 'b', byte(v.ival(n)))
	case pickle.KindInt:
		return v.appendInt(b, n)
	case pickle.KindFloat:
		b = append(b, 'f')
		return binary.BigEndian.AppendUint64(b, uint64(v.ival(n)))
	case pickle.KindStr:
		if v.blob(n) != nil && v.flags(n)&pickle.FlagPy2Str != 0 {
			return v.appendPayload(b, 'L', 'L', n)
		}
		return v.appendPayload(b, 's', 'S', n)
	case pickle.KindBytes:
		return v.appendPayload(b, 'y', 'Y', n)
	case pickle.KindByteArray:
		return v.appendPayload(b, 'y', 'Y', n)
	case pickle.KindGlobal:
		if v.flags(n)&pickle.FlagDotted != 0 {
			b = append(b, 'G')
		} else {
			b = append(b, 'g')
		}
		b = appendStr(b, v.text(n))
		return appendStr(b, v.name(n))
	case pickle.KindExt:
		b = append(b, 'x')
		return appendUvarint(b, uint64(v.ival(n)))
	}
	return append(b, '?')
}

// ---- pure composites ----

// pureDigest returns H(body) of a pure tuple, frozenset or dynamic global.
func (v *View) pureDigest(n pickle.ID) []byte {
	st := v.state()
	if s := st.slot(n); s > 0 {
		return st.pdig.get(s, v.Opt.Algo.Size())
	}
	stack := append(st.takeStack(), n)
	buf := st.takeBody()
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		if st.slot(x) > 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		ready := true
		for _, c := range v.items(x) {
			c = v.res(c)
			if v.composite(st, c) && st.slot(c) == 0 {
				stack = grow.Push(stack, c)
				ready = false
			}
		}
		if !ready {
			continue
		}
		buf = v.pureBody(buf[:0], x)
		st.setSlot(x, st.pureSlot(v.Opt.Algo, buf))
		stack = stack[:len(stack)-1]
	}
	st.putStack(stack)
	st.putBody(buf)
	return st.pdig.get(st.slot(n), v.Opt.Algo.Size())
}

// smallBodies remembers where the digests of the last short pure bodies
// are (direct-mapped by a hash of the body), so that the pure nodes with
// the same body share one digest: a million empty argument tuples of
// discarded calls were a million digests, 32 MB a side in pk diff, each
// hashed.
type smallBodies [smallSlots]struct {
	n    uint8
	body [smallBody]byte
	slot int32
}

const (
	smallBody  = 24  // longest body remembered
	smallSlots = 128 // bodies remembered (power of two)
)

// smallAfter is how many digests a state computes before it remembers
// bodies (a small stream allocates nothing); tests change it.
var smallAfter = 256

// pureSlot returns the slot in st.pdig of the digest of pure body b:
// a new one, or one of an equal short body met last.
func (st *encState) pureSlot(a Algo, b []byte) int32 {
	if len(b) > smallBody {
		return st.pdig.add(a, b)
	}
	if st.smallPD == nil {
		if st.npd++; st.npd < smallAfter {
			return st.pdig.add(a, b)
		}
		st.smallPD = new(smallBodies)
	}
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	e := &st.smallPD[h&(smallSlots-1)]
	if e.slot > 0 && int(e.n) == len(b) && string(e.body[:e.n]) == string(b) {
		return e.slot
	}
	e.slot = st.pdig.add(a, b)
	e.n = uint8(copy(e.body[:], b))
	return e.slot
}

func (v *View) pureBody(b []byte, x pickle.ID) []byte {
	switch v.kind(x) {
	case pickle.KindTuple:
		items := v.items(x)
		b = append(b, 'T')
		b = appendUvarint(b, uint64(len(items)))
		for _, c := range items {
			b = v.appendPure(b, v.res(c))
		}
	case pickle.KindFrozenSet:
		items := v.setItems(v.items(x))
		b = append(b, 'F')
		b = appendUvarint(b, uint64(len(items)))
		for _, c := range items {
			b = v.appendPure(b, c)
		}
	case pickle.KindGlobal: // dynamic
		b = append(b, 'D')
		for _, c := range v.items(x) {
			b = v.appendPure(b, v.res(c))
		}
	}
	return b
}

// appendPure encodes a pure node as it is embedded in its parent.
func (v *View) appendPure(b []byte, c pickle.ID) []byte {
	if v.composite(v.state(), c) {
		b = append(b, 'H')
		return append(b, v.pureDigest(c)...)
	}
	return v.appendScalar(b, c)
}

// ---- ordering ----

// sortKey is what set elements and dict keys are ordered by: the embedded
// encoding of a pure node, or 0xFF + the isolated digest of an identity node.
func (v *View) sortKey(b []byte, c pickle.ID) []byte {
	if isEnt(c) {
		return append(b, v.entKey(c)...)
	}
	if v.isPureDigest(c) {
		return v.appendPure(b, c)
	}
	b = append(b, 0xFF)
	return append(b, v.isoDigest(c)...)
}

// eqKey is the key under which Python would find two dict keys / set items
// equal: numbers by value across bool, int and float; a NaN only to
// itself (the same object, reached again through the memo); tuples,
// frozensets and dynamic globals item by item with the same equality;
// other pure values by encoding. Identity nodes (and NaNs) return false:
// they are equal only to the same node.
func (v *View) eqKey(b []byte, c pickle.ID) ([]byte, bool) {
	if isEnt(c) {
		return append(b, v.entKey(c)...), true // a str or bytes: its embedding
	}
	if !v.isPure(c) {
		return nil, false
	}
	if v.kind(c) == pickle.KindFloat && math.IsNaN(v.float(c)) && v.specialOf(c) == 0 {
		return nil, false
	}
	if v.composite(v.state(), c) {
		b = append(b, 'Q')
		return append(b, v.eqDigest(c)...), true
	}
	return v.eqScalar(b, c), true
}

// eqScalar is eqKey of a pure leaf; a NaN is 'I' + its node ID (equal
// only to itself).
func (v *View) eqScalar(b []byte, c pickle.ID) []byte {
	if v.specialOf(c) == 0 {
		switch v.kind(c) {
		case pickle.KindBool:
			return appendIntVal(b, v.ival(c), nil)
		case pickle.KindFloat:
			f := v.float(c)
			if math.IsNaN(f) {
				b = append(b, 'I')
				return appendUvarint(b, uint64(c))
			}
			if !math.IsInf(f, 0) && f == math.Trunc(f) {
				bi, _ := new(big.Float).SetFloat64(f).Int(nil)
				if bi.IsInt64() {
					return appendIntVal(b, bi.Int64(), nil)
				}
				return appendIntVal(b, 0, bi)
			}
		case pickle.KindInt:
			if v.isBig(c) && v.bigOf(c).IsInt64() {
				return appendIntVal(b, v.bigOf(c).Int64(), nil)
			}
		}
	}
	return v.appendPure(b, c)
}

// eqDigest is H of the equality key of a pure tuple, frozenset or dynamic
// global (see eqKey): 'T' n items, 'F' n distinct items sorted, 'D' parts,
// each item by eqKey. Memoised per node; an explicit stack, no recursion.
func (v *View) eqDigest(n pickle.ID) []byte {
	st := v.state()
	size := v.Opt.Algo.Size()
	if st.eqSlot == nil {
		st.eqSlot = make([]int32, v.nsyn)
	}
	if s := st.eqSlot[n]; s > 0 {
		return st.eqDig.get(s, size)
	}
	stack := append(st.takeStack(), n)
	buf := st.takeBody()
	var keys [][]byte
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		if st.eqSlot[x] > 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		ready := true
		xitems := v.items(x)
		for _, c := range xitems {
			c = v.res(c)
			if v.composite(st, c) && st.eqSlot[c] == 0 {
				stack = grow.Push(stack, c)
				ready = false
			}
		}
		if !ready {
			continue
		}
		item := func(b []byte, c pickle.ID) []byte {
			c = v.res(c)
			if v.composite(st, c) {
				b = append(b, 'Q')
				return append(b, st.eqDig.get(st.eqSlot[c], size)...)
			}
			return v.eqScalar(b, c)
		}
		buf = buf[:0]
		switch v.kind(x) {
		case pickle.KindTuple:
			buf = append(buf, 'T')
			buf = appendUvarint(buf, uint64(len(xitems)))
			for _, c := range xitems {
				buf = item(buf, c)
			}
		case pickle.KindFrozenSet:
			keys = keys[:0]
			for _, c := range xitems {
				keys = append(keys, item(nil, c))
			}
			slices.SortFunc(keys, bytes.Compare)
			keys = slices.CompactFunc(keys, bytes.Equal)
			buf = append(buf, 'F')
			buf = appendUvarint(buf, uint64(len(keys)))
			for _, k := range keys {
				buf = append(buf, k...)
			}
		default: // dynamic global
			buf = append(buf, 'D')
			for _, c := range xitems {
				buf = item(buf, c)
			}
		}
		st.eqSlot[x] = st.eqDig.add(v.Opt.Algo, buf)
		stack = stack[:len(stack)-1]
	}
	st.putStack(stack)
	st.putBody(buf)
	return st.eqDig.get(st.eqSlot[n], size)
}

type keyed struct {
	key  []byte
	node pickle.ID
	val  pickle.ID
	pos  int // index of the item (dict: of the pair) in stream order
	vpos int // dict: index of the pair whose value is kept
}

// scratch holds reusable buffers for ordering (taken and returned, so the
// nested orderings of isolated digests do not share one).
type scratch struct {
	ks    []keyed
	arena []byte
	offs  []int
	eq    []byte
	eqOff []int
	perm  []keyed
	order []keyOrder // sortKeyed's and dedupeLarge's positions in key order
}

func (v *View) getScratch() *scratch {
	if n := len(v.pool); n > 0 {
		s := v.pool[n-1]
		v.pool = v.pool[:n-1]
		return s
	}
	return &scratch{}
}

func (v *View) putScratch(s *scratch) { v.pool = append(v.pool, s) }

// keptScratch is what a document's next stream keeps of the scratches
// its previous stream's view returned: at most 8, each within 64 KiB of
// buffers (one that grew larger for a large dict is let go).
func keptScratch(pool []*scratch) []*scratch {
	out := pool[:0]
	for _, s := range pool {
		if len(out) < 8 && s.size() <= 64<<10 {
			out = append(out, s)
		}
	}
	clear(pool[len(out):])
	return out
}

// size is the bytes the scratch's buffers hold room for.
func (s *scratch) size() int {
	const kw, ow = int(unsafe.Sizeof(keyed{})), int(unsafe.Sizeof(keyOrder{}))
	return (cap(s.ks)+cap(s.perm))*kw + cap(s.order)*ow + cap(s.arena) + cap(s.eq) + (cap(s.offs)+cap(s.eqOff))*8
}

// dedupe keeps, for items equal as Python sees them, the first item (and,
// for dicts, the last value).
func (v *View) dedupe(ks []keyed, sc *scratch) []keyed {
	if len(ks) < 2 {
		return ks
	}
	// eq keys: pure -> bytes; NaN or identity -> nil (compared by node)
	// (the arrays sized once, and the keys' bytes grown by doubling: append
	// grows a large slice by a quarter, which allocated about five times
	// the keys of a wide dict)
	sc.eq, sc.eqOff = sc.eq[:0], append(grow.Room(sc.eqOff[:0], len(ks)+1), 0)
	pureK := make([]bool, 0, len(ks))
	for _, k := range ks {
		eb, ok := v.eqKey(grow.Room(sc.eq, 64), k.node)
		if ok { // identity and NaN keys return nil: keep what the others wrote
			sc.eq = eb
		}
		sc.eqOff = append(sc.eqOff, len(sc.eq))
		pureK = append(pureK, ok)
	}
	key := func(i int) []byte { return sc.eq[sc.eqOff[i]:sc.eqOff[i+1]] }
	if len(ks) > 16 {
		return dedupeLarge(ks, pureK, key, sc)
	}
	return dedupeSmall(ks, pureK, key)
}

// dedupeSmall is dedupe of a few items: each compared with those kept.
func dedupeSmall(ks []keyed, pureK []bool, key func(int) []byte) []keyed {
	out := ks[:0]
	keep := make([]int, 0, len(ks)) // original index of each kept item
	for i := range ks {
		k := ks[i]
		found := -1
		if pureK[i] {
			for j, oi := range keep {
				if pureK[oi] && bytes.Equal(key(oi), key(i)) {
					found = j
					break
				}
			}
		} else {
			for j := range out {
				if out[j].node == k.node {
					found = j
					break
				}
			}
		}
		if found >= 0 {
			merge(&out[found], k)
			continue
		}
		keep = append(keep, i)
		out = append(out, k)
	}
	return out
}

// merge folds into the kept item first a later item k equal to it.
func merge(first *keyed, k keyed) {
	if isEnt(k.node) || isEnt(first.node) {
		// an entry of a folded run holds its value: the later entry goes
		// whole (its key is a str or bytes equal to the first's, so it
		// embeds alike)
		first.node = k.node
	}
	first.val = k.val
	first.vpos = k.pos
}

// dedupeLarge is dedupe of many items: the pure ones sorted by equality
// key (its first 8 bytes beside each position, as sortKeyed does; ties by
// position), so each run of equal items is merged into its first in stream
// order, and identity items grouped by node in a map. No map of the keys
// (a string map entry an item was most of pk hash's memory on wide sets).
func dedupeLarge(ks []keyed, pureK []bool, key func(int) []byte, sc *scratch) []keyed {
	order := sc.order[:0]
	var seenN map[pickle.ID]int
	drop := make([]bool, len(ks))
	for i := range ks {
		if pureK[i] {
			order = append(order, keyOrder{prefix: keyPrefix(key(i)), i: int32(i)})
			continue
		}
		if seenN == nil {
			seenN = map[pickle.ID]int{}
		}
		if j, ok := seenN[ks[i].node]; ok {
			merge(&ks[j], ks[i])
			drop[i] = true
		} else {
			seenN[ks[i].node] = i
		}
	}
	slices.SortFunc(order, func(a, b keyOrder) int {
		if a.prefix != b.prefix {
			return cmp.Compare(a.prefix, b.prefix)
		}
		if c := bytes.Compare(key(int(a.i)), key(int(b.i))); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for r := 0; r < len(order); {
		first := int(order[r].i)
		e := r + 1
		for ; e < len(order) && order[e].prefix == order[r].prefix && bytes.Equal(key(int(order[e].i)), key(first)); e++ {
			j := int(order[e].i)
			merge(&ks[first], ks[j]) // (in stream order: ties sorted by position)
			drop[j] = true
		}
		r = e
	}
	sc.order = order
	out := ks[:0]
	for i := range ks {
		if !drop[i] {
			out = append(out, ks[i])
		}
	}
	return out
}

// setItems returns the items of a set or frozenset, deduplicated and sorted.
func (v *View) setItems(items []pickle.ID) []pickle.ID {
	out, _ := v.setItemsPos(items, false)
	return out
}

// setItemsPos is setItems, with (when pos is set) the place of each kept
// element among items: the number of its path {#i} (pk trace's).
func (v *View) setItemsPos(items []pickle.ID, pos bool) ([]pickle.ID, []int) {
	sc := v.getScratch()
	defer v.putScratch(sc)
	ks := grow.Room(sc.ks[:0], len(items))
	for i, c := range items {
		ks = append(ks, keyed{node: v.res(c), pos: i})
	}
	sc.ks = ks
	ks = v.dedupe(ks, sc)
	v.sortKeyed(ks, sc)
	out := make([]pickle.ID, len(ks))
	var at []int
	if pos {
		at = make([]int, len(ks))
	}
	for i, k := range ks {
		out[i] = k.node
		if pos {
			at[i] = k.pos
		}
	}
	return out, at
}

// dedupeSorted is dedupe then sortKeyed. For a large dict whose keys are
// all str or bytes (their sort key is their equality key) it sorts first
// and drops each key equal to the one before it, as dedupe would (the first
// keeps its place, the last's value): no map of the keys.
func (v *View) dedupeSorted(ks []keyed, sc *scratch) []keyed {
	if len(ks) <= 16 || !v.strKeys(ks) {
		ks = v.dedupe(ks, sc)
		v.sortKeyed(ks, sc)
		return ks
	}
	v.sortKeyed(ks, sc)
	out := ks[:0]
	for _, k := range ks {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].key, k.key) {
			if isEnt(k.node) || isEnt(out[n-1].node) {
				out[n-1].node = k.node // (an entry of a folded run holds its value)
			}
			out[n-1].val, out[n-1].vpos = k.val, k.pos
			continue
		}
		out = append(out, k)
	}
	return out
}

// strKeys reports whether every key of ks is a str or bytes encoded by
// value (or an entry of a folded run, whose key is one).
func (v *View) strKeys(ks []keyed) bool {
	for _, k := range ks {
		if isEnt(k.node) {
			continue
		}
		if k.node < 0 || v.leaf(k.node) != 1 {
			return false
		}
		if kd := v.kind(k.node); kd != pickle.KindStr && kd != pickle.KindBytes {
			return false
		}
	}
	return true
}

// dictEntries returns the entries of a plain dict: duplicates merged as
// Python does, sorted by key unless KeepDictOrder. The result is valid
// until the scratch is returned with putScratch.
func (v *View) dictEntries(n pickle.ID, sc *scratch) []keyed {
	items := v.items(n)
	ks := grow.Room(sc.ks[:0], len(items)/2)
	if v.flags(n)&pickle.FlagHasFolded != 0 {
		// runs of entries folded while the stream was read take one place
		// each; the dict's ordering is computed without the cache
		pos := 0
		for i := 0; i < len(items); {
			if c := items[i]; c >= 0 && c < v.base && v.s.Kind(c) == pickle.KindFolded && v.s.Flags(c)&pickle.FlagFoldEntries != 0 {
				ks = v.Opt.fold.entries(v, c, ks, &pos)
				i++
				continue
			}
			if i+1 >= len(items) {
				break
			}
			ks = append(ks, keyed{node: v.res(items[i]), val: items[i+1], pos: pos, vpos: pos})
			pos, i = pos+1, i+2
		}
		sc.ks = ks
		if !v.Opt.KeepDictOrder && !v.ordered.has(n) {
			return v.dedupeSorted(ks, sc)
		}
		return v.dedupe(ks, sc)
	}
	for i := 0; i+1 < len(items); i += 2 {
		ks = append(ks, keyed{node: v.res(items[i]), val: items[i+1], pos: i / 2, vpos: i / 2})
	}
	sc.ks = ks
	if v.ordered.has(n) && !v.Opt.KeepDictOrder {
		// a dict whose order is part of the value (pk-canon/2: the members
		// of a dynamic enum): deduplicated, not sorted, not cached
		return v.dedupe(ks, sc)
	}
	if len(ks) >= 2 && v.dperm == nil {
		v.dperm = new(dictPerms) // (at the first dict it may keep: see dictPerms)
	}
	if out, ok := v.dperm.apply(ks, items, sc); ok {
		return out
	}
	cacheable := !noDictPerm && v.dperm != nil && v.dperm.begin(v, ks)
	if !v.Opt.KeepDictOrder {
		ks = v.dedupeSorted(ks, sc)
	} else {
		ks = v.dedupe(ks, sc)
	}
	if cacheable {
		v.dperm.commit(ks)
	}
	return ks
}

// dictPerm remembers how the last dict whose keys are all pure was
// deduplicated and ordered. Dedupe and order depend only on the sequence
// of (resolved) key nodes when every key is pure (its encoding does not
// depend on where it is met), so the next dict with the very same key
// nodes in the same order (a list of records whose keys the pickler
// memoised once) reuses the permutation instead of encoding and sorting
// its keys again.
// noDictPerm turns the cache off (tests compare both ways).
var noDictPerm bool

// dictPerms holds the orderings of the last dicts of different key
// sequences (dictPerm each): the dicts an encoding meets alternate between
// a few of them (a cloudpickle state: 22,400 function states of ten keys
// between functions' other dicts, which missed a cache of one every time:
// 3 % of pk hash's instructions). The oldest is replaced. A view makes it
// at its first dict of two keys or more (a file of a million pickles
// zeroes a View a stream).
type dictPerms struct {
	e    [4]dictPerm
	next int // the entry begin fills
}

func (d *dictPerms) apply(ks []keyed, items []pickle.ID, sc *scratch) ([]keyed, bool) {
	if d == nil || len(ks) < 2 {
		return nil, false // (begin keeps none of these: most dicts of a state are empty)
	}
	for i := range d.e {
		if out, ok := d.e[i].apply(ks, items, sc); ok {
			return out, true
		}
	}
	return nil, false
}

func (d *dictPerms) begin(v *View, in []keyed) bool { return d.e[d.next].begin(v, in) }

// forget drops the orderings (a new stream's nodes), keeping their room.
func (d *dictPerms) forget() {
	for i := range d.e {
		d.e[i].ok = false
	}
	d.next = 0
}

func (d *dictPerms) commit(out []keyed) {
	d.e[d.next].commit(out)
	d.next = (d.next + 1) % len(d.e)
}

type dictPerm struct {
	ok   bool
	keys []pickle.ID // resolved key nodes in stream order
	keep []int32     // per entry: index of the kept key
	val  []int32     // per entry: index of the pair whose value is kept
}

// begin records the key nodes of a dict about to be ordered, when they are
// all pure; it reports whether commit should follow.
func (d *dictPerm) begin(v *View, in []keyed) bool {
	if len(in) < 2 {
		return false
	}
	for _, k := range in {
		if !v.isPure(k.node) {
			return false
		}
	}
	d.ok = false
	d.keys = d.keys[:0]
	for _, k := range in {
		d.keys = append(d.keys, k.node)
	}
	return true
}

func (d *dictPerm) commit(out []keyed) {
	d.keep, d.val = d.keep[:0], d.val[:0]
	for _, k := range out {
		d.keep = append(d.keep, int32(k.pos))
		d.val = append(d.val, int32(k.vpos))
	}
	d.ok = true
}

func (d *dictPerm) apply(ks []keyed, items []pickle.ID, sc *scratch) ([]keyed, bool) {
	if !d.ok || len(d.keys) != len(ks) {
		return nil, false
	}
	for i, k := range ks {
		if d.keys[i] != k.node {
			return nil, false
		}
	}
	out := sc.perm[:0]
	for j, ki := range d.keep {
		vi := d.val[j]
		out = append(out, keyed{node: ks[ki].node, val: items[2*vi+1], pos: int(ki), vpos: int(vi)})
	}
	sc.perm = out
	return out, true
}

func (v *View) sortKeyed(ks []keyed, sc *scratch) {
	if len(ks) < 2 {
		return
	}
	sc.arena = sc.arena[:0]
	sc.offs = append(grow.Room(sc.offs[:0], len(ks)+1), 0)
	for i := range ks {
		sc.arena = v.sortKey(grow.Room(sc.arena, 64), ks[i].node)
		sc.offs = append(sc.offs, len(sc.arena))
	}
	for i := range ks {
		ks[i].key = sc.arena[sc.offs[i]:sc.offs[i+1]:sc.offs[i+1]]
	}
	sortByKey(ks, sc)
}

// sortByKey sorts ks by key, stably.
func sortByKey(ks []keyed, sc *scratch) {
	if len(ks) <= 12 {
		for i := 1; i < len(ks); i++ {
			for j := i; j > 0 && bytes.Compare(ks[j].key, ks[j-1].key) < 0; j-- {
				ks[j], ks[j-1] = ks[j-1], ks[j]
			}
		}
		return
	}
	// The order of a stable sort by key, made by an unstable sort of the
	// positions with ties broken by position. slices.SortStableFunc moved
	// the 48-byte entries O(n log² n) times (symmerge), and each comparison
	// went to the keys' bytes: on pk hash of a set of 500,000 items, 0.45 of
	// its 0.75 s. Each position is sorted beside its key's first 8 bytes, big
	// endian, zero-padded (equal prefixes compare the whole keys), so that
	// most comparisons touch no key.
	order := grow.Reuse(sc.order, len(ks))
	for i := range ks {
		order[i] = keyOrder{prefix: keyPrefix(ks[i].key), i: int32(i)}
	}
	slices.SortFunc(order, func(a, b keyOrder) int {
		if a.prefix != b.prefix {
			return cmp.Compare(a.prefix, b.prefix)
		}
		if c := bytes.Compare(ks[a.i].key, ks[b.i].key); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	// ks[i] = ks[order[i].i] for every i, in place: each cycle of the
	// permutation in turn, a done position marked -1
	for i := range order {
		if order[i].i < 0 {
			continue
		}
		tmp, j := ks[i], i
		for {
			k := int(order[j].i)
			order[j].i = -1
			if k == i {
				ks[j] = tmp
				break
			}
			ks[j], j = ks[k], k
		}
	}
	sc.order = order
}

// keyOrder is a position in a sort by key, beside the key's prefix.
type keyOrder struct {
	prefix uint64
	i      int32
}

// keyPrefix is the first 8 bytes of k, big endian, zero-padded: prefixes
// order as the keys do, except that keys with equal prefixes may differ.
func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// isoDigest is the digest of n's canonical encoding in a context of its
// own (ordinals from 0, nothing visited). A node whose isolated digest is
// being computed (a cycle through a set element or dict key) gets a fixed
// marker instead.
func (v *View) isoDigest(n pickle.ID) []byte {
	st := v.state()
	size := v.Opt.Algo.Size()
	if s := st.isoGet(n); s > 0 {
		return st.isoDig.get(s, size)
	}
	if st.active == nil {
		st.active = map[pickle.ID]bool{}
	}
	if st.active[n] || st.err != nil {
		return []byte("\x00cycle")
	}
	if st.depth >= MaxIsolationDepth {
		st.err = fmt.Errorf("sets or dict keys of mutable objects nest deeper than %d levels (pk's limit)", MaxIsolationDepth)
		return []byte("\x00deep")
	}
	st.depth++
	st.active[n] = true
	e := newEncoder(v, true)
	e.node(n)
	e.run()
	e.release()
	delete(st.active, n)
	st.depth--
	var s int32
	if e.wrote {
		e.flush()
		s = st.isoDig.addSum(size, e.h)
	} else { // all of it is still in the buffer: hash it in one go
		s = st.isoDig.add(v.Opt.Algo, e.buf)
	}
	st.isoSet(n, s, v.nsyn)
	st.encPool = append(st.encPool, e)
	return st.isoDig.get(s, size)
}

// isoGet is n's isoSlot (0: none yet).
func (st *encState) isoGet(n pickle.ID) int32 {
	if st.isoSlot != nil {
		return st.isoSlot[n]
	}
	return st.isoMap[n]
}

// isoSet sets n's isoSlot: in a map while few nodes have one (pk canon's
// class digests: a few thousand of a million nodes), in a table by node ID
// (4 bytes a node) once they pass one node in 64.
func (st *encState) isoSet(n pickle.ID, s int32, nsyn int32) {
	if st.isoSlot == nil && (len(st.isoMap) >= 64+int(nsyn)/64 || ordDense) {
		st.isoSlot = make([]int32, nsyn)
		for x, s := range st.isoMap {
			st.isoSlot[x] = s
		}
		st.isoMap = nil
	}
	if st.isoSlot != nil {
		st.isoSlot[n] = s
		return
	}
	if st.isoMap == nil {
		st.isoMap = map[pickle.ID]int32{}
	}
	st.isoMap[n] = s
}

// ---- the traversal ----

// frame is a node whose children are being embedded: encoder.chbuf from lo
// to where the frame above begins (the top frame: to the end of chbuf,
// each node's children being carved at the end), the next one at next.
// Frames are 8 bytes and hold no pointer (12 with the end kept too), and
// a frame goes when its last child is entered (run): a million levels of
// nesting through last children hold one frame, and a million levels
// through other children 8 MB of frames and a copy of their children in
// chbuf (nest_reduce's 3 million frames held 36 MB as the stack grew, and
// their children 16 MB).
type frame struct {
	lo, next int32
}

type encoder struct {
	v    *View
	h    hash.Hash
	buf  []byte
	iso  bool
	ordS []int32 // main encoder: 1 + ordinal, by node ID (identity nodes only: encState.pslot)
	// or, in a view of slotTabFrom nodes or more (sparseOrds), a bit a
	// node reached (ordBits) and the ordinals of those that may be reached
	// again (ordTab: the nodes the memo or a DUP shares, and the view's
	// own); ordMiss: another was reached again, whose ordinal was not
	// kept (Digest then encodes the stream again with ordS)
	ordBits []uint64
	ordTab  *slotTab
	ordMiss bool
	ordM    map[pickle.ID]int32
	gen     uint32 // isolated encoder using encState.ordGen/ordVal (0: not)
	wrote   bool   // some of the encoding went to h (else all is in buf)
	next    int32
	stack   []frame
	seen    int64
	// chbuf holds the child lists the encoder builds (sorted dict entries,
	// call parts, operation arguments), carved and released in stack order.
	chbuf []pickle.ID
	// opsBuf is the operations of the node being entered (their arguments
	// are copied to chbuf before the next node is).
	opsBuf []op
	// the canon sink's encoder of a subtree (fold.go): it keeps its bytes
	// (no flush), and gives up (refused) at an identity node that more
	// than one node refers to (shared, by node ID)
	keep    bool
	shared  []uint8
	refused bool
	side    bool    // each pure tuple followed by its side items (fold.go: appendItems)
	effects bool    // it encoded a call, an operation or a global
	globs   []int64 // offsets of the globals it encoded
}

func newEncoder(v *View, iso bool) *encoder {
	var e *encoder
	if st := v.state(); iso && len(st.encPool) > 0 {
		// reuse a finished isolated encoder: its buffers and hash
		e = st.encPool[len(st.encPool)-1]
		st.encPool = st.encPool[:len(st.encPool)-1]
		e.h.Reset()
		m := e.ordM
		if len(m) > 256 {
			m = nil // clearing a large map costs its size on every reuse
		}
		clear(m)
		*e = encoder{v: v, h: e.h, iso: true, buf: e.buf[:0], stack: e.stack[:0], chbuf: e.chbuf[:0], ordM: m, opsBuf: e.opsBuf[:0]}
	} else if s := v.scr; s != nil && !iso {
		if s.h == nil {
			s.h = newBGHash(v.Opt.Algo.New())
		}
		s.h.Reset()
		s.enc = encoder{v: v, h: s.h, buf: s.buf[:0]}
		e = &s.enc
	} else if iso {
		e = &encoder{v: v, h: v.Opt.Algo.New(), iso: true}
	} else {
		e = &encoder{v: v, h: newBGHash(v.Opt.Algo.New())}
	}
	if iso {
		st := v.state()
		if !st.genBusy {
			switch {
			case st.ordGen == nil && st.ordTab == nil && !ordDense && v.nsyn >= ordTabFrom:
				st.ordTab, st.gen = newOrdTab(), 0
			case st.ordGen == nil && st.ordTab == nil:
				st.ordGen, st.ordVal, st.gen = make([]uint32, v.nsyn), make([]int32, v.nsyn), 0
			case st.gen == math.MaxUint32 && st.ordGen != nil:
				st.ordGen, st.ordVal, st.gen = make([]uint32, v.nsyn), make([]int32, v.nsyn), 0
			case st.gen == math.MaxUint32:
				st.ordTab.reset()
				st.gen = 0
			}
			st.gen++
			st.genBusy = true
			e.gen = st.gen
		} else if e.ordM == nil {
			e.ordM = map[pickle.ID]int32{}
		}
	} else {
		st := v.state()
		if st.mains > 0 && st.pslot != nil {
			// a second encoding of the stream: forget the ordinals
			for i, p := range st.pure {
				if p == 2 {
					st.pslot[i] = 0
				}
			}
		}
		st.mains++
		if !v.sparseOrds(e) {
			e.ordS = st.slots()
		}
	}
	return e
}

// sparseOrds sets up main encoder e's ordinals apart from pslot (ordBits,
// ordTab) in a view of slotTabFrom nodes or more, unless the nodes that
// may be reached twice are so many that the table would take more than
// half of pslot's 4 bytes a node (or Digest met another: denseOrds). It
// reports whether it did.
func (v *View) sparseOrds(e *encoder) bool {
	n := int(v.nsyn)
	if n < slotTabFrom || v.denseOrds || v.cls == nil {
		return false
	}
	// (the view's own nodes, and the stream's the memo or a DUP shares
	// but str, bytes and scalars, which are pure: the table's bound)
	shared := n - int(v.base)
	for id := pickle.ID(0); id < v.base; id++ {
		if v.s.Flags(id)&pickle.FlagShared != 0 && (v.cls[id]&classMuts != 0 || !scalarClass[v.cls[id]&classKind]) {
			shared++
		}
	}
	if 32*shared/3+n/8 > 2*n {
		return false
	}
	e.ordBits = make([]uint64, (n+63)/64)
	e.ordTab = newSlotTab(shared, shared)
	return true
}

// ordForget (tests) keeps no ordinal in ordTab: every node reached twice
// is a miss, and Digest encodes the stream again with pslot.
var ordForget bool

// scalarClass: the kinds of nodeClass that are pure without operations.
var scalarClass = [32]bool{pickle.KindNone: true, pickle.KindBool: true, pickle.KindInt: true, pickle.KindFloat: true, pickle.KindStr: true, pickle.KindBytes: true}

// setOrdinal sets main encoder e's ordinal of n (not isolated).
func (e *encoder) setOrdinal(n pickle.ID, o int32) {
	if e.ordBits == nil {
		e.ordS[n] = o + 1
		return
	}
	e.ordBits[n>>6] |= 1 << (uint(n) & 63)
	if (n >= e.v.base || e.v.s.Flags(n)&pickle.FlagShared != 0) && !ordForget {
		if !e.ordTab.set(n, o) {
			e.ordMiss = true // (not reached: the table holds them all)
		}
	}
}

// release gives the shared ordinal table back (isolated encoders).
func (e *encoder) release() {
	if e.gen != 0 {
		e.v.enc.genBusy = false
		e.gen = 0
	}
}

func (e *encoder) flush() {
	if len(e.buf) > 0 {
		e.out(e.buf)
		e.buf = e.buf[:0]
	}
}

// out writes b to the encoder's hash, counting it against the stream's
// bound (MaxExpansion); what is in buf must have gone first.
func (e *encoder) out(b []byte) {
	if !e.iso {
		st := e.v.state()
		st.written += int64(len(b))
		if st.limit == 0 {
			st.limit = MaxExpansion*e.v.s.Length() + MaxExpansionSlack
		}
		if st.written > st.limit && st.err == nil {
			st.err = errExpansion
		}
	}
	e.wrote = true
	e.h.Write(b)
}

func (e *encoder) sum() []byte {
	e.flush()
	return e.h.Sum(nil)
}

func (e *encoder) write(b ...byte) { e.buf = append(e.buf, b...) }

func (e *encoder) ordinal(n pickle.ID) (int32, bool) {
	if e.gen != 0 {
		st := e.v.enc
		if st.ordGen == nil {
			return st.ordTab.get(n, e.gen)
		}
		return st.ordVal[n], st.ordGen[n] == e.gen
	}
	if e.iso {
		o, ok := e.ordM[n]
		return o, ok
	}
	if e.ordBits == nil {
		o := e.ordS[n]
		return o - 1, o > 0
	}
	if e.ordBits[n>>6]&(1<<(uint(n)&63)) == 0 {
		return 0, false
	}
	return e.ordAgain(n), true
}

// ordAgain is the ordinal of n, reached before, in a main encoder that
// keeps them apart (sparseOrds).
func (e *encoder) ordAgain(n pickle.ID) int32 {
	o, ok := e.ordTab.get(n)
	if !ok {
		e.ordMiss = true // (the encoding is made again)
	}
	return o
}

func (e *encoder) assign(n pickle.ID) {
	if e.gen != 0 {
		if st := e.v.enc; st.ordGen != nil {
			st.ordGen[n], st.ordVal[n] = e.gen, e.next
		} else {
			e.ordSet(n, e.next)
		}
	} else if e.iso {
		e.ordM[n] = e.next
	} else if e.ordBits == nil {
		e.ordS[n] = e.next + 1
	} else {
		e.setOrdinal(n, e.next)
	}
	e.next++
}

// node embeds n: a pure value, a back-reference, or a first visit (which
// pushes a frame of children).
func (e *encoder) node(n pickle.ID) {
	v := e.v
	if len(e.buf) > 32<<10 && !e.keep {
		e.flush()
	}
	if n <= noEnt {
		if n != noEnt {
			v.Opt.fold.emitEnt(e, n) // an entry of a folded run of a dict's entries
		}
		return
	}
	n = v.res(n)
	if n >= 0 && n < v.base && v.kind(n) == pickle.KindFolded {
		// a run the canon sink encoded while the stream was read
		v.Opt.fold.emit(e, v.s, n)
		e.effects = e.effects || v.s.Flags(n)&pickle.FlagFoldEffects != 0
		return
	}
	if v.isPureDigest(n) {
		e.buf = v.appendPure(e.buf, n)
		if e.side && !e.refused {
			var ok bool
			e.buf, ok = v.Opt.fold.appendItems(v, e.buf, n)
			e.refused = !ok
		}
		if e.keep && v.leaf(n) != 1 || e.keep && v.kind(n) == pickle.KindGlobal {
			if g := v.Opt.fold.pureGlobals(v, n, e.globs[len(e.globs):]); len(g) > 0 {
				e.globs = append(e.globs, g...)
				e.effects = true
			}
		}
		return
	}
	if e.keep {
		switch {
		case v.kind(n) == pickle.KindCall && v.opOf(n) == pickle.NEWOBJ_EX:
			e.refused = true // (copyKwargs gives it a dict of its own at STOP)
			return
		case v.kind(n) == pickle.KindCall, v.kind(n) == pickle.KindGlobal, v.nmuts(n) > 0:
			e.effects = true
		}
	}
	// a record the store shares between empty containers that each name
	// once (pickle.Keep.OneEmpty): an object of its own at every visit
	fresh := n < v.base && v.s.SharedEmpty(n)
	if o, ok := e.ordinal(n); ok && !fresh {
		e.refused = e.keep
		e.write('R')
		e.buf = appendUvarint(e.buf, uint64(o))
		return
	}
	if v.specialOf(n) == 'J' {
		e.foreign(n) // a joblib object array: the nested pickle's array, inline
		return
	}
	if e.shared != nil && int(n) < len(e.shared) && e.shared[n] > 1 {
		e.refused = true
		return
	}
	if fresh {
		e.next++ // (its ordinal, which nothing reads)
	} else {
		e.assign(n)
	}
	e.seen++
	if e.iso {
		st := v.state()
		st.budget--
		if st.budget < 0 && st.err == nil {
			st.err = budgetError(e.v.nsyn)
		}
	}
	e.write('N')
	ops := v.appendOps(e.opsBuf, n)
	if ops != nil {
		e.opsBuf = ops[:0]
	}
	var ch []pickle.ID
	base := len(e.chbuf)
	carved := false
	kind := v.kind(n)
	switch {
	case v.specialOf(n) == 't':
		e.write('k')
	case v.specialOf(n) == 'A':
		ch = e.encodeArray(n)
	case v.specialOf(n) == 'S':
		e.encodeStorage(n)
	case kind == pickle.KindList, kind == pickle.KindTuple:
		if kind == pickle.KindList {
			e.write('l')
		} else {
			e.write('T')
		}
		ch = v.items(n)
		count := len(ch)
		if v.flags(n)&pickle.FlagHasFolded != 0 {
			s, i := v.at(n)
			count = s.ItemCount(i)
		}
		e.buf = appendUvarint(e.buf, uint64(count))
	case kind == pickle.KindDict:
		sc := v.getScratch()
		ents := v.dictEntries(n, sc)
		e.write('d')
		e.buf = appendUvarint(e.buf, uint64(len(ents)))
		e.chbuf = grow.Room(e.chbuf, 2*len(ents))
		for _, k := range ents {
			e.chbuf = append(e.chbuf, k.node, k.val)
		}
		ch, carved = e.chbuf[base:], true
		v.putScratch(sc)
	case kind == pickle.KindSet, kind == pickle.KindFrozenSet:
		if kind == pickle.KindSet {
			e.write('e')
		} else {
			e.write('F')
		}
		ch = v.setItems(v.items(n))
		e.buf = appendUvarint(e.buf, uint64(len(ch)))
	case kind == pickle.KindByteArray:
		e.write('a')
		e.buf = v.appendPayload(e.buf, 'y', 'Y', n)
	case kind == pickle.KindCall:
		form, kw := callForm(v, n)
		e.write('C', form)
		e.chbuf = append(grow.Room(e.chbuf, 3), v.fn(n), v.argsOf(n))
		if kw {
			e.chbuf = append(e.chbuf, v.kwargsOf(n))
		}
		ch, carved = e.chbuf[base:], true
	case kind == pickle.KindPersID:
		e.write('p')
		if v.nitems(n) > 0 {
			e.write('1')
			ch = v.items(n)
		} else {
			e.write('0')
			e.buf = appendStr(e.buf, v.text(n))
		}
	case kind == pickle.KindBuffer:
		e.write('B')
		e.buf = appendUvarint(e.buf, uint64(v.ival(n)))
		if v.flags(n)&pickle.FlagReadOnly != 0 {
			e.write(1)
		} else {
			e.write(0)
		}
	case kind == pickle.KindGlobal && v.flags(n)&pickle.FlagDynamic != 0:
		e.write('D')
		ch = v.items(n)
	default: // a value kind that has operations applied to it
		e.write('M')
		e.buf = v.appendScalar(e.buf, n)
	}
	e.buf = appendUvarint(e.buf, uint64(len(ops)))
	if len(ops) > 0 {
		if !carved {
			e.chbuf = append(grow.Room(e.chbuf, len(ch)), ch...)
			carved = true
		}
		for _, o := range ops {
			e.write(o.tag)
			e.buf = appendUvarint(e.buf, uint64(len(o.args)))
			if o.name != "" {
				e.buf = appendStr(e.buf, o.name)
			}
			e.chbuf = append(grow.Room(e.chbuf, len(o.args)), o.args...)
		}
		ch = e.chbuf[base:]
	}
	if len(ch) == 0 {
		e.chbuf = e.chbuf[:base]
		return
	}
	if !carved {
		e.chbuf = append(grow.Room(e.chbuf, len(ch)), ch...)
	}
	if len(e.chbuf) > math.MaxInt32 {
		if st := v.state(); st.err == nil {
			st.err = fmt.Errorf("canonical encoding holds more than %d children of open containers at once (pk's bound)", math.MaxInt32)
		}
		e.chbuf = e.chbuf[:base]
		return
	}
	e.stack = append(grow.Room(e.stack, 1), frame{lo: int32(base), next: int32(base)})
}

// callForm says how a call is encoded: 'c' func(*args), 'w' cls.__new__(cls,
// *args), 'W' cls.__new__(cls, *args, **kwargs), 'o' INST/OBJ without
// arguments (cls.__new__(cls) for a class).
func callForm(v *View, n pickle.ID) (byte, bool) {
	switch v.opOf(n) {
	case pickle.NEWOBJ:
		return 'w', false
	case pickle.NEWOBJ_EX:
		kw := v.res(v.kwargsOf(n))
		if kw >= 0 && v.kind(kw) == pickle.KindDict && v.nitems(kw) == 0 && len(v.ops(kw)) == 0 {
			return 'w', false
		}
		return 'W', true
	case pickle.INST, pickle.OBJ:
		if a := v.res(v.argsOf(n)); a >= 0 && v.nitems(a) == 0 {
			return 'o', false
		}
	}
	return 'c', false
}

func (e *encoder) run() {
	st := e.v.state()
	for len(e.stack) > 0 {
		if st.err != nil || e.refused {
			return // refused (a bound of the form): the digest is not used
		}
		// (a frame has a child left: node pushes none without children)
		f := &e.stack[len(e.stack)-1]
		c := e.chbuf[f.next]
		if f.next++; int(f.next) == len(e.chbuf) { // (the top frame ends there)
			// its last child: the frame goes before the child is entered,
			// not after, which changes nothing of the order; a nesting
			// through last children (a call's arguments, a BUILD's state,
			// a dict's value: most deep nestings) then holds one frame and
			// its children, not one a level
			e.chbuf = e.chbuf[:f.lo]
			e.stack = e.stack[:len(e.stack)-1]
		}
		e.node(c)
	}
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
