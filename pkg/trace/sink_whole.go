package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
	"os"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The whole tree through the top sink: `pk trace --lines 0` (and --depth
// D, --all, --min-size S), as text or JSON, of a bare pickle file of one stream that the whole
// tree's fast path does not take (rows made by calls), read through the
// top sink (sink.go) with no candidates, so that the store holds what is
// live rather than the whole stream.
//
// A row is folded only when its lines can be written as it folds: the
// sink walks it then (the walk and textLine of the store path, from the
// row, at depth 0) and spills its lines to a temporary file, in fold
// order. A line at depth 0 lacks what its place in the tree adds: the
// branches of the row's ancestors (above the row's list, which are known
// only at STOP) and of the row's own level (whether it is its list's last
// line); the columns before the branches have a fixed width, so these go
// in between when the lines are copied out. At STOP the tree of what is
// left is walked as WriteText walks it, and a folded run is replaced by
// the spilled lines of its rows, each with the branches the walk gives
// the run (its depth and its ancestors' Last), the last row of a run that
// is its list's last line drawn as the last.
//
// JSON is the same with records (jsonVisit's pieces) in place of lines. A
// record at depth 0 lacks its depth, and its path is relative: the row's
// role and what is below it (the walk's paths from a base that stands for
// the list's, which a line's path must not reach above the row). It is
// spilled from "kind" on, after a head of its depth below the row, the
// length of its relative path, and where its path's value starts and how
// long it is. At STOP it is written with the head of jsonVisit at the
// run's depth plus its own, and the list's path (escaped once a run) put
// before the relative one, or the path left out when the two are longer
// than MaxJSONPath; JSON's escaping of a path is that of its two parts, as
// a role starts with an ASCII byte. A list's record counts a folded run's
// rows among its children (runLines).
//
// A small scalar has no line of its own: it shows in its list's "…" line.
// It folds with no lines, marked elidedMark; at STOP a run's marked roots
// join the "…" line of its list (shownKids, runElided), and a run of
// nothing else is no line.
//
// What a row's lines say must not change once it has folded, and depend
// on nothing but the row: a row is not folded when a line of it refers to
// anything but a global (a container's label may change later; a
// global's does not, nor can it be open on the walk's path), when a line
// holds a newline or is longer than spillLine, or when its lines would
// reach past maxIndent below a list at the top (the branches are then
// cut, not shifted). The depth of the row's list is known only at STOP
// (a list is owned when its parent takes it, after its items): there a
// walk that writes nothing checks that no run's lines reach past
// maxIndent (with --depth D, that each run is at the depth its rows were
// cut for) and that the stream shows no orphan (it does not list what
// hangs below a compaction's stub, nextTopKid). When it fails, nothing
// has been written, and the caller reads the file again on the store
// path.

// wholeSink spills the lines of the rows the top sink folds, and writes
// the tree with them at STOP.
type wholeSink struct {
	t       *Tree // Total (the share column) and the row walks' scratch
	depth   int   // --depth (<0: all)
	all     bool  // --all: every small scalar on a line of its own
	minSize int64 // --min-size: smaller objects in their parent's "…" line
	sty     Style
	g       glyphs
	width   int // of the size columns: a line's branches start at cols()
	json    bool
	base    *pathLink // JSON: the links that stand for the list's path and above
	spill   *os.File
	bw      *bufio.Writer
	n       int64     // bytes spilled
	at      []int64   // the spill offset of every rootsStep-th folded root
	lens    rootSizes // the bytes of each folded root's lines
	// of each folded root: with --depth, the depth of its line it was
	// cut for; else the depth of its deepest line below it (the row's
	// lines reach maxIndent at neither: check)
	mark []uint8
	buf  lineBuf // a row's lines being made
	line lineBuf
	rec  bytes.Buffer  // JSON: a record being made
	jw   *bufio.Writer // to rec
	err  error
	// the lists of the rows rendered in a compaction, with the depth of
	// their lines, and the roles of their rows
	lists map[pickle.ID]int
	rows  rowRoles
	// compacted: run's stream was compacted, not held whole (tests)
	compacted bool
	prep      func(*Tree) bool // (sinkWhole's)
}

// newWholeSink is the spill of a whole tree of a file of total bytes,
// written with opt's Depth, All and MinSize and sty, or as JSON.
func newWholeSink(total int64, opt Options, sty Style, asJSON bool) (*wholeSink, error) {
	f, err := os.CreateTemp("", "pk-trace-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // (the file lives while it is open)
	ws := &wholeSink{t: &Tree{Total: total}, depth: opt.Depth, all: opt.All, minSize: opt.MinSize, sty: sty, spill: f, bw: bufio.NewWriterSize(f, 64<<10),
		lists: map[pickle.ID]int{}, json: asJSON}
	ws.g, ws.width = sty.layout()
	if asJSON {
		// (three: a role's link reaches at most three up, rAttr2)
		ws.base = &pathLink{up: &pathLink{up: &pathLink{}}}
		ws.jw = bufio.NewWriterSize(&ws.rec, 4096)
	}
	return ws, nil
}

func (ws *wholeSink) close() { ws.spill.Close() }

// walkOpt is the walk's options of the rows and of the tree at STOP, to
// depth (<0: all).
func (ws *wholeSink) walkOpt(depth int) Options {
	return Options{Depth: depth, All: ws.all, MinSize: ws.minSize, noPaths: !ws.json}
}

// cols is the width in bytes of a line's columns before its branches
// (SIZE SHARE SELF and two spaces, textLine).
func (ws *wholeSink) cols() int { return 2*ws.width + 11 }

// compaction starts the rows of a compaction: the store's IDs change.
func (ws *wholeSink) compaction() {
	clear(ws.lists)
	ws.rows.reset()
}

// render spills the lines of root r, an item of list p in st, and
// reports whether it did (false: r must not fold).
func (ws *wholeSink) render(st *StreamTree, r, p pickle.ID) bool {
	s := st.Store
	if size := st.incl.at(r); ws.minSize > 0 && size < ws.minSize || !ws.all && isScalar(s, r) && size < SmallScalar {
		// it shows in its list's "…" line, not as a line of its own
		// (kid.elided): it folds with no lines, marked elided
		// (runElided counts it there)
		ws.addRoot(0, elidedMark)
		return true
	}
	ldep, seen := ws.lists[p]
	if !seen {
		// the depth of p's line as it stands: the nodes from p up to the
		// stream's top (p may get an owner later: check compares)
		for x := p; x != pickle.NoID && ldep <= maxIndent; x = s.Owner(x) {
			ldep++
		}
		ws.lists[p] = ldep
	}
	rl, ok := ws.rows.of(s, p, r)
	if !ok {
		return false
	}
	rs := rl.str(s)
	if ws.json && (rs == "" || rs[0] >= utf8.RuneSelf) {
		return false // (the path's escaping would not be its parts')
	}
	// the row's lines, from the row at depth 0; with --depth, cut where
	// the row's line at the list's depth now would be cut
	opt, mark := ws.walkOpt(-1), 0
	if ws.depth >= 0 {
		mark = ldep + 1
		opt.Depth = ws.depth - mark
	}
	ws.buf.Reset()
	if opt.Depth >= 0 || ws.depth < 0 {
		// (else the list's line is cut by --depth: no row is shown)
		st.tree = ws.t
		pl := noPath
		if ws.json {
			pl = link(ws.base, rs)
		}
		it := st.nodeItem(r, rs, pl)
		ws.t.walk(it, opt, func(v *Visit) {
			if !ok {
				return
			}
			least := mark // (the row's depth: with --depth, as it folds; else at least 2, below a list)
			if ws.depth < 0 {
				mark, least = max(mark, v.Depth), 2
			}
			if v.Depth+least > maxIndent || v.Kind == ItemRef && s.Kind(v.Node) != pickle.KindGlobal {
				ok = false
				return
			}
			if ws.json {
				ok = ws.spillJSON(v, pl)
			} else {
				ok = ws.spillText(v)
			}
		}, nil, false)
		st.tree = nil
		if !ok {
			return false
		}
	}
	ws.addRoot(len(ws.buf.b), uint8(mark))
	if _, err := ws.bw.Write(ws.buf.b); err != nil && ws.err == nil {
		ws.err = err
	}
	ws.n += int64(len(ws.buf.b))
	return true
}

// addRoot notes a folded root whose lines, n bytes, are the next in the
// spill, with its mark.
func (ws *wholeSink) addRoot(n int, mark uint8) {
	if ws.lens.n%rootsStep == 0 {
		ws.at = append(ws.at, ws.n)
	}
	ws.lens.add(int64(n))
	ws.mark = append(ws.mark, mark)
}

// elidedMark is the mark of a folded root that is a small scalar: no line
// of its own, it is counted in its list's "…" line (a line's depth is at
// most maxIndent + 1).
const elidedMark = math.MaxUint8

// runElided returns, for the folded run x of st, how many of its roots
// are small scalars (elidedMark) and their bytes, which its list's "…"
// line counts, and whether any other root of it has lines. A run of
// another sink than the whole tree's has none.
func (st *StreamTree) runElided(x pickle.ID) (n int, size int64, shown bool) {
	if st.sink == nil || st.sink.whole == nil {
		return 0, 0, true
	}
	ws, z := st.sink.whole, &st.sink.sizes
	off, k, _, _ := st.Store.FoldedRun(x)
	if off < 0 || int(off)+k > len(ws.mark) {
		return 0, 0, true // (check refuses such a run)
	}
	p := z.pos(int(off))
	for _, m := range ws.mark[off : int(off)+k] {
		v, w := binary.Uvarint(z.b[p:])
		p += w
		if m == elidedMark {
			n++
			size += int64(v)
		}
	}
	return n, size, n < k
}

// spillText adds the text line of v to the row's (false: it cannot be
// copied out).
func (ws *wholeSink) spillText(v *Visit) bool {
	ws.line.Reset()
	ws.t.textLine(&ws.line, v, ws.g, ws.width, ws.sty)
	if len(ws.line.b) < ws.cols() || len(ws.line.b) > spillLine || bytes.IndexByte(ws.line.b, '\n') != len(ws.line.b)-1 {
		return false
	}
	ws.buf.b = append(ws.buf.b, ws.line.b...)
	return true
}

// spillJSON adds the JSON record of v, a line of the walk of the row
// whose link is row, to the row's: its head (v's depth, the length of its
// path, the start and length of its path's value in the record), then the
// record from "kind" on (false: it cannot be copied out).
func (ws *wholeSink) spillJSON(v *Visit, row *pathLink) bool {
	if !reaches(v.pl, row) {
		return false // (its path does not start with the row's)
	}
	ws.rec.Reset()
	jw := ws.jw
	pos := func() int { return ws.rec.Len() + jw.Buffered() }
	ws.t.jsonNames(jw, v.Item)
	at := pos()
	jsonStr(jw, v.Path())
	n := pos() - at
	ws.t.jsonFacts(jw, v.Item)
	jsonEnd(jw, v)
	jw.Flush()
	if ws.rec.Len() > spillLine {
		return false
	}
	for _, x := range [...]int{v.Depth, v.PathLen(), at, n} {
		ws.buf.b = binary.AppendUvarint(ws.buf.b, uint64(x))
	}
	ws.buf.b = append(ws.buf.b, ws.rec.Bytes()...)
	return true
}

// reaches reports whether l is row or has it above.
func reaches(l, row *pathLink) bool {
	for ; l != nil; l = l.up {
		if l == row {
			return true
		}
	}
	return false
}

// offset is where the lines of folded root seq start in the spill.
func (ws *wholeSink) offset(seq int) int64 {
	base := seq / rootsStep * rootsStep
	return ws.at[seq/rootsStep] + ws.lens.sum(base, seq-base)
}

// spillLine bounds a spilled line (the buffer write reads them through).
const spillLine = 64 << 10

// errNoWhole: the check at STOP failed before anything was written.
var errNoWhole = errors.New("the whole tree cannot be written from the sink")

// isRun reports whether v is a folded run of the sink's store.
func isRun(v *Visit) bool {
	return v.Kind == ItemNode && v.Stream != nil && v.Stream.sink != nil && v.Stream.Store.Kind(v.Node) == pickle.KindFolded
}

// check walks the tree from start as write will, writing nothing, and
// reports whether every run it meets can be copied out: its rows were
// spilled at the depth the walk gives it, and no orphan shows (the
// stream does not list what hangs below a compaction's stub).
func (ws *wholeSink) check(t *Tree, start Item) bool {
	if ws.err != nil || ws.bw.Flush() != nil {
		return false
	}
	for _, st := range t.Streams {
		for _, x := range st.Orphans {
			if !belowStub(st.Store, x) {
				return false
			}
		}
	}
	ok := true
	wopt := ws.walkOpt(ws.depth)
	wopt.noPaths = true
	t.Walk(start, wopt, func(v *Visit) {
		if !ok || !isRun(v) {
			return
		}
		off, n, _, _ := v.Stream.Store.FoldedRun(v.Node)
		if off < 0 || int(off)+n > len(ws.mark) {
			ok = false
			return
		}
		for _, d := range ws.mark[off : int(off)+n] {
			if d == elidedMark {
				continue
			}
			if ws.depth >= 0 && int(d) != v.Depth || ws.depth < 0 && v.Depth+int(d) > maxIndent {
				ok = false
				return
			}
		}
	}, nil)
	return ok
}

// write writes the whole tree from start, with its header (JSON: its
// summary), to w: the walk of WriteText (WriteJSON), each folded run's
// spilled rows in its place.
func (ws *wholeSink) write(w io.Writer, t *Tree, start Item) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var line, pre lineBuf
	if ws.json {
		t.jsonSummary(bw)
	} else {
		writeHeader(&line, ws.width)
		bw.Write(line.b)
	}
	var err error
	out := func(b []byte) {
		if ws.sty.ASCII {
			_, err = bw.WriteString(asciiOnly(string(b)))
		} else {
			_, err = bw.Write(b)
		}
	}
	var list []byte // JSON: the run's list's path, escaped
	rd := bufio.NewReaderSize(nil, spillLine)
	t.Walk(start, ws.walkOpt(ws.depth), func(v *Visit) {
		if err != nil {
			return
		}
		if !isRun(v) {
			if ws.json {
				if v.Kids > 0 && v.Kind == ItemNode && v.Stream.sink != nil {
					v.Kids += runLines(v.Stream, v.Node)
				}
				t.jsonVisit(bw, v)
				return
			}
			line.Reset()
			t.textLine(&line, v, ws.g, ws.width, ws.sty)
			out(line.b)
			return
		}
		off, n, _, _ := v.Stream.Store.FoldedRun(v.Node)
		var up *pathLink
		if ws.json {
			up = v.pl.up // (a row's role links to its list: rIndex)
			list = jsonl.AppendString(list[:0], Item{pl: up}.Path())
		} else {
			pre.Reset()
			pre.branches(ws.g, v.Last[:v.Depth-1]) // (the rows' ancestors')
		}
		start := ws.offset(int(off))
		rd.Reset(io.NewSectionReader(ws.spill, start, ws.n-start))
		p := ws.lens.pos(int(off)) // (the rows' lengths, read in turn)
		cols := ws.cols()
		for seq := int(off); seq < int(off)+n && err == nil; seq++ {
			last := v.Last[v.Depth-1] && seq == int(off)+n-1
			size, k := binary.Uvarint(ws.lens.b[p:])
			p += k
			rest := int64(size)
			for first := true; rest > 0 && err == nil; first = false {
				var h [4]uint64 // JSON: the record's head (spillJSON)
				if ws.json {
					for i := range h {
						if h[i], err = binary.ReadUvarint(rd); err != nil {
							return
						}
						rest -= int64(uvarintLen(h[i]))
					}
				}
				b, rerr := rd.ReadSlice('\n')
				if rerr != nil {
					err = rerr
					return
				}
				rest -= int64(len(b))
				if ws.json {
					err = t.spliceJSON(bw, v.Depth, h, list[1:len(list)-1], up.n, b)
					continue
				}
				line.Reset()
				line.b = append(line.b, b[:cols]...)
				line.b = append(line.b, pre.b...)
				switch {
				case first && last:
					line.WriteString(ws.g.end)
				case first:
					line.WriteString(ws.g.tee)
				case last:
					line.WriteByte(' ')
				default:
					line.WriteString(ws.g.vert)
				}
				line.b = append(line.b, b[cols:]...)
				out(line.b)
			}
		}
	}, nil)
	if err != nil {
		return err
	}
	return bw.Flush()
}

// spliceJSON writes the record b spilled by spillJSON, with its head h,
// of a row of a run at depth d whose list's path, n bytes long, is list
// escaped.
func (t *Tree) spliceJSON(bw *bufio.Writer, d int, h [4]uint64, list []byte, n int, b []byte) error {
	at, vn := h[2], h[3]
	if vn < 2 || at+vn > uint64(len(b)) {
		return errSpill
	}
	t.jsonDepth(bw, d+int(h[0]))
	bw.Write(b[:at])
	if n+int(h[1]) <= MaxJSONPath {
		bw.WriteString(jsonPathField)
		bw.WriteByte('"')
		bw.Write(list)
		bw.Write(b[at+1 : at+vn]) // (its closing quote too)
	}
	_, err := bw.Write(b[at+vn:])
	return err
}

// errSpill: the spill does not hold what was written to it.
var errSpill = errors.New("the whole tree's spill file was changed")

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// runLines is how many lines more than one the folded runs among the
// children of node n of st stand for: a run of k rows is k lines (a JSON
// record's "children"), but for its small scalars, which are in the "…"
// line (shownKids lists a run of nothing else as no line at all).
func runLines(st *StreamTree, n pickle.ID) int {
	s := st.Store
	if s.Kind(n) != pickle.KindList {
		return 0 // (runs are of lists)
	}
	more := 0
	eachChild(s, n, func(c pickle.ID, _ role, _ bool) bool {
		if c >= 0 && s.Kind(c) == pickle.KindFolded {
			_, k, _, _ := s.FoldedRun(c)
			el, _, _ := st.runElided(c)
			if k > el {
				more += k - el - 1
			}
		}
		return true
	})
	return more
}

// sinkWhole is EachWhole for a file of one stream: through the top sink
// with the rows' lines spilled (above). false: nothing was written, the
// caller takes the store path.
//
// prep, when set, is given the tree before it is checked and written
// (Tree.Compressed: the tree of the compressed file the file at path was
// decompressed from), false when it cannot make it.
func sinkWhole(path string, size int64, w io.Writer, opt Options, asJSON bool, sty Style, begin func(), prep func(*Tree) bool) (bool, error) {
	if size > math.MaxUint32 {
		return false, nil // (eachTree's sink takes no more: the store path, or FastDepth, as before)
	}
	ws, err := newWholeSink(size, opt, sty, asJSON)
	if err != nil {
		return false, nil
	}
	defer ws.close()
	ws.prep = prep
	return ws.run(path, w, begin)
}

// run reads the file at path through the top sink with ws and writes its
// whole tree to w (begin first); false: nothing was written.
func (ws *wholeSink) run(path string, w io.Writer, begin func()) (bool, error) {
	sk := &topSink{whole: ws, total: ws.t.Total}
	ok, err := eachTree(path, &boundedKeep{lines: 1}, sk, func(t *Tree) error {
		if ws.prep != nil && !ws.prep(t) {
			return errNoWhole
		}
		start := t.Root()
		if t.streamCount() != 1 || sk.num != nil && !ws.check(t, start) {
			return errNoWhole
		}
		if begin != nil {
			begin()
		}
		return ws.write(w, t, start)
	})
	ws.compacted = sk.num != nil
	if errors.Is(err, errNoWhole) {
		return false, nil
	}
	return ok, err
}
