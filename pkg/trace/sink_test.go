package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestSinkCorpus: with every stream compacted early and often (a tiny
// MinCompact), --top n (text and JSON) through the top sink prints what the tree of the
// whole store prints, for every file under testdata/, or gives up (the
// caller then reads the file again); and it folds in many of them.
func TestSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	sty := Style{ASCII: true, Bytes: true}
	folded, lost := 0, 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			var whole []byte
			if tr, err := slowTree(p); err == nil {
				var b bytes.Buffer
				tr.WriteTop(&b, 20, sty)
				tr.WriteTopJSON(&b, 20)
				tr.WriteTop(&b, 3, sty)
				whole = b.Bytes()
			}
			sk := &topSink{n: 20}
			var b bytes.Buffer
			ok, err := eachTree(p, &topKeep{n: 20}, sk, func(tr *Tree) error {
				tr.WriteTop(&b, 20, sty)
				return tr.WriteTopJSON(&b, 20)
			})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !ok {
				if sk.num != nil {
					if again, _ := eachTree(p, &topKeep{n: 20}, nil, func(*Tree) error { return nil }); again {
						lost++ // (the file read again without the sink)
					}
				}
				continue
			}
			// n 3: another heap, the same file
			sk3 := &topSink{n: 3}
			eachTree(p, &topKeep{n: 3}, sk3, func(tr *Tree) error { return tr.WriteTop(&b, 3, sty) })
			if sk.folds > 0 {
				folded++
			}
			if whole == nil {
				t.Errorf("%s (MinCompact %d): the sink answered, the whole store did not", p, min)
			} else if !bytes.Equal(b.Bytes(), whole) {
				t.Errorf("%s (MinCompact %d): sink\n%s\nwhole store\n%s", p, min, b.Bytes(), whole)
			}
		}
	}
	t.Logf("%d files, twice: %d runs folded and answered, %d compacted and gave up", len(files), folded, lost)
	if folded < testfile.ShortDiv(40, 4) {
		t.Errorf("only %d runs folded anything", folded)
	}
}

// TestPictureSinkCorpus: with every stream compacted early and often, the
// pictures drawn through the pictures' sink (narrow ones, so that rows
// below a box's width are folded) are those drawn from the whole store,
// for every file under testdata/, or the sink gives up; and it folds in
// many of them.
func TestPictureSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 2)
	folded := 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			ok, got, folds, err := pictures(t, p, true, &narrowSVG, &narrowHTML)
			if err != nil || !ok {
				continue // (the sink gave up, or the file is no pickle)
			}
			_, want, _, werr := pictures(t, p, false, &narrowSVG, &narrowHTML)
			if werr != nil {
				t.Errorf("%s (MinCompact %d): the sink drew, the whole store did not: %v", p, min, werr)
			} else if got != want {
				t.Errorf("%s (MinCompact %d): the pictures differ\n--- sink\n%s\n--- whole store\n%s", p, min, got, want)
			}
			if folds > 0 {
				folded++
			}
		}
	}
	t.Logf("%d files, twice: %d drawn with runs folded", len(files), folded)
	if folded < testfile.ShortDiv(20, 2) {
		t.Errorf("only %d pictures folded anything", folded)
	}
}

