package canon

// The streaming path of HashFile for plain-data pickles.
//
// The canonical form of a pickle that holds only plain data (None, bools,
// numbers, str, bytes, bytearray, lists, dicts, tuples, sets, frozensets,
// globals, calls: REDUCE of a global that no rule of the form rewrites,
// NEWOBJ, and BUILD / APPEND(S) / SETITEM(S) / ADDITEMS on call results;
// memo references to immutable values) does not need the graph: every
// value's encoding is final when the value is consumed by its container,
// since nothing can reach a consumed container again without a GET, and a
// GET of a mutable object makes the fast path give up. With no POP and
// nothing but the result left at STOP, every call and global is reachable
// from the result, so there is no effect to encode. So two passes over the
// file replace the graph:
//
//   - pass 1 (scan) reads the opcodes with a stack of small handles and
//     learns the item count of the result when it is a list (its header
//     comes before its items in the encoding) and which memo indices are
//     ever read (only those are kept in pass 2);
//   - pass 2 (encode) builds every value's encoding in an arena, in stack
//     order, sorting dict entries and set items when they are consumed; the
//     items of a list result go straight into the hash as they are appended.
//
// Memory is the arena (the encoding of what is on the stack, plus the whole
// result when it is not a list), the live memo entries and the counts of
// lists built at the bottom of the stack. Anything else - a call of a
// callable some rule looks at (builtins, copyreg, _codecs, types, functools,
// cloudpickle, dill), NEWOBJ_EX, INST, OBJ, POP, DUP, persistent ids, EXT,
// buffers, Py2 STRING, a GET of a mutable object, BUILD or a foreign
// operation on a plain container, a dict key or set item that is a bool, a
// float or a mutable object, duplicate keys, leftovers on the stack once a
// call or global was met, several streams, trailing bytes, any error - makes
// fastHashFile report !ok, and HashFile builds the graph as before. When it
// does not give up, the digest is the graph path's, byte for byte
// (TestFastMatchesGraph, FuzzFastHash).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"os"
	"slices"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// errSlow means: this input is not for the fast path.
var errSlow = errors.New("not a plain-data pickle")

// noFast turns the fast path off (tests compare both ways).
var noFast bool

// fastHashFile hashes path in two streaming passes when it is a bare
// plain-data pickle; ok is false when the graph path must do it.
func fastHashFile(path string, opt Options) (res *Result, ok bool) {
	if noFast || path == "-" || opt.storageKeys != nil {
		return nil, false
	}
	scan, size, err := fastScan(path)
	if err != nil {
		return nil, false
	}
	sum, err := fastEncode(path, size, opt, scan, nil)
	if err != nil {
		return nil, false
	}
	return docResult(opt, sum), true
}

// docResult is HashDoc's digest of an input with one part, named "", of one
// pickle stream whose digest is sum, and no trailing bytes.
func docResult(opt Options, sum []byte) *Result {
	h := opt.Algo.New()
	h.Write([]byte(opt.header()))
	buf := append([]byte{'P'}, appendStr(nil, "")...)
	buf = append(buf, 'K')
	buf = appendUvarint(buf, 1)
	h.Write(buf)
	h.Write(sum)
	h.Write([]byte{'z'})
	s := h.Sum(nil)
	return &Result{Digest: opt.Tag() + ":" + hexString(s), Sum: s}
}

// openBare opens path when it holds one bare pickle, plain or compressed
// (size -1 then); done must be called and reports a decompression error.
func openBare(path string) (r io.Reader, size int64, done func() error, err error) {
	return input.OpenBare(path, input.Options{})
}

// ---- pass 1 ----

type fastScanResult struct {
	rootList int32 // index (in creation order) of the list that is the result, or -1
	rootLen  int64 // its final item count
	// rootVals: the lists (by index) that are values of the result when it
	// is a dict built at the bottom of the stack (pass 2 drops their
	// encodings and reads them again at the end, in key order); nil when
	// the memo could not be read again that way (an index written twice)
	rootVals map[int32]bool
	// stateVals: rootVals are those of the one BUILD state dict of a call
	// result (not of a dict result)
	stateVals bool
	memoize   bool     // the stream memoises with MEMOIZE (else PUT)
	live      []uint64 // bitset: memo indices some GET reads
}

