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

// Protocol 2-3 write functools.partial(cls.__new__, cls, *args, **kwargs)()
// where 4-5 write NEWOBJ_EX: the same objects, the same digest, with both
// picklers (fixtures from testdata/canon/gen_newobj_ex.py).
func TestPartialNewobjEx(t *testing.T) {
	var first string
	for _, p := range []string{"2", "3", "4", "5"} {
		for _, k := range []string{"c", "py"} {
			for _, strict := range []bool{false, true} {
				h, err := HashFile("../../testdata/canon/newobj_ex_p"+p+"_"+k+".pkl", Options{Strict: strict})
				if err != nil {
					t.Fatal(err)
				}
				if strict {
					continue
				}
				if first == "" {
					first = h.Digest
				} else if h.Digest != first {
					t.Fatalf("protocol %s %s pickler: %s, want %s", p, k, h.Digest, first)
				}
			}
		}
	}
	a, _ := HashFile("../../testdata/canon/newobj_ex_p2_c.pkl", Options{Strict: true})
	b, _ := HashFile("../../testdata/canon/newobj_ex_p4_c.pkl", Options{Strict: true})
	if a.Digest != b.Digest {
		t.Fatal("an opcode-form equivalence holds with --strict too")
	}
}

// The stdlib catalogue pickled at protocols 2-5 by both picklers on Python
// 3.8, 3.11 and 3.13 is one canonical form (protocols 0-1 reduce some
// objects differently: another load path, another form).
func TestStdlibValuesProtocols2to5(t *testing.T) {
	var first, firstName string
	for _, py := range []string{"py38", "py311", "py313"} {
		for _, p := range []string{"2", "3", "4", "5"} {
			for _, k := range []string{"c", "py"} {
				name := "../../testdata/fixtures/stdlib/values_p" + p + "_" + k + "_" + py + ".pkl"
				h, err := HashFile(name, Options{})
				if err != nil {
					continue // not every combination was generated
				}
				if first == "" {
					first, firstName = h.Digest, name
				} else if h.Digest != first {
					t.Errorf("%s: %s, want %s (as %s)", name, h.Digest, first, firstName)
				}
			}
		}
	}
	if first == "" {
		t.Fatal("no stdlib values fixtures")
	}
}
