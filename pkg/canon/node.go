package canon

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Node is one node of a normalised view, built on demand. The same object
// of the graph is always the same *Node within one View, so pointer
// equality is object identity (aliasing); Path is the path by which the
// node was first reached from the root (or from an effect).
type Node struct {
	v      *View
	src    pickle.ID // the canonical (resolved) node
	parent *Node
	edge   edge
}

// edge is how a node was first reached from its parent, kept as a few
// numbers and written out only when Path asks (a view hands out many more
// nodes than anyone prints paths of).
type edge struct {
	kind uint8
	i, j int32     // item, entry, operation or argument index; j < 0: a single argument
	key  pickle.ID // edgeKeyOf, edgeValOf: the entry's key
}

const (
	edgeRoot uint8 = iota
	edgeEffect
	edgeSet    // {i}
	edgeList   // [i]
	edgeKeyOf  // .__key__[label]
	edgeValOf  // [label]
	edgeCall   // .__reduce__[i]
	edgeState  // .__state__[j]
	edgeOpArgs // .__ops__[i][j]
)

// text writes the edge as Path shows it (pkg/path's spelling); parent is
// the node it leads from.
func (e edge) text(v *View, parent *Node, b *strings.Builder) {
	switch e.kind {
	case edgeRoot:
		b.WriteString(ppath.Root)
	case edgeEffect:
		b.WriteString(ppath.Root + ppath.Pseudo("effect", int(e.i)))
	case edgeSet:
		b.WriteString(ppath.SetPos(int(e.i)))
	case edgeList:
		b.WriteString(ppath.Index(int(e.i)))
	case edgeKeyOf:
		b.WriteString(ppath.Pseudo("key", int(e.i)))
	case edgeValOf:
		b.WriteString(keyLabel(v, e.key, int(e.i)))
	case edgeCall:
		if parent != nil {
			b.WriteString(callStep(v, parent.src, int(e.i)))
		}
	case edgeState:
		b.WriteString(ppath.State)
		if e.j >= 0 {
			b.WriteString(ppath.Index(int(e.j)))
		}
	case edgeOpArgs:
		if parent != nil {
			j := int(e.j)
			if j < 0 {
				j = 0
			}
			b.WriteString(opStep(v, v.ops(parent.src), int(e.i), j))
		}
	}
}

// Entry is one dict entry, or one key/value argument pair of a setitems
// operation. Pos is the entry's place in the pickle (the pair index among
// the dict's items, or among the merged setitems' pairs; of the pair whose
// value is kept when keys repeat): the number of its path [<key i>] when
// the key is no literal, in every command.
type Entry struct {
	Key, Value *Node
	Pos        int
}

// Op is one operation applied to an object after its creation, in the
// canonical form: "build" (BUILD state), "append" (APPEND/APPENDS merged:
// items), "setitems" (SETITEM/SETITEMS merged: key, value, ...), "add"
// (ADDITEMS: items), or a folded producer call ("_function_setstate",
// "_class_setstate": the state; "setattr": name, value).
type Op struct {
	Name   string
	Offset int64
	Args   []*Node
}

func (v *View) wrap(n pickle.ID, parent *Node, edge edge) *Node {
	if n < 0 {
		return nil
	}
	n = v.res(n)
	if v.fresh {
		if v.loose {
			return v.looseNode(n, edge)
		}
		return &Node{v: v, src: n, parent: parent, edge: edge}
	}
	if v.vn == nil {
		v.vn = make([]*Node, v.nsyn)
	}
	if w := v.vn[n]; w != nil {
		return w
	}
	w := &Node{v: v, src: n, parent: parent, edge: edge}
	v.vn[n] = w
	return w
}

// looseNode is wrap's node of n in loose mode (SetLooseNodes): the one
// made last for n when it is still among the recent ones (a list holding
// one object a million times makes one node for its items, not a million),
// else a new one.
func (v *View) looseNode(n pickle.ID, e edge) *Node {
	if v.looseRecent == nil {
		v.looseRecent = make([]*Node, 256)
	}
	at := &v.looseRecent[int(n)&(len(v.looseRecent)-1)]
	if w := *at; w != nil && w.src == n {
		return w
	}
	if len(v.looseSlab) == 0 {
		v.looseSlab = make([]Node, looseSlab)
	}
	w := &v.looseSlab[0]
	v.looseSlab = v.looseSlab[1:]
	*w = Node{v: v, src: n, edge: e}
	*at = w
	return w
}