func (s *fastScanResult) isLive(i int64) bool {
	return i >= 0 && i>>6 < int64(len(s.live)) && s.live[i>>6]&(1<<(i&63)) != 0
}

// maxFastMemo bounds the memo indices the fast path tracks in a bitset.
const maxFastMemo = 1 << 28

// maxRootVals: a dict result with more list values than this keeps them
// all in memory (each dropped value is read again with a seek of its own).
const maxRootVals = 64

func fastScan(path string) (*fastScanResult, int64, error) {
	f, size, done, err := openBare(path)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	rd := pickle.NewReader(f, size, path)
	rd.Borrow = true
	res := &fastScanResult{rootList: -1}
	var (
		stack  []int32 // list index, or -1
		marks  []int
		counts map[int32]int64 // by list index: item count
		memo   int8            // 0 none yet, 1 MEMOIZE, 2 PUT
		nmemo  int64
	)
	fence := func() int {
		if len(marks) == 0 {
			return 0
		}
		return marks[len(marks)-1]
	}
	toMark := func() (int, bool) {
		if len(marks) == 0 {
			return 0, false
		}
		p := marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		return p, p <= len(stack)
	}
	useMemo := func(kind int8) bool {
		if memo != 0 && memo != kind {
			return false
		}
		memo = kind
		return true
	}
	// Only a list built at the bottom of the stack can be streamed as the
	// result: its count is kept (lists count in creation order, as pass 2
	// counts them). A dict built at the bottom is -2 on the stack: lists
	// set as its values are noted in rootVals.
	nlists := int32(0)
	newList := func(pos int, n int64) int32 {
		idx := nlists
		nlists++
		if pos == 0 {
			if counts == nil {
				counts = map[int32]int64{}
			}
			counts[idx] = n
		}
		return idx
	}
	count := func(t int32, k int64) {
		if _, ok := counts[t]; ok {
			counts[t] += k
		}
	}
	// A call built at the bottom is -4, and a dict built right above it
	// -3: its lists too are noted (in stateVals) and kept out of memory when
	// that dict is the call's one BUILD state and the call the result.
	tooMany := false
	var stateVals map[int32]bool
	nState, stateBuilt := 0, 0
	nCalls0, stateTarget := 0, -1 // calls built at the bottom; the one the state went to
	rootVal := func(t, v int32) {
		if (t != -2 && t != -3) || v < 0 || tooMany {
			return
		}
		m := &res.rootVals
		if t == -3 {
			m = &stateVals
		}
		if *m == nil {
			*m = map[int32]bool{}
		}
		(*m)[v] = true
		tooMany = len(*m) > maxRootVals
	}
	var puts []uint64 // PUT indices written (one written twice: no rootVals)
	dupPut := false
	// Pass 1 needs the opcodes and their integer arguments only: Skim
	// reads them in batches without decoding short strings (pass 2 checks
	// those, and gives up on what the reader refuses).
	batch := make([]pickle.Skimmed, 512)
	var have, next int
	var o *pickle.Skimmed
	var failed error
	for {
		if next == have {
			if failed != nil {
				return nil, 0, errSlow
			}
			have, failed = rd.Skim(batch)
			next = 0
			if have == 0 {
				return nil, 0, errSlow
			}
		}
		o = &batch[next]
		next++
		switch o.Code {
		case pickle.PROTO:
			if o.Int > pickle.HighestProtocol {
				return nil, 0, errSlow
			}
		case pickle.FRAME:
		case pickle.STOP:
			if len(stack) <= fence() || !rd.AtEOF() {
				return nil, 0, errSlow
			}
			top := stack[len(stack)-1]
			if _, ok := counts[top]; ok && top >= 0 {
				res.rootList, res.rootLen = top, counts[top]
			}
			switch {
			case dupPut || tooMany:
				res.rootVals = nil
			case top == -2:
			case top == -4 && nState == 1 && stateBuilt == 1 && stateTarget == nCalls0:
				res.rootVals, res.stateVals = stateVals, true
			default:
				res.rootVals = nil
			}
			res.memoize = memo == 1
			if done() != nil {
				return nil, 0, errSlow
			}
			return res, size, nil
		case pickle.MARK:
			marks = append(marks, len(stack))
		case pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE, pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2,
			pickle.LONG, pickle.LONG1, pickle.LONG4, pickle.FLOAT, pickle.BINFLOAT,
			pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
			pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8, pickle.BYTEARRAY8,
			pickle.EMPTY_TUPLE, pickle.EMPTY_SET:
			stack = append(stack, -1)
		case pickle.EMPTY_DICT:
			switch {
			case len(stack) == 0:
				stack = append(stack, -2)
			case len(stack) == 1 && stack[0] == -4:
				nState++
				stack = append(stack, -3)
			default:
				stack = append(stack, -1)
			}
		case pickle.EMPTY_LIST:
			stack = append(stack, newList(len(stack), 0))
		case pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT:
			p, ok := toMark()
			if !ok {
				return nil, 0, errSlow
			}
			k := len(stack) - p
			stack = stack[:p]
			if o.Code == pickle.LIST {
				stack = append(stack, newList(len(stack), int64(k)))
			} else {
				stack = append(stack, -1)
			}
		case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
			c := int(o.Code-pickle.TUPLE1) + 1
			if len(stack)-c < fence() {
				return nil, 0, errSlow
			}
			stack = append(stack[:len(stack)-c], -1)
		case pickle.APPEND, pickle.SETITEM:
			c := 1
			if o.Code == pickle.SETITEM {
				c = 2
			}
			if len(stack)-c <= fence() {
				return nil, 0, errSlow
			}
			if c == 2 {
				rootVal(stack[len(stack)-3], stack[len(stack)-1])
			}
			stack = stack[:len(stack)-c]
			if t := stack[len(stack)-1]; t >= 0 && c == 1 {
				count(t, 1)
			}
		case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS:
			p, ok := toMark()
			if !ok || p <= fence() {
				return nil, 0, errSlow
			}
			k := len(stack) - p
			if o.Code == pickle.SETITEMS {
				for i := p + 1; i < len(stack); i += 2 {
					rootVal(stack[p-1], stack[i])
				}
			}
			stack = stack[:p]
			if t := stack[p-1]; t >= 0 && o.Code == pickle.APPENDS {
				count(t, int64(k))
			}
		case pickle.GLOBAL:
			stack = append(stack, -1)
		case pickle.STACK_GLOBAL, pickle.REDUCE, pickle.NEWOBJ:
			if len(stack)-2 < fence() {
				return nil, 0, errSlow
			}
			stack = stack[:len(stack)-2]
			if o.Code != pickle.STACK_GLOBAL && len(stack) == 0 {
				nCalls0++
				stack = append(stack, -4)
			} else {
				stack = append(stack, -1)
			}
		case pickle.BUILD:
			if len(stack)-2 < fence() {
				return nil, 0, errSlow
			}
			if stack[len(stack)-1] == -3 && stack[len(stack)-2] == -4 {
				stateBuilt++
				stateTarget = nCalls0
			}
			stack = stack[:len(stack)-1]
		case pickle.MEMOIZE:
			if len(stack) <= fence() || !useMemo(1) {
				return nil, 0, errSlow
			}
			nmemo++
		case pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT:
			if len(stack) <= fence() || !useMemo(2) || o.Int < 0 || o.Int >= maxFastMemo || o.Big {
				return nil, 0, errSlow
			}
			i := o.Int
			for int64(len(puts)) <= i>>6 {
				puts = append(puts, 0)
			}
			dupPut = dupPut || puts[i>>6]&(1<<(i&63)) != 0
			puts[i>>6] |= 1 << (i & 63)
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			i := o.Int
			if i < 0 || i >= maxFastMemo || o.Big {
				return nil, 0, errSlow
			}
			for int64(len(res.live)) <= i>>6 {
				res.live = append(res.live, 0)
			}
			res.live[i>>6] |= 1 << (i & 63)
			stack = append(stack, -1)
		default:
			return nil, 0, errSlow
		}
	}
}

