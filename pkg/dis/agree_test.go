package dis

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The agreement test: for every pickletools oracle under testdata/fixtures
// (<stream>.ops.jsonl written by testdata/gen/oracle.py with
// pickletools.genops), `pk dis --json` over the same bytes must give the
// same opcodes, offsets and typed arguments; and where pickletools could
// print the listing (<file>.dis.txt without an error line), `pk dis
// --pickletools` must print the same text. PK_FIXTURES overrides the root.

type oracleOp struct {
	Pos int64 `json:"pos"`    // the oracle's offset
	Off int64 `json:"offset"` // pk's

	Op    string          `json:"op"`
	Arg   json.RawMessage `json:"arg"`
	Strm  *int            `json:"stream"`
	Trail json.RawMessage `json:"trailing"`
}

func fixturesRoot(t *testing.T) string {
	if r := os.Getenv("PK_FIXTURES"); r != "" {
		return r
	}
	return filepath.Join("..", "..", "testdata", "fixtures")
}

var multiRe = regexp.MustCompile(`^(.*)\.(\d+)$`)

type target struct {
	file   string // the bytes to disassemble
	stream int
	spans  string // rawspans.json, or ""
}

// resolve maps X.ops.jsonl to the file and stream it describes.
func resolve(oracle string) (target, bool) {
	base := strings.TrimSuffix(oracle, ".ops.jsonl")
	t := target{file: base}
	if _, err := os.Stat(base); err != nil {
		m := multiRe.FindStringSubmatch(base)
		if m == nil {
			return t, false
		}
		if _, err := os.Stat(m[1]); err != nil {
			return t, false
		}
		t.file = m[1]
		t.stream, _ = strconv.Atoi(m[2])
	}
	primary := strings.TrimSuffix(t.file, ".stream.pkl")
	if _, err := os.Stat(primary + ".rawspans.json"); err == nil {
		t.spans = primary + ".rawspans.json"
	}
	return t, true
}

