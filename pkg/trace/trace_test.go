package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

func load(t *testing.T, path string) *Tree {
	t.Helper()
	f, err := pickle.ParseFile(path, pickle.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return New(f)
}

// loadCorpus is load for the shared corpus, where some files are not bare
// pickles (joblib streams with raw array bytes, containers): those are
// skipped until pkg/input opens them.
func loadCorpus(t *testing.T, path string) *Tree {
	t.Helper()
	if strings.Contains(path, "/testdata/trace/") {
		return load(t, path)
	}
	f, err := pickle.ParseFile(path, pickle.Options{})
	if err != nil {
		// not a bare pickle: a container (joblib, torch, compressed)
		d, derr := input.Open(path, pickle.Options{})
		if derr != nil {
			t.Logf("skipping %s: %v", path, derr)
			return nil
		}
		return NewDoc(d)
	}
	return New(f)
}

// fixtures returns our own fixtures plus the shared corpus when present.
func fixtures(t *testing.T) []string {
	var out []string
	for _, g := range []string{"../../testdata/trace/*.pkl", "../../testdata/fixtures/*/*.pkl", "../../testdata/fixtures/*.pkl"} {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures found")
	}
	return out
}

// checkSums walks the whole tree and checks, for every shown item, that its
// self bytes plus its children's sizes equal its size, and that the root is
// the file's length.
func checkSums(t *testing.T, name string, tr *Tree, opt Options) int {
	t.Helper()
	root := tr.Root()
	if root.Size != tr.Total {
		t.Errorf("%s: root size %d, file %d", name, root.Size, tr.Total)
	}
	fi, err := os.Stat(name)
	if err == nil && fi.Size() != tr.Total && (tr.Doc == nil || !tr.Doc.Deflated()) {
		t.Errorf("%s: total %d, file on disk %d", name, tr.Total, fi.Size())
	}
	type acc struct{ size, sum int64 }
	var stack []acc
	lines := 0
	tr.Walk(root, opt, func(v *Visit) {
		lines++
		if v.Depth > 0 {
			stack[v.Depth-1].sum += v.Size
		}
		if v.Kind == ItemRef && v.Size != 0 {
			t.Errorf("%s: reference %s has size %d", name, v.Path(), v.Size)
		}
		if v.Kind == ItemStream && v.Size != v.Stream.Bytes() {
			t.Errorf("%s: stream size %d != length %d + storages %d", name, v.Size, v.Stream.Store.Length(), v.Stream.outside)
		}
		stack = append(stack[:v.Depth], acc{size: v.Size, sum: v.Self})
	}, func(v *Visit) {
		a := stack[v.Depth]
		if (v.Kids > 0 || v.Kind == ItemNode) && !v.Truncated && a.sum != a.size {
			t.Errorf("%s: %s %q: self %d + children = %d, size %d", name, tr.Code(v.Item), v.Path(), v.Self, a.sum, a.size)
		}
	})
	return lines
}

func TestSizesAddUp(t *testing.T) {
	for _, name := range fixtures(t) {
		tr := loadCorpus(t, name)
		if tr == nil {
			continue
		}
		checkSums(t, name, tr, Options{Depth: -1, All: true})
		checkSums(t, name, tr, Options{Depth: -1})
		checkSums(t, name, tr, Options{Depth: -1, MinSize: 100, SortSize: true})
		// every node's inclusive size is Self plus what it owns
		for _, st := range tr.Streams {
			var tops int64
			for _, x := range st.Store.Tops {
				tops += st.Incl(x)
			}
			for _, x := range st.Orphans {
				tops += st.Incl(x)
			}
			if tops+st.Store.StreamSelf != st.Store.Length() {
				t.Errorf("%s: stream %d: tops %d + self %d != len %d", name, st.Store.Index, tops, st.Store.StreamSelf, st.Store.Length())
			}
			if len(st.Orphans) > 0 {
				t.Logf("%s: %d orphans", name, len(st.Orphans))
			}
		}
	}
}

func TestLabels(t *testing.T) {
	cases := []struct{ file, want string }{
		{"cp_closure.pkl", "F1 root function make_scorer.<locals>.score"},
		{"cp_closure.pkl", "Ce1 [0] cell"},
		{"cp_closure.pkl", "L ['TABLE'] list[25600]"},
		{"cp_closure.pkl", "Co .__code__ code make_scorer.<locals>.score"},
		{"cp_class.pkl", "T2 ['cls'] class Point (by value)"},
		{"dill_func.pkl", "F1 root function make_scorer.<locals>.score"},
		{"dill_class.pkl", "T2 ['cls'] class Point (by value)"},
		{"numpy.pkl", "Ar ['weights'] numpy.ndarray float32 (64, 48)"},
		{"numpy.pkl", "Ar ['bias'] numpy.ndarray float64 (48,)"},
		{"numpy_p2.pkl", "Ar [0] numpy.ndarray float32 (4, 4)"},
		{"torch_data.pkl", "Tn ['w'] torch.Tensor float32 (3, 4)"},
		{"torch_data.pkl", "St [0] torch FloatStorage key '0' on cpu, 12 elements"},
		{"stdlib_p4.pkl", "→ ['shared_b'] #"},
		{"stdlib_p4.pkl", "↻ cycle"},
		{"stdlib_p0.pkl", "↻ cycle"},
		{"stdlib_p2.pkl", "By ['blob'] bytes[5000]"},
	}
	for _, c := range cases {
		tr := load(t, "../../testdata/trace/"+c.file)
		var b bytes.Buffer
		if err := tr.WriteText(&b, tr.Root(), Options{Depth: -1}, Style{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: no line with %q in\n%s", c.file, c.want, head(b.String(), 60))
		}
	}
}

func head(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

func TestBillionLaughsIsShort(t *testing.T) {
	tr := load(t, "../../testdata/trace/laughs.pkl")
	n := checkSums(t, "laughs", tr, Options{Depth: -1})
	if n > 40 {
		t.Errorf("billion laughs printed %d lines", n)
	}
	all := checkSums(t, "laughs", tr, Options{Depth: -1, All: true})
	if all > 200 {
		t.Errorf("billion laughs with --all printed %d lines", all)
	}
}

func TestASCII(t *testing.T) {
	tr := load(t, "../../testdata/trace/stdlib_p4.pkl")
	var b bytes.Buffer
	tr.WriteText(&b, tr.Root(), Options{Depth: -1, All: true}, Style{ASCII: true})
	tr.WriteText(&b, tr.Root(), Options{Depth: 2, MinSize: 20}, Style{ASCII: true})
	tr.WriteTop(&b, 5, Style{ASCII: true})
	tl := load(t, "../../testdata/trace/laughs.pkl")
	tl.WriteText(&b, tl.Root(), Options{Depth: -1}, Style{ASCII: true})
	tc := load(t, "../../testdata/trace/cp_closure.pkl")
	tc.WriteText(&b, tc.Root(), Options{Depth: -1}, Style{ASCII: true})
	for i, c := range b.Bytes() {
		if c >= 0x80 {
			t.Fatalf("non-ASCII byte at %d: %q", i, head(b.String()[max(0, i-80):], 2))
		}
	}
	if !strings.Contains(b.String(), "<cycle>") || !strings.Contains(b.String(), "|") {
		t.Errorf("ASCII output lacks branches or cycle marks:\n%s", b.String())
	}
	for _, env := range []struct {
		lcAll, lang string
		want        bool
	}{{"", "en_US.UTF-8", true}, {"C", "en_US.UTF-8", false}, {"", "C", false}, {"de_DE.utf8", "", true}} {
		t.Setenv("LC_ALL", env.lcAll)
		t.Setenv("LC_CTYPE", "")
		t.Setenv("LANG", env.lang)
		if got := UTF8Locale(); got != env.want {
			t.Errorf("LC_ALL=%q LANG=%q: UTF8Locale %v", env.lcAll, env.lang, got)
		}
	}
}

type jnode struct {
	File     string `json:"file"`
	Record   string `json:"record"`
	Total    int64  `json:"total"`
	Depth    int    `json:"depth"`
	Kind     string `json:"kind"`
	Code     string `json:"code"`
	Label    string `json:"label"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Self     int64  `json:"self"`
	ID       *int   `json:"id"`
	Ref      *int   `json:"ref"`
	Cycle    bool   `json:"cycle"`
	Children int    `json:"children"`
}

// TestJSON reads trace --json's records back into the tree (depth and
// children counts) and checks that sizes add up.
func TestJSON(t *testing.T) {
	for _, name := range fixtures(t) {
		tr := loadCorpus(t, name)
		if tr == nil {
			continue
		}
		var b bytes.Buffer
		if err := tr.WriteJSON(&b, tr.Root(), Options{Depth: -1, All: true}); err != nil {
			t.Fatal(err)
		}
		var recs []jnode
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			var n jnode
			if err := json.Unmarshal([]byte(l), &n); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, l)
			}
			recs = append(recs, n)
		}
		if len(recs) < 2 || recs[0].Record != "summary" {
			t.Fatalf("%s: no summary record first:\n%s", name, head(b.String(), 5))
		}
		total, nodes := recs[0].Total, recs[1:]
		if nodes[0].Size != total || nodes[0].Depth != 0 {
			t.Errorf("%s: JSON root %d (depth %d) != total %d", name, nodes[0].Size, nodes[0].Depth, total)
		}
		sum, kids := make([]int64, len(nodes)), make([]int, len(nodes))
		var stack []int
		cycles := 0
		for i, n := range nodes {
			for len(stack) > 0 && nodes[stack[len(stack)-1]].Depth >= n.Depth {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				if nodes[p].Depth != n.Depth-1 {
					t.Fatalf("%s: record %d at depth %d under depth %d", name, i, n.Depth, nodes[p].Depth)
				}
				sum[p] += n.Size
				kids[p]++
			} else if i > 0 {
				t.Fatalf("%s: a second root at record %d", name, i)
			}
			stack = append(stack, i)
			if n.Kind == "ref" && n.Ref == nil {
				t.Errorf("%s: ref without id at %s", name, n.Path)
			}
			if n.Cycle {
				cycles++
			}
		}
		for i, n := range nodes {
			if kids[i] != n.Children {
				t.Errorf("%s: JSON %s: %d children follow, it says %d", name, n.Path, kids[i], n.Children)
			}
			if n.Kind != "ref" && n.Self+sum[i] != n.Size {
				t.Errorf("%s: JSON %s: self+children %d != size %d", name, n.Path, n.Self+sum[i], n.Size)
			}
		}
		if strings.HasSuffix(name, "stdlib_p4.pkl") && cycles != 2 {
			t.Errorf("%s: %d cycles in JSON, want 2", name, cycles)
		}
	}
}

func TestTopAndPath(t *testing.T) {
	tr := load(t, "../../testdata/trace/cp_closure.pkl")
	top := tr.Top(10)
	if len(top) != 10 {
		t.Fatalf("top: %d items", len(top))
	}
	for i := 1; i < len(top); i++ {
		if top[i].Size > top[i-1].Size {
			t.Errorf("top not sorted at %d", i)
		}
	}
	found := false
	for _, it := range top {
		got, err := tr.Find(it.Path())
		if err != nil {
			t.Errorf("Find(%q): %v", it.Path(), err)
			continue
		}
		if got.Stream != it.Stream || got.Node != it.Node || got.Size != it.Size {
			t.Errorf("Find(%q) = #%d, want #%d", it.Path(), got.Node, it.Node)
		}
		if strings.HasSuffix(it.Path(), "['__globals__']['TABLE']") {
			found = true
		}
	}
	if !found {
		t.Errorf("the dragged global is not among the top 10")
	}
	if _, err := tr.Find("root['nope']"); err == nil {
		t.Error("Find of a missing path succeeded")
	}
	tr = load(t, "../../testdata/trace/stdlib_p4.pkl")
	it, err := tr.Find("root['nested']['deep']")
	if err != nil || it.Stream.Store.Kind(it.Node) != pickle.KindDict {
		t.Fatalf("Find nested: %v %+v", err, it)
	}
	var b bytes.Buffer
	tr.WriteText(&b, it, Options{Depth: 1, All: true}, Style{Bytes: true})
	if !strings.Contains(b.String(), "Tu ['deeper'] tuple[4]") || strings.Contains(b.String(), "I [0]") {
		t.Errorf("--path/--depth output:\n%s", b.String())
	}
}

func TestMultiStream(t *testing.T) {
	tr := load(t, "../../testdata/trace/multi.pkl")
	if len(tr.Streams) != 2 || tr.Root().Kind != ItemFile {
		t.Fatalf("streams %d root %v", len(tr.Streams), tr.Root().Kind)
	}
	if _, err := tr.Find("stream[1]['a']"); err != nil {
		t.Error(err)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"512": 512, "10K": 10240, "10KiB": 10240, "10KB": 10000, "1MiB": 1 << 20, "1.5M": 3 << 19, "2g": 2 << 30, "7 B": 7} {
		got, err := ParseSize(s)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "10Q", "-1", "1KX"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) accepted", s)
		}
	}
}
