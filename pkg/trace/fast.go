package trace

import (
	"errors"
	"io"
	"math"
	"math/big"
	"os"
	"sort"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The --top fast path (docs/pk-trace.md, "The fast paths: --top and --depth").
//
// FastTop answers --top N for a bare pickle of plain data (None, bool, int,
// float, str, bytes, bytearray, list, tuple, dict, set, frozenset and memo
// references to immutable ones) in one streaming pass over the opcodes,
// without building the object graph. It mirrors the byte attribution of
// pkg/pickle's machine (opcode bytes to the node built, MARK and container
// opcodes to the container, memo writes to the top of the stack, GET bytes
// to the consumer, PROTO/FRAME/STOP to the stream) and its node numbering
// (creation order), so every node's inclusive size is known when it is
// consumed: a container can no longer change once consumed, because a GET of
// a mutable object (and DUP, POP, BUILD, calls, ...) makes the fast path give
// up. A bounded min-heap keeps the N best; records with parent links are kept
// only for the nodes in the heap and their ancestors, so memory is the memo
// (5 bytes an entry; 9 with node IDs for the depth view), the stack and N
// records.
//
// Anything it does not handle — another opcode, a reader or machine error,
// several streams or trailing bytes, a result left on the stack, stdin —
// returns no tree, and the caller takes the graph path, which then gives
// the same answer it always gave (or reports the error).

// fastBatch is how many opcodes the fast machine decodes from the read
// buffer at once.
const fastBatch = 128

// fastMemoMaxOffset: memo entries keep the offset of the node's opcode in
// 35 bits; larger inputs take the graph path.
const fastMemoMaxOffset = 1 << 35

// fastMaxStack bounds the stack (objects and MARKs waiting to be consumed,
// at least the nesting depth; a slot is about 100 bytes): deeper pickles,
// or a tuple of more items, take the graph path, so the fast path's memory
// stays under about 30 MB plus the memo.
const fastMaxStack = 1 << 18

// fastTop is a precomputed --top result.
type fastTop struct {
	n      int
	leaves bool // of the objects that hold no other (Tree.Leaves: the top sink's)
	items  []Item
}

// FastTop computes `pk trace --top n` of the file at path with the fast
// path. It returns nil when the fast path does not apply (then use NewDoc
// over input.Open, the graph path), and always when the environment sets
// PK_TRACE_FAST=0 (to measure or cross-check the graph path).
func FastTop(path string, n int) *Tree {
	if n <= 0 {
		return nil
	}
	return fastFile(path, func(ra io.ReaderAt, size int64) (*Tree, error) { return fastTopOf(ra, size, path, n) })
}

// openRegular opens path when it is a regular file (the fast paths read
// files, not pipes), with its size.
// fastFile runs one of the fast paths over path when it is a regular file
// and PK_TRACE_FAST is not 0; nil means the graph path must do it.
func fastFile(path string, run func(ra io.ReaderAt, size int64) (*Tree, error)) *Tree {
	if path == "-" || os.Getenv("PK_TRACE_FAST") == "0" {
		return nil
	}
	f, size, ok := openRegular(path)
	if !ok {
		return nil
	}
	defer f.Close()
	mark := grow.Mark()
	t, _ := run(f, size)
	if t == nil {
		grow.Discard(mark) // (the graph path parses next)
	}
	return t
}

func openRegular(path string) (*os.File, int64, bool) {
	if input.ReadOnce(path) {
		return nil, 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, false
	}
	return f, fi.Size(), true
}

// bare reports whether pkg/input reads the input as a bare pickle (no
// compression, zip or .npy magic): the fast paths take only those.
func bare(ra io.ReaderAt) bool {
	var head [16]byte
	k, _ := ra.ReadAt(head[:], 0)
	return input.PlainPickle(head[:k])
}

// errFallback says why the fast path gave up.
type errFallback struct{ reason string }

func (e *errFallback) Error() string { return "fast path does not apply: " + e.reason }

func fallback(reason string) error { return &errFallback{reason} }

// fastTopOf runs the fast path over size bytes of ra; name is the file name
// (as the graph path reports it). On fallback it returns nil and the reason.
func fastTopOf(ra io.ReaderAt, size int64, name string, n int) (*Tree, error) {
	if size <= 0 {
		return nil, fallback("empty or unknown size")
	}
	if !bare(ra) {
		return nil, fallback("not a bare pickle (compression or container magic)")
	}
	m := &fastMachine{ra: ra, size: size, name: name, n: n}
	if err := m.runAll(); err != nil {
		return nil, err
	}
	return m.tree()
}

// runAll runs m (its view set) over the input from its start; an error
// that is not a fallback already becomes one (the graph path then reports
// it, or answers).
func (m *fastMachine) runAll() error {
	m.rd = pickle.NewReader(io.NewSectionReader(m.ra, 0, m.size), m.size, m.name)
	// the whole view's first pass reads no str or bytes value (the second
	// prints them): they may point into the read buffer, not be copied
	m.rd.Borrow = m.wv != nil && m.wv.pass1
	if err := m.run(); err != nil {
		var fb *errFallback
		if !errors.As(err, &fb) {
			err = fallback(err.Error())
		}
		return err
	}
	return nil
}

// fastSlot is one stack entry: a node being built or consumed, or a
// reference (GET) to a memoized immutable node.
type fastSlot struct {
	id     int32
	kind   pickle.Kind
	op     pickle.Opcode
	origin bool  // the slot where the node was built (false: a GET)
	py2    bool  // STRING/BINSTRING/SHORT_BINSTRING
	off    int64 // offset of the creating opcode
	self   int64 // origin: the node's own bytes; reference: the GET's bytes
	incl   int64 // sizes of the nodes it owns
	fold   int64 // sizes of the scalar dict keys it owns
	count  int64 // items (a dict counts keys and values)
	kids   int64 // display children: the items but a dict's scalar keys (bounded view)
	memo   bool  // written to the memo
	ival   int64
	str    string
	big    *big.Int
	blob   *pickle.Blob
	rec    *fastRec // created when the node or one it owns entered the heap
	ln     int32    // 1 + the node's ID in a depth view's store (fast_depth.go); 0: not built
	ref    int32    // reference: the ID of the node it refers to

	w wholeSlot // the whole view's (fast_whole.go)
}

// fastRec is what --top needs of a node in the heap or of an ancestor of
// one: its role in its owner and the owner's record.
type fastRec struct {
	up   *fastRec
	role string // "" until resolved at the end (see keyRef)
	// a dict key read from a memo reference: its kind and offset, read
	// again only if this record's path is printed
	keyRef  bool
	keyKind pickle.Kind
	keyOff  int64
	keyIdx  int     // the entry's index in its dict
	val     fastVal // nodes that entered the heap: what their line shows
	size    int64
	self    int64
	cnt     int64
	kids    int64
}

type fastMark struct {
	pos   int
	bytes int64
}

type fastEnt struct {
	size int64
	id   int32
	rec  *fastRec
}

// worse orders heap entries as Tree.Top does: smaller, then later.
func (a fastEnt) worse(b fastEnt) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return a.id > b.id
}

