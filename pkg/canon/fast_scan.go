package canon

// Pass 1 of the streaming hash (see fast.go): the opcodes, their integer
// arguments and a stack of small handles; what pass 2 must know first.

import (
	"io"
	"slices"
	"sync/atomic"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

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
	memoize   bool // the stream memoises with MEMOIZE (else PUT)
	// the most values on the stack and open MARKs at once (pass 2 sizes
	// its stacks once)
	maxStack, maxMarks int
	live               []uint64 // bitset: memo indices some GET reads
	// allLive: every memo index counts as read (a writer's hint, in place
	// of live: fast_follow.go)
	allLive bool
	// segs: where pass 2 may split the items of the list result among
	// goroutines (fast_par.go), in file order, at least segBytes apart;
	// nil when it may not (no list result, PUT memo writes)
	segs  []segMark
	nmemo int64 // the MEMOIZEs of the stream
}

// segMark is a place right after an APPENDS to the list result whose MARK
// lay right above it: the stack holds that list alone, no MARK is open.
// Pass 2's state there is the list and what it counts.
type segMark struct {
	off    int64 // the offset after the APPENDS
	nmemo  int64 // the MEMOIZEs before it
	nlists int32 // the lists made before it
	proto  int   // the protocol the last PROTO before it gave
}

// segBytes is the least distance in the file between two segMarks: a
// segment's hand-over costs a few microseconds, and its output is held
// until it is hashed (a variable: tests split small files).
var segBytes int64 = 128 << 10

func (s *fastScanResult) isLive(i int64) bool {
	return i >= 0 && (s.allLive || i>>6 < int64(len(s.live)) && s.live[i>>6]&(1<<(i&63)) != 0)
}

// mutable is pass 1's handle of a mutable object other than a list (a
// dict, set, bytearray or call result; lists have handles of their own, and
// so have the dicts and the call at the bottom of the stack, -2 to -4).
const mutable int32 = -5

// noScanMut turns pass 1's check of GETs of mutable objects off (tests: pass
// 2 must then give up wherever pass 1 did).
var noScanMut bool

// growMut makes room in the bitset m for word w (doubling; not inlined, so
// that the memo writes stay short).
//
//go:noinline
func growMut(m []uint64, w uint64) []uint64 {
	return slices.Grow(m, int(w)+1-len(m))[:w+1]
}

// maxFastMemo bounds the memo indices the fast path tracks in a bitset.
const maxFastMemo = 1 << 28

// maxFastOpen bounds the containers (lists, dicts, sets, calls) open on
// the stack at once that the fast path takes: pass 2 holds a stack slot and
// a container record for each (40 + 96 bytes), more than the graph path's
// records and tables for the same nesting. Pass 1 counts them each time the
// stack doubles past this depth, and gives up past it. Cost shapes
// nest_dict_setitem (a million open dicts) and nest_list_append (a million
// open lists): 295 -> 207 MB and 218 -> 115 MB, and less CPU.
const maxFastOpen = 1 << 16

// openContainers counts the handles on pass 1's stack that pass 2 opens a
// container for (every one but a plain value's -1).
func openContainers(stack []int32) int {
	n := 0
	for _, h := range stack {
		if h != -1 {
			n++
		}
	}
	return n
}

// maxRootVals: a dict result with more list values than this keeps them
// all in memory (each dropped value is read again with a seek of its own).
const maxRootVals = 64

// scanState is what pass 1 keeps besides its stack: the lists, dicts and
// calls built at the bottom of the stack (see fastScan).
type scanState struct {
	res *fastScanResult
	// the list built last at the bottom of the stack (only one can be
	// there at a time: a later one means it was consumed) and its item
	// count; bottom -1 when none
	bottom int32
	bcount int64
	nlists int32
	// A call built at the bottom is -4, and a dict built right above it
	// -3: its lists too are noted (in stateVals) and kept out of memory when
	// that dict is the call's one BUILD state and the call the result.
	tooMany              bool
	stateVals            map[int32]bool
	nState, stateBuilt   int
	nCalls0, stateTarget int // calls built at the bottom; the one the state went to
}

