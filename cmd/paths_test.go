package cmd

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/diff"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/pk-tools/pk/pkg/trace"
	"github.com/rogpeppe/go-internal/testscript"
)

// The paths each command prints are read by the others (docs/paths.md):
// every path pk diff prints for a fixture pair parses, is spelled as
// pkg/path spells it, is found by pk trace --path in the file(s) that have
// it, and is ignorable by pk diff --ignore (the entry goes, and the path is
// not reported as matching nothing); every path pk trace prints is found by
// pk trace --path; every pk hash --explain path parses and is found by pk
// trace --path. That includes the places docs/paths.md numbers: effects
// (<effect i>, by their place in the call log) and dict keys and set
// elements that are no literal (<key i>, {#i}, in pickle order); only runs
// ([i:j], <effect i:j>) are not one object of pk trace's.

func openTree(t *testing.T, name string) *trace.Tree {
	t.Helper()
	doc, err := input.OpenWith(name, pickle.Options{}, input.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return trace.NewDoc(doc)
}

// diffPairs are the fixture pairs whose entries are checked.
func diffPairs(t *testing.T) [][2]string {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "differ", "*"))
	// testdata/paths: object keys, object set elements, effects
	// (testdata/gen/gen_paths.py)
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "paths", "*"))
	dirs = append(dirs, more...)
	var out [][2]string
	for _, d := range dirs {
		out = append(out, [2]string{filepath.Join(d, "a.pkl"), filepath.Join(d, "b.pkl")})
	}
	in := filepath.Join("..", "testdata", "inputs")
	for _, p := range [][2]string{
		{"torch_zip_a.pt", "torch_zip_b.pt"}, {"torch_legacy_a.pt", "torch_legacy_b.pt"},
		{"torch_zip_a.pt", "torch_legacy_b.pt"}, {"torch_legacy_a.pt", "torch_zip_b.pt"},
		{"joblib_a.joblib", "joblib_b.joblib"}, {"plain.pkl", "joblib_a.joblib"},
	} {
		out = append(out, [2]string{filepath.Join(in, p[0]), filepath.Join(in, p[1])})
	}
	if len(out) < 10 {
		t.Fatalf("only %d fixture pairs", len(out))
	}
	return out
}