// TestPictureSinkMemoStrings: rows whose strings are memo-shared (each
// first met in a row, then read by BINGET) leave those strings below the
// compaction's stub once their rows fold; the stub holds a fifth of the
// file, and the default SVG, which would draw its box, draws what the
// whole store draws (the default page draws every row of so small a file:
// nothing folds).
func TestPictureSinkMemoStrings(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = tableRecords // (the first rows, which name the strings first, fold too)
	p := filepath.Join(t.TempDir(), "strings.pkl")
	if err := os.WriteFile(p, stringRowsPickle(40000, 600), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, got, folds, err := pictures(t, p, true, &SVGOptions{}, nil)
	if err != nil || !ok || folds == 0 {
		t.Fatalf("the sink did not fold the rows: ok %v, %d folded, %v", ok, folds, err)
	}
	if _, want, _, werr := pictures(t, p, false, &SVGOptions{}, nil); werr != nil || got != want {
		t.Errorf("the pictures differ (%v)\n--- sink\n%s\n--- whole store\n%s", werr, got, want)
	}
}

// stringRowsPickle is a pickle of a list of n dicts {'a': s}, s one of k
// strings of 200 characters, laid out as CPython's pickler writes it
// (protocol 4 without frames): every dict and string memoised (MEMOIZE),
// each string written once and then read back (LONG_BINGET), the rows in
// batches of APPENDS.
func stringRowsPickle(n, k int) []byte {
	b := []byte{0x80, 4, ']', 0x94}
	memo := 1
	at := make([]int, k+1) // memo index of string j, and of the key at k
	get := func(i int) { b = append(b, 'j', byte(i), byte(i>>8), byte(i>>16), byte(i>>24)) }
	put := func(x *int) { b = append(b, 0x94); *x = memo; memo++ }
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			b = append(b, '(')
		}
		var row int
		b = append(b, '}')
		put(&row)
		if i == 0 {
			b = append(b, 0x8c, 1, 'a')
			put(&at[k])
		} else {
			get(at[k])
		}
		if j := i % k; i < k {
			b = append(b, 0x8c, 200)
			b = append(b, bytes.Repeat([]byte{byte('a' + j%26)}, 200)...)
			put(&at[j])
		} else {
			get(at[j])
		}
		b = append(b, 's')
		if i%100 == 99 || i == n-1 {
			b = append(b, 'e')
		}
	}
	return append(b, '.')
}

// narrowSVG and narrowHTML are pictures that draw little: an SVG of 8 px
// and a page of 10 boxes (so that the sink folds most rows of a file).
var narrowSVG, narrowHTML = SVGOptions{Width: 28}, HTMLOptions{MaxNodes: 10}

// pictures draws the file at p as an SVG and a page with so's and ho's
// options (no page when ho is nil), through the pictures' sink (sink) or
// the whole store, and the roots the sink folded; ok false when the sink
// gave up.
func pictures(t *testing.T, p string, sink bool, so *SVGOptions, ho *HTMLOptions) (ok bool, out string, folds int, err error) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	k := newPicKeep(so, ho, fi.Size())
	var sk *topSink
	if sink {
		sk = &topSink{pics: k.specs, total: fi.Size()}
	}
	var b strings.Builder
	ok, err = eachTree(p, k, sk, k.place(func(tr *Tree) error {
		start := tr.Root()
		if err := tr.WriteSVG(&b, start, *so); err != nil || ho == nil {
			return err
		}
		return tr.WriteHTML(&b, start, *ho)
	}))
	if sk != nil {
		folds = sk.folds
	}
	return ok, b.String(), folds, err
}

// TestSinkHoldsStates: a cloudpickle state (its calls not folded, live to
// its end) is held whole, never compacted: compactions that fold nothing
// would cost the machine its projected growth. A table of rows is folded.
func TestSinkHoldsStates(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 64
	for _, c := range []struct {
		path string
		sink bool
	}{
		{"../../testdata/fixtures/cloudpickle/big_global_cp210_py311.pkl", false},
		{rowsFile(t, 300), true},
	} {
		sk := &topSink{n: 20}
		ok, err := eachTree(c.path, &topKeep{n: 20}, sk, func(*Tree) error { return nil })
		if !ok && sk.args == nil || err != nil {
			// (a state's code objects' arguments fold at their REDUCE, and
			// a top node kept below one is read again without the sink:
			// sink_args.go)
			t.Fatalf("%s: %v %v", c.path, ok, err)
		}
		if (sk.num != nil) != c.sink || (sk.folds > 0) != c.sink {
			t.Errorf("%s: compacted %v, %d roots folded; want sink %v", c.path, sk.num != nil, sk.folds, c.sink)
		}
	}
}