// newList is the handle of a list made at stack position pos with n items.
// Only a list built at the bottom of the stack can be streamed as the
// result: its count is kept (lists count in creation order, as pass 2
// counts them). A dict built at the bottom is -2 on the stack: lists set
// as its values are noted in rootVals.
func (st *scanState) newList(pos int, n int64) int32 {
	idx := st.nlists
	st.nlists++
	if pos == 0 {
		st.bottom, st.bcount = idx, n
		st.res.segs = st.res.segs[:0] // (marks of an earlier bottom list)
	}
	return idx
}

// rootVal notes the list v set as a value in the dict t (-2: the result;
// -3: the state of the call result); the caller checks t and v >= 0.
//
//go:noinline
func (st *scanState) rootVal(t, v int32) {
	if st.tooMany {
		return
	}
	m := &st.res.rootVals
	if t == -3 {
		m = &st.stateVals
	}
	if *m == nil {
		*m = map[int32]bool{}
	}
	(*m)[v] = true
	st.tooMany = len(*m) > maxRootVals
}

// segMark notes a place where pass 2 may split the list result (see
// segMark), when it lies segBytes past the last one noted.
func (st *scanState) segMark(off, nmemo int64, proto int) {
	segs := st.res.segs
	if n := len(segs); n > 0 && off-segs[n-1].off < segBytes || n == 0 && off < segBytes {
		return
	}
	st.res.segs = append(segs, segMark{off: off, nmemo: nmemo, nlists: st.nlists, proto: proto})
}

// setBit sets bit i of the bitset b, growing it.
func setBit(b []uint64, i int64) []uint64 {
	w := uint64(i >> 6)
	if w >= uint64(len(b)) {
		b = growMut(b, w)
	}
	b[w] |= 1 << (i & 63)
	return b
}

// scanWindow bounds the bytes pass 1 decodes from a window before it takes
// the next one: the stack's depth is checked (maxFastOpen) once a window.
const scanWindow = 4 << 10

// scanArg marks the opcodes whose integer argument pass 1 reads (the
// others' it skips).
var scanArg = [256]bool{pickle.PROTO: true, pickle.BINPUT: true, pickle.LONG_BINPUT: true,
	pickle.BINGET: true, pickle.LONG_BINGET: true}

// scanHot is the state pass 1 changes at most opcodes: what scanHot.run
// keeps in registers.
type scanHot struct {
	stack []int32 // list index, or a handle (mutable, -1 to -4)
	marks []int
	live  []uint64 // res.live
	// mut: the memo indices whose last write stored a mutable object (a
	// handle other than -1). Pass 2 gives up at a GET of one (it reads
	// only pure values from the memo): pass 1 gives up there first, so
	// that a shared or cyclic structure does not pay for a pass 2 it cannot
	// finish (the cost shape cycle_dict: 400 -> 245 MB, the store path's
	// own peak, no longer after pass 2's)
	mut                []uint64
	nmemo              int64 // MEMOIZE's next index
	maxStack, maxMarks int   // res's
	track              bool  // mut is kept (!noScanMut)
	// memoize: the stream memoises with MEMOIZE already (run takes
	// MEMOIZE then); bottom: scanState.bottom, for run
	memoize bool
	bottom  int32
}

// Pass 1's opcodes that scanHot.run takes, by class (scanRun: 0, the rest).
const (
	runPush    = 1 + iota // a plain value: push -1
	runMutable            // EMPTY_SET, BYTEARRAY8; EMPTY_DICT above the bottom
	runMark
	runMemoize
	runGet   // BINGET, LONG_BINGET
	runTuple // TUPLE1 to TUPLE3
	runPopMark
)

// scanRun classes the opcode bytes for scanHot.run; 0: the general loop
// of fastScanFrom.
var scanRun = func() (t [256]uint8) {
	for _, c := range []pickle.Opcode{pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE, pickle.BININT, pickle.BININT1,
		pickle.BININT2, pickle.LONG1, pickle.BINFLOAT, pickle.SHORT_BINUNICODE, pickle.SHORT_BINBYTES,
		pickle.EMPTY_TUPLE} {
		t[c] = runPush
	}
	t[pickle.EMPTY_SET], t[pickle.BYTEARRAY8], t[pickle.EMPTY_DICT] = runMutable, runMutable, runMutable
	t[pickle.MARK], t[pickle.MEMOIZE] = runMark, runMemoize
	t[pickle.BINGET], t[pickle.LONG_BINGET] = runGet, runGet
	t[pickle.TUPLE1], t[pickle.TUPLE2], t[pickle.TUPLE3] = runTuple, runTuple, runTuple
	t[pickle.APPENDS], t[pickle.SETITEMS], t[pickle.ADDITEMS] = runPopMark, runPopMark, runPopMark
	return t
}()

