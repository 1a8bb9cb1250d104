// Package trace owns pk trace: the sized object tree of a pickle. It turns
// the byte attribution of pkg/pickle (every byte of a stream belongs to
// exactly one node, Node.Self, or to the stream, Stream.Self; Node.Owner is
// the node that consumed a node where it was built) into inclusive sizes,
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
package trace

import (
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Tree is the sized view of one parsed input.
type Tree struct {
	File    *pickle.File
	Total   int64 // bytes of the input: the root's size
	Streams []*StreamTree
	// Doc is the opened container when the tree was made by NewDoc from
	// anything but a bare pickle (doc.go); nil otherwise.
	Doc   *input.Doc
	top   []Item                         // the container's parts (Doc set)
	parts [][]*StreamTree                // the streams of each pickle part, by Doc.Parts index
	stOf  map[*pickle.Stream]*StreamTree // (Doc set)
	fast  *fastTop                       // --top computed by the fast path (fast.go)
	bnd   *boundedView                   // the bounded view computed by the fast path (fast.go)
	// Leaves makes Top list only objects that hold no other (--top --leaves).
	Leaves bool
}

// StreamTree holds the sizes of one pickle stream.
type StreamTree struct {
	S *pickle.Stream
	// Incl is the inclusive size of every node, indexed by Node.ID: its
	// Self plus the inclusive sizes of the nodes it owns.
	Incl []int64
	// Owned lists, for node i, the IDs of the nodes it owns:
	// owned[ownStart[i]:ownStart[i+1]].
	ownStart []int32
	owned    []int32
	// Orphans are nodes that neither have an owner nor are among the
	// stream's tops (pkg/pickle should leave none; they are shown under the
	// stream so that sizes still add up).
	Orphans []*pickle.Node
	popped  map[int32]bool
	topKind []uint8 // role of each top by node ID (topRole; made when first needed)
	topIdx  []int32
	mark    *marker                // scratch for children(): which nodes a parent already expanded (made when first needed)
	fmark   *marker                // scratch for folded()
	onPath  []bool                 // scratch for walks: is this node an open ancestor
	extra   map[int32]*pickle.Node // cloudpickle setstate states by target

	// Container views (doc.go); zero for a bare pickle.
	prefix  string                 // path prefix of the stream's tops ("", "s1:")
	add     map[int32]int64        // bytes outside the stream counted in a node (torch storages)
	outside int64                  // the sum of add
	inSelf  map[int32]int64        // bytes of a node's Self shown as attached parts (joblib arrays)
	attach  map[int32][]attachment // parts shown under a node
	up      *StreamTree            // for a pickle nested in another stream: where
	upNode  *pickle.Node
	doc     *input.Doc
	tree    *Tree
}

// New computes the sizes of every node of f.
func New(f *pickle.File) *Tree {
	t := &Tree{File: f, Total: f.Size}
	for i, s := range f.Streams {
		st := newStream(s, nil)
		if i > 0 {
			st.prefix = streamPrefix(i)
		}
		st.tree = t
		t.Streams = append(t.Streams, st)
	}
	return t
}

// newStream sizes the nodes of s; add holds bytes from outside the stream
// that count in a node (nil: none).
func newStream(s *pickle.Stream, add map[int32]int64) *StreamTree {
	n := len(s.All)
	st := &StreamTree{S: s, Incl: make([]int64, n), ownStart: make([]int32, n+1), add: add}
	// Counting sort of the ownership edges into a CSR array.
	for _, x := range s.All {
		if x.Owner != nil {
			st.ownStart[x.Owner.ID+1]++
		}
	}
	for i := 1; i <= n; i++ {
		st.ownStart[i] += st.ownStart[i-1]
	}
	st.owned = make([]int32, st.ownStart[n])
	// fill with ownStart[o] as o's cursor (it ends at o+1's start), then
	// shift the starts back: no cursor array
	for _, x := range s.All {
		if o := x.Owner; o != nil {
			st.owned[st.ownStart[o.ID]] = x.ID
			st.ownStart[o.ID]++
		}
	}
	for i := n; i > 0; i-- {
		st.ownStart[i] = st.ownStart[i-1]
	}
	st.ownStart[0] = 0
	// Post-order from the tops with an explicit stack; done[] guards
	// against any malformed ownership (a node is summed once).
	done := make([]uint8, n) // 0 new, 1 open, 2 done
	var stack []int32
	sum := func(root int32) {
		if done[root] != 0 {
			return
		}
		stack = append(stack[:0], root)
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
			v := s.All[id].Self + add[id]
			for _, c := range st.owned[st.ownStart[id]:st.ownStart[id+1]] {
				if done[c] == 2 {
					v += st.Incl[c]
				}
			}
			st.Incl[id] = v
			done[id] = 2
		}
	}
	for _, x := range s.Tops {
		sum(x.ID)
	}
	for _, x := range s.All {
		if done[x.ID] == 0 {
			// unreachable from the tops: show it under the stream
			st.Orphans = append(st.Orphans, x)
			sum(x.ID)
		}
	}
	if len(s.Popped) > 0 {
		st.popped = make(map[int32]bool, len(s.Popped))
	}
	for _, x := range s.Popped {
		st.popped[x.ID] = true
	}
	return st
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
	Node    *pickle.Node // ItemNode, ItemRef
	Role    string       // the path segment under its parent: "root", "['key']", "[3]", ".args", ...
	pl      *pathLink    // the Python-style path from the stream's tops, built on demand by Path()
	Size    int64        // inclusive bytes (0 for references)
	Self    int64        // bytes on this line that are in no shown child (the node's own bytes plus folded dict keys and name parts)
	Cycle   bool         // a reference to an object that contains it
	Count   int          // ItemElided: how many children; ItemRef: how many consecutive references to the same object (0 or 1: one)
	RoleEnd string       // ItemRef with Count > 1: the role of the last one
	Index   int          // ItemStream: stream index
	Depth   int          // set by walks
	part    *partItem    // ItemPart
	rest    bool         // ItemElided: the aggregate line of a bounded view ("N more items, SIZE, AVG each")
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
	if len(t.Streams) == 1 && t.File.Trailing == nil {
		return t.streamItem(0)
	}
	var self int64 = t.Total
	for _, s := range t.Streams {
		self -= s.S.Len()
	}
	if t.File.Trailing != nil {
		self -= t.File.Trailing.Len
	}
	return Item{Kind: ItemFile, Size: t.Total, Self: self, Role: t.File.Name}
}

