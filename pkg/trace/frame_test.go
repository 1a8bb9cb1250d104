package trace

import (
	"path/filepath"
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
