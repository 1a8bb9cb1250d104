package trace

import (
	"errors"
	"io"
	"math"
	"strings"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The pictures' fast path (docs/pk-trace.md, "Pictures").
//
// FastPicture draws `pk trace --svg` and `--html` of a bare pickle of plain
// data (the inputs of FastTop) from the root without the graph. What a
// picture shows is bounded: a box is drawn when it is at least minW wide at
// a scale of width / the start's bytes, at most maxDepth levels deep (svg:
// 0.5 px of 1180, 24 levels; html: 1/20,000 of the start, 40 levels), and
// an object is always larger than anything it holds, so the boxes drawn
// are closed under ancestors and the byte threshold is known before
// reading (the start is the stream: the file's size). One streaming pass
// of the fast machine, where a node's inclusive size is final when it is
// consumed, keeps a record only for the nodes at or above the threshold,
// linked to their kept children in order, each with its offset among its
// siblings (the bytes of the display children before it, kept or not), so
// that layout places every box where the graph path places it (an integer
// sum of the sizes before it, times the scale).
//
// What it keeps is bounded by the threshold and the levels: the records
// under one stack slot are kept at most maxDepth-1 levels deep (anything
// deeper would be drawn below maxDepth, as every slot is at least at depth
// 1), and nodes on one level under the stack's slots are disjoint, so at
// most width/minW of them (html: 20,000; svg: 2,360) are on each of those
// levels: at most 39 × 20,000 = 780,000 records of 80 bytes (62 MB) for
// the page, 23 × 2,360 = 54,280 (4.3 MB) for the svg. For the page, a
// subtree consumed after other kept children also loses what lies past
// the page's cap (capped), so that of a list of chains 39 levels deep, each
// just above the threshold, only about 20,000 × (1 + 1/2 + ... + 1/39) are
// kept once the list holds them, plus the items waiting on the stack for
// their APPENDS (CPython writes 1,000 at a time): 18,000 such chains peak
// at 64 MB (122 MB with the levels' bound alone; the graph path 128 MB).
// A scalar's value is kept only for the labels (a str's first 41 runes, a
// bytes' length), and the role of a dict value in full, as every path
// shows it. On a table of small rows nothing but the root is that large.
// Records cut off are reused.

// picSpec is what one picture draws: boxes of at least minW at a scale of
// width / the start's bytes, maxDepth levels.
type picSpec struct {
	width, minW float64
	maxDepth    int
	maxNodes    int // the page's cap: the first boxes in pre-order (0: svg)
}

// draws reports whether the picture draws a box of size bytes in a
// picture of total bytes from the root, as layout decides (the same float
// expression: a scale of width over the root's bytes, times the size).
func (sp picSpec) draws(size, total int64) bool {
	return float64(size)*(sp.width/float64(total)) >= sp.minW
}

func (o SVGOptions) spec() picSpec {
	o.defaults()
	return picSpec{width: float64(o.Width - 20), minW: 0.5, maxDepth: o.MaxDepth}
}

func (o HTMLOptions) spec() picSpec {
	o.defaults()
	return picSpec{width: float64(o.MaxNodes), minW: 1, maxDepth: o.MaxDepth, maxNodes: o.MaxNodes}
}

// FastPicture returns the tree of the file at path from which WriteSVG
// (svg non-nil, with those options) and WriteHTML (html non-nil) draw the
// pictures from its Root(), or nil when the fast path does not apply (see
// FastTop). The tree serves those pictures only.
func FastPicture(path string, svg *SVGOptions, html *HTMLOptions) *Tree {
	var specs []picSpec
	if svg != nil {
		specs = append(specs, svg.spec())
	}
	if html != nil {
		specs = append(specs, html.spec())
	}
	if len(specs) == 0 {
		return nil
	}
	return fastFile(path, func(ra io.ReaderAt, size int64) (*Tree, error) { return fastPicOf(ra, size, path, specs) })
}

// role kinds of a record
const (
	picIndex  uint8 = iota // [i]
	picSet                 // {#i}
	picKey                 // a dict value: role holds its segment
	picKeyRef              // a dict value whose key is a memo reference: pos is the key's offset
	picRoot                // the stream's result
)

// picRec is a node kept for the pictures.
type picRec struct {
	size, self int64
	at         int64 // bytes of its display siblings before it
	cnt        int64 // containers: items; scalars: its value's index in vals
	pos        int64 // role: item index, or the offset of a memoized key
	role       string
	id         int32 // its number in the stream
	first      int32 // its kept children, in order (0: none)
	next       int32 // its next kept sibling
	node       int32 // 1 + its node in the store, once drawn
	flags      pickle.Flags
	kind       pickle.Kind
	op         pickle.Opcode
	h          uint8 // levels of records kept below it
	rk         uint8
	keyKind    pickle.Kind
	ent        int32 // a dict value's entry (its key's [<key j>] when the key has no literal)
}

// picPend is the list of kept children of a slot still on the stack
// (fastSlot.ln indexes them).
type picPend struct {
	first, last int32
	h           uint8
	// html: how many records the page may draw are on each level below
	// the slot (cnt[d], d = 1..levels), for the page's cap (adopt)
	cnt []int32
}

const picPage = 1 << 12

type picView struct {
	specs  []picSpec
	scales []float64
	levels int // records kept below a stack slot
	pages  [][]picRec
	n      int32 // records allocated; 0 is no record
	free   []int32
	pend   []picPend // [0] unused
	pfree  []int32
	vals   []fastVal
	root   int32
	cut    []picCut
	// the tree
	st     *StreamTree
	most   pickle.ID
	roleOf map[int64]string // roles of memoized keys, by the key's offset
	// the page's cap (html only; cap 0 otherwise): it embeds the first cap
	// boxes in pre-order, boxes at least minW wide at scale hscale; sscale
	// and sminW are the svg's (0: none)
	cap           int
	hscale, hminW float64
	sscale, sminW float64
	before, seen  []int32 // scratch for adopt
	frames        []picFrame
}

type picFrame struct {
	i, prev int32
	d       int
}

type picCut struct {
	i int32
	d int
}

func (pv *picView) rec(i int32) *picRec { return &pv.pages[i/picPage][i%picPage] }

func (pv *picView) alloc() (int32, error) {
	if k := len(pv.free); k > 0 {
		i := pv.free[k-1]
		pv.free = pv.free[:k-1]
		return i, nil
	}
	if pv.n == math.MaxInt32 {
		return 0, fallback("too many records")
	}
	i := pv.n
	if int(i/picPage) == len(pv.pages) {
		pv.pages = append(pv.pages, make([]picRec, picPage))
	}
	pv.n++
	return i, nil
}

// release frees record i and every record below it.
func (pv *picView) release(i int32) {
	stack := []int32{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := pv.rec(j)
		for k := x.first; k != 0; k = pv.rec(k).next {
			stack = append(stack, k)
		}
		*x = picRec{}
		pv.free = append(pv.free, j)
	}
}

// keep: a node of this size may be drawn in one of the pictures (a little
// below the threshold too: layout decides).
func (pv *picView) keep(size int64) bool {
	for i, sc := range pv.scales {
		if float64(size)*sc >= pv.specs[i].minW*(1-1e-9) {
			return true
		}
	}
	return false
}

func fastPicOf(ra io.ReaderAt, size int64, name string, specs []picSpec) (*Tree, error) {
	if size <= 0 {
		return nil, fallback("empty or unknown size")
	}
	if !bare(ra) {
		return nil, fallback("not a bare pickle (compression or container magic)")
	}
	pv := &picView{specs: specs, pend: make([]picPend, 1), n: 1, roleOf: map[int64]string{}}
	pv.pages = append(pv.pages, make([]picRec, picPage))
	for _, sp := range specs {
		if sp.maxDepth > fastMaxDepth {
			return nil, fallback("pictures deeper than fastMaxDepth") // (levels are counted in a byte)
		}
		pv.scales = append(pv.scales, sp.width/float64(size))
		pv.levels = max(pv.levels, sp.maxDepth-1)
		if sp.maxNodes > 0 {
			pv.cap, pv.hscale, pv.hminW = sp.maxNodes, sp.width/float64(size), sp.minW
		} else {
			pv.sscale, pv.sminW = sp.width/float64(size), sp.minW
		}
	}
	m := &fastMachine{ra: ra, size: size, name: name, pv: pv}
	if err := m.runAll(); err != nil {
		return nil, err
	}
	if pv.root == 0 {
		return nil, fallback("no result")
	}
	return pv.tree(m)
}

// takeAll is fastMachine.takeAll for the pictures: the sizes as there, and
// a record for each item large enough, adopted by its consumer.
func (pv *picView) takeAll(m *fastMachine, from int, by *fastSlot) error {
	for i := from; i < len(m.stack); i++ {
		s := &m.stack[i]
		pos := by.count
		by.count++
		if !s.origin {
			by.self += s.self // the GET's bytes
			continue
		}
		sz := s.self + s.incl
		at := by.incl - by.fold // the display children before it: not the dict's keys
		by.incl += sz
		if by.kind == pickle.KindDict && pos%2 == 0 && isScalarKind(s.kind) {
			by.fold += sz // a key: on the dict's line
			continue
		}
		if !pv.keep(sz) {
			if s.ln != 0 { // (none: what it holds is smaller)
				pv.dropPend(s)
			}
			continue
		}
		r, err := pv.record(m, s, sz, at)
		if err != nil {
			return err
		}
		pv.role(m, pv.rec(r), by, pos, i)
		pv.adopt(by, r, s.ln)
		if s.ln != 0 {
			pv.freePend(s)
		}
	}
	m.stack = m.stack[:from]
	return nil
}

// record makes the record of the node of slot s, of size sz, at bytes
// among its siblings; it takes over the slot's kept children.
func (pv *picView) record(m *fastMachine, s *fastSlot, sz, at int64) (int32, error) {
	r, err := pv.alloc()
	if err != nil {
		return 0, err
	}
	x := pv.rec(r)
	*x = picRec{size: sz, self: s.self + s.fold, at: at, id: s.id, kind: s.kind, op: s.op}
	if s.memo {
		x.flags |= pickle.FlagMemo
	}
	if s.py2 {
		x.flags |= pickle.FlagPy2Str
	}
	switch {
	case isContainer(s.kind):
		x.cnt = s.count
	case isScalarKind(s.kind):
		x.cnt = int64(len(pv.vals))
		pv.vals = append(pv.vals, picVal(s))
	}
	if s.ln != 0 {
		p := &pv.pend[s.ln]
		x.first, x.h = p.first, p.h
	}
	return r, nil
}

// picVal is what a scalar's label needs: a str's first 41 runes (the label
// shows 40 and an ellipsis when there are more), the length of bytes.
func picVal(s *fastSlot) fastVal {
	v := valOf(s)
	if v.blob != nil {
		return v
	}
	switch v.kind {
	case pickle.KindStr:
		n := 0
		for i := range v.str {
			if n == 41 {
				v.str = strings.Clone(v.str[:i])
				break
			}
			n++
		}
	case pickle.KindBytes, pickle.KindByteArray:
		v.blob = &pickle.Blob{Len: int64(len(v.str))}
		v.str = ""
	}
	return v
}

// role sets the path segment of item pos of by (at stack[i]) in x, as
// fastMachine.role does.
func (pv *picView) role(m *fastMachine, x *picRec, by *fastSlot, pos int64, i int) {
	x.pos = pos
	switch by.kind {
	case pickle.KindSet, pickle.KindFrozenSet:
		x.rk = picSet
	case pickle.KindDict:
		if pos%2 == 0 || i <= 0 {
			x.rk = picIndex // a key that is not a scalar (objKey: the fast path gives up)
			return
		}
		key := &m.stack[i-1]
		switch {
		case !isScalarKind(key.kind):
			x.rk = picIndex // (objKey)
		case key.origin:
			x.rk, x.role = picKey, m.keyRoleAt(valOf(key), int(pos/2))
		default:
			x.rk, x.pos, x.keyKind, x.ent = picKeyRef, key.off, key.kind, int32(pos/2)
		}
	default:
		x.rk = picIndex
	}
}

// adopt appends record r (made from a slot whose kept children were
// pend, 0: none) to the kept children of slot by, first cutting off what
// would lie more than levels below by, and for the page what lies past
// its cap.
func (pv *picView) adopt(by *fastSlot, r int32, pend int32) {
	x := pv.rec(r)
	if pv.levels <= 0 {
		pv.release(r)
		return
	}
	if int(x.h) >= pv.levels {
		pv.cutBelow(r)
	}
	pi := by.ln
	if pi == 0 {
		if k := len(pv.pfree); k > 0 {
			pi = pv.pfree[k-1]
			pv.pfree = pv.pfree[:k-1]
		} else {
			pi = int32(len(pv.pend))
			pv.pend = append(pv.pend, picPend{})
		}
		if pv.cap > 0 && pv.pend[pi].cnt == nil {
			pv.pend[pi].cnt = make([]int32, pv.levels+1)
		}
		by.ln = pi
	}
	if pv.cap > 0 && !pv.capped(pi, r, pend) {
		pv.release(r)
		return
	}
	p := &pv.pend[pi]
	if p.first == 0 {
		p.first = r
	} else {
		pv.rec(p.last).next = r
	}
	p.last = r
	p.h = max(p.h, x.h+1)
}

// drawable: the page may draw a box of this size.
func (pv *picView) drawable(size int64) bool { return float64(size)*pv.hscale >= pv.hminW }

// svgKeep: the svg may draw a box of this size.
func (pv *picView) svgKeep(size int64) bool {
	return pv.sscale > 0 && float64(size)*pv.sscale >= pv.sminW*(1-1e-9)
}

// capped applies the page's cap to record r, about to become the last
// kept child of the slot of pending list pi (r's own children were pend):
// it counts r's subtree into pi's levels, and releases the records of it
// that the page cannot embed and the svg does not draw. It returns false
// when r itself goes.
//
// The page embeds the first cap boxes of layout's pre-order. A record at
// level k under the slot is preceded in that order by every record before
// it in the slot's subtree on levels 1..k that the page may draw (they lie
// as deep as their slot does plus their level, so they are drawn if it is),
// so when those are cap or more it is not embedded, nor anything below it.
// Only a subtree adopted after other kept children is walked: the first
// one keeps the ranks it had under its own slot (a few more boxes kept
// than needed, none missing).
func (pv *picView) capped(pi, r int32, pend int32) bool {
	cnt := pv.pend[pi].cnt
	L := pv.levels
	add := func(seen []int32) {
		for d := 1; d <= L; d++ {
			cnt[d] += seen[d]
		}
	}
	// before[k]: records on levels 1..k already under the slot
	if cap(pv.before) < L+1 {
		pv.before, pv.seen = make([]int32, L+1), make([]int32, L+1)
	}
	before, seen := pv.before[:L+1], pv.seen[:L+1]
	clear(seen)
	var total int32
	for d := 1; d <= L; d++ {
		total += cnt[d]
		before[d] = total
	}
	x := pv.rec(r)
	if total == 0 {
		// the first child: its own counts, a level down
		if pv.drawable(x.size) {
			seen[1]++
		}
		if pend != 0 {
			for d, c := range pv.pend[pend].cnt {
				if d >= 1 && d+1 <= L {
					seen[d+1] += c
				}
			}
		}
		add(seen)
		return true
	}
	rank := func(k int) int32 {
		v := before[k]
		for d := 1; d <= k; d++ {
			v += seen[d]
		}
		return v
	}
	if rank(1) >= int32(pv.cap) && !pv.svgKeep(x.size) {
		return false
	}
	if pv.drawable(x.size) {
		seen[1]++
	}
	fr := append(pv.frames[:0], picFrame{i: r, d: 1})
	for len(fr) > 0 {
		f := &fr[len(fr)-1]
		p := pv.rec(f.i)
		c := p.first
		if f.prev != 0 {
			c = pv.rec(f.prev).next
		}
		if c == 0 || f.d+1 > L {
			fr = fr[:len(fr)-1]
			continue
		}
		k := f.d + 1
		y := pv.rec(c)
		if rank(k) >= int32(pv.cap) && !pv.svgKeep(y.size) {
			nx := y.next
			if f.prev == 0 {
				p.first = nx
			} else {
				pv.rec(f.prev).next = nx
			}
			pv.release(c)
			continue
		}
		if pv.drawable(y.size) {
			seen[k]++
		}
		f.prev = c
		if y.first != 0 {
			fr = append(fr, picFrame{i: c, d: k})
		}
	}
	pv.frames = fr[:0]
	add(seen)
	return true
}

// cutBelow releases the records levels below r (its subtree is at most
// levels deep: it was a slot's), so that r is kept with levels-1 below it.
func (pv *picView) cutBelow(r int32) {
	stack := append(pv.cut[:0], picCut{r, 0})
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := pv.rec(c.i)
		if c.d >= pv.levels-1 {
			for k := x.first; k != 0; {
				nx := pv.rec(k).next
				pv.release(k)
				k = nx
			}
			x.first, x.h = 0, 0
			continue
		}
		for k := x.first; k != 0; k = pv.rec(k).next {
			if int(pv.rec(k).h)+c.d+1 >= pv.levels {
				stack = append(stack, picCut{k, c.d + 1})
			}
		}
		x.h = min(x.h, uint8(pv.levels-1-c.d))
	}
	pv.cut = stack[:0]
}

