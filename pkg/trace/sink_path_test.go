package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// pathViews prints what pk trace --path p prints in its views (the
// default view at two budgets, the whole tree from the object, sorted by
// size and with --all, to a depth above a size, its JSON, the pictures),
// or the lookup's error or element line.
func pathViews(tr *Tree, p string) string {
	it, said, ok := lookedUp(tr, p)
	if !ok {
		return said
	}
	var b bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	tr.WriteBounded(&b, it, DefaultLines, sty)
	tr.WriteBounded(&b, it, 5, sty)
	tr.WriteText(&b, it, Options{Depth: -1}, sty)
	tr.WriteText(&b, it, Options{Depth: -1, SortSize: true, All: true}, sty)
	tr.WriteText(&b, it, Options{Depth: 2, MinSize: 16}, sty)
	tr.WriteJSON(&b, it, Options{Depth: -1})
	tr.WriteSVG(&b, it, SVGOptions{})
	tr.WriteHTML(&b, it, HTMLOptions{})
	return b.String()
}

// lookedUp is the object at p in tr, or (ok false) what the lookup says
// instead: its error, or the element line of an element of an array.
func lookedUp(tr *Tree, p string) (it Item, said string, ok bool) {
	it, elem, err := tr.FindElement(p)
	if err != nil {
		return it, "error: " + err.Error(), false
	}
	if elem != nil {
		return it, "element: " + elem.Line(), false
	}
	return it, "", true
}

// pathsOf lists paths of tr to look up: those of its objects (at most
// most, spread over the tree), each also one index past its end.
func pathsOf(tr *Tree, most int) []string {
	var all []string
	tr.Walk(tr.Root(), Options{Depth: -1, All: true}, func(v *Visit) {
		if v.Kind == ItemNode {
			if p := v.Path(); p != "" {
				all = append(all, p)
			}
		}
	}, nil)
	var out []string
	step := max(1, len(all)/most)
	for i := 0; i < len(all); i += step {
		out = append(out, all[i])
	}
	if len(all) > 0 {
		out = append(out, all[len(all)-1], all[len(all)-1]+"[99999999]")
	}
	return out
}

// boundedAt is the default view of lines lines from the object at p, or
// the lookup's error or element line.
func boundedAt(tr *Tree, p string, lines int) string {
	it, said, ok := lookedUp(tr, p)
	if !ok {
		return said
	}
	var b bytes.Buffer
	tr.WriteBounded(&b, it, lines, Style{ASCII: true, Bytes: true})
	return b.String()
}

