package canon

// Pass 1 of the streaming hash (see fast.go): the opcodes, their integer
// arguments and a stack of small handles; what pass 2 must know first.

import (
	"io"
	"slices"

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
}

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

// setBit sets bit i of the bitset b, growing it.
func setBit(b []uint64, i int64) []uint64 {
	w := uint64(i >> 6)
	if w >= uint64(len(b)) {
		b = growMut(b, w)
	}
	b[w] |= 1 << (i & 63)
	return b
}

func fastScan(path string) (*fastScanResult, int64, error) {
	f, size, done, err := openBare(path)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	return fastScanFrom(f, size, path, done)
}

// fastScanFrom is pass 1 over f (size bytes, -1: not known), named path;
// done reports an error of f's source at the end.
func fastScanFrom(f io.Reader, size int64, path string, done func() error) (*fastScanResult, int64, error) {
	rd := pickle.NewReader(f, size, path)
	rd.Borrow = true
	res := &fastScanResult{rootList: -1}
	st := &scanState{res: res, bottom: -1, stateTarget: -1}
	var (
		stack []int32 // list index, or -1
		marks []int
		memo  int8 // 0 none yet, 1 MEMOIZE, 2 PUT
		nmemo int64
		live  []uint64 // res.live
	)
	var puts []uint64 // PUT indices written (one written twice: no rootVals)
	// mut: the memo indices whose last write stored a mutable object (a
	// handle other than -1). Pass 2 gives up at a GET of one (it reads
	// only pure values from the memo): pass 1 gives up there first, so
	// that a shared or cyclic structure does not pay for a pass 2 it cannot
	// finish (the cost shape cycle_dict: 400 -> 245 MB, the store path's
	// own peak, no longer after pass 2's)
	var mut []uint64
	track := !noScanMut
	dupPut := false
	// Pass 1 needs the opcodes and their integer arguments only: Skim
	// reads them in batches without decoding short strings (pass 2 checks
	// those, and gives up on what the reader refuses). The loop keeps its
	// state in locals (no closure: a variable a closure captures lives in
	// memory) and handles each opcode inline.
	batch := make([]pickle.Skimmed, 512)
	var have, next int
	var failed error
	var maxStack, maxMarks int // res's, kept in registers meanwhile
	deepAt := maxFastOpen      // the stack depth at which the open containers are counted next
	for {
		if next == have {
			if failed != nil {
				return nil, 0, errSlow
			}
			if maxStack >= deepAt {
				// (once a batch: the loop stays as it was)
				if openContainers(stack) > maxFastOpen {
					return nil, 0, errSlow
				}
				deepAt = 2 * maxStack
			}
			have, failed = rd.Skim(batch)
			next = 0
			if have == 0 {
				return nil, 0, errSlow
			}
		}
		o := &batch[next]
		next++
		maxStack = max(maxStack, len(stack))
		maxMarks = max(maxMarks, len(marks))
		fence := 0
		if len(marks) > 0 {
			fence = marks[len(marks)-1]
		}
		switch o.Code {
		case pickle.PROTO:
			if o.Int > pickle.HighestProtocol {
				return nil, 0, errSlow
			}
		case pickle.FRAME:
		case pickle.STOP:
			if len(stack) <= fence || !rd.AtEOF() {
				return nil, 0, errSlow
			}
			top := stack[len(stack)-1]
			if top >= 0 && top == st.bottom {
				res.rootList, res.rootLen = top, st.bcount
			}
			switch {
			case dupPut || st.tooMany:
				res.rootVals = nil
			case top == -2:
			case top == -4 && st.nState == 1 && st.stateBuilt == 1 && st.stateTarget == st.nCalls0:
				res.rootVals, res.stateVals = st.stateVals, true
			default:
				res.rootVals = nil
			}
			res.memoize = memo == 1
			res.maxStack, res.maxMarks = maxStack, maxMarks
			res.live = live
			if done() != nil {
				return nil, 0, errSlow
			}
			return res, size, nil
		case pickle.MARK:
			marks = append(marks, len(stack))
		case pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE, pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2,
			pickle.LONG, pickle.LONG1, pickle.LONG4, pickle.FLOAT, pickle.BINFLOAT,
			pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
			pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8,
			pickle.EMPTY_TUPLE, pickle.GLOBAL:
			stack = append(stack, -1)
		case pickle.BYTEARRAY8, pickle.EMPTY_SET:
			stack = append(stack, mutable)
		case pickle.EMPTY_DICT:
			switch {
			case len(stack) == 0:
				stack = append(stack, -2)
			case len(stack) == 1 && stack[0] == -4:
				st.nState++
				stack = append(stack, -3)
			default:
				stack = append(stack, mutable)
			}
		case pickle.EMPTY_LIST:
			stack = append(stack, st.newList(len(stack), 0))
		case pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT:
			if len(marks) == 0 {
				return nil, 0, errSlow
			}
			p := marks[len(marks)-1]
			marks = marks[:len(marks)-1]
			if p > len(stack) {
				return nil, 0, errSlow
			}
			k := len(stack) - p
			stack = stack[:p]
			switch o.Code {
			case pickle.LIST:
				stack = append(stack, st.newList(len(stack), int64(k)))
			case pickle.DICT:
				stack = append(stack, mutable)
			default:
				stack = append(stack, -1)
			}
		case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
			c := int(o.Code-pickle.TUPLE1) + 1
			if len(stack)-c < fence {
				return nil, 0, errSlow
			}
			stack = append(stack[:len(stack)-c], -1)
		case pickle.APPEND:
			if len(stack)-1 <= fence {
				return nil, 0, errSlow
			}
			stack = stack[:len(stack)-1]
			if t := stack[len(stack)-1]; t >= 0 && t == st.bottom {
				st.bcount++
			}
		case pickle.SETITEM:
			if len(stack)-2 <= fence {
				return nil, 0, errSlow
			}
			if t, v := stack[len(stack)-3], stack[len(stack)-1]; (t == -2 || t == -3) && v >= 0 {
				st.rootVal(t, v)
			}
			stack = stack[:len(stack)-2]
		case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS:
			if len(marks) == 0 {
				return nil, 0, errSlow
			}
			p := marks[len(marks)-1]
			marks = marks[:len(marks)-1]
			if p > len(stack) {
				return nil, 0, errSlow
			}
			fence = 0
			if len(marks) > 0 {
				fence = marks[len(marks)-1]
			}
			if p <= fence {
				return nil, 0, errSlow
			}
			t := stack[p-1]
			switch o.Code {
			case pickle.SETITEMS:
				if t == -2 || t == -3 {
					for i := p + 1; i < len(stack); i += 2 {
						if v := stack[i]; v >= 0 {
							st.rootVal(t, v)
						}
					}
				}
			case pickle.APPENDS:
				if t >= 0 && t == st.bottom {
					st.bcount += int64(len(stack) - p)
				}
			}
			stack = stack[:p]
		case pickle.STACK_GLOBAL, pickle.REDUCE, pickle.NEWOBJ:
			if len(stack)-2 < fence {
				return nil, 0, errSlow
			}
			stack = stack[:len(stack)-2]
			if o.Code != pickle.STACK_GLOBAL && len(stack) == 0 {
				st.nCalls0++
				stack = append(stack, -4)
			} else if o.Code != pickle.STACK_GLOBAL {
				stack = append(stack, mutable)
			} else {
				stack = append(stack, -1)
			}
		case pickle.BUILD:
			if len(stack)-2 < fence {
				return nil, 0, errSlow
			}
			if stack[len(stack)-1] == -3 && stack[len(stack)-2] == -4 {
				st.stateBuilt++
				st.stateTarget = st.nCalls0
			}
			stack = stack[:len(stack)-1]
		case pickle.MEMOIZE, pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT:
			if len(stack) <= fence {
				return nil, 0, errSlow
			}
			i := nmemo
			if o.Code == pickle.MEMOIZE {
				if memo == 2 {
					return nil, 0, errSlow
				}
				memo = 1
				nmemo++
			} else {
				if memo == 1 || o.Int < 0 || o.Int >= maxFastMemo || o.Big {
					return nil, 0, errSlow
				}
				memo = 2
				i = o.Int
				w, b := uint64(i>>6), uint64(1)<<(i&63)
				if w < uint64(len(puts)) && puts[w]&b != 0 {
					dupPut = true
				}
				puts = setBit(puts, i)
			}
			if !track {
				break
			}
			// the write's mutable bit
			w, b := uint64(i>>6), uint64(1)<<(i&63)
			if stack[len(stack)-1] != -1 {
				if w >= uint64(len(mut)) {
					mut = growMut(mut, w)
				}
				mut[w] |= b
			} else if w < uint64(len(mut)) {
				mut[w] &^= b
			}
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			i := o.Int
			if i < 0 || i >= maxFastMemo || o.Big || (uint64(i>>6) < uint64(len(mut)) && mut[i>>6]&(1<<(i&63)) != 0) {
				return nil, 0, errSlow
			}
			if w := uint64(i >> 6); w < uint64(len(live)) {
				live[w] |= 1 << (i & 63) // (most GETs: no call)
			} else {
				live = setBit(live, i)
			}
			stack = append(stack, -1)
		default:
			return nil, 0, errSlow
		}
	}
}