// folds reports whether pk hash folds a producer's setstate call into
// the object it sets in file f (cloudpickle's _function_setstate and
// _class_setstate): pk diff compares the canonical form, where the state's
// entries are the object's attributes (root.predict), while pk trace shows
// the call where the pickle makes it (<popped 2>.__reduce__[1][1][0]['predict'])
// and finds the folded spelling through it (Tree.Find's unfold).
func folds(t *testing.T, f string) bool {
	res, err := canon.HashFile(f, canon.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Applied {
		if a.Rule == "setstate-fold" {
			return true
		}
	}
	return false
}

// isRun reports whether p ends in a run of items ([i:j]) or effects
// (<effect i:j>): several objects, which pk trace --path does not name
// as one (pk diff --ignore reads them).
func isRun(p string) bool {
	parsed, err := ppath.Parse(p)
	if err != nil || len(parsed) == 0 {
		return false
	}
	k := parsed[len(parsed)-1].Kind
	return k == ppath.SSlice || k == ppath.SPseudoSpan
}

func TestDiffPathsRoundTrip(t *testing.T) {
	trees := map[string]*trace.Tree{}
	tree := func(name string) *trace.Tree {
		if trees[name] == nil {
			trees[name] = openTree(t, name)
		}
		return trees[name]
	}
	checked, skipped, folded := 0, 0, 0
	numbered := map[string]int{} // paths through <effect i>, <key i>, {#i} found by trace
	for _, pair := range diffPairs(t) {
		a, b := pair[0], pair[1]
		res, err := diff.Files(a, b, diff.Options{})
		if err != nil {
			t.Fatalf("%s %s: %v", a, b, err)
		}
		for _, e := range res.Entries {
			c, err := ppath.Canonical(e.Path)
			if err != nil || c != e.Path {
				t.Errorf("%s: diff printed %q, which reads back as %q (%v)", a, e.Path, c, err)
				continue
			}
			if isRun(e.Path) {
				skipped++ // a run of items or effects: no one object of the tree
			} else {
				var sides []string
				switch e.Kind {
				case diff.Removed:
					sides = []string{a}
				case diff.Added:
					sides = []string{b}
				default:
					sides = []string{a, b}
				}
				for _, f := range sides {
					if folds(t, f) {
						folded++
					}
					if e.Elem != nil {
						// an element of an array or tensor: no object of the tree;
						// trace finds the array that holds it, and says which element
						checkElem(t, tree(f), e, f, f == b)
					}
					if _, err := tree(f).Find(e.Path); err != nil {
						t.Errorf("diff %s %s printed %s (%s), which pk trace --path does not find in %s: %v", a, b, e.Path, e.Kind, f, err)
					} else {
						for _, w := range []string{"<effect ", "<key ", "{#"} {
							if strings.Contains(e.Path, w) {
								numbered[w]++
							}
						}
					}
				}
				checked++
			}
			// --ignore of the path removes the entry and matches
			r2, err := diff.Files(a, b, diff.Options{Ignore: []string{e.Path}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e2 := range r2.Entries {
				if e2.Path == e.Path {
					t.Errorf("diff %s %s --ignore %s still gives that entry", a, b, e.Path)
				}
			}
			if len(r2.Unmatched) > 0 {
				t.Errorf("diff %s %s --ignore %s: reported as matching nothing", a, b, e.Path)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d diff paths looked up in trace (%d skipped)", checked, skipped)
	}
	for _, w := range []string{"<effect ", "<key ", "{#"} {
		if numbered[w] < 2 {
			t.Errorf("only %d diff paths through %s...> found by trace: the fixtures no longer test that numbering", numbered[w], w)
		}
	}
	if folded == 0 {
		t.Errorf("no diff path went through a folded setstate call: the fixtures no longer test unfold")
	}
	t.Logf("%d diff paths looked up by trace --path (%d lookups in files where pk hash folds setstate calls), %d runs only parsed and ignored; through numbered places: %v", checked, folded, skipped, numbered)
}

func TestTracePathsRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "inputs", "*"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "differ", "*", "*.pkl"))
	files = append(files, more...)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".json") || strings.Contains(f, "hostile") {
			continue
		}
		tr := openTree(t, f)
		seen := map[string]bool{}
		tr.Walk(tr.Root(), trace.Options{Depth: -1, All: true}, func(v *trace.Visit) {
			p := v.Path()
			if p == "" || v.Kind == trace.ItemElided || seen[p] {
				return
			}
			seen[p] = true
			if c, err := ppath.Canonical(p); err != nil || c != p {
				t.Errorf("%s: trace printed %q, which reads back as %q (%v)", f, p, c, err)
				return
			}
			it, err := tr.Find(p)
			if err != nil {
				t.Errorf("%s: trace printed %s, which --path does not find: %v", f, p, err)
				return
			}
			if it.Path() != p {
				t.Errorf("%s: --path %s found %s", f, p, it.Path())
			}
			n++
		}, nil)
	}
	if n < 500 {
		t.Errorf("only %d paths checked", n)
	}
}

func TestExplainPathsRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "*", "*.pkl"))
	in, _ := filepath.Glob(filepath.Join("..", "testdata", "inputs", "torch_*.pt"))
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "paths", "*", "*.pkl"))
	files = append(append(files, in...), paths...)
	effects := 0
	found, total := 0, 0
	var missing []string
	for _, f := range files {
		res, err := canon.HashFile(f, canon.Options{})
		if err != nil {
			continue
		}
		var tr *trace.Tree
		for _, a := range res.Applied {
			c, err := ppath.Canonical(a.Path)
			if err != nil || c != a.Path {
				t.Errorf("%s: --explain printed %q, which reads back as %q (%v)", f, a.Path, c, err)
				continue
			}
			if tr == nil {
				tr = openTree(t, f)
			}
			total++
			if _, err := tr.Find(a.Path); err == nil {
				found++
				if strings.Contains(a.Path, "<effect ") {
					effects++
				}
			} else {
				missing = append(missing, f+": "+a.Rule+" "+a.Path)
			}
		}
	}
	sort.Strings(missing)
	if total == 0 {
		t.Fatal("no --explain paths")
	}
	for _, m := range missing {
		t.Errorf("--explain printed a path pk trace --path does not find: %s", m)
	}
	if effects == 0 {
		t.Errorf("no --explain path under an effect: the fixtures no longer test root<effect i>")
	}
	t.Logf("%d of %d --explain paths found by trace --path (%d under an effect)", found, total, effects)
}

// TestPathScripts runs cmd/testdata/script/paths_*.txtar: the paths every
// command prints are read by --path and --ignore; malformed ones are
// errors, ones that match nothing warnings.
func TestPathScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "paths_"), Setup: inputsEnv(t), Cmds: fileCmds})
}

