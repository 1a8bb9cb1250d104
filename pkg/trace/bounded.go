package trace

import (
	"bufio"
	"container/heap"
	"io"
	"sort"
	"strconv"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The bounded view: pk trace's default, as dust and ncdu show a disk
// (docs/pk-trace.md, "The default view").
//
// Of the lines the whole tree would have, it shows the largest: starting
// from the top item it repeatedly opens the largest line not yet shown
// among the children of the lines shown (ties: stream order, then node
// creation order), until the budget of lines is used. Every shown line
// whose children are not all shown gets one aggregate line last among its
// children, "… N more items, SIZE, AVG each", carrying the rest of its
// bytes, so sizes still add up: self + the sizes of the children shown
// (the aggregate included) = size. Siblings are printed largest first.
//
// Lines that compete are objects that the whole tree would show on a line
// of their own (containers, calls, strings and bytes of 1 KiB or more),
// streams and container parts; small scalars and references are counted
// in their parent's aggregate line. Because an object is always larger
// than any object it holds (its own opcode is at least a byte), the lines
// shown are the globally largest ones, which the streaming fast path
// (FastBounded) finds with a bounded heap in one pass without the graph;
// both paths make the same bnodes and print them with the same code.

// DefaultLines is the default line budget of the bounded view (tree lines,
// without the column header and the legend).
const DefaultLines = 40

// bnode is a line of a bounded view.
type bnode struct {
	it    Item
	kids  int      // display children of the item (all of them)
	shown []*bnode // the children shown, largest first
	start bool     // the start line: its hidden children always get an aggregate line
}

// competes says whether a child gets a line of its own in a bounded view;
// st is the parent's stream.
func competes(k *kid, st *StreamTree) bool {
	switch k.kind {
	case ItemNode:
		return !(k.scalar(st) && k.size < SmallScalar)
	case ItemRef, ItemElided:
		return false
	}
	return true // streams, parts, trailing bytes
}

type bcand struct {
	k    kid
	up   *bnode
	sidx int   // stream order (-1: not a node)
	id   int32 // node ID
	seq  int   // discovery order
}

type bheap []bcand

func (h bheap) Len() int           { return len(h) }
func (h bheap) Less(i, j int) bool { return h.better(h[i], h[j]) }

// worstFirst is a min-heap of candidates: the worst on top.
type worstFirst []bcand

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return bheap(h).better(h[j], h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(bcand)) }
func (h *worstFirst) Pop() any {
	o := *h
	x := o[len(o)-1]
	*h = o[:len(o)-1]
	return x
}

