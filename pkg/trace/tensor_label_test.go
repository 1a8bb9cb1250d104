package trace

import (
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestFromBytesLabels: a tensor pickle.dump wrote (its storage
// torch.storage._load_from_bytes of a nested torch.save file) is labelled
// with its dtype and shape as torch.save's forms are, and its storage call
// as a storage: in memory, a storage of 1 MiB or more read again from a
// plain file, and through a gzip'd file's decompression. (Without
// input.FromBytesAt in TensorAt: "torch.Tensor (8, 10)", no dtype; without
// NewDoc's doc for a bare pickle: the plain large one has none either.)
func TestFromBytesLabels(t *testing.T) {
	tmp := t.TempDir()
	big := filepath.Join(tmp, "big_p4.pkl")
	testfile.GunzipTo(t, "../../testdata/tensors/big_p4.pkl.gz", big)
	for _, c := range []struct{ file, path, want string }{
		{"../../testdata/tensors/net_p2.pkl", "root['fc.weight']", "torch.Tensor float32 (8, 10)"},
		{"../../testdata/tensors/net_p4.pkl", "root['out.bias']", "torch.Tensor float32 (2,)"},
		{"../../testdata/tensors/net.pt", "root['fc.weight']", "torch.Tensor float32 (8, 10)"},
		{"../../testdata/tensors/views_p4.pkl", "root['b']", "torch.Tensor int64 (4,) at element 2"},
		{"../../testdata/tensors/mixed_p2.pkl", "root['f16']", "torch.Tensor float16 (2,)"},
		{"../../testdata/tensors/big_p4.pkl.gz", "root['w']", "torch.Tensor float32 (500, 600)"},
		{big, "root['w']", "torch.Tensor float32 (500, 600)"},
		{"../../testdata/tensors/net_p4.pkl", "root['fc.weight'].__reduce__[1][0]", "torch FloatStorage key '"},
	} {
		d, err := input.Open(c.file, pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		tr := NewDoc(d)
		it, err := tr.Find(c.path)
		if err != nil {
			t.Fatalf("%s %s: %v", c.file, c.path, err)
		}
		got := tr.Label(it)
		if got != c.want && !(c.want[len(c.want)-1] == '\'' && len(got) > len(c.want) && got[:len(c.want)] == c.want) {
			t.Errorf("%s %s: label %q, want %q", c.file, c.path, got, c.want)
		}
	}
}

// TestSeriesLabel: a pandas Series is labelled with its row count in every
// form (without array.SeriesAt: "pandas.core.series.Series", the class).
func TestSeriesLabel(t *testing.T) {
	for _, f := range []string{"series_p2.pkl", "series_p5.pkl", "series.joblib", "series_str_p4.pkl"} {
		d, err := input.Open(filepath.Join("..", "..", "testdata", "frames", f), pickle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr := NewDoc(d)
		it, err := tr.Find("root")
		if err != nil {
			t.Fatal(err)
		}
		want := "pandas.core.series.Series 4 rows"
		if f == "series_str_p4.pkl" {
			want = "pandas.core.series.Series 3 rows"
		}
		if got := tr.Label(it); got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
}