type fastMachine struct {
	// objKey: a dict key that is not a scalar was met (objKeyReason)
	objKey bool
	ra     io.ReaderAt
	size   int64
	name   string
	n      int
	rd     *pickle.Reader
	stack  []fastSlot
	marks  []fastMark
	memo   fastMemo
	ids    int64
	heap   []fastEnt
	proto  int
	root   *fastRec
	ops    []pickle.Op   // opcodes decoded at once (Reader.NextBufferedClean)
	one    [1]pickle.Op  // an opcode read by NextInto
	sself  int64         // the stream's own bytes (PROTO, FRAME, STOP)
	bview  bool          // the heap keeps the lines of a bounded view: no small scalars
	dv     *depthView    // set for a depth view (fast_depth.go); nil for --top
	pv     *picView      // set for the pictures (fast_pic.go)
	wv     *wholeView    // set for the whole view (fast_whole.go)
	keys   *pickle.Store // scratch for keyRole
}

func (m *fastMachine) run() error {
	// not a pickle of plain data at all (a zip starts with PERSID): give up
	// before decoding the first argument
	if b := m.rd.Peek(1); len(b) == 1 && !fastOps[b[0]] {
		return fallback("opcode " + pickle.Opcode(b[0]).String())
	}
	if m.ops == nil {
		m.ops = make([]pickle.Op, fastBatch)
	}
	for done := false; !done; {
		// the opcodes whole in the read buffer (never STOP), else one
		// read the ordinary way, into an Op of its own (m.ops stays
		// clean): the same opcodes, arguments and errors
		ops := m.ops[:m.rd.NextBufferedClean(m.ops)]
		if len(ops) == 0 {
			if err := m.rd.NextInto(&m.one[0]); err != nil {
				return err
			}
			ops = m.one[:]
		}
		for i := 0; i < len(ops) && !done; i++ {
			if m.wv != nil && m.wv.pend {
				if err := m.wv.before(m); err != nil {
					return err
				}
			}
			var err error
			if done, err = m.step(&ops[i]); err != nil {
				return err
			}
			if len(m.stack)+len(m.marks) > fastMaxStack {
				return fallback("stack deeper than fastMaxStack")
			}
		}
	}
	if m.rd.Offset() != m.size {
		return fallback("bytes after STOP")
	}
	if m.objKey {
		return fallback(objKeyReason)
	}
	return nil
}

