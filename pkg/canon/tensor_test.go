package canon

import (
	"path/filepath"
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