// dropPend releases the kept children of slot s.
func (pv *picView) dropPend(s *fastSlot) {
	for k := pv.pend[s.ln].first; k != 0; {
		nx := pv.rec(k).next
		pv.release(k)
		k = nx
	}
	pv.freePend(s)
}

func (pv *picView) freePend(s *fastSlot) {
	c := pv.pend[s.ln].cnt
	clear(c)
	pv.pend[s.ln] = picPend{cnt: c}
	pv.pfree = append(pv.pfree, s.ln)
	s.ln = 0
}

// done: STOP with the result r, always kept.
func (pv *picView) done(m *fastMachine, r *fastSlot) error {
	i, err := pv.record(m, r, r.self+r.incl, 0)
	if err != nil {
		return err
	}
	if r.ln != 0 {
		pv.freePend(r)
	}
	pv.rec(i).rk = picRoot
	pv.root = i
	return nil
}

// tree spells the roles of memoized keys (read again from the input, once
// per key) and makes the Tree the pictures draw: a store that gets a node
// for each record drawn (item), items counted by a shared run of NoIDs.
func (pv *picView) tree(m *fastMachine) (*Tree, error) {
	var most int64
	stack := []int32{pv.root}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := pv.rec(i)
		if x.rk == picKeyRef {
			r, ok := pv.roleOf[x.pos]
			if !ok {
				kn, err := m.keyNode(&fastSlot{kind: x.keyKind, off: x.pos})
				if err != nil {
					return nil, err
				}
				r = m.keyRoleAt(kn, int(x.ent))
				if r == m.keyRoleAt(kn, int(x.ent)+1) {
					// one role for every reference to the key (not one
					// spelled by its entry, [<key j>])
					pv.roleOf[x.pos] = r
				}
			}
			x.rk, x.role = picKey, r
		}
		if isContainer(x.kind) {
			most = max(most, x.cnt)
		}
		for k := x.first; k != 0; k = pv.rec(k).next {
			stack = append(stack, k)
		}
	}
	pv.roleOf = nil
	if most > math.MaxInt32 {
		return nil, fallback("a container of more than 2^31 items")
	}
	out := &pickle.Store{Index: 0, Begin: 0, End: m.size, Proto: m.proto, Root: pickle.NoID, StreamSelf: m.sself}
	pv.most = pickle.NoID
	if most > 0 {
		pv.most = out.Add(pickle.KindList, 0, 0)
		out.SetNoItems(pv.most, int(most))
	}
	st := &StreamTree{Store: out, upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root}
	t := &Tree{File: &pickle.File{Name: m.name, Size: m.size}, Total: m.size, Streams: []*StreamTree{st}}
	st.tree = t
	pv.st = st
	t.pic = pv
	return t, nil
}