// TestSinkScalarRows: a list of scalars is a table: --top and the
// pictures fold its items as they fold rows, the whole tree (text and
// JSON, whole and to a depth) folds them into its "…" line, and each gives
// what the whole store gives. Beside the floats, rows of dicts and larger
// strs, so that a run holds both elided scalars and lines.
func TestSinkScalarRows(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = tableRecords // (tableLike is asked at the first compaction)
	p := filepath.Join(t.TempDir(), "floats.pkl")
	if err := os.WriteFile(p, floatsPickle(40000), 0o644); err != nil {
		t.Fatal(err)
	}
	sty := Style{ASCII: true, Bytes: true}
	tr, err := slowTree(p)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	tr.WriteTop(&want, 20, sty)
	tr.WriteTopJSON(&want, 20)
	sk := &topSink{n: 20}
	var got bytes.Buffer
	ok, err := eachTree(p, &topKeep{n: 20}, sk, func(tr *Tree) error {
		tr.WriteTop(&got, 20, sty)
		return tr.WriteTopJSON(&got, 20)
	})
	if err != nil || !ok || sk.folds < 20000 {
		t.Fatalf("--top: ok %v, %d folded, %v; want the floats folded", ok, sk.folds, err)
	}
	if got.String() != want.String() {
		t.Errorf("--top: sink\n%s\nwhole store\n%s", got.String(), want.String())
	}
	ok, gotP, folds, err := pictures(t, p, true, &SVGOptions{}, nil)
	if err != nil || !ok || folds == 0 {
		t.Fatalf("pictures: ok %v, %d folded, %v; want the floats folded", ok, folds, err)
	}
	if _, wantP, _, werr := pictures(t, p, false, &SVGOptions{}, nil); werr != nil || gotP != wantP {
		t.Errorf("the pictures differ (%v)", werr)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		for _, depth := range []int{-1, 1, 2} {
			what := fmt.Sprintf("whole tree (depth %d, JSON %v)", depth, asJSON)
			ws, err := newWholeSink(fi.Size(), Options{Depth: depth}, sty, asJSON)
			if err != nil {
				t.Fatal(err)
			}
			var gotW bytes.Buffer
			ok, err = ws.run(p, &gotW, nil)
			ws.close()
			if err != nil || !ok || !ws.compacted || len(ws.mark) < 20000 {
				t.Fatalf("%s: ok %v, compacted %v, %d folded, %v; want the floats folded", what, ok, ws.compacted, len(ws.mark), err)
			}
			_, wantW, _, werr := wholeSinkOut(t, p, false, Options{Depth: depth}, sty, asJSON)
			if werr != nil || gotW.String() != wantW {
				t.Errorf("%s differs (%v)\n--- sink\n%s\n--- whole store\n%s", what, werr, gotW.String(), wantW)
			}
		}
	}
}

// floatsPickle is a pickle of a list of n items (protocol 2, in batches
// of APPENDS): floats (BINFLOAT), and every 97th a dict {'a': i} and every
// 101st a str of 2,000 bytes (each a line of its own in the whole tree).
func floatsPickle(n int) []byte {
	b := []byte{0x80, 2, ']', 'q', 0}
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			b = append(b, '(')
		}
		switch {
		case i%97 == 0:
			b = append(b, '}', 'X', 1, 0, 0, 0, 'a', 'K', byte(i), 's')
		case i%101 == 0:
			b = append(b, 'X', 0xd0, 0x07, 0, 0)
			b = append(b, strings.Repeat("s", 2000)...)
		default:
			b = append(b, 'G')
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i)+0.5))
		}
		if i%1000 == 999 || i == n-1 {
			b = append(b, 'e')
		}
	}
	return append(b, '.')
}

