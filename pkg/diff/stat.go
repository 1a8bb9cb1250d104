package diff

import (
	"fmt"
	"github.com/pk-tools/pk/pkg/jsonl"
	ppath "github.com/pk-tools/pk/pkg/path"
	"io"
	"strings"
	"unicode/utf8"
)

// Stat is the summary --stat prints: how many differences of each kind,
// and how many under each top-level path, as git diff --stat does for files.
type Stat struct {
	Differences int        `json:"differences"`
	Kinds       []KindStat `json:"kinds"`
	Paths       []PathStat `json:"paths"`
}

// KindStat counts the entries of one kind.
type KindStat struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// PathStat counts the entries under one top-level path, by kind (in the
// order of Stat.Kinds).
type PathStat struct {
	Path  string     `json:"path"`
	Count int        `json:"count"`
	Kinds []KindStat `json:"kinds"`
}

// kindOrder is the order of the kind columns; other kinds follow in the
// order they first appear.
var kindOrder = []string{Changed, Added, Removed, TypeChanged, AliasChanged}

// Stat counts r's entries by kind and by top-level path (TopPath), paths
// in the order they first appear.
func (r *Result) Stat() Stat {
	var st Stat
	kinds := map[string]int{}
	var extra []string
	paths := map[string]int{} // index in st.Paths
	perPath := []map[string]int{}
	for _, e := range r.Entries {
		if _, ok := kinds[e.Kind]; !ok && !known(e.Kind) {
			extra = append(extra, e.Kind)
		}
		kinds[e.Kind]++
		tp := TopPath(e.Path)
		i, ok := paths[tp]
		if !ok {
			i = len(st.Paths)
			paths[tp] = i
			st.Paths = append(st.Paths, PathStat{Path: tp})
			perPath = append(perPath, map[string]int{})
		}
		st.Paths[i].Count++
		perPath[i][e.Kind]++
	}
	st.Differences = len(r.Entries)
	order := append(append([]string{}, kindOrder...), extra...)
	for _, k := range order {
		if kinds[k] > 0 {
			st.Kinds = append(st.Kinds, KindStat{k, kinds[k]})
		}
	}
	for i := range st.Paths {
		st.Paths[i].Kinds = []KindStat{}
		for _, k := range order {
			if n := perPath[i][k]; n > 0 {
				st.Paths[i].Kinds = append(st.Paths[i].Kinds, KindStat{k, n})
			}
		}
	}
	if st.Kinds == nil {
		st.Kinds = []KindStat{}
	}
	if st.Paths == nil {
		st.Paths = []PathStat{}
	}
	return st
}

func known(k string) bool {
	for _, x := range kindOrder {
		if x == k {
			return true
		}
	}
	return false
}

// TopPath cuts an entry's path after its first step below the head (read
// by pkg/path): root['key'], root.attr, stream[1]['key'], part['name'];
// the items of a list or tuple (root[3], a run root[10:400]) are one row,
// root[*], and so are the effects, root<effect *>.
func TopPath(p string) string {
	ps, err := ppath.Parse(p)
	if err != nil || len(ps) < 2 {
		return p
	}
	head, first := ps[0].String(), ps[1]
	switch first.Kind {
	case ppath.SKey:
		if first.Value.Kind == ppath.KInt {
			return head + "[*]"
		}
	case ppath.SSlice:
		return head + "[*]"
	case ppath.SPseudo, ppath.SPseudoSpan:
		if first.Name == "effect" {
			return head + "<effect *>"
		}
	case ppath.SAttr:
		if first.Name == "__dict__" && len(ps) > 2 && ps[2].Kind == ppath.SKey {
			return ps[:3].String() // .__dict__['not an identifier']
		}
	}
	return ps[:2].String()
}

// WriteStat writes the --stat table: one row per top-level path with its
// counts by kind, then a summary line with the counts by kind. max limits
// the rows (0: all); the rest are counted on one line.
func (r *Result) WriteStat(w io.Writer, max int) {
	if r.Same {
		r.WriteText(w, max)
		return
	}
	st := r.Stat()
	rows := st.Paths
	if max > 0 && len(rows) > max {
		rows = rows[:max]
	}
	width := 0
	for _, p := range rows {
		width = maxInt(width, utf8.RuneCountInString(p.Path))
	}
	const widest = 60
	if width > widest {
		width = widest
	}
	for _, p := range rows {
		path := p.Path
		if n := utf8.RuneCountInString(path); n > widest {
			path = string([]rune(path)[:widest-1]) + "…"
		}
		fmt.Fprintf(w, " %s%s | %s\n", path, strings.Repeat(" ", width-utf8.RuneCountInString(path)), kindList(p.Kinds))
	}
	if left := st.Paths[len(rows):]; len(left) > 0 {
		n := 0
		for _, p := range left {
			n += p.Count
		}
		fmt.Fprintf(w, " … %s more top-level path%s (%s difference%s; use --max)\n", Thousands(int64(len(left))), plural(len(left)), Thousands(int64(n)), plural(n))
	}
	fmt.Fprintf(w, "%s and %s differ: %s difference%s (%s) in %s top-level path%s\n", r.A, r.B,
		Thousands(int64(st.Differences)), plural(st.Differences), kindList(st.Kinds), Thousands(int64(len(st.Paths))), plural(len(st.Paths)))
}

func kindList(ks []KindStat) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = Thousands(int64(k.Count)) + " " + k.Kind
	}
	return strings.Join(parts, ", ")
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// WriteStatJSON writes the --stat --json record (docs/schema/diff.schema.json):
// the verdict, both digests and the counts, as one line.
func (r *Result) WriteStatJSON(w io.Writer) error {
	st := r.Stat()
	type record struct {
		A       string `json:"a"`
		B       string `json:"b"`
		Record  string `json:"record"`
		Same    bool   `json:"same"`
		DigestA string `json:"digest_a"`
		DigestB string `json:"digest_b"`
		Stat
	}
	return jsonl.NewEncoder(w).Encode(record{A: r.A, B: r.B, Record: "stat", Same: r.Same, DigestA: r.DigestA, DigestB: r.DigestB, Stat: st})
}
