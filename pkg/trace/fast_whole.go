package trace

import (
	"bufio"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sort"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The whole-tree fast path (docs/pk-trace.md, "The fast paths: --top and
// --depth", its paragraph "The whole tree").
//
// FastWhole prints `pk trace --lines 0` (and `--depth D`) as text for the
// inputs of FastTop — a bare pickle of plain data — without building the
// tree: it runs the fast machine twice and prints each line as soon as the
// second pass reaches it, through a bufio.Writer.
//
// A line of the whole tree needs things the stream says only later: a
// container's size, own bytes and item count (its items come after it),
// whether it is the last line among its siblings, whether it is memoized
// (and for JSON how many display children it has). The first pass records
// them, for each container in creation order (16 bytes; 20 for JSON), for
// each str or bytes of a line of its own (SmallScalar or more; at most one
// per KiB of input) and for each reference to a tuple or frozenset (its
// owner, 4 bytes). The second pass prints in stream order,
// which is the tree's preorder but for containers built after their items
// (TUPLE, FROZENSET, and LIST or DICT after a MARK): the first pass notes
// where each one that has an item with a line starts (16 bytes), and the
// second prints the container's line there, before its items (the others
// are printed when they are built). What the second pass holds is
// the open path (a frame a level, with the children's aggregate line
// summed as they are consumed and a run of references waiting for its
// end), the fast machine's stack and memo, and the values of the few
// scalars that memo references read as dict keys.
//
// Each line is made by the text printer of the graph path (textLine, over
// a small scratch store of the line's node, as the other fast paths'
// synthetic stores), so the output is byte-identical: the same tests as
// the other fast paths (fast_whole_test.go). Anything the fast machine
// does not take — and a result that is not a container — returns a
// fallback before anything is written.

// wholeMaxSize: sizes are kept in 32 bits.
const wholeMaxSize = 1 << 32

// wholeGCPercent is the collector's pace while the whole view runs.
const wholeGCPercent = 25

// wholeMaxKeys bounds the scalar values kept for memo references used as
// dict keys; beyond it a key is read again from the input.
const wholeMaxKeys = 1 << 16

// wholeSlot is what the whole view keeps in a stack slot.
type wholeSlot struct {
	start uint32 // number of the push where the slot's subtree starts (fewer than the input's bytes)
	ci    int32  // a container's index (creation order), a reference's to a tuple or frozenset; -1: none
	// pass 1: the last line among the children so far: 0 none, 1+ci a
	// container, -1 a reference, -2-i bigs[i]
	last int32
	el   bool  // pass 1: some child is summed in the aggregate line
	roff int64 // pass 1, JSON: the offset of the node the last reference among the children reads
}

// wholeRec is what pass 1 records of a container.
type wholeRec struct {
	parent int32 // the ID of its owner; -1: the result
	incl   uint32
	self   uint32 // its own bytes and its scalar dict keys'
	count  uint32 // items (a dict counts keys and values), and flags
}

const (
	wMemo  = 1 << 31 // memoized: the line shows #id
	wLast  = 1 << 30 // the last line among its siblings
	wCount = wLast - 1
)

// wholeBig is a str, bytes or bytearray with a line of its own.
type wholeBig struct {
	id, parent int32
	size       int64 // its bytes, with its memo write's (which follows it)
	last, memo bool
}

// wholeStart: the container id (index ci, made by op) is built after its
// items; its line comes before the push numbered start, its first item's.
type wholeStart struct {
	start  uint32
	id, ci int32
	op     pickle.Opcode
	off    int64 // of op (JSON)
}

// wholeTup is a tuple or frozenset that a memo reference reads.
type wholeTup struct {
	id    int32
	count int64
}

// wEntry is an open line of the printed path.
type wEntry struct {
	id     int32 // -1: the stream
	kind   pickle.Kind
	pl     *pathLink // its path (JSON)
	depth  int
	base   int   // stack position of the first item of its current batch
	count  int64 // items consumed so far
	elN    int64 // children summed in the aggregate line
	elSize int64
	// (a run of references waiting for its end is wholeView.ref: only the
	// innermost open line can have one, since a line's run is printed
	// before a line opens under it)
}

type wRef struct {
	on          bool
	id          int32
	kind        pickle.Kind
	count       int64
	n           int
	role, roleE string
	pl          *pathLink
}

// wholeView is the state of the two passes.
type wholeView struct {
	pass1 bool
	seq   int64 // pushes so far
	nci   int64 // containers so far
	nref  int64 // references to tuples and frozensets so far
	// pass 1's records
	recs    paged[wholeRec]
	kids    paged[uint32] // JSON: each container's display children (its line's "children")
	json    bool
	refs    paged[int32] // owners of the references to tuples and frozensets
	bigs    []wholeBig
	starts  []wholeStart
	keyRefs offSet // offsets of the scalars that references read as dict keys
	tupRefs offSet // offsets of the tuples and frozensets that references read
	proto   int
	sself   int64
	// pass 2
	keyVals map[int64]fastVal
	tupVals map[int64]wholeTup
	bi, si  int
	ri      int64
	pend    bool               // a push waits for before()
	path    pagedStack[wEntry] // paged: a chain of a million levels is not copied as it grows
	ref     wRef               // the innermost open line's run of references (wEntry)
	last    []bool
	limit   int // --depth; -1: none
	// printing
	t      *Tree
	bw     *bufio.Writer
	pr     *wholePrinter
	cur    *wholeBatch // the batch being filled
	depthN int         // the depth of the last line (a line is at most one deeper)
}

// offSet is a set of input offsets, a bit each, in pages made as they are
// first set: at most an eighth of the input's bytes, and little when the
// offsets set are few (a table's dict keys, written once at its start).
// It replaced maps, whose assignment for each key reference was 4 % of the
// whole view's CPU on a table of memo-shared strings.
type offSet struct{ pages [][]uint64 }

// offPage is how many offsets a page of offSet holds (8 KiB).
const offPage = 1 << 16

// add puts off (0 or more) into the set.
func (o *offSet) add(off int64) {
	p, b := int(off/offPage), off%offPage
	if p >= len(o.pages) {
		o.pages = append(o.pages, make([][]uint64, p+1-len(o.pages))...)
	}
	if o.pages[p] == nil {
		o.pages[p] = make([]uint64, offPage/64)
	}
	o.pages[p][b/64] |= 1 << (b % 64)
}

// has says whether off is in the set.
func (o *offSet) has(off int64) bool {
	p, b := int(off/offPage), off%offPage
	return p < len(o.pages) && o.pages[p] != nil && o.pages[p][b/64]&(1<<(b%64)) != 0
}

// errChanged: the second pass read what the first did not.
var errChanged = errors.New("the input changed between the two passes of the whole view")

// FastWhole writes the whole tree (`pk trace --lines 0`, or with depth >=
// 0 `--depth depth`, stream order, small scalars summed: Options{Depth:
// depth}) of the file at path to w: as text with its column header, as
// WriteHeader and WriteText over the graph path's tree would, or with
// asJSON as WriteJSON would. begin is called once the first pass is done,
// before anything is written. It returns false when the fast path does not
// apply (nothing was written: take the graph path), and always when
// PK_TRACE_FAST=0. An error with true is an error of writing, or of an
// input that changed between the passes, after some output.
func FastWhole(path string, w io.Writer, depth int, asJSON bool, sty Style, begin func()) (bool, error) {
	if path == "-" || os.Getenv("PK_TRACE_FAST") == "0" {
		return false, nil
	}
	f, size, ok := openRegular(path)
	if !ok {
		return false, nil
	}
	defer f.Close()
	err := fastWholeOf(f, size, path, nil, w, depth, asJSON, sty, begin)
	var fb *errFallback
	if errors.As(err, &fb) {
		return false, nil
	}
	return true, err
}

// FastWholeCompressed is FastWhole (the whole tree, or with depth >= 0
// `--depth depth`) of a compressed bare pickle file read through its spool
// sp (input.SpoolDecompressed): what NewDoc's tree of the compressed file
// prints, its File and its pickle part (Tree.Compressed) above the
// stream, whose lines are two levels deeper than a bare file's. The File,
// part and stream lines use no level of depth, but for depth 0, which
// shows the File's line alone (truncated: the start's children are
// levels).
func FastWholeCompressed(sp *input.Spool, w io.Writer, depth int, asJSON bool, sty Style, begin func()) (bool, error) {
	if os.Getenv("PK_TRACE_FAST") == "0" {
		return false, nil
	}
	f, size, ok := openRegular(sp.Path())
	if !ok {
		return false, nil
	}
	defer f.Close()
	err := fastWholeOf(f, size, sp.Path(), sp, w, depth, asJSON, sty, begin)
	var fb *errFallback
	if errors.As(err, &fb) {
		return false, nil
	}
	return true, err
}

// fastWholeOf is FastWhole over size bytes of ra (of sp, when set: the
// compressed file's tree); a *errFallback means nothing was written.
func fastWholeOf(ra io.ReaderAt, size int64, name string, sp *input.Spool, w io.Writer, depth int, asJSON bool, sty Style, begin func()) error {
	if size <= 0 {
		return fallback("empty or unknown size")
	}
	if size >= wholeMaxSize {
		return fallback("input too large for the whole view")
	}
	if !bare(ra) {
		return fallback("not a bare pickle (compression or container magic)")
	}
	// what is live is pass 1's records, the memo and pages without
	// pointers, cheap to mark; the garbage is the lines' strings: collect
	// it often, so that the peak stays near what is live
	defer debug.SetGCPercent(debug.SetGCPercent(wholeGCPercent))
	run := func(wv *wholeView) (*fastMachine, error) {
		m := &fastMachine{ra: ra, size: size, name: name, wv: wv}
		if err := m.runAll(); err != nil {
			return m, err
		}
		return m, nil
	}
	// pass 1
	p1 := &wholeView{pass1: true, json: asJSON}
	m, err := run(p1)
	if err != nil {
		return err
	}
	total, nci, nref := m.ids, p1.nci, p1.nref
	sort.Slice(p1.bigs, func(i, j int) bool { return p1.bigs[i].id < p1.bigs[j].id })
	sort.Slice(p1.starts, func(i, j int) bool {
		a, b := p1.starts[i], p1.starts[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return a.id > b.id // the outer one first
	})
	m = nil
	if size >= 16<<20 {
		debug.FreeOSMemory()
	}
	if begin != nil {
		begin()
	}
	// pass 2: print
	wv := p1
	wv.pass1, wv.seq, wv.nci, wv.nref = false, 0, 0, 0
	wv.keyVals, wv.tupVals = map[int64]fastVal{}, map[int64]wholeTup{}
	wv.limit = depth
	wv.bw = bufio.NewWriterSize(w, 64<<10)
	wv.t = &Tree{File: &pickle.File{Name: name, Size: size}, Total: size}
	shift := 0
	if sp != nil && wv.t.Compressed(sp, 0) {
		shift = 2 // (the File and its part above the stream)
	}
	var line lineBuf
	g, width := sty.layout()
	if asJSON {
		wv.t.jsonSummary(wv.bw)
	} else {
		writeHeader(&line, width)
		wv.bw.Write(line.b)
	}
	if shift > 0 {
		vs := []Visit{{Item: wv.t.Root(), Depth: 0, Last: []bool{}, Kids: 1}, {Item: wv.t.top[0], Depth: 1, Last: []bool{true}, Kids: 1}}
		if depth == 0 {
			// the File's line alone, truncated (pass 1 read the stream
			// whole: what pass 2 would print is below it)
			vs = []Visit{{Item: wv.t.Root(), Depth: 0, Last: []bool{}, Truncated: true}}
		}
		for _, v := range vs {
			if asJSON {
				wv.t.jsonVisit(wv.bw, &v)
				continue
			}
			line.Reset()
			wv.t.textLine(&line, &v, g, width, sty)
			if sty.ASCII {
				wv.bw.WriteString(asciiOnly(line.String()))
			} else {
				wv.bw.Write(line.b)
			}
		}
		if depth == 0 {
			return wv.bw.Flush()
		}
	}
	wv.pr = newWholePrinter(wv.t, wv.bw, asJSON, sty, wv.proto, wv.sself)
	wv.pr.setShift(shift)
	wv.cur = <-wv.pr.free
	spl := link(nil, "")
	wv.path.push(wEntry{id: -1, depth: 0, pl: spl})
	err = wv.emit(Item{Kind: ItemStream, Size: size, Self: wv.sself, pl: spl}, wRole{}, 0, true, 1)
	if err == nil {
		m, err = run(wv)
	}
	if perr := wv.pr.close(wv.cur); perr != nil {
		// the output is lost: a write error, whatever pass 2 made of it
		// (runAll gives the error a batch's swap returned as a fallback)
		return perr
	}
	if err == nil && (m.ids != total || wv.nci != nci || wv.nref != nref || wv.path.n != 0) {
		err = errChanged
	}
	if err != nil {
		var fb *errFallback
		if errors.As(err, &fb) {
			err = errors.New(errChanged.Error() + ": " + fb.reason)
		}
		return err
	}
	return wv.bw.Flush()
}

// add puts v into the batch's scratch store, with count items (its
// label's); a full batch is sent to the printer first.
func (wv *wholeView) add(v fastVal, count int64) (pickle.ID, error) {
	if err := wv.room(); err != nil {
		return 0, err
	}
	st := wv.cur.st
	id := v.add(st.Store)
	wv.cur.textN += int64(len(v.str))
	st.num = append(st.num, v.id)
	st.counts = append(st.counts, count)
	return id, nil
}

// room sends the batch to the printer when it is full, and takes an empty
// one.
func (wv *wholeView) room() error {
	if !wv.cur.full() {
		return nil
	}
	var err error
	wv.cur, err = wv.pr.swap(wv.cur)
	return err
}

// buildOp: containers made from the items on the stack (fastMachine.build).
func buildOp(op pickle.Opcode) bool {
	switch op {
	case pickle.LIST, pickle.TUPLE, pickle.FROZENSET, pickle.DICT, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3:
		return true
	}
	return false
}

func buildKind(op pickle.Opcode) pickle.Kind {
	switch op {
	case pickle.LIST:
		return pickle.KindList
	case pickle.FROZENSET:
		return pickle.KindFrozenSet
	case pickle.DICT:
		return pickle.KindDict
	}
	return pickle.KindTuple
}

// created: a node was numbered (fastMachine.newSlot; s is zeroed).
func (wv *wholeView) created(s *fastSlot) {
	s.w.start, s.w.ci = uint32(wv.seq), -1
	wv.seq++
	if isContainer(s.kind) {
		s.w.ci = int32(wv.nci)
		wv.nci++
		if wv.pass1 {
			wv.recs.push(wholeRec{parent: -1})
			if wv.json {
				wv.kids.push(0)
			}
		}
	}
	if !wv.pass1 && !buildOp(s.op) && (!isScalarKind(s.kind) || wv.startsBy(s.w.start) ||
		wv.bi < len(wv.bigs) && wv.bigs[wv.bi].id == s.id) {
		wv.pend = true
	}
}

// got: a memo reference was pushed (s is zeroed).
func (wv *wholeView) got(s *fastSlot) {
	s.w.start, s.w.ci = uint32(wv.seq), -1
	wv.seq++
	if !isScalarKind(s.kind) {
		s.w.ci = int32(wv.nref)
		wv.nref++
		if wv.pass1 {
			wv.refs.push(-1)
			wv.tupRefs.add(s.off)
		}
	}
	if !wv.pass1 && (!isScalarKind(s.kind) || wv.startsBy(s.w.start)) {
		wv.pend = true
	}
}

// startsBy says whether a container built after its items has its first
// item at or before the push numbered seq, its line not printed yet
// (starting prints it, or finds the input changed). Pass 2 calls before
// for a scalar pushed only then or when it has a line of its own: the
// other scalars (most of a table's) are summed as they are consumed.
func (wv *wholeView) startsBy(seq uint32) bool {
	return wv.si < len(wv.starts) && wv.starts[wv.si].start <= seq
}

// memoized: a memo write on the node of slot s. Pass 2 keeps what the
// references to it will show.
func (wv *wholeView) memoized(s *fastSlot) {
	if wv.pass1 {
		return
	}
	switch {
	case isScalarKind(s.kind):
		if wv.keyRefs.has(s.off) && len(wv.keyVals) < wholeMaxKeys {
			if _, ok := wv.keyVals[s.off]; !ok {
				wv.keyVals[s.off] = valOf(s)
			}
		}
	case s.kind == pickle.KindTuple || s.kind == pickle.KindFrozenSet:
		if wv.tupRefs.has(s.off) {
			wv.tupVals[s.off] = wholeTup{id: s.id, count: s.count}
		}
	}
}

// finish records container s, consumed by the node parent (-1: the result).
func (wv *wholeView) finish(s *fastSlot, parent int32) error {
	sz, self := s.self+s.incl, s.self+s.fold
	if s.count > wCount || sz >= wholeMaxSize || self >= wholeMaxSize || s.w.ci < 0 || int64(s.w.ci) >= wv.recs.n {
		return fallback("a container too large for the whole view")
	}
	r := wv.recs.at(int64(s.w.ci))
	r.parent, r.incl, r.self = parent, uint32(sz), uint32(self)
	r.count = r.count&^wCount | uint32(s.count)
	if s.memo {
		r.count |= wMemo
	}
	if wv.json {
		k := s.kids
		if s.w.el {
			k++
		}
		if k > wCount || s.w.ci >= int32(wv.kids.n) {
			return fallback("a container too large for the whole view")
		}
		*wv.kids.at(int64(s.w.ci)) = uint32(k)
	}
	if s.w.el {
		return nil
	}
	switch l := s.w.last; {
	case l > 0:
		wv.recs.at(int64(l) - 1).count |= wLast
	case l <= -2:
		wv.bigs[-2-l].last = true
	}
	return nil
}

// takeAll is fastMachine.takeAll for the whole view's passes.
func (wv *wholeView) takeAll(m *fastMachine, from int, by *fastSlot) error {
	building := !(from > 0 && &m.stack[from-1] == by)
	if !wv.pass1 {
		return wv.consume(m, from, by, building)
	}
	if building && from < len(m.stack) {
		by.w.start = m.stack[from].w.start
		if by.w.ci < 0 {
			return fallback("a built container without an index")
		}
		if wholeLines(m.stack[from:], by.kind) {
			wv.starts = grow.Push(wv.starts, wholeStart{start: by.w.start, id: by.id, ci: by.w.ci, op: by.op, off: by.off})
		}
	}
	for i := from; i < len(m.stack); i++ {
		s := &m.stack[i]
		pos := by.count
		by.count++
		key := by.kind == pickle.KindDict && pos%2 == 0
		if !s.origin {
			by.self += s.self // the GET's bytes
			switch {
			case key:
				wv.keyRefs.add(s.off)
			case isScalarKind(s.kind):
				by.w.el = true
			case s.w.ci >= 0 && int64(s.w.ci) < wv.refs.n:
				*wv.refs.at(int64(s.w.ci)) = by.id
				if by.w.last != -1 || by.w.roff != s.off {
					by.kids++ // (a run of references to one object is one line)
				}
				by.w.last, by.w.roff = -1, s.off
			}
			continue
		}
		sz := s.self + s.incl
		by.incl += sz
		switch {
		case key && isScalarKind(s.kind):
			by.fold += sz
		case isContainer(s.kind):
			if err := wv.finish(s, by.id); err != nil {
				return err
			}
			by.w.last = 1 + s.w.ci
			by.kids++
		case sz >= SmallScalar:
			wv.bigs = grow.Push(wv.bigs, wholeBig{id: s.id, parent: by.id, size: sz, memo: s.memo})
			by.w.last = -1 - int32(len(wv.bigs))
			by.kids++
		default:
			by.w.el = true
		}
	}
	m.stack = m.stack[:from]
	return nil
}

// done: STOP with the result r.
func (wv *wholeView) done(m *fastMachine, r *fastSlot) error {
	if wv.pass1 {
		if !isContainer(r.kind) {
			return fallback("the result is not a container")
		}
		wv.proto, wv.sself = m.proto, m.sself
		if err := wv.finish(r, -1); err != nil {
			return err
		}
		wv.recs.at(int64(r.w.ci)).count |= wLast
		return nil
	}
	for wv.path.n > 0 {
		if err := wv.close(); err != nil {
			return err
		}
	}
	return nil
}

// before: pass 2 prints what the last opcode pushed (pend), before the
// next runs.
func (wv *wholeView) before(m *fastMachine) error {
	wv.pend = false
	p := len(m.stack) - 1
	if p < 0 {
		return errChanged
	}
	s := &m.stack[p]
	if err := wv.starting(m, int64(s.w.start), p); err != nil {
		return err
	}
	switch {
	case !s.origin:
		if isScalarKind(s.kind) {
			return nil // summed in the aggregate line, or a dict key
		}
		if wv.ri >= wv.refs.n {
			return errChanged
		}
		parent := *wv.refs.at(wv.ri)
		wv.ri++
		return wv.startRef(m, s, parent, p)
	case isContainer(s.kind):
		return wv.startContainer(m, s.id, s.kind, int64(s.w.ci), p, p+1, s.op, s.off)
	case wv.bi < len(wv.bigs) && wv.bigs[wv.bi].id == s.id:
		b := wv.bigs[wv.bi]
		wv.bi++
		e, err := wv.under(b.parent)
		if err != nil || wv.hidden(e.depth+1) {
			return err
		}
		rs, err := wv.roleAt(m, e, p)
		if err != nil {
			return err
		}
		v := valOf(s)
		if b.memo {
			v.flags |= pickle.FlagMemo
		}
		id, err := wv.add(v, 0)
		if err != nil {
			return err
		}
		return wv.emit(Item{Kind: ItemNode, Node: id, Role: rs.s, pl: wv.link(e, rs.s), Size: b.size, Self: b.size}, rs, e.depth+1, b.last, 0)
	}
	return nil
}

// starting prints the lines of the containers built after their items
// whose first item is the push numbered seq (at stack position p), the
// outer one first.
func (wv *wholeView) starting(m *fastMachine, seq int64, p int) error {
	for wv.startsBy(uint32(seq)) {
		st := wv.starts[wv.si]
		wv.si++
		if int64(st.start) != seq {
			return errChanged
		}
		if err := wv.startContainer(m, st.id, buildKind(st.op), int64(st.ci), p, p, st.op, st.off); err != nil {
			return err
		}
	}
	return nil
}

// startContainer prints the line of container id (index ci), which sits
// (or will) at stack position p, and opens it; its items start at base.
func (wv *wholeView) startContainer(m *fastMachine, id int32, k pickle.Kind, ci int64, p, base int, op pickle.Opcode, off int64) error {
	if ci < 0 || ci >= wv.recs.n {
		return errChanged
	}
	r := *wv.recs.at(ci)
	e, err := wv.under(r.parent)
	if err != nil {
		return err
	}
	depth := e.depth + 1
	n := int64(r.count & wCount)
	if wv.hidden(depth) {
		if n > 0 {
			wv.path.push(wEntry{id: id, kind: k, depth: depth, base: base})
		}
		return nil
	}
	rs, err := wv.roleAt(m, e, p)
	if err != nil {
		return err
	}
	v := fastVal{id: id, kind: k, op: op, off: off}
	if r.count&wMemo != 0 {
		v.flags |= pickle.FlagMemo
	}
	kids := 0
	if wv.json {
		kids = int(*wv.kids.at(ci))
	} else if n > 0 {
		kids = 1 // (the text needs only whether there are any)
	}
	pl := wv.link(e, rs.s) // (the result's: the stream's head, root)
	nid, err := wv.add(v, n)
	if err != nil {
		return err
	}
	it := Item{Kind: ItemNode, Node: nid, Role: rs.s, pl: pl, Size: int64(r.incl), Self: int64(r.self)}
	if err := wv.emit(it, rs, depth, r.count&wLast != 0, kids); err != nil {
		return err
	}
	if n > 0 {
		wv.path.push(wEntry{id: id, kind: k, depth: depth, base: base, pl: pl})
	}
	return nil
}

// startRef starts a line of a reference to a tuple or frozenset: a run of
// references to one object is one line, printed when the run ends.
func (wv *wholeView) startRef(m *fastMachine, s *fastSlot, parent int32, p int) error {
	e, err := wv.closeTo(parent)
	if err != nil || wv.hidden(e.depth+1) {
		return err
	}
	tv, ok := wv.tupVals[s.off]
	if !ok {
		return errChanged
	}
	w, err := wv.roleAt(m, e, p)
	if err != nil {
		return err
	}
	rs := w.str()
	if wv.ref.on && wv.ref.id == tv.id {
		wv.ref.n++
		wv.ref.roleE = rs
		return nil
	}
	if err := wv.flushRef(e, false); err != nil {
		return err
	}
	wv.ref = wRef{on: true, id: tv.id, kind: s.kind, count: tv.count, n: 1, role: rs, pl: wv.link(e, rs)}
	return nil
}

// link is the path of a child of e with role rs (JSON only: nil for text).
func (wv *wholeView) link(e *wEntry, rs string) *pathLink {
	if !wv.json {
		return nil
	}
	return link(e.pl, rs)
}

// flushRef prints e's waiting run of references (wv.ref: e is the
// innermost open line).
func (wv *wholeView) flushRef(e *wEntry, last bool) error {
	r := wv.ref
	if !r.on {
		return nil
	}
	wv.ref = wRef{}
	id, err := wv.add(fastVal{id: r.id, kind: r.kind}, r.count)
	if err != nil {
		return err
	}
	it := Item{Kind: ItemRef, Node: id, Role: r.role, pl: r.pl}
	if r.n > 1 {
		it.Count, it.RoleEnd = r.n, r.roleE
	}
	return wv.emit(it, wRole{}, e.depth+1, last, 0)
}

// under returns the open line of node id for a new child's line (not a
// reference): the lines above it are closed, its waiting references
// printed.
func (wv *wholeView) under(id int32) (*wEntry, error) {
	e, err := wv.closeTo(id)
	if err != nil {
		return nil, err
	}
	return e, wv.flushRef(e, false)
}

// closeTo closes the open lines above the one of node id (-1: the
// stream) and returns it.
func (wv *wholeView) closeTo(id int32) (*wEntry, error) {
	for wv.path.n > 0 {
		if e := wv.path.top(); e.id == id {
			return e, nil
		}
		if err := wv.close(); err != nil {
			return nil, err
		}
	}
	return nil, errChanged
}

// close ends the innermost open line: its waiting references, then its
// aggregate line.
func (wv *wholeView) close() error {
	e := wv.path.top()
	if err := wv.flushRef(e, e.elN == 0); err != nil {
		return err
	}
	if e.elN > 0 {
		it := Item{Kind: ItemElided, Count: int(e.elN), Size: e.elSize, Self: e.elSize, Role: "…", pl: e.pl}
		if err := wv.emit(it, wRole{}, e.depth+1, true, 0); err != nil {
			return err
		}
	}
	wv.path.pop()
	return nil
}

// wholeLines says whether any of items, consumed by a container of kind
// k, has a line of its own: a container built from them has its line
// printed before their pushes (wholeStart), else when it is built.
func wholeLines(items []fastSlot, k pickle.Kind) bool {
	for i := range items {
		s := &items[i]
		switch {
		case k == pickle.KindDict && i%2 == 0 && isScalarKind(s.kind):
		case !isScalarKind(s.kind):
			return true
		case s.origin && s.self+s.incl >= SmallScalar:
			return true
		}
	}
	return false
}

// consume is pass 2's takeAll: the aggregate line's count and bytes.
func (wv *wholeView) consume(m *fastMachine, from int, by *fastSlot, building bool) error {
	if building && from == len(m.stack) {
		// an empty container built here: its line now
		if err := wv.starting(m, int64(by.w.start), from); err != nil {
			return err
		}
		return wv.startContainer(m, by.id, by.kind, int64(by.w.ci), from, from+1, by.op, by.off)
	}
	if building && !wholeLines(m.stack[from:], by.kind) {
		// no line between its first item and here: its line now
		if err := wv.startContainer(m, by.id, by.kind, int64(by.w.ci), from, from, by.op, by.off); err != nil {
			return err
		}
	}
	if from == len(m.stack) {
		return nil
	}
	e, err := wv.closeTo(by.id)
	if err != nil {
		return err
	}
	for i := from; i < len(m.stack); i++ {
		s := &m.stack[i]
		pos := by.count
		by.count++
		if by.kind == pickle.KindDict && pos%2 == 0 || !isScalarKind(s.kind) {
			continue
		}
		e.elN++
		if s.origin {
			if sz := s.self + s.incl; sz < SmallScalar {
				e.elSize += sz
			} else {
				e.elN--
			}
		}
	}
	e.count += int64(len(m.stack) - from)
	if building {
		e.base = from + 1
	}
	m.stack = m.stack[:from]
	return nil
}

// wRole is a line's role: spelled (s), or an index or a set position
// (r) that the printer spells (spell), since the text of a line needs it
// only as it is printed (JSON spells every role: its path links need it).
type wRole struct {
	s     string
	r     role
	spell bool
}

// str spells the role.
func (w wRole) str() string {
	if w.spell {
		return w.r.str(nil)
	}
	return w.s
}

// roleAt is the role of the child of e at stack position p.
func (wv *wholeView) roleAt(m *fastMachine, e *wEntry, p int) (wRole, error) {
	if e.id < 0 {
		return wRole{s: ppath.Root}, nil
	}
	pos := e.count + int64(p-e.base)
	if pos < 0 {
		return wRole{}, errChanged
	}
	r := role{kind: rIndex, i: int(pos)}
	switch e.kind {
	case pickle.KindSet, pickle.KindFrozenSet:
		r.kind = rSet
	case pickle.KindDict:
		if p < 1 || p > len(m.stack) {
			return wRole{}, errChanged
		}
		k := &m.stack[p-1]
		var v fastVal
		if kv, ok := wv.keyVals[k.off]; ok && !k.origin {
			v = kv
		} else {
			var err error
			if v, err = m.keyNode(k); err != nil {
				return wRole{}, err
			}
		}
		return wRole{s: m.keyRoleAt(v, int(pos/2))}, nil
	}
	if wv.json {
		return wRole{s: r.str(nil)}, nil
	}
	return wRole{r: r, spell: true}, nil
}

// hidden says whether lines at depth are below the depth limit.
func (wv *wholeView) hidden(depth int) bool { return wv.limit >= 0 && depth > wv.limit }

// emit adds the line of it at depth (within the depth limit), or its JSON
// record, to the batch (its nodes are in the batch's store: add), with
// the role rs when the printer spells it; kids is its display children
// (for the text, any number above 0 if it has some).
func (wv *wholeView) emit(it Item, rs wRole, depth int, isLast bool, kids int) error {
	if wv.hidden(depth) {
		return nil
	}
	if depth > 0 {
		if depth-1 > wv.depthN {
			return errChanged
		}
		wv.depthN = depth
	}
	// written in its slot, not copied there (a Visit is 25 words)
	n := len(wv.cur.lines)
	wv.cur.lines = wv.cur.lines[:n+1] // (room keeps n below its capacity)
	l := &wv.cur.lines[n]
	l.v = Visit{Item: it, Depth: depth}
	l.v.Item.Stream = wv.cur.st
	if kids > 0 {
		if wv.limit >= 0 && depth >= wv.limit {
			l.v.Truncated = true
		} else {
			l.v.Kids = kids
		}
	}
	l.last, l.role = isLast, rs
	return wv.room()
}
