package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Options select what a walk shows.
type Options struct {
	Depth    int   // levels below the start to show; <0 unlimited
	MinSize  int64 // children smaller than this are folded into one "more" line
	SortSize bool  // children by size, largest first (default: stream order)
	All      bool  // show small scalars one by one (default: one summary line per parent)

	// base and baseLast place the start of a walk under an ancestor that is
	// not walked: at depth base, the last of its siblings or not (EachWhole
	// walks a file's streams one at a time under the file's line)
	base     int
	baseLast bool
	// noPaths: the callbacks never read an item's path (text lines), so
	// the nodes and references a walk opens get no path link: a chain of
	// a million levels then holds no 32-byte link a line (ready items,
	// such as pickle parts, keep theirs)
	noPaths bool
}

// SmallScalar is the size under which scalars (and references) are summed
// into one line per parent unless Options.All is set.
const SmallScalar = 1024

// Visit is one line of a walk.
type Visit struct {
	Item
	Depth     int
	Last      []bool // for each level 1..Depth: was that ancestor (or this item) the last of its siblings
	Kids      int    // children shown under this line
	Truncated bool   // it has children that the depth limit hides
}

// Shown returns the children of it that a walk with opt shows: sorted and
// with small ones folded into an ItemElided.
func (t *Tree) Shown(it Item, opt Options) []Item {
	kids := t.shownKids(it, opt)
	out := make([]Item, len(kids))
	for i := range kids {
		out[i] = kids[i].open(it.Stream, it.pl)
	}
	return out
}

// kid is a child of an item as a walk holds it until it is opened: what
// Shown decides on, and what makes its Item (role spelled out, path link)
// when it is opened. A wide container's children cost 40 bytes each while
// it is open, not an Item, a path link and a role string each.
type kid struct {
	node pickle.ID // in the store of the parent's stream, or of item's
	key  pickle.ID // role key (rKey)
	size int64
	i    int32 // role index
	rk   roleKind
	kind ItemKind
	item *Item // a ready item: any child but a node's own children and references, and runs of references
}

func (k *kid) role() role { return role{kind: k.rk, i: int(k.i), k: k.key} }

// folded reports whether k is a run the top sink folded (sink.go), in
// st, the stream of k's parent.
func (k *kid) folded(st *StreamTree) bool {
	return k.item == nil && k.kind == ItemNode && st != nil && k.node >= 0 && st.Store.Kind(k.node) == pickle.KindFolded
}

// top reports whether k is one of a stream's tops (topKids).
func (k *kid) top() bool { return k.item == nil && k.rk >= rRoot }

func (k *kid) roleString(st *StreamTree) string {
	if k.item != nil {
		return k.item.Role
	}
	return k.role().str(st.Store)
}

// scalar reports whether k is a node shown as a leaf value; st is the
// parent's stream (a ready item has its own).
func (k *kid) scalar(st *StreamTree) bool {
	if k.item != nil {
		st = k.item.Stream
	}
	return isScalar(st.Store, k.node)
}

// open makes the item of k, a child of an item of stream st with path pl.
func (k *kid) open(st *StreamTree, pl *pathLink) Item {
	if k.item != nil {
		return *k.item
	}
	r := k.role()
	rs := r.str(st.Store)
	var npl *pathLink
	switch {
	case r.isTop():
		// root, root<popped 0>, stream[1], ...: the stream's head first
		npl = link(pl, st.prefix+rs)
		if r.kind == rRoot {
			rs = st.rootRole
		}
	default:
		npl = r.link(pl, rs)
	}
	if k.kind == ItemNode {
		return st.nodeItem(k.node, rs, npl)
	}
	return Item{Kind: ItemRef, Stream: st, Node: k.node, Role: rs, pl: npl}
}

// noPath is the path link of the items a walk without paths opens: one
// link shared by all, not nil, so that what tells a part attached under a
// node from a container's part (text.go, a link with an up) still holds.
var noPath = &pathLink{}