// ---- pass 2 ----

// kinds of values on the fast stack
const (
	fkNone uint8 = iota
	fkInt
	fkStr
	fkBytes
	fkGlobal   // 'g'/'G' module qualname
	fkPureComp // pure tuple or frozenset: 'H' + digest
	fkBool     // pure, but a key only with numeric unification: not here
	fkFloat    // same
	fkIdent    // a final identity value (bytearray, impure tuple, sealed container)
	fkList     // containers being filled
	fkDict
	fkSet
	fkCall // a call result (REDUCE, NEWOBJ) taking operations
)

func fkPure(k uint8) bool { return k <= fkFloat }

// fkKey: may be a dict key or set item on the fast path (pure, and equal
// only when the encodings are equal).
func fkKey(k uint8) bool { return k <= fkPureComp }

type fslot struct {
	off  int // start of the value's bytes in the arena
	kind uint8
	c    int32 // containers: index in fastEnc.conts
	op   int64 // offset of the first opcode that builds the value
}

type fcont struct {
	drop   int32 // a value of a dict result, dropped: 1 + its index in fastEnc.drops
	root   bool  // the dict result (or the call result's state), whose dropped values are read again at the end
	holds  bool  // its encoding holds placeholders of dropped values: only emitTop may seal it
	form   byte  // calls: 'c' REDUCE, 'w' NEWOBJ
	ops    []fop // calls: operations (BUILD, APPEND(S), SETITEM(S), ADDITEMS)
	n      int64
	bounds []int // dict: key and value starts; set: item starts (relative to the region)
	stream bool  // the list result, whose items go to the hash at once
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

type fastEnc struct {
	opt      Options
	scan     *fastScanResult
	arena    []byte
	stack    []fslot
	marks    []int
	conts    []fcont
	free     []int32
	memo     map[int64]memoEnt
	nmemo    int64
	lists    int32
	proto    int
	opOff    int64   // offset of the opcode being run
	marks0   []int64 // offsets of the open MARKs
	lastMark int64   // offset of the MARK toMark popped
	drops    []dropRec
	// phs: arena offsets of the placeholders in the call result's state
	// (sealed into it by its BUILD); allowRoot: sealing a container that
	// holds placeholders is allowed (emitTop, that BUILD)
	phs       []int
	allowRoot bool
	path      string
	size      int64
	// calls or globals were met: then the result must be all that is left
	// at STOP (anything else would hold an effect of its own)
	logged bool

	h   *countHash // the stream digest
	out []byte     // pending bytes for h

	// sealing scratch
	tmp   []byte
	kinds []uint8
	offs  []int
	perm  []int
	// the body of the container being sealed, in canonical order
	pieces [][]byte
	// the last dict's key bytes and order (records share their keys)
	lastKeys []byte
	lastOffs []int
	lastPerm []int
	sortKeys [][]byte
}

func (e *fastEnc) write(b []byte) {
	if len(b) >= 64<<10 {
		e.h.Write(e.out)
		e.out = e.out[:0]
		e.h.Write(b)
		return
	}
	e.out = append(e.out, b...)
	if len(e.out) >= 64<<10 {
		e.h.Write(e.out)
		e.out = e.out[:0]
	}
}

// fastHooks see every opcode of pass 2 around its step (pk diff's item
// tracker); after is not called for STOP.
type fastHooks interface {
	before(e *fastEnc, o *pickle.Op) error
	after(e *fastEnc, o *pickle.Op)
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
	rd := pickle.NewReader(f, size, path)
	rd.NewHash = opt.Algo.New
	rd.Borrow = true
	if hooks != nil || size < 0 {
		scan.rootVals = nil // item fingerprints need the encodings; no seeking in a compressed stream
	}
	e := &fastEnc{opt: opt, scan: scan, memo: map[int64]memoEnt{}, h: &countHash{Hash: opt.Algo.New()}, path: path, size: size}
	e.h.Write([]byte(opt.header()))
	e.out = append(e.out, 'r')
	var o pickle.Op
	for {
		if err := rd.NextInto(&o); err != nil {
			return nil, errSlow
		}
		if hooks != nil {
			if err := hooks.before(e, &o); err != nil {
				return nil, errSlow
			}
		}
		e.opOff = o.Offset
		stop, err := e.step(&o)
		if err != nil {
			return nil, err
		}
		if int64(len(e.arena)) > arenaExpansion*rd.Offset()+arenaSlack {
			return nil, errSlow
		}
		if stop {
			if !rd.AtEOF() || done() != nil {
				return nil, errSlow
			}
			e.h.Write(e.out)
			if e.h.n > MaxExpansion*rd.Offset()+MaxExpansionSlack {
				return nil, errSlow // the graph path refuses it (errExpansion)
			}
			return e.h.Sum(nil), nil
		}
		if hooks != nil {
			hooks.after(e, &o)
		}
	}
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
	e.stack = append(e.stack, fslot{off: len(e.arena), kind: kind, c: -1, op: e.opOff})
}

func (e *fastEnc) newCont(kind uint8) int32 {
	var c int32
	if n := len(e.free); n > 0 {
		c = e.free[n-1]
		e.free = e.free[:n-1]
		e.conts[c] = fcont{bounds: e.conts[c].bounds[:0], ops: e.conts[c].ops[:0]}
	} else {
		c = int32(len(e.conts))
		e.conts = append(e.conts, fcont{})
	}
	e.stack = append(e.stack, fslot{off: len(e.arena), kind: kind, c: c, op: e.opOff})
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
		e.marks = append(e.marks, len(e.stack))
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
		e.arena = append(e.arena, 'H')
		e.arena = e.opt.Algo.sum(e.arena, []byte{'T', 0})
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
		e.arena = e.arena[:e.stack[x].off]
		e.stack = e.stack[:x]
		return false, e.built(op, e.global(ms, ns))
	case pickle.REDUCE, pickle.NEWOBJ:
		e.logged = true
		x := len(e.stack) - 2
		if x < e.fence() {
			return false, errSlow
		}
		form := byte('w')
		if o.Code == pickle.REDUCE {
			form = 'c'
			if e.stack[x].kind != fkGlobal {
				return false, errSlow
			}
			mod, name, ok := parseGlobal(e.arena[e.stack[x].off:e.stack[x+1].off])
			if !ok || ruleCallable(mod, name) {
				return false, errSlow
			}
		}
		if err := e.sealFrom(x); err != nil {
			return false, err
		}
		start, op := e.stack[x].off, e.stack[x].op
		e.stack = e.stack[:x]
		c := e.newCont(fkCall)
		e.stack[len(e.stack)-1].off = start
		e.stack[len(e.stack)-1].op = op
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
			e.memo[idx] = memoEnt{kind: fkIdent}
			break
		}
		e.memo[idx] = memoEnt{kind: s.kind, enc: bytes.Clone(e.arena[s.off:])}
	case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
		m, ok := e.memo[o.Int]
		if !ok || !fkPure(m.kind) || o.Big != nil || len(m.enc) > maxMemoEnc {
			return false, errSlow
		}
		e.push(m.kind)
		e.arena = append(e.arena, m.enc...)
	default:
		return false, errSlow
	}
	return false, nil
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
	start := len(e.arena)
	if p < len(e.stack) {
		start = e.stack[p].off
	}
	switch code {
	case pickle.LIST:
		e.stack = e.stack[:p]
		e.openList(int64(k))
		s := &e.stack[len(e.stack)-1]
		s.off = start
		if e.conts[s.c].stream {
			e.write(e.arena[start:])
			e.arena = e.arena[:start]
		}
	case pickle.DICT:
		if k%2 != 0 {
			return errSlow
		}
		for i := p; i < len(e.stack); i += 2 {
			if !fkKey(e.kinds[i-p]) {
				return errSlow
			}
		}
		offs := slices.Clone(e.offs[:k])
		e.stack = e.stack[:p]
		c := e.newCont(fkDict)
		s := &e.stack[len(e.stack)-1]
		s.off = start
		for _, off := range offs {
			e.conts[c].bounds = append(e.conts[c].bounds, off-start)
		}
		e.conts[c].n = int64(k / 2)
	case pickle.TUPLE:
		pure := true
		for _, kd := range e.kinds[:k] {
			if !fkPure(kd) {
				pure = false
				break
			}
		}
		e.tmp = e.tmp[:0]
		if pure {
			e.tmp = append(e.tmp, 'T')
			e.tmp = appendUvarint(e.tmp, uint64(k))
			e.tmp = append(e.tmp, e.arena[start:]...)
			e.arena = append(e.arena[:start], 'H')
			e.arena = e.opt.Algo.sum(e.arena, e.tmp)
		} else {
			e.tmp = append(e.tmp, 'N', 'T')
			e.tmp = appendUvarint(e.tmp, uint64(k))
			e.tmp = append(e.tmp, 0)
			e.tmp = append(e.tmp, e.arena[start:]...)
			e.arena = append(e.arena[:start], e.tmp...)
		}
		e.stack = e.stack[:p]
		e.stack = append(e.stack, fslot{off: start, kind: fkIdent, c: -1})
		if pure {
			e.stack[len(e.stack)-1].kind = fkPureComp
		}
	case pickle.FROZENSET:
		for _, kd := range e.kinds[:k] {
			if !fkKey(kd) {
				return errSlow
			}
		}
		order, err := e.order(e.arena[start:], e.offs[:k], start, false)
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
		e.stack = append(e.stack[:p], fslot{off: start, kind: fkPureComp, c: -1})
	}
	return nil
}

