package write

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// sinkFiles are the corpus files and the fold fixtures (testdata/fold,
// decompressed: the sink reads bare files).
//
// Under -short (make test) every fourth corpus file and every second fold
// fixture (testfile.Sample; the floors scaled with ShortDiv): these tests
// compare the writer's mechanisms (the sink, the check beside the writing,
// colliding fingerprints, the sketch) with their plain forms over each
// file; make test-full walks every file.
func sinkFiles(t *testing.T) []string {
	return append(testfile.Sample(corpusFiles(t), 4), testfile.Sample(foldFiles(t), 2)...)
}

// foldFiles are the fold fixtures (testdata/fold), decompressed into a
// temporary directory.
func foldFiles(t *testing.T) []string {
	var files []string
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

// sameOutput reports, as errors naming what, where two results of File
// differ: in their errors (named a and b), or in their bytes. inspect, when
// given, looks at got and its bytes before both are closed. It tells
// whether both gave an output.
func sameOutput(t *testing.T, what, a, b string, want *Result, werr error, got *Result, gerr error, inspect func(got *Result, out []byte)) bool {
	t.Helper()
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Errorf("%s: %s: %v; %s: %v", what, a, werr, b, gerr)
		return false
	}
	if werr != nil {
		return false
	}
	var wb, gb bytes.Buffer
	want.WriteTo(&wb)
	got.WriteTo(&gb)
	if inspect != nil {
		inspect(got, gb.Bytes())
	}
	want.Close()
	got.Close()
	if !bytes.Equal(wb.Bytes(), gb.Bytes()) {
		t.Errorf("%s: outputs differ, %s and %s (%d and %d bytes)", what, a, b, wb.Len(), gb.Len())
	}
	return true
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
				what := fmt.Sprintf("%s %+v (MinCompact %d)", p, opt, min)
				sameOutput(t, what, "without the sink", "with it", want, werr, got, gerr, func(got *Result, out []byte) {
					sp := got.spool
					if sp == "" {
						return
					}
					spilled++
					if got.Data != nil || got.Size() != int64(len(out)) {
						t.Errorf("%s: a spilled output with Data, or of size %d, not %d", what, got.Size(), len(out))
					}
					got.Close()
					if _, err := os.Stat(sp); err == nil {
						t.Errorf("%s: Close left the spilled output %s", what, sp)
					}
				})
			}
		}
	}
	t.Logf("%d of %d runs wrote folded runs, %d outputs spilled to a file", sunk, runs, spilled)
	if spilled < testfile.ShortDiv(50, 2) {
		t.Errorf("only %d outputs spilled to a file", spilled)
	}
	if sunk < testfile.ShortDiv(50, 2) {
		t.Errorf("only %d runs wrote folded runs", sunk)
	}
}

// TestFingerprintCollisions: with fingerprints of 2 bits (values collide
// all the time), every corpus file and fold fixture gives the output, or
// the error, it gives with 64-bit fingerprints, with the writer sink and
// without it: a stream whose check fails is written again with values told
// apart by their texts (intern.go), and so is one where a tuple collided
// with a value inside it, which the check does not tell.
func TestFingerprintCollisions(t *testing.T) {
	defer func() { fpCollide, noSink = false, false }()
	defer func(v int64) { fpMin = v }(fpMin)
	fpMin = 0 // (every stream fingerprinted)
	files := sinkFiles(t)
	opts := []Options{{}, {Protocol: 2}}
	if testing.Short() {
		opts = opts[:1]
	}
	retries, nested := fpRetries, fpNested
	for _, sink := range []bool{true, false} {
		for _, p := range files {
			for _, opt := range opts {
				fpCollide, noSink = false, !sink
				want, werr := File(p, opt, false)
				fpCollide = true
				got, gerr := File(p, opt, false)
				sameOutput(t, fmt.Sprintf("%s %+v", p, opt), "with 64-bit fingerprints", "with colliding ones", want, werr, got, gerr, nil)
			}
		}
	}
	t.Logf("%d streams written again without fingerprints, %d traversed again for a value colliding with one inside it", fpRetries-retries, fpNested-nested)
	if fpRetries-retries < testfile.ShortDiv(50, 2) {
		t.Errorf("only %d streams written again without fingerprints", fpRetries-retries)
	}
	if fpNested == nested {
		t.Error("no stream traversed again for a value colliding with one inside it")
	}
}

