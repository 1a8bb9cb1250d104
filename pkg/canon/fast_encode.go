package canon

// Pass 2 of the streaming hash (see fast.go): every value's canonical
// encoding, built in an arena as its container consumes it.

import (
	"bytes"
	"encoding/binary"
	"hash"
	"io"
	"math"
	"math/bits"
	"os"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/zeebo/xxh3"
)

// ---- pass 2 ----

// kinds of values on the fast stack
const (
	fkNone uint8 = iota
	fkInt
	fkStr
	fkBytes
	fkGlobal   // 'g'/'G' module qualname
	fkPureComp // pure tuple or frozenset: 'H' + digest
	// pure, but a key equal to others only with numeric unification (a
	// tuple holding a bool or a float, at any depth): not a key here
	fkPureCompNum
	fkBool  // same
	fkFloat // same
	fkIdent // a final identity value (bytearray, impure tuple, sealed container)
	fkList  // containers being filled
	fkDict
	fkSet
	fkCall // a call result (REDUCE, NEWOBJ) taking operations
)

func fkPure(k uint8) bool { return k <= fkFloat }

// fkKey: may be a dict key or set item on the fast path (pure, and equal
// only when the encodings are equal).
func fkKey(k uint8) bool { return k <= fkPureComp }

type fslot struct {
	off  int   // start of the value's bytes in the arena
	r0   int32 // the records made since the value was started are recs[r0:]
	kind uint8
	c    int32 // containers: index in fastEnc.conts
	op   int64 // offset of the first opcode that builds the value
	// the chain of records in the value's bytes that no other record holds
	// (its own, once sealed), -1 when none
	kh, kt int32
}

type fcont struct {
	drop   int32 // a value of a dict result, dropped: 1 + its index in fastEnc.drops
	root   bool  // the dict result (or the call result's state), whose dropped values are read again at the end
	holds  bool  // its encoding holds placeholders of dropped values: only emitTop may seal it
	form   byte  // calls: 'c' REDUCE, 'w' NEWOBJ
	ops    []fop // calls: operations (BUILD, APPEND(S), SETITEM(S), ADDITEMS)
	n      int64
	bounds []int   // dict: key and value starts; set: item starts (relative to the region)
	vk     []int32 // dict: the record chain (first, last) of each value
	stream bool    // the list result, whose items go to the hash at once
}

// fop is one canonical operation on a call result: tag and argument count
// (consecutive appends, setitems and additems merged, as View.ops does).
type fop struct {
	tag byte
	n   int
}

// dropRec is a list value of a dict result whose encoding pass 2 dropped:
// the bytes that build it and what reading them again needs.
type dropRec struct {
	start, end int64 // from its EMPTY_LIST to where the next key starts
	memo0      int64 // the memo's size at start
	n          int64 // its items
}

type memoEnt struct {
	kind uint8
	enc  []byte
}

// memoTab holds the live memo entries of pass 2: a slice for the indices
// a pickler writes (dense, from 0), a map for those far beyond (a hostile
// or odd file's sparse PUTs). A table's rows read their shared strings
// and keys back with a GET each: a slice index, not a map lookup, into a
// slice of 4 bytes an index (so that the indices a table's rows read
// stay in the cache) that says where the entry is in ents.
//
// A MEMOIZE stream whose pass 2 is split among goroutines (fast_par.go)
// keeps its entries in a table made once (fixed): dense covers every live
// index, each with its place in ents, whose entries are made up front as
// identity values (a GET of one not yet written gives up, as of one never
// written), so that goroutines write their own entries and read others'
// without a slice growing under them.
type memoTab struct {
	dense  []int32   // 1 + the place in ents of the entry of each index, 0: not written
	ents   []memoEnt // the entries of dense
	n      int       // entries written to dense: it grows only to twice that (plus 1024), so sparse indices cost no more than the map
	sparse map[int64]memoEnt
	fixed  bool
}

// fixedMemo is the fixed table of the live indices (pass 1's bitset)
// below nmemo, or nil when its dense slice would take more than limit
// bytes and more than the one that grows would (twice the entries, plus
// 1024).
func fixedMemo(live []uint64, nmemo, limit int64) *memoTab {
	top, n := int64(-1), 0 // the last live index, the live indices
	for w := 0; w < len(live) && int64(w)<<6 < nmemo; w++ {
		b := live[w]
		if lim := nmemo - int64(w)<<6; lim < 64 {
			b &= 1<<lim - 1 // (no index from nmemo on is written)
		}
		if b != 0 {
			n += bits.OnesCount64(b)
			top = int64(w)<<6 + 63 - int64(bits.LeadingZeros64(b))
		}
	}
	if 4*(top+1) > limit && top+1 > 2*int64(n)+1024 || n >= math.MaxInt32 {
		return nil
	}
	m := &memoTab{dense: make([]int32, top+1), ents: make([]memoEnt, n), fixed: true}
	k := int32(0)
	for i := range m.dense {
		if live[i>>6]&(1<<(i&63)) != 0 {
			m.ents[k].kind = fkIdent
			k++
			m.dense[i] = k
		}
	}
	return m
}

// get returns entry i, nil when it was not written.
func (m *memoTab) get(i int64) *memoEnt {
	if uint64(i) < uint64(len(m.dense)) {
		if j := m.dense[i]; j > 0 {
			return &m.ents[j-1]
		}
	}
	if m.sparse == nil {
		return nil
	}
	return m.getSparse(i)
}

