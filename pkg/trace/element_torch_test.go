package trace_test

import (
	"fmt"
	"path/filepath"
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
// runs and with --form pk1) is read by
// pk trace --path on both sides, at the index pk diff names, with the
// value pk diff printed for that side: an element of a tensor,
// root['fc.weight'][3, 7] (in its view of the storage), and an element of
// a storage that the tensor's view does not see, root['head']<data>[0]
// (part_changed), which --path reads from the tensor's storage. (Without
// storageElement: "no element" for every root['head']<data>[0].)
func TestTensorElementPaths(t *testing.T) {
	const dir = "../../testdata/tensors"
	forms := []string{".pt", ".legacy.pt", "_p2.pkl", "_p4.pkl"}
	var pairs [][2]string
	for _, n := range []string{"net", "sd", "part"} {
		for _, fa := range forms {
			for _, fb := range forms {
				pairs = append(pairs, [2]string{filepath.Join(dir, n+fa), filepath.Join(dir, n+"_changed"+fb)})
			}
		}
	}
	for _, f := range []string{"_p2.pkl.gz", "_p4.pkl.gz"} {
		pairs = append(pairs, [2]string{filepath.Join(dir, "big"+f), filepath.Join(dir, "big_changed"+f)})
	}
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
	elems, storage := 0, 0
	for _, p := range pairs {
		for _, form := range []canon.Form{canon.Form2, canon.Form1} {
			a, b := p[0], p[1]
			res, err := diff.Files(a, b, diff.Options{Canon: canon.Options{Form: form}}) // as pk diff runs (and --form pk1)
			if err != nil {
				t.Fatalf("%s %s: %v", a, b, err)
			}
			if len(res.Entries) == 0 {
				t.Fatalf("%s %s: no entries", a, b)
			}
			for _, e := range res.Entries {
				if e.Elem == nil {
					// (pk-canon/1 compares a zip's storage with pickle.dump's
					// nested bytes as values of other types)
					if form == canon.Form2 {
						t.Errorf("%s %s: %s is no element entry (%s / %s)", a, b, e.Path, e.A, e.B)
					}
					continue
				}
				if c, err := ppath.Canonical(e.Path); err != nil || c != e.Path {
					t.Errorf("%s %s: diff printed %q, which reads back as %q (%v)", a, b, e.Path, c, err)
				}
				tensor, inStorage := strings.CutSuffix(e.Path[:strings.LastIndexByte(e.Path, '[')], "<data>")
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
						if el.Kind != "torch storage" || el.Tensor != tensor || it.Path() != el.At || !strings.HasPrefix(el.At, tensor) {
							t.Errorf("%s: pk trace --path %s: %s of %q at %s (the tree at %s), want the storage of the tensor at %s", f, e.Path, el.Kind, el.Tensor, el.At, it.Path(), tensor)
						}
						if l := el.Line(); !strings.Contains(l, " torch storage of the tensor at "+tensor+", at ") || !strings.HasSuffix(l, "value "+want) {
							t.Errorf("%s: %s", f, l)
						}
						storage++
					} else {
						if el.Kind != "torch.Tensor" || el.At != tensor {
							t.Errorf("%s: pk trace --path %s: element of the %s at %s, want the tensor at %s", f, e.Path, el.Kind, el.At, tensor)
						}
						elems++
					}
				}
			}
		}
	}
	if storage < 48 || elems < 200 {
		t.Errorf("only %d storage and %d tensor element lookups", storage, elems)
	}
	t.Logf("%d pairs: %d tensor element and %d storage element lookups", len(pairs), elems, storage)
}