// fastOps are the opcodes step handles (run checks the first).
var fastOps = func() (t [256]bool) {
	for _, c := range []pickle.Opcode{pickle.PROTO, pickle.FRAME, pickle.STOP, pickle.MARK, pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE,
		pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.LONG, pickle.LONG1, pickle.LONG4, pickle.FLOAT, pickle.BINFLOAT,
		pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING, pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
		pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8, pickle.BYTEARRAY8,
		pickle.EMPTY_LIST, pickle.EMPTY_DICT, pickle.EMPTY_TUPLE, pickle.EMPTY_SET,
		pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3,
		pickle.APPEND, pickle.APPENDS, pickle.SETITEM, pickle.SETITEMS, pickle.ADDITEMS,
		pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT, pickle.MEMOIZE, pickle.GET, pickle.BINGET, pickle.LONG_BINGET} {
		t[c] = true
	}
	return t
}()

func (m *fastMachine) fence() int {
	if len(m.marks) == 0 {
		return 0
	}
	return m.marks[len(m.marks)-1].pos
}

func (m *fastMachine) marker() (fastMark, error) {
	if len(m.marks) == 0 {
		return fastMark{}, fallback("no MARK")
	}
	mk := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	return mk, nil
}

// newSlot makes *s the slot of a node created by o, with the next ID. It
// fills s in place, field by field: a slot built as a value and copied
// (into the result, then onto the stack) cost a tenth of the whole view's
// CPU in its copies.
func (m *fastMachine) newSlot(s *fastSlot, k pickle.Kind, o *pickle.Op) error {
	if m.ids >= math.MaxInt32 {
		return fallback("too many nodes")
	}
	*s = fastSlot{}
	s.id, s.kind, s.op, s.origin, s.off = int32(m.ids), k, o.Code, true, o.Offset
	m.ids++
	if m.dv != nil {
		m.dv.created(s)
	}
	if m.wv != nil {
		m.wv.created(s)
	}
	return nil
}

// push returns a new slot on top of the stack, zeroed by its filler
// (newSlot, or the memo reference's).
func (m *fastMachine) push() *fastSlot {
	n := len(m.stack)
	if n == cap(m.stack) {
		m.stack = grow.Room(m.stack, 1)
	}
	m.stack = m.stack[:n+1]
	return &m.stack[n]
}

// scalar pushes a node that takes no operand.
func (m *fastMachine) scalar(k pickle.Kind, o *pickle.Op) (*fastSlot, error) {
	s := m.push()
	if err := m.newSlot(s, k, o); err != nil {
		m.stack = m.stack[:len(m.stack)-1]
		return nil, err
	}
	s.self = o.Len
	return s, nil
}

