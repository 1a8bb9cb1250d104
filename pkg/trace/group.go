package trace

import (
	"bufio"
	"io"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// --top --group and --top --leaves (docs/pk-trace.md, "Finding the fat").
//
// A group is every object whose path is the same once list and tuple
// indexes, set positions and non-scalar keys are replaced by a star:
// root[*]['name'] is the 'name' of every row of a table. Groups are ranked
// by the bytes of all their members; they nest (root[*] holds
// root[*]['name']), so their sizes do not add up to the file, each says
// what its members take.

// Group is one row of --top --group.
type Group struct {
	Pattern string // the path with [*] for indexes
	Code    string // the members' type code ("*" when they differ)
	Label   string // the members' label when they all have the same one
	Count   int64
	Size    int64 // inclusive bytes of all members
	Self    int64
}

// starRole generalises a path step: [3] -> [*], {#3} -> {#*}, <key 3> ->
// <key *>, [<key 3>] -> [<key *>], <popped 3> -> <popped *>; dict keys
// and attributes stay.
func starRole(r string) string {
	switch {
	case len(r) > 1 && r[0] == '[' && (r[1] >= '0' && r[1] <= '9' || r[1] == '-') && strings.IndexByte(r, ',') < 0:
		return "[*]"
	case strings.HasPrefix(r, "{#"):
		return "{#*}"
	case strings.HasPrefix(r, "[<key "):
		return "[<key *>]"
	case strings.HasSuffix(r, ">"):
		// <popped 3>, also after a stream's head: root<popped 3>
		if i := strings.LastIndexByte(r, '<'); i >= 0 {
			if sp := strings.IndexByte(r[i:], ' '); sp > 0 {
				return r[:i+sp] + " *>"
			}
		}
	}
	return r
}

// isLeaf: an object that holds no other (scalars, empty containers,
// containers of references only); raw container parts are leaves too.
func (t *Tree) isLeaf(it Item) bool {
	switch it.Kind {
	case ItemNode:
		st := it.Stream
		id := it.Node
		return !st.ownsAny(id) && len(st.attach[id]) == 0
	case ItemPart:
		return it.part.pickle == nil && !it.part.ref
	}
	return false
}

// Groups returns the n largest groups (leaves: of leaf objects only).
func (t *Tree) Groups(n int, leaves bool) []Group {
	if t.groups != nil {
		leaves = t.groups.gs.leaves      // (a tree EachGroups made answers for what it was read for)
		t.groups.taken = map[int32]int{} // (each walk takes the folded runs' groups anew)
	}
	idx := map[string]int{}
	var gs []Group
	// the pattern and path link of the open item at each depth: an item's
	// pattern is its path's with every step starred, made from the
	// pattern of the item its path link extends (its parent's, or for an
	// attribute its grandparent's)
	type open struct {
		pat string
		pl  *pathLink
	}
	var pats []open
	t.Walk(t.Root(), Options{Depth: -1, All: true}, func(v *Visit) {
		base := open{}
		if v.Depth > 0 && v.Depth-1 < len(pats) {
			base = pats[v.Depth-1]
			if v.pl != nil && v.pl != base.pl && v.pl.up != base.pl && v.Depth > 1 && pats[v.Depth-2].pl == v.pl.up {
				base = pats[v.Depth-2]
			}
		}
		p := base.pat
		if v.pl != nil && v.pl != base.pl {
			p += starRole(v.pl.role)
		}
		pats = append(pats[:min(v.Depth, len(pats))], open{p, v.pl})
		if v.Kind != ItemNode && (v.Kind != ItemPart || v.part.ref || v.part.pickle != nil) {
			return
		}
		if t.groups != nil && v.Kind == ItemNode && v.Stream != nil {
			// a run the top sink folded: its list's groups first met by
			// one of its rows, each with all its folded members
			if run, ok := t.groups.run(v.Stream, v.Node); ok {
				for _, a := range run {
					key := base.pat + a.rel
					i, ok := idx[key]
					if !ok {
						i = len(gs)
						idx[key] = i
						gs = append(gs, Group{Pattern: key, Code: a.Code, Label: a.Label})
					}
					gs[i].add(a.Code, a.Label, a.Count, a.Size, a.Self)
				}
				return
			}
		}
		if leaves && !t.isLeaf(v.Item) {
			return
		}
		key := p
		if v.Kind == ItemPart && v.pl == nil {
			key = "(part) " + t.Label(v.Item)
		}
		i, ok := idx[key]
		code, label := t.codeLabel(v.Item)
		if !ok {
			i = len(gs)
			idx[key] = i
			gs = append(gs, Group{Pattern: key, Code: code, Label: label})
		}
		gs[i].add(code, label, 1, v.Size, v.Self)
	}, nil)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Size > gs[j].Size })
	if len(gs) > n {
		gs = gs[:n]
	}
	return gs
}

