package canon

import (
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
	"structured.npy":           true, // a structured .npy descr is not read as an array
	"shared.joblib":            true, // joblib writes [a, a] as two arrays: it loads two
	"shared.z.joblib":          true,
	"objects.joblib":           true, // joblib's object arrays are nested pickles, not read as values
	"objects.z.joblib":         true,
	"objects_changed.joblib":   true,
	"objects_changed.z.joblib": true,
	"frame.joblib":             true, // (the frame's index is an object array)
	"frame.z.joblib":           true,
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
	for _, p := range differ {
		if digest[p[0]] == "" || digest[p[0]] == digest[p[1]] {
			t.Errorf("%s and %s hash alike (%s)", p[0], p[1], digest[p[0]])
		}
	}
}