// pathSunk is pathViews of p through EachPath (with lines > 0, boundedAt
// of that many lines through the default view's sink; ok false: the
// caller would read the file without the sink), with the number of reads
// it took.
func pathSunk(t *testing.T, file, p string, lines int) (out string, ok bool, reads int) {
	t.Helper()
	ok, reads, err := eachPath(file, p, lines, nil, func(tr *Tree) error {
		if lines > 0 {
			out = boundedAt(tr, p, lines)
		} else {
			out = pathViews(tr, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s --path %s: %v", file, p, err)
	}
	return out, ok, reads
}

// TestPathSinkCorpus: with every stream compacted early and often (a tiny
// MinCompact), --path P through the top sink prints, in every view, what
// the tree of the whole store prints, for paths spread over every file
// under testdata/ (and elements of arrays, tensors and frames; under
// -short, compactions at 4 records only), or leaves the file to the read
// without the sink; it
// answers many of them, some on a second read that keeps the row at P.
func TestPathSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	answered, second, bounded := 0, 0, 0
	mins := []int{4, 64}
	if testing.Short() {
		mins = mins[:1] // (make test: compactions at 4 records only)
	}
	for _, min := range mins {
		pickle.MinCompact = min
		for _, f := range files {
			tr, err := slowTree(f)
			if err != nil {
				continue
			}
			paths := pathsOf(tr, 5)
			if strings.Contains(f, "/arrays/") || strings.Contains(f, "/tensors/") || strings.Contains(f, "/frames/") {
				// elements of arrays and tensors, cells of frames
				for _, p := range paths {
					paths = append(paths, p+"[0]", p+"[1, 2]")
				}
			}
			for _, p := range paths {
				got, ok, reads := pathSunk(t, f, p, 0)
				if ok {
					answered++
					if reads > 1 {
						second++
					}
					if want := pathViews(tr, p); got != want {
						t.Errorf("%s --path %s (MinCompact %d, %d reads): sink\n%s\nwhole store\n%s", f, p, min, reads, got, want)
					}
				}
				// the default view through its sink (7 lines: rows cut short)
				got, ok, reads = pathSunk(t, f, p, 7)
				if ok {
					bounded++
					if want := boundedAt(tr, p, 7); got != want {
						t.Errorf("%s --path %s --lines 7 (MinCompact %d, %d reads): sink\n%s\nwhole store\n%s", f, p, min, reads, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d files, %d compaction sizes: %d paths answered through the sink, %d of them on a second read; %d default views", len(files), len(mins), answered, second, bounded)
	if answered < testfile.ShortDiv(400, 4) || second < testfile.ShortDiv(40, 4) {
		t.Errorf("only %d paths answered, %d on a second read", answered, second)
	}
}

// TestPathSinkTables: tables the sink folds at its own threshold (rows of
// namespaces, of objects, of memo-shared strings; a table under a dict
// key): a row and a value in a row print what the whole
// store prints, on a second read that keeps only that row whole; the
// table itself and a path past its end are left to the read without the
// sink.
func TestPathSinkTables(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		data  []byte
		paths []string // answered on a second read
	}{
		{"ns.pkl", nsRowsPickle(30000), []string{"root[5]", "root[997]", "root[20000]", "root[1009].pair", "root[997].note"}},
		{"objects.pkl", objectRowsPickle(20000, ""), []string{"root[7]", "root[15000].tags"}},
		{"keyed.pkl", objectRowsPickle(20000, "rows"), []string{"root['rows'][12345]"}},
		{"strings.pkl", stringRowsPickle(40000, 600), []string{"root[20000]"}},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := slowTree(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range c.paths {
			got, ok, reads := pathSunk(t, p, q, 0)
			if !ok || reads != 2 {
				t.Errorf("%s --path %s: answered %v in %d reads, want a second read", c.name, q, ok, reads)
				continue
			}
			if want := pathViews(tr, q); got != want {
				t.Errorf("%s --path %s: sink\n%s\nwhole store\n%s", c.name, q, got, want)
			}
			if strings.HasPrefix(got, "error") {
				t.Errorf("%s --path %s: %s", c.name, q, got)
			}
		}
		for _, q := range []string{"root", "root[99999999]"} {
			if _, ok, _ := pathSunk(t, p, q, 0); ok {
				t.Errorf("%s --path %s: answered through the sink", c.name, q)
			}
		}
		// the default view of the table itself, every row below it: on
		// the first read, through the default view's sink
		q := "root"
		if c.name == "keyed.pkl" {
			q = "root['rows']"
		}
		for _, lines := range []int{DefaultLines, 7} {
			got, ok, reads := pathSunk(t, p, q, lines)
			if !ok || reads != 1 {
				t.Errorf("%s --path %s --lines %d: answered %v in %d reads, want the first", c.name, q, lines, ok, reads)
			} else if want := boundedAt(tr, q, lines); got != want {
				t.Errorf("%s --path %s --lines %d: sink\n%s\nwhole store\n%s", c.name, q, lines, got, want)
			}
		}
	}
	// two tables, the second's rows larger: the default view's heap holds
	// the second's best, so the view of the first is not the sink's to give
	p := filepath.Join(dir, "two.pkl")
	if err := os.WriteFile(p, twoTablesPickle(20000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"root['a']", "root['b']"} {
		if _, ok, _ := pathSunk(t, p, q, 7); ok {
			t.Errorf("two.pkl --path %s --lines 7: answered through the sink, with rows folded beside it", q)
		}
	}
}

// twoTablesPickle is {'a': n small dicts, 'b': n dicts of a 20-byte str}.
func twoTablesPickle(n int) []byte {
	b := []byte{0x80, 2, '}', '('}
	table := func(key string, big bool) {
		b = append(b, 0x8c, byte(len(key)))
		b = append(b, key...)
		b = append(b, ']')
		for i := 0; i < n; i++ {
			if i%500 == 0 {
				b = append(b, '(')
			}
			b = append(b, '}', 0x8c, 1, 'x')
			if big {
				b = append(b, 0x8c, 20)
				b = append(b, bytes.Repeat([]byte{'a' + byte(i%26)}, 20)...)
			} else {
				b = append(b, 'K', byte(i%7))
			}
			b = append(b, 's')
			if i%500 == 499 || i == n-1 {
				b = append(b, 'e')
			}
		}
	}
	table("a", false)
	table("b", true)
	return append(b, 'u', '.')
}