func (m *memoTab) getSparse(i int64) *memoEnt {
	if x, ok := m.sparse[i]; ok {
		return &x
	}
	return nil
}

func (m *memoTab) put(i int64, x memoEnt) {
	if m.fixed {
		// (pass 2 writes live indices only, MEMOIZE each once)
		if uint64(i) < uint64(len(m.dense)) && m.dense[i] > 0 {
			m.ents[m.dense[i]-1] = x
		}
		return
	}
	if i >= 0 && uint64(i) >= uint64(len(m.dense)) && i < int64(2*m.n+1024) {
		m.dense = append(m.dense, make([]int32, int(i)+1-len(m.dense))...)
		m.dense = m.dense[:cap(m.dense)]
	}
	if uint64(i) < uint64(len(m.dense)) && (m.dense[i] > 0 || len(m.ents) < math.MaxInt32) {
		if j := m.dense[i]; j > 0 {
			m.ents[j-1] = x
		} else {
			m.ents = append(m.ents, x)
			m.dense[i] = int32(len(m.ents))
			m.n++
		}
		if m.sparse != nil {
			delete(m.sparse, i)
		}
		return
	}
	if m.sparse == nil {
		m.sparse = map[int64]memoEnt{}
	}
	m.sparse[i] = x
}

type fastEnc struct {
	opt      Options
	tsums    tupleSums // digests of small pure tuples (fast_sums.go)
	hashOnly bool      // pk hash's pass, no hooks (pk diff's item scan keeps its dict results of objects)
	scan     *fastScanResult
	arena    []byte
	stack    []fslot
	marks    []int
	conts    []fcont
	free     []int32
	memo     *memoTab
	nmemo    int64
	lists    int32
	proto    int
	opOff    int64   // offset of the opcode being run
	marks0   []int64 // offsets of the open MARKs
	lastMark int64   // offset of the MARK toMark popped
	drops    []dropRec
	// allowRoot: sealing a container that holds placeholders is allowed
	// (emitTop, and the BUILD of the call result's state)
	allowRoot bool
	replayF   *os.File // the file, open while dropped values are read again
	path      string
	size      int64
	// sealed containers (fast_seal.go): their records, headers and the
	// entries of reordered dicts; the emit stack
	recs   recBlocks
	hdrs   []byte
	ents   []fent
	estack []eframe
	encBuf []byte
	// the encoding of the empty tuple; the callable of the last REDUCE,
	// which no rule reads (callOK)
	emptyTuple []byte
	lastCall   []byte
	callOK     bool
	// calls or globals were met: then the result must be all that is left
	// at STOP (anything else would hold an effect of its own)
	logged bool

	h     *countHash // the stream digest
	out   []byte     // pending bytes for h
	bg    *bgHash    // h's
	hooks fastHooks  // pass 2's (replayAt)

	// Lazy digests (lazy: pk hash's pass, no hooks): a pure tuple's 'H'
	// digest is a placeholder in the arena (pend: its position there and
	// its body in pendBody, in arena order) until the tuple is either
	// streamed, then written by the hashing goroutine (outSums: positions
	// in out, bodies in outBody; flush), or read by anything else, then
	// written here first (settle).
	lazy              bool
	pend, outSums     []lazySum
	pendBody, outBody []byte

	// a worker of a split pass (fast_par.go): the run, its segment, the
	// memo indices it may read without waiting (below memoOK, and its own
	// segment's, own0 to own1) and what made its output fail
	par          *parRun
	seg          int
	memoOK, own0 int64
	own1         int64
	segErr       error
	parFile      *os.File // the file the split read (the rest of the pass reads it)

	// sealing scratch
	tmp  []byte
	offs []int
	// the body of the container being sealed, in canonical order
	pieces [][]byte
	// the last dict's key bytes and order (records share their keys)
	lastKeys []byte
	lastOffs []int
	lastPerm []int
	sortKeys [][]byte
}

func (e *fastEnc) write(b []byte) {
	if len(b) >= 64<<10 && e.par == nil {
		e.flush()
		e.h.Write(b)
		return
	}
	e.out = append(e.out, b...)
	if len(e.out) >= 64<<10 {
		e.flush()
	}
}

// flush gives the pending bytes to the hash, with their lazy digests.
func (e *fastEnc) flush() {
	if e.par != nil {
		// a worker's output is its segment's: held up to segCap
		if len(e.out) >= segCap {
			e.segFlush()
		}
		return
	}
	if len(e.outSums) == 0 {
		e.h.Write(e.out)
	} else {
		e.h.n += int64(len(e.out))
		e.bg.writeSums(e.out, e.outSums, e.outBody)
		e.outSums, e.outBody = e.outSums[:0], e.outBody[:0]
	}
	e.out = e.out[:0]
}

// settle writes the digests of the pending tuples into their placeholders
// (a value about to be read other than by streaming it).
func (e *fastEnc) settle() {
	putSums(e.opt.Algo, e.arena, e.pend, e.pendBody)
	e.pend, e.pendBody = e.pend[:0], e.pendBody[:0]
}

// settleFrom settles the pending tuples when one lies at or after the
// arena offset off.
func (e *fastEnc) settleFrom(off int) {
	if n := len(e.pend); n > 0 && e.pend[n-1].pos >= off {
		e.settle()
	}
}