func gapsFrom(t *testing.T, path string) func(*pickle.Op) (Gap, bool) {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spans []struct {
		AfterBuild int64  `json:"after_build"`
		Start      int64  `json:"start"`
		End        int64  `json:"end"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &spans); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	m := map[int64]Gap{}
	for _, s := range spans {
		if s.Start != s.AfterBuild {
			t.Fatalf("%s: span starts at %d, not right after the BUILD (%d)", path, s.Start, s.AfterBuild)
		}
		m[s.AfterBuild] = Gap{Len: s.End - s.Start, Pickle: s.Kind == "pickle"}
	}
	return func(o *pickle.Op) (Gap, bool) {
		if o.Code != pickle.BUILD {
			return Gap{}, false
		}
		g, ok := m[o.Offset+1]
		return g, ok
	}
}

func readLines(t *testing.T, data []byte) []oracleOp {
	var out []oracleOp
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var o oracleOp
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		out = append(out, o)
	}
	return out
}

// fromOracle re-encodes an argument of the oracle files (testdata/README.md:
// null, {"int":"<decimal>"}, {"bool":b}, {"float":"<16 hex digits of the
// IEEE bits>"}, {"str"|"bytes"|"bytearray":"<hex>"}) as pk dis --json
// writes it (pkg/jsonl).
func fromOracle(a json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if string(a) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(a, &m); err != nil || len(m) != 1 {
		return nil, fmt.Errorf("oracle argument %s: %v", a, err)
	}
	for tag, v := range m {
		if tag == "bool" {
			return v, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		switch tag {
		case "int":
			return json.RawMessage(s), nil
		case "float":
			u, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				return nil, err
			}
			return jsonl.AppendFloat(nil, math.Float64frombits(u)), nil
		}
		raw, err := hex.DecodeString(s)
		if err != nil {
			return nil, err
		}
		if tag == "str" {
			return jsonl.AppendString(nil, string(raw)), nil
		}
		return jsonl.AppendBytes(nil, tag, string(raw), int64(len(raw))), nil
	}
	return nil, nil
}

func sameArg(pk, oracle json.RawMessage) bool {
	o, err := fromOracle(oracle)
	if err != nil {
		return false
	}
	var x, y any
	dx, dy := json.NewDecoder(bytes.NewReader(pk)), json.NewDecoder(bytes.NewReader(o))
	dx.UseNumber()
	dy.UseNumber()
	if dx.Decode(&x) != nil || dy.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestAgreeWithPickletools(t *testing.T) {
	root := fixturesRoot(t)
	groups, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("fixture corpus missing (%v): run `make fixtures`", err)
	}
	perGroup := map[string]int{}
	var oracles []string
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		perGroup[g.Name()] = 0
		filepath.WalkDir(filepath.Join(root, g.Name()), func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() && strings.HasSuffix(p, ".ops.jsonl") {
				oracles = append(oracles, p)
				perGroup[g.Name()]++
			}
			return nil
		})
	}
	if len(perGroup) == 0 {
		t.Fatalf("no fixture groups under %s", root)
	}
	for g, n := range perGroup {
		if n == 0 {
			t.Errorf("fixture group %s has no .ops.jsonl oracle: an empty corpus must not pass", g)
		}
	}
	sort.Strings(oracles)
	ops := 0
	for _, oracle := range oracles {
		tg, ok := resolve(oracle)
		if !ok {
			t.Errorf("%s: no file for this oracle", oracle)
			continue
		}
		want, err := os.ReadFile(oracle)
		if err != nil {
			t.Fatal(err)
		}
		wantOps := readLines(t, want)
		f, err := os.Open(tg.file)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		var out bytes.Buffer
		_, derr := Run(&out, f, fi.Size(), tg.file, Options{JSON: true, BlobThreshold: math.MaxInt64, GapAfter: gapsFrom(t, tg.spans)})
		f.Close()
		var got []oracleOp
		for _, o := range readLines(t, out.Bytes()) {
			o.Pos = o.Off
			if o.Strm != nil && *o.Strm == tg.stream && o.Op != "" {
				got = append(got, o)
			}
		}
		name, _ := filepath.Rel(root, oracle)
		n := len(got)
		if len(wantOps) < n {
			n = len(wantOps)
		}
		bad := false
		for i := 0; i < n; i++ {
			g, w := got[i], wantOps[i]
			if g.Pos != w.Pos || g.Op != w.Op || !sameArg(g.Arg, w.Arg) {
				t.Errorf("%s: op %d: pk %d %s %s, pickletools %d %s %s", name, i, g.Pos, g.Op, g.Arg, w.Pos, w.Op, w.Arg)
				bad = true
				break
			}
		}
		if !bad && len(got) != len(wantOps) {
			t.Errorf("%s: pk gives %d opcodes, pickletools %d (pk error: %v)", name, len(got), len(wantOps), derr)
			bad = true
		}
		if !bad && derr != nil && tg.stream == 0 {
			t.Errorf("%s: pk fails after agreeing on every opcode: %v", name, derr)
		}
		ops += len(wantOps)
	}
	t.Logf("%d oracles, %d opcodes agree or were reported", len(oracles), ops)
}

// TestAgreeWithPickletoolsText compares `pk dis --pickletools` with the
// .dis.txt listings pickletools printed without error.
func TestAgreeWithPickletoolsText(t *testing.T) {
	root := fixturesRoot(t)
	var listings []string
	filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() && strings.HasSuffix(p, ".dis.txt") {
			listings = append(listings, p)
		}
		return nil
	})
	if len(listings) == 0 {
		t.Fatalf("no .dis.txt listing under %s: run `make fixtures`", root)
	}
	compared := 0
	for _, l := range listings {
		want, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(want, []byte("\n# pickletools error:")) || bytes.HasPrefix(want, []byte("# pickletools error:")) {
			continue // pickletools gave up; the ops oracle covers the file
		}
		file := strings.TrimSuffix(l, ".dis.txt")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", l, err)
			continue
		}
		var out bytes.Buffer
		Run(&out, bytes.NewReader(data), int64(len(data)), file, Options{Pickletools: true, BlobThreshold: math.MaxInt64})
		got := out.String()
		w := string(want)
		// oracle.py cuts very long listings with a "# ... truncated" marker;
		// everything before it is exact pickletools output.
		if i := strings.Index(w, "# ... truncated"); i >= 0 {
			w = w[:i]
			if len(got) > len(w) {
				got = got[:len(w)]
			}
		}
		if got != w {
			gl, wl := strings.Split(got, "\n"), strings.Split(w, "\n")
			for i := range wl {
				if i >= len(gl) || gl[i] != wl[i] {
					g := "<end>"
					if i < len(gl) {
						g = gl[i]
					}
					t.Errorf("%s: line %d:\n pk          %q\n pickletools %q", l, i+1, clip(g), clip(wl[i]))
					break
				}
			}
			continue
		}
		compared++
	}
	if compared == 0 {
		t.Fatal("no listing compared")
	}
	t.Logf("%d of %d pickletools listings identical", compared, len(listings))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
