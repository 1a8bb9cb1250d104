package canon

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"strings"
	"testing"
)

const tensorsDir = "../../testdata/tensors"

func tensorDigest(t *testing.T, name string, opt Options) string {
	t.Helper()
	return arrayDigest(t, filepath.Join(tensorsDir, name), opt)
}

// TestTensorForms: under pk-canon/2 a checkpoint saved by torch.save (zip
// and legacy) and by pickle.dump (protocols 2 and 4) hashes alike when
// torch.load / pickle.load return equal tensors; one changed element
// changes the digest; pk-canon/1 is unchanged (the forms differ there).
func TestTensorForms(t *testing.T) {
	v2 := Options{Form: Form2, NoPaths: true}
	forms := []string{".pt", ".legacy.pt", "_p2.pkl", "_p4.pkl"}
	digest := map[string]string{}
	for _, obj := range []string{"sd", "sd_changed", "linear", "mixed", "copies"} {
		want := tensorDigest(t, obj+forms[0], v2)
		digest[obj] = want
		for _, f := range forms[1:] {
			if d := tensorDigest(t, obj+f, v2); d != want {
				t.Errorf("%s%s hashes %s, %s%s %s", obj, f, d, obj, forms[0], want)
			}
		}
		if tensorDigest(t, obj+".pt", Options{NoPaths: true}) == tensorDigest(t, obj+"_p4.pkl", Options{NoPaths: true}) {
			t.Errorf("%s: pk-canon/1 changed: zip and pickle.dump hash alike", obj)
		}
	}
	if digest["sd"] == digest["sd_changed"] {
		t.Error("one changed element: same digest")
	}
	// Views of one storage: torch.save keeps them one storage (torch.load
	// shares it); pickle.dump writes each view's storage anew (pickle.load
	// gives three). Different objects, different digests; each form agrees
	// with itself.
	zip, leg := tensorDigest(t, "views.pt", v2), tensorDigest(t, "views.legacy.pt", v2)
	p2, p4 := tensorDigest(t, "views_p2.pkl", v2), tensorDigest(t, "views_p4.pkl", v2)
	if zip != leg || p2 != p4 {
		t.Errorf("views: zip %s legacy %s, p2 %s p4 %s", zip, leg, p2, p4)
	}
	if zip == p2 {
		t.Error("views: shared storage hashes like unshared storages")
	}
}

// TestFromBytesOnlyTorch: _load_from_bytes of bytes that are not torch's
// own nested file (here gzip of one) is left as a call: pk never
// decompresses what a rule reads.
func TestFromBytesOnlyTorch(t *testing.T) {
	nested := nestedTorch("1", strings.Repeat("\x00\x00\x80?", 16))
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(nested))
	w.Close()
	for _, c := range []struct {
		data string
		want bool
	}{{nested, true}, {z.String(), false}, {"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.junk", false}} {
		f := parse(t, tensorPickle(4, c.data, 16))
		v := Normalize(f.Streams[0], Options{Form: Form2})
		got := false
		for _, n := range v.Applied() {
			got = got || n.Rule == RuleTorchFromBytes
		}
		if got != c.want {
			t.Errorf("%q...: torch-from-bytes applied %v, want %v", c.data[:8], got, c.want)
		}
		if _, err := v.Digest(); err != nil {
			t.Error(err)
		}
	}
}
