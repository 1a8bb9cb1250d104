package write

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestRereadWritten: the array pickled at protocol 2 and the tensor pickled
// by pickle.dump of testdata/reread (one payload of 1.2 MB each), gzip'd,
// bz2'd, xz'd and zstd'd, in a gzip'd joblib file and a torch.save zip, which pk
// canon refused while pk hash read such a payload under a compression as
// its digest only, are written at protocols 2 to 5: each output has its
// input's pk hash and is its own canonical output, and the inputs of one
// digest give one output (a torch.save file stays one).
func TestRereadWritten(t *testing.T) {
	const dir = "../../testdata/reread/"
	tmp := t.TempDir()
	files := []string{
		dir + "array_p2.pkl.gz", dir + "array_p4.pkl.gz",
		dir + "tensor_p2.pkl.gz", dir + "tensor_p4.pkl.gz", dir + "tensor_p2.joblib.gz", dir + "tensor.legacy.pt.gz",
		dir + "objarr.joblib.gz",
		dir + "array_p2.pkl.bz2", dir + "tensor_p2.pkl.bz2", // bz2'd by Python (gen_reread.py)
	}
	for _, name := range []string{"array_p2.pkl", "tensor_p2.pkl"} {
		data := testfile.Gunzip(t, dir+name+".gz")
		for _, kind := range []string{"xz", "zstd"} {
			p := filepath.Join(tmp, name+"."+kind)
			if err := os.WriteFile(p, testfile.Compress(t, kind, data), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	for _, name := range []string{"tensor.pt", "array.pt"} {
		p := filepath.Join(tmp, name)
		testfile.GunzipTo(t, dir+name+".gz", p)
		files = append(files, p)
	}
	for _, opt := range testfile.Sample([]Options{{Protocol: 2}, {Protocol: 3}, {Protocol: 4}, {Protocol: 5}}, 2) {
		outs, refused := roundTrip(t, files, opt)
		for p, why := range refused {
			t.Errorf("protocol %d: %s refused: %s", opt.Protocol, p, why)
		}
		// one output per object and output kind
		same := func(kind string, names ...string) {
			var first string
			for _, p := range files {
				for _, n := range names {
					if !strings.HasPrefix(filepath.Base(p), n) {
						continue
					}
					if first == "" {
						first = p
					} else if string(outs[p]) != string(outs[first]) {
						t.Errorf("protocol %d: %s and %s give two %s outputs", opt.Protocol, p, first, kind)
					}
				}
			}
		}
		same("array", "array_p") // array.pt stays a torch.save file
		same("tensor pickle", "tensor_p")
		same("torch.save", "tensor.pt", "tensor.legacy.pt")
	}
}
