package write

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// sinkFiles are the corpus files, the fold fixtures (testdata/fold,
// decompressed: the sink reads bare files) and the cost shapes' generated
// files when present.
func sinkFiles(t *testing.T) []string {
	files := corpusFiles(t)
	gz, _ := filepath.Glob("../../testdata/fold/*.gz")
	dir := t.TempDir()
	for _, p := range gz {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".gz"))
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, out)
	}
	return files
}

// TestSinkMatches: every corpus file and fold fixture gives the same
// output, or the same error, with the writer sink and without it, at every
// output protocol and with --keep-dict-order, with compactions at 4 and 64
// records so that small files fold too; with the sink, the tape is spooled
// past 256 bytes.
func TestSinkMatches(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	defer func(v int) { tapeMem = v }(tapeMem)
	defer func() { noSink = false }()
	files := sinkFiles(t)
	opts := []Options{{}, {Protocol: 2}, {Protocol: 5}, {KeepDictOrder: true}}
	if testing.Short() {
		opts = opts[:1]
	}
	sunk, runs := 0, 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			for _, opt := range opts {
				noSink, tapeMem = true, 1<<30
				want, werr := File(p, opt, false)
				noSink, tapeMem = false, 256
				before := sinkRuns
				got, gerr := File(p, opt, false)
				runs++
				if sinkRuns > before {
					sunk++
				}
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Errorf("%s %+v (MinCompact %d): without the sink: %v; with it: %v", p, opt, min, werr, gerr)
					continue
				}
				if werr != nil {
					continue
				}
				var wb, gb bytes.Buffer
				want.WriteTo(&wb)
				got.WriteTo(&gb)
				want.Close()
				got.Close()
				if !bytes.Equal(wb.Bytes(), gb.Bytes()) {
					t.Errorf("%s %+v (MinCompact %d): outputs differ with the sink (%d and %d bytes)", p, opt, min, wb.Len(), gb.Len())
				}
			}
		}
	}
	t.Logf("%d of %d runs wrote folded runs", sunk, runs)
	if sunk < 50 {
		t.Errorf("only %d runs wrote folded runs", sunk)
	}
}
