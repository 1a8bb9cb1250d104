package canon

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// corpusDirs lists the case directories under dir (shared corpus made by
// testdata/gen, and this package's own under testdata/canon).
func corpusDirs(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("%s: %v", dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func hashPath(t *testing.T, p string) string {
	t.Helper()
	r, err := HashFile(p, Options{})
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return r.Digest
}

// TestEquivCorpus: every variant in one equiv case directory hashes equal.
func TestEquivCorpus(t *testing.T) {
	for _, root := range []string{"../../testdata/equiv", "../../testdata/canon/equiv"} {
		for _, dir := range corpusDirs(t, root) {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				files, _ := filepath.Glob(filepath.Join(dir, "*.pkl"))
				if len(files) < 2 {
					t.Skip("fewer than two variants")
				}
				first := hashPath(t, files[0])
				for _, f := range files[1:] {
					if d := hashPath(t, f); d != first {
						t.Errorf("%s and %s differ:\n%s\n%s", filepath.Base(files[0]), filepath.Base(f), first, d)
					}
				}
			})
		}
	}
}

// TestDifferCorpus: a.pkl and b.pkl of every differ case hash differently.
func TestDifferCorpus(t *testing.T) {
	for _, root := range []string{"../../testdata/differ", "../../testdata/canon/differ"} {
		for _, dir := range corpusDirs(t, root) {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				a, b := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
				if _, err := os.Stat(b); err != nil {
					t.Skip("no b.pkl")
				}
				if hashPath(t, a) == hashPath(t, b) {
					what, _ := os.ReadFile(filepath.Join(dir, "what.txt"))
					t.Errorf("a and b hash equal; they differ in: %s", what)
				}
			})
		}
	}
}
