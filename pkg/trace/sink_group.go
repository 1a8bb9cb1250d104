package trace

import (
	"encoding/binary"

	"github.com/pk-tools/pk/pkg/pickle"
)

// --top N --group through the top sink (docs/pk-trace.md, "The top sink").
//
// A group is the objects of one path pattern (root[*]['name']), ranked by
// the bytes of all its members, ties in the order the groups were first
// met in the walk of the whole tree (Groups). When a row of a list folds,
// its subtree is walked at once as Groups walks it, from a link that
// stands for the list's path, and each object is added to a group of the
// list (the list's creation number) and of the pattern below the list
// ([*] and what the row's roles make of the rest), with the sequence
// number of the row that met it first. At STOP, Groups walks the tree of
// what is left; where it meets a folded run it adds, in the order they
// were made, the list's groups first met by one of the run's rows, each
// with every member it has in every run (counts, bytes, and the code and
// label they share: sums and agreements, in any order), after the list's
// own pattern. So the groups are made in the whole walk's order, and hold
// what it would count.
//
// A row whose walk reaches a path link above the row (the grandparent
// rule of an attribute) is not folded. With --leaves, only the objects
// that own no other are members (isLeaf: what a row owns is known as it
// folds).

// groupSink holds the groups of the rows folded.
type groupSink struct {
	leaves bool             // --leaves: only objects that own no other
	t      *Tree            // the row walks' (Total)
	idx    map[string]int32 // by list number and pattern below the list
	aggs   []sunkGroup      // in the order made
	rows   rowRoles         // the roles of the rows in their lists, in a compaction
	// scratch of a row's walk: the patterns open, the members met
	pats []sunkPat
	row  []sunkMember
	key  []byte
}

// sunkGroup is the members of one group of one list that folded rows
// hold.
type sunkGroup struct {
	list  int32  // the list's creation number
	first int32  // the sequence number of the row that met it first
	rel   string // the pattern below the list
	Group        // Pattern unset
}

type sunkPat struct {
	pat string
	pl  *pathLink
}

type sunkMember struct {
	pat, code, label string
	size, self       int64
}

func newGroupSink(total int64, leaves bool) *groupSink {
	return &groupSink{leaves: leaves, t: &Tree{Total: total}, idx: map[string]int32{}}
}

// compaction starts the rows of a compaction: the store's IDs change.
func (gs *groupSink) compaction() { gs.rows.reset() }

// add walks root r, an item of list p (number list) in st, into the
// groups, as row seq; false when it must not fold (nothing is added).
// owns tells whether a node of st owns another.
func (gs *groupSink) add(st *StreamTree, r, p pickle.ID, list, seq int32, owns func(pickle.ID) bool) bool {
	s := st.Store
	rl, ok := gs.rows.of(s, p, r)
	if !ok {
		return false
	}
	rs := rl.str(s)
	base := &pathLink{}
	row := link(base, rs)
	gs.pats = append(gs.pats[:0], sunkPat{"", base})
	gs.row = gs.row[:0]
	t := gs.t
	st.tree = t
	t.walk(st.nodeItem(r, rs, row), Options{Depth: -1, All: true}, func(v *Visit) {
		if !ok {
			return
		}
		if v.pl == nil || !reaches(v.pl, row) {
			ok = false
			return
		}
		// Groups' pattern of v, at a depth one more than the walk's
		// (the list is at 0)
		d := v.Depth + 1
		if d-1 >= len(gs.pats) {
			ok = false
			return
		}
		b := gs.pats[d-1]
		if v.pl != b.pl && v.pl.up != b.pl && d > 1 && gs.pats[d-2].pl == v.pl.up {
			b = gs.pats[d-2]
		}
		pat := b.pat
		if v.pl != b.pl {
			pat += starRole(v.pl.role)
		}
		gs.pats = append(gs.pats[:d], sunkPat{pat, v.pl})
		if v.Kind != ItemNode || gs.leaves && owns(v.Node) {
			return
		}
		code, label := t.codeLabel(v.Item)
		gs.row = append(gs.row, sunkMember{pat, code, label, v.Size, v.Self})
	}, nil, false)
	st.tree = nil
	if !ok {
		return false
	}
	for _, m := range gs.row {
		gs.key = binary.AppendVarint(gs.key[:0], int64(list))
		gs.key = append(gs.key, m.pat...)
		i, seen := gs.idx[string(gs.key)]
		if !seen {
			i = int32(len(gs.aggs))
			gs.idx[string(gs.key)] = i
			gs.aggs = append(gs.aggs, sunkGroup{list: list, first: seq, rel: m.pat, Group: Group{Code: m.code, Label: m.label}})
		}
		gs.aggs[i].add(m.code, m.label, 1, m.size, m.self)
	}
	return true
}

// add counts n members of code and label, size and self bytes, into g as
// Groups counts a member.
func (g *Group) add(code, label string, n, size, self int64) {
	g.Count += n
	g.Size += size
	g.Self += self
	if g.Code != code {
		g.Code = "*"
	}
	if g.Label != label {
		g.Label = ""
	}
}

// settle checks, at STOP, that every group's first row is in a run of its
// list in st (runs: foldedRuns; gone: settle's), and lists each list's
// groups in the order made, for Groups to take run by run.
func (gs *groupSink) settle(st *StreamTree, runs runTab, gone []uint8) (map[int32][]int32, bool) {
	by := map[int32][]int32{}
	for i := range gs.aggs {
		a := &gs.aggs[i]
		ra, _, ok := runs.of(st.Store, a.first, gone)
		if !ok || st.num[ra.list] != a.list {
			return nil, false
		}
		by[a.list] = append(by[a.list], int32(i))
	}
	return by, true
}

// sunkGroups is what Groups takes from the group sink at STOP: each list's
// groups in the order made, and how many of them it has taken.
type sunkGroups struct {
	gs    *groupSink
	by    map[int32][]int32
	taken map[int32]int
}

// run returns the groups of the list of run x of st first met by one of
// its rows, in the order made (nil when x is no run of the group sink).
func (sg *sunkGroups) run(st *StreamTree, x pickle.ID) ([]*sunkGroup, bool) {
	s := st.Store
	if x < 0 || s.Kind(x) != pickle.KindFolded {
		return nil, false
	}
	off, n, _, _ := s.FoldedRun(x)
	list := st.num[s.Owner(x)]
	ids := sg.by[list]
	k := sg.taken[list]
	var out []*sunkGroup
	for ; k < len(ids) && int64(sg.gs.aggs[ids[k]].first) < off+int64(n); k++ {
		out = append(out, &sg.gs.aggs[ids[k]])
	}
	sg.taken[list] = k
	return out, true
}
