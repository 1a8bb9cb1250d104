package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// groupsOut prints --top n --group of tr (with leaves, --leaves) for n 20
// and 3, as text and JSON.
func groupsOut(tr *Tree, leaves bool) string {
	var b bytes.Buffer
	for _, n := range []int{20, 3} {
		tr.WriteGroups(&b, n, leaves, Style{ASCII: true, Bytes: true})
		tr.WriteGroupsJSON(&b, n, leaves)
	}
	return b.String()
}

// groupsSunk is groupsOut through EachGroups (ok false: the caller reads
// the file without the sink), with whether the sink folded anything.
func groupsSunk(t *testing.T, p string, leaves bool) (out string, ok, folded bool) {
	t.Helper()
	ok, err := EachGroups(p, leaves, func(tr *Tree) error {
		out = groupsOut(tr, leaves)
		folded = tr.groups != nil && len(tr.groups.gs.aggs) > 0
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return out, ok, folded
}

// TestGroupSinkCorpus: with every stream compacted early and often (a tiny
// MinCompact), --top --group through the top sink prints what the tree of
// the whole store prints, for every file under testdata/, or leaves the
// file to the read without the sink; and it folds in many of them.
func TestGroupSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	folded := 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for i, p := range files {
			leaves := i%2 == 1 // (--leaves on every second file)
			got, ok, f := groupsSunk(t, p, leaves)
			if !ok {
				continue
			}
			if f {
				folded++
			}
			tr, err := slowTree(p)
			if err != nil {
				t.Errorf("%s (MinCompact %d): the sink answered, the whole store did not: %v", p, min, err)
				continue
			}
			if want := groupsOut(tr, leaves); got != want {
				t.Errorf("%s (MinCompact %d, leaves %v): sink\n%s\nwhole store\n%s", p, min, leaves, got, want)
			}
		}
	}
	t.Logf("%d files, twice: %d answered with rows folded", len(files), folded)
	if folded < testfile.ShortDiv(40, 4) {
		t.Errorf("only %d runs folded anything", folded)
	}
}

// TestGroupSinkTables: tables the sink folds at its own threshold (rows of
// namespaces with attributes met in some rows only, of objects whose
// states are attributes, of memo-shared strings, under a dict key, two
// tables side by side, groups that tie met in the order tiedGroupsPickle
// says): --top --group through the sink prints what the whole store
// prints, having folded rows.
func TestGroupSinkTables(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"strings.pkl": stringRowsPickle(40000, 600),
		"ns.pkl":      nsRowsPickle(30000),
		"objects.pkl": objectRowsPickle(20000, ""),
		"keyed.pkl":   objectRowsPickle(20000, "rows"),
		"two.pkl":     twoTablesPickle(20000),
		"ties.pkl":    tiedGroupsPickle(20000),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, leaves := range []bool{false, true} {
			got, ok, folded := groupsSunk(t, p, leaves)
			if !ok || !folded {
				t.Fatalf("%s (leaves %v): the sink did not answer (%v) or folded nothing (%v)", name, leaves, ok, folded)
			}
			tr, err := slowTree(p)
			if err != nil {
				t.Fatal(err)
			}
			if want := groupsOut(tr, leaves); got != want {
				t.Errorf("%s (leaves %v): sink\n%s\nwhole store\n%s", name, leaves, got, want)
			}
		}
	}
}

// tiedGroupsPickle is a list of n dicts {'a': int}, then a list of n
// dicts {'z': int} (its items fold in runs of their own, so it stays in
// the store, between the outer list's runs), then n dicts {'b': int}:
// root[*][*]['z'] and root[*]['b'] take the same bytes, and the whole
// walk meets the first before the second (taking a list's groups all at
// its first run would swap them).
func tiedGroupsPickle(n int) []byte {
	b := []byte{0x80, 2, ']', '('}
	rows := func(key byte) {
		for i := 0; i < n; i++ {
			b = append(b, '}', 0x8c, 1, key, 'K', byte(i), 's')
			if i%500 == 499 {
				b = append(b, 'e', '(')
			}
		}
	}
	rows('a')
	b = append(b, ']', '(')
	rows('z')
	b = append(b, 'e', 'e', '(')
	rows('b')
	return append(b, 'e', '.')
}