func (t *Tree) streamItem(i int) Item {
	s := t.Streams[i]
	return Item{Kind: ItemStream, Stream: s, Index: s.S.Index, Size: s.S.Len(), Self: s.S.Self, pl: link(nil, s.prefix), Role: s.prefix}
}

func streamPrefix(i int) string {
	return "s" + itoa(int64(i)) + ":"
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
			out = append(out, Item{Kind: ItemTrailing, Size: tr.Len, Self: tr.Len, Role: "trailing", pl: link(nil, "trailing")})
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
	s := st.S
	var out []Item
	np, nl := 0, 0
	rootShown := false
	for _, x := range s.Tops {
		role := ""
		switch {
		case x == s.Root && !rootShown:
			role = "root"
			rootShown = true
		case st.popped[x.ID]:
			role = "popped[" + itoa(int64(np)) + "]"
			np++
		default:
			role = "leftover[" + itoa(int64(nl)) + "]"
			nl++
		}
		out = append(out, st.nodeItem(x, role, link(prefix, role)))
	}
	if !rootShown && s.Root != nil {
		// the result is a reference to an object built elsewhere
		out = append(out, Item{Kind: ItemRef, Stream: st, Node: s.Root, Role: "root", pl: link(prefix, "root")})
	}
	for i, x := range st.Orphans {
		role := "orphan[" + itoa(int64(i)) + "]"
		out = append(out, st.nodeItem(x, role, link(prefix, role)))
	}
	return out
}

func (st *StreamTree) nodeItem(n *pickle.Node, role string, path *pathLink) Item {
	return Item{Kind: ItemNode, Stream: st, Node: n, Role: role, pl: path, Size: st.Incl[n.ID], Self: n.Self + st.folded(n) - st.inSelf[n.ID]}
}

// isScalar: kinds shown as leaves.
func isScalar(n *pickle.Node) bool {
	switch n.Kind {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
		return true
	}
	return false
}

