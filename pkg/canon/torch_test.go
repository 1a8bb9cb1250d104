package canon

import (
	"testing"
)

// Two legacy torch.save files of the same tensors from two processes: the
// storage keys are memory addresses, yet the digests are equal; without the
// profile (--strict) they differ.
func TestLegacyTorchStorageKeys(t *testing.T) {
	a, b := "../../testdata/canon/legacy_same_a.pt", "../../testdata/canon/legacy_same_b.pt"
	ha, err := HashFile(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := HashFile(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ha.Digest != hb.Digest {
		t.Fatalf("same tensors, different digests:\n%s\n%s", ha.Digest, hb.Digest)
	}
	n := 0
	for _, x := range ha.Applied {
		if x.Rule == RuleStorageKey {
			n += x.Count
		}
	}
	if n == 0 {
		t.Fatal("the storage-key rule is not reported")
	}
	sa, _ := HashFile(a, Options{Strict: true})
	sb, _ := HashFile(b, Options{Strict: true})
	if sa.Digest == sb.Digest {
		t.Fatal("--strict should see the address keys")
	}
	// a changed tensor still changes the digest
	c, err := HashFile("../../testdata/inputs/torch_legacy_a.pt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := HashFile("../../testdata/inputs/torch_legacy_b.pt", Options{})
	if c.Digest == d.Digest {
		t.Fatal("a changed tensor must change the digest")
	}
}
