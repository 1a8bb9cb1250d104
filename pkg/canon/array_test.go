package canon

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const arraysDir = "../../testdata/arrays"

// arrayGroups groups the files of testdata/arrays by the object they hold
// (the name before the form suffix).
func arrayGroups(t *testing.T) map[string][]string {
	ents, err := os.ReadDir(arraysDir)
	if err != nil {
		t.Fatal(err)
	}
	g := map[string][]string{}
	for _, e := range ents {
		n := e.Name()
		base := n
		for _, suf := range []string{".z.joblib", ".joblib", ".npy", ".pkl"} {
			if strings.HasSuffix(base, suf) {
				base = strings.TrimSuffix(base, suf)
				break
			}
		}
		if i := strings.LastIndex(base, "_p"); i >= 0 && len(base) == i+3 && base[i+2] >= '0' && base[i+2] <= '5' {
			base = base[:i]
		}
		if base == n {
			continue
		}
		g[base] = append(g[base], filepath.Join(arraysDir, n))
	}
	for _, v := range g {
		sort.Strings(v)
	}
	return g
}

func TestArrayDigestsDump(t *testing.T) {
	if os.Getenv("PK_DUMP") == "" {
		t.Skip("PK_DUMP unset")
	}
	g := arrayGroups(t)
	var names []string
	for k := range g {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, f := range g[k] {
			r, err := HashFile(f, Options{Form: Form2, NoPaths: true})
			d := "error " + strings.TrimSpace(strings.Split(errString(err), "\n")[0])
			if err == nil {
				d = r.Digest[:20]
			}
			t.Logf("%-28s %-40s %s", k, filepath.Base(f), d)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// arrayForms: files of one object that are known not to hash like the
// others under pk-canon/2 (docs/canonical-form-2.md, known limits).
var arrayFormExceptions = map[string]bool{
	"shared.joblib":   true, // joblib writes [a, a] as two arrays: it loads two
	"shared.z.joblib": true,
	// an item of an object array also referenced outside it: pickle keeps
	// one list, joblib's nested pickle makes a second one
	"objects_alias.joblib":   true,
	"objects_alias.z.joblib": true,
}

func arrayDigest(t *testing.T, f string, opt Options) string {
	t.Helper()
	r, err := HashFile(f, opt)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return r.Digest
}

// TestArrayForms: under pk-canon/2 every form of one object (pickle
// protocols 0-5, joblib plain and compressed, .npy, numpy 2's names) hashes
// alike; under pk-canon/1 they did not.
func TestArrayForms(t *testing.T) {
	g := arrayGroups(t)
	if len(g) < 10 {
		t.Fatalf("only %d array fixture groups", len(g))
	}
	digest := map[string]string{}
	for name, files := range g {
		want := ""
		pk1 := map[string]bool{}
		for _, f := range files {
			d := arrayDigest(t, f, Options{Form: Form2, NoPaths: true})
			pk1[arrayDigest(t, f, Options{NoPaths: true})] = true
			if arrayFormExceptions[filepath.Base(f)] {
				continue
			}
			if want == "" {
				want = d
				digest[name] = d
			} else if d != want {
				t.Errorf("%s: %s hashes %s, the group's first %s", name, filepath.Base(f), d, want)
			}
		}
		if len(files) > 2 && len(pk1) < 2 && name != "linreg" && name != "frame" {
			t.Logf("%s: pk-canon/1 already gave every form one digest", name)
		}
	}
	same := [][2]string{
		{"numpy2_c_int32", "c_int32"},                  // numpy 2's names
		{"dict_of_arrays", "dict_of_arrays_reordered"}, // plain dicts are sorted
	}
	for _, p := range same {
		if digest[p[0]] != digest[p[1]] {
			t.Errorf("%s and %s differ: %s %s", p[0], p[1], digest[p[0]], digest[p[1]])
		}
	}
	differ := [][2]string{
		{"c_int32", "c_int32_changed"},               // one element
		{"dict_of_arrays", "dict_of_arrays_changed"}, // one element of one array
		{"objects", "objects_changed"},               // one item of an object array
		{"f_float64", "c_float64_same_values"},       // memory order is part of the value
		{"shared", "unshared"},                       // [a, a] is not [a, a.copy()]
	}
	if a, b := arrayDigest(t, filepath.Join(arraysDir, "objects_alias.joblib"), Options{Form: Form2}), digest["objects_alias"]; a == b {
		t.Errorf("joblib's unshared copy of an aliased item hashes like the pickle's shared one: %s", a)
	}
	for _, p := range differ {
		if digest[p[0]] == "" || digest[p[0]] == digest[p[1]] {
			t.Errorf("%s and %s hash alike (%s)", p[0], p[1], digest[p[0]])
		}
	}
}

// dtypeF8 assembles numpy.dtype('f8') with its BUILD state.
func dtypeF8(a *asm) *asm {
	a.sglobal("numpy", "dtype").str("f8").op(0x89, 0x88, 0x87, 'R')
	a.mark().op('K', 3).str("<").op('N', 'N', 'N').binint(-1).binint(-1).op('K', 0, 't', 'b')
	return a
}

func bytes8(a *asm, op byte, data string) *asm {
	a.op(op)
	binary.Write(a, binary.LittleEndian, uint64(len(data)))
	a.WriteString(data)
	return a
}

// reconstructPickle is a protocol 4 _reconstruct + BUILD of a 1-d float64
// array of len(data)/8 elements (shape given) with data as BINBYTES8.
func reconstructPickle(n int64, data string) []byte {
	a := (&asm{}).proto(4)
	a.sglobal("numpy.core.multiarray", "_reconstruct").sglobal("numpy", "ndarray").op('K', 0, 0x85).bytes("b").op(0x87, 'R')
	a.mark().op('K', 1)
	a.op('J')
	binary.Write(a, binary.LittleEndian, int32(n))
	a.op(0x85)
	dtypeF8(a).op(0x89)
	bytes8(a, 0x8e, data).op('t', 'b')
	return a.stop()
}

func frombufferPickle(n int64, data string) []byte {
	a := (&asm{}).proto(5)
	a.sglobal("numpy._core.numeric", "_frombuffer")
	a.mark()
	bytes8(a, 0x96, data)
	dtypeF8(a)
	a.op('J')
	binary.Write(a, binary.LittleEndian, int32(n))
	a.op(0x85).str("C").op('t', 'R')
	return a.stop()
}

// TestArrayBlob: an array whose data is streamed as a blob (≥ 1 MiB) hashes
// as the same array written at protocol 5 in-band; a length that does not
// match the shape leaves the call as it is (no array), without error.
func TestArrayBlob(t *testing.T) {
	data := strings.Repeat("\x01\x02\x03\x04\x05\x06\x07\x08", 300000) // 2.4 MB
	v2 := Options{Form: Form2}
	a := digestOf(t, reconstructPickle(300000, data), v2)
	b := digestOf(t, frombufferPickle(300000, data), v2)
	if a != b {
		t.Errorf("blob array at protocol 4 %s, in-band at 5 %s", a, b)
	}
	changed := []byte(data)
	changed[len(changed)-1] ^= 1
	if digestOf(t, reconstructPickle(300000, string(changed)), v2) == a {
		t.Error("the last byte changed, the digest did not")
	}
	// a shape that does not match the data: not an array, hashed as calls
	bad := digestOf(t, reconstructPickle(299999, data), v2)
	if bad == a {
		t.Error("a mismatched shape read as the array")
	}
	f := parse(t, reconstructPickle(299999, data))
	v := Normalize(f.Streams[0], v2)
	for _, n := range v.Applied() {
		if n.Rule == RuleNumpyReconstruct {
			t.Errorf("mismatched shape: %s applied", n.Rule)
		}
	}
	// pk-canon/1: untouched, the two forms differ
	if digestOf(t, reconstructPickle(300000, data), Options{}) == digestOf(t, frombufferPickle(300000, data), Options{}) {
		t.Error("pk-canon/1 changed: the forms hash alike")
	}
}

// TestArrayHostile: shapes that overflow, negative dims and huge declared
// sizes never panic and are not read as arrays.
func TestArrayHostile(t *testing.T) {
	for _, n := range []int64{-1, 1 << 30, math.MaxInt32} {
		b := reconstructPickle(n, "\x00\x00\x00\x00\x00\x00\x00\x00")
		digestOf(t, b, Options{Form: Form2})
		digestOf(t, frombufferPickle(n, "\x00\x00\x00\x00\x00\x00\x00\x00"), Options{Form: Form2})
	}
}

// TestJoblibExplainStable: the rules applied to a joblib file's arrays are
// listed in one order on every run. The raw parts were found by ranging over
// a map, so pk hash --explain listed them in a different order from run to
// run (the digest did not change); 20 runs of a file of several arrays all
// agreeing fails with map order about once in 10^16.
func TestJoblibExplainStable(t *testing.T) {
	for _, f := range []string{"dict_of_arrays.joblib", "dtypes.joblib", "linreg.joblib"} {
		var first string
		for i := 0; i < 20; i++ {
			r, err := HashFile(filepath.Join(arraysDir, f), Options{Form: Current})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(r.Applied)
			if i == 0 {
				first = got
				if strings.Count(got, "joblib") < 2 {
					t.Fatalf("%s: want several joblib arrays explained, got %s", f, got)
				}
			} else if got != first {
				t.Fatalf("%s: run %d explains\n%s\nrun 0:\n%s", f, i, got, first)
			}
		}
	}
}
