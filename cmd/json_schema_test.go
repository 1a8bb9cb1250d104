package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestJSONSchemas runs every command with --json over real fixtures (plain
// pickles, several streams, trailing bytes, containers, arrays, shortened
// payloads, special floats, a bad input) and validates every line against
// docs/schema/<command>.schema.json. Each schema is a oneOf of record kinds:
// every line must be exactly one kind, and every kind must be seen at least
// once, so a kind nothing writes (or a record no kind describes) fails.
func TestJSONSchemas(t *testing.T) {
	repo, _ := filepath.Abs("..")
	td := func(p string) string { return filepath.Join(repo, "testdata", p) }
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("notes.txt", "hello, not a pickle\n")
	// a 3000-byte bytes, a 3000-byte str (both shortened by default), a
	// bytearray, nan, -inf, 1.0, a 30-digit int, a lone surrogate, None, True
	big := "\x80\x05(B\xb8\x0b\x00\x00" + strings.Repeat("x", 3000) +
		"X\xb8\x0b\x00\x00" + strings.Repeat("y", 3000) +
		"\x96\x02\x00\x00\x00\x00\x00\x00\x00ab" +
		"G\x7f\xf8\x00\x00\x00\x00\x00\x00" + "G\xff\xf0\x00\x00\x00\x00\x00\x00" + "G\x3f\xf0\x00\x00\x00\x00\x00\x00" +
		"\x8a\x0d\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10" +
		"X\x03\x00\x00\x00\xed\xa0\x80" + "N\x88t."
	scalars := write("scalars.pkl", big)
	scalars2 := write("scalars2.pkl", strings.Replace(big, "N\x88t.", "N\x89t.", 1))
	plain := td("differ/value_changed/a.pkl")
	multi := td("fixtures/multi/three_streams.pkl")
	junk := td("fixtures/multi/trailing_junk.pkl")
	tzip, tzipB := td("inputs/torch_zip_a.pt"), td("inputs/torch_zip_b.pt")
	legacy := td("inputs/torch_legacy_a.pt")
	joblib, joblibB := td("inputs/joblib_a_gzip.joblib.gz"), td("inputs/joblib_b.joblib")
	npy := td("inputs/plain_v1.npy")
	nparr := td("fixtures/numpy/f32_2d_p4_np124.pkl")
	danger := td("scan/corpus/global_reduce.pkl")

	hashOut, _ := exec.Command("pk", "hash", plain, multi).Output()
	sums := write("SUMS", string(hashOut)+"pk1-sha256:"+strings.Repeat("0", 64)+"  "+tzip+"\n")

	type run struct {
		schema string
		args   []string
		fails  bool // exit 2, the last record an error
	}
	runs := []run{
		{"hash", []string{plain, multi, tzip, legacy, joblib, npy, nparr}, false},
		{"hash", []string{"--explain", plain, multi, tzip}, false},
		{"hash", []string{"--check", sums}, true},
		{"hash", []string{plain, bad}, true},
		{"dis", []string{plain, multi, junk, scalars, nparr}, false},
		{"dis", []string{tzip, legacy, joblib, npy}, false},
		{"dis", []string{plain, bad}, true},
		{"diff", []string{plain, td("differ/value_changed/b.pkl")}, true},
		{"diff", []string{scalars, scalars2}, true},
		{"diff", []string{tzip, tzipB}, true},
		{"diff", []string{"--form", "pk1", tzip, legacy}, true},
		{"diff", []string{tzip, legacy}, false}, // the same pickle under pk-canon/2
		{"diff", []string{joblib, joblibB}, true},
		{"diff", []string{multi, junk}, true},
		{"diff", []string{plain, plain}, false},
		{"diff", []string{"--form", "pk1", "--stat", tzip, legacy}, true},
		{"diff", []string{plain, bad}, true},
		{"trace", []string{"--lines", "0", tzip}, false},
		{"trace", []string{"--lines", "0", multi}, false},
		{"trace", []string{"--lines", "0", junk}, false},
		{"trace", []string{"--lines", "0", nparr}, false},
		{"trace", []string{"--lines", "0", joblib}, false},
		{"trace", []string{npy}, false},
		{"trace", []string{"--depth", "1", legacy}, false},
		{"trace", []string{"--top", "5", tzip}, false},
		{"trace", []string{"--path", "root[1, 0]", "--depth", "0", nparr}, false},
		{"trace", []string{"--path", "root['score'][4]", "--depth", "0", td("frames/range_p4.pkl")}, false},
		{"trace", []string{"--path", "root['head']<data>[0]", "--depth", "0", td("tensors/part_changed.pt")}, false},
		{"trace", []string{"--top", "3", "--group", multi}, false},
		{"trace", []string{bad}, true},
		{"scan", []string{plain, danger, tzip, joblib}, true},
		{"scan", []string{plain, bad}, true},
	}
	// the kinds of each schema, compiled on their own to see which one a line is
	schemas := map[string]*jsonschema.Schema{}
	kinds := map[string][]*jsonschema.Schema{}
	titles := map[string][]string{}
	seen := map[string]map[int]int{}
	// the schemas name each other by their $id (docs/json.md): register
	// every file under its $id, then compile by $id
	c := jsonschema.NewCompiler()
	ids := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "schema", "*.schema.json"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("%s: no $id", f)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
		ids[strings.TrimSuffix(filepath.Base(f), ".schema.json")] = id
	}
	for _, name := range []string{"hash", "dis", "diff", "trace", "scan"} {
		file := filepath.Join(repo, "docs", "schema", name+".schema.json")
		loc := ids[name]
		if loc == "" {
			t.Fatalf("no %s", file)
		}
		s, err := c.Compile(loc)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		schemas[name] = s
		var raw struct {
			OneOf []struct {
				Title string `json:"title"`
			} `json:"oneOf"`
		}
		data, _ := os.ReadFile(file)
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		for i, k := range raw.OneOf {
			ks, err := c.Compile(fmt.Sprintf("%s#/oneOf/%d", loc, i))
			if err != nil {
				t.Fatal(err)
			}
			kinds[name] = append(kinds[name], ks)
			titles[name] = append(titles[name], k.Title)
		}
		seen[name] = map[int]int{}
	}
	lines := 0
	for _, r := range runs {
		args := append([]string{r.schema, "--json"}, r.args...)
		cmd := exec.Command("pk", args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		what := "pk " + strings.Join(args, " ")
		if code == 2 && !r.fails {
			t.Errorf("%s: exit 2: %s", what, stderr.String())
		}
		if r.fails && code == 0 {
			t.Errorf("%s: exit 0, want 1 or 2", what)
		}
		var last map[string]any
		sc := bufio.NewScanner(&stdout)
		sc.Buffer(nil, 1<<26)
		n := 0
		for sc.Scan() {
			n++
			lines++
			line := sc.Bytes()
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
			if err != nil {
				t.Errorf("%s: line %d is not JSON (%v): %s", what, n, err, line)
				continue
			}
			if err := schemas[r.schema].Validate(inst); err != nil {
				t.Errorf("%s: line %d does not match docs/schema/%s.schema.json: %s\n%v", what, n, r.schema, line, err)
				continue
			}
			for i, k := range kinds[r.schema] {
				if k.Validate(inst) == nil {
					seen[r.schema][i]++
				}
			}
			last, _ = inst.(map[string]any)
		}
		if n == 0 {
			t.Errorf("%s: no records", what)
		}
		if code == 2 && r.schema != "scan" && r.args[0] != "--check" {
			if _, ok := last["error"]; !ok {
				t.Errorf("%s: exit 2 and the last record is not an error record: %v", what, last)
			}
		}
	}
	for name, ks := range kinds {
		for i := range ks {
			if seen[name][i] == 0 {
				t.Errorf("docs/schema/%s.schema.json: no record of kind %q in any run", name, titles[name][i])
			}
		}
	}
	t.Logf("%d runs, %d records validated", len(runs), lines)
}

// TestJSONScripts runs cmd/testdata/script/json_*.txtar: the shared shape
// of --json, seen from the command line.
func TestJSONScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "json_")})
}