// TestOnceSketch: with every stream fingerprinted, every corpus file and
// fold fixture gives the output, or the error, it gives without the
// sketch of the values held once (once.go), with compactions at 4 records
// so that small files fold, and no value the table
// numbered as held once is looked up again in its stream's writing.
func TestOnceSketch(t *testing.T) {
	defer func() { noOnce, onceSeen = false, nil }()
	defer func(v int64) { fpMin = v }(fpMin)
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	fpMin = 0             // (every stream fingerprinted, and its file counted)
	pickle.MinCompact = 4 // (small files fold too)
	defer func(v int) { onceChunk = v }(onceChunk)
	onceChunk = 64 // (counted on the goroutine)
	var singles int
	var seen map[uint64]bool
	files := sinkFiles(t)
	for _, p := range files {
		noOnce, onceSeen = true, nil
		want, werr := File(p, Options{}, false)
		noOnce, seen = false, map[uint64]bool{}
		onceSeen = func(fp uint64) {
			if seen[fp] {
				t.Errorf("%s: a value numbered as held once is numbered again", p)
			}
			seen[fp] = true
			singles++
		}
		got, gerr := File(p, Options{}, false)
		sameOutput(t, p, "without the sketch", "with it", want, werr, got, gerr, nil)
	}
	t.Logf("%d values numbered as held once, in %d files", singles, len(files))
	if singles < testfile.ShortDiv(1000, 2) {
		t.Errorf("only %d values numbered as held once", singles)
	}
}

// TestOnceSketchStore: a str held once in a folded run and once more in a
// node of the store at STOP (the last rows are not folded) is counted
// twice (countStore), so the second is fetched, as without the sketch.
func TestOnceSketchStore(t *testing.T) {
	defer func() { noOnce = false }()
	defer func(v int64) { fpMin = v }(fpMin)
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	fpMin, pickle.MinCompact = 0, 4
	row := func(b []byte, s string) []byte {
		b = append(b, '}', 0x8c, 1, 'k', 0x8c, byte(len(s)))
		return append(append(b, s...), 's', 'a') // (APPENDed: final at once)
	}
	dir := t.TempDir()
	for _, n := range []int{100, 1000, 5000} {
		for _, from := range []int{0, n / 2, n - 2} {
			b := []byte{0x80, 4, ']'}
			for i := range n {
				b = row(b, fmt.Sprintf("v%d", i))
			}
			b = row(b, fmt.Sprintf("v%d", from)) // (the last row: in the store at STOP)
			b = append(b, '.')
			p := filepath.Join(dir, fmt.Sprintf("rows%d-%d.pkl", n, from))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			noOnce = true
			want, werr := File(p, Options{}, false)
			noOnce = false
			before := sinkRuns
			got, gerr := File(p, Options{}, false)
			if sinkRuns == before {
				t.Errorf("%s: nothing folded", p)
			}
			sameOutput(t, p, "without the sketch", "with it", want, werr, got, gerr, nil)
		}
	}
}

