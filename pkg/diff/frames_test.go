package diff

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestFrameCells: one changed cell of a pandas frame is named by column and
// row label (a RangeIndex's start+step*i, str and int labels), with both
// values and how many cells of its block differ, in every protocol and
// across protocols (testdata/gen/gen_frames.py).
func TestFrameCells(t *testing.T) {
	const dir = "../../testdata/frames/"
	type want struct{ path, va, vb, note string }
	cases := map[string]want{
		"range":   {"root['score'][4]", "0.21", "-5.0", "1 of 6 cells differ"},
		"range40": {"root['score'][42]", "0.25", "-5.0", "1 of 6 cells differ"},
		"labels":  {"root['score']['v']", "0.21", "-5.0", "1 of 6 cells differ, in a block of 2 columns"},
		"ints":    {"root['n'][30]", "9", "90", "1 of 3 cells differ"},
		// a Series: its element by row label (array.SeriesAt)
		"series": {"root[42]", "0.125", "-5.0", "1 of 4 elements differ"},
		// a fitted pipeline: the generic walk names the step and attribute,
		// the array its element, the note the step (steps.go)
		"pipeline": {"root.steps[1][1].coef_[0, 3]", "-0.6089586300009043", "0.39104136999909567", "1 of 4 elements differ; in step 'clf' (sklearn.linear_model._logistic.LogisticRegression)"},
	}
	for name, w := range cases {
		for _, p := range [][2]string{{"_p4.pkl", "_p4.pkl"}, {"_p2.pkl", "_p2.pkl"}, {"_p5.pkl", "_p5.pkl"}, {"_p2.pkl", "_p5.pkl"}, {"_p5.pkl", "_p4.pkl"}} {
			a, b := dir+name+p[0], dir+name+"_changed"+p[1]
			r, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != 1 {
				t.Errorf("%s %s: %+v", a, b, r.Entries)
				continue
			}
			e := r.Entries[0]
			if e.Path != w.path || e.A != w.va || e.B != w.vb || e.Note != w.note || e.Kind != Changed || e.Elem == nil || e.Elem.Differ != 1 {
				t.Errorf("%s %s: %s %q -> %q (%s)", a, b, e.Path, e.A, e.B, e.Note)
			}
			// the same frame at another protocol is no difference
			if r, err := Files(a, dir+name+p[1], Options{Canon: canon.Options{Form: canon.Form2}}); err != nil || !r.Same {
				t.Errorf("%s %s: not the same (%v)", a, dir+name+p[1], err)
			}
		}
	}
	// joblib: the blocks are raw parts, the column Index a nested pickle
	for _, c := range []elemCase{
		{"range.joblib", "range_changed.joblib", "root['score'][4]", "0.21", "-5.0", "1 of 6 cells differ"},
		{"range40.joblib", "range40_changed.joblib", "root['score'][42]", "0.25", "-5.0", "1 of 6 cells differ"},
		{"labels.joblib", "labels_changed.joblib", "root['score']['v']", "0.21", "-5.0", "1 of 6 cells differ, in a block of 2 columns"},
		{"range_p2.pkl", "range_changed.joblib", "root['score'][4]", "0.21", "-5.0", "1 of 6 cells differ"},
		{"labels.joblib", "labels_changed_p5.pkl", "root['score']['v']", "0.21", "-5.0", "1 of 6 cells differ, in a block of 2 columns"},
		// an int64 row Index in a raw part: its labels are read from it
		// (rowLabels; without it the element is named in the block,
		// root._mgr.__reduce__[1][0][0].__reduce__[1][0][0, 2])
		{"ints.joblib", "ints_changed.joblib", "root['n'][30]", "9", "90", "1 of 3 cells differ"},
		// a Series by joblib: its values and their copy in the manager's
		// extra state name one element (seriesPaths, dedupe)
		{"series.joblib", "series_changed.joblib", "root[42]", "0.125", "-5.0", "1 of 4 elements differ"},
	} {
		checkElem(t, dir, c)
	}
	// joblib: the pipeline's arrays are raw parts; the element is named
	r, err := Files(dir+"pipeline.joblib", dir+"pipeline_changed.joblib", Options{Canon: canon.Options{Form: canon.Form2}})
	if err != nil || len(r.Entries) != 1 || r.Entries[0].Path != "root.steps[1][1].coef_[0, 3]" || r.Entries[0].Note != "1 of 4 elements differ; in step 'clf' (sklearn.linear_model._logistic.LogisticRegression)" {
		t.Fatalf("pipeline joblib: %v %+v", err, r.Entries)
	}
}