// looseSlab is how many loose nodes a view allocates at once. pk diff's
// walk makes a node for every item it compares and lets it go once it has
// compared it (its pending tasks hold IDs): one allocation a node was 5.6
// million of 48 bytes a side down a million nested calls, 0.2 s of
// malloc (nest_reduce diff changed). A node kept keeps its slab (6 KiB):
// the walk keeps none but looseRecent's.
const looseSlab = 128

// Root returns the node pickle.load returns.
func (v *View) Root() *Node { return v.wrap(v.s.Root, nil, edge{kind: edgeRoot}) }

// EffectNodes returns the nodes of the effects (see Effects), in order;
// their paths read root<effect i>, i the effect's index in the stream's
// call log (EffectIndex).
func (v *View) EffectNodes() []*Node {
	v.Root()
	idx := v.effectIndexes()
	if len(idx) == 0 {
		return nil
	}
	out := make([]*Node, 0, len(idx))
	for _, i := range idx {
		out = append(out, v.wrap(v.s.Event(i).Node, nil, edge{kind: edgeEffect, i: int32(i)}))
	}
	return out
}

// EffectPlaces returns the places in the stream's call log of the effects
// (see Effects), in order: the i of their paths root<effect i>, as
// EffectNodes numbers them. EffectNode and EffectRef give one's node when
// it is asked for: a million discarded calls need no million nodes.
func (v *View) EffectPlaces() []int {
	v.Root()
	return v.effectIndexes()
}

// EffectNode returns the node of the effect at place i of the call log
// (one of EffectPlaces), as EffectNodes makes it. A view of loose nodes
// (SetLooseNodes) makes a new one, whatever node of the same object it
// handed out last.
func (v *View) EffectNode(i int) *Node {
	e := edge{kind: edgeEffect, i: int32(i)}
	if v.fresh && v.loose {
		return &Node{v: v, src: v.res(v.s.Event(i).Node), edge: e}
	}
	return v.wrap(v.s.Event(i).Node, nil, e)
}

// EffectRef is EffectNode as a Ref.
func (v *View) EffectRef(i int) Ref { return v.ref(v.s.Event(i).Node) }

// EffectIndex returns the number of effect n (one of EffectNodes) in its
// path root<effect i>: the index of the effect in the stream's call log
// (pickle.Store.Event: every call, global resolution, persistent load and
// mutation loading performs, in stream order), so that the number is the
// same in every form and pk trace finds it without a canonical view; -1
// for a node that is no effect.
func (n *Node) EffectIndex() int {
	if n.edge.kind != edgeEffect {
		return -1
	}
	return int(n.edge.i)
}

// Store returns the stream's store: the nodes a Node's StreamID names.
func (v *View) Store() *pickle.Store { return v.s }

// ID identifies the node within its view: the ID in the stream's store
// (see StreamID), or an ID after the stream's for a node a rule built.
// Every ID is less than the number of nodes the view holds.
func (n *Node) ID() pickle.ID { return n.src }

// StreamID returns the node's ID in the view's Store, and false for a node
// a rule built (it is not in the stream).
func (n *Node) StreamID() (pickle.ID, bool) { return n.src, n.src < n.v.base }

// Kind is the canonical kind (pickle kinds, KindPlaceholder, KindTracker).
func (n *Node) Kind() pickle.Kind { return n.v.kind(n.src) }

// Flags are the node's pickle.Flags (of the node a rule rewrote, for a
// rewritten call or dict; none for other nodes rules built).
func (n *Node) Flags() pickle.Flags { return n.v.flags(n.src) }

// NItems is the number of items the node holds in the stream: of a list,
// tuple, set (before deduplication), persistent id or dynamic global; a
// dict's keys and values both count.
func (n *Node) NItems() int { return n.v.nitems(n.src) }

// IsBig reports whether an int does not fit int64.
func (n *Node) IsBig() bool { return n.v.isBig(n.src) }

// Owned is the number of stream bytes attributed to the subtree the node
// owns (pickle.Store.Self over the ownership tree: what building it took;
// shared objects count where they were built). A node a rule built owns
// nothing.
func (n *Node) Owned() int64 {
	if n.src >= n.v.base {
		return 0
	}
	return n.v.s.Owned(n.src)
}

