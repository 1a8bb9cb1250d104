package array

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

func frameOf(t *testing.T, data []byte) (*Frame, bool) {
	f, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "x", pickle.Options{})
	if err != nil || len(f.Streams) == 0 {
		return nil, false
	}
	s := f.Streams[0].Store()
	r := NewReader(StoreGraph{S: s})
	var found *Frame
	for n := 0; n < s.Len(); n++ {
		if fr, ok := r.FrameAt(pickle.ID(n)); ok {
			found = fr
			// every label it has is read without a panic
			for b := range fr.Blocks {
				for j := range fr.Blocks[b].Locs {
					fr.Column(b, j)
				}
			}
			for i := int64(-1); i <= fr.Rows && i < 64; i++ {
				fr.Row(i)
			}
		}
	}
	return found, found != nil
}

// TestFrameAt: the frames gen_frames.py writes are read with their
// columns, rows, labels and block placements; each one-byte change of
// them is read or refused, never a panic.
func TestFrameAt(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "frames")
	data, err := os.ReadFile(filepath.Join(dir, "labels_p4.pkl"))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := frameOf(t, data)
	if !ok || f.NCols != 2 || f.Rows != 3 || len(f.Columns) != 2 || f.Columns[1] != (Label{Kind: 's', Str: "score"}) || len(f.Blocks) != 1 {
		t.Fatalf("labels_p4: %+v", f)
	}
	if l, ok := f.Row(1); !ok || l != (Label{Kind: 's', Str: "v"}) {
		t.Errorf("row 1: %+v", l)
	}
	if l, ok := f.Column(0, 1); !ok || l.Str != "score" {
		t.Errorf("column of block row 1: %+v", l)
	}
	for _, c := range []struct {
		file string
		row  Label
	}{{"range40_p5.pkl", Label{Kind: 'i', Int: 42}}, {"ints_p4.pkl", Label{Kind: 'i', Int: 20}}} {
		d, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := frameOf(t, d)
		if !ok {
			t.Fatalf("%s: no frame", c.file)
		}
		if l, ok := f.Row(1); !ok || l != c.row {
			t.Errorf("%s: row 1 %+v", c.file, l)
		}
	}
	for i := range data {
		for _, x := range []byte{0, 1, 0xff, data[i] ^ 0x20} {
			d := append([]byte(nil), data...)
			d[i] = x
			frameOf(t, d)
		}
	}
}