// keepsLazy: the opcodes that read no bytes of a value on the stack (or,
// TUPLE, APPEND(S), MEMOIZE and PUT: settle themselves what they read).
var keepsLazy = func() (t [256]bool) {
	for _, c := range []pickle.Opcode{pickle.PROTO, pickle.FRAME, pickle.MARK, pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE,
		pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.LONG, pickle.LONG1, pickle.LONG4,
		pickle.FLOAT, pickle.BINFLOAT, pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
		pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8, pickle.EMPTY_TUPLE, pickle.EMPTY_LIST, pickle.EMPTY_DICT,
		pickle.GET, pickle.BINGET, pickle.LONG_BINGET, pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3,
		pickle.APPEND, pickle.APPENDS, pickle.MEMOIZE, pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT} {
		t[c] = true
	}
	return t
}()

// fastHooks see every opcode of pass 2 around its step (pk diff's item
// tracker); after is not called for STOP.
type fastHooks interface {
	before(e *fastEnc, o *pickle.Op) error
	after(e *fastEnc, o *pickle.Op)
	// dropsValues reports whether pass 2 may drop the list values of a
	// dict result (scan.rootVals: read again from the file where their
	// encodings are needed) as pk hash's does
	dropsValues() bool
	// replayedSum, when it returns a function for the dropped value of
	// index i (in drops), has the digest's replay of that value hash its
	// encoding with XXH3-128 too and gives it the sum (pk diff's record
	// of the entry, itemTracker.dropSum), so that the value is encoded
	// again once, not twice
	replayedSum(i int) func(xxh3.Uint128)
	// end runs after the digest, before pass 2 returns it
	end(e *fastEnc) error
}

// droppedAt is the record of the dropped value in stack slot i, set in the
// dict result by the SETITEM(S) being read: its items counted, its byte
// range ending where the next key starts, or at this opcode.
func (e *fastEnc) droppedAt(i int) dropRec {
	s := e.stack[i]
	d := e.drops[e.conts[s.c].drop-1]
	d.n, d.end = e.conts[s.c].n, e.opOff
	if i+1 < len(e.stack) {
		d.end = e.stack[i+1].op
	}
	return d
}

// Bounds of pass 2 (beyond them the graph path takes over, with its own
// bounds): the arena holds at most arenaExpansion times the bytes read plus
// arenaSlack, and a memo entry read back by GET encodes in at most
// maxMemoEnc bytes (a large number shared many times would otherwise fill
// the arena with copies).
const (
	arenaExpansion = 8
	arenaSlack     = 64 << 20
	maxMemoEnc     = 1 << 10
)

// countHash counts what it is given (MaxExpansion).
type countHash struct {
	hash.Hash
	n int64
}

func (c *countHash) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.Hash.Write(b)
}

// fastEncode runs pass 2 and returns the stream digest; hooks may be nil.
func fastEncode(path string, size int64, opt Options, scan *fastScanResult, hooks fastHooks) ([]byte, error) {
	f, size2, done, err := openBare(path)
	if err != nil {
		return nil, err
	}
	defer done()
	if size2 != size {
		return nil, errSlow
	}
	return fastEncodeFrom(f, size, path, done, opt, scan, hooks)
}

// fastEncodeFrom is pass 2 over f (size bytes, -1: not known), named path;
// done reports an error of f's source at the end.
func fastEncodeFrom(f io.Reader, size int64, path string, done func() error, opt Options, scan *fastScanResult, hooks fastHooks) ([]byte, error) {
	rd := pickle.NewReader(f, size, path)
	rd.NewHash = opt.Algo.New
	rd.Borrow = true
	if size < 0 || hooks != nil && !hooks.dropsValues() {
		// (no seeking in a compressed stream; a focus's items are recorded
		// from their encodings)
		scan.rootVals = nil
	}
	bg := newBGHash(opt.Algo.New())
	bg.algo = opt.Algo
	e := &fastEnc{opt: opt, scan: scan, memo: &memoTab{}, h: &countHash{Hash: bg}, bg: bg, path: path, size: size, hashOnly: hooks == nil, lazy: hooks == nil, hooks: hooks}
	defer e.closeReplay()
	e.stack = make([]fslot, 0, scan.maxStack+1)
	e.conts, e.free = make([]fcont, 0, scan.maxStack+1), make([]int32, 0, scan.maxStack+1)
	e.marks, e.marks0 = make([]int, 0, scan.maxMarks+1), make([]int64, 0, scan.maxMarks+1)
	e.h.Write([]byte(opt.header()))
	e.out = append(e.out, 'r')
	batch := make([]pickle.Op, fastBatch)
	hot := hooks == nil && !noHot
	// split: pass 2 stops at the first segment mark and hands the
	// segments to workers (fast_par.go)
	split := e.parPlan(size, hot)
	for {
		if split && rd.Offset() == scan.segs[0].off {
			split = false
			r, err := e.parallel(rd)
			if err != nil {
				return nil, err
			}
			rd = r
		}
		// the opcodes whole in the read buffer (never STOP): pk hash's
		// decoded in place (fast_hot.go), else a batch at a time; then one
		// the ordinary way
		if hot {
			if win, th := rd.SkimWindow(); len(win) > 0 {
				if split {
					win = win[:min(int64(len(win)), scan.segs[0].off-rd.Offset())]
				}
				at, err := e.runHot(win, rd.Offset(), th)
				if err != nil {
					return nil, err
				}
				rd.SkimDone(at)
				if at > 0 {
					continue
				}
			}
		}
		if !split {
			// (not while split: NextBuffered may read past the mark)
			if n := rd.NextBuffered(batch); n > 0 {
				if onBatch != nil {
					onBatch(n)
				}
				if _, err := e.run(batch[:n], hooks); err != nil {
					return nil, err
				}
				continue
			}
		}
		if err := rd.NextInto(&batch[0]); err != nil {
			return nil, errSlow
		}
		stop, err := e.run(batch[:1], hooks)
		if err != nil {
			return nil, err
		}
		if stop {
			if !rd.AtEOF() || done() != nil {
				return nil, errSlow
			}
			e.flush()
			if e.h.n > MaxExpansion*rd.Offset()+MaxExpansionSlack {
				return nil, errSlow // the graph path refuses it (errExpansion)
			}
			if hooks != nil {
				if err := hooks.end(e); err != nil {
					return nil, err
				}
			}
			return e.h.Sum(nil), nil
		}
	}
}