// folded returns the bytes of the children of n that are not shown on
// lines of their own: scalar dict keys (the key is the child's label) and
// the module/name strings of a STACK_GLOBAL.
func (st *StreamTree) folded(n *pickle.Node) int64 {
	if n.Kind != pickle.KindDict && n.Kind != pickle.KindGlobal && len(n.Muts()) == 0 {
		return 0
	}
	var v int64
	if st.fmark == nil {
		st.fmark = &marker{}
	}
	m := st.fmark
	m.next(len(st.S.All))
	eachChild(n, func(c *pickle.Node, r role, folded bool) bool {
		if folded && c.Owner == n && !m.has(c.ID) {
			m.add(c.ID)
			v += st.Incl[c.ID]
		}
		return true
	})
	return v
}

// roleKind says how a child sits in its parent.
type roleKind uint8

const (
	rIndex  roleKind = iota // [i]
	rKey                    // [key] (k is the scalar key)
	rKeyObj                 // <key i>: a key that is not a scalar, shown as a child
	rKeyVal                 // [<key i>]
	rSet                    // {i}
	rFunc                   // .func
	rArgs                   // .args
	rKwargs                 // .kwargs
	rState                  // .state, .state2, ...
	rName                   // .name[i]
	rPid                    // .pid
	rOwned                  // .owned#id
)

type role struct {
	kind roleKind
	i    int
	k    *pickle.Node
}

func (r role) String() string {
	switch r.kind {
	case rIndex:
		return "[" + itoa(int64(r.i)) + "]"
	case rKey:
		return "[" + keyRepr(r.k) + "]"
	case rKeyObj:
		return "<key " + itoa(int64(r.i)) + ">"
	case rKeyVal:
		return "[<key " + itoa(int64(r.i)) + ">]"
	case rSet:
		return "{" + itoa(int64(r.i)) + "}"
	case rFunc:
		return ".func"
	case rArgs:
		return ".args"
	case rKwargs:
		return ".kwargs"
	case rState:
		if r.i == 0 {
			return ".state"
		}
		return ".state" + itoa(int64(r.i+1))
	case rName:
		return ".name[" + itoa(int64(r.i)) + "]"
	case rPid:
		return ".pid"
	}
	return ".owned#" + itoa(int64(r.i))
}