// elemAt is the path of the array or tensor holding an element pk diff
// names (a frame's cell: the frame's).
func elemAt(e diff.Entry) string {
	if e.Elem.At != "" {
		return e.Elem.At
	}
	return e.Path[:strings.LastIndexByte(e.Path, '[')]
}

// checkElem: pk trace --path finds the element a diff entry names in file
// f, in the array (a cell: in the frame) the entry names, at the entry's
// index (a cell's: at its row), with the value the entry gives for f's
// side when the element is a number (pkg/trace's FindElement).
func checkElem(t *testing.T, tr *trace.Tree, e diff.Entry, f string, isB bool) {
	t.Helper()
	_, el, err := tr.FindElement(e.Path)
	if err != nil || el == nil {
		t.Errorf("%s: pk trace --path %s: no element (%v)", f, e.Path, err)
		return
	}
	if el.Path != e.Path {
		t.Errorf("%s: pk trace --path %s: element %s", f, e.Path, el.Path)
	}
	if e.Elem.At != "" {
		if el.Frame != e.Elem.At {
			t.Errorf("%s: pk trace --path %s: a cell of the frame at %q, pk diff says %q", f, e.Path, el.Frame, e.Elem.At)
		}
	} else if el.At != elemAt(e) && !(el.At == "part['npy array']" && elemAt(e) == "root") || fmt.Sprint(el.Index) != fmt.Sprint(e.Elem.Index) {
		// (a .npy file's array is root in pk diff, its data part in the tree)
		t.Errorf("%s: pk trace --path %s: element %v of %s, pk diff says %v of %s", f, e.Path, el.Index, el.At, e.Elem.Index, elemAt(e))
	}
	want := e.A
	if isB {
		want = e.B
	}
	if el.Value != "" && el.Value != want && el.Kind != "object array" && el.Ext == "" { // (an extension column's cell: a code, a value under a mask)
		t.Errorf("%s: pk trace --path %s: value %s, pk diff shows %s", f, e.Path, el.Value, want)
	}
}

// TestFramePaths: the cells pk diff names in pandas frames (pk-canon/2, as
// pk diff runs) and a pipeline's coefficients parse, read back as printed,
// and are found at their frame or array by pk trace --path; --ignore of
// the path removes the entry.
func TestFramePaths(t *testing.T) {
	dir := filepath.Join("..", "testdata", "frames")
	opt := diff.Options{Canon: canon.Options{Form: canon.Form2}}
	n := 0
	for _, name := range []string{"range", "range40", "labels", "ints", "pipeline"} {
		for _, form := range []string{"_p2.pkl", "_p4.pkl", "_p5.pkl"} {
			a, b := filepath.Join(dir, name+form), filepath.Join(dir, name+"_changed"+form)
			res, err := diff.Files(a, b, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) != 1 || res.Entries[0].Elem == nil {
				t.Fatalf("%s %s: %+v", a, b, res.Entries)
			}
			e := res.Entries[0]
			if c, err := ppath.Canonical(e.Path); err != nil || c != e.Path {
				t.Errorf("%s: diff printed %q, which reads back as %q (%v)", a, e.Path, c, err)
			}
			for _, f := range []string{a, b} {
				tr := openTree(t, f)
				if _, err := tr.Find(elemAt(e)); err != nil {
					t.Errorf("%s: pk trace --path does not find %s (of %s): %v", f, elemAt(e), e.Path, err)
				}
				checkElem(t, tr, e, f, f == b)
			}
			o := opt
			o.Ignore = []string{e.Path}
			r2, err := diff.Files(a, b, o)
			if err != nil || len(r2.Entries) != 0 || len(r2.Unmatched) != 0 {
				t.Errorf("%s --ignore %s: %v %+v %v", a, e.Path, err, r2.Entries, r2.Unmatched)
			}
			n++
		}
	}
	for _, name := range []string{"range", "range40", "labels", "pipeline"} {
		a, b := filepath.Join(dir, name+".joblib"), filepath.Join(dir, name+"_changed.joblib")
		res, err := diff.Files(a, b, opt)
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Elem == nil {
			t.Fatalf("%s %s: %v %+v", a, b, err, res.Entries)
		}
		e := res.Entries[0]
		for _, f := range []string{a, b} {
			tr := openTree(t, f)
			if _, err := tr.Find(elemAt(e)); err != nil {
				t.Errorf("%s: pk trace --path does not find %s (of %s): %v", f, elemAt(e), e.Path, err)
			}
			checkElem(t, tr, e, f, f == b)
		}
		o := opt
		o.Ignore = []string{e.Path}
		if r2, err := diff.Files(a, b, o); err != nil || len(r2.Entries) != 0 || len(r2.Unmatched) != 0 {
			t.Errorf("%s --ignore %s: %v %+v %v", a, e.Path, err, r2.Entries, r2.Unmatched)
		}
		n++
	}
	if n != 19 {
		t.Fatalf("%d pairs", n)
	}
}

