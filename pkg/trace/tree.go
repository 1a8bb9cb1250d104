// Package trace owns pk trace: the sized object tree of a pickle. It turns
// the byte attribution of pkg/pickle (every byte of a stream belongs to
// exactly one node, Store.Self, or to the stream, Store.StreamSelf;
// Store.Owner is the node that consumed a node where it was built) into
// inclusive sizes,
// a display tree with dill-style type codes and readable labels, Python-style
// paths, the largest subtrees, and renderings as text, JSON, an SVG icicle
// and a self-contained HTML page.
//
// A shared object is counted once, where it was built; its other
// appearances are references (Item.Ref) of size zero, so sizes add up:
// for every shown item, Self + the sizes of its children = Size, and the
// root's size is the file's length. Nothing here recurses over the input:
// sizes are computed by an explicit post-order over the ownership tree and
// every walk keeps an explicit stack, so nesting depth costs heap, not Go
// stack (bounded by the input's size; no depth limit is needed).
//
// Everything here reads a stream's pickle.Store (docs/engine.md §3): nodes
// are pickle.IDs, per-node tables are slices indexed by ID, and no
// *pickle.Node is walked.
package trace

import (
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Tree is the sized view of one parsed input.
type Tree struct {
	File    *pickle.File
	Total   int64 // bytes of the input: the root's size
	Streams []*StreamTree
	// Doc is the opened container when the tree was made by NewDoc from
	// anything but a bare pickle (doc.go); nil otherwise.
	Doc    *input.Doc
	top    []Item                        // the container's parts (Doc set)
	parts  [][]*StreamTree               // the streams of each pickle part, by Doc.Parts index
	stOf   map[*pickle.Store]*StreamTree // (Doc set)
	fast   *fastTop                      // --top computed by the fast path (fast.go)
	found  *foundAt                      // the last FindElement's answer (EachPath looks up what --path prints)
	groups *sunkGroups                   // --top --group: the groups of the rows the top sink folded (sink_group.go)
	bnd    *boundedView                  // the bounded view computed by the fast path (fast.go)
	// sunkKids: the lines of the default view that the top sink folded
	// (sink_bounded.go), by the number ("#N") of the node they hang below
	sunkKids map[int64][]Item
	pic      *picView // the boxes of the pictures computed by the fast path (fast_pic.go)
	// Leaves makes Top list only objects that hold no other (--top --leaves).
	Leaves bool
	// Element is the element of an array or cell of a frame that --path
	// named (FindElement): WriteJSON writes its record after the summary.
	Element *Element
	// nStreams and streamBytes are the file's stream count and their bytes
	// when Streams holds only some of them (each.go); 0: Streams is all.
	nStreams    int
	streamBytes int64
	// placed: the pictures place the File's children by their offsets in
	// the file, streamsAt that of its first stream (EachPicture keeps only
	// the streams drawn); else by the sizes of the children before them
	placed    bool
	streamsAt int64
	// kidFree holds lists of kids a walk is done with, for nodeKids to fill
	// again: a walk of the whole tree makes one list a node, which without
	// reuse is garbage the size of the stream's items.
	kidFree [][]kid
	// spareWalk: the stacks of the last walk, for the next (walk.go)
	spareWalk *walkStacks
}

// getKids returns an empty list of kids with room for n, reused when the
// tree has one.
func (t *Tree) getKids(n int) []kid {
	if t != nil {
		for i := len(t.kidFree) - 1; i >= 0 && i >= len(t.kidFree)-4; i-- {
			if k := t.kidFree[i]; cap(k) >= n {
				t.kidFree[i] = t.kidFree[len(t.kidFree)-1]
				t.kidFree = t.kidFree[:len(t.kidFree)-1]
				return k[:0]
			}
		}
	}
	return make([]kid, 0, n)
}

// putKids gives back a list of kids nobody reads any more.
func (t *Tree) putKids(k []kid) {
	if t == nil || cap(k) == 0 || len(t.kidFree) >= 64 {
		return
	}
	clear(k[:cap(k)])
	t.kidFree = append(t.kidFree, k[:0])
}

// StreamTree holds the sizes of one pickle stream.
type StreamTree struct {
	// Store holds the stream's nodes: the stream's own (Stream.Store), or
	// for the fast paths a small synthetic store of the nodes they show.
	Store *pickle.Store
	// arr recognises the numpy arrays of Store (pkg/array), made when
	// first needed
	arr *array.Reader
	// incl is the inclusive size of every node, indexed by ID: its Self
	// plus the inclusive sizes of the nodes it owns (Incl).
	incl sizes
	// num is, for a synthetic store, the number each node has in the
	// stream (what the graph path would call it: "#12"); nil when the
	// store's IDs are the stream's.
	num []int32
	// counts is, for the whole view's scratch store (fast_whole.go), the
	// item count of each node (the store holds no items); nil otherwise.
	counts []int64
	// owns has a bit for each node that owns another (nil: none).
	owns []uint64
	// ownStart and owned list, for node i, the IDs of the nodes it owns:
	// owned[ownStart[i]:ownStart[i+1]]; made only for a stream where an
	// owned node is not among its owner's children, or that has orphans
	// (sizeStream); nil otherwise.
	ownStart []int32
	owned    []int32
	// Orphans are nodes that neither have an owner nor are among the
	// stream's tops (pkg/pickle should leave none; they are shown under the
	// stream so that sizes still add up).
	Orphans []pickle.ID
	popped  []uint64                // the stream's Popped, a bit by ID (nil: none)
	tops    []topEnt                // the roles of the tops, by ID (topRole; made when first needed)
	mark    *marker                 // scratch for children(): which nodes a parent already expanded (made when first needed)
	fmark   *marker                 // scratch for folded()
	onPath  []bool                  // scratch for walks: is this node an open ancestor
	extra   map[pickle.ID]pickle.ID // cloudpickle setstate states by target

	// Container views (doc.go); zero for a bare pickle.
	prefix   string                     // the head of the stream's paths: "root", "stream[1]", "" or "<stream 1>" under a node's <data>
	rootRole string                     // the role the text shows for the stream's result ("root", "stream[1]")
	add      map[pickle.ID]int64        // bytes outside the stream counted in a node (torch storages)
	outside  int64                      // the sum of add
	inSelf   map[pickle.ID]int64        // bytes of a node's Self shown as attached parts (joblib arrays)
	attach   map[pickle.ID][]attachment // parts shown under a node
	sink     *topSink                   // the top sink that folded Store (sink.go); nil otherwise
	up       *StreamTree                // for a pickle nested in another stream: where
	upNode   pickle.ID
	doc      *input.Doc
	tree     *Tree
}

// numOf returns the number node id has in its stream (see num).
func (st *StreamTree) numOf(id pickle.ID) int64 {
	if st.num != nil {
		return int64(st.num[id])
	}
	if st.sink != nil && st.sink.args != nil {
		return st.sink.args.num(id)
	}
	return int64(id)
}

func (st *StreamTree) isPopped(id pickle.ID) bool {
	return st.popped != nil && st.popped[id>>6]&(1<<(id&63)) != 0
}

// New computes the sizes of every node of f.
func New(f *pickle.File) *Tree {
	t := &Tree{File: f, Total: f.Size}
	for i, s := range f.Streams {
		st := newStream(s.Store(), nil)
		st.setHead(i)
		st.tree = t
		t.Streams = append(t.Streams, st)
	}
	return t
}

// newStream sizes the nodes of s; add holds bytes from outside the stream
// that count in a node (nil: none).
func newStream(s *pickle.Store, add map[pickle.ID]int64) *StreamTree {
	return sizeStream(s, add, nil, nil)
}

// sizeScratch holds the tables of sizeStream for the next stream: a file
// of a million streams sized one at a time (each.go) allocates them once.
type sizeScratch struct {
	st    StreamTree
	incl  sizes
	cnt   []uint8 // sizeForest's counts (ownCounts)
	bits  []uint64
	owns  []uint64
	mark  marker
	stack []int32
	done  []uint8 // sizeDFS's
	// the ownership lists (ownLists)
	start, owned []int32
}

// sizeStream is newStream; with scr, the tree and its tables are scr's,
// valid until the next call with scr; with sk, s is a store the top sink
// folded (sink.go) and its folded runs are sized by sk.
//
// The ownership of a stream pkg/pickle read is a forest whose roots are
// the stream's tops, and every node is among the children of its owner
// (eachChild): sizes are then summed leaves first, climbing from each node
// whose owned nodes are all summed to its owner (a count a node, no list
// of the owned nodes, no stack). Anything else (a root that is no top, an
// owned node its owner does not list, a cycle) is also sized as it always
// was: by the post-order over the ownership lists (sizeDFS), which names
// orphans and keeps the lists for nodeKids.
func sizeStream(s *pickle.Store, add map[pickle.ID]int64, scr *sizeScratch, sk *topSink) *StreamTree {
	n := s.Len()
	var st *StreamTree
	var cnt []uint8
	if scr == nil {
		st = &StreamTree{Store: s, incl: sizesFor(s, n, add, sizes{})}
		cnt = make([]uint8, n)
	} else {
		scr.incl, scr.cnt = sizesFor(s, n, add, scr.incl), grow.Reuse(scr.cnt, n)
		scr.st = StreamTree{Store: s, incl: scr.incl}
		st, cnt = &scr.st, scr.cnt
		if len(scr.mark.bits) < (n+63)/64 {
			scr.mark = marker{}
		}
		scr.mark.next(n)
		st.mark = &scr.mark
	}
	st.add, st.upNode, st.prefix, st.rootRole, st.sink = add, pickle.NoID, ppath.Root, ppath.Root, sk
	if !st.sizeForest(cnt, scr) {
		st.incl.clear()
		st.sizeDFS(scr)
	}
	if len(s.Popped) > 0 {
		st.popped = make([]uint64, (n+63)/64)
	}
	for _, x := range s.Popped {
		st.popped[x>>6] |= 1 << (x & 63)
	}
	return st
}

// ownCounts counts, by node, the owned nodes not summed yet: a byte a
// node (sizing's largest table after the sizes), the few counts of
// cntFar or more in a map, and cntDone once the node is summed.
type ownCounts struct {
	c   []uint8
	far map[pickle.ID]int32
}

const (
	cntFar  = 0xFE // the count is in far
	cntDone = 0xFF // summed
)

// inc counts one more node o owns.
func (k *ownCounts) inc(o pickle.ID) {
	switch v := k.c[o]; {
	case v < cntFar-1:
		k.c[o]++
	case v == cntFar-1:
		if k.far == nil {
			k.far = map[pickle.ID]int32{}
		}
		k.c[o], k.far[o] = cntFar, cntFar
	case v == cntFar:
		k.far[o]++
	}
}

// get returns the count of o (cntDone: summed).
func (k *ownCounts) get(o pickle.ID) int32 {
	if v := k.c[o]; v != cntFar {
		return int32(v)
	}
	return k.far[o]
}

// dec counts one node of o's summed and reports whether o has none left
// to sum (never once o is summed itself: a cycle).
func (k *ownCounts) dec(o pickle.ID) bool {
	switch v := k.c[o]; {
	case v == cntDone:
		return false
	case v == cntFar:
		k.far[o]--
		return k.far[o] == 0
	default:
		k.c[o]--
		return k.c[o] == 0
	}
}

// sizeForest sums the sizes of a stream whose ownership is a forest rooted
// at its tops, every owned node listed by its owner; false (with Incl
// partly summed) for any other.
func (st *StreamTree) sizeForest(c []uint8, scr *sizeScratch) bool {
	s := st.Store
	n := len(c)
	cnt := ownCounts{c: c}
	roots := 0
	for id := range pickle.ID(n) {
		if o := s.Owner(id); o >= 0 {
			if int(o) >= n {
				return false
			}
			cnt.inc(o)
		} else {
			roots++
		}
	}
	words := (n + 63) / 64
	var bits, owns []uint64
	if scr == nil {
		bits, owns = make([]uint64, words), make([]uint64, words)
	} else {
		scr.bits, scr.owns = grow.Reuse(scr.bits, words), grow.Reuse(scr.owns, words)
		bits, owns = scr.bits, scr.owns
	}
	// every root a top (else there are orphans: sizeDFS names them)
	tops := 0
	for _, x := range s.Tops {
		if x >= 0 && int(x) < n && s.Owner(x) < 0 && bits[x>>6]&(1<<(x&63)) == 0 {
			bits[x>>6] |= 1 << (x & 63)
			tops++
		}
	}
	if tops != roots {
		return false
	}
	// every owned node among its owner's children (else nodeKids lists the
	// others from the ownership lists)
	listed := true
	m := st.marks()
	for o := range pickle.ID(n) {
		if c[o] == 0 {
			continue
		}
		owns[o>>6] |= 1 << (o & 63)
		if !listed {
			continue
		}
		if _, ok := st.argFoldOf(o); ok {
			continue // (what it owns are the nodes kept from its tuple: --top walks no line)
		}
		m.next(n)
		k := int32(0)
		eachChild(s, o, func(c pickle.ID, _ role, _ bool) bool {
			if s.Owner(c) == o && !m.has(c) {
				m.add(c)
				k++
			}
			return true
		})
		listed = k == cnt.get(o)
	}
	// leaves first, climbing to each owner once its owned nodes are summed
	summed := 0
	for id := range pickle.ID(n) {
		if c[id] != 0 {
			continue
		}
		x := id
		for {
			st.incl.add(x, st.selfOf(x))
			c[x] = cntDone
			summed++
			o := s.Owner(x)
			if o < 0 {
				break
			}
			st.incl.add(o, st.incl.at(x))
			if !cnt.dec(o) {
				break
			}
			x = o
		}
	}
	if summed != n {
		return false // a cycle
	}
	st.owns = owns
	if !listed {
		st.ownLists(nil)
	}
	return true
}

// selfOf is the bytes sizing counts in node x itself: its Self and the
// bytes from outside the stream counted in it, or for a run the top sink
// folded, the sizes of the subtrees it stands for.
func (st *StreamTree) selfOf(x pickle.ID) int64 {
	if st.sink != nil && st.Store.Kind(x) == pickle.KindFolded {
		if f, ok := st.argFoldOf(x); ok {
			return f.cut // (finishArgs checks that its Self is its count)
		}
		return st.sink.runSize(st.Store, x)
	}
	return st.Store.Self(x) + st.add[x]
}

// ownLists makes the ownership lists (CSR: owned[ownStart[i]:ownStart[i+1]]
// are the nodes i owns).
func (st *StreamTree) ownLists(scr *sizeScratch) {
	if scr == nil {
		st.ownStart, st.owned = ownership(st.Store, nil, nil)
		return
	}
	scr.start, scr.owned = ownership(st.Store, scr.start, scr.owned)
	st.ownStart, st.owned = scr.start, scr.owned
}

// ownership returns the ownership lists of s (see ownLists), in start and
// owned when they have room.
func ownership(s *pickle.Store, start, owned []int32) ([]int32, []int32) {
	n := s.Len()
	start = grow.Reuse(start, n+1)
	for id := range pickle.ID(n) {
		if o := s.Owner(id); o >= 0 {
			start[o+1]++
		}
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	owned = grow.Reuse(owned, int(start[n]))
	// fill with start[o] as o's cursor (it ends at o+1's start), then
	// shift the starts back: no cursor array
	for id := range pickle.ID(n) {
		if o := s.Owner(id); o >= 0 {
			owned[start[o]] = int32(id)
			start[o]++
		}
	}
	for i := n; i > 0; i-- {
		start[i] = start[i-1]
	}
	start[0] = 0
	return start, owned
}

// sizeDFS sums the sizes by a post-order over the ownership lists from the
// tops, then from each node no top reaches (an orphan, shown under the
// stream), with an explicit stack; done[] guards against any malformed
// ownership (a node is summed once).
func (st *StreamTree) sizeDFS(scr *sizeScratch) {
	s := st.Store
	n := s.Len()
	st.ownLists(scr)
	st.owns = nil
	var done []uint8 // 0 new, 1 open, 2 done
	var stack []int32
	if scr != nil {
		scr.done = grow.Reuse(scr.done, n)
		done, stack = scr.done, scr.stack
		defer func() { scr.stack = stack[:0] }()
	} else {
		done = make([]uint8, n)
	}
	sum := func(root pickle.ID) {
		if done[root] != 0 {
			return
		}
		stack = append(stack[:0], int32(root))
		done[root] = 1
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			pushed := false
			if done[id] == 1 {
				done[id] = 3 // children pushed
				for _, c := range st.owned[st.ownStart[id]:st.ownStart[id+1]] {
					if done[c] == 0 {
						done[c] = 1
						stack = append(stack, c)
						pushed = true
					}
				}
				if pushed {
					continue
				}
			}
			stack = stack[:len(stack)-1]
			v := st.selfOf(pickle.ID(id))
			for _, c := range st.owned[st.ownStart[id]:st.ownStart[id+1]] {
				if done[c] == 2 {
					v += st.incl.at(pickle.ID(c))
				}
			}
			st.incl.set(pickle.ID(id), v)
			done[id] = 2
		}
	}
	for _, x := range s.Tops {
		sum(x)
	}
	for id := range pickle.ID(n) {
		if done[id] == 0 {
			// unreachable from the tops: show it under the stream
			st.Orphans = append(st.Orphans, id)
			sum(id)
		}
	}
}

// ownsAny reports whether node id owns another.
func (st *StreamTree) ownsAny(id pickle.ID) bool {
	if st.ownStart != nil {
		return st.ownStart[id] != st.ownStart[id+1]
	}
	return st.owns != nil && st.owns[id>>6]&(1<<(id&63)) != 0
}

// unlisted returns the nodes n owns that are not among its children
// (eachChild), when there may be any: the ownership lists exist only for a
// stream where some are (nil otherwise).
func (st *StreamTree) unlisted(n pickle.ID) []int32 {
	if st.ownStart == nil {
		return nil
	}
	return st.owned[st.ownStart[n]:st.ownStart[n+1]]
}

// ItemKind says what a line of the display tree is.
type ItemKind uint8

const (
	ItemFile     ItemKind = iota // the whole input (shown when it holds several streams or trailing bytes)
	ItemStream                   // one pickle stream
	ItemNode                     // an object, where it was built
	ItemRef                      // another appearance of an object built elsewhere
	ItemTrailing                 // bytes after the last stream that are not a pickle
	ItemElided                   // several children folded into one line by a display limit
	ItemPart                     // a part of a container: a pickle part, raw data (a storage, an array), container records (doc.go)
)

// Item is one line of the display tree.
type Item struct {
	Kind    ItemKind
	Stream  *StreamTree
	Node    pickle.ID  // ItemNode, ItemRef: the node in Stream.Store
	Role    string     // the path segment under its parent: "root", "['key']", "[3]", ".__reduce__[1]", ... (pkg/path)
	pl      *pathLink  // the Python-style path from the stream's tops, built on demand by Path()
	Size    int64      // inclusive bytes (0 for references)
	Self    int64      // bytes on this line that are in no shown child (the node's own bytes plus folded dict keys and name parts)
	Cycle   bool       // a reference to an object that contains it
	Count   int        // ItemElided: how many children; ItemRef: how many consecutive references to the same object (0 or 1: one)
	RoleEnd string     // ItemRef with Count > 1: the role of the last one
	Index   int        // ItemStream: stream index
	Depth   int        // set by walks
	part    *partItem  // ItemPart
	rest    bool       // ItemElided: the aggregate line of a bounded view ("N more items, SIZE, AVG each")
	sunk    *nodeFacts // a node the top sink folded (sink.go): what its lines say of it; Node is NoID
}

// pathLink is a path kept as a chain of roles, so that a deep item costs
// one link and not a copy of its parent's path.
type pathLink struct {
	up   *pathLink
	role string
	n    int // length of the whole path
}

func link(up *pathLink, role string) *pathLink {
	n := len(role)
	if up != nil {
		n += up.n
	}
	return &pathLink{up: up, role: role, n: n}
}

// Incl returns the inclusive size of node id: its Self plus the inclusive
// sizes of the nodes it owns.
func (st *StreamTree) Incl(id pickle.ID) int64 { return st.incl.at(id) }

// Path returns the Python-style path of the item ("root['a'][3]").
func (it Item) Path() string {
	if it.pl == nil {
		return ""
	}
	b := make([]byte, it.pl.n)
	i := len(b)
	for l := it.pl; l != nil; l = l.up {
		i -= len(l.role)
		copy(b[i:], l.role)
	}
	return string(b)
}

// PathLen returns the length of Path() without building it.
func (it Item) PathLen() int {
	if it.pl == nil {
		return 0
	}
	return it.pl.n
}

// Root returns the top item: the file when it holds several streams or
// trailing bytes, the only stream otherwise.
func (t *Tree) Root() Item {
	if t.Doc != nil {
		return Item{Kind: ItemFile, Size: t.Total, Role: t.Doc.Path}
	}
	if t.streamCount() == 1 && t.File.Trailing == nil {
		return t.streamItem(0)
	}
	var self int64 = t.Total
	if t.nStreams > 0 {
		self -= t.streamBytes
	} else {
		for _, s := range t.Streams {
			self -= s.Store.Length()
		}
	}
	if t.File.Trailing != nil {
		self -= t.File.Trailing.Len
	}
	return Item{Kind: ItemFile, Size: t.Total, Self: self, Role: t.File.Name}
}

// streamCount is the number of streams of the file.
func (t *Tree) streamCount() int {
	if t.nStreams > 0 {
		return t.nStreams
	}
	return len(t.Streams)
}

func (t *Tree) streamItem(i int) Item {
	s := t.Streams[i]
	return Item{Kind: ItemStream, Stream: s, Index: s.Store.Index, Size: s.Store.Length(), Self: s.Store.StreamSelf, pl: link(nil, "")}
}

// trailingItem is the line of a file's bytes after its last stream.
func trailingItem(tr *pickle.Trailing) Item {
	return Item{Kind: ItemTrailing, Size: tr.Len, Self: tr.Len, Role: ppath.Trailing, pl: link(nil, ppath.Trailing)}
}

// Children returns the display children of it, in stream order.
func (t *Tree) Children(it Item) []Item {
	switch it.Kind {
	case ItemFile:
		if t.Doc != nil {
			return append([]Item(nil), t.top...)
		}
		out := make([]Item, 0, len(t.Streams)+1)
		for i := range t.Streams {
			out = append(out, t.streamItem(i))
		}
		if tr := t.File.Trailing; tr != nil {
			out = append(out, trailingItem(tr))
		}
		return out
	case ItemStream:
		return it.Stream.topItems(it.pl)
	case ItemNode:
		return t.attached(it, it.Stream.children(it))
	case ItemPart:
		return t.partChildren(it)
	}
	return nil
}

func (st *StreamTree) topItems(prefix *pathLink) []Item {
	ks := st.topKids()
	out := make([]Item, len(ks))
	for i := range ks {
		out[i] = ks[i].open(st, prefix)
	}
	return out
}

// topKids is topItems as kids: a stream of many tops (a cloudpickle state
// discards a setstate call a function) costs a 32-byte kid each until a
// top is opened, not an Item.
func (st *StreamTree) topKids() []kid {
	s := st.Store
	out := st.tree.getKids(len(s.Tops) + len(st.Orphans) + 1)
	st.eachTopKid(func(k kid) { out = append(out, k) })
	return out
}

// eachTopKid is topKids one kid at a time, for what needs only some of
// them: a stream of a million tops costs no list of a million kids.
func (st *StreamTree) eachTopKid(fn func(k kid)) {
	var c topCursor
	for k, ok := st.nextTopKid(&c); ok; k, ok = st.nextTopKid(&c) {
		fn(k)
	}
}

// topCursor is where eachTopKid's sequence has got to: the next of the
// stream's tops, then the result when it is a reference to an object built
// elsewhere, then the orphans. A walk that shows a stream of many tops keeps
// one and lists them a window at a time (walk.go, topWindow).
type topCursor struct {
	i         int // next place: Tops, then the result's reference, then Orphans
	np, nl    int // the popped and leftover tops numbered so far
	rootShown bool
}

// nextTopKid returns the kid at c and moves c past it; ok is false at the
// end.
func (st *StreamTree) nextTopKid(c *topCursor) (k kid, ok bool) {
	s := st.Store
	if c.i < len(s.Tops) {
		x := s.Tops[c.i]
		c.i++
		k = kid{node: x, key: pickle.NoID, kind: ItemNode, size: st.incl.at(x)}
		switch {
		case x == s.Root && !c.rootShown:
			k.rk = rRoot
			c.rootShown = true
		case st.isPopped(x):
			k.rk, k.i = rPopped, int32(c.np)
			c.np++
		default:
			k.rk, k.i = rLeftover, int32(c.nl)
			c.nl++
		}
		return k, true
	}
	if c.i == len(s.Tops) {
		c.i++
		if !c.rootShown && s.Root != pickle.NoID {
			// the result is a reference to an object built elsewhere
			return kid{node: s.Root, key: pickle.NoID, rk: rRoot, kind: ItemRef}, true
		}
	}
	for j := c.i - len(s.Tops) - 1; j < len(st.Orphans); j = c.i - len(s.Tops) - 1 {
		c.i++
		x := st.Orphans[j]
		if st.sink != nil && belowStub(s, x) {
			continue // (what folded roots owned: their bytes are in the runs)
		}
		return kid{node: x, key: pickle.NoID, rk: rOrphan, i: int32(j), kind: ItemNode, size: st.incl.at(x)}, true
	}
	return kid{}, false
}

func (st *StreamTree) nodeItem(n pickle.ID, role string, path *pathLink) Item {
	if f, ok := st.argFoldOf(n); ok {
		return Item{Kind: ItemNode, Stream: st, Node: n, Role: role, pl: path, Size: st.incl.at(n), Self: int64(f.self)}
	}
	self := st.Store.Self(n) + st.folded(n) - st.inSelf[n]
	if sk := st.sink; sk != nil && sk.args != nil {
		self -= sk.args.noneBytes(st.Store, n) // (shared Nones' bytes: their lines', nones.go)
	}
	return Item{Kind: ItemNode, Stream: st, Node: n, Role: role, pl: path, Size: st.incl.at(n), Self: self}
}

// isScalar: kinds shown as leaves.
func isScalar(s *pickle.Store, n pickle.ID) bool { return isScalarKind(s.Kind(n)) }

// folded returns the bytes of the children of n that are not shown on
// lines of their own: scalar dict keys (the key is the child's label) and
// the module/name strings of a STACK_GLOBAL.
func (st *StreamTree) folded(n pickle.ID) int64 {
	s := st.Store
	if k := s.Kind(n); k != pickle.KindDict && k != pickle.KindGlobal && s.NMuts(n) == 0 {
		return 0
	}
	var v int64
	if st.fmark == nil {
		st.fmark = &marker{}
	}
	m := st.fmark
	m.next(s.Len())
	eachChild(s, n, func(c pickle.ID, r role, folded bool) bool {
		if folded && s.Owner(c) == n && !m.has(c) {
			m.add(c)
			v += st.incl.at(c)
		}
		return true
	})
	return v
}

// roleKind says how a child sits in its parent.
type roleKind uint8

const (
	rIndex  roleKind = iota // [i] (paths.go spells each role)
	rKey                    // [key] (k is the scalar key, i the entry's index)
	rAttr                   // .name: an entry of a BUILD state dict (attrState), k the key
	rAttr2                  // .name: an entry of a dict of a (dict, slots dict) state pair
	rNamed                  // .__code__, .co_consts: an argument of a well-known constructor (namedArgs), k the tuple
	rKeyObj                 // <key i>: a key that is not a scalar, shown as a child
	rKeyVal                 // [<key i>]
	rSet                    // {#i}
	rFunc                   // .__reduce__[0] (.__class__ for NEWOBJ: i 1)
	rArgs                   // .__reduce__[1] (.__getnewargs__())
	rKwargs                 // .__getnewargs_ex__()[1]
	rState                  // .__getstate__(), <build 1>, ...
	rName                   // .__parts__[i]
	rPid                    // <pid>
	rOwned                  // <owned id>
	// the roles of a stream's tops (topKids)
	rRoot     // the stream's head: root, stream[1]
	rPopped   // <popped i>
	rLeftover // <leftover i>
	rOrphan   // <orphan i>
)

type role struct {
	kind roleKind
	i    int
	k    pickle.ID // rKey: the key, in the store str is given
}

// eachChild calls fn for every logical child of n in order (items, call
// parts, mutation arguments), with its role; folded is true for the scalar
// dict keys and global name parts that n owns and that are shown on n's
// line when n owns them (they are skipped otherwise). fn returns false to stop.
func eachChild(s *pickle.Store, n pickle.ID, fn func(c pickle.ID, r role, folded bool) bool) bool {
	keyKind := rKey
	if s.Kind(n) == pickle.KindDict {
		if ok, pair := attrStateOf(s, n); ok {
			keyKind = rAttr // the attributes of the object whose BUILD state n is
			if pair {
				keyKind = rAttr2
			}
		}
	}
	pairs := func(items []pickle.ID, base int) bool {
		for i := 0; i+1 < len(items); i += 2 {
			k, v := items[i], items[i+1]
			if isScalar(s, k) {
				r := role{kind: keyKind, k: k, i: base + i/2}
				if !fn(k, r, true) || !fn(v, r, false) {
					return false
				}
				continue
			}
			j := base + i/2
			if !fn(k, role{kind: rKeyObj, i: j, k: k}, false) || !fn(v, role{kind: rKeyVal, i: j, k: k}, false) {
				return false
			}
		}
		return true
	}
	items := s.Items(n)
	switch s.Kind(n) {
	case pickle.KindDict:
		if !pairs(items, 0) {
			return false
		}
	case pickle.KindSet, pickle.KindFrozenSet:
		for i, c := range items {
			if !fn(c, role{kind: rSet, i: i}, false) {
				return false
			}
		}
	case pickle.KindGlobal:
		for i, c := range items {
			if !fn(c, role{kind: rName, i: i}, isScalar(s, c)) {
				return false
			}
		}
	case pickle.KindPersID:
		for _, c := range items {
			if !fn(c, role{kind: rPid}, false) {
				return false
			}
		}
	case pickle.KindCall:
		form := 0
		if op := s.Op(n); op == pickle.NEWOBJ || op == pickle.NEWOBJ_EX {
			form = 1 // .__class__ and .__getnewargs__(), as pk diff names them
		}
		if f := s.Func(n); f != pickle.NoID && !fn(f, role{kind: rFunc, i: form}, false) {
			return false
		}
		if a := s.Args(n); a != pickle.NoID && !fn(a, role{kind: rArgs, i: form}, false) {
			return false
		}
		if kw := s.Kwargs(n); kw != pickle.NoID && !fn(kw, role{kind: rKwargs}, false) {
			return false
		}
	default:
		ik := rIndex
		if isNamedArgs(s, n) {
			ik = rNamed
		}
		i := 0
		for _, c := range items {
			if !fn(c, role{kind: ik, i: i, k: n}, false) {
				return false
			}
			i += runItems(s, c)
		}
	}
	if s.NMuts(n) == 0 {
		return true
	}
	nb, na, nk := 0, s.ItemCount(n), 0
	for mi := s.MutIter(n); ; {
		m, ok := mi.Next()
		if !ok {
			break
		}
		switch m.Op {
		case pickle.BUILD:
			for _, c := range m.Args {
				if !fn(c, role{kind: rState, i: nb}, false) {
					return false
				}
			}
			nb++
		case pickle.SETITEM, pickle.SETITEMS:
			if !pairs(m.Args, nk) {
				return false
			}
			nk += len(m.Args) / 2
		case pickle.ADDITEMS:
			for _, c := range m.Args {
				if !fn(c, role{kind: rSet, i: na}, false) {
					return false
				}
				na++
			}
		default:
			for _, c := range m.Args {
				if !fn(c, role{kind: rIndex, i: na}, false) {
					return false
				}
				na++
			}
		}
	}
	return true
}

// runItems is the number of items of its list that item c stands for: one,
// or for a run the top sink folded (sink.go), the items of the run.
func runItems(s *pickle.Store, c pickle.ID) int {
	if c >= 0 && s.Kind(c) == pickle.KindFolded {
		return int(s.Self(c))
	}
	return 1
}

// marker marks nodes for one pass at a time: a bit a node, and the list of
// the nodes marked, which next clears (so a pass costs what it marks, and
// the marker an eighth of a byte a node).
type marker struct {
	bits []uint64
	set  []pickle.ID
}

// next starts a pass over a stream of n nodes (a marker made for fewer
// grows).
func (m *marker) next(n int) {
	if len(m.bits) < (n+63)/64 {
		m.bits, m.set = make([]uint64, (n+63)/64), m.set[:0]
	}
	for _, id := range m.set {
		m.bits[id>>6] &^= 1 << (id & 63)
	}
	m.set = m.set[:0]
}

func (m *marker) has(id pickle.ID) bool { return m.bits[id>>6]&(1<<(id&63)) != 0 }

func (m *marker) add(id pickle.ID) {
	m.bits[id>>6] |= 1 << (id & 63)
	m.set = grow.Push(m.set, id)
}

// marks returns the stream's marker for children lists.
func (st *StreamTree) marks() *marker {
	if st.mark == nil {
		st.mark = &marker{}
	}
	return st.mark
}

// children lists the display children of a node item: the nodes it owns
// are expanded (once, at their first appearance), the others are
// references.
func (st *StreamTree) children(it Item) []Item {
	var out []Item
	st.eachChildItem(it, func(k Item) { out = append(out, k) })
	return out
}

// eachChildItem calls fn with each of children's items, in order, one at a
// time (what looks for one child keeps none of the others: find).
func (st *StreamTree) eachChildItem(it Item, fn func(Item)) {
	n := it.Node
	s := st.Store
	m := st.marks()
	m.next(s.Len())
	eachChild(s, n, func(c pickle.ID, r role, folded bool) bool {
		own := s.Owner(c) == n && !m.has(c)
		if own {
			m.add(c)
		}
		if folded {
			return true
		}
		rs := r.str(s)
		pl := r.link(it.pl, rs)
		if own {
			fn(st.nodeItem(c, rs, pl))
		} else {
			fn(Item{Kind: ItemRef, Stream: st, Node: c, Role: rs, pl: pl})
		}
		return true
	})
	// Owned nodes that are none of the above (should not happen).
	for _, c := range st.unlisted(n) {
		if c := pickle.ID(c); !m.has(c) {
			m.add(c)
			rs := role{kind: rOwned, i: int(c)}.str(s)
			fn(st.nodeItem(c, rs, link(it.pl, rs)))
		}
	}
}

// roleIn returns the role under which owner expands c.
func (st *StreamTree) roleIn(owner, c pickle.ID) (string, roleKind) {
	s := st.Store
	found, kind := "", rOwned
	eachChild(s, owner, func(x pickle.ID, r role, folded bool) bool {
		if x == c {
			found, kind = r.str(s), r.kind
			return false
		}
		return true
	})
	if found == "" {
		found = role{kind: rOwned, i: int(c)}.str(s)
	}
	return found, kind
}

// PathOf returns the Python-style path of a node (where it was built).
func (t *Tree) PathOf(st *StreamTree, n pickle.ID) string {
	parts, _ := st.pathParts(n, pickle.NoID)
	var b strings.Builder
	if st.up != nil {
		b.WriteString(t.PathOf(st.up, st.upNode) + attachRole)
	}
	b.WriteString(st.prefix)
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String()
}

// pathParts returns the roles of the path of node n, innermost first, from
// n up to its owner stop (stop's own role not included; NoID: up to the
// stream's top, whose role is the last), and how many roles above stop the
// last attribute or named argument still leaves out (as PathOf reads them).
func (st *StreamTree) pathParts(n, stop pickle.ID) ([]string, int) {
	s := st.Store
	var parts []string
	skip := 0 // under an attribute or a named argument: the roles of the state (or arguments) are not in the path
	for x := n; x != pickle.NoID && x != stop; x = s.Owner(x) {
		o := s.Owner(x)
		if o == pickle.NoID {
			if skip == 0 {
				parts = append(parts, st.topRole(x))
			}
			break
		}
		r, k := st.roleIn(o, x)
		if skip > 0 {
			skip--
		} else {
			parts = append(parts, r)
			switch k {
			case rAttr, rNamed:
				skip = 1
			case rAttr2:
				skip = 2
			}
		}
		if len(parts) > s.Len() { // malformed ownership: stop
			break
		}
	}
	return parts, skip
}

// topRole is the path step topItems gives x after the stream's head (""
// for the result, "<popped 3>", ...), or "<unknown>"
// when x is not one of the stream's tops. The roles of all tops are indexed
// once, sorted by ID (12 bytes a top), so that a path per --top line does
// not list every top again (a million discarded calls made --top 20 take
// 17 s).
func (st *StreamTree) topRole(x pickle.ID) string {
	if st.tops == nil {
		st.indexTopRoles()
	}
	i := sort.Search(len(st.tops), func(i int) bool { return st.tops[i].id >= x })
	if i == len(st.tops) || st.tops[i].id != x {
		return ppath.Pseudo("unknown", -1)
	}
	return role{kind: st.tops[i].rk, i: int(st.tops[i].i)}.str(nil)
}

// topEnt is the role of one of a stream's tops.
type topEnt struct {
	id pickle.ID
	i  int32
	rk roleKind
}

// indexTopRoles numbers the tops as topItems does; a node listed twice
// keeps its first role.
func (st *StreamTree) indexTopRoles() {
	tops := make([]topEnt, 0, len(st.Store.Tops)+len(st.Orphans))
	st.eachTopKid(func(k kid) {
		if k.kind == ItemNode {
			tops = append(tops, topEnt{id: k.node, i: k.i, rk: k.rk})
		}
	})
	sort.SliceStable(tops, func(i, j int) bool { return tops[i].id < tops[j].id })
	out := tops[:0]
	for _, e := range tops {
		if len(out) > 0 && out[len(out)-1].id == e.id {
			continue
		}
		out = append(out, e)
	}
	st.tops = out
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b [24]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