// onBatch, when set, is told how many opcodes pass 2 decoded into a batch
// (tests: what runHot left to the batches).
var onBatch func(n int)

// fastBatch is how many opcodes pass 2 decodes from the read buffer at once.
const fastBatch = 256

// run steps the opcodes ops, each with the hooks around it, and checks
// the bound on what pass 2 holds against the bytes read up to the end of
// ops, once a batch: one opcode adds at most a few of its own bytes or one
// memo entry (maxMemoEnc), so a batch of fastBatch opcodes whole in the
// read buffer passes the bound by a fixed amount at most; stop reports
// STOP (the last of ops).
func (e *fastEnc) run(ops []pickle.Op, hooks fastHooks) (bool, error) {
	stop := false
	if hooks == nil {
		for i := range ops {
			o := &ops[i]
			e.opOff = o.Offset
			s, err := e.step(o)
			if err != nil {
				return false, err
			}
			stop = s
		}
	} else {
		for i := range ops {
			o := &ops[i]
			e.opOff = o.Offset // (the hooks' too: droppedAt)
			if err := hooks.before(e, o); err != nil {
				return false, errSlow
			}
			s, err := e.step(o)
			if err != nil {
				return false, err
			}
			if stop = s; !stop {
				hooks.after(e, o)
			}
		}
	}
	if o := &ops[len(ops)-1]; e.held() > arenaExpansion*(o.Offset+o.Len)+arenaSlack {
		return false, errSlow
	}
	return stop, nil
}

// held is the memory pass 2 holds for encodings: the arena, the records
// of sealed containers, their headers and entries.
func (e *fastEnc) held() int64 {
	// (the stacks too: a million levels of nested calls hold nothing
	// sealed until the innermost closes, and their slots were 244 MB of
	// heap that the bound did not count: cost shape nest_reduce)
	const ss, cs, fs = int(unsafe.Sizeof(fslot{})), int(unsafe.Sizeof(fcont{})), int(unsafe.Sizeof(eframe{}))
	return int64(len(e.arena) + len(e.hdrs) + 48*int(e.recs.n) + 40*len(e.ents) + len(e.pendBody) +
		ss*cap(e.stack) + cs*cap(e.conts) + fs*cap(e.estack) + 8*(cap(e.marks)+cap(e.marks0)))
}

func (e *fastEnc) fence() int {
	if len(e.marks) == 0 {
		return 0
	}
	return e.marks[len(e.marks)-1]
}

func (e *fastEnc) toMark() (int, error) {
	if len(e.marks) == 0 {
		return 0, errSlow
	}
	p := e.marks[len(e.marks)-1]
	e.lastMark = e.marks0[len(e.marks0)-1]
	e.marks = e.marks[:len(e.marks)-1]
	e.marks0 = e.marks0[:len(e.marks0)-1]
	if p > len(e.stack) {
		return 0, errSlow
	}
	return p, nil
}

// push starts a value whose bytes the caller appends to the arena next.
func (e *fastEnc) push(kind uint8) {
	e.pushSlot(len(e.arena), e.recs.n, kind, -1, e.opOff, -1, -1)
}

// pushSlot appends a slot with the given fields, set one by one in place (a
// slot built whole and copied in costs a stalled copy on every opcode).
// (Every field is set: the slot is not zeroed first.)
func (e *fastEnc) pushSlot(off int, r0 int32, kind uint8, c int32, op int64, kh, kt int32) {
	n := len(e.stack)
	if n == cap(e.stack) {
		e.stack = grow.Push(e.stack, fslot{})
	}
	e.stack = e.stack[:n+1]
	s := &e.stack[n]
	s.off, s.r0, s.kind, s.c, s.op, s.kh, s.kt = off, r0, kind, c, op, kh, kt
}

func (e *fastEnc) newCont(kind uint8) int32 {
	var c int32
	if n := len(e.free); n > 0 {
		c = e.free[n-1]
		e.free = e.free[:n-1]
		// reset in place (every field), keeping the slices' storage
		x := &e.conts[c]
		x.drop, x.root, x.holds, x.form, x.n, x.stream = 0, false, false, 0, 0, false
		x.ops, x.bounds, x.vk = x.ops[:0], x.bounds[:0], x.vk[:0]
	} else {
		c = int32(len(e.conts))
		e.conts = append(e.conts, fcont{})
	}
	e.pushSlot(len(e.arena), e.recs.n, kind, c, e.opOff, -1, -1)
	return c
}