// Offset is the offset of the opcode that created the node (for a node a
// rule built, of the node it replaces).
func (n *Node) Offset() int64 { return n.v.offset(n.src) }

// Pure reports whether the node is encoded by value (immutable, no
// operations applied); other nodes are objects with an identity.
func (n *Node) Pure() bool { return n.v.isPure(n.src) }

// Digest is the canonical digest of the subtree at n, computed in a context
// of its own: two nodes (of the same or different views with the same
// options) have equal digests exactly when their canonical subtrees are
// equal. For a pure node it is H(its embedded encoding).
func (n *Node) Digest() []byte {
	v := n.v
	if n.Pure() {
		return v.Opt.Algo.sum(nil, v.appendPure(nil, n.src))
	}
	return v.isoDigest(n.src)
}

// Path returns a Python-style path from the root: [i] for list and tuple
// items, [key] for dict values (the key's repr when it is a scalar, else
// <key i>), {i} for set items (index in canonical order), .__reduce__[0/1/2]
// for a call's callable/arguments/keyword arguments, .__state__ for a BUILD
// state, .__ops__[i] for other operations.
func (n *Node) Path() string {
	var parts []*Node
	for x := n; x != nil; x = x.parent {
		parts = append(parts, x)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		parts[i].edge.text(n.v, parts[i].parent, &b)
	}
	return b.String()
}

// Int returns the value of an int or bool node.
func (n *Node) Int() *big.Int {
	if n.v.isBig(n.src) {
		return n.v.bigOf(n.src)
	}
	return big.NewInt(n.v.ival(n.src))
}

// Float returns the value of a float node.
func (n *Node) Float() float64 { return n.v.float(n.src) }

// Str returns the text of a str node, the bytes of a bytes/bytearray node
// (the first bytes only when Len is larger), a global's module, a
// placeholder's name.
func (n *Node) Str() string { return n.v.text(n.src) }

// Len returns the payload length of a str/bytes/bytearray.
func (n *Node) Len() int64 { return n.v.plen(n.src) }

// Name returns a global's name (qualified name after the module).
func (n *Node) Name() string { return n.v.name(n.src) }

// Value returns a short Python-like rendering of a scalar node (and of the
// kind for others).
func (n *Node) Value() string { return n.v.value(n.src) }