// TestOnceNotNumbered: a str of a folded run that the stream holds once
// is written without a number, a memo slot or a build on the tape
// (values.runKey); the rows' key, held by every row, is numbered once.
// Numbered as held once (lookupFP), each of the 5,000 names took all three.
func TestOnceNotNumbered(t *testing.T) {
	defer func() { noOnce = false }()
	defer func(v int64) { fpMin = v }(fpMin)
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	fpMin, pickle.MinCompact = 0, 4
	b := []byte{0x80, 4, ']'}
	for i := range 5000 {
		s := fmt.Sprintf("name%d", i)
		b = append(b, '}', 0x8c, 1, 'k', 0x8c, byte(len(s)))
		b = append(append(b, s...), 's', 'a')
	}
	b = append(b, '.')
	p := filepath.Join(t.TempDir(), "rows.pkl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	noOnce = true
	want, werr := File(p, Options{}, false)
	noOnce = false
	got, gerr := File(p, Options{}, false)
	sameOutput(t, p, "without the sketch", "with it", want, werr, got, gerr, nil)
	if lastBuilds > 2500 || lastValues > 2500 { // (a counter shared by two names is at two: about one in eight)
		t.Errorf("%d builds on the tape and %d values numbered for 5,000 names held once", lastBuilds, lastValues)
	}
}

// TestSinkTuples: the fold fixtures of rows holding tuples (nested, empty,
// of four items and more, equal ones written once and fetched, as dict
// values and keys, and ones the sink cannot fold) give the output, or the
// error, they give without the writer sink, at protocols 4 and 2 and with
// --keep-dict-order, with and without the sketch of the values held once,
// and the sink writes tuples from their side items (canon.PlainForm).
func TestSinkTuples(t *testing.T) {
	sinkFixtures(t, "tuples_", 4, &sinkTuples, map[string]bool{"tuples_p0.pkl": true})
}

// TestSinkCalls: the fold fixtures of rows made by calls (objects and
// namespaces whose BUILD states hold tuples, globals and other objects;
// REDUCEs with arguments, equal argument tuples fetched; OBJ and INST
// with and without arguments, two BUILDs, a class resolved as an effect
// before the rows; nested classes written at protocol 2 as getattr calls;
// a dotted GLOBAL line; objects as a dict's values, in entries folded
// whole; and rows the sink cannot fold) give the output, or the error, they give
// without the writer sink, and the sink writes the files whole but two:
// the rows written while a call is in construction (calls_inprog, written
// again without the sink) and the call it refuses (calls_notuple).
func TestSinkCalls(t *testing.T) {
	sinkFixtures(t, "calls_", 11, &sinkCalls, map[string]bool{"calls_inprog.pkl": true, "calls_notuple.pkl": true})
}

// sinkFixtures: the fold fixtures named prefix... (want of them) give the
// output, or the error, they give without the writer sink, at protocols 4
// and 2 and with --keep-dict-order, with and without the sketch of the
// values held once, with compactions at 4 and 64 records (4 only with
// -short); and the sink
// writes each file whole but those of partial, counting what it wrote in
// *count. The sink's output is not checked (noVerify): a stream it wrote
// wrong would otherwise be written again without it.
func sinkFixtures(t *testing.T, prefix string, want int, count *int, partial map[string]bool) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	defer func(v int64) { fpMin = v }(fpMin)
	defer func() { noSink, noOnce, noVerify = false, false, false }()
	var files []string
	for _, p := range foldFiles(t) {
		if strings.HasPrefix(filepath.Base(p), prefix) {
			files = append(files, p)
		}
	}
	if len(files) != want {
		t.Fatalf("%d %s fixtures in testdata/fold, want %d", len(files), prefix, want)
	}
	mins := []int{4, 64}
	if testing.Short() {
		mins = mins[:1] // (compactions at 4 records fold the most)
	}
	for _, min := range mins {
		pickle.MinCompact = min
		for _, once := range []bool{false, true} {
			noOnce, fpMin = !once, 1<<20
			if once {
				fpMin = 0 // (the sketch counts every file)
			}
			for _, p := range files {
				for _, opt := range []Options{{}, {Protocol: 2}, {KeepDictOrder: true}} {
					noSink, noVerify = true, false
					want, werr := File(p, opt, false)
					noSink, noVerify = false, true
					whole, counted := sinkWhole, *count
					got, gerr := File(p, opt, false)
					what := fmt.Sprintf("%s %+v (MinCompact %d, sketch %v)", p, opt, min, once)
					if sameOutput(t, what, "without the sink", "with it", want, werr, got, gerr, nil) &&
						(sinkWhole == whole || *count == counted) && !partial[filepath.Base(p)] {
						t.Errorf("%s: not written whole by the sink (%d written from it)", what, *count-counted)
					}
				}
			}
		}
	}
}