func (m *fastMachine) step(o *pickle.Op) (bool, error) {
	var err error
	var s *fastSlot
	switch o.Code {
	case pickle.PROTO:
		if o.Int > pickle.HighestProtocol {
			return false, fallback("unsupported protocol")
		}
		m.proto = int(o.Int)
		m.sself += o.Len
	case pickle.FRAME:
		m.sself += o.Len
	case pickle.STOP:
		m.sself += o.Len
		if len(m.marks) > 0 || len(m.stack) != 1 {
			return false, fallback("stack or MARKs left at STOP")
		}
		r := &m.stack[0]
		if !r.origin {
			return false, fallback("the result is a memo reference")
		}
		if r.kind == pickle.KindInt && r.big != nil {
			return false, fallback("a big int result (torch's legacy magic)")
		}
		if m.dv != nil {
			return true, m.dv.done(m, r)
		}
		if m.pv != nil {
			return true, m.pv.done(m, r)
		}
		if m.wv != nil {
			return true, m.wv.done(m, r)
		}
		m.offer(r)
		if r.rec != nil {
			r.rec.role = ppath.Root
		}
		return true, nil
	case pickle.MARK:
		m.marks = grow.Push(m.marks, fastMark{pos: len(m.stack), bytes: o.Len})
	case pickle.NONE:
		_, err = m.scalar(pickle.KindNone, o)
	case pickle.NEWTRUE, pickle.NEWFALSE:
		if s, err = m.scalar(pickle.KindBool, o); err == nil && o.Code == pickle.NEWTRUE {
			s.ival = 1
		}
	case pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.LONG, pickle.LONG1, pickle.LONG4:
		k := pickle.KindInt
		if o.Code == pickle.INT && o.IsBool {
			k = pickle.KindBool
		}
		if s, err = m.scalar(k, o); err == nil {
			s.ival, s.big = o.Int, o.Big
		}
	case pickle.FLOAT, pickle.BINFLOAT:
		if s, err = m.scalar(pickle.KindFloat, o); err == nil {
			s.ival = o.Int
		}
	case pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING,
		pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
		pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8, pickle.BYTEARRAY8:
		if s, err = m.scalar(payloadKind(o.Code), o); err == nil {
			setPayload(s, o)
		}
	case pickle.EMPTY_LIST:
		_, err = m.scalar(pickle.KindList, o)
	case pickle.EMPTY_DICT:
		_, err = m.scalar(pickle.KindDict, o)
	case pickle.EMPTY_TUPLE:
		_, err = m.scalar(pickle.KindTuple, o)
	case pickle.EMPTY_SET:
		_, err = m.scalar(pickle.KindSet, o)

	case pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		k := pickle.KindList
		switch o.Code {
		case pickle.TUPLE:
			k = pickle.KindTuple
		case pickle.FROZENSET:
			k = pickle.KindFrozenSet
		case pickle.DICT:
			k = pickle.KindDict
		}
		if k == pickle.KindDict && (len(m.stack)-mk.pos)%2 != 0 {
			return false, fallback("odd number of items for DICT")
		}
		return false, m.build(k, o, mk.pos, mk.bytes)
	case pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
		c := int(o.Code-pickle.TUPLE1) + 1
		if len(m.stack)-c < m.fence() {
			return false, fallback("stack underflow")
		}
		return false, m.build(pickle.KindTuple, o, len(m.stack)-c, 0)

	case pickle.APPEND:
		x := len(m.stack) - 1
		if x <= m.fence() {
			return false, fallback("stack underflow")
		}
		return false, m.into(x, o.Len, pickle.KindList)
	case pickle.SETITEM:
		x := len(m.stack) - 2
		if x <= m.fence() {
			return false, fallback("stack underflow")
		}
		return false, m.into(x, o.Len, pickle.KindDict)
	case pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, fallback("stack underflow")
		}
		k := pickle.KindList
		switch o.Code {
		case pickle.SETITEMS:
			if (len(m.stack)-mk.pos)%2 != 0 {
				return false, fallback("odd number of items for SETITEMS")
			}
			k = pickle.KindDict
		case pickle.ADDITEMS:
			k = pickle.KindSet
		}
		return false, m.into(mk.pos, o.Len+mk.bytes, k)

	case pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT, pickle.MEMOIZE:
		if len(m.stack) <= m.fence() {
			return false, fallback("stack underflow")
		}
		idx := o.Int
		if o.Code == pickle.MEMOIZE {
			idx = m.memo.count
		} else if idx < 0 || o.Big != nil {
			return false, fallback("bad memo index")
		}
		top := &m.stack[len(m.stack)-1]
		if !top.origin {
			return false, fallback("memo write of a reference")
		}
		if top.off >= fastMemoMaxOffset {
			return false, fallback("input too large for the fast memo")
		}
		top.self += o.Len
		top.memo = true
		m.memo.put(idx, top.kind, top.off, top.id)
		if m.dv != nil {
			m.dv.memoized(top)
		}
		if m.wv != nil {
			m.wv.memoized(top)
		}
	case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
		if o.Big != nil {
			return false, fallback("memo value not found")
		}
		k, off, id, ok := m.memo.get(o.Int)
		if !ok {
			return false, fallback("memo value not found")
		}
		if !k.Immutable() {
			return false, fallback("reference to a mutable object")
		}
		s = m.push()
		*s = fastSlot{}
		s.kind, s.off, s.self, s.ref = k, off, o.Len, id
		if m.dv != nil && m.dv.pass1 {
			m.dv.referenced(id)
		}
		if m.wv != nil {
			m.wv.got(s)
		}
	default:
		return false, fallback("opcode " + o.Code.String())
	}
	return false, err
}

