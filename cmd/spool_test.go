//go:build linux

package cmd

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpooledCompressed runs pk dis, trace (default view, --top, the whole
// tree, text and JSON), diff (same, changed, text and JSON), hash and canon on gzipped
// bare pickles, as subprocesses: through the spool of the decompressed
// bytes (input.SpoolDecompressed) their output, stderr and exit code are
// those of the path through input.Open (PK_SPOOL=0), and a file of 60,000
// pickles of None in 1 KB of gzip takes what the bare file takes (Open
// kept a store for each stream: about 120 MB here, 1.9 GB for a million),
// with no temporary file left behind.
func TestSpooledCompressed(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil || !strings.Contains(pk, "testscript-main") {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	dir := t.TempDir()
	gz := func(name string, b []byte) string { return gzFile(t, dir, name, b) }
	// the comparisons read every file through Open too (PK_SPOOL=0: a store
	// per stream), so under -short their pickles of None are 6,000; the
	// peak RSS is measured on 60,000 through the spool alone
	big := bytes.Repeat([]byte("\x80\x04N."), 60000)
	nones := big
	if testing.Short() {
		nones = big[:4*6000]
	}
	nones2 := append(append([]byte{}, nones...), "\x80\x04K\x01."...)
	rows := []byte("\x80\x04]\x94(")
	for i := 0; i < 3000; i++ {
		rows = append(rows, "}\x94(\x8c\x01a\x94K\x01\x8c\x01b\x94]\x94(K\x02K\x03eu"...)
	}
	rows = append(rows, "e."...)
	rows2 := bytes.Replace(rows, []byte("K\x02K\x03eu"), []byte("K\x02K\x04eu"), 1)
	files := map[string]string{
		"nones": gz("nones.pkl.gz", nones), "nones2": gz("nones2.pkl.gz", nones2),
		"big": gz("big.pkl.gz", big), "big2": gz("big2.pkl.gz", append(append([]byte{}, big...), "\x80\x04K\x01."...)),
		"rows": gz("rows.pkl.gz", rows), "rows2": gz("rows2.pkl.gz", rows2),
		"junk":  gz("junk.pkl.gz", append(append([]byte{}, rows...), "\x80\x04j"...)),
		"mjunk": gz("mjunk.pkl.gz", append(append([]byte{}, nones[:4000]...), "\x80\x04j"...)),
	}
	// pk dis counts the streams for its header with its own emulator
	// (dis.Count) unless the machine may count otherwise: a second stream
	// the machine refuses (odd DICT, STACK_GLOBAL of ints, EXT1 0) and
	// the emulator does not, a str that may name joblib's array wrapper,
	// a first result that may be torch's legacy magic number
	one := []byte("\x80\x04K\x01.")
	for name, b := range map[string]string{"odd": "\x80\x02(K\x01K\x02K\x03d.", "sg": "\x80\x04K\x01K\x02\x93.", "ext": "\x80\x02\x82\x00.",
		"wrap": "\x80\x04\x8c\x11NumpyArrayWrapper\x94.", "magic": "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."} {
		files[name] = gz(name+".pkl.gz", append(append([]byte{}, one...), b...))
	}
	files["magic0"] = gz("magic0.pkl.gz", []byte("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02K\x01."))
	// a nesting of 200,000 objects (NEWOBJ, BUILD), live until its STOP
	nest := []byte("\x80\x04cbuiltins\nobject\nq\x000\x8c\x01aq\x010")
	nest = append(nest, bytes.Repeat([]byte("h\x00)\x81}h\x01"), 200000)...)
	nest = append(append(nest, 'N'), bytes.Repeat([]byte("sb"), 200000)...)
	files["nest"] = gz("nest.pkl.gz", append(nest, '.'))
	badGzips(t, dir, files)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // (for the spools: none may be left)
	run := func(env string, args []string) string { return runPKEnv(pk, env, args) }
	var cases [][]string
	for _, n := range []string{"nones", "nones2", "rows", "junk", "mjunk", "crc", "short"} {
		f := files[n]
		for _, a := range [][]string{{"dis"}, {"dis", "--json"}, {"trace"}, {"trace", "--top", "5"}, {"trace", "--top", "5", "--json"},
			{"trace", "--lines", "0"}, {"trace", "--lines", "0", "--json"}, {"diff", f}, {"diff", "--json", f}} {
			cases = append(cases, append(append([]string{}, a...), f))
		}
	}
	for _, n := range []string{"odd", "sg", "ext", "wrap", "magic", "magic0", "nest"} {
		cases = append(cases, []string{"dis", files[n]}, []string{"dis", "--json", files[n]})
	}
	// pk hash and pk canon (its writer's read and both checks: the input's
	// pk hash and the compressed output's) through the spool too
	for _, n := range []string{"nones2", "rows", "junk", "mjunk", "crc", "short", "odd", "sg", "wrap", "magic0", "nest"} {
		cases = append(cases, []string{"hash", files[n]}, []string{"hash", "--json", "--form", "pk1", files[n]},
			[]string{"canon", "-o", "/dev/stdout", files[n]})
	}
	cases = append(cases, []string{"diff", files["nones"], files["nones2"]}, []string{"diff", "--json", files["rows"], files["rows2"]},
		[]string{"diff", files["rows2"], strings.TrimSuffix(files["rows"], ".gz")})
	os.WriteFile(strings.TrimSuffix(files["rows"], ".gz"), rows, 0o644)
	for _, args := range cases {
		got := run("PK_SPOOL=1", args)
		want := run("PK_SPOOL=0", args)
		if got != want {
			t.Errorf("pk %s: through the spool\n%.600s\nthrough Open\n%.600s", strings.Join(args, " "), got, want)
		}
	}
	// peak RSS (runCost: pk's own) of the 60,000 pickles of None
	for _, args := range [][]string{{"trace", files["big"]}, {"trace", "--top", "5", files["big"]},
		{"trace", "--lines", "0", "--json", files["big"]}, {"diff", files["big"], files["big2"]}} {
		if r := runCost(t, pk, args); r.rss > 40<<20 {
			t.Errorf("pk %s: %s, want a peak RSS under 40 MB (the bare file's)", strings.Join(args, " "), r)
		}
	}
	// pk dis of the nesting: the emulator's stack of offsets (the bare
	// file's), where the machine's count held every level's nodes
	if r := runCost(t, pk, []string{"dis", files["nest"]}); r.rss > 48<<20 {
		t.Errorf("pk dis %s: %s, want a peak RSS under 48 MB (the bare file's)", files["nest"], r)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// badGzips adds to files "crc" (files["rows"] with its CRC wrong) and
// "short" (its first half), written in dir.
func badGzips(t *testing.T, dir string, files map[string]string) {
	bad := []byte(mustRead(t, files["rows"]))
	bad[len(bad)-6] ^= 1 // the CRC
	files["crc"] = filepath.Join(dir, "crc.pkl.gz")
	os.WriteFile(files["crc"], bad, 0o644)
	files["short"] = filepath.Join(dir, "short.pkl.gz")
	os.WriteFile(files["short"], bad[:len(bad)/2], 0o644)
}

// runPKEnv runs pk with args and env added to the environment, and
// returns its output, stderr and exit status in one string.
func runPKEnv(pk, env string, args []string) string {
	c := exec.Command(pk, args...)
	c.Env = append(os.Environ(), "PK_NO_PROGRESS=1", env)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.Run()
	return out.String() + "\n--stderr--\n" + errb.String() + "\n--exit--\n" + c.ProcessState.String()
}

// gzFile writes b gzipped to dir/name and returns its path.
func gzFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(b)
	z.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSpooledViews: the views of pk trace that read a compressed bare
// pickle through Open before session 38 (--html, --depth, --group,
// --path; --all, --min-size, --sort size) read it through its spool
// (input.SpoolDecompressed: the paths for bare files, else Spool.Open)
// with the output, stderr and exit code of the path through Open
// (PK_SPOOL=0), good and bad inputs alike; --html and --depth of 60,000
// pickles of None in gzip stay within the bare file's peak RSS (Open kept
// a store for each stream: 81-128 MB).
func TestSpooledViews(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil || !strings.Contains(pk, "testscript-main") {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	dir := t.TempDir()
	gz := func(name string, b []byte) string { return gzFile(t, dir, name, b) }
	rows := []byte("\x80\x04]\x94(")
	for i := 0; i < 2000; i++ {
		rows = append(rows, "}\x94(\x8c\x01a\x94K\x01\x8c\x01b\x94]\x94(K\x02K\x03eu"...)
	}
	rows = append(rows, "e."...)
	// one stream with calls (the whole tree's fast path does not take them)
	calls := []byte("\x80\x04]\x94(")
	for i := 0; i < 500; i++ {
		calls = append(calls, "\x8c\x08builtins\x8c\x07complex\x93K\x01K\x02\x86R"...)
	}
	calls = append(calls, "e."...)
	big := bytes.Repeat([]byte("\x80\x04N."), 60000)
	files := map[string]string{
		"rows": gz("rows.pkl.gz", rows), "calls": gz("calls.pkl.gz", calls),
		"nones": gz("nones.pkl.gz", bytes.Repeat([]byte("\x80\x02}q\x00(K\x01]q\x01K\x02au."), 300)),
		"junk":  gz("junk.pkl.gz", append(append([]byte{}, rows...), "\x80\x04j"...)),
		"big":   gz("big.pkl.gz", big),
	}
	badGzips(t, dir, files)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // (for the spools: none may be left)
	run := func(env string, args []string) string { return runPKEnv(pk, env, args) }
	views := [][]string{{"--html", "-"}, {"--svg", "-", "--html", "-"}, {"--depth", "0"}, {"--depth", "2"}, {"--depth", "1", "--json"},
		{"--depth", "2", "--sort", "size"}, {"--top", "3", "--group"}, {"--path", "root[1]"}, {"--path", "root[1]['b']", "--json"},
		{"--all"}, {"--min-size", "1K"}, {"--lines", "3"}}
	names := []string{"rows", "calls", "nones", "junk", "crc", "short"}
	for i, v := range views {
		for j, n := range names {
			if testing.Short() && (i+j)%2 == 1 {
				continue // (every second pair)
			}
			args := append(append([]string{"trace"}, v...), files[n])
			if got, want := run("PK_SPOOL=1", args), run("PK_SPOOL=0", args); got != want {
				t.Errorf("pk %s: through the spool\n%.600s\nthrough Open\n%.600s", strings.Join(args, " "), got, want)
			}
		}
	}
	// a tensor whose storage pickle.dump wrote: its label reads the
	// storage's head again (from the spool: Doc.StreamSection)
	for _, v := range [][]string{{"--depth", "2"}, {"--path", "root['w']"}} {
		args := append(append([]string{"trace"}, v...), filepath.Join("..", "testdata", "tensors", "big_p4.pkl.gz"))
		if got, want := run("PK_SPOOL=1", args), run("PK_SPOOL=0", args); got != want {
			t.Errorf("pk %s: through the spool\n%.600s\nthrough Open\n%.600s", strings.Join(args, " "), got, want)
		}
	}
	// --path into a table the top sink folds (trace.EachPath, in the tree
	// of the compressed file), its whole tree, --all, --min-size (the whole
	// tree's sink) and --group (trace.EachGroups): through the spool and
	// the sink, as through Open, and as through the spool without the sink
	table := []byte("\x80\x04]\x94(")
	for i := 0; i < 8000; i++ {
		table = append(table, "}\x94(\x8c\x01a\x94J"...)
		table = append(table, byte(i), byte(i>>8), 0, 0)
		table = append(table, "\x8c\x01b\x94]\x94(K\x02K\x03eu"...)
		if i%500 == 499 {
			table = append(table, "e("...)
		}
	}
	table = append(table, "e."...)
	tf := gz("table.pkl.gz", table)
	// rows made by calls (no fast path takes them)
	calls8 := []byte("\x80\x04]\x94(")
	for i := 0; i < 8000; i++ {
		calls8 = append(calls8, "\x8c\x08builtins\x8c\x07complex\x93K\x01K\x02\x86R"...)
		if i%500 == 499 {
			calls8 = append(calls8, "e("...)
		}
	}
	calls8 = append(calls8, "e."...)
	cf := gz("ctable.pkl.gz", calls8)
	for _, v := range [][]string{{"--path", "root[5000]"}, {"--path", "root[5000]['b']", "--json"}, {"--path", "root[7]", "--lines", "0"},
		{"--path", "root[99999]"}, {"--path", "root"}, {"--lines", "0"}, {"--json"}, {"--all"}, {"--min-size", "20", "--json"},
		{"--depth", "2"}, {"--top", "3", "--group"}, {"--top", "3", "--group", "--json"}} {
		for _, f := range []string{tf, cf} {
			args := append(append([]string{"trace"}, v...), f)
			want := run("PK_SPOOL=0", args)
			if got := run("PK_SPOOL=1", args); got != want {
				t.Errorf("pk %s: through the spool\n%.600s\nthrough Open\n%.600s", strings.Join(args, " "), got, want)
			}
			if got := run("PK_TRACE_SINK=0", args); got != want {
				t.Errorf("pk %s: through the spool without the sink\n%.600s\nthrough Open\n%.600s", strings.Join(args, " "), got, want)
			}
		}
	}
	for _, args := range [][]string{{"trace", "--html", "-", files["big"]}, {"trace", "--depth", "2", files["big"]}} {
		if r := runCost(t, pk, args); r.rss > 40<<20 {
			t.Errorf("pk %s: %s, want a peak RSS under 40 MB (the bare file's)", strings.Join(args, " "), r)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
