package diff

import (
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestJoblibObjectsAgainstPickled: a joblib object array (a nested pickle
// of the object ndarray) against a pickled one (protocols 0-5, .npy) that
// differs names the differing items as two pickled object arrays do, each
// way round, plain and zlib'd joblib: root[1] 'x' → 'y', root[1, 2] (1,) →
// 'c' (foreignArrays; without it one entry at root, "<joblib object
// array>" against "array |O8 (4,) of objects"). The same values stay the
// same pickle. A joblib frame's str column (an object block) against a
// pickled one names the cell, root['name'][20], as each against its own
// kind does (c.frames' objectCells, through withForeign; without it at the
// block's item, root._mgr.__reduce__[1][0][0].__reduce__[1][0][0, 1]); a
// Series' too, root['b'], whose values joblib writes twice where the
// pickle shares them: that is said once, at the second copy (without the
// block left out of the walk after: at the first copy too).
func TestJoblibObjectsAgainstPickled(t *testing.T) {
	const dir = "../../testdata/arrays/"
	opt := Options{Canon: canon.Options{Form: canon.Form2}}
	n := 0
	for _, obj := range []string{"objects", "objects2d"} {
		want, err := Files(dir+obj+"_p4.pkl", dir+obj+"_changed_p4.pkl", opt)
		if err != nil || len(want.Entries) != 1 || !strings.HasPrefix(want.Entries[0].Path, "root[") {
			t.Fatalf("%s: pickle against pickle: %v %+v", obj, err, want.Entries)
		}
		w := want.Entries[0]
		pickled := []string{"_p0.pkl", "_p1.pkl", "_p2.pkl", "_p3.pkl", "_p4.pkl", "_p5.pkl"}
		if obj == "objects" {
			pickled = append(pickled, ".npy")
		}
		for _, jf := range []string{".joblib", ".z.joblib"} {
			for _, pf := range pickled {
				for _, pair := range [][2]string{{obj + jf, obj + "_changed" + pf}, {obj + pf, obj + "_changed" + jf}} {
					r, err := Files(dir+pair[0], dir+pair[1], opt)
					if err != nil || len(r.Entries) != 1 {
						t.Errorf("%s %s: %v %+v", pair[0], pair[1], err, r.Entries)
						continue
					}
					e := r.Entries[0]
					if e.Path != w.Path || e.Kind != w.Kind || e.A != w.A || e.B != w.B || e.Note != w.Note {
						t.Errorf("%s %s: %s %s %s → %s (%s), pickle against pickle: %s %s %s → %s (%s)", pair[0], pair[1], e.Path, e.Kind, e.A, e.B, e.Note, w.Path, w.Kind, w.A, w.B, w.Note)
					}
					if e.OffA <= 0 || e.OffB <= 0 {
						t.Errorf("%s %s: offsets %d, %d", pair[0], pair[1], e.OffA, e.OffB)
					}
					n++
				}
				if r, err := Files(dir+obj+jf, dir+obj+pf, opt); err != nil || !r.Same {
					t.Errorf("%s%s and %s%s: not the same (%v)", obj, jf, obj, pf, err)
				}
			}
		}
	}
	const frames = "../../testdata/frames/"
	for _, c := range []struct {
		name, cell, a, b string
		entries          int
	}{
		{"strcol", "root['name'][20]", "'b'", "'B'", 1},
		{"series_str", "root['b']", "'y'", "'Y'", 2},
	} {
		for _, pf := range []string{"_p2.pkl", "_p4.pkl", "_p5.pkl"} {
			for _, pair := range [][2]string{{c.name + ".joblib", c.name + "_changed" + pf}, {c.name + pf, c.name + "_changed.joblib"}} {
				r, err := Files(frames+pair[0], frames+pair[1], opt)
				if err != nil || len(r.Entries) != c.entries {
					t.Errorf("%s %s: %v %+v", pair[0], pair[1], err, r.Entries)
					continue
				}
				if e := r.Entries[0]; e.Path != c.cell || e.Kind != Changed || e.A != c.a || e.B != c.b {
					t.Errorf("%s %s: %+v", pair[0], pair[1], r.Entries)
				}
				if c.entries == 2 && (r.Entries[1].Kind != AliasChanged || !strings.HasSuffix(r.Entries[1].Path, "['values']")) {
					t.Errorf("%s %s: %+v", pair[0], pair[1], r.Entries[1])
				}
				n++
			}
		}
	}
	t.Logf("%d joblib against pickled pairs", n)
}
