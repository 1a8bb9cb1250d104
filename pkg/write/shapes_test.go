package write

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCostShapes: the legal but costly pickles of testdata/costshapes
// (docs/cost.md) are written or refused in one line, without a panic,
// within a few seconds each.
func TestCostShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	files, _ := filepath.Glob("../../testdata/costshapes/shapes/*.gz")
	if len(files) == 0 {
		t.Skip("no cost shapes")
	}
	written, refused := 0, 0
	for _, p := range files {
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
		if d > 20*time.Second {
			t.Errorf("%s: %v", p, d)
		}
	}
	t.Logf("%d written, %d refused", written, refused)
	_ = os.Stdout
}