// better orders candidates: larger first, then stream order, node
// creation order, discovery order.
func (bheap) better(a, b bcand) bool {
	if a.k.size != b.k.size {
		return a.k.size > b.k.size
	}
	if a.sidx != b.sidx {
		return a.sidx < b.sidx
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return a.seq < b.seq
}
func (h bheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *bheap) Push(x any)   { *h = append(*h, x.(bcand)) }
func (h *bheap) Pop() any {
	o := *h
	x := o[len(o)-1]
	o[len(o)-1] = bcand{}
	*h = o[:len(o)-1]
	return x
}

// agg says whether b has an aggregate line: some of its children are
// shown and some are not (a line none of whose children are shown ends
// with "…" instead, as at the --depth limit).
func (b *bnode) agg() bool { return (b.start || len(b.shown) > 0) && b.kids > len(b.shown) }

// need is how many lines showing one more child of up costs: its line,
// and up's aggregate line appearing (its first child shown while others
// are not) or going (its last hidden child shown).
func need(up *bnode) int {
	n := 1
	before := up.agg()
	after := up.kids > len(up.shown)+1 // (a child is shown now)
	if after && !before {
		n++
	}
	if before && !after {
		n--
	}
	return n
}

// boundedOf selects the lines of the bounded view from start.
func (t *Tree) boundedOf(start Item, lines int) *bnode {
	root := &bnode{it: start, start: true}
	var h bheap
	streams := map[*StreamTree]int{}
	seq := 0
	// at most lines candidates are ever shown, so of one item's children
	// only the best lines are kept (a min-heap of them: a row of a million
	// children costs lines candidates, not a million)
	var batch worstFirst
	offer := func(up *bnode, k *kid) {
		sunk := k.item != nil && k.item.sunk != nil // (all of them compete)
		if !sunk && !competes(k, up.it.Stream) {
			return
		}
		c := bcand{k: *k, up: up, sidx: -1, seq: seq}
		seq++
		if k.kind == ItemNode && (k.item == nil && !k.top() || sunk) {
			// (a stream's tops compete in discovery order, as the
			// ready items they were)
			st := up.it.Stream
			i, ok := streams[st]
			if !ok {
				i = len(streams)
				streams[st] = i
			}
			switch {
			case sunk:
				c.sidx, c.id = i, int32(k.item.sunk.num)
			case t.sunkKids != nil:
				// (beside the lines the sink folded: creation order by
				// number, as a store of every node has it by ID)
				c.sidx, c.id = i, int32(st.numOf(k.node))
			default:
				c.sidx, c.id = i, int32(k.node)
			}
		}
		if len(batch) < lines {
			heap.Push(&batch, c)
		} else if bheap(batch[:1]).better(c, batch[0]) {
			batch[0] = c
			heap.Fix(&batch, 0)
		}
	}
	// push offers the children of b's item and counts them; the kids of a
	// node or a stream are not listed (a list of a million items, a stream
	// of a million tops: one kid at a time, the best lines kept)
	push := func(b *bnode) {
		batch = batch[:0]
		it := b.it
		switch {
		case it.Kind == ItemRef || it.Kind == ItemElided:
		case it.Kind == ItemStream:
			it.Stream.eachTopKid(func(k kid) { b.kids++; offer(b, &k) })
		case it.Kind == ItemNode && it.sunk != nil:
			// a node the top sink folded (sink_bounded.go): its lines that
			// may show are offered below
			b.kids = it.sunk.kids
		case it.Kind == ItemNode && it.Stream.isArgFold(it.Node):
			// a folded argument tuple: the same
			f, _ := it.Stream.argFoldOf(it.Node)
			b.kids = int(f.nItems)
		case it.Kind == ItemNode && len(it.Stream.attach[it.Node]) == 0:
			st := it.Stream
			st.eachNodeKid(it.Node, func(k kid) {
				if k.folded(st) && !st.isArgFold(k.node) {
					// a run of rows the sink folded: the same
					b.kids += runItems(st.Store, k.node)
					return
				}
				b.kids++
				offer(b, &k)
			})
		default:
			ks := t.kidsOf(it)
			for i := range ks {
				b.kids++
				offer(b, &ks[i])
			}
		}
		if t.compressedPart(it) {
			// only some streams are held (each.go): the part counts them all
			b.kids += t.nStreams - len(t.Streams)
		}
		if t.sunkKids != nil && it.Kind == ItemNode {
			// the lines the top sink folded below it (sink_bounded.go)
			var num int64
			if it.sunk != nil {
				num = it.sunk.num
			} else {
				num = it.Stream.numOf(it.Node)
			}
			for _, x := range t.sunkKids[num] {
				x.pl = link(it.pl, x.Role)
				k := readyKid(x)
				offer(b, &k)
			}
		}
		for _, c := range batch {
			heap.Push(&h, c)
		}
	}
	push(root)
	if start.Kind == ItemFile && t.Doc == nil && t.nStreams > 0 {
		// only some streams are held (each.go): the line counts them all
		root.kids += t.nStreams - len(t.Streams)
	}
	used := 1
	if root.agg() {
		used++
	}
	for h.Len() > 0 && used < lines {
		c := heap.Pop(&h).(bcand)
		n := need(c.up)
		if used+n > lines {
			break
		}
		used += n
		b := &bnode{it: c.k.open(c.up.it.Stream, c.up.it.pl)}
		c.up.shown = append(c.up.shown, b)
		push(b)
	}
	return root
}

// WriteBounded prints the bounded view from start with at most lines tree
// lines (lines >= 2), a column header before them and a legend after.
func (t *Tree) WriteBounded(w io.Writer, start Item, lines int, sty Style) error {
	var root *bnode
	if t.bnd != nil && start.Kind == t.bnd.it.Kind && start.Size == t.bnd.it.Size && t.bnd.lines == lines {
		root = t.bnd.root
	} else {
		root = t.boundedOf(start, lines)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	g, width := sty.layout()
	var line lineBuf
	writeHeader(&line, width)
	bw.Write(line.b)
	// depth first, explicit stack: a frame is a line and its next child
	type frame struct {
		b *bnode
		i int
	}
	var stack []frame
	var last []bool
	shownLines := 0
	emit := func(it Item, depth, kids int, isLast, trunc bool) {
		if depth > 0 {
			last = append(last[:depth-1], isLast)
		}
		v := Visit{Item: it, Depth: depth, Last: last[:depth], Kids: kids, Truncated: trunc}
		line.Reset()
		t.textLine(&line, &v, g, width, sty)
		if sty.ASCII {
			bw.WriteString(asciiOnly(line.String()))
		} else {
			bw.Write(line.b)
		}
		shownLines++
	}
	kidsShown := func(b *bnode) int {
		n := len(b.shown)
		if b.agg() {
			n++
		}
		return n
	}
	hidden := func(b *bnode) bool { return b.kids > 0 && len(b.shown) == 0 && !b.agg() }
	emit(root.it, 0, kidsShown(root), true, hidden(root))
	stack = append(stack, frame{b: root})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		b := f.b
		d := len(stack)
		if f.i < len(b.shown) {
			c := b.shown[f.i]
			f.i++
			isLast := f.i == len(b.shown) && !b.agg()
			emit(c.it, d, kidsShown(c), isLast, hidden(c))
			stack = append(stack, frame{b: c})
			continue
		}
		if f.i == len(b.shown) && b.agg() {
			f.i++
			emit(t.restItem(b), d, 0, true, false)
			continue
		}
		stack = stack[:len(stack)-1]
	}
	line.Reset()
	line.WriteString("SIZE: the object with all it holds; SHARE: of the file; SELF: its own bytes. " +
		itoa(int64(shownLines)) + " lines, largest first (--lines N, --all: more)\n")
	bw.Write(line.b)
	return bw.Flush()
}

// restItem is the aggregate line of b's hidden children.
func (t *Tree) restItem(b *bnode) Item {
	size := b.it.Size - b.it.Self
	for _, c := range b.shown {
		size -= c.it.Size
	}
	return Item{Kind: ItemElided, rest: true, Stream: b.it.Stream, Count: b.kids - len(b.shown), Size: size, Self: size, Role: "…"}
}

// restText writes "N more items, SIZE, AVG each" for an aggregate line.
func restText(line *lineBuf, it Item, sty Style) {
	line.WriteString(commas(int64(it.Count)))
	if it.Count == 1 {
		line.WriteString(" more item")
	} else {
		line.WriteString(" more items")
	}
	switch {
	case it.Size == 0:
		line.WriteString(" (references)")
	case it.Count > 1:
		line.WriteString(", " + sty.size(it.Size) + ", " + avg(it.Size, int64(it.Count), sty) + " each")
	default:
		line.WriteString(", " + sty.size(it.Size))
	}
}

// writeHeader is the column header of the text tree.
func writeHeader(line *lineBuf, width int) {
	line.Reset()
	pad(line, "SIZE", width)
	line.WriteByte(' ')
	pad(line, "SHARE", 7)
	line.WriteByte(' ')
	pad(line, "SELF", width)
	line.WriteString("  OBJECT\n")
}

// WriteHeader prints the column header of the text tree (WriteText).
func WriteHeader(w io.Writer, sty Style) error {
	width := 10
	if sty.Bytes {
		width = 12
	}
	var line lineBuf
	writeHeader(&line, width)
	_, err := w.Write(line.b)
	return err
}

// boundedView is a bounded view computed by the fast path.
type boundedView struct {
	it    Item
	lines int
	root  *bnode
}

// FastBounded computes the bounded view (WriteBounded from Root() with
// this many lines) of the file at path with the streaming fast path of
// --top: one pass, a heap of the lines largest objects that get lines of
// their own, no graph. It returns nil when the fast path does not apply
// (see FastTop); the tree it returns serves WriteBounded from its Root()
// only.
func FastBounded(path string, lines int) *Tree {
	if lines < 2 {
		return nil
	}
	return fastFile(path, func(ra io.ReaderAt, size int64) (*Tree, error) { return fastBoundedOf(ra, size, path, lines) })
}

func fastBoundedOf(ra io.ReaderAt, size int64, name string, lines int) (*Tree, error) {
	if size <= 0 {
		return nil, fallback("empty or unknown size")
	}
	if !bare(ra) {
		return nil, fallback("not a bare pickle (compression or container magic)")
	}
	m := &fastMachine{ra: ra, size: size, name: name, n: lines, bview: true}
	if err := m.runAll(); err != nil {
		return nil, err
	}
	h := m.heap
	sort.Slice(h, func(i, j int) bool { return h[j].worse(h[i]) })
	out := &pickle.Store{Index: 0, Begin: 0, End: m.size, Proto: m.proto, Root: pickle.NoID, StreamSelf: m.sself}
	st := &StreamTree{Store: out, upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root}
	t := &Tree{File: &pickle.File{Name: m.name, Size: m.size}, Total: m.size, Streams: []*StreamTree{st}}
	st.tree = t
	start := t.streamItem(0)
	root := &bnode{it: start, kids: 1, start: true}
	of := map[*fastRec]*bnode{}
	var cids []pickle.ID
	var counts []int64
	used := 2 // the stream's line and its aggregate line until the root is shown
	for _, e := range h {
		if used >= lines {
			break
		}
		r := e.rec
		up := root
		if r.up != nil {
			if up = of[r.up]; up == nil {
				return nil, fallback("an ancestor is not in the heap")
			}
		} else if r.role != ppath.Root {
			return nil, fallback("a record without an owner is not the root")
		}
		n := need(up)
		if used+n > lines {
			break
		}
		used += n
		if err := m.resolve(r); err != nil {
			return nil, err
		}
		id := r.val.add(out)
		st.num = append(st.num, r.val.id)
		if isContainer(r.val.kind) {
			cids, counts = append(cids, id), append(counts, r.cnt)
		}
		it := Item{Kind: ItemNode, Stream: st, Node: id, Role: r.role, pl: link(up.it.pl, r.role), Size: r.size, Self: r.self}
		b := &bnode{it: it, kids: int(r.kids)}
		up.shown = append(up.shown, b)
		of[r] = b
	}
	withCounts(out, cids, counts)
	t.bnd = &boundedView{it: start, lines: lines, root: root}
	return t, nil
}

// avg is the mean size of n items of size bytes in all: one decimal under
// 10 bytes ("1.5 B"), as Human otherwise.
func avg(size, n int64, sty Style) string {
	if size%n != 0 && size/n < 10 {
		v := strconv.FormatFloat(float64(size)/float64(n), 'f', 1, 64)
		if sty.Bytes {
			return v
		}
		return v + " B"
	}
	return sty.size(size / n)
}
