package diff

import (
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestArraysPk2: with pk hash's form (pk-canon/2) one array written at
// protocol 5 and by joblib is the same pickle, and one changed array
// between those forms is one entry at its path, not the forms' differences.
func TestArraysPk2(t *testing.T) {
	const dir = "../../testdata/arrays/"
	opt := Options{Canon: canon.Options{Form: canon.Form2}}
	r, err := Files(dir+"dict_of_arrays_p5.pkl", dir+"dict_of_arrays.z.joblib", opt)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Same {
		t.Fatalf("one dict of arrays at protocol 5 and by joblib: %d entries", len(r.Entries))
	}
	r, err = Files(dir+"dict_of_arrays_p5.pkl", dir+"dict_of_arrays_changed.z.joblib", opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Same || len(r.Entries) != 1 || r.Entries[0].Path != "root['b']" || r.Entries[0].Kind != Changed {
		t.Fatalf("one changed array: %+v", r.Entries)
	}
	// pk-canon/1: the forms differ
	r, err = Files(dir+"dict_of_arrays_p5.pkl", dir+"dict_of_arrays.z.joblib", Options{})
	if err != nil || r.Same {
		t.Fatalf("pk-canon/1: %v, same %v", err, r != nil && r.Same)
	}
}

// TestArrayElements: one changed element is named with both values and the
// count, in every form and across forms.
func TestArrayElements(t *testing.T) {
	const dir = "../../testdata/arrays/"
	for _, c := range []elemCase{
		{"c_int32_p2.pkl", "c_int32_changed_p2.pkl", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"c_int32_p0.pkl", "c_int32_changed_p0.pkl", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"c_int32_p5.pkl", "c_int32_changed_p5.pkl", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"c_int32_p5.pkl", "c_int32_changed_p2.pkl", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"c_int32.joblib", "c_int32_changed.joblib", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"c_int32.npy", "c_int32_changed.npy", "root[1, 2]", "5", "99", "1 of 6 elements differ"},
		{"dict_of_arrays_p4.pkl", "dict_of_arrays_changed_p4.pkl", "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"},
		{"dict_of_arrays_p5.pkl", "dict_of_arrays_changed.joblib", "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"},
		{"../tensors/sd.pt", "../tensors/sd_changed.pt", "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"},
		{"../tensors/sd.legacy.pt", "../tensors/sd_changed.legacy.pt", "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"},
	} {
		checkElem(t, dir, c)
	}
	// another shape: said so
	r, err := Files(dir+"c_int32_p4.pkl", dir+"f_float64_p4.pkl", Options{Canon: canon.Options{Form: canon.Form2}})
	if err != nil || len(r.Entries) != 1 || r.Entries[0].Note != "dtype <i4 → <f8, shape (2, 3) → (3, 4)" {
		t.Fatalf("%v %+v", err, r.Entries)
	}
}

// elemCase is a pair of files whose one difference is an element or cell.
type elemCase struct{ a, b, path, va, vb, note string }

// checkElem checks that pk diff of c's files (under dir) gives one entry
// naming one changed element or cell with both values and the note.
func checkElem(t *testing.T, dir string, c elemCase) {
	t.Helper()
	r, err := Files(dir+c.a, dir+c.b, Options{Canon: canon.Options{Form: canon.Form2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 {
		t.Errorf("%s %s: %+v", c.a, c.b, r.Entries)
		return
	}
	e := r.Entries[0]
	if e.Path != c.path || e.A != c.va || e.B != c.vb || e.Note != c.note || e.Elem == nil || e.Elem.Differ != 1 {
		t.Errorf("%s %s: %s %q -> %q (%s)", c.a, c.b, e.Path, e.A, e.B, e.Note)
	}
}
