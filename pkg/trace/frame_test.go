package trace

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestFrameLabels: a pandas DataFrame is labelled with its columns and row
// count (pkg/array's frame recognizer, the one pk diff names cells with) in
// every pickle form pandas and joblib write (testdata/gen/gen_frames.py,
// gen_arrays.py).
func TestFrameLabels(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"frames/range_p2.pkl", "pandas.core.frame.DataFrame 2 columns × 6 rows"},
		{"frames/range_p4.pkl", "pandas.core.frame.DataFrame 2 columns × 6 rows"},
		{"frames/range_p5.pkl", "pandas.core.frame.DataFrame 2 columns × 6 rows"},
		{"frames/range.joblib", "pandas.core.frame.DataFrame 2 columns × 6 rows"},
		{"frames/range40_p4.pkl", "pandas.core.frame.DataFrame 1 column × 6 rows"},
		{"frames/labels_p2.pkl", "pandas.core.frame.DataFrame 2 columns × 3 rows"},
		{"frames/labels.joblib", "pandas.core.frame.DataFrame 2 columns × 3 rows"},
		{"frames/ints_p5.pkl", "pandas.core.frame.DataFrame 1 column × 3 rows"},
		{"arrays/frame_p0.pkl", "pandas.core.frame.DataFrame 2 columns × 3 rows"},
		{"arrays/frame_p1.pkl", "pandas.core.frame.DataFrame 2 columns × 3 rows"},
		{"arrays/frame.z.joblib", "pandas.core.frame.DataFrame 2 columns × 3 rows"},
	} {
		d, err := input.Open(filepath.Join("..", "..", "testdata", c.file), pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		tr := NewDoc(d)
		it, err := tr.Find("root")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got := tr.Label(it); got != c.want {
			t.Errorf("%s: label %q, want %q", c.file, got, c.want)
		}
	}
}

// TestTimeCells: pk trace --path of a datetime or timedelta cell pk diff
// names (a DatetimeArray's 2-D (1, rows) block, a TimedeltaArray Series, a
// numpy datetime64 block) finds its int64 count in the block and says the
// value as pandas shows it, at protocol 2 too (the unit of a protocol 2
// dtype is _codecs.encode(s, 'latin1')) and by joblib.
func TestTimeCells(t *testing.T) {
	for _, c := range []struct {
		file, path, dtype, when string
		index                   string
	}{
		{"ext_tz_p2.pkl", "root['t'][20]", "datetime64[ns]", ": 2021-01-02 00:00:00+00:00", "[0 1]"},
		{"ext_tz_p5.pkl", "root['t'][20]", "datetime64[ns]", ": 2021-01-02 00:00:00+00:00", "[0 1]"},
		{"ext_tz.joblib", "root['t'][20]", "datetime64[ns]", ": 2021-01-02 00:00:00+00:00", "[0 1]"},
		{"ext_td_p2.pkl", "root['d'][20]", "timedelta64[ns]", ": 0 days 02:00:00", "[0 1]"},
		{"ext_tdseries_p4.pkl", "root['b']", "timedelta64[ns]", ": 0 days 00:00:02", "[1]"},
		{"ext_npdt_p2.pkl", "root['t'][20]", "datetime64[ns]", ": 2021-01-02 00:00:00", "[0 1]"},
	} {
		d, err := input.Open(filepath.Join("..", "..", "testdata", "frames", c.file), pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		_, el, err := NewDoc(d).FindElement(c.path)
		if err != nil || el == nil {
			t.Errorf("%s %s: %v", c.file, c.path, err)
			continue
		}
		if el.DType != c.dtype || fmt.Sprint(el.Index) != c.index || !strings.HasSuffix(el.Ext, c.when) || !strings.HasPrefix(el.Ext, "the int64 counts of a datetime or timedelta column") {
			t.Errorf("%s %s: %s", c.file, c.path, el.Line())
		}
	}
}
