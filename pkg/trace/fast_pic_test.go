package trace

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// picCase is one set of pictures a fast tree is made for and drawn.
type picCase struct {
	svg  *SVGOptions
	html *HTMLOptions
}

func (c picCase) String() string {
	s := ""
	if c.svg != nil {
		s += fmt.Sprintf("svg%+v ", *c.svg)
	}
	if c.html != nil {
		s += fmt.Sprintf("html%+v", *c.html)
	}
	return s
}

func (c picCase) specs() []picSpec {
	var out []picSpec
	if c.svg != nil {
		out = append(out, c.svg.spec())
	}
	if c.html != nil {
		out = append(out, c.html.spec())
	}
	return out
}

// picCases: what pk trace draws (the defaults, alone and together), and
// small pictures whose thresholds and levels cut most of a small pickle.
var picCases = []picCase{
	{svg: &SVGOptions{}},
	{html: &HTMLOptions{}},
	{svg: &SVGOptions{}, html: &HTMLOptions{}},
	{svg: &SVGOptions{Width: 120, MaxDepth: 3}},
	{html: &HTMLOptions{MaxNodes: 30, MaxDepth: 4}},
	{svg: &SVGOptions{Width: 300, MaxDepth: 5}, html: &HTMLOptions{MaxNodes: 200, MaxDepth: 7}},
	{html: &HTMLOptions{MaxDepth: 1}},
}

