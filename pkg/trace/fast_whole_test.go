package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// wholeDepths are the depths the whole-view comparisons run (-1: all).
var wholeDepths = []int{-1, 0, 1, 2, 3, 7}

// wholeStyles are the text styles they run.
var wholeStyles = []Style{{}, {ASCII: true, Bytes: true}}

// wholeGraph is what pk trace prints of the whole tree (to depth) on the
// graph path: the column header, then WriteText from the root.
func wholeGraph(t testing.TB, tr *Tree, depth int, sty Style, asJSON bool) string {
	t.Helper()
	var b bytes.Buffer
	if asJSON {
		if err := tr.WriteJSON(&b, tr.Root(), Options{Depth: depth}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if err := WriteHeader(&b, sty); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteText(&b, tr.Root(), Options{Depth: depth}, sty); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wholeFast is the same from the whole view over b; nil error and ok
// false: it fell back (and wrote nothing).
func wholeFast(t testing.TB, b []byte, name string, depth int, sty Style, asJSON bool) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	began := false
	err := fastWholeOf(bytes.NewReader(b), int64(len(b)), name, nil, &out, depth, asJSON, sty, func() { began = true })
	if err != nil {
		if _, ok := err.(*errFallback); !ok {
			t.Fatalf("%s: the whole view failed after the first pass: %v", name, err)
		}
		if out.Len() > 0 || began {
			t.Fatalf("%s: the whole view fell back after writing", name)
		}
		return "", false
	}
	return out.String(), true
}

// agreeWhole checks that the whole view falls back or prints what the
// graph path prints, for every depth and style; it reports whether it
// took the file. It falls back exactly when --top does, or for a result
// that is not a container.
func agreeWhole(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var slow *Tree
	took := false
	for _, depth := range wholeDepths {
		for si, sty := range append(wholeStyles, Style{}) {
			asJSON := si == len(wholeStyles) // (the last: JSON)
			got, ok := wholeFast(t, b, path, depth, sty, asJSON)
			if !ok {
				tt, _ := fastTopOf(bytes.NewReader(b), int64(len(b)), path, 1)
				if tt != nil && tt.fast != nil && len(tt.fast.items) > 0 && isContainer(tt.fast.items[0].Stream.Store.Kind(tt.fast.items[0].Node)) {
					t.Errorf("%s: the whole view fell back where --top did not: %v", path, wholeReason(b))
				}
				return false
			}
			took = true
			if slow == nil {
				if slow, err = slowTree(path); err != nil {
					t.Errorf("%s: the whole view answered but the graph path fails: %v", path, err)
					return took
				}
			}
			if want := wholeGraph(t, slow, depth, sty, asJSON); got != want {
				t.Errorf("%s depth %d %+v json %v: the whole view differs\n%s", path, depth, sty, asJSON, firstDiff(got, want))
				return took
			}
		}
	}
	return took
}

func wholeReason(b []byte) string {
	err := fastWholeOf(bytes.NewReader(b), int64(len(b)), "x", nil, &bytes.Buffer{}, -1, false, Style{}, nil)
	if err == nil {
		return "none"
	}
	return err.Error()
}

// firstDiff shows the first line where got and want differ (fast path
// against graph path; an SVG's lines can be long: each side is cut to 4000
// bytes).
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			lo := max(0, i-3)
			return fmt.Sprintf("line %d\n--- fast\n%.4000s\n--- graph\n%.4000s", i+1,
				strings.Join(g[lo:min(len(g), i+2)], "\n"), strings.Join(w[lo:min(len(w), i+2)], "\n"))
		}
	}
	return "(same)"
}

// TestFastWholeCorpus: the whole view on every file under testdata/
// (every second one under -short) prints what the graph path prints.
func TestFastWholeCorpus(t *testing.T) {
	corpusAgrees(t, "the whole view", 8<<20, agreeWhole)
}

// TestFastWholeGenerated: random plain data of protocols 0-5 (half the
// seeds under -short).
func TestFastWholeGenerated(t *testing.T) {
	dir := t.TempDir()
	took := 0
	for proto := 0; proto <= 5; proto++ {
		for seed := int64(0); seed < int64(testfile.ShortDiv(40, 2)); seed++ {
			b := genPickle(seed*13+int64(proto), proto)
			p := writeTemp(t, dir, fmt.Sprintf("g%d_%d.pkl", proto, seed), b)
			if agreeWhole(t, p) {
				took++
			} else if r := wholeReason(b); !strings.HasSuffix(r, objKeyReason) && !strings.HasSuffix(r, "the result is not a container") {
				t.Errorf("proto %d seed %d: plain data fell back: %s", proto, seed, r)
			}
		}
	}
	t.Logf("%d generated pickles took the whole view", took)
	if took < testfile.ShortDiv(100, 2) {
		t.Errorf("only %d generated pickles took the whole view", took)
	}
}

