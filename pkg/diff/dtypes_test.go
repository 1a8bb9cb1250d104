package diff

import (
	"fmt"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestDTypeSpellings: pk diff names the changed element of an array of
// each dtype, in numpy's spellings (testdata/arrays/dtypes: <f2, <c8, <c16,
// |b1, >f4, <u2, <i8, <M8[D], at protocols 0-5 and by joblib, plain and
// zlib'd) and torch's (testdata/tensors/dtypes: bfloat16, float16,
// complex64, complex128, bool, int8, uint8, int16, float64, by torch.save
// zip and legacy and pickle.dump at protocols 2 and 4), at its index with
// the count of elements (each dtype's item size: a wrong one miscounts or
// misplaces it) and both values as Python prints the scalar. Each form
// against each of its kind. (Before joblib's dtypes carried their unit, a
// joblib datetime was 18779, not 18779[D].)
func TestDTypeSpellings(t *testing.T) {
	type want struct{ a, b, note string }
	numpy := map[string]want{
		"root['f2'][2]":  {"2.0", "-2.5", "1 of 3 elements differ"},
		"root['c8'][1]":  {"(0.1-1j)", "3j", "1 of 2 elements differ"},
		"root['c16'][1]": {"(0.5+0j)", "(-0.25+1j)", "1 of 2 elements differ"},
		"root['b1'][1]":  {"False", "True", "1 of 3 elements differ"},
		"root['be'][2]":  {"2.0", "2.5", "1 of 3 elements differ"},
		"root['u2'][1]":  {"65535", "7", "1 of 2 elements differ"},
		"root['i8'][1]":  {"1099511627776", "-1099511627776", "1 of 2 elements differ"},
		"root['M8'][1]":  {"18779[D]", "18780[D]", "1 of 2 elements differ"},
	}
	torch := map[string]want{
		"root['bf16'][2]": {"2.0", "-2.5", "1 of 3 elements differ"},
		"root['f16'][2]":  {"2.0", "-2.5", "1 of 3 elements differ"},
		"root['c64'][1]":  {"(0.1-1j)", "3j", "1 of 2 elements differ"},
		"root['c128'][1]": {"(0.5+0j)", "(-0.25+1j)", "1 of 2 elements differ"},
		"root['bool'][1]": {"False", "True", "1 of 3 elements differ"},
		"root['i8'][1]":   {"2", "-128", "1 of 2 elements differ"},
		"root['u8'][1]":   {"255", "7", "1 of 2 elements differ"},
		"root['i16'][1]":  {"-300", "300", "1 of 2 elements differ"},
		"root['f64'][1]":  {"0.2", "0.3", "1 of 2 elements differ"},
	}
	for _, c := range []struct {
		dir   string
		forms []string
		want  map[string]want
	}{
		{"../../testdata/arrays/", []string{"_p0.pkl", "_p1.pkl", "_p2.pkl", "_p3.pkl", "_p4.pkl", "_p5.pkl", ".joblib", ".z.joblib"}, numpy},
		// (zip against legacy: not paired; with 9 tensors changed the
		// entries are listed from pk-canon/1's view, with the containers'
		// streams and records)
		{"../../testdata/tensors/", []string{".pt", "_p2.pkl", "_p4.pkl"}, torch},
		{"../../testdata/tensors/", []string{".legacy.pt", "_p2.pkl", "_p4.pkl"}, torch},
	} {
		for _, fa := range c.forms {
			for _, fb := range c.forms {
				a, b := c.dir+"dtypes"+fa, c.dir+"dtypes_changed"+fb
				r, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]bool{}
				for _, e := range r.Entries {
					w, ok := c.want[e.Path]
					if !ok || e.Kind != Changed || e.Elem == nil || e.Elem.Differ != 1 || e.A != w.a || e.B != w.b || e.Note != w.note {
						t.Errorf("%s %s: %s %s %q → %q (%s), elem %+v", fa, fb, e.Path, e.Kind, e.A, e.B, e.Note, e.Elem)
						continue
					}
					if fmt.Sprint(e.Elem.Index) != "["+e.Path[len(e.Path)-2:len(e.Path)-1]+"]" {
						t.Errorf("%s %s: %s: index %v", fa, fb, e.Path, e.Elem.Index)
					}
					got[e.Path] = true
				}
				if len(got) != len(c.want) {
					t.Errorf("%s %s: %d of the %d arrays named: %v", fa, fb, len(got), len(c.want), got)
				}
			}
		}
	}
}
