package trace_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/diff"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/pk-tools/pk/pkg/trace"
)

// TestTensorElementPaths: every element path pk diff prints for the
// differing tensor fixtures (testdata/tensors: each base against its
// changed copy, in every pair of the forms torch.save zip and legacy and
// pickle.dump at protocols 2 and 4, and the gzip'd big storages; as pk diff
// runs and with --form pk1) is read by pk trace --path on both sides, at
// the index pk diff names, with the value pk diff printed for that side:
// an element of a tensor, root['fc.weight'][3, 7] (in its view of the
// storage; dtypes: bfloat16, float16, complex64/128, bool, int8, uint8,
// int16, float64), and an element of a storage that the tensor's view does
// not see, root['head']<data>[0] (part_changed), which --path reads from
// the tensor's storage. (Without storageElement: "no element" for every
// root['head']<data>[0].)
func TestTensorElementPaths(t *testing.T) {
	const dir = "../../testdata/tensors"
	forms := []string{".pt", ".legacy.pt", "_p2.pkl", "_p4.pkl"}
	var pairs [][2]string
	for _, n := range []string{"net", "sd", "part", "dtypes"} {
		for _, fa := range forms {
			for _, fb := range forms {
				pairs = append(pairs, [2]string{filepath.Join(dir, n+fa), filepath.Join(dir, n+"_changed"+fb)})
			}
		}
	}
	for _, f := range []string{"_p2.pkl.gz", "_p4.pkl.gz"} {
		pairs = append(pairs, [2]string{filepath.Join(dir, "big"+f), filepath.Join(dir, "big_changed"+f)})
	}
	storage, elems := elementLookups(t, pairs, []canon.Form{canon.Form2, canon.Form1}, "torch.Tensor")
	if storage < 48 || elems < 400 {
		t.Errorf("only %d storage and %d tensor element lookups", storage, elems)
	}
	t.Logf("%d pairs: %d tensor element and %d storage element lookups", len(pairs), elems, storage)
}

// TestArrayDTypeElementPaths: the elements pk diff names between numpy
// arrays of each dtype spelling (testdata/arrays/dtypes: <f2, <c8, <c16,
// |b1, >f4, <u2, <i8, <M8[D]) at protocols 0-5 and by joblib, plain and
// zlib'd, each form against each, are read by pk trace --path with pk
// diff's values.
func TestArrayDTypeElementPaths(t *testing.T) {
	const dir = "../../testdata/arrays"
	forms := []string{"_p0.pkl", "_p1.pkl", "_p2.pkl", "_p3.pkl", "_p4.pkl", "_p5.pkl", ".joblib", ".z.joblib"}
	var pairs [][2]string
	for _, fa := range forms {
		for _, fb := range forms {
			pairs = append(pairs, [2]string{filepath.Join(dir, "dtypes"+fa), filepath.Join(dir, "dtypes_changed"+fb)})
		}
	}
	_, elems := elementLookups(t, pairs, []canon.Form{canon.Form2}, "numpy.ndarray", "joblib array")
	if want := len(pairs) * 2 * 8; elems != want {
		t.Errorf("%d element lookups, want %d", elems, want)
	}
}

// elementLookups checks every element entry pk diff gives for each pair
// (in each canonical form) against pk trace --path of both files: the
// element, at pk diff's index, of an array of one of kinds at the path
// less its last step (or of a tensor's storage, T<data>[k]), with pk diff's
// value. Under pk-canon/2 every entry under root must be an element's. It returns how
// many storage and other elements it looked up.
func elementLookups(t *testing.T, pairs [][2]string, forms []canon.Form, kinds ...string) (storage, elems int) {
	t.Helper()
	trees := map[string]*trace.Tree{}
	open := func(name string) *trace.Tree {
		if tr, ok := trees[name]; ok {
			return tr
		}
		d, err := input.OpenWith(name, pickle.Options{}, input.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr := trace.NewDoc(d)
		trees[name] = tr
		return tr
	}
	for _, p := range pairs {
		for _, form := range forms {
			a, b := p[0], p[1]
			res, err := diff.Files(a, b, diff.Options{Canon: canon.Options{Form: form}}) // as pk diff runs (or --form pk1)
			if err != nil {
				t.Fatalf("%s %s: %v", a, b, err)
			}
			if len(res.Entries) == 0 {
				t.Fatalf("%s %s: no entries", a, b)
			}
			for _, e := range res.Entries {
				if e.Elem == nil {
					// (pk-canon/1 compares a zip's storage with pickle.dump's
					// nested bytes as values of other types; a zip against a
					// legacy file with many tensors changed is listed from
					// pk-canon/1's view, with the containers' streams and
					// records)
					if form == canon.Form2 && strings.HasPrefix(e.Path, "root") {
						t.Errorf("%s %s: %s is no element entry (%s / %s)", a, b, e.Path, e.A, e.B)
					}
					continue
				}
				if c, err := ppath.Canonical(e.Path); err != nil || c != e.Path {
					t.Errorf("%s %s: diff printed %q, which reads back as %q (%v)", a, b, e.Path, c, err)
				}
				holder, inStorage := strings.CutSuffix(e.Path[:strings.LastIndexByte(e.Path, '[')], "<data>")
				for _, f := range []string{a, b} {
					want := e.A
					if f == b {
						want = e.B
					}
					it, el, err := open(f).FindElement(e.Path)
					if err != nil || el == nil {
						t.Errorf("%s: pk trace --path %s (of pk diff %s %s): no element (%v)", f, e.Path, a, b, err)
						continue
					}
					if el.Path != e.Path || fmt.Sprint(el.Index) != fmt.Sprint(e.Elem.Index) {
						t.Errorf("%s: pk trace --path %s: element %v at %s, pk diff names %v", f, e.Path, el.Index, el.Path, e.Elem.Index)
					}
					if el.Value != want {
						t.Errorf("%s: pk trace --path %s: value %q (%s), pk diff shows %s", f, e.Path, el.Value, el.Why, want)
					}
					if inStorage {
						if el.Kind != "torch storage" || el.Tensor != holder || it.Path() != el.At || !strings.HasPrefix(el.At, holder) {
							t.Errorf("%s: pk trace --path %s: %s of %q at %s (the tree at %s), want the storage of the tensor at %s", f, e.Path, el.Kind, el.Tensor, el.At, it.Path(), holder)
						}
						if l := el.Line(); !strings.Contains(l, " torch storage of the tensor at "+holder+", at ") || !strings.HasSuffix(l, "value "+want) {
							t.Errorf("%s: %s", f, l)
						}
						storage++
						continue
					}
					if !slices.Contains(kinds, el.Kind) || el.At != holder {
						t.Errorf("%s: pk trace --path %s: element of the %s at %s, want one of %v at %s", f, e.Path, el.Kind, el.At, kinds, holder)
					}
					elems++
				}
			}
		}
	}
	return storage, elems
}
