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
// past 256 bytes and the output past 64 bytes (spill.go: the file the
// check reads is the output, removed by Close).
func TestSinkMatches(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	defer func(v int) { tapeMem = v }(tapeMem)
	defer func(v int) { spillAt = v }(spillAt)
	defer func() { noSink = false }()
	files := sinkFiles(t)
	opts := []Options{{}, {Protocol: 2}, {Protocol: 5}, {KeepDictOrder: true}}
	if testing.Short() {
		opts = opts[:1]
	}
	sunk, runs, spilled := 0, 0, 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			for _, opt := range opts {
				noSink, tapeMem, spillAt = true, 1<<30, 1<<30
				want, werr := File(p, opt, false)
				noSink, tapeMem, spillAt = false, 256, 64
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
				if sp := got.spool; sp != "" {
					spilled++
					if got.Data != nil || got.Size() != int64(gb.Len()) {
						t.Errorf("%s %+v: a spilled output with Data, or of size %d, not %d", p, opt, got.Size(), gb.Len())
					}
					got.Close()
					if _, err := os.Stat(sp); err == nil {
						t.Errorf("%s %+v: Close left the spilled output %s", p, opt, sp)
					}
				}
				want.Close()
				got.Close()
				if !bytes.Equal(wb.Bytes(), gb.Bytes()) {
					t.Errorf("%s %+v (MinCompact %d): outputs differ with the sink (%d and %d bytes)", p, opt, min, wb.Len(), gb.Len())
				}
			}
		}
	}
	t.Logf("%d of %d runs wrote folded runs, %d outputs spilled to a file", sunk, runs, spilled)
	if spilled < 50 {
		t.Errorf("only %d outputs spilled to a file", spilled)
	}
	if sunk < 50 {
		t.Errorf("only %d runs wrote folded runs", sunk)
	}
}

// TestFingerprintCollisions: with fingerprints of 2 bits (values collide
// all the time), every corpus file and fold fixture gives the output, or
// the error, it gives with 64-bit fingerprints, with the writer sink and
// without it: a stream whose check fails is written again with values told
// apart by their texts (intern.go).
func TestFingerprintCollisions(t *testing.T) {
	defer func() { fpCollide, noSink = false, false }()
	defer func(v int64) { fpMin = v }(fpMin)
	fpMin = 0 // (every stream fingerprinted)
	files := sinkFiles(t)
	opts := []Options{{}, {Protocol: 2}}
	if testing.Short() {
		opts = opts[:1]
	}
	retries := fpRetries
	for _, sink := range []bool{true, false} {
		for _, p := range files {
			for _, opt := range opts {
				fpCollide, noSink = false, !sink
				want, werr := File(p, opt, false)
				fpCollide = true
				got, gerr := File(p, opt, false)
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Errorf("%s %+v: with 64-bit fingerprints: %v; with colliding ones: %v", p, opt, werr, gerr)
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
					t.Errorf("%s %+v: outputs differ with colliding fingerprints", p, opt)
				}
			}
		}
	}
	t.Logf("%d streams written again without fingerprints", fpRetries-retries)
	if fpRetries-retries < 50 {
		t.Errorf("only %d streams written again without fingerprints", fpRetries-retries)
	}
}