// openNoPath is open for a walk whose callbacks read no path (k is not a
// ready item): the item's role, with the shared link noPath.
func (k *kid) openNoPath(st *StreamTree) Item {
	rs := k.role().str(st.Store)
	if k.rk == rRoot {
		rs = st.rootRole
	}
	if k.kind == ItemNode {
		return st.nodeItem(k.node, rs, noPath)
	}
	return Item{Kind: ItemRef, Stream: st, Node: k.node, Role: rs, pl: noPath}
}

func readyKid(x Item) kid {
	return kid{node: x.Node, size: x.Size, kind: x.Kind, item: &x}
}

// nodeKids is children() as kids: the nodes n owns are expanded (once, at
// their first appearance), the others are references.
func (st *StreamTree) nodeKids(n pickle.ID) []kid {
	out := st.tree.getKids(kidsHint(st.Store, n))
	st.eachNodeKid(n, func(k kid) { out = append(out, k) })
	return out
}

// eachNodeKid is nodeKids one kid at a time (fn must not list the kids of
// another node of the stream: the marker is the stream's).
func (st *StreamTree) eachNodeKid(n pickle.ID, fn func(k kid)) {
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
		k := kid{node: c, key: r.k, i: int32(r.i), rk: r.kind, kind: ItemRef}
		if own {
			k.kind, k.size = ItemNode, st.incl.at(c)
		}
		fn(k)
		return true
	})
	// Owned nodes that are none of the above (should not happen).
	for _, c := range st.unlisted(n) {
		if id := pickle.ID(c); !m.has(id) {
			m.add(id)
			fn(kid{node: id, key: pickle.NoID, i: c, rk: rOwned, kind: ItemNode, size: st.incl.at(pickle.ID(c))})
		}
	}
}

// kidsHint is about how many kids nodeKids makes of n: its items (a dict's
// values: its scalar keys are folded), call parts and operation arguments,
// so that a wide container's list of kids is made once, not doubled up to
// its size (a list of 500,000 objects: 16 MB of garbage).
func kidsHint(s *pickle.Store, n pickle.ID) int {
	c := s.NItems(n)
	if s.Kind(n) == pickle.KindDict {
		c /= 2
	}
	if s.Kind(n) == pickle.KindCall {
		c = 3
	}
	if s.NMuts(n) > 0 {
		for mi := s.MutIter(n); ; {
			m, ok := mi.Next()
			if !ok {
				break
			}
			c += len(m.Args)
		}
	}
	return c
}

// kidsOf is Children as kids.
func (t *Tree) kidsOf(it Item) []kid {
	var kids []kid
	if it.Kind == ItemStream {
		return it.Stream.topKids()
	}
	if it.Kind == ItemNode {
		kids = it.Stream.nodeKids(it.Node)
		if len(it.Stream.attach[it.Node]) > 0 {
			for _, x := range t.attached(it, nil) {
				kids = append(kids, readyKid(x))
			}
		}
	} else {
		for _, x := range t.Children(it) {
			kids = append(kids, readyKid(x))
		}
	}
	return kids
}

