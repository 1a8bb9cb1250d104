package write

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCostShapes: the legal but costly pickles of testdata/costshapes
// (docs/cost.md) are written or refused in one line, without a panic or a
// hang. Their CPU and memory bounds are cmd's TestCostShapes (pk canon as a
// subprocess, CPU time); here only a wall-time guard against a hang, wide
// enough for a loaded machine (a million streams of None took 24 s of wall
// at a load of 5-8 on 2 CPUs, beside the other packages' tests).
func TestCostShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	files, _ := filepath.Glob("../../testdata/costshapes/shapes/*.gz")
	if len(files) == 0 {
		t.Skip("no cost shapes")
	}
	all := os.Getenv("PK_WRITE_COSTSHAPES") == "all"
	written, refused, skipped := 0, 0, 0
	for _, p := range files {
		if !all && gzipSize(p) > 2<<20 {
			skipped++ // PK_WRITE_COSTSHAPES=all runs them (minutes on a loaded 2-CPU machine)
			continue
		}
		start := time.Now()
		res, err := File(p, Options{}, false)
		d := time.Since(start)
		if err != nil {
			refused++
			t.Logf("%s: refused in %v: %.160s", filepath.Base(p), d.Round(time.Millisecond), err)
		} else {
			written++
			t.Logf("%s: %d bytes in %v", filepath.Base(p), len(res.Data), d.Round(time.Millisecond))
		}
		if d > 120*time.Second {
			t.Errorf("%s: %v", p, d)
		}
	}
	t.Logf("%d written, %d refused, %d over 2 MiB skipped (PK_WRITE_COSTSHAPES=all runs them)", written, refused, skipped)
}

// gzipSize is the uncompressed size a gzip file records (mod 2^32).
func gzipSize(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 4 {
		return 0
	}
	n := len(b)
	return int64(b[n-4]) | int64(b[n-3])<<8 | int64(b[n-2])<<16 | int64(b[n-1])<<24
}
