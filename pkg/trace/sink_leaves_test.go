package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	sinkCorpus(t, func(_ int, p string) ([]byte, bool, bool) {
		got, ok, folds := leavesSunk(t, p)
		return got, ok, folds > 0
	}, func(_ int, p string) []byte { return leavesWhole(t, p) })
}

// TestLeavesSinkTables: tables the sink folds at its own threshold, with
// rows of dicts (whose keys are no leaves), of objects (calls and their
// globals), of memo-shared strings and of 1.5 KiB strings, and a table
// under a dict key larger than any leaf: --top --leaves
// through the sink prints what the whole store prints, having folded rows.
func TestLeavesSinkTables(t *testing.T) {
	dir := t.TempDir()
	files := sinkTables()
	// a key larger than any leaf, kept in the store at STOP: no leaf
	files["longkey.pkl"] = objectRowsPickle(20000, strings.Repeat("k", 3000))
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
