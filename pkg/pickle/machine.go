package pickle

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// Options tune Parse.
type Options struct {
	// BlobThreshold: see Reader.BlobThreshold.
	BlobThreshold int64
	// NewHash digests blobs and trailing bytes; nil skips digests.
	NewHash func() hash.Hash
	// MaxStreams stops after this many streams (0: no limit).
	MaxStreams int
	// AfterBuild, when set, is given to the reader (see Reader.AfterBuild).
	AfterBuild func(rd *Reader, stream int, target *Node) error
}

// ParseFile reads the named file ("-" is stdin).
func ParseFile(path string, opt Options) (*File, error) {
	if path == "-" {
		return Parse(os.Stdin, -1, "-", opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return Parse(f, size, path, opt)
}

// Parse reads every pickle stream in r (size bytes, -1 if unknown) into
// graphs. The first stream must be a complete pickle; bytes after the last
// complete stream that do not form one are reported in File.Trailing.
// The garbage collector runs at a slower pace while Parse builds the graph
// (see QuietGC).
func Parse(r io.Reader, size int64, name string, opt Options) (*File, error) {
	rd := NewReader(r, size, name)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	return ParseReader(rd, opt)
}

// GCPercentWhileParsing is the garbage collector's percent (GOGC) while
// Parse runs (see QuietGC).
const GCPercentWhileParsing = 1000

var gcQuiet struct {
	sync.Mutex
	users int
	prev  int
}

// QuietGC raises the garbage collector's percent to GCPercentWhileParsing
// (it never lowers it: GOGC=off or a higher value stays) until the returned
// function is called. Nearly everything a parse allocates stays live until
// the graph is dropped, so collecting at the default pace scans a heap that
// only grows and frees next to nothing; memory stays bounded by what is
// live. Calls nest and may overlap between goroutines: the setting before
// the first is restored after the last. Parse uses it; a caller that goes
// on working on the graph (hashing it) may hold it longer, so that the
// collector does not scan the graph once more as soon as Parse returns.
//
// restore reports whether other holders remain. While holds overlap (pk
// hash --jobs over many inputs) the collector stays at the quiet pace, so a
// caller that has just dropped a large graph should then run runtime.GC
// itself, or dead graphs pile up to GCPercentWhileParsing/100 times what is
// live.
func QuietGC() (restore func() (others bool)) {
	gcQuiet.Lock()
	if gcQuiet.users == 0 {
		gcQuiet.prev = debug.SetGCPercent(GCPercentWhileParsing)
		if gcQuiet.prev < 0 || gcQuiet.prev > GCPercentWhileParsing {
			debug.SetGCPercent(gcQuiet.prev)
		}
	}
	gcQuiet.users++
	gcQuiet.Unlock()
	var once sync.Once
	return func() (others bool) {
		once.Do(func() {
			gcQuiet.Lock()
			gcQuiet.users--
			if gcQuiet.users == 0 {
				debug.SetGCPercent(gcQuiet.prev)
			}
			others = gcQuiet.users > 0
			gcQuiet.Unlock()
		})
		return others
	}
}

// ParseReader is Parse over an existing Reader. Like Parse, it holds
// QuietGC while it runs: the process's GC percent is raised for that time.
//
// All the streams of the input run on one machine: its node slab, item
// chunk, stack, marks and memo are reused from stream to stream, and
// Stream.All of each stream is a window of one buffer reserved for the
// whole input, so a stream costs its Stream, its nodes and their items,
// not a fresh set of reservations (see docs/reader.md, Memory).
func ParseReader(rd *Reader, opt Options) (*File, error) {
	defer QuietGC()()
	return parseStreams(rd, opt, nil)
}

// ParseEach runs the streams of rd one at a time and calls fn with each as
// soon as its STOP is read, in order, on one machine that reuses the memory
// of a stream for the next one: the Stream, its nodes, their items and its
// lists are valid only until fn returns (copy what must outlive it). The
// cost of an input of many streams is then that of its largest stream, not
// of all of them. The File returned has Name, Size and Trailing as Parse
// would give them and no Streams. An error from fn stops the loop and is
// returned as it is. Unlike Parse, ParseEach does not hold QuietGC: what it
// allocates does not stay live.
func ParseEach(rd *Reader, opt Options, fn func(st *Stream) error) (*File, error) {
	if fn == nil {
		fn = func(*Stream) error { return nil }
	}
	return parseStreams(rd, opt, fn)
}

// parseStreams is ParseReader (each nil: the streams are kept in File) and
// ParseEach (each is given every stream and the machine reuses its memory).
func parseStreams(rd *Reader, opt Options, each func(*Stream) error) (*File, error) {
	f := &File{Name: rd.Name()}
	if opt.AfterBuild != nil {
		rd.AfterBuild = opt.AfterBuild
	}
	m := newMachine(rd, each != nil)
	var tee prefixTee
	count := 0
	for {
		if rd.AtEOF() {
			break
		}
		if opt.MaxStreams > 0 && count >= opt.MaxStreams {
			break
		}
		start := rd.Offset()
		if count > 0 {
			// the bytes of a later stream are kept aside in case it
			// fails (File.Trailing); one tee serves every stream
			tee.prefix = tee.prefix[:0]
			if opt.NewHash != nil {
				if tee.h == nil {
					tee.h = opt.NewHash()
				} else {
					tee.h.Reset()
				}
			}
			rd.Tee = &tee
		}
		st, err := m.run(count)
		if err != nil {
			if count == 0 {
				return nil, err
			}
			reason := err.Error()
			if pe, ok := AsError(err); ok {
				c := *pe
				c.File = ""
				reason = c.Error()
			}
			rd.Discard(math.MaxInt64)
			rd.Tee = nil
			f.Trailing = &Trailing{Offset: start, Len: rd.Offset() - start, Reason: reason, Prefix: append([]byte(nil), tee.prefix...)}
			if tee.h != nil {
				f.Trailing.Digest = tee.h.Sum(nil)
			}
			break
		}
		rd.Tee = nil
		count++
		if each != nil {
			if err := each(st); err != nil {
				f.Size = rd.Offset()
				return f, err
			}
			continue
		}
		if len(f.Streams) == cap(f.Streams) && len(f.Streams) >= 1024 && rd.Size() > 0 {
			// as growAll: one copy to the count projected from the bytes read
			n := int64(len(f.Streams))
			proj := n*(rd.Size()-m.start)/max(rd.Offset()-m.start, 1) + n/16 + 1024
			all := make([]*Stream, len(f.Streams), max(proj, n+n/4))
			copy(all, f.Streams)
			f.Streams = all
		}
		f.Streams = append(f.Streams, st)
	}
	f.Size = rd.Offset()
	if count == 0 {
		return nil, &Error{File: rd.Name(), Offset: 0, Reason: "empty input: not a pickle"}
	}
	return f, nil
}

type prefixTee struct {
	h      hash.Hash
	prefix []byte
}

func (t *prefixTee) Write(p []byte) (int, error) {
	if len(t.prefix) < BlobPrefix {
		k := BlobPrefix - len(t.prefix)
		if k > len(p) {
			k = len(p)
		}
		t.prefix = append(t.prefix, p[:k]...)
	}
	if t.h != nil {
		t.h.Write(p)
	}
	return len(p), nil
}

type slot struct {
	n       *Node
	pending int64 // bytes of the opcodes that put this reference here (GET, DUP)
	origin  bool  // the slot where n was built
}

type mark struct {
	pos   int
	bytes int64
}

type machine struct {
	rd    *Reader
	st    *Stream
	stack []slot
	marks []mark
	memo  memoTable
	slab  []Node
	items []*Node // chunk small item lists are carved from (see takeAll)
	op    *Op
	cur   Op
	nbuf  int64

	// Shared by the streams run on this machine (ParseReader, ParseEach):
	free    []*Node  // unused capacity of the buffer Stream.All windows are taken from
	streams []Stream // chunk Stream values are carved from
	start   int64    // offset of the first stream
	before  int64    // nodes of the streams before this one

	// reuse (ParseEach): every stream runs in the memory of the one before.
	reuse   bool
	slabs   [][]Node  // the node slabs, used again from the first
	chunks  [][]*Node // the item chunks, likewise
	slabAt  int       // next slab to use
	chunkAt int       // next chunk to use
	extra   []Extra   // chunk Extra values are carved from
	extras  [][]Extra // with reuse, the Extra chunks, used again from the first
	extraAt int

	// sizes of the last chunk of each kind: they start small and double up
	// to their cap, so a machine that runs one small stream stays small
	nSlab, nChunk, nExtra, nStreams int
	project                         bool   // growAll may project from the input's size (not for RunStream)
	one                             Stream // the Stream every stream is built in
}

// newMachine returns a machine for the streams read from rd. Nodes and memo
// entries are bounded by the opcodes left; with the input's size known a
// fraction of that is reserved once for all the streams (untouched
// capacity costs address space, not memory). A machine that reuses its
// memory (ParseEach) reserves nothing: it grows to its largest stream.
func newMachine(rd *Reader, reuse bool) *machine {
	m := &machine{rd: rd, start: rd.Offset(), reuse: reuse, project: true}
	if left := rd.left(); left < math.MaxInt64 && !reuse {
		est := min(left/16, 1<<22) // bounded: the collector scans the whole capacity
		m.free = make([]*Node, 0, est)
		m.memo.dense = make([]int32, 0, est/2)
	}
	return m
}

// RunStream runs one pickle stream from the reader's position to its STOP.
// At the end of input before any opcode it returns io.EOF.
//
// The machine is the stream's own and reserves nothing from the bytes left
// (a joblib file runs one for each object array, followed by array data):
// its slabs start small, All grows by doubling.
func RunStream(rd *Reader, index int) (*Stream, error) {
	m := &machine{rd: rd, start: rd.Offset()}
	return m.run(index)
}

// run runs the next stream on m, reusing what earlier streams left: the
// stack and marks (empty again), the memo (cleared), the node slab, the
// item chunk and the rest of the Stream.All buffer.
func (m *machine) run(index int) (*Stream, error) {
	if m.reuse {
		old := &m.one
		*old = Stream{Index: index, Offset: m.rd.Offset(), All: m.free[:0],
			Tops: old.Tops[:0], Popped: old.Popped[:0], Leftover: old.Leftover[:0], Log: old.Log[:0]}
		m.st = old
		m.slab, m.slabAt = nil, 0
		m.items, m.chunkAt = nil, 0
		m.extra, m.extraAt = nil, 0
	} else {
		if len(m.streams) == 0 {
			m.streams = make([]Stream, m.grown(&m.nStreams, 1, 64))
		}
		m.st = &m.streams[0]
		m.streams = m.streams[1:]
		*m.st = Stream{Index: index, Offset: m.rd.Offset(), All: m.free[:0]}
	}
	m.stack = m.stack[:0]
	m.marks = m.marks[:0]
	m.memo.reset()
	m.nbuf = 0
	rd := m.rd
	for {
		var err error
		err = rd.next(&m.cur)
		if err != nil {
			m.endStream()
			if errors.Is(err, io.EOF) {
				if rd.Offset() == m.st.Offset {
					return nil, &Error{File: rd.Name(), Offset: rd.Offset(), Reason: "empty input: not a pickle"}
				}
				return nil, &Error{File: rd.Name(), Offset: rd.Offset(), Reason: "pickle data was truncated: input ends before STOP"}
			}
			return nil, err
		}
		m.op = &m.cur
		done, err := m.step(m.op)
		if err != nil {
			m.endStream()
			return nil, err
		}
		if done {
			m.st.End = rd.Offset()
			m.endStream()
			return m.st, nil
		}
	}
}

// endStream closes the stream's window of the All buffer (a caller's append
// to Stream.All reallocates, never writes into the next stream's window)
// and hands the rest of the buffer to the next stream.
func (m *machine) endStream() {
	all := m.st.All
	n := len(all)
	if m.reuse {
		// the next stream starts again at the buffer's beginning
		m.free = all[:0]
		m.st.All = all[:n:n]
		return
	}
	m.free = all[n:n]
	m.st.All = all[:n:n]
	m.before += int64(n)
}

// grown returns the size of the next chunk of a kind: first, then twice the
// last, up to most.
func (m *machine) grown(last *int, first, most int) int {
	if *last == 0 {
		*last = first
	} else {
		*last = min(2**last, most)
	}
	return *last
}

// nextSlab returns a fresh slab of nodes, or with reuse the next one kept.
func (m *machine) nextSlab() []Node {
	if m.reuse && m.slabAt < len(m.slabs) {
		m.slabAt++
		return m.slabs[m.slabAt-1]
	}
	s := make([]Node, m.grown(&m.nSlab, 16, 512))
	if m.reuse {
		m.slabs = append(m.slabs, s)
		m.slabAt++
	}
	return s
}

// x returns n's Extra, carving one from the machine's chunk when n has none
// (one allocation per 128 globals, calls and blobs instead of one each).
func (m *machine) x(n *Node) *Extra {
	if n.X != nil {
		return n.X
	}
	if len(m.extra) == 0 {
		if m.reuse && m.extraAt < len(m.extras) {
			m.extra = m.extras[m.extraAt]
		} else {
			m.extra = make([]Extra, m.grown(&m.nExtra, 4, 128))
			if m.reuse {
				m.extras = append(m.extras, m.extra)
			}
		}
		m.extraAt++
	}
	x := &m.extra[0]
	m.extra = m.extra[1:]
	*x = Extra{}
	n.X = x
	return x
}

// nextChunk returns a fresh item chunk, or with reuse the next one kept.
func (m *machine) nextChunk() []*Node {
	if m.reuse && m.chunkAt < len(m.chunks) {
		m.chunkAt++
		return m.chunks[m.chunkAt-1]
	}
	c := make([]*Node, m.grown(&m.nChunk, 64, 2048))
	if m.reuse {
		m.chunks = append(m.chunks, c)
		m.chunkAt++
	}
	return c
}

func (m *machine) fail(format string, args ...any) error {
	return &Error{File: m.rd.Name(), Offset: m.op.Offset, Op: m.op.Code.String(), Reason: fmt.Sprintf(format, args...)}
}

func (m *machine) fence() int {
	if len(m.marks) == 0 {
		return 0
	}
	return m.marks[len(m.marks)-1].pos
}

func (m *machine) underflow() error {
	if len(m.marks) > 0 {
		return m.fail("unexpected MARK found (stack underflow)")
	}
	return m.fail("unpickling stack underflow")
}

func (m *machine) newNode(k Kind) *Node {
	if len(m.slab) == 0 {
		m.slab = m.nextSlab()
	}
	n := &m.slab[0]
	m.slab = m.slab[1:]
	*n = Node{Kind: k, Op: m.op.Code, ID: int32(len(m.st.All)), Offset: m.op.Offset}
	if len(m.st.All) == cap(m.st.All) {
		m.growAll()
	}
	m.st.All = append(m.st.All, n)
	return n
}

// push puts a freshly built node on the stack, with the opcode's bytes.
func (m *machine) push(n *Node) {
	n.Self += m.op.Len
	m.stack = append(m.stack, slot{n: n, origin: true})
}

func (m *machine) pop() (slot, error) {
	if len(m.stack) <= m.fence() {
		return slot{}, m.underflow()
	}
	s := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	return s, nil
}

// take attributes a consumed slot to its consumer.
func take(s slot, by *Node) *Node {
	by.Self += s.pending
	if s.origin && s.n.Owner == nil && s.n != by {
		s.n.Owner = by
	}
	return s.n
}

// drop records a slot discarded by POP/POP_MARK or left at STOP.
func (m *machine) drop(s slot, popped bool) {
	m.st.Self += s.pending
	if s.origin && s.n.Owner == nil {
		m.st.Tops = m.add(m.st.Tops, s.n)
		if popped {
			m.st.Popped = m.add(m.st.Popped, s.n)
		} else {
			m.st.Leftover = m.add(m.st.Leftover, s.n)
		}
	}
}

func (m *machine) marker() (mark, error) {
	if len(m.marks) == 0 {
		return mark{}, m.fail("could not find MARK")
	}
	mk := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	return mk, nil
}

func (m *machine) log(k EventKind, n *Node, mut int) {
	m.st.Log = append(m.st.Log, Event{Kind: k, Op: m.op.Code, Offset: m.op.Offset, Node: n, Mut: mut})
}

func (m *machine) takeAll(from int, by *Node) []*Node {
	n := len(m.stack) - from
	var items []*Node
	if n <= 64 {
		// Small item lists are carved from a shared chunk (full slice
		// expression: a later append reallocates, never writes past).
		if n > len(m.items) {
			m.items = m.nextChunk()
		}
		items = m.items[:0:n]
		m.items = m.items[n:]
	} else {
		items = make([]*Node, 0, n)
	}
	for _, s := range m.stack[from:] {
		items = append(items, take(s, by))
	}
	m.stack = m.stack[:from]
	return items
}

// add appends n to one of the stream's lists of nodes (Tops, Popped,
// Leftover); the first element is carved from the item chunk, so a stream
// whose only top is its root allocates nothing for it. With reuse the lists
// keep their own capacity from stream to stream instead.
func (m *machine) add(list []*Node, n *Node) []*Node {
	if cap(list) == 0 && !m.reuse {
		if len(m.items) == 0 {
			m.items = m.nextChunk()
		}
		list = m.items[:0:1]
		m.items = m.items[1:]
	}
	return append(list, n)
}

func (m *machine) scalar(k Kind) *Node {
	n := m.newNode(k)
	m.push(n)
	return n
}

func (m *machine) step(o *Op) (bool, error) {
	switch o.Code {
	case PROTO:
		if o.Int > HighestProtocol {
			return false, m.fail("unsupported pickle protocol: %d", o.Int)
		}
		m.st.Proto = int(o.Int)
		m.st.Self += o.Len
	case FRAME:
		m.st.Self += o.Len
	case STOP:
		m.st.Self += o.Len
		s, err := m.pop()
		if err != nil {
			return false, err
		}
		m.st.Root = s.n
		m.st.Self += s.pending
		if s.origin && s.n.Owner == nil {
			m.st.Tops = m.add(m.st.Tops, s.n)
		}
		for _, l := range m.stack {
			m.drop(l, false)
		}
		for _, mk := range m.marks {
			m.st.Self += mk.bytes
		}
		m.st.LeftoverMarks = len(m.marks)
		return true, nil
	case MARK:
		m.marks = append(m.marks, mark{pos: len(m.stack), bytes: o.Len})
	case POP:
		n := len(m.stack)
		if len(m.marks) > 0 && m.marks[len(m.marks)-1].pos == n {
			mk := m.marks[len(m.marks)-1]
			m.marks = m.marks[:len(m.marks)-1]
			m.st.Self += mk.bytes + o.Len
			return false, nil
		}
		s, err := m.pop()
		if err != nil {
			return false, err
		}
		m.st.Self += o.Len
		m.drop(s, true)
	case POP_MARK:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		m.st.Self += mk.bytes + o.Len
		for _, s := range m.stack[mk.pos:] {
			m.drop(s, true)
		}
		m.stack = m.stack[:mk.pos]
	case DUP:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		top := m.stack[len(m.stack)-1]
		top.n.Flags |= FlagShared
		m.stack = append(m.stack, slot{n: top.n, pending: o.Len})

	// scalars
	case NONE:
		m.scalar(KindNone)
	case NEWTRUE, NEWFALSE:
		n := m.scalar(KindBool)
		if o.Code == NEWTRUE {
			n.Int = 1
		}
	case INT:
		if o.IsBool {
			m.scalar(KindBool).Int = o.Int
			break
		}
		m.intNode(o)
	case BININT, BININT1, BININT2, LONG, LONG1, LONG4:
		m.intNode(o)
	case FLOAT, BINFLOAT:
		m.scalar(KindFloat).Int = o.Int
	case STRING, BINSTRING, SHORT_BINSTRING:
		n := m.scalar(KindStr)
		n.Flags |= FlagPy2Str
		m.payload(n, o)
		if n.X == nil || n.X.Blob == nil {
			n.Str = Latin1ToUTF8(n.Str)
		}
	case UNICODE, BINUNICODE, SHORT_BINUNICODE, BINUNICODE8:
		m.payload(m.scalar(KindStr), o)
	case BINBYTES, SHORT_BINBYTES, BINBYTES8:
		m.payload(m.scalar(KindBytes), o)
	case BYTEARRAY8:
		m.payload(m.scalar(KindByteArray), o)
	case EMPTY_LIST:
		m.scalar(KindList)
	case EMPTY_DICT:
		m.scalar(KindDict)
	case EMPTY_TUPLE:
		m.scalar(KindTuple)
	case EMPTY_SET:
		m.scalar(KindSet)

	// containers from a MARK
	case LIST, TUPLE, FROZENSET, DICT:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		k := KindList
		switch o.Code {
		case TUPLE:
			k = KindTuple
		case FROZENSET:
			k = KindFrozenSet
		case DICT:
			k = KindDict
		}
		if k == KindDict && (len(m.stack)-mk.pos)%2 != 0 {
			return false, m.fail("odd number of items for DICT")
		}
		n := m.newNode(k)
		n.Self += mk.bytes
		n.Items = m.takeAll(mk.pos, n)
		m.push(n)
	case TUPLE1, TUPLE2, TUPLE3:
		c := int(o.Code-TUPLE1) + 1
		if len(m.stack)-c < m.fence() {
			return false, m.underflow()
		}
		n := m.newNode(KindTuple)
		n.Items = m.takeAll(len(m.stack)-c, n)
		m.push(n)

	// container operations
	case APPEND:
		x := len(m.stack) - 1
		if x <= m.fence() {
			return false, m.underflow()
		}
		m.appendTo(x, o.Len)
	case APPENDS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		m.appendTo(mk.pos, o.Len+mk.bytes)
	case SETITEM:
		x := len(m.stack) - 2
		if x <= m.fence() {
			return false, m.underflow()
		}
		m.setItems(x, o.Len)
	case SETITEMS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		if (len(m.stack)-mk.pos)%2 != 0 {
			return false, m.fail("odd number of items for SETITEMS")
		}
		m.setItems(mk.pos, o.Len+mk.bytes)
	case ADDITEMS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		target := m.stack[mk.pos-1].n
		target.Self += o.Len + mk.bytes
		items := m.takeAll(mk.pos, target)
		if target.Kind == KindSet {
			target.Items = grow(target.Items, items)
		} else if len(items) > 0 {
			m.mutate(target, items)
		}
	case BUILD:
		if len(m.stack)-2 < m.fence() {
			return false, m.underflow()
		}
		st := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		target := m.stack[len(m.stack)-1].n
		target.Self += o.Len
		m.mutate(target, []*Node{take(st, target)})
		if m.rd.AfterBuild != nil {
			start := m.rd.Offset()
			err := m.rd.AfterBuild(m.rd, m.st.Index, target)
			target.Self += m.rd.Offset() - start
			if err != nil {
				return false, err
			}
		}

	// memo
	case PUT, BINPUT, LONG_BINPUT, MEMOIZE:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		idx := o.Int
		if o.Code == MEMOIZE {
			idx = int64(m.memo.count)
		} else if idx < 0 {
			return false, m.fail("negative %s argument", o.Code)
		}
		top := m.stack[len(m.stack)-1].n
		top.Self += o.Len
		top.Flags |= FlagMemo
		m.memo.put(idx, top)
	case GET, BINGET, LONG_BINGET:
		n, ok := m.memo.get(o.Int, m.st.All)
		if !ok {
			return false, m.fail("memo value not found at index %d", o.Int)
		}
		n.Flags |= FlagShared
		m.stack = append(m.stack, slot{n: n, pending: o.Len})

	// globals and calls
	case GLOBAL:
		n := m.global(o.Str, o.Name)
		m.push(n)
		m.log(EvGlobal, n, -1)
	case STACK_GLOBAL:
		name, err := m.pop()
		if err != nil {
			return false, err
		}
		mod, err := m.pop()
		if err != nil {
			return false, err
		}
		var n *Node
		if mod.n.Kind == KindStr && name.n.Kind == KindStr && mod.n.Blob() == nil && name.n.Blob() == nil {
			n = m.global(mod.n.Str, name.n.Str)
		} else {
			n = m.newNode(KindGlobal)
			n.Flags |= FlagDynamic
			if !maybeStr(mod.n) || !maybeStr(name.n) {
				return false, m.fail("STACK_GLOBAL requires str")
			}
		}
		n.Items = []*Node{take(mod, n), take(name, n)}
		m.push(n)
		m.log(EvGlobal, n, -1)
	case REDUCE:
		args, err := m.pop()
		if err != nil {
			return false, err
		}
		fn, err := m.pop()
		if err != nil {
			return false, err
		}
		n := m.newNode(KindCall)
		x := m.x(n)
		x.Func = take(fn, n)
		x.Args = take(args, n)
		m.push(n)
		m.log(EvCall, n, -1)
	case NEWOBJ:
		args, err := m.pop()
		if err != nil {
			return false, err
		}
		cls, err := m.pop()
		if err != nil {
			return false, err
		}
		n := m.newNode(KindCall)
		x := m.x(n)
		x.Func = take(cls, n)
		x.Args = take(args, n)
		m.push(n)
		m.log(EvCall, n, -1)
	case NEWOBJ_EX:
		kw, err := m.pop()
		if err != nil {
			return false, err
		}
		args, err := m.pop()
		if err != nil {
			return false, err
		}
		cls, err := m.pop()
		if err != nil {
			return false, err
		}
		n := m.newNode(KindCall)
		x := m.x(n)
		x.Func = take(cls, n)
		x.Args = take(args, n)
		x.Kwargs = take(kw, n)
		m.push(n)
		m.log(EvCall, n, -1)
	case INST:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		n := m.newNode(KindCall)
		n.Self += mk.bytes
		cls := m.global(o.Str, o.Name)
		cls.Owner = n
		m.log(EvGlobal, cls, -1)
		args := m.newNode(KindTuple)
		args.Owner = n
		args.Items = m.takeAll(mk.pos, args)
		x := m.x(n)
		x.Func, x.Args = cls, args
		m.push(n)
		m.log(EvCall, n, -1)
	case OBJ:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if len(m.stack)-mk.pos < 1 {
			return false, m.underflow()
		}
		n := m.newNode(KindCall)
		n.Self += mk.bytes
		x := m.x(n)
		x.Func = take(m.stack[mk.pos], n)
		args := m.newNode(KindTuple)
		args.Owner = n
		args.Items = m.takeAll(mk.pos+1, args)
		m.stack = m.stack[:mk.pos]
		x.Args = args
		m.push(n)
		m.log(EvCall, n, -1)
	case EXT1, EXT2, EXT4:
		if o.Int <= 0 {
			return false, m.fail("EXT specifies code <= 0")
		}
		n := m.scalar(KindExt)
		n.Int = o.Int
		m.log(EvExt, n, -1)
	case PERSID:
		n := m.scalar(KindPersID)
		n.Str = o.Str
		m.log(EvPersID, n, -1)
	case BINPERSID:
		pid, err := m.pop()
		if err != nil {
			return false, err
		}
		n := m.newNode(KindPersID)
		n.Items = []*Node{take(pid, n)}
		m.push(n)
		m.log(EvPersID, n, -1)
	case NEXT_BUFFER:
		n := m.scalar(KindBuffer)
		n.Int = m.nbuf
		m.nbuf++
		m.log(EvBuffer, n, -1)
	case READONLY_BUFFER:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		top := m.stack[len(m.stack)-1].n
		top.Flags |= FlagReadOnly
		top.Self += o.Len
	default:
		return false, m.fail("opcode not handled")
	}
	return false, nil
}

func (m *machine) intNode(o *Op) {
	n := m.scalar(KindInt)
	n.Int = o.Int
	if o.Big != nil {
		m.x(n).Big = o.Big
	}
}

func (m *machine) payload(n *Node, o *Op) {
	if o.Blob != nil {
		m.x(n).Blob = o.Blob
		n.Str = o.Blob.Prefix
		return
	}
	n.Str = o.Str
}

// global builds a KindGlobal node as CPython's find_class sees the names.
func (m *machine) global(module, name string) *Node {
	n := m.newNode(KindGlobal)
	module, name, mapped, dotted := MapGlobal(m.st.Proto, module, name)
	if mapped {
		n.Flags |= FlagMapped
	}
	if dotted {
		n.Flags |= FlagDotted
	}
	n.Str = module
	m.x(n).Name = name
	return n
}

// MapGlobal returns the module and name CPython's find_class looks up for a
// GLOBAL or STACK_GLOBAL read at protocol proto: below protocol 3, the
// Python 2 names mapped as _compat_pickle does (mapped reports it); dotted
// reports a dotted name below protocol 4, which CPython does not resolve
// as a nested attribute.
func MapGlobal(proto int, module, name string) (mod, qual string, mapped, dotted bool) {
	if proto < 3 {
		if v, ok := nameMapping2to3[[2]string{module, name}]; ok {
			module, name, mapped = v[0], v[1], true
		} else if v, ok := importMapping2to3[module]; ok {
			module, mapped = v, true
		}
	}
	return module, name, mapped, proto < 4 && strings.Contains(name, ".")
}

// appendTo handles APPEND/APPENDS: items are stack[x:], the target is stack[x-1].
func (m *machine) appendTo(x int, bytes int64) {
	target := m.stack[x-1].n
	target.Self += bytes
	items := m.takeAll(x, target)
	if target.Kind == KindList {
		target.Items = grow(target.Items, items)
		return
	}
	if len(items) > 0 {
		m.mutate(target, items)
	}
}

// setItems handles SETITEM/SETITEMS: pairs are stack[x:], the target is stack[x-1].
func (m *machine) setItems(x int, bytes int64) {
	target := m.stack[x-1].n
	target.Self += bytes
	items := m.takeAll(x, target)
	if target.Kind == KindDict {
		target.Items = grow(target.Items, items)
		return
	}
	if len(items) > 0 {
		m.mutate(target, items)
	}
}

// grow appends a batch of items to a container's items; the first batch
// becomes the items as it is (it was just allocated for them).
func grow(items, batch []*Node) []*Node {
	if items == nil {
		return batch
	}
	return append(items, batch...)
}

func (m *machine) mutate(target *Node, args []*Node) {
	x := m.x(target)
	x.Muts = append(x.Muts, Mut{Op: m.op.Code, Offset: m.op.Offset, Args: args})
	m.log(EvMut, target, len(x.Muts)-1)
}

// maybeStr reports whether n is a str or an object whose type is only known
// when loading (a call result, a global, a persistent or extension object).
func maybeStr(n *Node) bool {
	switch n.Kind {
	case KindStr, KindCall, KindGlobal, KindPersID, KindExt:
		return true
	}
	return false
}

// memoTable is the memo: dense for the indices picklers write (0, 1, 2, ...),
// a map for the rest, so a huge LONG_BINPUT index costs one map entry. The
// dense part holds 1 + the node's ID (0: unset): half the size of pointers,
// and nothing for the garbage collector to scan.
type memoTable struct {
	dense  []int32
	sparse map[int64]*Node
	count  int // entries set, as len(memo) in CPython (MEMOIZE stores there)
}

// reset empties the memo for the next stream, keeping the dense part's
// capacity.
func (t *memoTable) reset() {
	t.dense = t.dense[:0]
	t.sparse = nil
	t.count = 0
}

func (t *memoTable) put(i int64, n *Node) {
	switch {
	case i >= 0 && i < int64(len(t.dense)):
		if t.dense[i] == 0 {
			t.count++
		}
		t.dense[i] = n.ID + 1
	case i == int64(len(t.dense)):
		if _, ok := t.sparse[i]; ok {
			delete(t.sparse, i)
			t.count--
		}
		t.dense = append(t.dense, n.ID+1)
		t.count++
	default:
		if t.sparse == nil {
			t.sparse = map[int64]*Node{}
		}
		if _, ok := t.sparse[i]; !ok {
			t.count++
		}
		t.sparse[i] = n
	}
}

// get returns the node stored at index i; all is the stream's nodes by ID.
func (t *memoTable) get(i int64, all []*Node) (*Node, bool) {
	if i >= 0 && i < int64(len(t.dense)) {
		id := t.dense[i]
		if id == 0 {
			return nil, false
		}
		return all[id-1], true
	}
	n, ok := t.sparse[i]
	return n, ok
}

// growAll makes room in Stream.All: with the input size known, for the node
// count projected from the bytes read so far by every stream of the input
// (one copy instead of a series of doublings, and no large unused capacity
// for the collector to scan). The new buffer also serves the streams after
// this one.
func (m *machine) growAll() {
	n := int64(len(m.st.All))
	size := m.rd.Size()
	done := m.rd.Offset() - m.start
	total := m.before + n
	if size < 0 || done <= 0 || total < 1024 || !m.project {
		return // append doubles
	}
	proj := total * (size - m.start) / done
	proj += proj/16 + 1024
	proj -= m.before // this stream's share onwards
	if floor := n + n/4 + 16; proj < floor {
		proj = floor
	}
	all := make([]*Node, n, proj)
	copy(all, m.st.All)
	m.st.All = all
}