// run is the inner loop of pass 1 over the most common opcodes of a table:
// from win[at] (a window: pickle.SkimWindow), while each is one that
// fastScanFrom's general switch would take the same way without a call
// (no stack, bitset or record to grow, no list or call built at the
// bottom, no rootVals to note, no error), it does what that switch does
// and goes on; it returns the offset of the first other opcode, for the
// general loop. So its state stays in registers (a call would spill it).
func (h *scanHot) run(win []byte, at int, th int64) int {
	// (the fewer values live in the loop, the fewer it keeps in memory:
	// the maxima, MARK's fence and the flags are read and written
	// through h on the opcodes that need them)
	stack, marks, live, mut, nmemo := h.stack, h.marks, h.live, h.mut, h.nmemo
loop:
	for at < len(win) {
		k, ok := pickle.SkimOp(win, at, th)
		if !ok {
			break
		}
		c := win[at]
		switch scanRun[c] {
		case runPush, runMutable:
			v := int32(-1)
			if scanRun[c] == runMutable {
				if c == byte(pickle.EMPTY_DICT) && (len(stack) == 0 || len(stack) == 1 && stack[0] == -4) {
					break loop
				}
				v = mutable
			}
			if len(stack) == cap(stack) {
				break loop
			}
			stack = stack[:len(stack)+1]
			stack[len(stack)-1] = v
		case runMark:
			if len(marks) == cap(marks) {
				break loop
			}
			marks = marks[:len(marks)+1]
			marks[len(marks)-1] = len(stack)
			h.maxMarks = max(h.maxMarks, len(marks))
		case runMemoize:
			if !h.memoize || len(stack) <= fenceOf(marks) {
				break loop
			}
			w, b := uint64(nmemo>>6), uint64(1)<<(nmemo&63)
			if stack[len(stack)-1] == -1 {
				if w < uint64(len(mut)) {
					mut[w] &^= b
				}
			} else if h.track {
				if w >= uint64(len(mut)) {
					break loop
				}
				mut[w] |= b
			}
			nmemo++
		case runGet:
			i := pickle.SkimArg(win, at)
			w, b := uint64(i>>6), uint64(1)<<(i&63)
			if len(stack) == cap(stack) || i >= maxFastMemo || w >= uint64(len(live)) || w < uint64(len(mut)) && mut[w]&b != 0 {
				break loop
			}
			live[w] |= b
			stack = stack[:len(stack)+1]
			stack[len(stack)-1] = -1
		case runTuple:
			n := int(c-byte(pickle.TUPLE1)) + 1
			if len(stack)-n < fenceOf(marks) {
				break loop
			}
			h.maxStack = max(h.maxStack, len(stack))
			stack = stack[:len(stack)-n+1]
			stack[len(stack)-1] = -1
		case runPopMark:
			if len(marks) == 0 {
				break loop
			}
			p := marks[len(marks)-1]
			if p > len(stack) || p <= fenceOf(marks[:len(marks)-1]) {
				break loop
			}
			t := stack[p-1]
			if c == byte(pickle.SETITEMS) && (t == -2 || t == -3) || c == byte(pickle.APPENDS) && t >= 0 && t == h.bottom {
				break loop
			}
			h.maxStack = max(h.maxStack, len(stack))
			stack, marks = stack[:p], marks[:len(marks)-1]
		default:
			break loop
		}
		at += 1 + k
	}
	h.stack, h.marks, h.live, h.mut, h.nmemo = stack, marks, live, mut, nmemo
	h.maxStack = max(h.maxStack, len(stack))
	return at
}

// fenceOf is the stack position of the innermost MARK in marks, 0 with none.
func fenceOf(marks []int) int {
	if len(marks) == 0 {
		return 0
	}
	return marks[len(marks)-1]
}

