package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Options select what a walk shows.
type Options struct {
	Depth    int   // levels below the start to show; <0 unlimited
	MinSize  int64 // children smaller than this are folded into one "more" line
	SortSize bool  // children by size, largest first (default: stream order)
	All      bool  // show small scalars one by one (default: one summary line per parent)
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
	kids := t.Children(it)
	if len(kids) == 0 {
		return nil
	}
	if opt.SortSize {
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].Size > kids[j].Size })
	}
	var el Item
	el.Kind = ItemElided
	el.Stream = it.Stream
	out := kids[:0]
	for _, k := range kids {
		small := opt.MinSize > 0 && k.Size < opt.MinSize && k.Kind != ItemRef
		if !opt.All {
			if k.Kind == ItemNode && isScalar(k.Node) && k.Size < SmallScalar {
				small = true
			}
			if k.Kind == ItemRef && isScalar(k.Node) {
				small = true
			}
		}
		if opt.MinSize > 0 && k.Kind == ItemRef && opt.MinSize > 1 {
			small = small || isScalar(k.Node)
		}
		if small {
			el.Count++
			el.Size += k.Size
			el.Self += k.Size
			continue
		}
		if k.Kind == ItemRef && len(out) > 0 {
			// a run of references to one object is one line
			if p := &out[len(out)-1]; p.Kind == ItemRef && p.Node == k.Node {
				if p.Count == 0 {
					p.Count = 1
				}
				p.Count++
				p.RoleEnd = k.Role
				continue
			}
		}
		out = append(out, k)
	}
	if el.Count > 0 {
		el.Role = "…"
		el.pl = it.pl
		out = append(out, el)
	}
	return out
}

// Walk visits the tree from start in display order, depth first, with an
// explicit stack. enter is called for every shown item, leave after its
// children. References are marked Cycle when they point to an item that is
// open on the current path.
func (t *Tree) Walk(start Item, opt Options, enter, leave func(v *Visit)) {
	type frame struct {
		kids []Item
		i    int
		v    Visit
	}
	var stack []*frame
	last := []bool{}
	open := func(it Item, depth int, isLast bool) {
		if it.Kind == ItemRef && it.Node != nil {
			it.Cycle = it.Stream.onPathGet(it.Node.ID)
		}
		if depth > 0 {
			last = append(last[:depth-1], isLast)
		}
		v := Visit{Item: it, Depth: depth, Last: last[:max(depth, 0)]}
		var kids []Item
		if it.Kind != ItemRef && it.Kind != ItemElided {
			if opt.Depth < 0 || depth < opt.Depth {
				kids = t.Shown(it, opt)
			} else {
				v.Truncated = t.hasChildren(it)
			}
		}
		v.Kids = len(kids)
		if enter != nil {
			enter(&v)
		}
		if it.Kind == ItemNode {
			it.Stream.onPathSet(it.Node.ID, true)
		}
		stack = append(stack, &frame{kids: kids, v: v})
	}
	open(start, 0, true)
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		if f.i < len(f.kids) {
			k := f.kids[f.i]
			f.i++
			open(k, f.v.Depth+1, f.i == len(f.kids))
			continue
		}
		stack = stack[:len(stack)-1]
		if f.v.Kind == ItemNode {
			f.v.Stream.onPathSet(f.v.Node.ID, false)
		}
		if leave != nil {
			f.v.Last = last[:max(f.v.Depth, 0)]
			leave(&f.v)
		}
	}
}

func (st *StreamTree) onPathSet(id int32, v bool) {
	if st.onPath == nil {
		st.onPath = make([]bool, len(st.S.All))
	}
	st.onPath[id] = v
}

func (st *StreamTree) onPathGet(id int32) bool {
	return st.onPath != nil && st.onPath[id]
}

// hasChildren reports whether it has any display child, without building them.
func (t *Tree) hasChildren(it Item) bool {
	switch it.Kind {
	case ItemFile, ItemStream:
		return true
	case ItemNode:
		n := it.Node
		return len(n.Items) > 0 || (n.X != nil && (n.X.Func != nil || len(n.X.Muts) > 0)) || len(it.Stream.attach[n.ID]) > 0
	case ItemPart:
		return it.part.pickle != nil
	}
	return false
}

// Find returns the item at path (as printed in the tree or by --top).
func (t *Tree) Find(path string) (Item, error) {
	path = strings.TrimSpace(path)
	it := t.Root()
	for {
		if it.Kind != ItemFile && it.Path() == path {
			return it, nil
		}
		var best *Item
		kids := t.Children(it)
		for i := range kids {
			k := &kids[i]
			if k.Kind == ItemElided || (k.Kind == ItemPart && k.pl == nil && k.part.pickle == nil) || k.PathLen() > len(path) || !strings.HasPrefix(path, k.Path()) {
				continue
			}
			if best == nil || k.PathLen() > best.PathLen() {
				best = k
			}
		}
		if best == nil || (best.PathLen() == it.PathLen() && it.Kind != ItemFile && it.Kind != ItemPart) {
			return Item{}, fmt.Errorf("no object at path %q (paths look like root['key'][3].args[0]; see --top)", path)
		}
		if best.Kind == ItemRef {
			if best.Path() == path {
				return *best, nil
			}
			return Item{}, fmt.Errorf("%s is a reference to #%d, built at %s: use that path", best.Path(), best.Node.ID, t.PathOf(best.Stream, best.Node))
		}
		it = *best
	}
}

// Top returns the n largest objects (inclusive size), largest first, ties in
// stream order.
func (t *Tree) Top(n int) []Item {
	if n <= 0 {
		return nil
	}
	if t.fast != nil && t.fast.n == n {
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
		for id, sz := range st.Incl {
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
		nd := st.S.All[e.id]
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
func Human(n int64) string {
	if n < 1024 {
		return itoa(n) + " B"
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= 1024
		if f < 1024 || u == "PiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
	}
	return itoa(n) + " B"
}

// IsScalar reports whether n is shown as a leaf value.
func IsScalar(n *pickle.Node) bool { return isScalar(n) }