func payloadKind(c pickle.Opcode) pickle.Kind {
	switch c {
	case pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8:
		return pickle.KindBytes
	case pickle.BYTEARRAY8:
		return pickle.KindByteArray
	}
	return pickle.KindStr
}

// setPayload stores a str/bytes argument as the machine does.
func setPayload(s *fastSlot, o *pickle.Op) {
	switch o.Code {
	case pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING:
		s.py2 = true
	}
	if o.Blob != nil {
		s.blob = o.Blob
		s.str = o.Blob.Prefix
		return
	}
	s.str = o.Str
	if s.py2 {
		s.str = pickle.Latin1ToUTF8(s.str)
	}
}

// build makes a container of kind k from stack[from:] (LIST, TUPLE, DICT,
// FROZENSET after a MARK of markBytes bytes; TUPLE1-3).
func (m *fastMachine) build(k pickle.Kind, o *pickle.Op, from int, markBytes int64) error {
	var n fastSlot
	if err := m.newSlot(&n, k, o); err != nil {
		return err
	}
	n.self = markBytes
	if err := m.takeAll(from, &n); err != nil {
		return err
	}
	n.self += o.Len
	m.stack = grow.Push(m.stack, n)
	return nil
}

// into handles APPEND(S), SETITEM(S) and ADDITEMS: the items are
// stack[x:], the target stack[x-1], which must be a container of kind k
// built here (not a reference: those are immutable).
func (m *fastMachine) into(x int, bytes int64, k pickle.Kind) error {
	t := &m.stack[x-1]
	if !t.origin || t.kind != k {
		return fallback("container operation on " + t.kind.String())
	}
	t.self += bytes
	return m.takeAll(x, t)
}

// objKeyReason is why the fast paths give up on a dict with a key that is
// not a scalar (a tuple, a frozenset): the path of its value is the key's
// literal when it has one (root[1, 2]), which the graph path spells from
// the key's items (pkg/path) and the fast views do not keep.
const objKeyReason = "a dict key that is not a scalar"

// takeAll consumes stack[from:] into by, as the machine's takeAll/take do.
func (m *fastMachine) takeAll(from int, by *fastSlot) error {
	if by.kind == pickle.KindDict {
		for i := from; i < len(m.stack); i++ {
			if (by.count+int64(i-from))%2 == 0 && !isScalarKind(m.stack[i].kind) {
				m.objKey = true // (every fast view gives up alike)
			}
		}
	}
	if m.dv != nil {
		return m.dv.takeAll(m, from, by)
	}
	if m.pv != nil {
		return m.pv.takeAll(m, from, by)
	}
	if m.wv != nil {
		return m.wv.takeAll(m, from, by)
	}
	for i := from; i < len(m.stack); i++ {
		s := &m.stack[i]
		pos := by.count
		by.count++
		if by.kind != pickle.KindDict || pos%2 == 1 || !isScalarKind(s.kind) {
			by.kids++
		}
		if !s.origin {
			by.self += s.self // the GET's bytes
			continue
		}
		sz := s.self + s.incl
		by.incl += sz
		if by.kind == pickle.KindDict && pos%2 == 0 && isScalarKind(s.kind) {
			by.fold += sz
		}
		if !m.bview || by.kind != pickle.KindDict || pos%2 == 1 || !isScalarKind(s.kind) {
			m.offer(s) // (a bounded view shows no dict key: its bytes are on the dict's line)
		}
		if s.rec != nil {
			m.role(s.rec, by, pos, i)
			if by.rec == nil {
				by.rec = &fastRec{}
			}
			s.rec.up = by.rec
		}
	}
	m.stack = m.stack[:from]
	return nil
}

