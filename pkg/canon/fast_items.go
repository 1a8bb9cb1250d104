package canon

// The fast hasher's passes, seen item by item, for pk diff.
//
// ScanItems and ItemScan.Items run the two passes of fast.go (with hooks)
// over a bare pickle file, plain or compressed, of what the streaming hasher
// takes (plain data, globals, calls of globals no rule rewrites, NEWOBJ,
// BUILD and the other operations on call results), and, besides the
// digest, record what pk diff needs to locate differences without the
// graph: for a result that is a list or a dict built at the bottom of the
// stack, or an object whose one operation is a BUILD of a dict (its
// attributes), or, with a focus, for one large list or dict inside it, each
// item (list) or entry (dict) with a fingerprint of its canonical encoding and
// the byte range that builds it; and, for every memo entry some GET reads
// (a str, a tuple, a class global of a million instances), the byte ranges
// its values were built in (for a STACK_GLOBAL, from its module string on,
// with the memo writes of the strings). pk diff aligns the
// fingerprints of two files and parses only the ranges of the few items
// that differ (FastItems.Parse: the machine's range mode,
// pickle.ParseSpans; for a compressed file, over those ranges decompressed
// again).

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	"slices"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/zeebo/xxh3"
)

// FastItems is what ItemScan.Items learns of one file.
type FastItems struct {
	Result *Result // the digest, as HashFile gives it
	Scan   *ItemScan
	Path   string
	Size   int64 // of the stream (decompressed)
	Proto  int   // the last PROTO (0 without one), as pickle.Stream.Proto
	// Sets counts sets and frozensets with more than one item, Dicts dicts
	// with more than one entry (as pk diff's reasons count graph nodes).
	Sets, Dicts int
	// Root is 'l' when the result is a list, 'd' a dict, built at the
	// bottom of the stack (its items are then in Items), 'o' an object: a
	// call (REDUCE, NEWOBJ) at the bottom of the stack with one operation,
	// a BUILD whose state is a dict built above it (its entries are then
	// in Items, and Head fingerprints the callable and arguments), else 0.
	Root byte
	Head [16]byte
	// sums are the fingerprints (XXH3-128) of the canonical encodings of
	// the list's items, or of the dict's entries' values, in stream order,
	// from item base on (a pass in lockstep with the other file's drops
	// the items both have the same: Lockstep); Span gives the byte range
	// that builds each (a dict entry: key and value).
	sums  [][16]byte
	base  int
	spans spanTab
	// Keys holds the canonical encodings of the dict's keys, one after the
	// other; KeyEnd[i] is where key i ends.
	Keys   []byte
	KeyEnd []int
	// Spans is false when the file writes the memo in a way the range mode
	// does not reproduce (a PUT of a memo reference, two PUTs of one
	// value): the items can be compared, not parsed.
	Spans bool
	// Big holds, by index in Items, the items whose value is a list or
	// dict built over at least BigItemMin bytes: kind 'l' or 'd' and the
	// offset ItemScan.Items takes to record their items in turn.
	Big  map[int]BigItem
	defs map[int64][]memoDef
}

// BigItem is a large container item (see FastItems.Big).
type BigItem struct {
	Kind  byte
	Start int64
	Len   int64 // the bytes that build it
}

// BigItemMin is the size from which a container item is in FastItems.Big.
const BigItemMin = 1 << 20

// Len is the number of items (a dict: entries) recorded.
func (f *FastItems) Len() int { return f.base + len(f.sums) }

// Base is the first item whose fingerprint and range are kept: the items
// before it are the same in the other file (Lockstep). 0 without one.
func (f *FastItems) Base() int { return f.base }

// Sum is the fingerprint of item i (Base <= i < Len).
func (f *FastItems) Sum(i int) [16]byte { return f.sums[i-f.base] }

// SumsIn returns the fingerprints of items [i, j) (Base <= i <= j <= Len).
func (f *FastItems) SumsIn(i, j int) [][16]byte { return f.sums[i-f.base : j-f.base] }

