package canon

import (
	"path/filepath"
	"testing"
)

// TestWholeCodeArgs: with Options.WholeCodeArgs (pk canon's check of its
// output) no code object's arguments are folded at their REDUCE, and the
// digest is the one with the fold, on pickles whose arguments fold.
func TestWholeCodeArgs(t *testing.T) {
	for _, p := range []string{"cp210_closure/p4_seed21_a.pkl", "dill036_closure/p3_seed19_a.pkl"} {
		p = filepath.Join("../../testdata/equiv", p)
		argFolds.Store(0)
		want, err := HashFile(p, Options{NoPaths: true})
		if err != nil {
			t.Fatal(err)
		}
		if argFolds.Load() == 0 {
			t.Fatalf("%s: no argument tuple folded without WholeCodeArgs", p)
		}
		argFolds.Store(0)
		got, err := HashFile(p, Options{NoPaths: true, WholeCodeArgs: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := argFolds.Load(); n != 0 {
			t.Errorf("%s: %d argument tuples folded with WholeCodeArgs", p, n)
		}
		if got.Digest != want.Digest {
			t.Errorf("%s: %s with WholeCodeArgs, %s without", p, got.Digest, want.Digest)
		}
	}
}