// WriteGroups prints the n largest groups, one a line:
//
//	RANK  SIZE  SHARE  ×COUNT  CODE PATTERN  LABEL or "AVG each"
func (t *Tree) WriteGroups(w io.Writer, n int, leaves bool, sty Style) error {
	bw := bufio.NewWriter(w)
	width := 10
	if sty.Bytes {
		width = 12
	}
	var line lineBuf
	for i, g := range t.Groups(n, leaves) {
		line.Reset()
		pad(&line, itoa(int64(i+1))+".", 4)
		line.WriteByte(' ')
		line.padSize(sty, g.Size, width)
		line.WriteByte(' ')
		line.padPct(g.Size, t.Total)
		line.WriteString("  ×")
		c := commas(g.Count)
		line.WriteString(c)
		for k := len([]rune(c)); k < 10; k++ {
			line.WriteByte(' ')
		}
		line.WriteString(" ")
		line.paint(cCode, g.Code)
		line.WriteByte(' ')
		line.paint(cPath, g.Pattern)
		line.WriteString("  ")
		if g.Count > 1 {
			line.WriteString(avg(g.Size, g.Count, sty) + " each")
			if g.Label != "" {
				line.WriteString(", all " + g.Label)
			}
		} else {
			line.WriteString(g.Label)
		}
		line.WriteByte('\n')
		if sty.ASCII {
			bw.WriteString(asciiOnly(line.String()))
		} else {
			bw.WriteString(line.String())
		}
	}
	return bw.Flush()
}

// WriteGroupsJSON writes the n largest groups as JSON Lines: the summary
// record, then a record a group, largest first.
func (t *Tree) WriteGroupsJSON(w io.Writer, n int, leaves bool) error {
	b := bufio.NewWriter(w)
	t.jsonSummary(b)
	for i, g := range t.Groups(n, leaves) {
		t.jsonHead(b)
		b.WriteString(`,"record":"group"`)
		jsonInt(b, "rank", int64(i+1))
		b.WriteString(`,"path":`)
		jsonStr(b, g.Pattern)
		b.WriteString(`,"code":`)
		jsonStr(b, g.Code)
		if g.Label != "" {
			b.WriteString(`,"label":`)
			jsonStr(b, g.Label)
		}
		b.WriteString(`,"count":` + itoa(g.Count) + `,"size":` + itoa(g.Size) + `,"self":` + itoa(g.Self) + "}\n")
	}
	return b.Flush()
}

// foldedKeys marks the nodes shown on their owner's line (scalar dict keys,
// global name parts), which are no objects of their own for --leaves.
func (st *StreamTree) foldedKeys() []bool {
	s := st.Store
	keys := make([]bool, s.Len())
	for n := range pickle.ID(s.Len()) {
		if k := s.Kind(n); k != pickle.KindDict && k != pickle.KindGlobal && s.NMuts(n) == 0 {
			continue
		}
		eachChild(s, n, func(c pickle.ID, r role, folded bool) bool {
			if folded && s.Owner(c) == n {
				keys[c] = true
			}
			return true
		})
	}
	return keys
}