// Span returns the byte range that builds item i, for pickle.ParseSpans.
func (f *FastItems) Span(i int) pickle.Span {
	start, l, memo := f.spans.at(i)
	return pickle.Span{Start: start, End: start + int64(l), MemoCount: int(memo), Keep: true}
}

// Key returns the canonical encoding of the key of dict entry i.
func (f *FastItems) Key(i int) []byte {
	lo := 0
	if i > 0 {
		lo = f.KeyEnd[i-1]
	}
	return f.Keys[lo:f.KeyEnd[i]]
}

// memoDef is one memo write of a value some GET reads: the range that
// built the value, up to the write.
type memoDef struct {
	start, end int64
	memo       int32
}

// FastItemsFile is fastHashFile with the items recorded; ok is false when
// the streaming hasher does not take the file (see fast.go) or the result
// is not the only value left on the stack.
func FastItemsFile(path string, opt Options) (*FastItems, bool) {
	s, ok := ScanItems(path, opt)
	if !ok {
		return nil, false
	}
	return s.Items(-1)
}

// ItemScan is pass 1 of FastItemsFile, for Items to run pass 2 (and again
// for the items of a large item).
type ItemScan struct {
	path string
	size int64 // as openBare gives it: -1 when compressed
	opt  Options
	scan *fastScanResult
	n    int64 // the stream's length, once Items(-1) has run
}

// ScanItems runs pass 1 over path; ok is false when the streaming path
// cannot take it (or it is compressed: offsets would not be file offsets).
func ScanItems(path string, opt Options) (*ItemScan, bool) {
	if noFast || path == "-" || opt.storageKeys != nil {
		return nil, false
	}
	scan, size, err := fastScan(path)
	if err != nil {
		return nil, false
	}
	return &ItemScan{path: path, size: size, opt: opt, scan: scan, n: size}, true
}

// ListResult reports whether the result is a list (whose items pass 2
// streams: it needs little memory; other results are held whole).
func (s *ItemScan) ListResult() bool { return s.scan.rootList >= 0 }

// ListLen is the item count of a list result (ListResult), else 0.
func (s *ItemScan) ListLen() int64 {
	if s.scan.rootList < 0 {
		return 0
	}
	return s.scan.rootLen
}

// Depth is the most values and open MARKs pass 1 saw on the stack at
// once: pass 2 holds a slot and a container record for each (a million
// nested lists, or a tuple of a million items built by MARK ... TUPLE),
// which a caller may weigh against another way of reading the file.
func (s *ItemScan) Depth() int { return s.scan.maxStack + s.scan.maxMarks }

// Items runs pass 2 and records the items of the result (focus -1), or of
// the list or dict that starts at offset focus (BigItems): Root then says
// its kind ('l', 'd'; 0 when nothing was added to it), and the pass stops
// where that container is consumed, without a digest (Result is nil),
// holding none of its items' encodings.
func (s *ItemScan) Items(focus int64) (*FastItems, bool) { return s.items(focus, 0, nil, 0) }

// BigItems is Items of the large container b: its items' records are
// sized from its bytes as the first ones come (itemTracker.room).
func (s *ItemScan) BigItems(b BigItem) (*FastItems, bool) { return s.items(b.Start, b.Len, nil, 0) }

// ItemsLockstep is Items(-1) of a list result (ListResult), run at the
// same time as the other file's through l (side 0 or 1): the items both
// lists begin with are dropped as they come (Lockstep, FastItems.Base).
// With l nil it is Items(-1).
func (s *ItemScan) ItemsLockstep(l *Lockstep, side int) (*FastItems, bool) {
	if l == nil {
		return s.Items(-1)
	}
	defer l.finish(side)
	if s.scan.rootList < 0 {
		return nil, false
	}
	return s.items(-1, 0, l, side)
}

// BigItemsLockstep is BigItems of a list, run at the same time as the
// other file's through l (side 0 or 1) as ItemsLockstep runs. With l nil
// it is BigItems.
func (s *ItemScan) BigItemsLockstep(b BigItem, l *Lockstep, side int) (*FastItems, bool) {
	if l != nil {
		defer l.finish(side)
	}
	return s.items(b.Start, b.Len, l, side)
}

