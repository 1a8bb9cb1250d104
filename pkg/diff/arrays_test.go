package diff

import (
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/testfile"
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
	// (its element bytes read again through the file's zlib decompression:
	// without it the entry is at root['b'], "not read again")
	if r.Same || len(r.Entries) != 1 || r.Entries[0].Path != "root['b'][2]" || r.Entries[0].Kind != Changed || r.Entries[0].Elem == nil {
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

// TestTensorPickleDump: a tensor whose storage pickle.dump wrote (torch's
// _load_from_bytes of nested torch.save bytes) is named by element, in the
// same form and against torch.save's zip and legacy forms, whose files are
// then their data pickle (no part['version'], no legacy stream entries);
// a storage of 1 MiB or more is read again from the file, and through a
// gzip'd file's decompression. (Fails without c.tensors: the entry is at
// the storage, root['fc.weight'].__reduce__[1][0]; without asPickle: one
// more entry, part['version'] or stream[0]; without docOptions: the large
// plain storage is "type changed"; without Doc.StreamSection's
// decompression: the gzip'd one is at its nested bytes.)
func TestTensorPickleDump(t *testing.T) {
	const dir = "../../testdata/tensors/"
	fc := func(a, b string) elemCase {
		return elemCase{a, b, "root['fc.weight'][3, 7]", "0.27182877", "1.2718288", "1 of 80 elements differ"}
	}
	for _, c := range []elemCase{
		fc("net_p2.pkl", "net_changed_p2.pkl"),
		fc("net_p4.pkl", "net_changed_p4.pkl"),
		fc("net_p2.pkl", "net_changed_p4.pkl"),
		fc("net.pt", "net_changed_p4.pkl"),
		fc("net_p2.pkl", "net_changed.pt"),
		fc("net.legacy.pt", "net_changed_p2.pkl"),
		fc("net_p4.pkl", "net_changed.legacy.pt"),
		{"sd_p2.pkl", "sd_changed_p4.pkl", "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"},
		{"big_p2.pkl.gz", "big_changed_p2.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"},
		{"big_p4.pkl.gz", "big_changed_p2.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"},
	} {
		checkElem(t, dir, c)
	}
	// the same checkpoint in every form: the same pickle
	for _, f := range []string{"net.legacy.pt", "net_p2.pkl", "net_p4.pkl"} {
		if r, err := Files(dir+"net.pt", dir+f, Options{Canon: canon.Options{Form: canon.Form2}}); err != nil || !r.Same {
			t.Errorf("net.pt and %s: %v %+v", f, err, r)
		}
	}
	// storages of 1 MiB or more in plain files: read again from the file
	tmp := t.TempDir() + "/"
	for _, f := range []string{"big_p2.pkl", "big_changed_p4.pkl"} {
		testfile.GunzipTo(t, dir+f+".gz", tmp+f)
	}
	checkElem(t, tmp, elemCase{"big_p2.pkl", "big_changed_p4.pkl", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"})
	checkElem(t, "", elemCase{tmp + "big_p2.pkl", dir + "big_changed_p4.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"})
}

// TestArrayElementsCompressed: an array in a compressed container (joblib
// with each of its compressors, a gzip'd or xz'd pickle) is named by
// element: its bytes are read again through the file's decompression,
// streamed (without it: one entry at root['b'], "not read again").
func TestArrayElementsCompressed(t *testing.T) {
	const dir = "../../testdata/arrays/compressed/"
	b := func(a, c string) elemCase {
		return elemCase{a, c, "root['b'][2]", "1.0", "2.0", "1 of 3 elements differ"}
	}
	var cases []elemCase
	for _, f := range []string{".joblib.z", ".joblib.gz", ".joblib.bz2", ".joblib.xz", ".joblib.lzma", ".joblib.lz4", "_p2.pkl.gz", "_p4.pkl.gz", "_p5.pkl.gz", "_p4.pkl.xz"} {
		cases = append(cases, b("dict"+f, "dict_changed"+f))
	}
	cases = append(cases,
		b("dict_p5.pkl.gz", "dict_changed.joblib.lz4"),
		b("dict.joblib.xz", "../dict_of_arrays_changed_p4.pkl"),
		// a payload of 1 MiB or more, streamed by the reader
		elemCase{"big_p4.pkl.gz", "big_changed_p4.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"},
		elemCase{"big.joblib.z", "big_changed_p4.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"},
	)
	for _, c := range cases {
		checkElem(t, dir, c)
	}
	// protocol 2's data of 1 MiB or more (_codecs.encode of a streamed str)
	// in a plain file: its latin-1 bytes read again (canon's Node.OpenBytes;
	// without it: "not read again")
	tmp := t.TempDir() + "/"
	testfile.GunzipTo(t, dir+"big_p2.pkl.gz", tmp+"big_p2.pkl")
	checkElem(t, "", elemCase{tmp + "big_p2.pkl", dir + "big_changed_p4.pkl.gz", "root['w'][400, 123]", "0.0", "1.5", "1 of 300,000 elements differ"})
}

// TestArrayShapes: an object array of two dimensions is compared item by
// item, each named by its index (without it: at the array's list of
// items, root[5]); a Fortran-order array against a C-order array of the
// same values is one entry at the array saying so (pk-canon/2 counts the
// memory order: the digests differ though np.array_equal is true), and
// with one value changed names that element in C index order (without
// orderEntry: "elements differ, in memory orders F and C" at root).
func TestArrayShapes(t *testing.T) {
	const dir = "../../testdata/arrays/"
	r, err := Files(dir+"objects2d_p2.pkl", dir+"objects2d_changed_p5.pkl", Options{Canon: canon.Options{Form: canon.Form2}})
	if err != nil || len(r.Entries) != 1 || r.Entries[0].Path != "root[1, 2]" || r.Entries[0].Kind != TypeChanged {
		t.Errorf("objects2d: %v %+v", err, r.Entries)
	}
	// joblib's object arrays (a nested pickle each): named alike (heldObjects;
	// without it at part['array 0'].__getstate__()[4][5], or at root,
	// "<joblib object array>")
	for _, c := range [][3]string{{"objects2d.joblib", "objects2d_changed.z.joblib", "root[1, 2]"}, {"objects.z.joblib", "objects_changed.joblib", "root[1]"}} {
		r, err := Files(dir+c[0], dir+c[1], Options{Canon: canon.Options{Form: canon.Form2}})
		if err != nil || len(r.Entries) != 1 || r.Entries[0].Path != c[2] {
			t.Errorf("%s %s: %v %+v", c[0], c[1], err, r.Entries)
		}
	}
	if r, err := Files(dir+"objects2d_p0.pkl", dir+"objects2d.joblib", Options{Canon: canon.Options{Form: canon.Form2}}); err != nil || !r.Same {
		t.Errorf("objects2d at protocol 0 and by joblib: not the same (%v)", err)
	}
	for _, f := range []string{"_p4.pkl", "_p2.pkl", ".joblib"} {
		r, err := Files(dir+"f_float64"+f, dir+"c_float64_same_values_p5.pkl", Options{Canon: canon.Options{Form: canon.Form2}})
		if err != nil || r.Same || len(r.Entries) != 1 || r.Entries[0].Path != "root" || !strings.HasPrefix(r.Entries[0].Note, "the same values, in memory orders F and C") {
			t.Errorf("f_float64%s against C order: %v %+v", f, err, r.Entries)
		}
	}
	checkElem(t, dir, elemCase{"f_float64_changed_p4.pkl", "c_float64_same_values_p2.pkl", "root[2, 1]", "-7.0", "9.0", "1 of 12 elements differ, in memory orders F and C"})
	checkElem(t, dir, elemCase{"f_float64_p4.pkl", "f_float64_changed.z.joblib", "root[2, 1]", "9.0", "-7.0", "1 of 12 elements differ"})
}
