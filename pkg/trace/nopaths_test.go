package trace

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestTextWalkNoPaths: the text tree's walk (Options.noPaths) visits the
// lines the walk with paths visits, in the same order and with the same
// roles, sizes and counts, and makes no path link of its own for a node or
// a reference (the shared noPath); a part attached under a node still has a
// link with an up, which is how a text line tells it from a container's
// part (the first version lost the "<data>" role of joblib arrays).
func TestTextWalkNoPaths(t *testing.T) {
	for _, file := range []string{
		"arrays/bools.joblib", "arrays/dict_of_arrays.z.joblib", "arrays/frame.z.joblib",
		"canon/legacy_same_a.pt", "frames/labels_p2.pkl",
	} {
		d, err := input.Open(filepath.Join("..", "..", "testdata", file), pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		tr := NewDoc(d)
		line := func(v *Visit) string {
			attached := v.Kind == ItemPart && v.pl != nil && v.pl.up != nil
			return fmt.Sprintf("%d %d %q %d %d %d %v %v", v.Depth, v.Kind, v.Role, v.Size, v.Self, v.Kids, v.Cycle, attached)
		}
		var want, got []string
		tr.Walk(tr.Root(), Options{Depth: -1}, func(v *Visit) { want = append(want, line(v)) }, nil)
		opt := Options{Depth: -1, noPaths: true}
		tr.Walk(tr.Root(), opt, func(v *Visit) {
			got = append(got, line(v))
			if (v.Kind == ItemNode || v.Kind == ItemRef) && v.Depth > 1 && v.pl != noPath {
				t.Errorf("%s: %s has a path link of its own (%q)", file, v.Role, v.Path())
			}
		}, nil)
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines without paths, %d with", file, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: line %d: %s, want %s", file, i, got[i], want[i])
			}
		}
	}
}