// items is Items of the container of span bytes (0: not known) at focus,
// in lockstep through l when not nil.
func (s *ItemScan) items(focus, span int64, l *Lockstep, side int) (*FastItems, bool) {
	if focus >= 0 && s.n < 0 {
		return nil, false
	}
	t := &itemTracker{focus: focus, span: span, drop: -1, lock: l, side: side, res: &FastItems{Scan: s, Path: s.path, Size: s.n, Spans: true, Big: map[int]BigItem{}, defs: map[int64][]memoDef{}}}
	if s.scan.rootList >= 0 && focus < 0 && l == nil {
		n := int(min(s.scan.rootLen, max(s.size, 1<<20)/2))
		t.res.sums = make([][16]byte, 0, n)
		t.res.spans.reserve(n, 3)
	}
	sum, err := fastEncode(s.path, s.size, s.opt, s.scan, t)
	if t.done {
		return t.res, true
	}
	if err != nil || focus >= 0 {
		return nil, false
	}
	t.res.Result = docResult(s.opt, sum)
	s.n = t.res.Size
	return t.res, true
}

// itemTracker follows the fast encoder's stack with the byte range of
// every slot.
type itemTracker struct {
	focus int64 // the start of the container whose items are recorded; -1: the result
	span  int64 // focus: the bytes that build that container (0: not known)
	drop  int   // focus: the slot whose items to drop after the step, or -1
	done  bool  // focus: the container was consumed, all its items seen
	// built: the call at the bottom of the stack took as its first
	// operation a BUILD of the dict whose entries were recorded (Head set)
	built bool
	res   *FastItems
	stack []tslot
	marks []tmark
	// lock: a focus's items in lockstep with the other file's (side),
	// checked in at item checked last
	lock    *Lockstep
	side    int
	checked int
	lockOff bool // the lists differ: nothing more is dropped
	// pend: the entries whose values pass 2 dropped, by index in its
	// drops (dropSum)
	pend map[int]int
}

type tslot struct {
	start, end int64
	memo       int32
	get        bool // a memo reference
	memod      bool // written to the memo
}

type tmark struct {
	off  int64
	memo int32
}

// memoNow is the memo's size so far (MEMOIZE streams; PUT streams never
// read it).
func (t *itemTracker) memoNow(e *fastEnc) int32 {
	if e.nmemo > math.MaxInt32 {
		t.res.Spans = false
	}
	return int32(e.nmemo)
}

