package scan

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestKeepSameReport: what the machine releases for scan (Keep) changes no
// report. Every file under testdata is scanned with the store compacted
// as often as it can be (MinCompact lowered to a few records, so every
// stream of more than a handful of opcodes is planned and compacted many
// times) and with every node held, and the reports must be identical.
func TestKeepSameReport(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 4
	pol := DefaultPolicy()
	n := 0
	filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "costshapes" {
			return filepath.SkipDir // TestKeepCostShapes
		}
		if d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 8<<20 {
			return nil
		}
		if testing.Short() && n >= 300 {
			return filepath.SkipAll
		}
		a, _ := json.Marshal(scanFile(p, pol, &Keep))
		b, _ := json.Marshal(scanFile(p, pol, nil))
		if string(a) != string(b) {
			t.Errorf("%s: the report differs with Keep:\n keep: %s\n full: %s", p, a, b)
		}
		n++
		return nil
	})
	if n < 500 && !testing.Short() {
		t.Fatalf("only %d files scanned", n)
	}
	t.Logf("%d files", n)
}

// keepBytes scans b from a file, with and without Keep, for the fuzz target.
func keepBytes(t *testing.T, b []byte, pol *Policy) (*Report, *Report) {
	p := filepath.Join(t.TempDir(), "f.pkl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return scanFile(p, pol, &Keep), scanFile(p, pol, nil)
}

// TestKeepCostShapes: the same over the cost shapes (testdata/costshapes,
// gzip-compressed: pass 1 decompresses them again), the legal but costly
// inputs where what is live differs most from what was read: deep nesting,
// DAGs, cycles, memo storms, wide containers, tables.
func TestKeepCostShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	paths, _ := filepath.Glob("../../testdata/costshapes/shapes/*.pkl.gz")
	if len(paths) < 20 {
		t.Fatalf("only %d cost shapes", len(paths))
	}
	pol := DefaultPolicy()
	for _, p := range paths {
		switch filepath.Base(p) {
		case "nest_newobj_build.pkl.gz", "cycle_objects.pkl.gz", "streams_none.pkl.gz":
			// the slowest three (seconds each, twice): the first two are
			// all calls (Keep gives up at the first compaction), the last a
			// million streams too small to compact
			continue
		}
		a, _ := json.Marshal(scanFile(p, pol, &Keep))
		b, _ := json.Marshal(scanFile(p, pol, nil))
		if string(a) != string(b) {
			t.Errorf("%s: the report differs with Keep:\n keep: %.600s\n full: %.600s", p, a, b)
		}
	}
}