// shownKids is Shown as kids.
func (t *Tree) shownKids(it Item, opt Options) []kid {
	kids := t.kidsOf(it)
	if len(kids) == 0 {
		return nil
	}
	if opt.SortSize {
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].size > kids[j].size })
	}
	// the children folded into one "…" line: an Item is made only when
	// there are some (a million nodes walked made a million)
	var elCount int
	var elSize int64
	out := kids[:0]
	for _, k := range kids {
		if k.elided(it.Stream, opt) {
			elCount++
			elSize += k.size
			continue
		}
		if k.folded(it.Stream) {
			// a run the whole tree's sink folded: its small scalars are in
			// the "…" line, and a run of nothing else is no line
			n, size, shown := it.Stream.runElided(k.node)
			elCount += n
			elSize += size
			if !shown {
				continue
			}
		}
		if k.kind == ItemRef && len(out) > 0 {
			// a run of references to one object is one line
			if p := &out[len(out)-1]; p.kind == ItemRef && p.node == k.node {
				if p.item == nil {
					x := p.open(it.Stream, it.pl)
					p.item = &x
				}
				if p.item.Count == 0 {
					p.item.Count = 1
				}
				p.item.Count++
				p.item.RoleEnd = k.roleString(it.Stream)
				continue
			}
		}
		out = append(out, k)
	}
	if elCount > 0 {
		el := &Item{Kind: ItemElided, Stream: it.Stream, Count: elCount, Size: elSize, Self: elSize, Role: "…", pl: it.pl}
		out = append(out, kid{kind: ItemElided, size: elSize, item: el})
	}
	return out
}

// elided reports whether k, a child of an item of stream st, goes into its
// parent's "…" line instead of a line of its own.
func (k *kid) elided(st *StreamTree, opt Options) bool {
	// (a run the whole tree's sink folded is judged a row at a time:
	// runElided)
	small := opt.MinSize > 0 && k.size < opt.MinSize && k.kind != ItemRef && !k.folded(st)
	if !opt.All {
		if k.kind == ItemNode && k.scalar(st) && k.size < SmallScalar {
			small = true
		}
		if k.kind == ItemRef && k.scalar(st) {
			small = true
		}
	}
	if opt.MinSize > 0 && k.kind == ItemRef && opt.MinSize > 1 {
		small = small || k.scalar(st)
	}
	return small
}

// topWindow is how a walk shows a stream of many tops (a million discarded
// calls): shownKids' list of them would be a 32-byte kid each while the
// stream is open, so the walk lists them a window at a time from a
// topCursor instead, after one pass that counts the lines (the kids not
// elided, and the "…" line of the rest) and sums the elided. shownKids'
// other step, joining a run of references to one object into one line,
// never applies to tops: the only reference among them is the result's.
type topWindow struct {
	cur    topCursor
	opt    Options
	given  int32 // lines listed in the windows before the current one
	el     kid   // the "…" line (kind ItemElided), when some are elided
	elDone bool  // the "…" line has been listed
	buf    []kid
}

// lazyTops is the number of tops above which a walk lists a stream's tops
// through a topWindow, and topsWindow the window's size (variables for
// TestTopWindowIsShownKids).
var (
	lazyTops   = 4096
	topsWindow = 1024
)

// newTopWindow counts the lines a walk with opt shows for stream item it
// (their number, as len(shownKids(it, opt))) and lists the first window.
func (st *StreamTree) newTopWindow(it Item, opt Options) (*topWindow, []kid, int) {
	w := &topWindow{opt: opt, buf: make([]kid, 0, topsWindow)}
	var c topCursor
	n, elCount := 0, 0
	var elSize int64
	for k, ok := st.nextTopKid(&c); ok; k, ok = st.nextTopKid(&c) {
		if k.elided(st, opt) {
			elCount++
			elSize += k.size
			continue
		}
		n++
	}
	if elCount > 0 {
		n++
		w.el = kid{kind: ItemElided, size: elSize, item: &Item{Kind: ItemElided, Stream: st, Count: elCount, Size: elSize, Self: elSize, Role: "…", pl: it.pl}}
	}
	return w, st.fillTops(w), n
}

// fillTops lists the next window of w's lines; empty at the end.
func (st *StreamTree) fillTops(w *topWindow) []kid {
	out := w.buf[:0]
	for len(out) < cap(out) {
		k, ok := st.nextTopKid(&w.cur)
		if !ok {
			if w.el.kind == ItemElided && !w.elDone {
				w.elDone = true
				out = append(out, w.el)
			}
			break
		}
		if !k.elided(st, w.opt) {
			out = append(out, k)
		}
	}
	return out
}

