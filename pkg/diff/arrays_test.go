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
