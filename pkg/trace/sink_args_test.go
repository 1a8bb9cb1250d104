package trace

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestArgsSink: --top of every cloudpickle and dill fixture, text and
// JSON, is the same with the code objects' arguments folded at their
// REDUCE (sink_args.go) as without, and the fold answers for most of them
// itself (without reading the file again). Without the callable's owner
// kept at the call's new ID (pickle's foldArgs) the sizes of code objects
// and of the node after them differ in 36 of the 108 runs.
func TestArgsSink(t *testing.T) {
	files := codeFixtures(t)
	write := func(tr *Tree, n int, js bool) string {
		out, err := writeTop(tr, n, js)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	defer func(v bool) { noArgs = v }(noArgs)
	answered := 0
	for _, p := range files {
		for _, n := range []int{3, 20} {
			for _, js := range []bool{false, true} {
				noArgs = true
				var want string
				if ok, err := EachTop(p, n, false, func(tr *Tree) error { want = write(tr, n, js); return nil }); !ok || err != nil {
					t.Fatalf("%s: %v %v", p, ok, err)
				}
				noArgs = false
				sk := &topSink{n: n}
				var got string
				ok, err := eachTree(p, &topKeep{n: n}, sk, func(tr *Tree) error { got = write(tr, n, js); return nil })
				if err != nil {
					t.Fatal(err)
				}
				if ok && sk.args != nil {
					answered++
				}
				if !ok {
					if _, err := EachTop(p, n, false, func(tr *Tree) error { got = write(tr, n, js); return nil }); err != nil {
						t.Fatal(err)
					}
				}
				if got != want {
					t.Errorf("%s --top %d (json %v), folded %v:\n%s\nwant\n%s", p, n, js, sk.args != nil, got, want)
				}
			}
		}
	}
	if answered < len(files) {
		t.Errorf("the fold answered %d of %d runs", answered, 4*len(files))
	}
	t.Logf("the fold answered %d of %d runs", answered, 4*len(files))
	_ = pickle.NoID
}

// codeFixtures lists the cloudpickle and dill fixtures (the code-carrying
// inputs the --top sink folds), at least 20 of them.
func codeFixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, d := range []string{"cloudpickle", "dill"} {
		m, _ := filepath.Glob(filepath.Join("../../testdata/fixtures", d, "*.pkl"))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d fixtures", len(files))
	}
	return files
}

// writeTop is --top n of tr, as text (no colour) or JSON.
func writeTop(tr *Tree, n int, js bool) (string, error) {
	var b bytes.Buffer
	var err error
	if js {
		err = tr.WriteTopJSON(&b, n)
	} else {
		err = tr.WriteTop(&b, n, Style{})
	}
	return b.String(), err
}