// before runs before the encoder steps o: it counts the dicts and sets o
// consumes and, when o adds to the result, seals and records the items.
func (t *itemTracker) before(e *fastEnc, o *pickle.Op) error {
	// (An opcode the encoder does not take makes its step give up right
	// after this: pass 1 refused the file already.)
	n := len(e.stack)
	x := -1 // first slot consumed
	switch o.Code {
	case pickle.APPEND, pickle.BUILD:
		x = n - 1
	case pickle.STACK_GLOBAL, pickle.REDUCE, pickle.NEWOBJ:
		x = n - 2
	case pickle.SETITEM:
		x = n - 2
	case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS, pickle.LIST, pickle.DICT, pickle.TUPLE, pickle.FROZENSET:
		if len(e.marks) > 0 {
			x = e.marks[len(e.marks)-1]
		}
	case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
		x = n - (int(o.Code-pickle.TUPLE1) + 1)
	case pickle.STOP:
		x = n - 1
		if n != 1 || len(e.marks) > 0 {
			return errSlow // values left under the result
		}
		t.res.Size = o.Offset + o.Len
		switch s := e.stack[0]; {
		case t.focus >= 0:
		case s.c >= 0 && s.kind == fkList:
			t.res.Root = 'l'
		case s.c >= 0 && s.kind == fkDict:
			t.res.Root = 'd'
		case s.c >= 0 && s.kind == fkCall && t.built:
			if ops := e.conts[s.c].ops; len(ops) == 1 && ops[0].tag == 'b' && ops[0].n == 1 {
				t.res.Root = 'o'
			}
		}
	}
	if x < 0 || x > n {
		return nil // the encoder reports it
	}
	if t.focus >= 0 && len(t.stack) == n {
		for _, s := range t.stack[x:] {
			if s.start == t.focus {
				t.done = true // every item of the focus was recorded
				return errSlow
			}
		}
	}
	for _, s := range e.stack[x:] {
		if s.c < 0 {
			continue
		}
		switch c := e.conts[s.c]; s.kind {
		case fkDict:
			if c.n > 1 {
				t.res.Dicts++
			}
		case fkSet:
			if c.n > 1 {
				t.res.Sets++
			}
		}
	}
	if o.Code == pickle.FROZENSET && n-x > 1 {
		t.res.Sets++
	}
	if o.Code == pickle.BUILD && t.focus < 0 && n == 2 && t.objState(e) {
		// the state of the object result: its entries were recorded
		// (the call's bytes are its callable's and arguments')
		s0 := e.stack[0]
		head := append([]byte{e.conts[s0.c].form}, e.encoding(s0.off, e.stack[1].off, [2]int32{s0.kh, s0.kt})...)
		t.res.Head = Fingerprint(head)
		t.built = true
		return nil
	}
	// items added to the slot at the bottom of the stack (or the focus),
	// or to the state of an object at the bottom
	tgt := x - 1
	if t.focus < 0 && tgt == 1 && t.objState(e) {
	} else if t.focus < 0 && tgt != 0 || tgt < 0 || tgt >= n || e.stack[tgt].c < 0 {
		return nil
	}
	if len(t.stack) != n {
		t.res.Spans = false // (after keeps the lengths equal)
		return errSlow
	}
	if t.focus >= 0 && t.stack[tgt].start != t.focus {
		return nil
	}
	var pairs bool
	switch {
	case e.stack[tgt].kind == fkList && (o.Code == pickle.APPEND || o.Code == pickle.APPENDS):
	case e.stack[tgt].kind == fkDict && (o.Code == pickle.SETITEM || o.Code == pickle.SETITEMS) && (n-x)%2 == 0:
		pairs = true
	default:
		return nil
	}
	if t.focus >= 0 {
		root := byte('l')
		if pairs {
			root = 'd'
		}
		if t.res.Root != 0 && t.res.Root != root {
			t.res.Spans = false
		}
		t.res.Root = root
		t.drop = tgt
	}
	enc := func(i int) []byte {
		s := e.stack[i]
		return e.encoding(s.off, e.slotEnd(i), [2]int32{s.kh, s.kt})
	}
	step := 1
	if pairs {
		step = 2
	}
	for i, k := x, t.res.Len(); i+step <= n; i, k = i+step, k+1 {
		v := i + step - 1
		if t.stack[v].end-t.stack[v].start < BigItemMin || e.stack[v].c < 0 {
			continue
		}
		switch e.stack[v].kind {
		case fkList:
			t.res.Big[k] = BigItem{Kind: 'l', Start: t.stack[v].start, Len: t.stack[v].end - t.stack[v].start}
		case fkDict:
			t.res.Big[k] = BigItem{Kind: 'd', Start: t.stack[v].start, Len: t.stack[v].end - t.stack[v].start}
		}
	}
	for i := x; i < n; i++ {
		// (sealFrom, but for the dropped values: the step releases them)
		if s := &e.stack[i]; s.c >= 0 && e.conts[s.c].drop == 0 {
			if err := e.seal(s, e.slotEnd(i)); err != nil {
				return err
			}
		}
	}
	t.room(o.Offset, (n-x)/step, pairs)
	for i := x; i+step <= n; i += step {
		first, last := t.stack[i], t.stack[i+step-1]
		l := last.end - first.start
		if l <= 0 || l > 1<<32-1 {
			t.res.Spans = false
		}
		t.res.spans.add(first.start, uint32(l), first.memo)
		if pairs {
			t.res.Keys = append(t.res.Keys, enc(i)...)
			t.res.KeyEnd = append(t.res.KeyEnd, len(t.res.Keys))
		}
		t.res.sums = append(t.res.sums, [16]byte{})
		if v := i + step - 1; e.stack[v].c >= 0 && e.conts[e.stack[v].c].drop > 0 {
			t.dropSum(e, v, t.res.Len()-1) // (set at the end)
		} else {
			t.setSum(t.res.Len()-1, xxh3.Hash128(enc(v)))
		}
	}
	if t.lock != nil && t.res.Len()-t.checked >= lockEvery {
		t.checked = t.res.Len()
		t.lockOff = t.lock.checkIn(t.side, t.res)
	}
	return nil
}

