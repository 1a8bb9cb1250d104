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

const inputs = "../../testdata/inputs"

func loadDoc(t *testing.T, name string) *Tree {
	t.Helper()
	d, err := input.Open(filepath.Join(inputs, name), pickle.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return NewDoc(d)
}

func containerFixtures(t *testing.T) []string {
	m, _ := filepath.Glob(filepath.Join(inputs, "*"))
	var out []string
	for _, p := range m {
		b := filepath.Base(p)
		if strings.HasPrefix(b, "hostile") || strings.HasSuffix(b, ".py") || strings.HasSuffix(b, ".json") {
			continue
		}
		out = append(out, b)
	}
	if len(out) < 25 {
		t.Fatalf("only %d container fixtures", len(out))
	}
	return out
}

// Every line's self plus its children is its size; the root is the file's
// length when nothing is compressed, the decompressed content otherwise.
func TestContainerSizesAddUp(t *testing.T) {
	for _, name := range containerFixtures(t) {
		tr := loadDoc(t, name)
		path := filepath.Join(inputs, name)
		checkSums(t, path, tr, Options{Depth: -1, All: true})
		checkSums(t, path, tr, Options{Depth: -1})
		checkSums(t, path, tr, Options{Depth: -1, MinSize: 50, SortSize: true})
		fi, _ := os.Stat(path)
		d := tr.Doc
		if d == nil { // a bare pickle: the plain tree
			if tr.Total != fi.Size() {
				t.Errorf("%s: total %d, file %d", name, tr.Total, fi.Size())
			}
			continue
		}
		// the root is the sum of the parts' bytes (+ the container line)
		var parts int64
		for _, p := range d.Parts {
			switch {
			case p.Raw != nil:
				parts += p.Raw.Len
			case p.Pickle != nil && p.Of < 0:
				for _, s := range p.Pickle.Streams {
					parts += s.Len()
				}
				if p.Pickle.Trailing != nil {
					parts += p.Pickle.Trailing.Len
				}
			}
		}
		// joblib arrays sit inside their pickle stream: counted once
		for _, p := range d.Parts {
			if p.JoblibArray() && p.Raw != nil {
				parts -= p.Raw.Len
			}
		}
		var container int64
		for _, it := range tr.Children(tr.Root()) {
			if it.Kind == ItemPart && it.part.code == CodeContainer && it.part.idx < 0 {
				container = it.Size
			}
		}
		if tr.Total != parts+container {
			t.Errorf("%s: root %d, parts %d + container %d", name, tr.Total, parts, container)
		}
		if !d.Deflated() && tr.Total != fi.Size() {
			t.Errorf("%s: root %d, file %d", name, tr.Total, fi.Size())
		}
		if d.Deflated() && container != 0 {
			t.Errorf("%s: compressed input with a container line of %d", name, container)
		}
		var b bytes.Buffer
		if err := tr.WriteJSON(&b, tr.Root(), Options{Depth: -1}); err != nil {
			t.Errorf("%s: JSON: %v", name, err)
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n")) {
			if !json.Valid(l) {
				t.Errorf("%s: JSON line invalid: %s", name, l)
				break
			}
		}
		b.Reset()
		if err := tr.WriteSVG(&b, tr.Root(), SVGOptions{}); err != nil {
			t.Errorf("%s: svg: %v", name, err)
		}
	}
}

func TestContainerExactNumbers(t *testing.T) {
	for name, want := range map[string]struct{ total, container int64 }{
		"torch_zip_a.pt":          {1911, 1911 - 561 - 24 - 8 - 12 - 8 - 3 - 2},
		"torch_legacy_a.pt":       {941, 5 * 8},
		"plain_v1.npy":            {168, 128},
		"objects.npy":             {313, 128},
		"joblib_a.joblib":         {826, 0},
		"joblib_a_gzip.joblib.gz": {826, 0}, // decompressed
		"plain.pkl.zst":           {574, 0},
	} {
		tr := loadDoc(t, name)
		var container int64
		for _, it := range tr.Children(tr.Root()) {
			if it.Kind == ItemPart && it.part.code == CodeContainer && it.part.idx < 0 {
				container = it.Size
			}
		}
		if tr.Total != want.total || container != want.container {
			t.Errorf("%s: total %d container %d, want %d %d", name, tr.Total, container, want.total, want.container)
		}
	}
}

// A tensor is labelled with dtype and shape and sized with its storage:
// its size is its pickle bytes plus the storage's, and the storage is a
// "<data>" child of its persistent id.
func TestTensorSizedWithStorage(t *testing.T) {
	for _, name := range []string{"torch_zip_a.pt", "torch_legacy_a.pt"} {
		tr := loadDoc(t, name)
		bare := New(tr.Doc.Parts[0].Pickle)
		for path, want := range map[string]struct {
			label   string
			storage int64
		}{
			"root['layer.weight']": {"torch.Tensor float32 (2, 3)", 24},
			"root['emb.weight']":   {"torch.Tensor float16 (3, 2)", 12},
			"root['steps']":        {"torch.Tensor int64 ()", 8},
			"root['mask']":         {"torch.Tensor bool (3,)", 3},
			"root['row1']":         {"torch.Tensor float32 (3,) at element 3", 0}, // a view: counted at layer.weight
		} {
			it, err := tr.Find(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := tr.Label(it); got != want.label || tr.Code(it) != CodeTensor {
				t.Errorf("%s %s: %s %q, want %q", name, path, tr.Code(it), got, want.label)
			}
			pp := path
			if strings.HasSuffix(tr.Doc.Format, "torch-legacy") {
				pp = "stream[3]" + strings.TrimPrefix(path, "root") // the fourth stream, read as a bare pickle
			}
			b, err := bare.Find(pp)
			if err != nil {
				t.Fatalf("%s bare %s: %v", name, pp, err)
			}
			if it.Size != b.Size+want.storage {
				t.Errorf("%s %s: size %d, want pickle %d + storage %d", name, path, it.Size, b.Size, want.storage)
			}
			data, err := tr.Find(path + ".__reduce__[1][0]<data>")
			if err != nil {
				t.Fatalf("%s %s: storage line: %v", name, path, err)
			}
			if data.Kind != ItemPart || data.Size != want.storage {
				t.Errorf("%s %s: storage line %s size %d, want %d", name, path, tr.Label(data), data.Size, want.storage)
			}
			if want.storage == 0 && !strings.Contains(tr.Label(data), "counted at root['layer.weight'].__reduce__[1][0]") {
				t.Errorf("%s %s: shared storage line %q", name, path, tr.Label(data))
			}
		}
		// --top: the largest tensor by its state-dict path
		var firstTensor string
		for _, it := range tr.Top(20) {
			if tr.Code(it) == CodeTensor {
				firstTensor = it.Path()
				break
			}
		}
		if firstTensor != "root['layer.weight']" {
			t.Errorf("%s: largest tensor in --top is %q", name, firstTensor)
		}
		var b bytes.Buffer
		tr.WriteTop(&b, 3, Style{Bytes: true})
		if !strings.Contains(b.String(), "Tn root['layer.weight']  torch.Tensor float32 (2, 3)") {
			t.Errorf("%s: --top 3:\n%s", name, b.String())
		}
	}
}

func TestJoblibArraysSized(t *testing.T) {
	for _, name := range []string{"joblib_a.joblib", "joblib_a_gzip.joblib.gz", "joblib_a_lzma.joblib.lzma", "joblib_a_lz4.joblib.lz4"} {
		tr := loadDoc(t, name)
		for path, want := range map[string]struct {
			label string
			data  int64
		}{
			"root['weights']": {"joblib array <f8 (3, 4)", 96},
			"root['ids']":     {"joblib array <i4 (5,)", 20},
			"root['fortran']": {"joblib array <i2 (2, 3) Fortran order", 12},
		} {
			it, err := tr.Find(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := tr.Label(it); got != want.label {
				t.Errorf("%s %s: label %q, want %q", name, path, got, want.label)
			}
			data, err := tr.Find(path + "<data>")
			if err != nil || data.Size != want.data || it.Size <= want.data {
				t.Errorf("%s %s: data %d (%v), want %d inside %d", name, path, data.Size, err, want.data, it.Size)
			}
		}
		if top := tr.Top(2); len(top) < 2 || top[1].Path() != "root['weights']" {
			t.Errorf("%s: top %v", name, top)
		}
	}
	// an object array: its nested pickle is a stream below the wrapper
	tr := loadDoc(t, "joblib_objarray.joblib")
	it, err := tr.Find("root['objects']<data>")
	if err != nil {
		t.Fatal(err)
	}
	if it.Kind != ItemNode || it.Path() != "root['objects']<data>" {
		t.Errorf("nested root: %+v", it)
	}
	found := false
	for _, x := range tr.Top(100) {
		if x.Path() == it.Path() && x.Size == it.Size {
			found = true
		}
	}
	if !found {
		t.Error("the nested pickle's root is not in --top with its path")
	}
}

func TestNpyParts(t *testing.T) {
	tr := loadDoc(t, "plain_v1.npy")
	var b bytes.Buffer
	tr.WriteText(&b, tr.Root(), Options{Depth: -1}, Style{Bytes: true})
	for _, want := range []string{"168  100.0%            0  ┬ File", "40   23.8%           40  ├─ Ar npy array data: <f4 (2, 5)", "128   76.2%          128  └─ Ct .npy magic, version and header"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	top := tr.Top(1)
	if len(top) != 1 || top[0].Size != 40 {
		t.Errorf("top of a .npy: %+v", top)
	}
}

// A bare pickle opened through pkg/input gives the same tree as before.
func TestNewDocBarePickle(t *testing.T) {
	d, err := input.Open("../../testdata/trace/cp_closure.pkl", pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := NewDoc(d), load(t, "../../testdata/trace/cp_closure.pkl")
	var x, y bytes.Buffer
	a.WriteText(&x, a.Root(), Options{Depth: -1}, Style{Bytes: true})
	b.WriteText(&y, b.Root(), Options{Depth: -1}, Style{Bytes: true})
	if a.Doc != nil || x.String() != y.String() {
		t.Error("NewDoc of a bare pickle differs from New")
	}
}