func (e *fastEnc) payload(o *pickle.Op, short, long byte) error {
	if bl := o.Blob; bl != nil {
		if len(bl.Digest) != e.opt.Algo.Size() {
			return errSlow
		}
		e.arena = append(e.arena, long)
		e.arena = appendUvarint(e.arena, uint64(bl.Len))
		e.arena = append(e.arena, bl.Digest...)
		return nil
	}
	if len(o.Str) <= InlineMax {
		e.arena = append(e.arena, short)
		e.arena = appendStr(e.arena, o.Str)
		return nil
	}
	e.arena = append(e.arena, long)
	e.arena = appendUvarint(e.arena, uint64(len(o.Str)))
	e.arena = e.opt.Algo.sum(e.arena, []byte(o.Str))
	return nil
}

func (e *fastEnc) step(o *pickle.Op) (bool, error) {
	if len(e.pend) > 0 && !keepsLazy[o.Code] {
		e.settle()
	}
	switch o.Code {
	case pickle.PROTO:
		e.proto = int(o.Int)
	case pickle.FRAME:
	case pickle.STOP:
		if len(e.stack) <= e.fence() {
			return false, errSlow
		}
		top := len(e.stack) - 1
		if e.logged && (top != 0 || len(e.marks) != 0) {
			return false, errSlow
		}
		s := e.stack[top]
		if s.c >= 0 && e.conts[s.c].stream {
			if s.kind != fkList || e.conts[s.c].n != e.scan.rootLen || len(e.arena) != s.off {
				return false, errSlow
			}
		} else {
			if e.scan.rootList >= 0 {
				return false, errSlow
			}
			if err := e.emitTop(top); err != nil {
				return false, err
			}
		}
		e.write([]byte{'.'})
		return true, nil
	case pickle.MARK:
		e.marks = grow.Push(e.marks, len(e.stack))
		e.marks0 = append(e.marks0, e.opOff)
	case pickle.NONE:
		e.push(fkNone)
		e.arena = append(e.arena, 'n')
	case pickle.NEWTRUE, pickle.NEWFALSE:
		e.push(fkBool)
		b := byte(0)
		if o.Code == pickle.NEWTRUE {
			b = 1
		}
		e.arena = append(e.arena, 'b', b)
	case pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.LONG, pickle.LONG1, pickle.LONG4:
		if o.IsBool {
			e.push(fkBool)
			e.arena = append(e.arena, 'b', byte(o.Int))
			break
		}
		e.push(fkInt)
		e.arena = appendIntVal(e.arena, o.Int, o.Big)
	case pickle.FLOAT, pickle.BINFLOAT:
		e.push(fkFloat)
		e.arena = append(e.arena, 'f')
		e.arena = binary.BigEndian.AppendUint64(e.arena, uint64(o.Int))
	case pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8:
		e.push(fkStr)
		return false, e.payload(o, 's', 'S')
	case pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8:
		e.push(fkBytes)
		return false, e.payload(o, 'y', 'Y')
	case pickle.BYTEARRAY8:
		e.push(fkIdent)
		e.arena = append(e.arena, 'N', 'a')
		if err := e.payload(o, 'y', 'Y'); err != nil {
			return false, err
		}
		e.arena = append(e.arena, 0)
	case pickle.EMPTY_LIST:
		idx := e.lists
		c := e.openList(0)
		if e.scan.rootVals[idx] {
			// a value of the dict result: dropped, read again at the end
			e.drops = append(e.drops, dropRec{start: e.opOff, memo0: e.nmemo})
			e.conts[c].drop = int32(len(e.drops))
			e.arena = append(e.arena, 0)
			e.arena = appendUvarint(e.arena, uint64(len(e.drops)-1))
		}
	case pickle.EMPTY_DICT:
		c := e.newCont(fkDict)
		switch {
		case e.scan.rootVals == nil:
		case !e.scan.stateVals:
			e.conts[c].root = len(e.stack) == 1 // the dict result
		default:
			// the state of the call result (pass 1 saw it BUILT there)
			e.conts[c].root = len(e.stack) == 2 && e.stack[0].kind == fkCall && e.stack[0].c >= 0
		}
	case pickle.EMPTY_SET:
		e.newCont(fkSet)
	case pickle.EMPTY_TUPLE:
		e.push(fkPureComp)
		if e.emptyTuple == nil {
			// 'H' and the digest of "T\x00", once (every REDUCE of a
			// table of objects has one)
			e.emptyTuple = e.opt.Algo.sum([]byte{'H'}, []byte{'T', 0})
		}
		e.arena = append(e.arena, e.emptyTuple...)
	case pickle.LIST, pickle.DICT, pickle.TUPLE, pickle.FROZENSET:
		p, err := e.toMark()
		if err != nil {
			return false, err
		}
		return false, e.built(e.lastMark, e.fromMark(o.Code, p))
	case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
		c := int(o.Code-pickle.TUPLE1) + 1
		if len(e.stack)-c < e.fence() {
			return false, errSlow
		}
		return false, e.built(e.stack[len(e.stack)-c].op, e.fromMark(pickle.TUPLE, len(e.stack)-c))
	case pickle.APPEND, pickle.SETITEM:
		c := 1
		if o.Code == pickle.SETITEM {
			c = 2
		}
		x := len(e.stack) - c
		if x <= e.fence() {
			return false, errSlow
		}
		return false, e.addTo(x, o.Code)
	case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS:
		p, err := e.toMark()
		if err != nil {
			return false, err
		}
		if p <= e.fence() {
			return false, errSlow
		}
		return false, e.addTo(p, o.Code)
	case pickle.GLOBAL:
		e.logged = true
		return false, e.global(o.Str, o.Name)
	case pickle.STACK_GLOBAL:
		e.logged = true
		x := len(e.stack) - 2
		if x < e.fence() || e.stack[x].kind != fkStr || e.stack[x+1].kind != fkStr {
			return false, errSlow
		}
		mod, ok1 := inlineStr(e.arena[e.stack[x].off:e.stack[x+1].off])
		name, ok2 := inlineStr(e.arena[e.stack[x+1].off:])
		if !ok1 || !ok2 {
			return false, errSlow
		}
		ms, ns := string(mod), string(name)
		op := e.stack[x].op
		e.cut(e.stack[x].off, e.stack[x].r0)
		e.stack = e.stack[:x]
		return false, e.built(op, e.global(ms, ns))
	case pickle.REDUCE, pickle.NEWOBJ:
		e.logged = true
		x := len(e.stack) - 2
		if x < e.fence() {
			return false, errSlow
		}
		if e.hashOnly && e.stack[0].kind == fkDict {
			// objects in a dict (the result): this path holds the result's whole
			// encoding until STOP, where the canon sink keeps each entry's
			// bytes only (a dict of 500,000 SimpleNamespace objects, 29 MB:
			// 385 MB here, 135 MB there); pk diff's item scan needs this
			// path's fingerprints of the entries
			return false, errSlow
		}
		form := byte('w')
		if o.Code == pickle.REDUCE {
			form = 'c'
			if e.stack[x].kind != fkGlobal {
				return false, errSlow
			}
			g := e.arena[e.stack[x].off:e.stack[x+1].off]
			if !e.callOK || !bytes.Equal(g, e.lastCall) {
				// the callable of the last REDUCE is checked once (a table
				// of objects calls the same one on every row)
				mod, name, ok := parseGlobal(g)
				if !ok || ruleGlobal(mod, name) {
					return false, errSlow
				}
				e.lastCall, e.callOK = append(e.lastCall[:0], g...), true
			}
		}
		if err := e.sealFrom(x); err != nil {
			return false, err
		}
		start, r0, op, ch := e.stack[x].off, e.stack[x].r0, e.stack[x].op, e.chainFrom(x)
		e.stack = e.stack[:x]
		c := e.newCont(fkCall)
		s := &e.stack[len(e.stack)-1]
		s.off, s.r0, s.op, s.kh, s.kt = start, r0, op, ch[0], ch[1]
		e.conts[c].form = form
	case pickle.BUILD:
		x := len(e.stack) - 1
		if x-1 < e.fence() {
			return false, errSlow
		}
		return false, e.addOp(x, 'b')
	case pickle.MEMOIZE, pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT:
		if len(e.stack) <= e.fence() {
			return false, errSlow
		}
		idx := o.Int
		if o.Code == pickle.MEMOIZE {
			if !e.scan.memoize {
				return false, errSlow
			}
			idx = e.nmemo
			e.nmemo++
		} else if e.scan.memoize {
			return false, errSlow
		}
		if !e.scan.isLive(idx) {
			break
		}
		s := e.stack[len(e.stack)-1]
		if !fkPure(s.kind) {
			e.memo.put(idx, memoEnt{kind: fkIdent})
			break
		}
		e.settleFrom(s.off)
		e.memo.put(idx, memoEnt{kind: s.kind, enc: memoCopy(e.arena[s.off:])})
	case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
		m := e.memoGet(o.Int)
		if m == nil || !fkPure(m.kind) || o.Big != nil || len(m.enc) > maxMemoEnc {
			return false, errSlow
		}
		e.push(m.kind)
		if n := len(e.arena); len(m.enc) <= memoChunk && cap(m.enc) >= memoChunk && cap(e.arena)-n >= memoChunk {
			// a short encoding (a table's shared str or key): one
			// fixed-size copy, no call (the bytes past its end land past
			// the arena's length, where the next value overwrites them)
			*(*[memoChunk]byte)(e.arena[n : n+memoChunk]) = *(*[memoChunk]byte)(m.enc[:memoChunk])
			e.arena = e.arena[:n+len(m.enc)]
		} else {
			e.arena = append(e.arena, m.enc...)
		}
	default:
		return false, errSlow
	}
	return false, nil
}