// dropsValues: the items of the result are recorded with the list values
// of a dict result dropped, as pk hash drops them (their encodings read
// again from the file: dropSum); a focus's items from their encodings.
func (t *itemTracker) dropsValues() bool { return t.focus < 0 }

// dropSum records that the entry about to be recorded (item k) holds the
// dropped value in slot v (a list value of the dict result, of which pass
// 2 keeps only a placeholder): its fingerprint is the hash of the value's
// encoding, which the digest reads again from the file at the end
// (fast_result.go). That replay also hashes it for the entry
// (replayedSum, end). A dict of one list of 600,000 rows held
// the list's encoding, 250 MB, while pk diff's first pass read it; then
// (session 46) it was read again here as well as for the digest
// (docs/engine.md §4, sessions 46 and 47).
func (t *itemTracker) dropSum(e *fastEnc, v, k int) {
	if t.pend == nil {
		t.pend = map[int]int{}
	}
	t.pend[int(e.conts[e.stack[v].c].drop-1)] = k
}

// replayedSum gives the digest's replay of dropped value i the entry that
// holds it.
func (t *itemTracker) replayedSum(i int) func(xxh3.Uint128) {
	k, ok := t.pend[i]
	if !ok {
		return nil
	}
	return func(sum xxh3.Uint128) {
		t.setSum(k, sum)
		delete(t.pend, i)
	}
}

// end checks that the digest read again every dropped value an entry
// holds. (Pass 2 gives up at a dict whose key is set twice, dictOrder, the
// one way a value could be dropped and not read; this gives up too.)
func (t *itemTracker) end(e *fastEnc) error {
	if len(t.pend) > 0 {
		return errSlow
	}
	return nil
}

// setSum sets item k's fingerprint to sum.
func (t *itemTracker) setSum(k int, sum xxh3.Uint128) {
	t.res.sums[k-t.res.base] = fingerprint(sum)
}

// room makes room in res.sums and res.spans (and KeyEnd, for pairs) for k
// more items recorded at offset at. A large container's items (BigItems)
// are sized from its bytes at the pace of the first thousand, plus a
// sixteenth, at most one record a byte of it (an item takes a byte or
// more); a pace that changes later, or a container of unknown bytes, grows
// them by doubling (grow.Room), not by append a quarter at a time, every
// step a copy of millions of records into pages faulted in again: pk diff
// of two dicts holding a list of 4 million floats 710 -> 350-376 MB, 8-9 ->
// 3.1-3.3 s of CPU (docs/engine.md §4, session 46). In lockstep, the items
// to come are sized only once the lists differ (until then they may be
// dropped as they come), and the items dropped are not counted.
func (t *itemTracker) room(at int64, k int, pairs bool) {
	sums := t.res.sums
	if len(sums)+k <= cap(sums) || len(sums) < 1024 && t.res.base == 0 {
		return
	}
	if t.focus < 0 && t.lockOff {
		// a list result's items: pass 1 counted them
		if p := int(t.res.Scan.scan.rootLen) - t.res.base; p > len(sums)+k {
			t.res.sums = grow.To(sums, p)
			t.res.spans.reserve(p-len(sums), t.res.spans.perItem()*17/16)
			return
		}
	}
	if done := at - t.focus; t.focus >= 0 && t.span > done && done > 0 && (t.lock == nil || t.lockOff) {
		// (in floating point: items times bytes may pass int64)
		all := float64(t.res.Len()+k) * float64(t.span) / float64(done) // (at ends the k)
		est := all - float64(t.res.base)
		if p := int(min(est+est/16, float64(t.span))); p > len(sums)+k {
			t.res.sums = grow.To(sums, p)
			t.res.spans.reserve(p-len(sums), t.res.spans.perItem()*17/16)
			if pairs {
				t.res.KeyEnd = grow.To(t.res.KeyEnd, p)
			}
			return
		}
	}
	t.res.sums = grow.Room(sums, k)
	t.res.spans.reserve(cap(t.res.sums)-len(sums), t.res.spans.perItem())
}

