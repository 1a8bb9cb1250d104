package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const pk2Dir = "../../testdata/pk2"

func pk2Digest(t *testing.T, name string, opt Options) string {
	t.Helper()
	return arrayDigest(t, filepath.Join(pk2Dir, name), opt)
}

// TestDillPk2: dill >= 0.3.8 dataclasses hash alike at protocols 2 and 4
// under pk-canon/2 (the getattr(dill._dill, '_setattr', setattr) fold),
// also with --strip lineno (the class dict's __firstlineno__ on 3.13); a
// changed default still changes the digest; pk-canon/1 keeps its digests
// (protocol 2 and 4 differ there, as they did).
func TestDillPk2(t *testing.T) {
	v2 := Options{Form: Form2, NoPaths: true}
	v2l := Options{Form: Form2, StripLineno: true, NoPaths: true}
	for _, tag := range []string{"dill038_py311", "dill041_py313"} {
		for _, o := range []Options{v2, v2l} {
			a := pk2Digest(t, "dill_dataclass_"+tag+"_p2.pkl", o)
			b := pk2Digest(t, "dill_dataclass_"+tag+"_p4.pkl", o)
			c := pk2Digest(t, "dill_dataclass_changed_"+tag+"_p4.pkl", o)
			if a != b {
				t.Errorf("%s %s: protocol 2 and 4 differ: %s %s", tag, o.Tag(), a, b)
			}
			if a == c {
				t.Errorf("%s %s: a changed default hashes alike", tag, o.Tag())
			}
		}
		if pk2Digest(t, "dill_dataclass_"+tag+"_p2.pkl", Options{NoPaths: true}) == pk2Digest(t, "dill_dataclass_"+tag+"_p4.pkl", Options{NoPaths: true}) {
			t.Errorf("%s: pk-canon/1 changed: protocol 2 and 4 now hash alike", tag)
		}
	}
}

// TestDillEnumPk2: dill's enums of __main__ (written as a discarded
// _create_type call and a global) hash alike at protocols 2 and 4 under
// pk-canon/2: the globals that protocol 2's form resolves inside the
// discarded call are part of it, not effects of their own.
func TestDillEnumPk2(t *testing.T) {
	for _, tag := range []string{"dill039_py312", "dill041_py313"} {
		a := pk2Digest(t, "dill_enum_"+tag+"_p2.pkl", Options{Form: Form2})
		b := pk2Digest(t, "dill_enum_"+tag+"_p4.pkl", Options{Form: Form2})
		if a != b {
			t.Errorf("%s: protocol 2 %s, protocol 4 %s", tag, a, b)
		}
		if pk2Digest(t, "dill_enum_"+tag+"_p2.pkl", Options{}) == pk2Digest(t, "dill_enum_"+tag+"_p4.pkl", Options{}) {
			t.Errorf("%s: pk-canon/1 changed", tag)
		}
	}
}

// TestDillStdlibPath: the same dataclass under another install prefix (the
// standard library's reprlib path in the globals dill writes by value)
// hashes alike under pk-canon/2, not under pk-canon/1.
func TestDillStdlibPath(t *testing.T) {
	src := filepath.Join(pk2Dir, "dill_dataclass_dill041_py313_p4.pkl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	old, repl := []byte("/root/.pyenv/"), []byte("/home/.pyenv/")
	if !bytes.Contains(data, old) {
		t.Skip("fixture made under another prefix")
	}
	moved := filepath.Join(t.TempDir(), "moved.pkl")
	if err := os.WriteFile(moved, bytes.ReplaceAll(data, old, repl), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Form: Form2, NoPaths: true}, {NoPaths: true}} {
		a, b := arrayDigest(t, src, o), arrayDigest(t, moved, o)
		if (a == b) != o.v2() {
			t.Errorf("%s: original %s, moved %s", o.Tag(), a, b)
		}
	}
}

// TestEnumOrderPk2: two dynamic enums that differ only in the order of
// their members hash differently under pk-canon/2 (list(Color) differs);
// pk-canon/1 keeps giving them one digest (its known limit).
func TestEnumOrderPk2(t *testing.T) {
	for _, p := range []string{"p2", "p4"} {
		rg, gr := "cp_enum_rg_"+p+".pkl", "cp_enum_gr_"+p+".pkl"
		if pk2Digest(t, rg, Options{Form: Form2}) == pk2Digest(t, gr, Options{Form: Form2}) {
			t.Errorf("%s: member order lost under pk-canon/2", p)
		}
		if pk2Digest(t, rg, Options{}) != pk2Digest(t, gr, Options{}) {
			t.Errorf("%s: pk-canon/1 changed for enums", p)
		}
	}
	if pk2Digest(t, "cp_enum_rg_p2.pkl", Options{Form: Form2}) != pk2Digest(t, "cp_enum_rg_p4.pkl", Options{Form: Form2}) {
		t.Error("one enum at protocols 2 and 4 differs")
	}
}
