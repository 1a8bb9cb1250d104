package input

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestFromBytesAt: the storages pickle.dump wrote (protocol 2's
// _codecs.encode and protocol 4's bytes) are read with their type, dtype,
// element count and elements; every one-byte change of such a pickle is
// read or refused, never a panic, and a storage whose record does not
// match its persistent id is no storage.
func TestFromBytesAt(t *testing.T) {
	for _, name := range []string{"sd_p2.pkl", "sd_p4.pkl"} {
		path := filepath.Join("..", "..", "testdata", "tensors", name)
		d, err := Open(path, pickle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := d.Parts[0].Pickle.Streams[0].Store()
		var got []int64
		for n := pickle.ID(0); n < pickle.ID(s.Len()); n++ {
			tr, ok := d.TensorAt(s, n)
			if !ok {
				continue
			}
			r := tr.Storage
			if !r.FromBytes || r.Type != "torch.FloatStorage" || r.DType != "float32" || r.Location != "cpu" {
				t.Errorf("%s: %+v", name, r)
			}
			rc, err := r.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if int64(len(b)) != r.Numel*4 {
				t.Errorf("%s: %d bytes of elements, want %d", name, len(b), r.Numel*4)
			}
			got = append(got, r.Numel)
		}
		if len(got) != 2 || got[0] != 6 || got[1] != 3 {
			t.Errorf("%s: storages of %v elements, want [6 3]", name, got)
		}
		// every one-byte change: read or refused, never a panic
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range orig {
			for _, x := range []byte{orig[i] ^ 0x01, 0} {
				b := append([]byte(nil), orig...)
				b[i] = x
				d, err := OpenReader(bytes.NewReader(b), name, pickle.Options{}, Options{})
				if err != nil || len(d.Parts) == 0 || d.Parts[0].Pickle == nil {
					continue
				}
				for _, st := range d.Parts[0].Pickle.Streams {
					s := st.Store()
					for n := pickle.ID(0); n < pickle.ID(s.Len()); n++ {
						if tr, ok := d.TensorAt(s, n); ok {
							if rc, err := tr.Storage.Open(); err == nil {
								io.Copy(io.Discard, rc)
								rc.Close()
							}
						}
					}
				}
			}
		}
	}
}