// rowsFile writes rowsPickle(n) to a file and returns its path.
func rowsFile(t *testing.T, n int) string {
	p := filepath.Join(t.TempDir(), "rows.pkl")
	if err := os.WriteFile(p, rowsPickle(n), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rowsPickle is a pickle of a list of n dicts {'a': i} (protocol 2, in
// batches of APPENDS).
func rowsPickle(n int) []byte {
	b := []byte{0x80, 2, ']', 'q', 0}
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			b = append(b, '(')
		}
		b = append(b, '}', 'X', 1, 0, 0, 0, 'a', 'K', byte(i), 's')
		if i%100 == 99 || i == n-1 {
			b = append(b, 'e')
		}
	}
	return append(b, '.')
}

// FuzzTopSink: on any bytes, --top through the top sink, with every stream
// compacted at 4 records, never panics, and either gives up (the caller
// reads the file again) or gives what the read without the sink gives: the
// same error, or the same lines and JSON records (also with --leaves, and
// of --group); and so do the pictures
// through the pictures' sink and the whole tree through its sink (also
// with --all and --min-size).
func FuzzTopSink(f *testing.F) {
	addFuzzSeeds(f)
	f.Add(rowsPickle(40))
	f.Add(objectRowsPickle(8, ""))
	// code objects whose arguments fold (sink_args.go)
	for _, d := range []string{"cloudpickle", "dill"} {
		m, _ := filepath.Glob(filepath.Join("../../testdata/fixtures", d, "*.pkl"))
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil && len(b) <= fuzzMaxInput {
				f.Add(b)
			}
		}
	}
	for _, b := range sharedNoneCases() { // (shared Nones: nones.go)
		f.Add([]byte(b))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
		pickle.MinCompact = 4
		p := filepath.Join(dir, "fuzz.pkl")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		top := func(sk *topSink, leaves bool) (bool, string, error) {
			var out string
			ok, err := eachTree(p, &topKeep{n: 4, leaves: leaves}, sk, func(tr *Tree) error {
				tr.Leaves = leaves
				out = topOutputs(t, tr, 4)
				return nil
			})
			return ok, out, err
		}
		// same: what the sink gave (ok) is what the read without it gives
		same := func(what string, got, want string, err, werr error, wok bool) {
			switch {
			case !wok:
				t.Fatalf("%s: the sink answered (%v), the read without it did not (%v)", what, err, werr)
			case (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error():
				t.Fatalf("%s: errors differ: sink %v, without it %v", what, err, werr)
			case got != want:
				t.Fatalf("%s differs\n--- sink\n%s\n--- without\n%s", what, got, want)
			}
		}
		if ok, got, _, err := pictures(t, p, true, &narrowSVG, &narrowHTML); ok {
			wok, want, _, werr := pictures(t, p, false, &narrowSVG, &narrowHTML)
			same("the pictures", got, want, err, werr, wok)
		}
		if ok, got, err := top(&topSink{n: 4}, false); ok {
			wok, want, werr := top(nil, false)
			same("--top 4", got, want, err, werr, wok)
		}
		if ok, got, err := top(&topSink{n: 4, leaves: true}, true); ok {
			wok, want, werr := top(nil, true)
			same("--top 4 --leaves", got, want, err, werr, wok)
		}
		// --top --group through the group sink (sink_group.go)
		for _, leaves := range []bool{false, true} {
			var gotG string
			if ok, err := EachGroups(p, leaves, func(tr *Tree) error { gotG = groupsOut(tr, leaves); return nil }); ok {
				tr, werr := slowTree(p)
				wantG := ""
				if werr == nil {
					wantG = groupsOut(tr, leaves)
				}
				same(fmt.Sprintf("--top --group (leaves %v)", leaves), gotG, wantG, err, werr, true)
			}
		}
		// the default view's sink (sink_bounded.go), 5 lines
		bounded := func(sk *topSink) (bool, string, error) {
			var b bytes.Buffer
			ok, err := eachTree(p, &boundedKeep{lines: 5}, sk, func(tr *Tree) error {
				return tr.WriteBounded(&b, tr.Root(), 5, Style{ASCII: true, Bytes: true})
			})
			return ok, b.String(), err
		}
		if ok, got, err := bounded(&topSink{n: 5, bview: true}); ok {
			wok, want, werr := bounded(nil)
			same("the default view", got, want, err, werr, wok)
		}
		for _, asJSON := range []bool{false, true} {
			for _, opt := range []Options{{Depth: -1}, {Depth: -1, All: true}, {Depth: -1, MinSize: 9}} {
				if ok, got, _, err := wholeSinkOut(t, p, true, opt, Style{}, asJSON); ok {
					wok, want, _, werr := wholeSinkOut(t, p, false, opt, Style{}, asJSON)
					same(fmt.Sprintf("the whole tree (%+v, JSON %v)", opt, asJSON), got, want, err, werr, wok)
				}
			}
		}
	})
}