// offer puts a finished node into the heap when it is among the n best.
func (m *fastMachine) offer(s *fastSlot) {
	e := fastEnt{size: s.self + s.incl, id: s.id}
	if m.bview && isScalarKind(s.kind) && e.size < SmallScalar {
		return // summed in its parent's aggregate line
	}
	if len(m.heap) < m.n {
		e.rec = m.record(s, e.size)
		m.heap = append(m.heap, e)
		m.up(len(m.heap) - 1)
		return
	}
	if !m.heap[0].worse(e) {
		return
	}
	e.rec = m.record(s, e.size)
	m.heap[0] = e
	m.down(0)
}

func (m *fastMachine) up(i int) {
	h := m.heap
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].worse(h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (m *fastMachine) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].worse(h[l]) {
			c = r
		}
		if !h[c].worse(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// record fills the record of a node entering the heap.
func (m *fastMachine) record(s *fastSlot, size int64) *fastRec {
	if s.rec == nil {
		s.rec = &fastRec{}
	}
	r := s.rec
	r.val = valOf(s)
	r.size = size
	r.self = s.self + s.fold
	r.cnt = s.count
	r.kids = s.kids
	if s.memo {
		r.val.flags |= pickle.FlagMemo
	}
	return r
}

// fastVal is what the fast paths keep of a node for its line: the fields
// of the record the graph path's store has for it (without its items: a
// container's item count is given by withCounts, its Self by the caller).
type fastVal struct {
	id    int32 // the node's number in the stream
	kind  pickle.Kind
	op    pickle.Opcode
	flags pickle.Flags
	off   int64
	ival  int64
	str   string
	big   *big.Int
	blob  *pickle.Blob
}

// valOf is the value of the node built in slot s.
func valOf(s *fastSlot) fastVal {
	v := fastVal{id: s.id, kind: s.kind, op: s.op, off: s.off, ival: s.ival, str: s.str, big: s.big, blob: s.blob}
	if s.py2 {
		v.flags |= pickle.FlagPy2Str
	}
	return v
}

// add appends v's node to the synthetic store out and returns its ID.
func (v *fastVal) add(out *pickle.Store) pickle.ID {
	id := out.Add(v.kind, v.op, v.off)
	v.set(out, id)
	return id
}

// set gives node id of out v's flags and value.
func (v *fastVal) set(out *pickle.Store, id pickle.ID) {
	out.SetFlags(id, v.flags)
	switch v.kind {
	case pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
		if v.blob != nil {
			out.SetBlob(id, v.blob)
		} else {
			out.SetStr(id, v.str)
		}
	default:
		if v.big != nil {
			out.SetBig(id, v.big)
		}
		out.SetInt(id, v.ival)
	}
}

// keyRole is the role of a value under the scalar dict key v, spelled
// from a scratch store of keys (the role strings do not share its memory,
// so it is emptied when it has grown, keeping its arrays: a new store each
// 1,024 keys allocated 191 MB on the whole tree of a 29 MB table).
func (m *fastMachine) keyRole(v fastVal) string { return m.keyRoleAt(v, 0) }

// keyRoleAt is keyRole for the key of entry j of its dict (a key with no
// path literal, a str of 1 MiB or more, is spelled [<key j>]).
func (m *fastMachine) keyRoleAt(v fastVal, j int) string {
	if m.keys == nil {
		m.keys = &pickle.Store{}
	} else if m.keys.Len() >= 1024 {
		m.keys.Reset()
	}
	return role{kind: rKey, k: v.add(m.keys), i: j}.str(m.keys)
}

// withCounts gives each node ids[i] of out counts[i] items, all NoID (the
// labels of the fast paths' containers need only their item count): one
// run of NoIDs, on the node with the most (SetNoItems), is shared by all
// (ShareItems).
func withCounts(out *pickle.Store, ids []pickle.ID, counts []int64) {
	most := -1
	for i, c := range counts {
		if c > 0 && (most < 0 || c > counts[most]) {
			most = i
		}
	}
	if most < 0 {
		return
	}
	out.SetNoItems(ids[most], int(counts[most]))
	for i, id := range ids {
		if i != most && counts[i] > 0 {
			out.ShareItems(id, ids[most], int(counts[i]))
		}
	}
}

// isContainer: the kinds whose label counts items.
func isContainer(k pickle.Kind) bool {
	switch k {
	case pickle.KindList, pickle.KindTuple, pickle.KindDict, pickle.KindSet, pickle.KindFrozenSet:
		return true
	}
	return false
}

func isScalarKind(k pickle.Kind) bool {
	switch k {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
		return true
	}
	return false
}

// role sets the path segment of item pos of by (at stack[i]) in r, as
// roleIn gives it: the first appearance of a node in its owner is where it
// was consumed, because references to it can only come later. A key that
// is a memo reference is read again from the input only when the path is
// printed (resolve).
func (m *fastMachine) role(r *fastRec, by *fastSlot, pos int64, i int) {
	switch by.kind {
	case pickle.KindSet, pickle.KindFrozenSet:
		r.role = role{kind: rSet, i: int(pos)}.str(nil)
		return
	case pickle.KindDict:
		j := int(pos / 2)
		key := &m.stack[i]
		if pos%2 == 1 {
			key = &m.stack[i-1]
		}
		switch {
		case !isScalarKind(key.kind) && pos%2 == 0:
			r.role = role{kind: rKeyObj, i: j}.str(nil)
		case !isScalarKind(key.kind):
			r.role = role{kind: rKeyVal, i: j}.str(nil) // (not printed: objKey)
		case key.origin:
			r.role = m.keyRoleAt(valOf(key), j)
		default:
			r.role = ""
			r.keyRef, r.keyKind, r.keyOff, r.keyIdx = true, key.kind, key.off, j
		}
		return
	}
	r.role = role{kind: rIndex, i: int(pos)}.str(nil)
}

// resolve spells out a role left for later by role.
func (m *fastMachine) resolve(r *fastRec) error {
	if !r.keyRef {
		return nil
	}
	kn, err := m.keyNode(&fastSlot{kind: r.keyKind, off: r.keyOff})
	if err != nil {
		return err
	}
	r.role, r.keyRef = m.keyRoleAt(kn, r.keyIdx), false
	return nil
}

// keyNode returns the node of a scalar dict key: from the slot where it was
// built, or for a reference read again from the input at its offset.
func (m *fastMachine) keyNode(s *fastSlot) (fastVal, error) {
	if s.origin {
		return valOf(s), nil
	}
	rd := pickle.NewReader(io.NewSectionReader(m.ra, s.off, m.size-s.off), m.size-s.off, m.name)
	op, err := rd.Next()
	if err != nil {
		return fastVal{}, err
	}
	var k fastSlot
	k.kind, k.op = pickle.KindNone, op.Code
	switch op.Code {
	case pickle.NONE:
	case pickle.NEWTRUE, pickle.NEWFALSE:
		k.kind = pickle.KindBool
		if op.Code == pickle.NEWTRUE {
			k.ival = 1
		}
	case pickle.INT, pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.LONG, pickle.LONG1, pickle.LONG4:
		k.kind = pickle.KindInt
		if op.Code == pickle.INT && op.IsBool {
			k.kind = pickle.KindBool
		}
		k.ival, k.big = op.Int, op.Big
	case pickle.FLOAT, pickle.BINFLOAT:
		k.kind, k.ival = pickle.KindFloat, op.Int
	case pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING,
		pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8,
		pickle.BINBYTES, pickle.SHORT_BINBYTES, pickle.BINBYTES8, pickle.BYTEARRAY8:
		k.kind = payloadKind(op.Code)
		setPayload(&k, &op)
	default:
		return fastVal{}, fallback("memo key not read again")
	}
	if k.kind != s.kind {
		return fastVal{}, fallback("memo key read again differs")
	}
	return valOf(&k), nil
}

// tree turns the heap into the Items Tree.Top would return, over a
// synthetic store of the heap's nodes (numbered as in the stream by num).
func (m *fastMachine) tree() (*Tree, error) {
	h := m.heap
	sort.Slice(h, func(i, j int) bool { return h[j].worse(h[i]) })
	out := &pickle.Store{Index: 0, Begin: 0, End: m.size, Proto: m.proto, Root: pickle.NoID}
	st := &StreamTree{Store: out, num: make([]int32, 0, len(h)), upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root}
	t := &Tree{File: &pickle.File{Name: m.name, Size: m.size}, Total: m.size, Streams: []*StreamTree{st}}
	st.tree = t
	links := map[*fastRec]*pathLink{}
	var chain []*fastRec
	var cids []pickle.ID
	var counts []int64
	items := make([]Item, 0, len(h))
	for _, e := range h {
		r := e.rec
		id := r.val.add(out)
		st.num = append(st.num, r.val.id)
		if isContainer(r.val.kind) {
			cids, counts = append(cids, id), append(counts, r.cnt)
		}
		// the path: a chain of links shared with the other items
		chain = chain[:0]
		x := r
		var pl *pathLink
		for x != nil {
			if l, ok := links[x]; ok {
				pl = l
				break
			}
			chain = append(chain, x)
			x = x.up
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if err := m.resolve(chain[i]); err != nil {
				return nil, err
			}
			pl = link(pl, chain[i].role)
			links[chain[i]] = pl
		}
		items = append(items, Item{Kind: ItemNode, Stream: st, Node: id, pl: pl, Size: r.size, Self: r.self})
	}
	withCounts(out, cids, counts)
	t.fast = &fastTop{n: m.n, items: items}
	return t, nil
}

// fastMemo is the memo as the machine's memoTable numbers it (dense
// indices appended in order, a map for the rest; count as len(memo)), with
// what the fast path needs of each entry: the node's kind and the offset of
// its opcode, packed in 5 bytes, in pages (no copies as it grows).
type fastMemo struct {
	lo     [][]uint32
	meta   [][]uint8 // kind+1 | offset bits 32-34 << 5; 0: unset
	ids    [][]int32 // node IDs, kept when withIDs (depth views)
	withID bool
	dense  int64
	sparse map[int64]fastMemoEnt
	count  int64
}

type fastMemoEnt struct {
	kind pickle.Kind
	off  int64
	id   int32
}

const fastPage = 1 << 16

func (t *fastMemo) set(i int64, k pickle.Kind, off int64, id int32) {
	p, j := i/fastPage, i%fastPage
	t.lo[p][j] = uint32(off)
	t.meta[p][j] = memoMeta(k, off)
	if t.withID {
		t.ids[p][j] = id
	}
}

// memoMeta is an entry's meta byte: its kind and its offset's high bits.
func memoMeta(k pickle.Kind, off int64) uint8 { return uint8(k+1) | uint8(off>>32)<<5 }

func (t *fastMemo) put(i int64, k pickle.Kind, off int64, id int32) {
	switch {
	case i < t.dense:
		p, j := i/fastPage, i%fastPage
		if t.meta[p][j] == 0 {
			t.count++
		}
		t.set(i, k, off, id)
	case i == t.dense:
		if len(t.sparse) > 0 {
			if _, ok := t.sparse[i]; ok {
				delete(t.sparse, i)
				t.count--
			}
		}
		// pages grow by append: the first one from a few entries, so small
		// pickles allocate little
		if i%fastPage == 0 {
			c := fastPage
			if i == 0 {
				c = 64
			}
			t.lo = append(t.lo, make([]uint32, 0, c))
			t.meta = append(t.meta, make([]uint8, 0, c))
			if t.withID {
				t.ids = append(t.ids, make([]int32, 0, c))
			}
		}
		// (appended as it is: the most common write, one a memoized node)
		p := len(t.lo) - 1
		t.lo[p] = append(t.lo[p], uint32(off))
		t.meta[p] = append(t.meta[p], memoMeta(k, off))
		if t.withID {
			t.ids[p] = append(t.ids[p], id)
		}
		t.dense++
		t.count++
	default:
		if t.sparse == nil {
			t.sparse = map[int64]fastMemoEnt{}
		}
		if _, ok := t.sparse[i]; !ok {
			t.count++
		}
		t.sparse[i] = fastMemoEnt{k, off, id}
	}
}

func (t *fastMemo) get(i int64) (pickle.Kind, int64, int32, bool) {
	if i >= 0 && i < t.dense {
		p, j := i/fastPage, i%fastPage
		mt := t.meta[p][j]
		if mt == 0 {
			return 0, 0, 0, false
		}
		var id int32
		if t.withID {
			id = t.ids[p][j]
		}
		return pickle.Kind(mt&31) - 1, int64(t.lo[p][j]) | int64(mt>>5)<<32, id, true
	}
	e, ok := t.sparse[i]
	return e.kind, e.off, e.id, ok
}