// memoChunk: memo encodings are stored with room for at least this many
// bytes, so that a GET copies a short one in one move.
const memoChunk = 32

// memoCopy is the copy of a value's encoding the memo keeps (see
// memoChunk).
func memoCopy(b []byte) []byte {
	return append(make([]byte, 0, max(len(b), memoChunk)), b...)
}

// openList starts a list (EMPTY_LIST, or LIST over n items already in the
// arena: the caller has sealed them and moves the slot's start to theirs).
func (e *fastEnc) openList(n int64) int32 {
	idx := e.lists
	e.lists++
	c := e.newCont(fkList)
	e.conts[c].n = n
	if idx == e.scan.rootList {
		e.conts[c].stream = true
		e.write([]byte{'N', 'l'})
		e.write(appendUvarint(nil, uint64(e.scan.rootLen)))
		e.write([]byte{0})
	}
	return c
}

// built sets the first opcode of the value fromMark (or a call) left on
// top, for the byte ranges of dropped values.
func (e *fastEnc) built(op int64, err error) error {
	if err == nil && len(e.stack) > 0 {
		e.stack[len(e.stack)-1].op = op
	}
	return err
}

// fromMark builds LIST, DICT, TUPLE(1-3) or FROZENSET from stack[p:].
func (e *fastEnc) fromMark(code pickle.Opcode, p int) error {
	if err := e.sealFrom(p); err != nil {
		return err
	}
	k := len(e.stack) - p
	start, r0 := len(e.arena), e.recs.n
	if p < len(e.stack) {
		start, r0 = e.stack[p].off, e.stack[p].r0
	}
	ch := e.chainFrom(p)
	switch code {
	case pickle.LIST:
		e.stack = e.stack[:p]
		e.openList(int64(k))
		s := &e.stack[len(e.stack)-1]
		s.off, s.r0, s.kh, s.kt = start, r0, ch[0], ch[1]
		if e.conts[s.c].stream {
			if err := e.emit(true, start, len(e.arena), ch); err != nil {
				return err
			}
			e.cut(start, r0)
			s.kh, s.kt = -1, -1
		}
	case pickle.DICT:
		if k%2 != 0 {
			return errSlow
		}
		for i := p; i < len(e.stack); i += 2 {
			if !fkKey(e.stack[i].kind) {
				return errSlow
			}
		}
		offs := e.slotOffs(p)
		var vk []int32
		for i := p + 1; i < len(e.stack); i += 2 {
			vk = append(vk, e.stack[i].kh, e.stack[i].kt)
		}
		e.stack = e.stack[:p]
		c := e.newCont(fkDict)
		s := &e.stack[len(e.stack)-1]
		s.off, s.r0, s.kh, s.kt = start, r0, ch[0], ch[1]
		for _, off := range offs {
			e.conts[c].bounds = append(e.conts[c].bounds, off-start)
		}
		e.conts[c].vk = append(e.conts[c].vk, vk...)
		e.conts[c].n = int64(k / 2)
	case pickle.TUPLE:
		pure, num := true, false
		for i := p; i < len(e.stack); i++ {
			kd := e.stack[i].kind
			if !fkPure(kd) {
				pure = false
				break
			}
			num = num || !fkKey(kd)
		}
		e.settleFrom(start)
		e.tmp = e.tmp[:0]
		if !pure {
			e.tmp = append(e.tmp, 'N', 'T')
			e.tmp = appendUvarint(e.tmp, uint64(k))
			e.tmp = append(e.tmp, 0)
			e.ident(p, e.tmp)
			break
		}
		if e.lazy && e.streamsAt(p) {
			// its digest is a placeholder until it is streamed or read
			lo := len(e.pendBody)
			e.pendBody = append(e.pendBody, 'T')
			e.pendBody = appendUvarint(e.pendBody, uint64(k))
			e.pendBody = append(e.pendBody, e.arena[start:]...)
			e.pend = append(e.pend, lazySum{pos: start + 1, lo: lo, hi: len(e.pendBody)})
			e.arena = append(e.arena[:start], 'H')
			e.arena = append(e.arena, zeroSum[:e.opt.Algo.Size()]...)
		} else {
			e.tmp = append(e.tmp, 'T')
			e.tmp = appendUvarint(e.tmp, uint64(k))
			e.tmp = append(e.tmp, e.arena[start:]...)
			e.arena = append(e.arena[:start], 'H')
			e.arena = e.sumTuple(e.arena, e.tmp)
		}
		e.stack = e.stack[:p]
		kind := fkPureComp
		if num {
			kind = fkPureCompNum
		}
		e.pushSlot(start, r0, kind, -1, 0, -1, -1)
	case pickle.FROZENSET:
		for i := p; i < len(e.stack); i++ {
			if !fkKey(e.stack[i].kind) {
				return errSlow
			}
		}
		order, err := e.order(e.arena[start:], e.slotOffs(p), start, false)
		if err != nil {
			return err
		}
		e.tmp = append(e.tmp[:0], 'F')
		e.tmp = appendUvarint(e.tmp, uint64(k))
		for _, b := range order {
			e.tmp = append(e.tmp, b...)
		}
		e.arena = append(e.arena[:start], 'H')
		e.arena = e.opt.Algo.sum(e.arena, e.tmp)
		e.stack = e.stack[:p]
		e.pushSlot(start, r0, fkPureComp, -1, 0, -1, -1)
	}
	return nil
}