func fastScan(path string) (*fastScanResult, int64, error) {
	f, size, done, err := openBare(path)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if scanSplits(size) {
		return fastScanSplit(f, size, path, done)
	}
	return fastScanFrom(f, size, path, done)
}

// fastScanFrom is pass 1 over f (size bytes, -1: not known), named path;
// done reports an error of f's source at the end.
func fastScanFrom(f io.Reader, size int64, path string, done func() error) (*fastScanResult, int64, error) {
	p := newPass1(pickle.NewReader(f, size, path))
	if _, err := p.scan(-1, nil); err != nil {
		return nil, 0, err
	}
	return p.finish(size, done)
}

// pass1 is pass 1's state between two opcodes: what fastScanFrom's loop
// keeps (a split pass 1 pauses the loop at a place and goes on from it:
// fast_scan_split.go).
type pass1 struct {
	rd     *pickle.Reader
	res    *fastScanResult
	st     *scanState
	h      scanHot
	memo   int8     // 0 none yet, 1 MEMOIZE, 2 PUT
	puts   []uint64 // PUT indices written (one written twice: no rootVals)
	dupPut bool
	proto  int
	deepAt int   // the h.stack depth at which the open containers are counted next
	top    int32 // the handle on top of the stack at STOP
	missed bool  // scan passed its stop
	// quit, when set, stops scan at its next window (errSlow): the
	// second half of a split pass 1 that is no longer wanted
	quit *atomic.Bool
}

func newPass1(rd *pickle.Reader) *pass1 {
	rd.Borrow = true
	res := &fastScanResult{rootList: -1}
	p := &pass1{rd: rd, res: res, st: &scanState{res: res, bottom: -1, stateTarget: -1}, deepAt: maxFastOpen}
	p.h.track = !noScanMut
	return p
}

// finish fills in the result of a pass 1 that read STOP (scan returned
// false).
func (p *pass1) finish(size int64, done func() error) (*fastScanResult, int64, error) {
	res, st, h := p.res, p.st, &p.h
	top := p.top
	if top >= 0 && top == st.bottom {
		res.rootList, res.rootLen = top, st.bcount
	}
	switch {
	case p.dupPut || st.tooMany:
		res.rootVals = nil
	case top == -2:
	case top == -4 && st.nState == 1 && st.stateBuilt == 1 && st.stateTarget == st.nCalls0:
		res.rootVals, res.stateVals = st.stateVals, true
	default:
		res.rootVals = nil
	}
	res.memoize = p.memo == 1
	res.nmemo = h.nmemo
	if res.rootList < 0 || p.memo == 2 {
		res.segs = nil
	}
	res.maxStack, res.maxMarks = h.maxStack, h.maxMarks
	res.live = h.live
	if done() != nil {
		return nil, 0, errSlow
	}
	return res, size, nil
}

