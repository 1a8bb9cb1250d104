package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
	// (--leaves on every second file)
	sinkCorpus(t, func(i int, p string) ([]byte, bool, bool) {
		got, ok, folded := groupsSunk(t, p, i%2 == 1)
		return []byte(got), ok, folded
	}, func(i int, p string) []byte {
		tr, err := slowTree(p)
		if err != nil {
			return nil
		}
		return []byte(groupsOut(tr, i%2 == 1))
	})
}

// TestGroupSinkTables: tables the sink folds at its own threshold (rows of
// namespaces with attributes met in some rows only, of objects whose
// states are attributes, of memo-shared strings, under a dict key, two
// tables side by side, groups that tie met in the order tiedGroupsPickle
// says): --top --group through the sink prints what the whole store
// prints, having folded rows.
func TestGroupSinkTables(t *testing.T) {
	dir := t.TempDir()
	files := sinkTables()
	files["two.pkl"] = twoTablesPickle(20000)
	files["ties.pkl"] = tiedGroupsPickle(20000)
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