// TestElementPaths: every element of an array or tensor and every cell of
// a frame or Series that pk diff names in the array, frame and tensor
// fixtures (each form: protocols 0-5, joblib plain and compressed, .npy,
// torch zip and legacy, pickle.dump) is found by pk trace --path, in the
// array that holds it, with the value pk diff gives for that side (an
// object array's item: the object itself).
func TestElementPaths(t *testing.T) {
	var pairs [][2]string
	add := func(dir, a, b string, forms ...string) {
		for _, f := range forms {
			pa, pb := filepath.Join("..", "testdata", dir, a+f), filepath.Join("..", "testdata", dir, b+f)
			pairs = append(pairs, [2]string{pa, pb})
		}
	}
	arr := []string{"_p0.pkl", "_p1.pkl", "_p2.pkl", "_p3.pkl", "_p4.pkl", "_p5.pkl", ".joblib", ".z.joblib"}
	for _, n := range []string{"c_int32", "f_float64", "dict_of_arrays", "objects2d", "objects"} {
		add("arrays", n, n+"_changed", arr...)
	}
	add("arrays", "c_int32", "c_int32_changed", ".npy")
	add("arrays", "objects", "objects_changed", ".npy")
	for _, n := range []string{"range", "range40", "labels", "ints", "series", "series_str", "strcol", "pipeline"} {
		add("frames", n, n+"_changed", "_p2.pkl", "_p4.pkl", "_p5.pkl", ".joblib")
	}
	for _, n := range []string{"net", "sd"} {
		add("tensors", n, n+"_changed", ".pt", ".legacy.pt", "_p2.pkl", "_p4.pkl")
	}
	for _, n := range []string{"ext_cat", "ext_catint", "ext_catseries", "ext_int", "ext_bool", "ext_str", "ext_tz", "ext_tzconv", "ext_dt", "ext_npdt", "ext_nptd", "ext_td", "ext_tdseries", "ext_catnew", "ext_catorder", "ext_masked"} {
		add("frames", n, n+"_changed", "_p2.pkl", "_p4.pkl", "_p5.pkl", ".joblib")
	}
	add("tensors", "big", "big_changed", "_p2.pkl.gz", "_p4.pkl.gz")
	elems, cells, objects := 0, 0, 0
	for _, p := range pairs {
		a, b := p[0], p[1]
		res, err := diff.Files(a, b, diff.Options{Canon: canon.Options{Form: canon.Form2}}) // as pk diff runs
		if err != nil {
			t.Fatalf("%s %s: %v", a, b, err)
		}
		if len(res.Entries) == 0 {
			t.Fatalf("%s %s: no entries", a, b)
		}
		for _, e := range res.Entries {
			for _, f := range []string{a, b} {
				tr := openTree(t, f)
				if e.Elem != nil {
					checkElem(t, tr, e, f, f == b)
					if e.Elem.At != "" {
						cells++
					} else {
						elems++
					}
					continue
				}
				// an item of an object array, a str cell: an object of the
				// pickle, found at the path as printed, or through its array
				it, el, err := tr.FindElement(e.Path)
				if err != nil {
					t.Errorf("%s: pk trace --path %s (of pk diff %s %s): %v", f, e.Path, a, b, err)
					continue
				}
				if el != nil {
					if el.Kind != "object array" {
						t.Errorf("%s: pk trace --path %s: element of a %s, pk diff names an object", f, e.Path, el.Kind)
					}
					want := e.A
					if f == b {
						want = e.B
					}
					if l := tr.Label(it); strings.HasPrefix(want, "'") && !strings.Contains(l, want) {
						t.Errorf("%s: pk trace --path %s: %s, pk diff shows %s / %s", f, e.Path, l, e.A, e.B)
					}
					objects++
				}
			}
		}
	}
	if elems < 40 || cells < 20 || objects < 10 {
		t.Errorf("only %d elements, %d cells and %d object items looked up", elems, cells, objects)
	}
	t.Logf("%d pairs: %d element, %d cell and %d object-item lookups", len(pairs), elems, cells, objects)
}