// TestObjectCells: a changed str cell of a frame or a Series is named by
// column and row label (the block's values an object array), with both
// values, in every protocol (without objectCells: at the block's item,
// root._mgr.__reduce__[1][0][0].__reduce__[1][0][0, 1]; for the Series
// at root._mgr.__getstate__()[1][0][1]).
func TestObjectCells(t *testing.T) {
	const dir = "../../testdata/frames/"
	for _, p := range [][2]string{{"_p4.pkl", "_p4.pkl"}, {"_p2.pkl", "_p5.pkl"}, {".joblib", ".joblib"}} {
		for _, c := range []struct{ name, path, va, vb string }{
			{"strcol", "root['name'][20]", "'b'", "'B'"},
			{"series_str", "root['b']", "'y'", "'Y'"},
		} {
			r, err := Files(dir+c.name+p[0], dir+c.name+"_changed"+p[1], Options{Canon: canon.Options{Form: canon.Form2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != 1 || r.Entries[0].Path != c.path || r.Entries[0].A != c.va || r.Entries[0].B != c.vb {
				t.Errorf("%s%s: %+v", c.name, p, r.Entries)
			}
		}
	}
}

// TestExtensionCells: a changed cell of a pandas extension column (pandas
// 1.5.3: category, nullable Int64 and boolean, string, datetime naive and
// tz-aware, timedelta) is one entry at the cell, with both values as
// pandas shows them, at protocols 2, 4 and 5, by joblib (its arrays raw
// parts, its object arrays and categories nested pickles: rawExt) and
// across the two (testdata/gen/gen_frames.py's ext_* objects).
func TestExtensionCells(t *testing.T) {
	_, zones := time.LoadLocation("Europe/Paris")
	for _, c := range []struct{ name, path, a, b, note string }{
		{"ext_cat", "root['c'][20]", "'b'", "'z'", "1 of 3 cells differ, in a category column, codes 1 → 2"},
		{"ext_catint", "root['c'][2]", "9", "5", "1 of 4 cells differ, in a category column, codes 2 → 0"},
		{"ext_catseries", "root['w']", "'lo'", "'hi'", "1 of 3 cells differ, in a category column, codes 1 → 0"},
		{"ext_int", "root['n'][30]", "3", "30", "1 of 3 cells differ, in a nullable integer (Int64) column"},
		{"ext_bool", "root['b']['w']", "False", "<NA>", "1 of 3 cells differ, in a nullable boolean column"},
		{"ext_str", "root['s'][30]", "'z'", "'Z'", "bytes differ from offset 0 of 1"},
		// datetime64[ns, tz] and timedelta64[ns] (a 2-D (1, rows) block; 1-D
		// in a Series) as str(Timestamp) and str(Timedelta); NaT
		{"ext_tz", "root['t'][20]", "2021-01-02 00:00:00+00:00", "2021-01-03 00:00:00+00:00", "1 of 3 cells differ, in a datetime64[ns, UTC] column"},
		{"ext_tzparis", "root['t'][1]", "NaT", "2021-07-02 00:00:00+02:00", "1 of 2 cells differ, in a datetime64[ns, Europe/Paris] column"},
		{"ext_dt", "root['t']['v']", "2021-01-02 00:00:00", "2021-01-02 03:04:05.500000", "1 of 3 cells differ, in a datetime64[ns] column"},
		{"ext_td", "root['d'][20]", "0 days 02:00:00", "-1 days +21:00:00", "1 of 3 cells differ, in a timedelta64[ns] column"},
		// the same instants in another time zone: one entry at the tz
		{"ext_tzconv", "root._mgr.__reduce__[1][0][0].__reduce__[1][0].__getstate__()[0].tz", "UTC", "Europe/Paris", "the time zone of a datetime column; every cell's instant is the same"},
		{"ext_tdseries", "root['b']", "0 days 00:00:02", "NaT", "1 of 2 cells differ, in a timedelta64[ns] column"},
		// numpy datetime64 and timedelta64 blocks (pandas before 1.3)
		{"ext_npdt", "root['t'][20]", "2021-01-02 00:00:00", "2021-01-02 03:04:05.500000", "1 of 3 cells differ, in a datetime64[ns] column"},
		{"ext_nptd", "root['d']['v']", "0 days 00:00:00", "-1 days +23:59:59.999999999", "1 of 2 cells differ, in a timedelta64[ns] column"},
		// other categories: each side's code through its own categories
		{"ext_catnew", "root['c'][20]", "'b'", "'z'", "2 of 3 cells differ, in a category column; categories changed: 2 → 3"},
		// the same values, the categories reordered: one entry at them
		{"ext_catorder", "root._mgr.__reduce__[1][0][0].__reduce__[1][0].__getstate__()[0].categories", "['a', 'b']", "['b', 'a']",
			"every cell's value is the same; categories reordered, and 3 of 3 codes with them"},
		// a value under a set mask (pandas shows <NA> on both sides)
		{"ext_masked", "root['b'][3]", "<NA>", "<NA>", "a value under the mask: 5 → 7"},
	} {
		if c.name == "ext_tzparis" && zones != nil {
			continue // (no zone database: shown in UTC, and the note says so)
		}
		for _, form := range [][2]string{{"_p2.pkl", "_p2.pkl"}, {"_p4.pkl", "_p4.pkl"}, {"_p5.pkl", "_p5.pkl"}, {".joblib", ".joblib"}, {"_p2.pkl", ".joblib"}, {".joblib", "_p5.pkl"}} {
			a := filepath.Join("..", "..", "testdata", "frames", c.name+form[0])
			b := filepath.Join("..", "..", "testdata", "frames", c.name+"_changed"+form[1])
			res, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) != 1 {
				t.Errorf("%s %s: %d entries: %+v", a, b, len(res.Entries), res.Entries)
				continue
			}
			e := res.Entries[0]
			if e.Path != c.path || e.A != c.a || e.B != c.b || e.Note != c.note {
				t.Errorf("%s %s: %s %s %s (%s), want %s %s %s (%s)", a, b, e.Path, e.A, e.B, e.Note, c.path, c.a, c.b, c.note)
			}
			// --ignore of the entry's path leaves nothing, in every pair
			// of forms (locate's pk-canon/2 walk decides what is left once
			// something was ignored)
			r2, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}, Ignore: []string{e.Path}})
			if err != nil || len(r2.Entries) != 0 || len(r2.Unmatched) != 0 {
				t.Errorf("%s --ignore %s: %v %+v %v", a, e.Path, err, r2.Entries, r2.Unmatched)
			}
		}
		// the same frame in another form is no difference
		for _, form := range [][2]string{{"_p2.pkl", ".joblib"}, {"_p4.pkl", "_p5.pkl"}} {
			a := filepath.Join("..", "..", "testdata", "frames", c.name+form[0])
			b := filepath.Join("..", "..", "testdata", "frames", c.name+form[1])
			if r, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}}); err != nil || !r.Same {
				t.Errorf("%s %s: not the same (%v)", a, b, err)
			}
		}
	}
}

