package diff

import (
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestIgnoreAcrossForms: --ignore between two forms of one checkpoint (zip,
// legacy, pickle.dump at protocols 2 and 4) leaves what pk-canon/2, the form
// that decides "the same", has outside the ignored paths: nothing when the
// one changed tensor is ignored (pk-canon/1's view lists the storages and
// records the forms hold differently), its element when another is.
func TestIgnoreAcrossForms(t *testing.T) {
	const dir = "../../testdata/tensors/"
	forms := []string{".pt", ".legacy.pt", "_p2.pkl", "_p4.pkl"}
	for _, fa := range forms {
		for _, fb := range forms {
			a, b := dir+"net"+fa, dir+"net_changed"+fb
			r, err := Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}, Ignore: []string{"root['fc.weight']"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != 0 {
				t.Errorf("%s %s, fc.weight ignored: %d entries, the first %s %s", fa, fb, len(r.Entries), r.Entries[0].Path, r.Entries[0].Kind)
			}
			r, err = Files(a, b, Options{Canon: canon.Options{Form: canon.Form2}, Ignore: []string{"root['fc.bias']"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) != 1 || r.Entries[0].Path != "root['fc.weight'][3, 7]" {
				t.Errorf("%s %s, fc.bias ignored: %d entries, want one at root['fc.weight'][3, 7]: %+v", fa, fb, len(r.Entries), r.Entries)
			}
		}
	}
}
