package diff

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestSizesLater: the entries of walks whose stores' sides are out
// (spillAt: every walk's here), whose sizes are made when the walk is
// done (cmp.size, sizeEntries), and whose A's fingerprint table is in
// temporary files while B's is made (spillAt too), are the
// entries of walks that size them as
// they are added: every directory of testdata, each file against the next,
// as they are, under --ignore and with Options.Detail, and with the paths
// rendered later too. Fails when the walk reads a size while the sides are
// out (0), or when an entry keeps its placeholder.
func TestSizesLater(t *testing.T) {
	sized := 0
	eachTestPair(func(a, b string, opt Options, want *Result) {
		for _, later := range []int{bigWalk, 0} {
			oldSpill, oldLater := spillAt, pathsLaterAt
			spillAt, pathsLaterAt = 0, later
			got, err := Files(a, b, opt)
			spillAt, pathsLaterAt = oldSpill, oldLater
			if err != nil {
				t.Fatalf("%s %s: %v", a, b, err)
			}
			if !reflect.DeepEqual(got.Entries, want.Entries) {
				t.Fatalf("%s %s %+v (paths later at %d): sizes made later\n%+v\nwant\n%+v", a, b, opt, later, got.Entries, want.Entries)
			}
		}
		for _, e := range want.Entries {
			if e.SizeA > 0 || e.SizeB > 0 {
				sized++
			}
		}
	})
	t.Logf("%d entries with a size", sized)
	if sized < 50 {
		t.Errorf("only %d entries with a size compared", sized)
	}
}

// TestSizesLaterOut: a walk of stores whose sides are out sizes an added
// list from them when it is done, as one that keeps them in.
func TestSizesLaterOut(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
	os.WriteFile(a, []byte("\x80\x02]K\x01a."), 0o644)              // [1]
	os.WriteFile(b, []byte("\x80\x02](K\x01(K\x02K\x03le."), 0o644) // [1, [2, 3]]
	want, ok := eachFiles(a, b, Options{})
	if !ok {
		t.Fatal("eachFiles did not take the pair")
	}
	spillAt = 0
	defer func() { spillAt = 200 << 20 }()
	got, ok := eachFiles(a, b, Options{})
	if !ok {
		t.Fatal("eachFiles did not take the pair with the sides out")
	}
	if !reflect.DeepEqual(got.Entries, want.Entries) {
		t.Fatalf("sides out:\n%+v\nwant\n%+v", got.Entries, want.Entries)
	}
	n := 0
	for _, e := range got.Entries {
		if e.Kind == Added {
			n++
			if e.SizeB != 6 { // ( K\x02 K\x03 l
				t.Errorf("%s added with size %d, want 6", e.Path, e.SizeB)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no entry added: %+v", got.Entries)
	}
}

// TestAlikeLater: the two forms' views of a pair are compared (formsAlike)
// only when locate would walk again: not for a difference in one entry,
// and for one in two, as before. Fails when stream compares them for every
// pair (settleAlike).
func TestAlikeLater(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl"), filepath.Join(dir, "c.pkl")
	os.WriteFile(a, []byte("\x80\x02](K\x01K\x02K\x03e."), 0o644) // [1, 2, 3]
	os.WriteFile(b, []byte("\x80\x02](K\x01K\x02K\x04e."), 0o644) // [1, 2, 4]
	os.WriteFile(c, []byte("\x80\x02](K\x05K\x02K\x04e."), 0o644) // [5, 2, 4]
	for _, tc := range []struct {
		b       string
		entries int
		runs    bool
	}{{b, 1, false}, {c, 2, true}} {
		formsAlikeRuns = 0
		r, ok := eachFiles(a, tc.b, Options{Canon: canon.Options{Form: canon.Form2}})
		if !ok {
			t.Fatal("eachFiles did not take the pair")
		}
		if len(r.Entries) != tc.entries || (formsAlikeRuns > 0) != tc.runs {
			t.Errorf("%s: %d entries (want %d), formsAlike ran %d times (want some: %v)", tc.b, len(r.Entries), tc.entries, formsAlikeRuns, tc.runs)
		}
	}
}

// FuzzSizesLater: on any two inputs eachFiles takes, a walk that spills
// (spillAt 0: the stores' sides and A's fingerprint table out, the sizes
// made when the walk is done) gives the entries of one that does not.
func FuzzSizesLater(f *testing.F) {
	f.Add([]byte("\x80\x02]K\x01a."), []byte("\x80\x02](K\x01(K\x02K\x03le."))
	f.Add([]byte("\x80\x02cbuiltins\nlist\n)R(K\x01K\x02e."), []byte("\x80\x02cbuiltins\nlist\n)R(K\x01K\x03e."))
	f.Add([]byte("\x80\x02}(K\x01]q\x00K\x02h\x00u."), []byte("\x80\x02}(K\x01]q\x00K\x02(K\x05lu."))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, pb := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
		if os.WriteFile(pa, a, 0o644) != nil || os.WriteFile(pb, b, 0o644) != nil {
			t.Skip()
		}
		for _, opt := range []Options{{}, {Canon: canon.Options{Form: canon.Form2}}} {
			want, ok := eachFiles(pa, pb, opt)
			if !ok {
				continue
			}
			spillAt = 0
			got, ok := eachFiles(pa, pb, opt)
			spillAt = 200 << 20
			if !ok {
				t.Fatalf("eachFiles did not take the pair with the spills")
			}
			if !reflect.DeepEqual(got.Entries, want.Entries) {
				t.Fatalf("spilled:\n%+v\nwant\n%+v", got.Entries, want.Entries)
			}
		}
	})
}