// TestFastWholeCases: what the whole view prints out of stream order or
// holds for later: containers built after their items (nested, starting
// at one push, first item a reference), runs of references (across
// summed scalars, last among their siblings), str lines of their own,
// keys read through the memo, MARK LIST with items then APPENDS, depth
// over 60 levels, a result that is not a container (falls back).
func TestFastWholeCases(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{}
	{ // nested tuples that start at one push, refs in runs
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.EMPTY_LIST)
		e.op(pickle.MARK)
		// ((("a", 1), 2), 3) memoized
		e.str("a")
		e.int(1)
		e.op(pickle.TUPLE2)
		e.int(2)
		e.op(pickle.TUPLE2)
		e.int(3)
		e.op(pickle.TUPLE2)
		tp := e.put()
		e.get(tp)
		e.int(9)
		e.get(tp)
		e.get(tp)
		e.op(pickle.MARK)
		e.get(tp)
		e.str(strings.Repeat("s", 1500))
		e.op(pickle.TUPLE)
		e.op(pickle.NONE)
		e.get(tp)
		e.op(pickle.APPENDS)
		e.op(pickle.MARK)
		e.get(tp)
		e.get(tp)
		e.op(pickle.APPENDS)
		e.op(pickle.STOP)
		cases["tuples.pkl"] = e.b.Bytes()
	}
	{ // a ref run last, then a big str last, empty containers, frozenset
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.MARK)
		e.op(pickle.EMPTY_TUPLE)
		tp := e.put()
		e.op(pickle.MARK)
		e.int(5)
		e.op(pickle.FROZENSET)
		fs := e.put()
		e.op(pickle.EMPTY_DICT)
		e.op(pickle.MARK)
		e.op(pickle.TUPLE)
		e.op(pickle.EMPTY_LIST)
		e.op(pickle.MARK)
		e.get(fs)
		e.get(fs)
		e.op(pickle.APPENDS)
		e.op(pickle.EMPTY_LIST)
		e.get(tp)
		e.op(pickle.APPEND)
		e.str(strings.Repeat("z", 2000))
		e.op(pickle.EMPTY_DICT)
		e.str("k")
		e.str(strings.Repeat("y", 1200))
		e.op(pickle.SETITEM)
		e.op(pickle.TUPLE)
		e.op(pickle.STOP)
		cases["lasts.pkl"] = e.b.Bytes()
	}
	{ // a dict whose keys come through the memo, values of every kind
		e := &enc{proto: 2}
		e.op(pickle.PROTO, 2)
		e.op(pickle.EMPTY_LIST)
		e.op(pickle.MARK)
		for r := 0; r < 5; r++ {
			e.op(pickle.EMPTY_DICT)
			e.op(pickle.MARK)
			for k := 0; k < 4; k++ {
				if r == 0 {
					e.str(fmt.Sprint("key", k))
					e.put()
				} else {
					e.get(k)
				}
				switch k {
				case 0:
					e.int(int64(r))
				case 1:
					e.op(pickle.MARK)
					e.int(int64(r))
					e.op(pickle.TUPLE)
				case 2:
					e.op(pickle.EMPTY_LIST)
				default:
					e.bytes(strings.Repeat("b", 1100*r))
				}
			}
			e.op(pickle.SETITEMS)
		}
		e.op(pickle.APPENDS)
		e.op(pickle.STOP)
		cases["refkeys.pkl"] = e.b.Bytes()
	}
	{ // protocol 0: MARK LIST with items, then APPENDs; DICT with items
		cases["p0.pkl"] = []byte("(I1\nI2\nlp0\nI3\naS'x'\np1\nag1\na(Vk\np3\n(I1\nI2\ntp4\ndp2\nVj\nF1.5\nsa.")
		// a MARK LIST whose items have lines: its line before them
		cases["p0nested.pkl"] = []byte("(I1\n(lp9\nI2\nalp0\nI3\na(Vk\n(lp8\ndp7\nVj\n(I4\n(dtp6\nsa.")
	}
	{ // 80 levels: lines past 60 show their depth
		e := &enc{proto: 2}
		e.op(pickle.PROTO, 2)
		for i := 0; i < 80; i++ {
			e.op(pickle.EMPTY_LIST)
		}
		e.str("leaf")
		for i := 0; i < 80; i++ {
			e.op(pickle.APPEND)
			if i%7 == 0 {
				e.int(int64(i))
				e.op(pickle.APPEND)
			}
		}
		e.op(pickle.STOP)
		cases["deep.pkl"] = e.b.Bytes()
	}
	{ // tuples 80 deep around one item
		e := &enc{proto: 2}
		e.op(pickle.PROTO, 2)
		e.op(pickle.EMPTY_LIST)
		for i := 0; i < 80; i++ {
			e.op(pickle.TUPLE1)
		}
		e.op(pickle.STOP)
		cases["deeptuple.pkl"] = e.b.Bytes()
	}
	for name, b := range cases {
		p := writeTemp(t, dir, name, b)
		if _, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), p, pickle.Options{}); err != nil {
			t.Fatalf("%s: a bad pickle: %v", name, err)
		}
		if !agreeWhole(t, p) {
			t.Errorf("%s: fell back: %s", name, wholeReason(b))
		}
	}
	// a result that is not a container: left to the graph path
	if r := wholeReason([]byte("\x80\x04K\x05.")); !strings.HasSuffix(r, "the result is not a container") {
		t.Errorf("a scalar result: %s", r)
	}
}