// streamsAt says whether a value made at stack position p is an item of
// the list result but for something unusual: it lies right above that list
// or above its one open MARK (a tuple in a row is read by the row: its
// digest is not made lazy).
func (e *fastEnc) streamsAt(p int) bool {
	return p >= 1 && len(e.marks) <= 1 && e.stack[0].c >= 0 && e.conts[e.stack[0].c].stream
}

// zeroSum is a placeholder of a lazy digest.
var zeroSum [32]byte

// addTo handles APPEND(S), SETITEM(S) and ADDITEMS: items are stack[x:],
// the target stack[x-1].
func (e *fastEnc) addTo(x int, code pickle.Opcode) error {
	t := e.stack[x-1]
	if len(e.pend) > 0 && (t.c < 0 || !e.conts[t.c].stream) {
		e.settle() // (only the list result streams its items' lazy digests)
	}
	want := fkList
	switch code {
	case pickle.SETITEM, pickle.SETITEMS:
		want = fkDict
	case pickle.ADDITEMS:
		want = fkSet
	}
	if t.kind == fkCall {
		tag := byte('a')
		switch want {
		case fkDict:
			tag = 's'
		case fkSet:
			tag = 'd'
		}
		if want == fkDict && (len(e.stack)-x)%2 != 0 {
			return errSlow
		}
		return e.addOp(x, tag)
	}
	if t.kind != want || t.c < 0 {
		return errSlow
	}
	k := len(e.stack) - x
	if k == 0 {
		return nil
	}
	c := &e.conts[t.c]
	if c.stream {
		c.n += int64(k)
		err := e.sealOut(x)
		e.stack = e.stack[:x]
		return err
	}
	tgt := &e.stack[x-1]
	if c.drop > 0 {
		if want != fkList {
			return errSlow
		}
		// a dropped value: count its items, keep nothing of them
		c.n += int64(k)
		for i := x; i < len(e.stack); i++ {
			if e.stack[i].c >= 0 {
				if e.conts[e.stack[i].c].stream || e.conts[e.stack[i].c].drop > 0 {
					return errSlow
				}
				e.release(&e.stack[i])
			}
		}
		e.cut(e.stack[x].off, e.stack[x].r0)
		e.stack = e.stack[:x]
		return nil
	}
	if c.root && want == fkDict {
		// dropped values set in the dict result (droppedAt)
		for i := x + 1; i < len(e.stack); i += 2 {
			s := &e.stack[i]
			if s.c < 0 || e.conts[s.c].drop == 0 {
				continue
			}
			e.drops[e.conts[s.c].drop-1] = e.droppedAt(i)
			c.holds = true
			e.conts[s.c].drop = 0
			e.release(s) // its bytes are the placeholder
		}
	}
	// one pass over the items, each made final (sealed: a value, or one
	// record): their records join the target's chain; a dict's keys and a
	// set's items must be keys; their starts (and a dict's values'
	// records) are noted for sealing the target
	if err := e.sealFrom(x); err != nil {
		return err
	}
	items := e.stack[x:]
	c = &e.conts[t.c]
	switch want {
	case fkList:
		for i := range items {
			e.link(&tgt.kh, &tgt.kt, items[i].kh, items[i].kt)
		}
		c.n += int64(k)
	case fkDict:
		if k%2 != 0 {
			return errSlow
		}
		for i := 0; i+1 < len(items); i += 2 {
			key, val := &items[i], &items[i+1]
			if !fkKey(key.kind) {
				return errSlow
			}
			e.link(&tgt.kh, &tgt.kt, key.kh, key.kt)
			e.link(&tgt.kh, &tgt.kt, val.kh, val.kt)
			c.bounds = append(c.bounds, key.off-t.off, val.off-t.off)
			c.vk = append(c.vk, val.kh, val.kt)
		}
		c.n += int64(k / 2)
	case fkSet:
		for i := range items {
			if !fkKey(items[i].kind) {
				return errSlow
			}
			e.link(&tgt.kh, &tgt.kt, items[i].kh, items[i].kt)
			c.bounds = append(c.bounds, items[i].off-t.off)
		}
		c.n += int64(k)
	}
	e.stack = e.stack[:x]
	return nil
}