// eachChild calls fn for every logical child of n in order (items, call
// parts, mutation arguments), with its role; folded is true for the scalar
// dict keys and global name parts that n owns and that are shown on n's
// line when n owns them (they are skipped otherwise). fn returns false to stop.
func eachChild(n *pickle.Node, fn func(c *pickle.Node, r role, folded bool) bool) bool {
	pairs := func(items []*pickle.Node, base int) bool {
		for i := 0; i+1 < len(items); i += 2 {
			k, v := items[i], items[i+1]
			if isScalar(k) {
				if !fn(k, role{kind: rKey, k: k}, true) || !fn(v, role{kind: rKey, k: k}, false) {
					return false
				}
				continue
			}
			j := base + i/2
			if !fn(k, role{kind: rKeyObj, i: j}, false) || !fn(v, role{kind: rKeyVal, i: j}, false) {
				return false
			}
		}
		return true
	}
	switch n.Kind {
	case pickle.KindDict:
		if !pairs(n.Items, 0) {
			return false
		}
	case pickle.KindSet, pickle.KindFrozenSet:
		for i, c := range n.Items {
			if !fn(c, role{kind: rSet, i: i}, false) {
				return false
			}
		}
	case pickle.KindGlobal:
		for i, c := range n.Items {
			if !fn(c, role{kind: rName, i: i}, isScalar(c)) {
				return false
			}
		}
	case pickle.KindPersID:
		for _, c := range n.Items {
			if !fn(c, role{kind: rPid}, false) {
				return false
			}
		}
	default:
		for i, c := range n.Items {
			if !fn(c, role{kind: rIndex, i: i}, false) {
				return false
			}
		}
	}
	x := n.X
	if x == nil {
		return true
	}
	if x.Func != nil && !fn(x.Func, role{kind: rFunc}, false) {
		return false
	}
	if x.Args != nil && !fn(x.Args, role{kind: rArgs}, false) {
		return false
	}
	if x.Kwargs != nil && !fn(x.Kwargs, role{kind: rKwargs}, false) {
		return false
	}
	nb, na, nk := 0, len(n.Items), 0
	for _, m := range x.Muts {
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

// marker marks nodes for one pass at a time: a bit a node, and the list of
// the nodes marked, which next clears (so a pass costs what it marks, and
// the marker an eighth of a byte a node).
type marker struct {
	bits []uint64
	set  []int32
}

// next starts a pass over a stream of n nodes.
func (m *marker) next(n int) {
	if m.bits == nil {
		m.bits = make([]uint64, (n+63)/64)
	}
	for _, id := range m.set {
		m.bits[id>>6] &^= 1 << (id & 63)
	}
	m.set = m.set[:0]
}

func (m *marker) has(id int32) bool { return m.bits[id>>6]&(1<<(id&63)) != 0 }

func (m *marker) add(id int32) {
	m.bits[id>>6] |= 1 << (id & 63)
	m.set = append(m.set, id)
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
	n := it.Node
	m := st.marks()
	m.next(len(st.S.All))
	var out []Item
	eachChild(n, func(c *pickle.Node, r role, folded bool) bool {
		own := c.Owner == n && !m.has(c.ID)
		if own {
			m.add(c.ID)
		}
		if folded {
			return true
		}
		rs := r.String()
		if own {
			out = append(out, st.nodeItem(c, rs, link(it.pl, rs)))
		} else {
			out = append(out, Item{Kind: ItemRef, Stream: st, Node: c, Role: rs, pl: link(it.pl, rs)})
		}
		return true
	})
	// Owned nodes that are none of the above (should not happen).
	for _, c := range st.owned[st.ownStart[n.ID]:st.ownStart[n.ID+1]] {
		if !m.has(c) {
			m.add(c)
			rs := role{kind: rOwned, i: int(c)}.String()
			out = append(out, st.nodeItem(st.S.All[c], rs, link(it.pl, rs)))
		}
	}
	return out
}

// roleIn returns the role under which owner expands c.
func (st *StreamTree) roleIn(owner, c *pickle.Node) string {
	found := ""
	eachChild(owner, func(x *pickle.Node, r role, folded bool) bool {
		if x == c {
			found = r.String()
			return false
		}
		return true
	})
	if found == "" {
		found = role{kind: rOwned, i: int(c.ID)}.String()
	}
	return found
}

// PathOf returns the Python-style path of a node (where it was built).
func (t *Tree) PathOf(st *StreamTree, n *pickle.Node) string {
	var parts []string
	for x := n; x != nil; x = x.Owner {
		if x.Owner == nil {
			parts = append(parts, st.topRole(x))
			break
		}
		parts = append(parts, st.roleIn(x.Owner, x))
		if len(parts) > len(st.S.All) { // malformed ownership: stop
			break
		}
	}
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

// topRole is the role topItems gives x ("root", "popped[3]", ...), or "?"
// when x is not one of the stream's tops. The roles of all tops are indexed
// once (5 bytes a node), so that a path per --top line does not list every
// top again (a million discarded calls made --top 20 take 17 s).
func (st *StreamTree) topRole(x *pickle.Node) string {
	if st.topKind == nil {
		st.indexTopRoles()
	}
	if int(x.ID) >= len(st.topKind) {
		return "?"
	}
	i := int64(st.topIdx[x.ID])
	switch st.topKind[x.ID] {
	case topIsRoot:
		return "root"
	case topIsPopped:
		return "popped[" + itoa(i) + "]"
	case topIsLeftover:
		return "leftover[" + itoa(i) + "]"
	case topIsOrphan:
		return "orphan[" + itoa(i) + "]"
	}
	return "?"
}

const (
	topNone uint8 = iota
	topIsRoot
	topIsPopped
	topIsLeftover
	topIsOrphan
)

// indexTopRoles numbers the tops as topItems does; a node listed twice
// keeps its first role.
func (st *StreamTree) indexTopRoles() {
	s := st.S
	st.topKind = make([]uint8, len(s.All))
	st.topIdx = make([]int32, len(s.All))
	set := func(x *pickle.Node, k uint8, i int) {
		if int(x.ID) < len(st.topKind) && st.topKind[x.ID] == topNone {
			st.topKind[x.ID], st.topIdx[x.ID] = k, int32(i)
		}
	}
	np, nl := 0, 0
	rootShown := false
	for _, x := range s.Tops {
		switch {
		case x == s.Root && !rootShown:
			set(x, topIsRoot, 0)
			rootShown = true
		case st.popped[x.ID]:
			set(x, topIsPopped, np)
			np++
		default:
			set(x, topIsLeftover, nl)
			nl++
		}
	}
	for i, x := range st.Orphans {
		set(x, topIsOrphan, i)
	}
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