// FuzzFastWhole: on any input the whole view falls back before writing
// or prints what the graph path prints.
func FuzzFastWhole(f *testing.F) {
	addFuzzSeeds(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		got, ok := wholeFast(t, b, "fuzz.pkl", -1, Style{}, false)
		if !ok {
			return
		}
		slow := fuzzSlowTree(t, dir, b, "the whole view")
		if want := wholeGraph(t, slow, -1, Style{}, false); got != want {
			t.Fatalf("the whole view differs\n%s", firstDiff(got, want))
		}
		got, _ = wholeFast(t, b, "fuzz.pkl", 2, Style{ASCII: true, Bytes: true}, false)
		if want := wholeGraph(t, slow, 2, Style{ASCII: true, Bytes: true}, false); got != want {
			t.Fatalf("the whole view to depth 2 differs\n%s", firstDiff(got, want))
		}
		got, _ = wholeFast(t, b, "fuzz.pkl", -1, Style{}, true)
		if want := wholeGraph(t, slow, -1, Style{}, true); got != want {
			t.Fatalf("the whole view's JSON differs\n%s", firstDiff(got, want))
		}
	})
}

// BenchmarkFastWhole is `pk trace --lines 0` of dicts.pkl through the
// whole view.
func BenchmarkFastWhole(b *testing.B) {
	const path = "../../testdata/bench/dicts.pkl"
	if _, err := os.Stat(path); err != nil {
		b.Skip("no ", path, ": run python3 scripts/bench-gen.py")
	}
	for i := 0; i < b.N; i++ {
		if ok, err := FastWhole(path, io.Discard, -1, false, Style{}, nil); !ok || err != nil {
			b.Fatal("the whole view fell back or failed: ", err)
		}
	}
}

// TestFastBigKeys: dict keys of 1 KiB and more, one over the blob
// threshold (no path literal: spelled [<key j>] by its entry's index), not
// first in their dict: every fast path prints what the graph path prints
// (the default view showed such a key on a line of its own, and --top and
// the default view spelled [<key 0>]).
func TestFastBigKeys(t *testing.T) {
	dir := t.TempDir()
	e := &enc{proto: 4}
	e.op(pickle.PROTO, 4)
	e.op(pickle.EMPTY_DICT)
	e.op(pickle.MARK)
	e.str("a")
	e.int(1)
	e.str(strings.Repeat("k", 2000))
	e.str(strings.Repeat("v", 3000))
	e.str(strings.Repeat("b", pickle.DefaultBlobThreshold+10))
	big := e.put()
	e.str(strings.Repeat("w", 5000))
	// the big key again, by a memo reference, as entry 1 of another dict
	// ([<key 1>], which the pictures read back from the input)
	e.str("c")
	e.op(pickle.EMPTY_DICT)
	e.op(pickle.MARK)
	e.str("q")
	e.int(2)
	e.get(big)
	e.str(strings.Repeat("y", 6000))
	e.op(pickle.SETITEMS)
	e.op(pickle.SETITEMS)
	e.op(pickle.STOP)
	p := writeTemp(t, dir, "bigkeys.pkl", e.b.Bytes())
	if agree(t, p) == 0 {
		t.Error("--top fell back")
	}
	if agreeBounded(t, p) == 0 {
		t.Error("the default view fell back")
	}
	if agreeDepth(t, p) == 0 {
		t.Error("the depth view fell back")
	}
	if !agreeWhole(t, p) {
		t.Error("the whole view fell back")
	}
	if agreePic(t, p) == 0 {
		t.Error("the pictures fell back")
	}
	// and the pictures spell the referenced key by its entry, as the graph
	// path does (the paths of the boxes hold it; escaped: &lt;key 1&gt; in
	// an SVG, \u003ckey 1\u003e in the page's JSON), in every picture
	// large and deep enough to draw it
	slow, err := slowTree(p)
	if err != nil {
		t.Fatal(err)
	}
	drawn := 0
	for _, c := range picCases {
		out := picOutputs(t, slow, c)
		if strings.Contains(out, "key 0") {
			t.Errorf("%v: a picture spells the big key [<key 0>]", c)
		}
		if strings.Contains(out, "key 1") {
			drawn++
		}
	}
	if drawn == 0 {
		t.Error("no picture draws the value of the big key's entry 1")
	}
}