// addOp records an operation with arguments stack[x:] on the call result
// at stack[x-1]; the arguments' bytes stay where they are, after the call's
// other children.
func (e *fastEnc) addOp(x int, tag byte) error {
	t := e.stack[x-1]
	if t.kind != fkCall || t.c < 0 {
		return errSlow // BUILD or a foreign operation on anything else: the graph path
	}
	k := len(e.stack) - x
	if k == 0 {
		return nil // an empty batch is no operation
	}
	state := tag == 'b' && x == 1 && k == 1 && e.stack[x].c >= 0 && e.conts[e.stack[x].c].holds
	e.allowRoot = state
	err := e.sealFrom(x)
	e.allowRoot = false
	if err != nil {
		return err
	}
	for i := x; i < len(e.stack); i++ {
		e.link(&e.stack[x-1].kh, &e.stack[x-1].kt, e.stack[i].kh, e.stack[i].kt)
	}
	c := &e.conts[t.c]
	if state {
		c.holds = true // the result, with the state's placeholders
	}
	if n := len(c.ops); tag != 'b' && n > 0 && c.ops[n-1].tag == tag {
		c.ops[n-1].n += k
	} else {
		c.ops = append(c.ops, fop{tag: tag, n: k})
	}
	e.stack = e.stack[:x]
	return nil
}

// global pushes a global as find_class sees it at this protocol.
func (e *fastEnc) global(module, name string) error {
	module, name, _, dotted := pickle.MapGlobal(e.proto, module, name)
	if module == "builtins" && name == "__main__" {
		return errSlow // dill-main
	}
	e.push(fkGlobal)
	if dotted {
		e.arena = append(e.arena, 'G')
	} else {
		e.arena = append(e.arena, 'g')
	}
	e.arena = appendStr(e.arena, module)
	e.arena = appendStr(e.arena, name)
	return nil
}

// inlineStr decodes an 's' str encoding (a str of at most InlineMax bytes).
func inlineStr(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != 's' {
		return nil, false
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || uint64(len(b)-1-k) != n {
		return nil, false
	}
	return b[1+k:], true
}

// parseGlobal decodes a 'g'/'G' global encoding.
func parseGlobal(b []byte) (mod, name string, ok bool) {
	if len(b) < 1 || (b[0] != 'g' && b[0] != 'G') {
		return "", "", false
	}
	b = b[1:]
	var parts [2]string
	for i := range parts {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", "", false
		}
		parts[i] = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	return parts[0], parts[1], len(b) == 0
}
