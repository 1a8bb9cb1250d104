package canon

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The golden digests pin the canonical form: every file of the shared corpus
// hashed under several option sets, recorded from a known-good build. A
// change meant to make hashing faster must leave every line as it is; a
// digest that moves means the change altered the form. Record with
//
//	go test ./pkg/canon -run TestGoldenDigests -update
//
// only when the form itself is meant to change (then FormVersion changes
// too), never to make a failing run pass.
//
// There are two sets: testdata/golden.txt pins pk-canon/1 (Form1), whose
// digests users have stored and must never move (-update-pk1 exists only
// for a form fix listed in the spec's change log); testdata/golden2.txt
// pins pk-canon/2 (Form2), recorded with -update while that form is new.
var (
	update    = flag.Bool("update", false, "rewrite testdata/golden2.txt (pk-canon/2) from the current code")
	updatePk1 = flag.Bool("update-pk1", false, "rewrite testdata/golden.txt (pk-canon/1): only for a fix listed in the spec's change log")
)

const (
	goldenFile  = "testdata/golden.txt"
	golden2File = "testdata/golden2.txt"
)

// goldenRoots are the corpus directories hashed, relative to this package.
var goldenRoots = []string{
	"../../testdata/fixtures",
	"../../testdata/equiv",
	"../../testdata/differ",
	"../../testdata/inputs",
}

// goldenOpts are the option sets every file is hashed with.
var goldenOpts = []Options{
	{},
	{Strict: true},
	{KeepDictOrder: true, StripLineno: true},
	{Algo: XXH3},
}

// golden2Roots and golden2Opts are pk-canon/2's set: the same corpus plus
// the array fixtures, the same option sets in Form2.
var (
	golden2Roots = append(append([]string(nil), goldenRoots...), "../../testdata/arrays", "../../testdata/pk2", "../../testdata/tensors")
	golden2Opts  = []Options{
		{Form: Form2},
		{Form: Form2, Strict: true},
		{Form: Form2, KeepDictOrder: true, StripLineno: true},
		{Form: Form2, Algo: XXH3},
	}
)

// goldenFiles lists every regular file under the roots, as slash paths
// relative to ../../testdata, sorted.
func goldenFiles(t *testing.T, roots []string) []string {
	var out []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel("../../testdata", p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatalf("%s: %v", root, err)
		}
	}
	sort.Strings(out)
	return out
}

// goldenLines hashes one file: one line per option set,
// "PATH FILESHA OPTIONS DIGEST" where FILESHA is the first 16 hex digits of
// the file's SHA-256 and DIGEST is the digest string or "error" (an input
// HashFile refuses must keep being refused).
func goldenLines(rel string, opts []Options) ([]string, error) {
	p := filepath.Join("../../testdata", filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	fs := sha256.Sum256(data)
	fsum := hex.EncodeToString(fs[:8])
	var out []string
	for i, o := range opts {
		d := "error"
		if r, err := HashFile(p, o); err == nil {
			d = r.Digest
		}
		out = append(out, fmt.Sprintf("%s %s %d %s", rel, fsum, i, d))
	}
	return out, nil
}

func TestGoldenDigests(t *testing.T) {
	runGolden(t, goldenFile, goldenRoots, goldenOpts, *updatePk1)
}

func TestGoldenDigests2(t *testing.T) {
	runGolden(t, golden2File, golden2Roots, golden2Opts, *update)
}

func runGolden(t *testing.T, goldenFile string, roots []string, opts []Options, update bool) {
	files := goldenFiles(t, roots)
	if len(files) == 0 {
		t.Skip("no corpus under ../../testdata")
	}
	if update {
		var b strings.Builder
		b.WriteString("# pk-canon golden digests: PATH FILE-SHA256[:16] OPTION-SET DIGEST (see golden_test.go)\n")
		for _, rel := range files {
			lines, err := goldenLines(rel, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d files", goldenFile, len(files))
		return
	}

	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("%v (record it with -update)", err)
	}
	defer f.Close()
	// want[path] = lines recorded for it
	want := map[string][]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		rel, _, _ := strings.Cut(l, " ")
		if _, ok := want[rel]; !ok {
			order = append(order, rel)
		}
		want[rel] = append(want[rel], l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatalf("%s is empty", goldenFile)
	}
	present := map[string]bool{}
	for _, rel := range files {
		present[rel] = true
	}
	checked, changedFile, missing := 0, 0, 0
	for _, rel := range order {
		if !present[rel] {
			missing++
			continue
		}
		got, err := goldenLines(rel, opts)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		w := want[rel]
		// The corpus is regenerated by another part of the project: a file
		// whose bytes changed since recording is not evidence either way.
		if len(w) > 0 && strings.Fields(w[0])[1] != strings.Fields(got[0])[1] {
			changedFile++
			continue
		}
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("digest changed for %s:\nwant:\n  %s\ngot:\n  %s", rel, strings.Join(w, "\n  "), strings.Join(got, "\n  "))
			continue
		}
		checked++
	}
	extra := 0
	for _, rel := range files {
		if _, ok := want[rel]; !ok {
			extra++
		}
	}
	t.Logf("checked %d files; skipped %d regenerated since recording, %d gone, %d new", checked, changedFile, missing, extra)
	if checked < len(order)/2 {
		t.Errorf("only %d of %d recorded files could be checked: re-record from a known-good commit", checked, len(order))
	}
}