// kids appends to next the drawn children of p (the boxes at least minW
// wide), as layout does from the graph.
func (pv *picView) kids(p picNode, scale, minW float64, next []picNode) []picNode {
	var c int32
	switch p.it.Kind {
	case ItemStream:
		c = pv.root
	case ItemNode:
		c = pv.rec(p.pi).first
	}
	for ; c != 0; c = pv.rec(c).next {
		x := pv.rec(c)
		if w := float64(x.size) * scale; w >= minW {
			off := p.off + x.at
			next = append(next, picNode{it: pv.item(c, p.it), depth: p.depth + 1, x: float64(off) * scale, off: off, w: w, pi: c})
		}
		if p.it.Kind == ItemStream {
			break
		}
	}
	return next
}

// item is the Item of record c under parent.
func (pv *picView) item(c int32, parent Item) Item {
	x := pv.rec(c)
	var rs string
	switch x.rk {
	case picRoot:
		rs = ppath.Root
	case picKey:
		rs = x.role
	case picSet:
		rs = role{kind: rSet, i: int(x.pos)}.str(nil)
	default:
		rs = role{kind: rIndex, i: int(x.pos)}.str(nil)
	}
	if x.node == 0 {
		out := pv.st.Store
		v := fastVal{id: x.id, kind: x.kind, op: x.op, flags: x.flags}
		if isScalarKind(x.kind) {
			v = pv.vals[x.cnt]
			v.flags = x.flags
		}
		id := v.add(out)
		if isContainer(x.kind) && x.cnt > 0 {
			out.ShareItems(id, pv.most, int(x.cnt))
		}
		x.node = int32(id) + 1
	}
	return Item{Kind: ItemNode, Stream: pv.st, Node: pickle.ID(x.node - 1), Role: rs, pl: link(parent.pl, rs), Size: x.size, Self: x.self}
}

// picServes says whether the tree can draw a picture sp from start: any
// tree but a fast picture's, which draws from its stream what it was made
// for.
func (t *Tree) picServes(start Item, sp picSpec) error {
	pv := t.pic
	if pv == nil {
		return nil
	}
	if start.Kind != ItemStream || start.Stream != pv.st {
		return errors.New("pk trace: the fast picture draws from the stream only")
	}
	for _, b := range pv.specs {
		if b.width == sp.width && b.minW == sp.minW && b.maxDepth >= sp.maxDepth && b.maxNodes >= sp.maxNodes {
			return nil
		}
	}
	return errors.New("pk trace: the fast picture was made for other options")
}
