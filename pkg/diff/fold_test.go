package diff

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestEachFolded: pk diff reads each file through the canon sink (streams
// compacted after a few records, runs folded); its result, the reasons of
// equal files with their counts included, is the one of stores held whole
// (no compaction at all).
func TestEachFolded(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	dir := t.TempDir() + "/"
	pairs := [][2]string{
		{"objects_p2", "objects_p4"}, {"objects_p4", "reduce_p4"}, {"namespaces_p2", "namespaces_p4"},
		{"dictroot_p2", "dictroot_p4"}, {"dictroot_p0", "objdict_p2"}, {"dict_overwrite", "dictroot_p4"},
		{"nested_p2", "nested_p4"}, {"ordered_p2", "ordered_p4"}, {"sharedtuple_p2", "sharedlist_p2"},
	}
	for _, p := range pairs {
		for _, f := range p {
			testfile.GunzipTo(t, "../../testdata/fold/"+f+".pkl.gz", dir+f+".pkl") // (bare files: diff reads them stream by stream)
		}
	}
	run := func(a, b string) string {
		r, err := Files(dir+a+".pkl", dir+b+".pkl", Options{})
		if err != nil {
			t.Fatalf("%s %s: %v", a, b, err)
		}
		out, _ := json.Marshal(r)
		return string(out)
	}
	for _, p := range pairs {
		pickle.MinCompact = math.MaxInt32
		want := run(p[0], p[1])
		pickle.MinCompact = 64
		if got := run(p[0], p[1]); got != want {
			t.Errorf("%s against %s:\n sink:  %.600s\n whole: %.600s", p[0], p[1], got, want)
		}
	}
}