// TestExtensionDType: a naive datetime column made tz-aware with the same
// int64 counts (tz_localize('UTC')) is one entry at the array's dtype, in
// pandas' names, beside what else of the array's state differs (pandas
// 1.5.3 writes the naive one's _freq, the aware one's not), in every form.
func TestExtensionDType(t *testing.T) {
	const at = "root._mgr.__reduce__[1][0][0].__reduce__[1][0].__getstate__()"
	for _, form := range [][2]string{{"_p2.pkl", "_p2.pkl"}, {"_p4.pkl", "_p5.pkl"}, {".joblib", ".joblib"}, {"_p2.pkl", ".joblib"}} {
		a := filepath.Join("..", "..", "testdata", "frames", "ext_aware"+form[0])
		b := filepath.Join("..", "..", "testdata", "frames", "ext_aware_changed"+form[1])
		res, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != 2 {
			t.Errorf("%s %s: %+v", a, b, res.Entries)
			continue
		}
		e, f := res.Entries[0], res.Entries[1]
		if e.Path != at+"[0]" || e.A != "datetime64[ns]" || e.B != "datetime64[ns, UTC]" || e.Note != "the dtype of a datetime column; every cell's int64 count is the same" ||
			f.Path != at+"[2]['_freq']" || f.Kind != Removed {
			t.Errorf("%s %s: %+v", a, b, res.Entries)
		}
	}
}