// picOutputs draws the pictures of c from the root.
func picOutputs(t testing.TB, tr *Tree, c picCase) string {
	t.Helper()
	var b bytes.Buffer
	if c.svg != nil {
		if err := tr.WriteSVG(&b, tr.Root(), *c.svg); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("--\n")
	if c.html != nil {
		if err := tr.WriteHTML(&b, tr.Root(), *c.html); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// agreePic checks, for every picCases, that the fast picture falls back or
// draws byte for byte what the graph path draws; it reports how many it
// took.
func agreePic(t *testing.T, path string) (fast int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var slow *Tree
	var slowErr error
	for _, c := range picCases {
		ft, err := fastPicOf(bytes.NewReader(b), int64(len(b)), path, c.specs())
		if ft == nil {
			if err == nil {
				t.Errorf("%s: no tree and no reason", path)
			}
			continue
		}
		fast++
		if slow == nil && slowErr == nil {
			slow, slowErr = slowTree(path)
		}
		if slowErr != nil {
			t.Errorf("%s: the fast picture answered but the graph path fails: %v", path, slowErr)
			return fast
		}
		if got, want := picOutputs(t, ft, c), picOutputs(t, slow, c); got != want {
			t.Errorf("%s %v: the fast picture differs\n%s", path, c, firstDiff(got, want))
			return fast
		}
	}
	if fast != 0 && fast != len(picCases) {
		t.Errorf("%s: the fast picture applied to %d of %d cases", path, fast, len(picCases))
	}
	return fast
}

// TestFastPictureCorpus: every file under testdata/ that the fast picture
// takes draws what the graph path (PK_TRACE_FAST=0) draws.
func TestFastPictureCorpus(t *testing.T) {
	corpusAgrees(t, "the fast picture", 8<<20, func(t *testing.T, p string) bool { return agreePic(t, p) > 0 })
}

// TestFastPictureGenerated: random plain data of protocols 0-5.
func TestFastPictureGenerated(t *testing.T) {
	dir := t.TempDir()
	for proto := 0; proto <= 5; proto++ {
		for seed := int64(0); seed < 30; seed++ {
			b := genPickle(seed*13+int64(proto), proto)
			p := writeTemp(t, dir, fmt.Sprintf("g%d_%d.pkl", proto, seed), b)
			if agreePic(t, p) != len(picCases) && !strings.HasSuffix(fastReason(b), objKeyReason) {
				t.Errorf("proto %d seed %d: plain data fell back", proto, seed)
			}
		}
	}
}

// chains writes a list of n chains, each depth single-item lists (or
// dicts, every third level, under a memoized key) around a str of size
// bytes: every level holds n nodes of about the same size. The list's
// items are appended batch at a time (CPython: 1,000; 0: all at once).
func chains(n, depth, size, batch int) []byte {
	e := &enc{proto: 4}
	e.op(pickle.PROTO, 4)
	e.op(pickle.EMPTY_LIST)
	e.put()
	key := -1
	e.op(pickle.MARK)
	for i := 0; i < n; i++ {
		if batch > 0 && i > 0 && i%batch == 0 {
			e.op(pickle.APPENDS)
			e.op(pickle.MARK)
		}
		for d := 0; d < depth; d++ {
			if d%3 == 2 {
				e.op(pickle.EMPTY_DICT)
				if key < 0 {
					e.str("k")
					key = e.put()
				} else {
					e.get(key)
				}
				continue
			}
			e.op(pickle.EMPTY_LIST)
		}
		e.str(strings.Repeat(string(rune('a'+i%26)), size))
		for d := depth - 1; d >= 0; d-- {
			if d%3 == 2 {
				e.op(pickle.SETITEM)
			} else {
				e.op(pickle.APPEND)
			}
		}
	}
	e.op(pickle.APPENDS)
	e.op(pickle.STOP)
	return e.b.Bytes()
}

// TestFastPictureBounded: many chains of nodes just above the threshold,
// deeper than the pictures' levels, keep at most levels × (the start's
// bytes / the threshold) records, and draw what the graph path draws.
func TestFastPictureBounded(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		n, depth, size, batch int
		c                     picCase
		most                  int // records at most (0: the bound)
	}{
		{2000, 60, 200, 0, picCase{html: &HTMLOptions{}}, 0},
		{2000, 60, 200, 0, picCase{svg: &SVGOptions{}}, 0},
		{300, 12, 50, 0, picCase{svg: &SVGOptions{Width: 300, MaxDepth: 5}, html: &HTMLOptions{MaxNodes: 500, MaxDepth: 7}}, 0},
		{1, 5000, 10, 0, picCase{svg: &SVGOptions{}, html: &HTMLOptions{}}, 0},
		// as CPython writes it: the page's cap prunes each batch as the
		// list takes it (about cap × H(levels) records and a batch)
		{1900, 45, 3000, 500, picCase{html: &HTMLOptions{MaxNodes: 2000}}, 2000*5 + 500*39},
		{300, 12, 50, 40, picCase{svg: &SVGOptions{Width: 300, MaxDepth: 5}, html: &HTMLOptions{MaxNodes: 100, MaxDepth: 7}}, 0},
	} {
		b := chains(tc.n, tc.depth, tc.size, tc.batch)
		ft, err := fastPicOf(bytes.NewReader(b), int64(len(b)), "chains.pkl", tc.c.specs())
		if ft == nil {
			t.Fatalf("%d chains of %d: fell back: %v", tc.n, tc.depth, err)
		}
		pv := ft.pic
		// per level: at most the stream's bytes over the threshold (the
		// lowest picture's: width/minW), and the chains
		perLevel := 0
		for _, sp := range pv.specs {
			perLevel = max(perLevel, int(sp.width/sp.minW)+1)
		}
		perLevel = min(perLevel, tc.n)
		bound := pv.levels*perLevel + 2
		if tc.most > 0 {
			bound = min(bound, tc.most)
		}
		if int(pv.n) > bound {
			t.Errorf("%d chains of %d, %v: %d records, bound %d (levels %d)", tc.n, tc.depth, tc.c, pv.n, bound, pv.levels)
		}
		p := writeTemp(t, dir, "chains.pkl", b)
		slow, err := slowTree(p)
		if err != nil {
			t.Fatal(err)
		}
		slow.File.Name = "chains.pkl"
		if got, want := picOutputs(t, ft, tc.c), picOutputs(t, slow, tc.c); got != want {
			t.Errorf("%d chains of %d, %v: the fast picture differs\n%s", tc.n, tc.depth, tc.c, firstDiff(got, want))
		}
		t.Logf("%d chains of %d (%d bytes), %v: %d records (bound %d)", tc.n, tc.depth, len(b), tc.c, pv.n-1, bound)
	}
}

// TestFastPictureServesOnly: a fast picture refuses to draw from another
// start or for options it was not made for (an error, not a wrong picture).
func TestFastPictureServesOnly(t *testing.T) {
	b := genPickle(3, 4)
	ft, err := fastPicOf(bytes.NewReader(b), int64(len(b)), "g.pkl", []picSpec{SVGOptions{}.spec()})
	if ft == nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := ft.WriteSVG(&w, ft.Root(), SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ft.WriteSVG(&w, ft.Root(), SVGOptions{Width: 4000}); err == nil {
		t.Error("drew an svg of another width")
	}
	if err := ft.WriteHTML(&w, ft.Root(), HTMLOptions{}); err == nil {
		t.Error("drew a page it was not made for")
	}
	if err := ft.WriteSVG(&w, Item{Kind: ItemFile, Size: 10}, SVGOptions{}); err == nil {
		t.Error("drew from another start")
	}
	if ft, _ := fastPicOf(bytes.NewReader(b), int64(len(b)), "g.pkl", []picSpec{HTMLOptions{MaxDepth: fastMaxDepth + 1}.spec()}); ft != nil {
		t.Error("a page deeper than fastMaxDepth took the fast path")
	}
	if FastPicture("-", &SVGOptions{}, nil) != nil || FastPicture("/nonexistent/file.pkl", &SVGOptions{}, nil) != nil || FastPicture(".", nil, &HTMLOptions{}) != nil {
		t.Error("stdin, a missing file or a directory took the fast path")
	}
}

// FuzzFastPicture: on any bytes the fast picture never panics, falls back
// exactly when --top's fast path does, and otherwise draws what the graph
// path draws.
func FuzzFastPicture(f *testing.F) {
	addFuzzSeeds(f)
	f.Add(chains(20, 9, 8, 3)) // 702 bytes, under fuzzMaxInput
	dir := f.TempDir()
	cases := []picCase{picCases[2], picCases[5]}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		tt, _ := fastTopOf(bytes.NewReader(b), int64(len(b)), "fuzz.pkl", 1)
		var slow *Tree
		for _, c := range cases {
			ft, err := fastPicOf(bytes.NewReader(b), int64(len(b)), "fuzz.pkl", c.specs())
			if (ft == nil) != (tt == nil) {
				t.Fatalf("the fast picture and --top disagree on falling back: %v", err)
			}
			if ft == nil {
				if err == nil {
					t.Fatal("no tree and no reason")
				}
				continue
			}
			if slow == nil {
				slow = fuzzSlowTree(t, dir, b, "the fast picture")
			}
			if got, want := picOutputs(t, ft, c), picOutputs(t, slow, c); got != want {
				t.Fatalf("%v differs\n%s", c, firstDiff(got, want))
			}
		}
	})
}