// objState reports whether stack[1] is a dict that may be the state of
// the call at the bottom of the stack (which has no operation yet).
func (t *itemTracker) objState(e *fastEnc) bool {
	if len(e.stack) < 2 {
		return false
	}
	s0, s1 := e.stack[0], e.stack[1]
	return s0.kind == fkCall && s0.c >= 0 && len(e.conts[s0.c].ops) == 0 && s1.kind == fkDict && s1.c >= 0
}

// after brings the tracker's stack in line with the encoder's after o.
func (t *itemTracker) after(e *fastEnc, o *pickle.Op) {
	if t.drop >= 0 {
		// the focus's items are recorded: their encodings go (the focus
		// pass computes no digest)
		if t.drop == len(e.stack)-1 && e.stack[t.drop].c >= 0 {
			s := &e.stack[t.drop]
			e.cut(s.off, s.r0)
			s.kh, s.kt = -1, -1
			e.conts[s.c].bounds = e.conts[s.c].bounds[:0]
			e.conts[s.c].vk = e.conts[s.c].vk[:0]
		}
		t.drop = -1
	}
	end := o.Offset + o.Len
	n0 := len(t.stack)
	created := -1 // where a new value was made
	switch o.Code {
	case pickle.PROTO:
		t.res.Proto = int(o.Int)
	case pickle.MARK:
		t.marks = grow.Push(t.marks, tmark{off: o.Offset, memo: t.memoNow(e)})
	case pickle.LIST, pickle.DICT, pickle.TUPLE, pickle.FROZENSET:
		if len(t.marks) == 0 {
			t.res.Spans = false
			break
		}
		mk := t.marks[len(t.marks)-1]
		t.marks = t.marks[:len(t.marks)-1]
		p := len(e.stack) - 1
		if p < 0 || p > n0 {
			t.res.Spans = false
			break
		}
		if n0 > p && (o.Code == pickle.LIST || o.Code == pickle.DICT) && (t.focus < 0 && p == 0 || t.focus == mk.off) {
			t.res.Spans = false // a result built with items: they are not recorded
		}
		if n0 > p && o.Code == pickle.DICT && t.focus < 0 && p == 1 && e.stack[0].kind == fkCall {
			t.res.Spans = false // (the state of an object result)
		}
		t.stack = append(t.stack[:p], tslot{start: mk.off, end: end, memo: mk.memo})
		created = p
	case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3, pickle.STACK_GLOBAL, pickle.REDUCE, pickle.NEWOBJ:
		// one value made of the last few: it starts where the first did
		p := len(e.stack) - 1
		if p < 0 || p >= n0 {
			t.res.Spans = false
			break
		}
		first := t.stack[p]
		t.stack = append(t.stack[:p], tslot{start: first.start, end: end, memo: first.memo})
		created = p
	case pickle.APPEND, pickle.SETITEM, pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS, pickle.BUILD:
		if o.Code == pickle.APPENDS || o.Code == pickle.SETITEMS || o.Code == pickle.ADDITEMS {
			if len(t.marks) > 0 {
				t.marks = t.marks[:len(t.marks)-1]
			}
		}
		p := len(e.stack)
		if p < 1 || p > n0 {
			t.res.Spans = false
			break
		}
		t.stack = t.stack[:p]
		t.stack[p-1].end = end
	case pickle.MEMOIZE, pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT:
		if n0 == 0 {
			t.res.Spans = false
			break
		}
		s := &t.stack[n0-1]
		if s.get || s.memod {
			t.res.Spans = false
		}
		s.memod = true
		s.end = end
		idx := o.Int
		if o.Code == pickle.MEMOIZE {
			idx = e.nmemo - 1
		}
		if e.scan.isLive(idx) {
			t.res.defs[idx] = append(t.res.defs[idx], memoDef{start: s.start, end: end, memo: s.memo})
		}
	case pickle.FRAME:
	default:
		// a value pushed
		created = n0
		t.stack = append(t.stack, tslot{start: o.Offset, end: end, memo: t.memoNow(e), get: o.Code == pickle.GET || o.Code == pickle.BINGET || o.Code == pickle.LONG_BINGET})
	}
	if len(t.stack) != len(e.stack) || len(t.marks) != len(e.marks) {
		t.res.Spans = false
		// keep going: the digest is still right
		for len(t.stack) < len(e.stack) {
			t.stack = append(t.stack, tslot{})
		}
		t.stack = t.stack[:len(e.stack)]
		for len(t.marks) < len(e.marks) {
			t.marks = grow.Push(t.marks, tmark{})
		}
		t.marks = t.marks[:len(e.marks)]
	}
	if t.focus < 0 && (created == 0 || created == 1 && len(e.stack) > 1 && e.stack[0].kind == fkCall) {
		// a new value at the bottom of the stack: the items recorded
		// were another's
		if t.lock != nil && (t.res.Len() > 0 || t.checked > 0) {
			// (what was compared and dropped was another value's)
			t.res.Spans, t.res.base = false, 0
		}
		t.res.sums, t.res.Keys, t.res.KeyEnd = t.res.sums[:0], t.res.Keys[:0], t.res.KeyEnd[:0]
		t.res.spans.reset()
		clear(t.res.Big)
	}
}

