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

// leavesNs are the --top N of --leaves the sink is checked with.
var leavesNs = []int{20, 3}

// leavesSunk prints --top n --leaves (text and JSON) of p for each n of
// leavesNs through the top sink (ok false: it gave up, or did not apply),
// with the number of roots it folded.
func leavesSunk(t *testing.T, p string) (out []byte, ok bool, folds int) {
	t.Helper()
	var b bytes.Buffer
	for _, n := range leavesNs {
		sk := &topSink{n: n, leaves: true}
		ok, err := eachTree(p, &topKeep{n: n, leaves: true}, sk, func(tr *Tree) error {
			tr.Leaves = true
			b.WriteString(topOutputs(t, tr, n))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !ok {
			return nil, false, 0
		}
		folds += sk.folds
	}
	return b.Bytes(), true, folds
}

// leavesWhole is leavesSunk from the tree of the whole store.
func leavesWhole(t *testing.T, p string) []byte {
	tr, err := slowTree(p)
	if err != nil {
		return nil
	}
	tr.Leaves = true
	var b bytes.Buffer
	for _, n := range leavesNs {
		b.WriteString(topOutputs(t, tr, n))
	}
	return b.Bytes()
}

// TestLeavesSinkCorpus: with every stream compacted early and often (a
// tiny MinCompact), --top --leaves through the top sink prints what the
// tree of the whole store prints, for every file under testdata/, or
// gives up; and it folds in many of them.
func TestLeavesSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	folded := 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			got, ok, folds := leavesSunk(t, p)
			if !ok {
				continue
			}
			if folds > 0 {
				folded++
			}
			if want := leavesWhole(t, p); want == nil {
				t.Errorf("%s (MinCompact %d): the sink answered, the whole store did not", p, min)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s (MinCompact %d): sink\n%s\nwhole store\n%s", p, min, got, want)
			}
		}
	}
	t.Logf("%d files, twice: %d runs folded and answered", len(files), folded)
	if folded < testfile.ShortDiv(40, 4) {
		t.Errorf("only %d runs folded anything", folded)
	}
}

// TestLeavesSinkTables: tables the sink folds at its own threshold, with
// rows of dicts (whose keys are no leaves), of objects (calls and their
// globals), of memo-shared strings and of 1.5 KiB strings, and a table
// under a dict key larger than any leaf: --top --leaves
// through the sink prints what the whole store prints, having folded rows.
func TestLeavesSinkTables(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"strings.pkl": stringRowsPickle(40000, 600),
		"ns.pkl":      nsRowsPickle(30000),
		"objects.pkl": objectRowsPickle(20000, ""),
		"keyed.pkl":   objectRowsPickle(20000, "rows"),
		// a key larger than any leaf, kept in the store at STOP: no leaf
		"longkey.pkl": objectRowsPickle(20000, strings.Repeat("k", 3000)),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok, folds := leavesSunk(t, p)
		if !ok || folds == 0 {
			t.Fatalf("%s: the sink did not answer (%v) or folded nothing (%d)", name, ok, folds)
		}
		if want := leavesWhole(t, p); !bytes.Equal(got, want) {
			t.Errorf("%s: sink\n%s\nwhole store\n%s", name, got, want)
		}
	}
}
