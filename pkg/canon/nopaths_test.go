package canon

import (
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestNoPathsTotals: with NoPaths (pk hash without --explain, pk diff) every
// corpus file hashes to the same digest, and Result.Applied is one entry per
// rule whose Count is the sum of the per-place counts without NoPaths and
// whose Offset is the first application's.
func TestNoPathsTotals(t *testing.T) {
	files := goldenFiles(t, goldenRoots)
	if len(files) == 0 {
		t.Skip("no corpus under ../../testdata")
	}
	for _, rel := range testfile.Sample(files, 3) {
		p := filepath.Join("../../testdata", filepath.FromSlash(rel))
		for _, o := range []Options{{}, {StripLineno: true}} {
			full, err := HashFile(p, o)
			if err != nil {
				continue
			}
			o.NoPaths = true
			tot, err := HashFile(p, o)
			if err != nil {
				t.Fatalf("%s: NoPaths: %v", rel, err)
			}
			if tot.Digest != full.Digest {
				t.Errorf("%s: NoPaths digest %s, want %s", rel, tot.Digest, full.Digest)
			}
			want := map[string]int{}
			first := map[string]bool{}
			var order []string
			for _, a := range full.Applied {
				if !first[a.Rule] {
					first[a.Rule] = true
					order = append(order, a.Rule)
				}
				want[a.Rule] += a.Count
			}
			if len(tot.Applied) != len(order) {
				t.Errorf("%s: NoPaths applied %+v, want one per rule of %+v", rel, tot.Applied, full.Applied)
				continue
			}
			for i, a := range tot.Applied {
				if a.Rule != order[i] || a.Count != want[a.Rule] || a.Path != "" {
					t.Errorf("%s: NoPaths applied[%d] = %+v, want %s x%d", rel, i, a, order[i], want[order[i]])
				}
			}
		}
	}
}