// addTo handles APPEND(S), SETITEM(S) and ADDITEMS: items are stack[x:],
// the target stack[x-1].
func (e *fastEnc) addTo(x int, code pickle.Opcode) error {
	t := e.stack[x-1]
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
		e.arena = e.arena[:e.stack[x].off]
		e.stack = e.stack[:x]
		return nil
	}
	if c.root && want == fkDict {
		// dropped values set in the dict result: their byte ranges end
		// where the next key starts, or at this SETITEM(S)
		for i := x + 1; i < len(e.stack); i += 2 {
			s := &e.stack[i]
			if s.c < 0 || e.conts[s.c].drop == 0 {
				continue
			}
			d := &e.drops[e.conts[s.c].drop-1]
			d.n, d.end = e.conts[s.c].n, e.opOff
			if i+1 < len(e.stack) {
				d.end = e.stack[i+1].op
			}
			c.holds = true
			e.conts[s.c].drop = 0
			e.release(s) // its bytes are the placeholder
		}
	}
	if err := e.sealFrom(x); err != nil {
		return err
	}
	c = &e.conts[t.c]
	switch want {
	case fkList:
		c.n += int64(k)
	case fkDict:
		if k%2 != 0 {
			return errSlow
		}
		for i := 0; i < k; i += 2 {
			if !fkKey(e.kinds[i]) {
				return errSlow
			}
		}
		for _, off := range e.offs[:k] {
			c.bounds = append(c.bounds, off-t.off)
		}
		c.n += int64(k / 2)
	case fkSet:
		for i := 0; i < k; i++ {
			if !fkKey(e.kinds[i]) {
				return errSlow
			}
		}
		for _, off := range e.offs[:k] {
			c.bounds = append(c.bounds, off-t.off)
		}
		c.n += int64(k)
	}
	e.stack = e.stack[:x]
	return nil
}

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

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
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
	if state {
		e.allowRoot, e.phs = true, e.phs[:0]
	}
	err := e.sealFrom(x)
	e.allowRoot = false
	if err != nil {
		return err
	}
	c := &e.conts[t.c]
	if state {
		c.holds = true // the result, with the state's placeholders at e.phs
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

// ruleCallable reports whether a REDUCE of this global may be rewritten by
// a rule of the canonical form (section 5 and 6): those calls take the
// graph path.
func ruleCallable(module, name string) bool {
	switch module {
	case "builtins", "copyreg", "_codecs", "types", "functools":
		return true
	}
	return cloudpickleName(module, name) != "" || dillName(module, name) != ""
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

// emitTop writes the final encoding of the result, stack[top], to the hash
// without building it in the arena (a dict result is written entry by
// entry in canonical order).
func (e *fastEnc) emitTop(top int) error {
	s := &e.stack[top]
	region := e.arena[s.off:]
	if s.c < 0 {
		e.write(region)
		return nil
	}
	e.allowRoot = true
	head, err := e.sealHeader(e.tmp[:0], s, region)
	e.allowRoot = false
	if err != nil {
		return err
	}
	e.tmp = head
	e.write(head)
	if s.kind == fkCall && e.conts[s.c].holds {
		// the call result: its body as is, but for the placeholders of
		// its state's dropped values
		f, err := os.Open(e.path)
		if err != nil {
			return errSlow
		}
		defer f.Close()
		prev := 0
		for _, at := range e.phs {
			rel := at - s.off
			if rel < prev || rel >= len(region) || region[rel] != 0 {
				return errSlow
			}
			e.write(region[prev:rel])
			i, k := binary.Uvarint(region[rel+1:])
			if k <= 0 || i >= uint64(len(e.drops)) || e.drops[i].end == 0 {
				return errSlow
			}
			if err := e.replay(f, e.drops[i]); err != nil {
				return err
			}
			prev = rel + 1 + k
		}
		e.write(region[prev:])
		e.release(s)
		return nil
	}
	if len(e.drops) == 0 || !e.conts[s.c].root {
		for _, p := range e.pieces {
			e.write(p)
		}
		e.release(s)
		return nil
	}
	f, err := os.Open(e.path)
	if err != nil {
		return errSlow
	}
	defer f.Close()
	for _, p := range e.pieces {
		if len(p) == 0 || p[0] != 0 {
			e.write(p)
			continue
		}
		i, k := binary.Uvarint(p[1:])
		if k <= 0 || 1+k != len(p) || i >= uint64(len(e.drops)) || e.drops[i].end == 0 {
			return errSlow
		}
		if err := e.replay(f, e.drops[i]); err != nil {
			return err
		}
	}
	e.release(s)
	return nil
}

// replay encodes a dropped list value again from its bytes, straight into
// the hash: its items stream as those of a list result do. The memo holds
// every entry a GET in it can read (no index is written twice, pass 1
// made sure), with the values the first pass gave them.
func (e *fastEnc) replay(ra io.ReaderAt, d dropRec) error {
	e.h.Write(e.out)
	e.out = e.out[:0]
	sub := &fastEnc{opt: e.opt, memo: e.memo, h: e.h, nmemo: d.memo0, proto: e.proto, path: e.path, size: e.size,
		scan: &fastScanResult{rootList: 0, rootLen: d.n, memoize: e.scan.memoize, live: e.scan.live}}
	rd := pickle.NewReaderAt(ra, e.size, e.path, d.start)
	rd.NewHash = e.opt.Algo.New
	rd.Borrow = true
	var o pickle.Op
	for rd.Offset() < d.end {
		if err := rd.NextInto(&o); err != nil {
			return errSlow
		}
		sub.opOff = o.Offset
		stop, err := sub.step(&o)
		if err != nil || stop || int64(len(sub.arena)) > arenaExpansion*e.size+arenaSlack {
			return errSlow
		}
	}
	if rd.Offset() != d.end || len(sub.stack) != 1 || len(sub.marks) != 0 {
		return errSlow
	}
	if s := sub.stack[0]; s.c < 0 || !sub.conts[s.c].stream || sub.conts[s.c].n != d.n || len(sub.arena) != s.off {
		return errSlow
	}
	e.h.Write(sub.out)
	return nil
}
