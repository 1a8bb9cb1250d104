package trace

import (
	"container/heap"
	"encoding/binary"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The top sink (docs/engine.md §2.1, item 5, for trace): `pk trace --top N`
// (text and JSON, with or without --leaves) of a bare pickle file read through the
// machine's fold (pickle.Keep.Fold), so that the store holds what is live
// rather than the whole stream.
//
// At each compaction of the file's first stream the machine offers the
// final subtrees of plain data hanging off kept containers. The sink takes
// the items of lists (a dict's entries and values stay: their roles are
// keys); it sizes the store as it stands (sizeStream, the one sizing) and
// folds each root into:
//
//   - its inclusive size (rootSizes, by the root's sequence number, which
//     is the Off of its pickle.Folded: a run of roots is a range of
//     sequence numbers);
//   - the nodes it owns that are among the N largest folded so far (a
//     bounded heap), each with its size, its own bytes, what its line and
//     JSON record say of it (nodeFacts) and the roles of its path below the
//     root, all as Top would make them from the whole store.
//
// At STOP the tree is sized over the store, a folded run counting the sizes
// of its roots (StreamTree.selfOf) and the items it stands for in its list
// (runItems, Store.ItemCount); the candidates of the store and those of the
// heap compete in Top's order, and a folded one's path is its list's path,
// its index in the list and the roles below it.
//
// Top orders ties by creation order, which is also the number a line shows
// ("#N", "id"): the sink numbers the nodes as they are made and keeps the
// numbers across compactions (sync: a compaction keeps its nodes in
// creation order, drops those it reports released, and adds its folded runs
// and a stub, which are no nodes of the stream). Where the sink cannot give
// the answer exactly it does not fold, or gives up and the caller reads the
// file again without it: a root that reaches a run folded before (its
// candidates' paths would be lost), a call of cloudpickle or dill below a
// root (its label reads the stream's later calls), a root whose path below
// leaves out roles above it, a file of more than one stream, sizes that do
// not add up to the stream's length.

// A state of classes and functions is not compacted; for --top its code
// objects' arguments fold at their REDUCE instead (sink_args.go).

// The pictures (`--svg`, `--html` from the root) take the same sink with
// no candidates (n 0) and one more condition: a root is folded only when
// no picture draws a box for it (drawn), so that nothing it owns is drawn
// either (an object is larger than anything it holds); layout steps over
// a folded run by its size, as it steps over the boxes too narrow to draw.

// The default view (sink_bounded.go), the whole tree with --all and
// --min-size too (sink_whole.go), --path (sink_path.go) and --top --group
// (sink_group.go) take the same sink, each keeping of a folded row what it
// may print.

// topSink folds the first stream of a bare pickle for Top, or for the
// pictures (see above).
type topSink struct {
	n      int
	leaves bool         // --top --leaves: only nodes that own no other compete (Top with Tree.Leaves)
	bview  bool         // the default view's sink: n is its budget of lines (sink_bounded.go)
	pics   []picSpec    // the pictures' sink: the pictures drawn (n is 0)
	whole  *wholeSink   // the whole tree's sink: the rows' lines spilled (n is 0, sink_whole.go)
	path   *pathSink    // --path's sink: the offsets of the roots folded, and of those it keeps (n is 0, sink_path.go)
	group  *groupSink   // --top --group's sink: the groups of the rows folded (n is 0, sink_group.go)
	args   *argSink     // the code objects' arguments folded (sink_args.go; nil: none)
	kp     *pickle.Keep // the machine's options, when the sink folds them (argsKeep)
	total  int64        // and the bytes of the root they are drawn from (the file's)
	doc    *input.Doc   // what eachBuild gives the streams: labels of tensors read the file
	sizes  rootSizes    // the inclusive size of each folded root
	h      candHeap     // the n best candidates folded so far
	lost   bool         // something the sink cannot give exactly: the caller reads the file again
	folds  int          // roots folded
	// the numbers (creation order, "#N") of the store's nodes, by ID, as
	// of the last sync (-1: a folded run or a compaction's stub); made:
	// the nodes made so far; rel: the IDs the compaction under way
	// released, of relLen (synced when the next begins, or at STOP)
	num    []int32
	made   int32
	rel    []pickle.ID
	relLen int
	// scratch of fold
	seen       []pickle.ID
	keyOf      []bool     // --leaves: the folded keys of the root being folded, by ID (reset after it)
	lastFunc   pickle.ID  // the callable of the last call subtree met, and whether
	lastBad    bool       // its label reads other calls (callee is not cheap)
	st         StreamTree // the tree of each compaction's store (tree)
	start, own []int32    // its ownership lists (ownership)
}

// sunkCand is a node that competes in Top: one of the store at STOP or
// (folded) one a folded root owned.
type sunkCand struct {
	size, self int64
	num        int32      // its number: Top's order of ties
	id         pickle.ID  // its ID in the store at STOP
	seq        int32      // folded: its root's sequence number
	below      []string   // folded: the roles of its path under its root, innermost first
	facts      *nodeFacts // folded: what its lines say of it
	folded     bool
	// the default view's (sink_bounded.go): the number of the node it
	// hangs below (-1: a root, below its run's list) and its role there
	up   int32
	role string
}

// better reports whether a comes before b in Top's order (larger, then
// made earlier).
func better(a, b *sunkCand) bool {
	if a.size != b.size {
		return a.size > b.size
	}
	return a.num < b.num
}

// sync brings num up to s: the IDs a compaction released leave (its
// folded runs and its stub count no node), and the nodes made since are
// numbered in order.
func (sk *topSink) sync(s *pickle.Store) {
	if sk.relLen > 0 {
		for len(sk.num) < sk.relLen {
			sk.num = append(sk.num, -1) // (the runs folded after the sync)
		}
		out, j := sk.num[:0], 0
		for i, v := range sk.num[:sk.relLen] {
			if j < len(sk.rel) && sk.rel[j] == pickle.ID(i) {
				j++
				continue
			}
			out = append(out, v)
		}
		sk.num = append(out, -1) // the stub
		sk.rel, sk.relLen = sk.rel[:0], 0
	}
	for id := pickle.ID(len(sk.num)); int(id) < s.Len(); id++ {
		if s.Kind(id) == pickle.KindFolded || s.Flags(id)&pickle.FlagReleased != 0 {
			sk.num = append(sk.num, -1)
			continue
		}
		sk.num = append(sk.num, sk.made)
		sk.made++
	}
}

// released is the sink's pickle.Keep.Released: id leaves at the
// compaction under way.
func (sk *topSink) released(s *pickle.Store, id pickle.ID) {
	if sk.args != nil && sk.args.pend {
		sk.args.released(sk, s, id)
		return
	}
	if sk.relLen == 0 {
		sk.relLen = s.Len()
	}
	sk.rel = append(sk.rel, id)
}

// keep returns the machine's options for the sink.
func (sk *topSink) keep() *pickle.Keep {
	kp := &pickle.Keep{Depth: math.MaxInt32, Fold: sk.fold, Released: sk.released, Active: func(s *pickle.Store) bool {
		if s.Index != 0 || sk.lost || sk.args != nil || sk.num == nil && (producerState(s) || s.Len() >= tableRecords && !tableLike(s)) {
			// (a state of classes and functions, whose calls the sink does
			// not fold, or no table of rows in the first records: the
			// stream is held whole, as without the sink, whose compactions
			// would cost the machine its projected growth and pass 1's
			// plan, 20 MB more for a 5 MB state, 50-110 MB for the cost
			// shapes of nested calls and dicts)
			return false
		}
		sk.sync(s)
		return true
	}}
	if sk.n > 0 && sk.whole == nil && len(sk.pics) == 0 && !sk.leaves && sk.path == nil && !noArgs {
		// --top: code objects' arguments fold at their REDUCE (sink_args.go;
		// the sink never compacts a store it folded them in)
		sk.argsKeep(kp)
	}
	return kp
}

// runSize is the size of the folded run x of s: the sizes of its roots.
func (sk *topSink) runSize(s *pickle.Store, x pickle.ID) int64 {
	off, n, _, _ := s.FoldedRun(x)
	return sk.sizes.sum(int(off), n)
}

// rootSizes holds the sizes of the folded roots, by sequence number, as
// uvarints (a row of a table takes a byte or two), with the position of
// every rootsStep-th.
type rootSizes struct {
	b  []byte
	at []int // at[k]: where root k*rootsStep starts in b
	n  int
}

const rootsStep = 64

// add appends the size of root n (returned).
func (z *rootSizes) add(v int64) int {
	if z.n%rootsStep == 0 {
		z.at = append(z.at, len(z.b))
	}
	z.b = binary.AppendUvarint(z.b, uint64(v))
	z.n++
	return z.n - 1
}

// pos returns where the size of root off starts in b.
func (z *rootSizes) pos(off int) int {
	p := z.at[off/rootsStep]
	for range off % rootsStep {
		_, k := binary.Uvarint(z.b[p:])
		p += k
	}
	return p
}

// sum returns the sizes of the n roots from root off.
func (z *rootSizes) sum(off, n int) int64 {
	p := z.pos(off)
	var t int64
	for range n {
		v, k := binary.Uvarint(z.b[p:])
		t, p = t+int64(v), p+k
	}
	return t
}

// fold is the sink's pickle.Keep.Fold.
func (sk *topSink) fold(s *pickle.Store, roots, keys []pickle.ID, _ []uint8, out []pickle.Folded) {
	if s.Index != 0 || sk.lost {
		return
	}
	sk.sync(s)
	st := sk.tree(s)
	sk.lastFunc = pickle.NoID
	if sk.whole != nil {
		sk.whole.compaction()
	}
	if sk.group != nil {
		sk.group.compaction()
	}
	for i, r := range roots {
		p := s.Owner(r)
		if keys[i] != pickle.NoID || p < 0 || s.Kind(p) != pickle.KindList {
			continue
		}
		owned, effects, ok := sk.subtree(st, r)
		if !ok {
			continue
		}
		if sk.drawn(st.incl.at(r)) || sk.whole != nil && !sk.whole.render(st, r, p) || sk.path != nil && sk.path.keeps(s, r) ||
			sk.group != nil && !sk.group.add(st, r, p, sk.num[p], int32(sk.sizes.n), sk.owns) {
			continue
		}
		seq := int32(sk.sizes.add(st.incl.at(r)))
		if sk.path != nil {
			sk.path.note(s.Offset(r))
		}
		switch {
		case sk.bview:
			sk.offerBounded(st, owned, r, seq)
		case sk.leaves:
			sk.offerLeaves(st, owned, r, seq)
		case sk.n > 0:
			for _, x := range owned {
				sk.offer(st, x, r, seq)
			}
		}
		out[i] = pickle.Folded{Off: int64(seq), Len: 1, OK: true, Effects: effects}
		sk.folds++
	}
}

// drawn reports whether a picture of the pictures' sink draws a box of size
// bytes.
func (sk *topSink) drawn(size int64) bool {
	for _, sp := range sk.pics {
		if sp.draws(size, sk.total) {
			return true
		}
	}
	return false
}

// tree returns the tree fold reads s through: numbered, with the
// ownership lists of s in sk and no size yet (subtree sizes what it folds).
func (sk *topSink) tree(s *pickle.Store) *StreamTree {
	sk.start, sk.own = ownership(s, sk.start, sk.own)
	st := &sk.st
	mark, fmark := st.mark, st.fmark
	*st = StreamTree{Store: s, incl: sizesFor(s, s.Len(), nil, st.incl), upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root,
		sink: sk, doc: sk.doc, num: sk.num, mark: mark, fmark: fmark}
	return st
}

// subtree returns the nodes root owns (itself first), sized in st, and
// whether they hold a call, an operation or a global (what they reach
// and do not own is another's: kept, or folded with its owner); ok false
// when the sink does not fold it: it holds a run folded before, or a call
// whose label reads the stream's other calls.
func (sk *topSink) subtree(st *StreamTree, root pickle.ID) (owned []pickle.ID, effects, ok bool) {
	s := st.Store
	owned = append(sk.seen[:0], root)
	defer func() { sk.seen = owned[:0] }()
	for i := 0; i < len(owned); i++ {
		x := owned[i]
		switch s.Kind(x) {
		case pickle.KindFolded:
			return nil, false, false
		case pickle.KindCall:
			if f := s.Func(x); f != sk.lastFunc {
				sk.lastFunc, sk.lastBad = f, producerName(callee(s, x))
			}
			if sk.lastBad {
				return nil, false, false
			}
			effects = true
		case pickle.KindGlobal:
			effects = true
		}
		if s.NMuts(x) > 0 {
			effects = true
		}
		for _, c := range sk.own[sk.start[x]:sk.start[x+1]] {
			owned = append(owned, pickle.ID(c))
		}
		if len(owned) > s.Len() { // (malformed ownership)
			return nil, false, false
		}
	}
	// the owned come after their owner: sized last first
	for i := len(owned) - 1; i >= 0; i-- {
		x := owned[i]
		v := st.selfOf(x)
		for _, c := range sk.own[sk.start[x]:sk.start[x+1]] {
			v += st.incl.at(pickle.ID(c))
		}
		st.incl.set(x, v)
	}
	return owned, effects, true
}

// tableRecords is the store (records; pickle.MinCompact's default) from
// which the sink reads its first records for a table before it compacts
// (tests that compact smaller stores fold whatever they hold).
const tableRecords = 1 << 14

// tableLike reports whether s holds a table the sink folds: a list of 16
// items or more, most of them items it owns (its rows: containers, calls,
// and scalars, which --top and the pictures fold as rows and the whole
// tree as what its list's "…" line counts). Plain lists of scalars reach
// the sink where the fast paths give them up (a list of 4 million floats
// beside a call: --top 20 held 189 MB, the whole tree 314 MB; folded, 26-27
// MB: docs/engine.md §4, session 46).
func tableLike(s *pickle.Store) bool {
	for id := range pickle.ID(s.Len()) {
		if s.Kind(id) != pickle.KindList || s.NItems(id) < 16 {
			continue
		}
		rows := 0
		for _, c := range s.Items(id) {
			if c >= 0 && s.Owner(c) == id {
				rows++
			}
		}
		if 2*rows >= s.NItems(id) {
			return true
		}
	}
	return false
}

// producerName reports whether a callable's canonical name is one of
// cloudpickle's or dill's, whose calls' labels read the stream's other
// calls (setstates) and whose states stay live to their end.
func producerName(name string) bool {
	return strings.HasPrefix(name, "cloudpickle.") || strings.HasPrefix(name, "dill.")
}

// producerState reports whether s names a global of cloudpickle or dill.
func producerState(s *pickle.Store) bool {
	for id := range pickle.ID(s.Len()) {
		if s.Kind(id) == pickle.KindGlobal && producerName(canonical(s, id)) {
			return true
		}
	}
	return false
}

// offer puts node x of folded root r (sequence seq) into the heap when it
// is among the n best so far.
func (sk *topSink) offer(st *StreamTree, x, r pickle.ID, seq int32) {
	c := sunkCand{size: st.incl.at(x), num: sk.num[x], seq: seq, folded: true}
	if len(sk.h) == sk.n && !better(&c, &sk.h[0]) {
		return
	}
	below, skip := st.pathParts(x, r)
	if skip > 0 {
		sk.lost = true
		return
	}
	it := st.nodeItem(x, "", nil)
	f := st.sunkFacts(x)
	c.self, c.below, c.facts = it.Self, below, &f
	sk.push(c)
}

// offerLeaves is offer for --top --leaves: of the nodes root r owns
// (owned, itself first), those that own no other and are no folded key
// (as Top with Tree.Leaves judges them, foldedKeys: a dict's keys, a
// global's name parts, shown in their owner's line).
func (sk *topSink) offerLeaves(st *StreamTree, owned []pickle.ID, r pickle.ID, seq int32) {
	s := st.Store
	if len(sk.keyOf) < s.Len() {
		sk.keyOf = make([]bool, s.Len())
	}
	for _, x := range owned {
		if k := s.Kind(x); k != pickle.KindDict && k != pickle.KindGlobal && s.NMuts(x) == 0 {
			continue
		}
		eachChild(s, x, func(c pickle.ID, _ role, folded bool) bool {
			if folded && c >= 0 && s.Owner(c) == x {
				sk.keyOf[c] = true
			}
			return true
		})
	}
	for _, x := range owned {
		if !sk.owns(x) && !sk.keyOf[x] {
			sk.offer(st, x, r, seq)
		}
	}
	for _, x := range owned {
		sk.keyOf[x] = false
	}
}

// owns reports whether node x of the store being folded owns another
// (its ownership lists, tree).
func (sk *topSink) owns(x pickle.ID) bool { return sk.start[x] != sk.start[x+1] }

// sunkFacts is what the lines of node x of st say of it, for a node the
// sink folds (its store is gone by STOP): its facts, code and label, and
// whether the memo holds it.
func (st *StreamTree) sunkFacts(x pickle.ID) nodeFacts {
	f := st.factsOf(x)
	f.code, f.label = st.describe(x)
	f.memo = st.Store.Has(x, pickle.FlagMemo)
	return f
}

// push puts c into the heap of the n best, in the place of the worst
// when it is full (the caller knows c is better).
func (sk *topSink) push(c sunkCand) {
	if len(sk.h) < sk.n {
		heap.Push(&sk.h, c)
		return
	}
	sk.h[0] = c
	heap.Fix(&sk.h, 0)
}

// candHeap is a heap of candidates, the worst on top.
type candHeap []sunkCand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(&h[j], &h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(sunkCand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// finish sets t's Top from the store of its only stream st and the
// folded candidates (for the pictures' sink, checks that st is all the
// file holds; for the default view's, gives t its folded lines:
// finishBounded); false when the sink cannot give it exactly.
func (sk *topSink) finish(t *Tree, st *StreamTree) bool {
	gone, ok := sk.settle(t, st)
	if !ok {
		return false
	}
	if sk.path != nil {
		sk.path.gone = gone
		if !sk.bview {
			return !sk.lost
		}
	}
	if sk.group != nil {
		by, ok := sk.group.settle(st, foldedRuns(st.Store), gone)
		if sk.lost || !ok {
			return false
		}
		t.groups = &sunkGroups{gs: sk.group, by: by, taken: map[int32]int{}}
		return true
	}
	if sk.bview {
		return sk.finishBounded(t, st, gone)
	}
	s := st.Store
	n := s.Len()
	if sk.n == 0 {
		// the pictures': no candidates; drawn was judged against the
		// bytes of the root they are drawn from, which is this stream
		return !sk.lost && s.Begin == 0 && s.Length() == sk.total
	}
	var keys []bool
	if sk.leaves {
		keys = st.foldedKeys()
	}
	for id := range pickle.ID(n) {
		if gone[id] != 2 || sk.leaves && (st.ownsAny(id) || keys[id]) {
			continue
		}
		c := sunkCand{size: st.incl.at(id), num: sk.num[id], id: id}
		if len(sk.h) < sk.n || better(&c, &sk.h[0]) {
			sk.push(c)
		}
	}
	if sk.lost {
		return false
	}
	h := sk.h
	sort.Slice(h, func(i, j int) bool { return better(&h[i], &h[j]) })
	runs := foldedRuns(s)
	items := make([]Item, 0, len(h))
	for i := range h {
		c := &h[i]
		if !c.folded {
			items = append(items, st.nodeItem(c.id, "", link(nil, t.PathOf(st, c.id))))
			continue
		}
		ra, r, ok := runs.of(s, c.seq, gone)
		if !ok {
			return false
		}
		if ra.prefix == "" {
			ra.prefix = t.PathOf(st, ra.list)
		}
		var b strings.Builder
		b.WriteString(ra.prefix)
		b.WriteString(r.str(s))
		for k := len(c.below) - 1; k >= 0; k-- {
			b.WriteString(c.below[k])
		}
		items = append(items, Item{Kind: ItemNode, Stream: st, Node: pickle.NoID, pl: link(nil, b.String()), Size: c.size, Self: c.self,
			sunk: c.facts})
	}
	t.fast = &fastTop{n: sk.n, leaves: sk.leaves, items: items}
	return true
}

// rowRoles gives the role of a root in its list during one compaction
// (the store's IDs change at the next): each list's items are walked once,
// the first role of each item it owns kept (the whole tree's and the
// groups' sinks name the rows they fold so).
type rowRoles struct {
	lists map[pickle.ID]bool
	roles map[pickle.ID]role
}

// reset starts a compaction.
func (rr *rowRoles) reset() {
	clear(rr.lists)
	clear(rr.roles)
}

// of returns the role of r, an item of list p of s (false: p does not own
// r among its items).
func (rr *rowRoles) of(s *pickle.Store, p, r pickle.ID) (role, bool) {
	if rr.lists == nil {
		rr.lists, rr.roles = map[pickle.ID]bool{}, map[pickle.ID]role{}
	}
	if !rr.lists[p] {
		rr.lists[p] = true
		eachChild(s, p, func(c pickle.ID, rl role, folded bool) bool {
			if !folded && c >= 0 && s.Owner(c) == p {
				if _, dup := rr.roles[c]; !dup {
					rr.roles[c] = rl
				}
			}
			return true
		})
	}
	rl, ok := rr.roles[r]
	return rl, ok
}

// upChain tells whether a node or one of its owners is hit, each node's
// answer kept in mark by ID (0 unknown, 1 yes, 2 no, 3 being walked), so
// that a store's nodes cost one walk in all. A node that is hit itself is
// not marked.
type upChain struct {
	s     *pickle.Store
	mark  []uint8
	hit   func(pickle.ID) bool
	chain []pickle.ID
}

// of returns 1 when x or an owner of it is hit, 2 when none is, 0 when
// the owners go round in a cycle (malformed ownership).
func (u *upChain) of(x pickle.ID) uint8 {
	u.chain = u.chain[:0]
	v := uint8(2)
	for x != pickle.NoID {
		if u.mark[x] != 0 {
			v = u.mark[x]
			if v == 3 {
				return 0
			}
			break
		}
		if u.hit(x) {
			v = 1
			break
		}
		u.mark[x] = 3
		u.chain = append(u.chain, x)
		x = u.s.Owner(x)
	}
	for _, c := range u.chain {
		u.mark[c] = v
	}
	return v
}

// runAt is a run the sink folded, in the store at STOP: its sequence
// numbers [off, off+n), its list, and the role of its first root there.
type runAt struct {
	off    int64
	n      int
	list   pickle.ID
	first  int // (-1: not looked up yet)
	rk     roleKind
	prefix string // the list's path, when asked for (finish)
}

type runTab []runAt

// foldedRuns lists the runs folded in s, by sequence number.
func foldedRuns(s *pickle.Store) runTab {
	var runs runTab
	for id := range pickle.ID(s.Len()) {
		if s.Kind(id) == pickle.KindFolded {
			off, k, _, _ := s.FoldedRun(id)
			runs = append(runs, runAt{off: off, n: k, list: s.Owner(id), first: -1})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].off < runs[j].off })
	return runs
}

// of returns the run of folded root seq and the root's role in the run's
// list; false when the root is in no run of a kept list (gone, settle).
func (runs runTab) of(s *pickle.Store, seq int32, gone []uint8) (*runAt, role, bool) {
	j := sort.Search(len(runs), func(j int) bool { return runs[j].off+int64(runs[j].n) > int64(seq) })
	if j == len(runs) || runs[j].off > int64(seq) || runs[j].list < 0 || gone[runs[j].list] != 2 {
		return nil, role{}, false
	}
	ra := &runs[j]
	if ra.first < 0 {
		eachChild(s, ra.list, func(x pickle.ID, r role, _ bool) bool {
			if x >= 0 && s.Kind(x) == pickle.KindFolded {
				if off, _, _, _ := s.FoldedRun(x); off == ra.off {
					ra.first, ra.rk = r.i, r.kind
					return false
				}
			}
			return true
		})
		if ra.first < 0 {
			return nil, role{}, false
		}
	}
	return ra, role{kind: ra.rk, i: ra.first + int(int64(seq)-ra.off), k: ra.list}, true
}

// settle checks that st, the store of t's only stream at STOP, and the
// runs folded from it give the whole stream, and returns which of its
// nodes hang below a folded root or a released one (gone: 1) and which
// are the stream's own (2).
func (sk *topSink) settle(t *Tree, st *StreamTree) (gone []uint8, ok bool) {
	if t.nStreams != 1 || len(t.Streams) != 1 || t.Streams[0] != st || t.File.Trailing != nil || len(t.top) > 0 {
		return nil, false
	}
	s := st.Store
	n := s.Len()
	sk.sync(s)
	st.num = sk.num
	// nodes left from a folded root (frozen, named by the memo): their
	// owners were released, so they hang below a stub
	gone = make([]uint8, n) // 0 unknown (or itself released or a run), 1 gone, 2 kept
	up := upChain{s: s, mark: gone, hit: func(x pickle.ID) bool {
		return s.Flags(x)&pickle.FlagReleased != 0 || s.Kind(x) == pickle.KindFolded
	}}
	for id := range pickle.ID(n) {
		if up.of(id) == 0 {
			return nil, false // (malformed ownership)
		}
	}
	// the bytes add up: nothing was released that no run counts
	total := s.StreamSelf
	for id := range pickle.ID(n) {
		if s.Owner(id) == pickle.NoID && gone[id] == 2 {
			total += st.incl.at(id)
		}
	}
	if total != s.Length() {
		return nil, false
	}
	return gone, true
}

// noSink turns the top sink off (PK_TRACE_SINK=0: to measure or
// cross-check the store path).
var noSink = os.Getenv("PK_TRACE_SINK") == "0"

// noArgs turns the fold of code objects' arguments off (PK_TRACE_ARGS=0:
// to measure or cross-check it).
var noArgs = os.Getenv("PK_TRACE_ARGS") == "0"

// isStub reports whether x is a compaction's stub in s (release.go): a
// released None that nothing owns, which the owners of what folded roots
// owned and the memo still names (memo-shared strings) now point to.
func isStub(s *pickle.Store, x pickle.ID) bool {
	return s.Kind(x) == pickle.KindNone && s.Flags(x)&pickle.FlagReleased != 0 && s.Owner(x) == pickle.NoID
}

// belowStub reports whether x is a stub of s or hangs below one: it has
// no place of its own in the stream, its bytes are in the folded runs
// (a store the sink folded shows its stream without it: nextTopKid).
func belowStub(s *pickle.Store, x pickle.ID) bool {
	for range s.Len() {
		o := s.Owner(x)
		if o == pickle.NoID {
			return isStub(s, x)
		}
		x = o
	}
	return false // (malformed ownership)
}
