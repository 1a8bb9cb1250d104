package trace

import (
	"container/heap"
	"errors"
	"math"
	"os"
	"sort"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Stream by stream (docs/pk-trace.md, "Many pickles in one file: stream by
// stream").
//
// The default view and --top of a bare pickle file read it one stream at a
// time (input.EachStream, as pk hash does: one stream's store at a time,
// reused for the next) and keep of each stream only what they may print:
//
//   - the default view of L lines shows a line of a stream only when it
//     shows the stream's own line, and the File's children compete as the
//     L best of them (size, then stream order), so only the L largest
//     streams can have a line: those are kept, by offset;
//   - --top N keeps the streams that hold one of the N largest objects so
//     far (size, then stream order, then creation order: Top's order; with
//     --leaves, of those that hold no other), by offset, and of the others
//     nothing.
//
// Of every stream the count and its bytes are summed (the File's line and
// its aggregate line). At the end the streams kept are read again
// (pickle.RunStream at their offset; at most L or N of them), except the
// last when nothing follows it: the machine reads no more after it, so its
// store stays valid once EachStream returns (checked: it is the last one
// counted, and no trailing bytes were read after it; pickle.ParseEach
// promises this only until fn returns, so TestEachSame and
// TestEachStreams would see a change), and it is sized after the
// machine's own memory has gone. The tree built over the streams kept,
// with the file's count and bytes, gives the same selection as the tree
// of every stream.

// noEach turns the stream-by-stream path off (tests compare both).
var noEach = os.Getenv("PK_TRACE_EACH") == "0"

// EachBounded makes the default view (WriteBounded from Root(), lines
// lines) of the bare pickle file at path stream by stream and calls out
// with its tree. ok is false when it does not apply (stdin, anything but a
// bare pickle, any error: the caller opens the input itself, which reports
// what is wrong); out's error is returned as it is.
//
// A file of one stream is read through the top sink (sink_bounded.go): the
// store holds what is live. When the sink cannot give the lines exactly,
// the file is read again without it.
func EachBounded(path string, lines int, out func(*Tree) error) (ok bool, err error) {
	lines = max(lines, 2)
	if !noSink {
		sk := &topSink{n: lines, bview: true}
		if ok, err := eachTree(path, &boundedKeep{lines: lines}, sk, out); ok || sk.num == nil && sk.args == nil {
			return ok, err // (nothing compacted or folded: read without the sink, the same)
		}
	}
	return eachTree(path, &boundedKeep{lines: lines}, nil, out)
}

// EachTop is EachBounded for --top n (WriteTop, WriteTopJSON); leaves
// keeps the streams of the n largest objects that hold no other (--top
// --leaves: out sets Tree.Leaves).
//
// A file of one stream is read through the top sink (sink.go; with
// leaves, only nodes that own no other compete): the store holds what is
// live. When the sink cannot give the answer exactly, the file is read
// again without it.
func EachTop(path string, n int, leaves bool, out func(*Tree) error) (ok bool, err error) {
	if n <= 0 {
		return false, nil
	}
	if !noSink {
		sk := &topSink{n: n, leaves: leaves}
		if ok, err := eachTree(path, &topKeep{n: n, leaves: leaves}, sk, out); ok || sk.num == nil && sk.args == nil {
			return ok, err // (nothing compacted or folded: read without the sink, the same)
		}
	}
	return eachTree(path, &topKeep{n: n, leaves: leaves}, nil, out)
}

// EachGroups makes the tree of --top N --group (WriteGroups,
// WriteGroupsJSON; with leaves, --leaves, which Groups of this tree then
// takes whatever it is asked) of the bare pickle file at path, a file
// of one stream, through the top sink, the groups of its rows summed as
// they fold (sink_group.go), and calls out with it. ok is false when it
// does not apply (several streams, anything but a bare pickle, any error:
// the caller opens the input itself).
func EachGroups(path string, leaves bool, out func(*Tree) error) (ok bool, err error) {
	size, ok := eachSize(path)
	if !ok || noSink {
		return false, nil
	}
	sk := &topSink{group: newGroupSink(size, leaves)}
	ok, err = eachTree(path, &boundedKeep{lines: 1}, sk, func(t *Tree) error {
		if t.nStreams != 1 {
			return errSinkStreams
		}
		return out(t)
	})
	if err == errSinkStreams {
		return false, nil
	}
	return ok, err
}

// keeper decides which streams a stream-by-stream tree keeps.
type keeper interface {
	// offer is given every stream as it is read; st is sized when the
	// keeper asked for it (sized), with tables valid until the next offer.
	offer(s *pickle.Store, st *StreamTree)
	sized() bool
	// kept lists the streams kept, by index: their index and offset.
	kept() []streamAt
}

type streamAt struct {
	index int
	begin int64
}

// eachSize is the size of the file at path when the stream-by-stream paths
// may read it: a regular file (not stdin), PK_TRACE_EACH not 0.
func eachSize(path string) (int64, bool) {
	if noEach || path == "-" {
		return 0, false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// errSinkStreams stops a read through the top sink at the second stream
// of a file whose first it compacted (it sinks a file of one stream).
var errSinkStreams = errors.New("the top sink reads files of one stream")

// eachTree runs k over the streams of path and calls out with the tree of
// the streams k keeps; with sk, through the top sink (false when it
// folded and cannot give the tree exactly).
func eachTree(path string, k keeper, sk *topSink, out func(*Tree) error) (bool, error) {
	size, ok := eachSize(path)
	if !ok {
		return false, nil
	}
	var (
		n     int
		bytes int64
		scr   sizeScratch
		live  *pickle.Store // the last stream, when nothing follows it
		first int64         // the offset of the first stream
	)
	opt := pickle.Options{NoGraph: true}
	if sk != nil && size <= math.MaxUint32 { // (sizes of 4 bytes: sizesFor does not see the runs')
		sk.doc = &input.Doc{Path: path, Size: size, Format: "pickle"}
		opt.Keep = sk.keep()
	}
	file, ok := input.EachStream(path, opt, func(ps *pickle.Stream) error {
		s := ps.Store()
		if sk != nil && sk.args != nil && s.End != size {
			return errSinkStreams // (code objects' arguments folded in a stream that is not the file's last)
		}
		if sk != nil && (sk.num != nil || sk.whole != nil || sk.path != nil || sk.group != nil) && s.Index > 0 {
			// (the first stream was compacted: read again without the
			// sink; the whole tree's, --path's and --group's sinks read
			// files of one stream)
			return errSinkStreams
		}
		if n == 0 {
			first = s.Begin
		}
		n++
		bytes += s.Length()
		if s.End == size {
			// the last stream, and nothing follows: the machine, which
			// reuses the store's memory for the next stream, reads no
			// more (the input is at its end), so the store stays as it is
			// once EachStream returns; a copy of its header lets the
			// machine's own memory (its stack, memo, scratch) go before
			// the stream is sized
			cp := *s
			live = &cp
			return nil
		}
		var st *StreamTree
		if k.sized() {
			st = sizeStream(s, nil, &scr, nil)
		}
		k.offer(s, st)
		return nil
	})
	if !ok {
		return false, nil
	}
	scr = sizeScratch{}
	var liveTree *StreamTree
	if live != nil {
		if live.Index != n-1 || file.Trailing != nil {
			// (the file changed under us: more was read after it)
			return false, nil
		}
		live.CollectRead() // (the sizes and the view take its pages)
		if sk != nil && (sk.num != nil || sk.args != nil) {
			liveTree = sizeStream(live, nil, nil, sk)
		} else if k.sized() {
			liveTree = newStream(live, nil)
		}
		k.offer(live, liveTree)
	}
	at := k.kept()
	if n == 1 && len(at) == 0 {
		// the only stream is the tree's root (Root), whatever is printed
		// (--top --leaves of a stream with no leaf keeps none)
		at = []streamAt{{0, first}}
	}
	t, err := eachBuild(path, at, live, liveTree, file.Trailing, file.Size)
	if err != nil {
		return false, nil
	}
	t.nStreams, t.streamBytes = n, bytes
	if sk != nil && sk.args != nil {
		if liveTree == nil || !sk.finishArgs(t, liveTree) {
			return false, nil
		}
	} else if sk != nil && sk.num != nil && !sk.finish(t, liveTree) {
		return false, nil
	}
	return true, out(t)
}

// eachBuild makes the tree of the streams at (re-read from path; live, when
// set, is the store of one of them still in memory).
func eachBuild(path string, at []streamAt, live *pickle.Store, liveTree *StreamTree, trailing *pickle.Trailing, total int64) (*Tree, error) {
	t := &Tree{File: &pickle.File{Name: path, Size: total, Trailing: trailing}, Total: total}
	// what NewDoc gives a bare pickle's streams: a tensor label reads a large
	// pickle.dump storage's head again from the file
	doc := &input.Doc{Path: path, Size: total, Format: "pickle"}
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for _, a := range at {
		var s *pickle.Store
		if live != nil && live.Index == a.index {
			s = live
		} else {
			if f == nil {
				var err error
				if f, err = os.Open(path); err != nil {
					return nil, err
				}
			}
			rd := pickle.NewReaderAt(f, total, path, a.begin)
			ps, err := pickle.RunStream(rd, a.index)
			if err != nil {
				return nil, err
			}
			s = ps.Store()
		}
		st := liveTree
		if s != live || st == nil {
			st = newStream(s, nil)
		}
		st.setHead(a.index)
		st.tree, st.doc = t, doc
		t.Streams = append(t.Streams, st)
	}
	return t, nil
}

// boundedKeep keeps the lines largest streams (ties: the first).
type boundedKeep struct {
	lines int
	h     streamHeap
}

type sizedStream struct {
	size int64
	streamAt
}

// streamHeap is a min-heap of streams: the smallest, then the last, on top.
type streamHeap []sizedStream

func (h streamHeap) Len() int { return len(h) }
func (h streamHeap) Less(i, j int) bool {
	if h[i].size != h[j].size {
		return h[i].size < h[j].size
	}
	return h[i].index > h[j].index
}
func (h streamHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)   { *h = append(*h, x.(sizedStream)) }
func (h *streamHeap) Pop() any {
	o := *h
	x := o[len(o)-1]
	*h = o[:len(o)-1]
	return x
}

func (k *boundedKeep) sized() bool { return false }

func (k *boundedKeep) offer(s *pickle.Store, _ *StreamTree) {
	e := sizedStream{size: s.Length(), streamAt: streamAt{s.Index, s.Begin}}
	switch {
	case len(k.h) < k.lines:
		heap.Push(&k.h, e)
	case e.size > k.h[0].size:
		// (a later stream of the same size loses: stream order)
		k.h[0] = e
		heap.Fix(&k.h, 0)
	}
}

func (k *boundedKeep) kept() []streamAt {
	out := make([]streamAt, len(k.h))
	for i, e := range k.h {
		out[i] = e.streamAt
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// topKeep keeps the streams that hold one of the n largest objects (Top's
// order: size, stream, creation).
type topKeep struct {
	n      int
	leaves bool // only objects that hold no other (Top with Tree.Leaves)
	h      []topEnt2
}

type topEnt2 struct {
	size  int64
	begin int64
	s, id int32
}

// worse: a is worse than b in Top's order.
func (a topEnt2) worse(b topEnt2) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	if a.s != b.s {
		return a.s > b.s
	}
	return a.id > b.id
}

func (k *topKeep) sized() bool { return true }

func (k *topKeep) offer(s *pickle.Store, st *StreamTree) {
	h := k.h
	var keys []bool
	if k.leaves {
		keys = st.foldedKeys()
	}
	for id := range st.incl.len() {
		sz := st.incl.at(pickle.ID(id))
		if k.leaves && (st.ownsAny(pickle.ID(id)) || keys[id]) {
			continue // (as Top: a bare pickle attaches no parts)
		}
		e := topEnt2{size: sz, begin: s.Begin, s: int32(s.Index), id: int32(id)}
		if len(h) < k.n {
			h = append(h, e)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !h[i].worse(h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if !h[0].worse(e) {
			continue
		}
		h[0] = e
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if r := l + 1; r < len(h) && h[r].worse(h[l]) {
				m = r
			}
			if !h[m].worse(h[i]) {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	k.h = h
}

func (k *topKeep) kept() []streamAt {
	seen := map[int32]bool{}
	var out []streamAt
	for _, e := range k.h {
		if !seen[e.s] {
			seen[e.s] = true
			out = append(out, streamAt{int(e.s), e.begin})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// EachPicture is EachBounded for the pictures (WriteSVG with svg's options
// when svg is not nil, WriteHTML with html's when html is not nil) drawn
// from the root of a bare pickle file of several streams: a stream narrower
// than the narrowest box a picture draws is not drawn, nor anything in it,
// so only the streams at least that wide are kept (at most the picture's
// width in boxes: 2,360 for the SVG, 20,000 for the page), each placed by
// the bytes of the streams before it (Tree.streamsAt); the others are
// summed for the File line. (A file of one stream gets the tree of that
// stream, as the graph path draws it; read through the pictures' sink,
// sink.go, the rows of a table too narrow to draw are folded into their
// sizes.) out gets a tree that serves those pictures only.
func EachPicture(path string, svg *SVGOptions, html *HTMLOptions, out func(*Tree) error) (ok bool, err error) {
	size, ok := eachSize(path)
	k := newPicKeep(svg, html, size)
	if !ok || len(k.specs) == 0 {
		return false, nil
	}
	if !noSink {
		sk := &topSink{pics: k.specs, total: size}
		if ok, err := eachTree(path, k, sk, k.place(out)); ok || sk.num == nil {
			return ok, err // (nothing compacted: read without the sink, the same)
		}
		k = newPicKeep(svg, html, size)
	}
	return eachTree(path, k, nil, k.place(out))
}

// newPicKeep is the keeper of the pictures drawn with svg's and html's
// options (those not nil) of a file of total bytes.
func newPicKeep(svg *SVGOptions, html *HTMLOptions, total int64) *picKeep {
	k := &picKeep{total: total}
	if svg != nil {
		k.specs = append(k.specs, svg.spec())
	}
	if html != nil {
		k.specs = append(k.specs, html.spec())
	}
	return k
}

// place gives out the tree with its streams placed as k kept them.
func (k *picKeep) place(out func(*Tree) error) func(*Tree) error {
	return func(t *Tree) error {
		t.placed, t.streamsAt = true, k.first
		return out(t)
	}
}

// picKeep keeps the streams a picture draws a box for.
type picKeep struct {
	specs []picSpec
	total int64
	at    []streamAt
	first int64 // the first stream's offset (the File's children start there)
	seen  bool
}

func (k *picKeep) sized() bool { return false }

func (k *picKeep) offer(s *pickle.Store, _ *StreamTree) {
	if !k.seen {
		k.first, k.seen = s.Begin, true
	}
	for _, sp := range k.specs {
		if sp.draws(s.Length(), k.total) {
			k.at = append(k.at, streamAt{s.Index, s.Begin})
			return
		}
	}
}

func (k *picKeep) kept() []streamAt { return k.at }
