package write

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// FuzzSink: any bytes give the same output, or the same error, through the
// writer sink (folded runs, read ahead on a goroutine, the sketch of the
// values held once, every stream fingerprinted) as without it, with compactions at 4 records so
// that small inputs fold. TestSinkMatches and TestOnceSketch hold this over
// the corpus; this target looks beyond it. Without -fuzz only the seeds run.
func FuzzSink(f *testing.F) {
	for _, p := range []string{
		"../../testdata/fixtures/stdlib/values_p4_c_py311.pkl",
		"../../testdata/fixtures/stdlib/item_selfref_tuple_p2_c_py311.pkl",
		"../../testdata/equiv/cp220_dynclass/p4_seed5_a.pkl",
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	// rows of small dicts, of tuples and of lists, some values repeated
	for _, row := range []string{"}\x8c\x01k\x8c\x02%dsa", "\x8c\x02%d\x85a", "]\x8c\x02%daa"} {
		b := []byte{0x80, 4, ']'}
		for i := range 40 {
			b = append(b, fmt.Sprintf(row, 10+i%13)...)
		}
		f.Add(append(b, '.'))
	}
	// rows made by calls of a class memoized first: NEWOBJ and a BUILD of a
	// dict, REDUCE of a tuple, OBJ of nothing and a BUILD of a tuple
	b := []byte("\x80\x04\x8c\x08__main__\x8c\x01P\x93\x94]")
	for i := range 40 {
		b = append(b, fmt.Sprintf("h\x00)\x81}\x8c\x01i\x8c\x02%dsbah\x00\x8c\x01%d\x85Ra(h\x00o\x8c\x01sK\x07\x86ba", 10+i%13, i%7)...)
	}
	f.Add(append(b, '.'))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 {
			return
		}
		defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
		defer func(v int64) { fpMin = v }(fpMin)
		defer func(v int) { aheadMin = v }(aheadMin)
		defer func(v int) { touchMin = v }(touchMin)
		defer func() { noSink = false }()
		// (every run of the sink read ahead on a goroutine: ahead.go)
		pickle.MinCompact, fpMin, aheadMin, touchMin = 4, 0, 1, 0
		p := filepath.Join(t.TempDir(), "f.pkl")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		noSink = true
		want, werr := File(p, Options{}, false)
		noSink = false
		got, gerr := File(p, Options{}, false)
		sameOutput(t, "input", "without the sink", "with it", want, werr, got, gerr, nil)
	})
}