// Walk visits the tree from start in display order, depth first, with an
// explicit stack. enter is called for every shown item, leave after its
// children. References are marked Cycle when they point to an item that is
// open on the current path.
//
// Memory is what is open: one small frame per level of the current path
// (no copy of its item unless leave needs it), the children still to be
// visited of each open item (a list of children is dropped when its last
// child is opened, so a chain a million levels deep holds one frame and
// one path link a level), and the path links of the open items.
func (t *Tree) Walk(start Item, opt Options, enter, leave func(v *Visit)) {
	t.walk(start, opt, enter, leave, leave != nil)
}

// walkFrame is one open item of a walk.
type walkFrame struct {
	kids  []kid       // children not yet opened; nil once the last was
	tops  *topWindow  // kids is a window of a stream's tops (nil: kids is all)
	st    *StreamTree // the item's stream (its kids' and, with id, its node's)
	pl    *pathLink   // the item's path, for its kids'
	i     int32       // next child
	n     int32       // children shown (Visit.Kids)
	depth int32
	lvl   int32 // levels of --depth used: wrappers (files, pickle parts, streams) use none
	id    int32 // the node marked open on the path; -1: none
	tail  int32 // closed ancestors (tail frames) that end with this frame
	trunc bool
}

// given is the number of f's kids listed before f.kids.
func (f *walkFrame) given() int32 {
	if f.tops == nil {
		return 0
	}
	return f.tops.given
}

// A tail frame is an open item whose last child has been opened (so it
// has nothing more to show): its frame is dropped, and what is left of it
// to do when that child's subtree ends (take it off the path, the leave
// callback) is kept as its node's ID (-1: not a node), 4 bytes. A chain of
// a million levels costs this and a path link per level (a million levels
// of objects, cost shape nest_newobj_build: 2 million tail frames, 16 MB
// when they kept their child count too for leave, which no caller read).

// tailStream says that the tail frames from index at up (to the next
// tailStream) are of stream st. A stream's nodes all share their stream,
// so a chain of a million levels keeps one, not a pointer a level (16 MB
// of pointers for the collector to scan on cost shape nest_newobj_build).
type tailStream struct {
	at int
	st *StreamTree
}

// stackPage: the walk's stacks grow by pages of this many entries, so that
// a deep walk does not copy (and leave behind as garbage) a whole stack
// each time it grows.
const stackPage = 4096

// pagedStack is a stack in pages. The first page starts at 64 entries and
// grows by append up to stackPage (as paged's, fast_depth.go): a walk of a
// small tree, the most common, no longer makes and clears 4096 frames
// (288 KB of walkFrames, 16 KB of tail frames) that it never uses.
type pagedStack[T any] struct {
	pages [][]T
	n     int
}

func (s *pagedStack[T]) push(f T) {
	p, i := s.n/stackPage, s.n%stackPage
	if p == len(s.pages) {
		c := stackPage
		if p == 0 {
			c = 64
		}
		s.pages = append(s.pages, make([]T, 0, c))
	}
	if i < len(s.pages[p]) {
		s.pages[p][i] = f // a slot of a page kept by pop
	} else {
		s.pages[p] = append(s.pages[p], f)
	}
	s.n++
}

func (s *pagedStack[T]) top() *T { return &s.pages[(s.n-1)/stackPage][(s.n-1)%stackPage] }

func (s *pagedStack[T]) pop() T {
	f := s.top()
	v := *f
	var zero T
	*f = zero
	s.n--
	if p := s.n/stackPage + 2; p < len(s.pages) {
		// keep one spare page, give back the rest
		s.pages[p] = nil
		s.pages = s.pages[:p]
	}
	return v
}

// walkStacks are the stacks of a walk, kept by the Tree for its next one
// (empty: every frame a walk pushes, it pops).
type walkStacks struct {
	stack pagedStack[walkFrame]
	tails pagedStack[int32] // the tail frames
	tsts  []tailStream      // the streams of tails' frames
	last  []bool
	v, lv Visit // what the callbacks get (they keep no pointer to it)
}