// wholeBatchPickle is a list of n rows, enough lines for many of the
// printer's batches (whole_print.go): tuples, runs of references to a
// memoized tuple, dicts, and str of a line of their own (over a MiB of
// them: batches that end on their store's text).
func wholeBatchPickle(n int) []byte {
	e := &enc{proto: 4}
	e.op(pickle.PROTO, 4)
	e.op(pickle.EMPTY_LIST)
	e.put()
	e.op(pickle.MARK)
	e.str("shared")
	e.int(7)
	e.op(pickle.TUPLE2)
	tp := e.put()
	e.op(pickle.APPENDS)
	for i := range n {
		e.op(pickle.MARK)
		switch {
		case i%97 == 0:
			e.str(strings.Repeat(string(rune('a'+i%26)), 1100+i%7))
		case i%5 == 0:
			e.op(pickle.EMPTY_DICT)
			e.str(fmt.Sprint("k", i))
			e.int(int64(i))
			e.op(pickle.SETITEM)
		case i%11 < 3:
			e.get(tp)
		default:
			e.int(int64(i))
			e.str(fmt.Sprint("s", i))
			e.op(pickle.TUPLE2)
		}
		e.op(pickle.APPENDS)
	}
	e.op(pickle.STOP)
	return e.b.Bytes()
}

// TestFastWholeBatches: a whole tree of many batches prints what the graph
// path prints (the corpus's files fit in one or two).
func TestFastWholeBatches(t *testing.T) {
	b := wholeBatchPickle(20000)
	p := writeTemp(t, t.TempDir(), "batches.pkl", b)
	if !agreeWhole(t, p) {
		t.Fatalf("the whole view fell back: %s", wholeReason(b))
	}
	got, _ := wholeFast(t, b, p, -1, Style{}, false)
	if n := strings.Count(got, "\n"); n < 4*wholeBatchLines {
		t.Fatalf("%d lines: fewer than four batches", n)
	}
}

// failWriter fails every write after its first n bytes.
type failWriter struct{ n int }

var errFailWriter = errors.New("the writer failed")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errFailWriter
	}
	w.n -= len(p)
	return len(p), nil
}

// TestFastWholeWriteError: the printer's write error is the whole view's
// error, as it is, whether it happens in the first batch or a later one
// (until session 29 it read "the input changed between the two passes:
// write ...", as if the input were at fault).
func TestFastWholeWriteError(t *testing.T) {
	b := wholeBatchPickle(20000)
	for _, n := range []int{0, 100 << 10, 1 << 20} {
		for _, asJSON := range []bool{false, true} {
			err := fastWholeOf(bytes.NewReader(b), int64(len(b)), "x", nil, &failWriter{n: n}, -1, asJSON, Style{}, nil)
			if err == nil || err.Error() != errFailWriter.Error() {
				t.Errorf("a writer failing after %d bytes, json %v: %v", n, asJSON, err)
			}
		}
	}
}

// TestOffSet: the whole view's set of offsets, across pages and at their
// edges.
func TestOffSet(t *testing.T) {
	var o offSet
	in := []int64{0, 63, 64, offPage - 1, offPage, 5*offPage + 17, 1 << 33}
	for _, off := range in {
		o.add(off)
	}
	for _, off := range in {
		if !o.has(off) {
			t.Errorf("has(%d) = false after add", off)
		}
	}
	for _, off := range []int64{1, 62, 65, offPage + 1, 2 * offPage, 5*offPage + 16, 1<<33 + 1, 1 << 34} {
		if o.has(off) {
			t.Errorf("has(%d) = true, never added", off)
		}
	}
}