// scan runs pass 1 from where p is: to STOP (it returns false), or, when
// stop >= 0, to offset stop (it returns true there, between two opcodes).
// stopAt, when not nil, gives stop later: 0 until it is known. A stop the
// reader passes (not an opcode's start, or known too late) no longer
// counts: scan goes on to STOP, and says so in p.missed.
func (p *pass1) scan(stop int64, stopAt *atomic.Int64) (paused bool, err error) {
	rd, st, h := p.rd, p.st, &p.h
	memo, puts, dupPut, proto := p.memo, p.puts, p.dupPut, p.proto
	// Pass 1 needs the opcodes and their integer arguments only: it decodes
	// them straight from the reader's window (pickle.SkimWindow: no record
	// an opcode, short strings skipped, not decoded: pass 2 checks those,
	// and gives up on what the reader refuses) and reads the others with
	// NextInto. The loop keeps its state in locals (no closure: a variable
	// a closure captures lives in memory) and handles each opcode inline.
	var (
		win []byte // the window, decoded up to at
		at  int
		th  int64
		op  pickle.Op // an opcode the reader decodes itself
	)
	deepAt := p.deepAt
	for {
		k, ok := 0, false
		if at < len(win) {
			h.memoize, h.bottom = memo == 1, st.bottom
			at = h.run(win, at, th)
		}
		if at < len(win) {
			k, ok = pickle.SkimOp(win, at, th)
		}
		if !ok {
			// the window's end, or an opcode it does not give: a fresh
			// window, else the reader
			rd.SkimDone(at)
			if p.quit != nil && p.quit.Load() {
				return false, errSlow
			}
			if stop >= 0 {
				if stop == 0 {
					stop = stopAt.Load() // (0: not known yet; -1: none)
				}
				if off := rd.Offset(); stop > 0 && off >= stop {
					if off == stop {
						p.memo, p.puts, p.dupPut, p.proto, p.deepAt = memo, puts, dupPut, proto, deepAt
						return true, nil
					}
					stop, p.missed = -1, true
				}
			}
			if h.maxStack >= deepAt {
				// (once a window: the loop stays as it was)
				if openContainers(h.stack) > maxFastOpen {
					return false, errSlow
				}
				deepAt = 2 * h.maxStack
			}
			win, th = rd.SkimWindow()
			n := min(len(win), scanWindow)
			if stop > 0 {
				n = int(min(int64(n), stop-rd.Offset()))
			}
			win, at = win[:n], 0
			if len(win) > 0 {
				k, ok = pickle.SkimOp(win, 0, th)
			}
		}
		var (
			c   pickle.Opcode
			arg int64
			big bool
		)
		if ok {
			c = pickle.Opcode(win[at])
			if k > 0 && scanArg[c] {
				arg = pickle.SkimArg(win, at)
			}
			at += 1 + k
		} else {
			if rd.NextInto(&op) != nil {
				return false, errSlow
			}
			c, arg, big = op.Code, op.Int, op.Big != nil
			win = nil // (the reader moved on)
		}
		h.maxStack = max(h.maxStack, len(h.stack))
		h.maxMarks = max(h.maxMarks, len(h.marks))
		fence := 0
		if len(h.marks) > 0 {
			fence = h.marks[len(h.marks)-1]
		}
		switch c {
		case pickle.PROTO:
			if arg > pickle.HighestProtocol {
				return false, errSlow
			}
			proto = int(arg)
		case pickle.FRAME:
		case pickle.STOP:
			if len(h.stack) <= fence || !rd.AtEOF() {
				return false, errSlow
			}
			p.top = h.stack[len(h.stack)-1]
			p.memo, p.puts, p.dupPut, p.proto, p.deepAt = memo, puts, dupPut, proto, deepAt
			return false, nil
		case pickle.MARK:
			h.marks = grow.Push(h.marks, len(h.stack))
		case pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE, pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2,
			pickle.LONG, pickle.LONG1, pickle.LONG4, pickle.FLOAT, pickle.BINFLOAT,
			pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
			pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8,
			pickle.EMPTY_TUPLE, pickle.GLOBAL:
			h.stack = grow.Push(h.stack, -1)
		case pickle.BYTEARRAY8, pickle.EMPTY_SET:
			h.stack = grow.Push(h.stack, mutable)
		case pickle.EMPTY_DICT:
			switch {
			case len(h.stack) == 0:
				h.stack = grow.Push(h.stack, -2)
			case len(h.stack) == 1 && h.stack[0] == -4:
				st.nState++
				h.stack = grow.Push(h.stack, -3)
			default:
				h.stack = grow.Push(h.stack, mutable)
			}
		case pickle.EMPTY_LIST:
			h.stack = grow.Push(h.stack, st.newList(len(h.stack), 0))
		case pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT:
			if len(h.marks) == 0 {
				return false, errSlow
			}
			p := h.marks[len(h.marks)-1]
			h.marks = h.marks[:len(h.marks)-1]
			if p > len(h.stack) {
				return false, errSlow
			}
			k := len(h.stack) - p
			h.stack = h.stack[:p]
			switch c {
			case pickle.LIST:
				h.stack = grow.Push(h.stack, st.newList(len(h.stack), int64(k)))
			case pickle.DICT:
				h.stack = grow.Push(h.stack, mutable)
			default:
				h.stack = grow.Push(h.stack, -1)
			}
		case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
			n := int(c-pickle.TUPLE1) + 1
			if len(h.stack)-n < fence {
				return false, errSlow
			}
			h.stack = append(h.stack[:len(h.stack)-n], -1)
		case pickle.APPEND:
			if len(h.stack)-1 <= fence {
				return false, errSlow
			}
			h.stack = h.stack[:len(h.stack)-1]
			if t := h.stack[len(h.stack)-1]; t >= 0 && t == st.bottom {
				st.bcount++
			}
		case pickle.SETITEM:
			if len(h.stack)-2 <= fence {
				return false, errSlow
			}
			if t, v := h.stack[len(h.stack)-3], h.stack[len(h.stack)-1]; (t == -2 || t == -3) && v >= 0 {
				st.rootVal(t, v)
			}
			h.stack = h.stack[:len(h.stack)-2]
		case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS:
			if len(h.marks) == 0 {
				return false, errSlow
			}
			p := h.marks[len(h.marks)-1]
			h.marks = h.marks[:len(h.marks)-1]
			if p > len(h.stack) {
				return false, errSlow
			}
			fence = 0
			if len(h.marks) > 0 {
				fence = h.marks[len(h.marks)-1]
			}
			if p <= fence {
				return false, errSlow
			}
			t := h.stack[p-1]
			switch c {
			case pickle.SETITEMS:
				if t == -2 || t == -3 {
					for i := p + 1; i < len(h.stack); i += 2 {
						if v := h.stack[i]; v >= 0 {
							st.rootVal(t, v)
						}
					}
				}
			case pickle.APPENDS:
				if t >= 0 && t == st.bottom {
					st.bcount += int64(len(h.stack) - p)
					if p == 1 && len(h.marks) == 0 {
						off := rd.Offset()
						if ok {
							off += int64(at) // (decoded from the window, not yet consumed)
						}
						st.segMark(off, h.nmemo, proto)
					}
				}
			}
			h.stack = h.stack[:p]
		case pickle.STACK_GLOBAL, pickle.REDUCE, pickle.NEWOBJ:
			if len(h.stack)-2 < fence {
				return false, errSlow
			}
			h.stack = h.stack[:len(h.stack)-2]
			if c != pickle.STACK_GLOBAL && len(h.stack) == 0 {
				st.nCalls0++
				h.stack = grow.Push(h.stack, -4)
			} else if c != pickle.STACK_GLOBAL {
				h.stack = grow.Push(h.stack, mutable)
			} else {
				h.stack = grow.Push(h.stack, -1)
			}
		case pickle.BUILD:
			if len(h.stack)-2 < fence {
				return false, errSlow
			}
			if h.stack[len(h.stack)-1] == -3 && h.stack[len(h.stack)-2] == -4 {
				st.stateBuilt++
				st.stateTarget = st.nCalls0
			}
			h.stack = h.stack[:len(h.stack)-1]
		case pickle.MEMOIZE, pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT:
			if len(h.stack) <= fence {
				return false, errSlow
			}
			i := h.nmemo
			if c == pickle.MEMOIZE {
				if memo == 2 {
					return false, errSlow
				}
				memo = 1
				h.nmemo++
			} else {
				if memo == 1 || arg < 0 || arg >= maxFastMemo || big {
					return false, errSlow
				}
				memo = 2
				i = arg
				w, b := uint64(i>>6), uint64(1)<<(i&63)
				if w < uint64(len(puts)) && puts[w]&b != 0 {
					dupPut = true
				}
				puts = setBit(puts, i)
			}
			if !h.track {
				break
			}
			// the write's mutable bit
			w, b := uint64(i>>6), uint64(1)<<(i&63)
			if h.stack[len(h.stack)-1] != -1 {
				if w >= uint64(len(h.mut)) {
					h.mut = growMut(h.mut, w)
				}
				h.mut[w] |= b
			} else if w < uint64(len(h.mut)) {
				h.mut[w] &^= b
			}
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			i := arg
			if i < 0 || i >= maxFastMemo || big || (uint64(i>>6) < uint64(len(h.mut)) && h.mut[i>>6]&(1<<(i&63)) != 0) {
				return false, errSlow
			}
			if w := uint64(i >> 6); w < uint64(len(h.live)) {
				h.live[w] |= 1 << (i & 63) // (most GETs: no call)
			} else {
				h.live = setBit(h.live, i)
			}
			h.stack = grow.Push(h.stack, -1)
		default:
			return false, errSlow
		}
	}
}
