package trace

import (
	"io"
	"runtime/debug"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The depth-limited fast path (docs/pk-trace.md, "The fast paths: --top and
// --depth").
//
// FastDepth answers `pk trace --depth D` (text or JSON, from the root) for
// the same inputs as FastTop — a bare pickle of plain data — without
// building the nodes that are not shown. It runs the fast machine twice:
// the first pass records only each node's owner (4 bytes a node), from
// which every node's depth in the ownership tree follows; the second pass
// adds the nodes at depth <= D only to a small synthetic pickle.Store, sizes
// them as they are consumed, and gives the nodes at depth D no children but
// what their line needs (their item count; for a dict, its keys, whose
// bytes its line shows). The result is an ordinary Tree (numbers, sizes,
// references and labels as the graph path has them: StreamTree.num maps the
// store's IDs to the stream's numbers), so WriteText and WriteJSON print it
// unchanged. Output still starts after the whole input is read: the
// stream's line needs every FRAME's bytes.

// fastMaxDepth: deeper --depth runs take the graph path (depths are kept in
// a byte, and showing that much saves little).
const fastMaxDepth = 250

// FastDepth returns the tree of the file at path for a walk from the root
// with Options.Depth = depth, or nil when the fast path does not apply
// (see FastTop; also a negative depth or one over fastMaxDepth). The tree
// serves Walk, WriteText and WriteJSON from its Root() with at most that
// depth, nothing else: its store holds only the nodes shown, so Top, Find,
// PathOf and the pictures need the graph path's tree.
func FastDepth(path string, depth int) *Tree {
	if depth < 0 || depth > fastMaxDepth {
		return nil
	}
	return fastFile(path, func(ra io.ReaderAt, size int64) (*Tree, error) { return fastDepthOf(ra, size, path, depth) })
}

// depthView is the state of the two passes.
type depthView struct {
	pass1  bool
	owners paged[int32]      // pass 1: the owner of every node (-1: none)
	refd   []uint64          // the nodes a memo reference points to (a bit each), from pass 1
	vals   map[int32]fastVal // pass 2: their values (scalars), kept at their memo write
	limit  int               // max(depth, 1): the root is always built
	depth  []uint8           // pass 2: every node's depth (root 1), saturated at 255
	counts map[int32]int64
	// pass 2: the store of the nodes built, by local ID: num is each one's
	// number in the stream, incl its inclusive size
	out   *pickle.Store
	num   []int32
	incl  []int64
	refs  map[int32]pickle.ID // referenced nodes, by number (one node each: runs of references compare IDs)
	dummy map[pickle.Kind]pickle.ID
	fix   []pickle.ID // containers whose items are only a count
	fixN  []int64
	root  pickle.ID
	items []pickle.ID // scratch: the items a takeAll gives a node
}

// node adds a node to the store: kind k created by op at off, number id.
func (dv *depthView) node(k pickle.Kind, op pickle.Opcode, off int64, id int32) pickle.ID {
	n := dv.out.Add(k, op, off)
	dv.num = append(dv.num, id)
	dv.incl = append(dv.incl, 0)
	return n
}

// paged is a table of the fast paths' passes that grows without copying
// (pages of fastPage entries).
type paged[T any] struct {
	pages [][]T
	n     int64
}

func (p *paged[T]) push(v T) {
	if p.n%fastPage == 0 {
		c := fastPage
		if p.n == 0 {
			c = 64
		}
		p.pages = append(p.pages, make([]T, 0, c))
	}
	l := len(p.pages) - 1
	p.pages[l] = append(p.pages[l], v)
	p.n++
}

func (p *paged[T]) at(i int64) *T { return &p.pages[i/fastPage][i%fastPage] }

func (p *paged[T]) set(i int64, v T) { p.pages[i/fastPage][i%fastPage] = v }
func (p *paged[T]) get(i int64) T    { return p.pages[i/fastPage][i%fastPage] }

func fastDepthOf(ra io.ReaderAt, size int64, name string, depth int) (*Tree, error) {
	if size <= 0 {
		return nil, fallback("empty or unknown size")
	}
	if !bare(ra) {
		return nil, fallback("not a bare pickle (compression or container magic)")
	}
	run := func(dv *depthView) (*fastMachine, error) {
		m := &fastMachine{ra: ra, size: size, name: name, dv: dv}
		m.memo.withID = true
		if err := m.runAll(); err != nil {
			return nil, err
		}
		return m, nil
	}
	// pass 1: owners
	dv := &depthView{pass1: true}
	m, err := run(dv)
	if err != nil {
		return nil, err
	}
	total := m.ids
	refd := dv.refd
	d, err := depths(&dv.owners, total)
	if err != nil {
		return nil, err
	}
	// the first pass's owners and memo are dead: for a large input, give
	// their memory back before the second pass allocates its own
	dv, m = nil, nil
	if size >= 16<<20 {
		debug.FreeOSMemory()
	}
	// pass 2: the nodes shown
	dv = &depthView{limit: max(depth, 1), depth: d, refd: refd, vals: map[int32]fastVal{}, out: &pickle.Store{},
		counts: map[int32]int64{}, refs: map[int32]pickle.ID{}, dummy: map[pickle.Kind]pickle.ID{}, root: pickle.NoID}
	m, err = run(dv)
	if err != nil {
		return nil, err
	}
	if m.ids != total || dv.root == pickle.NoID {
		return nil, fallback("the second pass differs")
	}
	return dv.tree(m, total), nil
}

// depths computes every node's depth from the owners (the root, the only
// node without one, is at 1), with an explicit stack.
func depths(owners *paged[int32], total int64) ([]uint8, error) {
	d := make([]uint8, total)
	var chain []int32
	for id := int64(0); id < total; id++ {
		if d[id] != 0 {
			continue
		}
		chain = chain[:0]
		x := int32(id)
		base := 0
		for {
			if d[x] != 0 {
				base = int(d[x])
				break
			}
			chain = append(chain, x)
			if int64(len(chain)) > total {
				return nil, fallback("ownership cycle")
			}
			o := owners.get(int64(x))
			if o < 0 {
				break
			}
			x = o
		}
		for i := len(chain) - 1; i >= 0; i-- {
			base = min(base+1, 255)
			d[chain[i]] = uint8(base)
		}
	}
	return d, nil
}

// created: a node was numbered.
func (dv *depthView) created(s *fastSlot) {
	if dv.pass1 {
		dv.owners.push(-1)
		return
	}
	if int(dv.depth[s.id]) <= dv.limit {
		s.ln = int32(dv.node(s.kind, s.op, s.off, s.id)) + 1
	}
}

// referenced: pass 1 saw a memo reference to node id.
func (dv *depthView) referenced(id int32) {
	w := int(id / 64)
	for len(dv.refd) <= w {
		dv.refd = append(dv.refd, 0)
	}
	dv.refd[w] |= 1 << (id % 64)
}

// memoized: a memo write on the node of slot s (its value and item count
// are final: only immutable objects can be referenced). The value of a
// scalar that is referenced somewhere is kept for the references' lines
// (so the input is not read again for them).
func (dv *depthView) memoized(s *fastSlot) {
	if dv.pass1 {
		return
	}
	if s.ln != 0 {
		dv.out.SetFlags(pickle.ID(s.ln-1), pickle.FlagMemo)
	}
	switch {
	case s.kind == pickle.KindTuple || s.kind == pickle.KindFrozenSet:
		dv.counts[s.id] = s.count
	case isScalarKind(s.kind) && int(s.id/64) < len(dv.refd) && dv.refd[s.id/64]&(1<<(s.id%64)) != 0:
		if _, ok := dv.vals[s.id]; !ok {
			dv.vals[s.id] = valOf(s)
		}
	}
}

// finish completes the node of a slot once its size is known.
func (dv *depthView) finish(s *fastSlot, size int64) {
	n := pickle.ID(s.ln - 1)
	dv.out.AddSelf(n, s.self)
	v := valOf(s)
	v.set(dv.out, n)
	dv.incl[n] = size
	if int(dv.depth[s.id]) >= dv.limit && s.count > 0 && s.kind != pickle.KindDict {
		dv.fix = append(dv.fix, n)
		dv.fixN = append(dv.fixN, s.count)
	}
}

// takeAll is fastMachine.takeAll for the depth view's passes.
func (dv *depthView) takeAll(m *fastMachine, from int, by *fastSlot) error {
	if dv.pass1 {
		for i := from; i < len(m.stack); i++ {
			s := &m.stack[i]
			by.count++
			if s.origin {
				dv.owners.set(int64(s.id), by.id)
			}
		}
		m.stack = m.stack[:from]
		return nil
	}
	built := by.ln != 0
	bn := pickle.ID(by.ln - 1)
	frontier := built && int(dv.depth[by.id]) >= dv.limit
	items := dv.items[:0]
	for i := from; i < len(m.stack); i++ {
		s := &m.stack[i]
		pos := by.count
		by.count++
		c := pickle.NoID
		if !s.origin {
			by.self += s.self // the GET's bytes
			if !built || (frontier && by.kind != pickle.KindDict) {
				continue
			}
			if frontier {
				if pos%2 == 0 {
					c = dv.dummyOf(s.kind)
				}
			} else {
				var err error
				if c, err = dv.refNode(s); err != nil {
					return err
				}
			}
			items = append(items, c)
			continue
		}
		sz := s.self + s.incl
		by.incl += sz
		if s.ln != 0 {
			dv.finish(s, sz)
			if built {
				dv.out.SetOwner(pickle.ID(s.ln-1), bn)
			}
		}
		if !built || (frontier && by.kind != pickle.KindDict) {
			continue
		}
		switch {
		case !frontier:
			c = pickle.ID(s.ln - 1)
		case pos%2 == 1:
			// a value of a dict on the last level shown: not needed
		case isScalarKind(s.kind):
			// a key: its bytes are on the dict's line
			c = dv.node(s.kind, 0, 0, s.id)
			dv.out.SetOwner(c, bn)
			dv.incl[c] = sz
		default:
			c = dv.dummyOf(s.kind)
		}
		items = append(items, c)
	}
	if len(items) > 0 {
		dv.out.AppendItems(bn, items)
	}
	dv.items = items[:0]
	m.stack = m.stack[:from]
	return nil
}

// dummyOf is a node of kind k that is not owned by anything: a dict key on
// the last level shown, where only its kind matters.
func (dv *depthView) dummyOf(k pickle.Kind) pickle.ID {
	n, ok := dv.dummy[k]
	if !ok {
		n = dv.node(k, 0, 0, 0)
		dv.dummy[k] = n
	}
	return n
}

// refNode is the node a reference shows: one per referenced node, with its
// value read again from the input (scalars) or its item count (tuples,
// frozensets).
func (dv *depthView) refNode(s *fastSlot) (pickle.ID, error) {
	if n, ok := dv.refs[s.ref]; ok {
		return n, nil
	}
	var n pickle.ID
	if isScalarKind(s.kind) {
		v, ok := dv.vals[s.ref]
		if !ok || v.kind != s.kind {
			return pickle.NoID, fallback("a referenced value was not kept")
		}
		n = dv.node(v.kind, v.op, s.off, s.ref)
		v.set(dv.out, n)
	} else {
		n = dv.node(s.kind, 0, s.off, s.ref)
		if c := dv.counts[s.ref]; c > 0 {
			dv.fix = append(dv.fix, n)
			dv.fixN = append(dv.fixN, c)
		}
	}
	dv.out.SetFlags(n, pickle.FlagMemo|pickle.FlagShared)
	dv.refs[s.ref] = n
	return n, nil
}

// done: STOP with the result r.
func (dv *depthView) done(m *fastMachine, r *fastSlot) error {
	if dv.pass1 {
		return nil
	}
	if r.ln == 0 {
		return fallback("the result was not built")
	}
	dv.finish(r, r.self+r.incl)
	dv.root = pickle.ID(r.ln - 1)
	return nil
}

// tree makes the Tree that the walkers and printers use.
func (dv *depthView) tree(m *fastMachine, total int64) *Tree {
	withCounts(dv.out, dv.fix, dv.fixN)
	s := dv.out
	s.Index, s.Begin, s.End, s.Proto, s.Root, s.Tops, s.StreamSelf = 0, 0, m.size, m.proto, dv.root, []pickle.ID{dv.root}, m.sself
	n := s.Len()
	st := &StreamTree{Store: s, num: dv.num, incl: sizesOf(dv.incl), ownStart: make([]int32, n+1), upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root}
	t := &Tree{File: &pickle.File{Name: m.name, Size: m.size}, Total: m.size, Streams: []*StreamTree{st}}
	st.tree = t
	return t
}