// walk is Walk; keepItem says whether leave needs the whole item (when
// false, leave sees only Depth and Last, and frames whose last child is
// open are folded into tail frames).
func (t *Tree) walk(start Item, opt Options, enter, leave func(v *Visit), keepItem bool) {
	// the stacks of the last walk, when it is done (EachWhole walks each of
	// a million streams: a walk's first pages and last flags are made once)
	ws := t.spareWalk
	if ws == nil {
		ws = &walkStacks{last: []bool{}}
	}
	t.spareWalk = nil
	defer func() { ws.v, ws.lv = Visit{}, Visit{}; t.spareWalk = ws }() // (keeping no stream alive)
	stack, tails, last := &ws.stack, &ws.tails, ws.last[:0]
	stack.n, tails.n = 0, 0
	tsts := ws.tsts[:0]
	defer func() { ws.last, ws.tsts = last, tsts[:0] }()
	var items []Item       // the open items, kept only for leave callbacks that need them
	v, lv := &ws.v, &ws.lv // one each: what the callbacks get is not kept
	open := func(it Item, depth int, isLast bool, tail int32, lvl int32) {
		if it.Kind == ItemRef {
			it.Cycle = it.Stream.onPathGet(it.Node)
		}
		if depth > 0 {
			// (doubled: append grows a long slice by a quarter, which left
			// 8 MB behind down a million levels)
			last = append(grow.Room(last[:depth-1], 1), isLast)
		}
		*v = Visit{Item: it, Depth: depth, Last: last[:max(depth, 0)]}
		var kids []kid
		var tops *topWindow
		nkids := 0
		if it.Kind != ItemRef && it.Kind != ItemElided {
			switch {
			case opt.Depth >= 0 && int(lvl) >= opt.Depth:
				v.Truncated = t.hasChildren(it)
			case it.Kind == ItemStream && !opt.SortSize && len(it.Stream.Store.Tops) > lazyTops:
				tops, kids, nkids = it.Stream.newTopWindow(it, opt)
			default:
				kids = t.shownKids(it, opt)
				nkids = len(kids)
			}
		}
		v.Kids = nkids
		if enter != nil {
			enter(v)
		}
		f := walkFrame{kids: kids, tops: tops, st: it.Stream, n: int32(nkids), depth: int32(depth), lvl: lvl, trunc: v.Truncated, id: -1, tail: tail}
		if nkids > 0 {
			f.pl = it.pl
		}
		if it.Kind == ItemNode {
			it.Stream.onPathSet(it.Node, true)
			f.id = int32(it.Node)
		}
		if keepItem {
			items = append(items, it)
		}
		stack.push(f)
	}
	open(start, opt.base, opt.base == 0 || opt.baseLast, 0, 0)
	for stack.n > 0 {
		f := stack.top()
		if f.tops != nil && int(f.i) == len(f.kids) && f.tops.given+f.i < f.n {
			// the next window of a stream's tops
			f.tops.given += f.i
			f.kids, f.i = f.st.fillTops(f.tops), 0
		}
		if int(f.i) < len(f.kids) {
			var k Item
			if opt.noPaths && f.kids[f.i].item == nil {
				k = f.kids[f.i].openNoPath(f.st)
			} else {
				k = f.kids[f.i].open(f.st, f.pl)
			}
			f.i++
			isLast := f.given()+f.i == f.n
			d := int(f.depth) + 1
			lvl := f.lvl
			if !wrapper(k) {
				lvl++
			}
			if isLast && !keepItem {
				// nothing more to open here: fold the frame into a tail
				fr := stack.pop()
				t.putKids(fr.kids)
				if len(tsts) == 0 || tsts[len(tsts)-1].st != fr.st {
					tsts = append(tsts, tailStream{at: tails.n, st: fr.st})
				}
				tails.push(fr.id)
				open(k, d, true, fr.tail+1, lvl)
				continue
			}
			if isLast {
				t.putKids(f.kids)
				f.kids = nil // let them go
			}
			open(k, d, isLast, 0, lvl) // (f is invalid after this)
			continue
		}
		fr := stack.pop()
		t.putKids(fr.kids)
		if fr.id >= 0 {
			fr.st.onPathSet(pickle.ID(fr.id), false)
		}
		var it Item
		if keepItem {
			it = items[len(items)-1]
			items[len(items)-1] = Item{}
			items = items[:len(items)-1]
		}
		if leave != nil {
			*lv = Visit{Item: it, Depth: int(fr.depth), Last: last[:max(int(fr.depth), 0)], Kids: int(fr.n), Truncated: fr.trunc}
			leave(lv)
		}
		for d := int(fr.depth) - 1; fr.tail > 0; d-- {
			fr.tail--
			id := tails.pop()
			ts := tsts[len(tsts)-1]
			if ts.at == tails.n {
				tsts[len(tsts)-1] = tailStream{}
				tsts = tsts[:len(tsts)-1]
			}
			if id >= 0 {
				ts.st.onPathSet(pickle.ID(id), false)
			}
			if leave != nil {
				*lv = Visit{Depth: d, Last: last[:max(d, 0)]}
				leave(lv)
			}
		}
	}
}

