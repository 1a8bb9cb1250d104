package write

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestMutatedInputs: damaged and hand-bent versions of corpus pickles are
// written or refused, never a panic; whatever is written still checks
// (File reads every stream back), and a refusal is one line naming the
// file.
func TestMutatedInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	rng := rand.New(rand.NewSource(14))
	dir := t.TempDir()
	var files []string
	for _, p := range corpusFiles(t) {
		if fi, err := os.Stat(p); err == nil && fi.Size() < 4096 && strings.HasSuffix(p, ".pkl") {
			files = append(files, p)
		}
	}
	written, refused := 0, 0
	reasons := map[string]int{} // refusals of inputs pk hash reads
	for i, p := range files {
		if i%3 != 0 {
			continue
		}
		orig, _ := os.ReadFile(p)
		for k := 0; k < 12; k++ {
			b := mutate(rng, orig, 3)
			in := filepath.Join(dir, "m.pkl")
			os.WriteFile(in, b, 0o644)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s mutated (%x): panic: %v", p, b, r)
					}
				}()
				if _, err := File(in, Options{}, false); err != nil {
					refused++
					if _, herr := canon.HashFile(in, canon.Options{}); herr == nil {
						reasons[short(err.Error(), in)]++
						if strings.Contains(err.Error(), "faithfully") {
							t.Errorf("%s mutated (%x): %v", p, b, err)
						}
					}
					if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "m.pkl") {
						t.Errorf("%s mutated: %q", p, err)
					}
				} else {
					written++
				}
			}()
		}
	}
	t.Logf("%d mutated inputs written, %d refused or unreadable", written, refused)
	for r, n := range reasons {
		t.Logf("  %3d× %s", n, r)
		if strings.Contains(r, "internal") {
			t.Errorf("internal error: %s", r)
		}
	}
}

// mutate returns a copy of orig with 1 to most bytes changed, dropped or
// doubled (at least one byte is left).
func mutate(rng *rand.Rand, orig []byte, most int) []byte {
	b := append([]byte(nil), orig...)
	for m := 0; m < 1+rng.Intn(most); m++ {
		j := rng.Intn(len(b))
		switch rng.Intn(3) {
		case 0:
			b[j] = byte(rng.Intn(256))
		case 1:
			b = append(b[:j], b[j+1:]...)
		default:
			b = append(b[:j], append([]byte{b[rng.Intn(len(b))]}, b[j:]...)...)
		}
		if len(b) == 0 {
			b = []byte{'.'}
		}
	}
	return b
}