func (v *View) value(s pickle.ID) string {
	switch v.specialOf(s) {
	case 'P':
		return "<" + v.text(s) + ">"
	case 't':
		return fmt.Sprintf("<tracker %d>", v.ival(s))
	case 'A':
		return v.arr[s].String()
	case 'S':
		return v.stor[s].String()
	case 'J':
		return "<joblib object array>"
	}
	switch v.kind(s) {
	case pickle.KindNone:
		return "None"
	case pickle.KindBool:
		if v.ival(s) != 0 {
			return "True"
		}
		return "False"
	case pickle.KindInt:
		if v.isBig(s) {
			return v.bigOf(s).String()
		}
		return strconv.FormatInt(v.ival(s), 10)
	case pickle.KindFloat:
		f := v.float(s)
		if math.IsNaN(f) {
			return fmt.Sprintf("nan(0x%016x)", uint64(v.ival(s)))
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case pickle.KindStr:
		t := v.text(s)
		return clipRepr(strconv.Quote(t), v.plen(s) > int64(len(t)))
	case pickle.KindBytes, pickle.KindByteArray:
		t := v.text(s)
		return clipRepr("b"+strconv.Quote(t), v.plen(s) > int64(len(t)))
	case pickle.KindGlobal:
		if v.flags(s)&pickle.FlagDynamic != 0 {
			return "<dynamic global>"
		}
		return v.text(s) + "." + v.name(s)
	case pickle.KindExt:
		return fmt.Sprintf("<ext %d>", v.ival(s))
	}
	return "<" + KindName(v.kind(s)) + ">"
}

func clipRepr(s string, more bool) string {
	if more {
		return s + "..."
	}
	return s
}

func (n *Node) child(c pickle.ID, e edge) *Node { return n.v.wrap(c, n, e) }

// Items returns the items of a list or tuple (stream order) or of a set or
// frozenset (deduplicated, in canonical order), and the parts of a dynamic
// global. A set element's path {#i} numbers it by its place in the
// pickle (Elements), as every command does.
func (n *Node) Items() []*Node {
	v := n.v
	s := n.src
	switch v.kind(s) {
	case pickle.KindSet, pickle.KindFrozenSet:
		out, _ := n.Elements()
		return out
	case pickle.KindList, pickle.KindTuple, pickle.KindPersID:
		return n.list()
	case pickle.KindGlobal:
		if v.flags(s)&pickle.FlagDynamic != 0 {
			return n.list()
		}
	}
	return nil
}

// Elements returns the elements of a set or frozenset as Items does, and
// the place of each in the pickle (among the set's items, the first of
// equal ones): the number of its path {#i} when it is no literal.
func (n *Node) Elements() ([]*Node, []int) {
	if k := n.v.kind(n.src); k != pickle.KindSet && k != pickle.KindFrozenSet {
		return nil, nil
	}
	items, at := n.v.setItemsPos(n.v.items(n.src), true)
	out := make([]*Node, len(items))
	for i, c := range items {
		out[i] = n.child(c, edge{kind: edgeSet, i: int32(at[i])})
	}
	return out, at
}

func (n *Node) list() []*Node {
	items := n.v.items(n.src)
	out := make([]*Node, len(items))
	for i, c := range items {
		out[i] = n.child(c, edge{kind: edgeList, i: int32(i)})
	}
	return out
}

// Entries returns the entries of a dict: duplicate keys merged as Python
// does, sorted by the canonical encoding of the key unless the view keeps
// dict order.
func (n *Node) Entries() []Entry {
	if n.v.kind(n.src) != pickle.KindDict {
		return nil
	}
	sc := n.v.getScratch()
	defer n.v.putScratch(sc)
	ents := n.v.dictEntries(n.src, sc)
	out := make([]Entry, len(ents))
	for i, k := range ents {
		out[i] = Entry{Key: n.child(k.node, edge{kind: edgeKeyOf, i: int32(k.pos), key: k.node}), Value: n.child(k.val, edge{kind: edgeValOf, i: int32(k.vpos), key: k.node}), Pos: k.vpos}
	}
	return out
}

// CallForm says how a call node calls: "call" func(*args), "new"
// cls.__new__(cls, *args[, **kwargs]), "inst" (INST/OBJ without arguments).
func (n *Node) CallForm() string { return n.Ref().CallForm() }

// Func, Args and Kwargs return the parts of a call (Kwargs is nil unless
// non-empty keyword arguments are passed).
func (n *Node) Func() *Node { return n.child(n.v.fn(n.src), edge{kind: edgeCall, i: 0}) }
func (n *Node) Args() *Node { return n.child(n.v.argsOf(n.src), edge{kind: edgeCall, i: 1}) }
func (n *Node) Kwargs() *Node {
	if n.v.kind(n.src) != pickle.KindCall {
		return nil
	}
	if _, kw := callForm(n.v, n.src); !kw {
		return nil
	}
	return n.child(n.v.kwargsOf(n.src), edge{kind: edgeCall, i: 2})
}

var opNames = map[byte]string{'b': "build", 'a': "append", 's': "setitems", 'd': "add", '?': "op"}

// displayName is the operation's name as Ops, paths and the writer give
// it: a folded call's callable, else its tag's name.
func (o *op) displayName() string {
	if o.name != "" {
		return o.name
	}
	return opNames[o.tag]
}

// Ops returns the operations applied to the object after its creation, in
// stream order.
func (n *Node) Ops() []Op {
	ops := n.v.ops(n.src)
	out := make([]Op, len(ops))
	for i, o := range ops {
		name := o.displayName()
		kind := edgeOpArgs
		if o.tag == 'b' || o.tag == 'S' {
			kind = edgeState
		}
		args := make([]*Node, len(o.args))
		for j, a := range o.args {
			e := edge{kind: kind, i: int32(i), j: -1}
			if len(o.args) > 1 {
				e.j = int32(j)
			}
			args[j] = n.child(a, e)
		}
		out[i] = Op{Name: name, Offset: o.offset, Args: args}
	}
	return out
}

// HexDigest is Digest in hex.
func (n *Node) HexDigest() string { return hex.EncodeToString(n.Digest()) }

// pathsOf finds, breadth first from the root, the path of every node a
// normalisation applied to. The walk keeps, per node reached, its parent
// and the edge's kind and indices; path strings are built only for the
// nodes wanted, from those records.
func (v *View) pathsOf() map[pickle.ID]string {
	var nodes, at []pickle.ID
	for _, a := range v.applied {
		n := a.node
		if v.folded.has(n) {
			args, _ := v.tuple(v.argsOf(n))
			if len(args) > 0 {
				n = args[0]
			}
		}
		nodes, at = append(nodes, a.node), append(at, n)
	}
	out := v.pathsAt(nodes, at)
	// a node that a rule rewrote away (the _codecs.encode call inside a
	// bytearray(...) that became a value) has no path of its own: the
	// normalisation is named at the nearest object of the pickle that
	// holds it and has one (root[0], which pk trace finds too)
	nodes, at = nodes[:0], at[:0]
	for _, a := range v.applied {
		if _, ok := out[a.node]; ok || a.node < 0 || a.node >= v.base {
			continue
		}
		for x, k := v.s.Owner(a.node), 0; x != pickle.NoID && k < 64; x, k = v.s.Owner(x), k+1 {
			nodes, at = append(nodes, x), append(at, x)
		}
	}
	if len(nodes) == 0 {
		return out
	}
	up := v.pathsAt(nodes, at)
	for _, a := range v.applied {
		if _, ok := out[a.node]; ok || a.node < 0 || a.node >= v.base {
			continue
		}
		for x, k := v.s.Owner(a.node), 0; x != pickle.NoID && k < 64; x, k = v.s.Owner(x), k+1 {
			if p, ok := up[x]; ok {
				out[a.node] = p
				break
			}
		}
	}
	return out
}

// pathsAt returns the path of at[i] under key nodes[i], for the ones the
// result or an effect reaches.
func (v *View) pathsAt(nodes, at []pickle.ID) map[pickle.ID]string {
	want := map[pickle.ID][]pickle.ID{} // resolved node -> noted nodes
	var wset nodeSet
	left := 0
	for i, n := range at {
		r := v.res(n)
		if r < 0 {
			continue
		}
		if !slices.Contains(want[r], nodes[i]) {
			want[r] = append(want[r], nodes[i])
			left++
		}
		wset.add(r)
	}
	out := map[pickle.ID]string{}
	var seen nodeSet
	root := v.res(v.s.Root)
	if root < 0 {
		return out
	}
	// walk[i] is the i-th node reached (resolved), with the edge it was
	// reached by; the slice is also the queue.
	walk := make([]pathStep, 1, v.nsyn) // each node once at most
	walk[0] = pathStep{id: root, parent: -1, a: -1}
	seen.add(root)
	var effects []int // the effects' log places, walked after the result's nodes
	for i := 0; left > 0; i++ {
		if i == len(walk) {
			// the rest is not reachable from the result: an effect's
			// (root<effect i>, i its place in the call log, as pk diff
			// and pk trace number it), or nowhere (root<unreachable>)
			if effects == nil {
				effects = append(v.effectIndexes(), -1)
			}
			for ; effects[0] >= 0; effects = effects[1:] {
				if e := v.res(v.s.Event(effects[0]).Node); e >= 0 && !seen.has(e) && int32(e) < v.nsyn {
					seen.add(e)
					walk = append(walk, pathStep{id: e, parent: -1, a: int32(effects[0])})
					effects = effects[1:]
					break
				}
			}
			if i == len(walk) {
				break
			}
		}
		n := walk[i].id
		if wset.has(n) {
			for _, a := range want[n] {
				if _, done := out[a]; !done {
					out[a] = v.stepPath(walk, int32(i))
					left--
				}
			}
		}
		add := func(c pickle.ID, kind uint8, a, b int) {
			if c = v.res(c); c >= 0 && !seen.has(c) && int32(c) < v.nsyn {
				seen.add(c)
				walk = append(walk, pathStep{id: c, parent: int32(i), kind: kind, a: int32(a), b: int32(b)})
			}
		}
		items := v.items(n)
		switch v.kind(n) {
		case pickle.KindDict:
			for j := 0; j+1 < len(items); j += 2 {
				add(items[j], edgeKey, j/2, 0)
				add(items[j+1], edgeValue, j/2, 0)
			}
		case pickle.KindSet, pickle.KindFrozenSet:
			for j, c := range items {
				add(c, edgeSetItem, j, 0)
			}
		case pickle.KindCall:
			add(v.fn(n), edgeReduce, 0, 0)
			add(v.argsOf(n), edgeReduce, 1, 0)
			add(v.kwargsOf(n), edgeReduce, 2, 0)
		default:
			for j, c := range items {
				add(c, edgeItem, j, 0)
			}
		}
		for j, o := range v.ops(n) {
			for k, c := range o.args {
				add(c, edgeOp, j, k)
			}
		}
	}
	return out
}

// pathStep is one node reached by pathsOf: the edge from walk[parent].
type pathStep struct {
	id     pickle.ID // the node (resolved)
	parent int32
	kind   uint8
	a, b   int32
}

const (
	edgeItem    uint8 = iota // [a]
	edgeSetItem              // {#a}
	edgeKey                  // .__key__[label of key a]
	edgeValue                // [label of key a]
	edgeReduce               // .__reduce__[a]
	edgeOp                   // .__ops__[a][b]
)

// stepPath builds the path string of walk[i] (pkg/path's spelling): the
// value under a state dict of attributes is .name from the object, as pk
// diff and pk trace print it.
func (v *View) stepPath(walk []pathStep, i int32) string {
	var idx []int32
	for ; walk[i].parent >= 0; i = walk[i].parent {
		idx = append(idx, i)
	}
	var b strings.Builder
	b.WriteString(ppath.Root)
	if walk[i].a >= 0 {
		b.WriteString(ppath.Pseudo("effect", int(walk[i].a))) // an effect's node
	}
	for k := len(idx) - 1; k >= 0; k-- {
		s := walk[idx[k]]
		parent := walk[s.parent].id
		switch s.kind {
		case edgeItem:
			b.WriteString(ppath.Index(int(s.a)))
		case edgeSetItem:
			b.WriteString(ppath.SetPos(int(s.a)))
		case edgeKey:
			b.WriteString(ppath.Pseudo("key", int(s.a)))
		case edgeValue:
			b.WriteString(keyLabel(v, v.items(parent)[2*s.a], int(s.a)))
		case edgeReduce:
			if s.a == 1 && k > 0 && walk[idx[k-1]].kind == edgeItem {
				if name := v.namedArg(parent, int(walk[idx[k-1]].a)); name != "" {
					k-- // an argument named from the call: .__code__
					b.WriteString(name)
					continue
				}
			}
			b.WriteString(callStep(v, parent, int(s.a)))
		case edgeOp:
			ops := v.ops(parent)
			if ok, pair := v.attrOp(ops, int(s.a), int(s.b)); ok {
				// the state dict's entry (or one of a (dict, slots) pair's):
				// an attribute of parent
				switch {
				case !pair && k > 0 && walk[idx[k-1]].kind == edgeValue:
					k--
					b.WriteString(attrStep(v, s.id, int(walk[idx[k]].a)))
					continue
				case pair && k > 1 && walk[idx[k-1]].kind == edgeItem && walk[idx[k-2]].kind == edgeValue:
					d := walk[idx[k-1]].id
					k -= 2
					b.WriteString(attrStep(v, d, int(walk[idx[k]].a)))
					continue
				}
			}
			b.WriteString(opStep(v, ops, int(s.a), int(s.b)))
		}
	}
	return b.String()
}

// Blob is the streamed payload of a str/bytes node (its length, prefix,
// digest and file offset; the bytes are not kept), or nil.
func (n *Node) Blob() *pickle.Blob { return n.v.blob(n.src) }

// Storage returns the torch storage a node of the view stands for
// (Form2), or nil.
func (n *Node) Storage() *Storage { return n.v.stor[n.src] }

// ArrayData returns the node holding an array node's elements (Form2): its
// data bytes, out-of-band buffer or, for objects, the list of its items;
// nil when they are outside the stream (a raw part: Array().Raw).
func (n *Node) ArrayData() *Node {
	a := n.Array()
	if a == nil {
		return nil
	}
	for _, c := range []pickle.ID{a.Items, a.Data, a.Buffer} {
		if c != pickle.NoID {
			return n.child(c, edge{kind: edgeList, i: 0})
		}
	}
	return nil
}