// wrapper says whether an item only wraps objects (the input file, a
// pickle part of a container, a stream): --depth counts no level for it,
// so --depth 2 on a .gz or a .pt shows objects as on a bare pickle.
func wrapper(it Item) bool {
	switch it.Kind {
	case ItemFile, ItemStream:
		return true
	case ItemPart:
		return it.part != nil && it.part.pickle != nil
	}
	return false
}

func (st *StreamTree) onPathSet(id pickle.ID, v bool) {
	if st.onPath == nil {
		st.onPath = make([]bool, st.Store.Len())
	}
	st.onPath[id] = v
}

func (st *StreamTree) onPathGet(id pickle.ID) bool {
	return st.onPath != nil && st.onPath[id]
}

// hasChildren reports whether it has any display child, without building them.
func (t *Tree) hasChildren(it Item) bool {
	switch it.Kind {
	case ItemFile, ItemStream:
		return true
	case ItemNode:
		n, s := it.Node, it.Stream.Store
		return s.NItems(n) > 0 || s.Func(n) != pickle.NoID || s.NMuts(n) > 0 || len(it.Stream.attach[n]) > 0
	case ItemPart:
		return it.part.pickle != nil
	}
	return false
}

// Top returns the n largest objects (inclusive size), largest first, ties in
// stream order.
func (t *Tree) Top(n int) []Item {
	if n <= 0 {
		return nil
	}
	if t.fast != nil && t.fast.n == n && t.fast.leaves == t.Leaves {
		return append([]Item(nil), t.fast.items...)
	}
	type ent struct {
		size  int64
		s, id int32
	}
	// a min-heap of the n best so far
	h := make([]ent, 0, n)
	less := func(a, b ent) bool { // a worse than b
		if a.size != b.size {
			return a.size < b.size
		}
		if a.s != b.s {
			return a.s > b.s
		}
		return a.id > b.id
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				m = r
			}
			if !less(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	up := func(i int) {
		for i > 0 {
			p := (i - 1) / 2
			if !less(h[i], h[p]) {
				return
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	for si, st := range t.Streams {
		var keys []bool
		if t.Leaves {
			keys = st.foldedKeys()
		}
		for id := range st.incl.len() {
			sz := st.incl.at(pickle.ID(id))
			if t.Leaves && (st.ownsAny(pickle.ID(id)) || len(st.attach[pickle.ID(id)]) > 0 || keys[id]) {
				continue
			}
			e := ent{sz, int32(si), int32(id)}
			if len(h) < n {
				h = append(h, e)
				up(len(h) - 1)
			} else if less(h[0], e) {
				h[0] = e
				down(0)
			}
		}
	}
	sort.Slice(h, func(i, j int) bool { return less(h[j], h[i]) })
	out := make([]Item, 0, len(h))
	for _, e := range h {
		st := t.Streams[e.s]
		nd := pickle.ID(e.id)
		it := st.nodeItem(nd, "", link(nil, t.PathOf(st, nd)))
		out = append(out, it)
	}
	// a container's raw parts that no object holds (a .npy array, an
	// unreferenced storage) compete too
	var raw []Item
	for _, it := range t.top {
		if it.part.idx >= 0 && it.part.pickle == nil {
			raw = append(raw, it)
		}
	}
	if len(raw) > 0 {
		out = append(out, raw...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Size > out[j].Size })
		if len(out) > n {
			out = out[:n]
		}
	}
	return out
}

// ParseSize reads a size such as 512, 10K, 10KiB, 1.5M, 1MiB, 2G (K/Ki/KiB
// are 1024, KB is 1000; likewise M, G, T).
func ParseSize(s string) (int64, error) {
	orig := s
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q (use e.g. 512, 10K, 1MiB)", orig)
	}
	mult := 1.0
	u := strings.ToUpper(unit)
	if u != "" && u != "B" {
		p := strings.IndexByte("KMGTP", u[0])
		if p < 0 {
			return 0, fmt.Errorf("bad size unit in %q (use B, K, KiB, KB, M, MiB, MB, G, ...)", orig)
		}
		rest := strings.TrimLeftFunc(u[1:], unicode.IsSpace)
		base := 1024.0
		switch rest {
		case "", "I", "IB":
		case "B":
			base = 1000
		default:
			return 0, fmt.Errorf("bad size unit in %q", orig)
		}
		for k := 0; k <= p; k++ {
			mult *= base
		}
	}
	r := v * mult
	if r > 1<<62 {
		return 0, fmt.Errorf("size %q too large", orig)
	}
	return int64(r), nil
}

// Human renders a byte count: "96 B", "1.5 KiB", "225.7 MiB".
func Human(n int64) string { return string(appendHuman(nil, n)) }

func appendHuman(b []byte, n int64) []byte {
	if n < 1024 {
		return append(strconv.AppendInt(b, n, 10), " B"...)
	}
	if n < 1<<53 {
		// n/1024^k is exact in a float64, and AppendFloat(f, 'f', 1)
		// rounds its exact value to tenths, halves to even: that, in
		// integers (a tree's lines format two sizes each)
		s := uint(10)
		for _, u := range [...]string{"KiB", "MiB", "GiB", "TiB"} {
			if n < 1<<(s+10) {
				return append(append(appendTenths(b, uint64(n), s), ' '), u...)
			}
			s += 10
		}
		return append(appendTenths(b, uint64(n), s), " PiB"...)
	}
	f := float64(n)
	for _, u := range [...]string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= 1024
		if f < 1024 || u == "PiB" {
			return append(append(strconv.AppendFloat(b, f, 'f', 1, 64), ' '), u...)
		}
	}
	return append(strconv.AppendInt(b, n, 10), " B"...)
}

// appendTenths appends x/2^s (x < 2^57, 1 <= s <= 63) as
// strconv.AppendFloat(b, x/2^s, 'f', 1, 64) does: rounded to tenths, an
// exact half to even.
func appendTenths(b []byte, x uint64, s uint) []byte {
	x *= 10
	q, r, half := x>>s, x&(1<<s-1), uint64(1)<<(s-1)
	if r > half || r == half && q&1 == 1 {
		q++
	}
	return append(append(strconv.AppendUint(b, q/10, 10), '.'), byte('0'+q%10))
}

// IsScalar reports whether node n of s is shown as a leaf value.
func IsScalar(s *pickle.Store, n pickle.ID) bool { return isScalar(s, n) }