// Parse parses the ranges wanted (whole values of the file, in file order,
// with Keep; usually Span(i) of items) with the machine's range mode, after
// the ranges that set the memo entries they read (pickle.ParseSpans).
func (f *FastItems) Parse(want []pickle.Span, ropt pickle.Options) (*pickle.Stream, [][]pickle.ID, error) {
	if !f.Spans {
		return nil, nil, errSlow
	}
	var src spanSource
	if f.Scan != nil && f.Scan.size < 0 {
		src = &sparseFile{path: f.Path}
	} else {
		file, err := os.Open(f.Path)
		if err != nil {
			return nil, nil, err
		}
		defer file.Close()
		src = plainFile{file}
	}
	spans, err := f.plan(want, src) // (which loads every span it returns)
	if err != nil {
		return nil, nil, err
	}
	return pickle.ParseSpans(src, f.Size, f.Path, f.Proto, spans, ropt)
}

// plan returns the spans to parse for the ranges wanted: theirs, and
// before them the ranges that set the memo entries their GETs read
// outside their own range (and so on for those), in file order.
func (f *FastItems) plan(want []pickle.Span, src spanSource) ([]pickle.Span, error) {
	spans := slices.Clone(want)
	seen := map[[2]int64]bool{}
	for _, s := range spans {
		seen[[2]int64{s.Start, s.End}] = true
	}
	round := slices.Clone(spans)
	// Ranges inside ranges are read once each: a chain of nested memo
	// values could cost the square of the input; past a few times its
	// size, the graph path does it.
	budget := 4*f.Size + 1<<20
	br := bufio.NewReaderSize(nil, 64<<10)
	for len(round) > 0 {
		if err := src.load(round); err != nil {
			return nil, err
		}
		var next []pickle.Span
		for _, sp := range round {
			if budget -= sp.End - sp.Start; budget < 0 || len(spans) > maxPlanSpans {
				return nil, errSlow
			}
			gets, err := spanGets(src, f.Size, f.Path, sp, br)
			if err != nil {
				return nil, err
			}
			for _, g := range gets {
				d, ok := f.defAt(g[0], g[1])
				if !ok {
					return nil, errSlow
				}
				if d.start >= sp.Start && d.end <= sp.End {
					continue
				}
				k := [2]int64{d.start, d.end}
				if seen[k] {
					continue
				}
				seen[k] = true
				p := pickle.Span{Start: d.start, End: d.end, MemoCount: int(d.memo)}
				spans = append(spans, p)
				next = append(next, p)
			}
		}
		round = next
	}
	// file order; a range inside another (or equal to a kept one) goes
	slices.SortFunc(spans, func(a, b pickle.Span) int {
		switch {
		case a.Start != b.Start:
			return cmpInt(a.Start, b.Start)
		case a.End != b.End:
			return cmpInt(b.End, a.End)
		case a.Keep != b.Keep:
			if a.Keep {
				return -1
			}
			return 1
		}
		return 0
	})
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.Start < out[n-1].End {
			if s.Keep || s.End > out[n-1].End {
				return nil, errSlow // overlapping ranges: not values
			}
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// spanSource gives the bytes of spans of the stream: a plain file, or the
// spans of a compressed one, decompressed once per call of load.
type spanSource interface {
	io.ReaderAt
	load(spans []pickle.Span) error
}

type plainFile struct{ *os.File }

func (plainFile) load([]pickle.Span) error { return nil }

// sparseFile holds the bytes of the spans loaded from a compressed file:
// ReadAt reads inside one of them (at its end it reports io.EOF).
type sparseFile struct {
	path   string
	chunks []chunk // disjoint, in order
}

type chunk struct {
	start int64
	b     []byte
}

// load decompresses the file again and keeps the bytes of spans.
func (s *sparseFile) load(spans []pickle.Span) error {
	var want [][2]int64
	for _, sp := range spans {
		want = append(want, [2]int64{sp.Start, sp.End})
	}
	for _, c := range s.chunks {
		want = append(want, [2]int64{c.start, c.start + int64(len(c.b))})
	}
	slices.SortFunc(want, func(a, b [2]int64) int { return cmpInt(a[0], b[0]) })
	var merged [][2]int64
	for _, w := range want {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	r, _, finish, err := input.OpenBare(s.path, input.Options{})
	if err != nil {
		return err
	}
	defer finish()
	var out []chunk
	pos := int64(0)
	for _, m := range merged {
		if _, err := io.CopyN(io.Discard, r, m[0]-pos); err != nil {
			return err
		}
		b := make([]byte, m[1]-m[0])
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		out = append(out, chunk{start: m[0], b: b})
		pos = m[1]
	}
	s.chunks = out
	return nil
}

func (s *sparseFile) ReadAt(p []byte, off int64) (int, error) {
	i, _ := slices.BinarySearchFunc(s.chunks, off, func(c chunk, off int64) int { return cmpInt(c.start, off+1) })
	if i == 0 {
		return 0, io.EOF
	}
	c := s.chunks[i-1]
	if off >= c.start+int64(len(c.b)) {
		return 0, io.EOF
	}
	n := copy(p, c.b[off-c.start:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// maxPlanSpans bounds the ranges Plan returns.
const maxPlanSpans = 1 << 16

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// defAt returns the write of memo entry idx that a GET at offset off reads.
func (f *FastItems) defAt(idx, off int64) (memoDef, bool) {
	ds := f.defs[idx]
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].end <= off {
			return ds[i], true
		}
	}
	return memoDef{}, false
}

// spanGets lists the (index, offset) of the GETs in a span.
func spanGets(r io.ReaderAt, size int64, name string, sp pickle.Span, br *bufio.Reader) ([][2]int64, error) {
	// Only the span's bytes are read; the reader is told the input goes on
	// (a FRAME in the span may reach past it).
	br.Reset(io.NewSectionReader(r, sp.Start, sp.End-sp.Start))
	rd := pickle.NewReader(br, size-sp.Start, name)
	rd.Borrow = true
	rd.BlobThreshold = 1 // payloads are skipped, not kept
	var out [][2]int64
	var o pickle.Op
	for rd.Offset() < sp.End-sp.Start {
		if err := rd.NextInto(&o); err != nil {
			return nil, err
		}
		switch o.Code {
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			out = append(out, [2]int64{o.Int, sp.Start + o.Offset})
		}
	}
	return out, nil
}

// Fingerprint returns the XXH3-128 of b as FastItems.Sum gives it.
func Fingerprint(b []byte) [16]byte { return fingerprint(xxh3.Hash128(b)) }

// fingerprint is sum as FastItems holds it.
func fingerprint(sum xxh3.Uint128) [16]byte {
	var out [16]byte
	binary.BigEndian.PutUint64(out[:8], sum.Hi)
	binary.BigEndian.PutUint64(out[8:], sum.Lo)
	return out
}
