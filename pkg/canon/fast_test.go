package canon

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// fastCorpus lists the files under testdata/ (the repository's) that could be
// pickles.
func fastCorpus(t testing.TB) []string {
	var files []string
	filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			// bench: generated, large; costshapes: 1-10 MB each, held to
			// their bounds by cmd's TestCostShapes, not walked here
			if d.Name() == "bench" || d.Name() == "costshapes" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".py", ".md", ".txt", ".json", ".jsonl", ".sh", ".txtar", ".html", ".svg", ".golden":
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Size() < 64<<20 {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func slowHash(t testing.TB, path string, opt Options) (*Result, error) {
	noFast = true
	defer func() { noFast = false }()
	return HashFile(path, opt)
}

// TestFastMatchesGraph: wherever the streaming path takes an input, its
// digest is the graph path's.
func TestFastMatchesGraph(t *testing.T) {
	opts := []Options{{}, {KeepDictOrder: true}, {Algo: XXH3}, {Strict: true}}
	taken := 0
	files := testfile.Sample(fastCorpus(t), 6)
	for _, p := range files {
		for _, opt := range opts {
			fast, ok := fastHashFile(p, opt)
			if !ok {
				continue
			}
			if opt.Tag() == (Options{}).Tag() {
				taken++
			}
			slow, err := slowHash(t, p, opt)
			if err != nil {
				t.Errorf("%s: fast path took an input the graph path refuses: %v", p, err)
				continue
			}
			if fast.Digest != slow.Digest || len(slow.Applied) != 0 {
				t.Errorf("%s %+v: fast %s, graph %s (%d normalisations)", p, opt, fast.Digest, slow.Digest, len(slow.Applied))
			}
		}
	}
	t.Logf("fast path took %d of %d files", taken, len(files))
	if taken < testfile.ShortDiv(20, 6) {
		t.Errorf("fast path took only %d files", taken)
	}
}

func TestFastRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"leftcall":  "\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02ls\x85R].", /* a call left under the result */
		"rulecall":  "\x80\x04\x8c\x08builtins\x8c\x03set\x93]\x85\x85R.",    /* set-reduce */
		"cpcall":    "\x80\x04\x8c\x0bcloudpickle\x8c\x0e_builtin_type\x93\x8c\x08CodeType\x85R.",
		"dillmain":  "\x80\x02c__builtin__\n__main__\n.",
		"sharedobj": "\x80\x04]\x94(\x8c\x01m\x8c\x01C\x93)\x81\x94h\x01e.",
		"buildlist": "\x80\x04]\x94}\x94b.",
		"shared":    "\x80\x04]\x94(]\x94h\x01e.",
		"popped":    "\x80\x04]\x940]\x94.",
		"trailing":  "\x80\x04N.N.",
		"dupkeys":   "\x80\x04}\x94(K\x01K\x02K\x01K\x03u.",
		"floatkey":  "\x80\x04}\x94(G?\xf0\x00\x00\x00\x00\x00\x00K\x02u.",
		"truncated": "\x80\x04]\x94(K\x01",
		"gzip":      "\x1f\x8b\x08\x00",
	} {
		p := filepath.Join(dir, name+".pkl")
		os.WriteFile(p, []byte(data), 0o644)
		if _, ok := fastHashFile(p, Options{}); ok {
			t.Errorf("%s: the fast path took it", name)
		}
	}
	if _, ok := fastHashFile("-", Options{}); ok {
		t.Error("stdin taken")
	}
}

// TestFastScanMutable: pass 1 gives up at a GET of a mutable object (pass 2
// reads only pure values from the memo), and only where pass 2 would have
// given up too: with the check off, the fast path refuses the same inputs.
func TestFastScanMutable(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data string
		slow bool // pass 1 gives up
	}{
		{"list", "\x80\x04]\x94(]\x94h\x01h\x01e.", true},
		{"dictcycle", "\x80\x04}\x94K\x00h\x00s.", true},
		{"nesteddict", "\x80\x04]\x94(}\x94h\x01e.", true},
		{"dictbymark", "\x80\x04]\x94((\x8c\x01aK\x01d\x94h\x01e.", true},
		{"set", "\x80\x04]\x94(\x8f\x94h\x01e.", true},
		{"bytearray", "\x80\x05]\x94(\x96\x01\x00\x00\x00\x00\x00\x00\x00x\x94h\x01e.", true},
		{"call", "\x80\x04]\x94(\x8c\x01m\x8c\x01f\x93)R\x94h\x01e.", true},
		{"str", "\x80\x04]\x94(\x8c\x01a\x94h\x01e.", false},
		{"tuple", "\x80\x04]\x94(K\x01K\x02\x86\x94h\x01e.", false},
		// protocol 2 (PUT): index 1 holds a list, then a str; the GET reads the str
		{"overwritten", "\x80\x02]q\x00(]q\x01X\x01\x00\x00\x00aq\x01h\x01e.", false},
	} {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fastScan(p); (err != nil) != c.slow {
			t.Errorf("%s: pass 1 gave up: %v, want %v", c.name, err != nil, c.slow)
		}
		slow, err := slowHash(t, p, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if fast, ok := fastHashFile(p, Options{}); ok && fast.Digest != slow.Digest {
			t.Errorf("%s: fast %s, graph %s", c.name, fast.Digest, slow.Digest)
		}
		noScanMut = true
		_, ok := fastHashFile(p, Options{})
		noScanMut = false
		if c.slow && ok {
			t.Errorf("%s: without pass 1's check, pass 2 takes it", c.name)
		}
	}
}

// FuzzFastHash: on any bytes, the streaming path either gives up or agrees
// with the graph path (and never panics).
func FuzzFastHash(f *testing.F) {
	n := 0
	for _, p := range fastCorpus(f) {
		if _, ok := fastHashFile(p, Options{}); !ok {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 && n < 64 {
			f.Add(b)
			n++
		}
	}
	f.Add([]byte("\x80\x04]\x94(K\x01K\x02e."))
	f.Add([]byte("(lp0\nI1\naI2\na(dp1\nS'a'\np2\nI3\nsa."))
	f.Add(lazyRows(14, true))                        // tuples in rows: lazy digests (fast_lazy_test.go)
	f.Add(splitRows(40, 3, 10, 3, 2))                // APPENDS batches: pass 2 split (fast_par_test.go)
	f.Add(framed(f, splitRows(40, 3, 10, 3, 2), 64)) // in frames: pass 1 split (fast_scan_split_test.go)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in.pkl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip()
		}
		// pass 1 in two halves (every size) gives the one pass's result,
		// or gives up with it
		if split, one, errSplit, errOne, _, _ := scanBoth(t, p); (errSplit != nil) != (errOne != nil) {
			t.Fatalf("pass 1 split: %v, one pass: %v", errSplit, errOne)
		} else if errOne == nil {
			sameScan(t, "split", split, one)
		}
		if _, _, err := fastScan(p); err != nil {
			// pass 1 gives up only where pass 2 would have
			noScanMut = true
			_, ok := fastHashFile(p, Options{})
			noScanMut = false
			if ok {
				t.Fatal("pass 1 gave up on what the fast path takes without its check of mutable GETs")
			}
		}
		for _, opt := range []Options{{}, {KeepDictOrder: true}} {
			fast, ok := fastHashFile(p, opt)
			if !ok {
				continue
			}
			slow, err := slowHash(t, p, opt)
			if err != nil {
				t.Fatalf("fast path took what the graph path refuses (%v)", err)
			}
			if fast.Digest != slow.Digest || len(slow.Applied) != 0 {
				t.Fatalf("fast %s, graph %s", fast.Digest, slow.Digest)
			}
		}
		// pass 2 in the reader's window (runHot) gives up where the
		// batches do, with the same digest
		fast, ok := fastHashFile(p, Options{})
		noHot = true
		off, ok2 := fastHashFile(p, Options{})
		noHot = false
		if ok != ok2 || ok && fast.Digest != off.Digest {
			t.Fatalf("in place %v %v, batches %v %v", fast, ok, off, ok2)
		}
		// pass 2 split among workers at every APPENDS to the list result
		// 64 bytes past the last gives up where the one pass does, with
		// the same digest
		done := splitSmall(64, 1<<20)
		split, ok3 := fastHashFile(p, Options{})
		done()
		if ok != ok3 || ok && fast.Digest != split.Digest {
			t.Fatalf("one pass %v %v, split %v %v", fast, ok, split, ok3)
		}
	})
}

// TestFastScanOpen: pass 1 gives up where more than maxFastOpen containers
// are open on the stack at once (nested dicts and lists filled from the
// inside out), which the graph path holds for less, and not on a deep stack
// of plain values (a wide tuple) or of MARKs; the digest is the graph
// path's either way.
func TestFastScanOpen(t *testing.T) {
	const n = maxFastOpen * 2
	var dicts, lists, wide, marks bytes.Buffer
	dicts.WriteString("\x80\x04")
	lists.WriteString("\x80\x04")
	wide.WriteString("\x80\x04(")
	marks.WriteString("\x80\x04")
	for range n {
		dicts.WriteString("}K\x01")
		lists.WriteString("]")
		wide.WriteString("K\x01")
		marks.WriteString("(K\x01")
	}
	dicts.WriteString("N")
	lists.WriteString("N")
	for range n {
		dicts.WriteString("s")
		lists.WriteString("a")
		marks.WriteString("t")
	}
	wide.WriteString("t")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		slow bool
	}{
		{"dicts", dicts.Bytes(), true},
		{"lists", lists.Bytes(), true},
		{"wide", wide.Bytes(), false},
		{"marks", marks.Bytes(), false},
	} {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, append(c.data, '.'), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fastScan(p); (err != nil) != c.slow {
			t.Errorf("%s: pass 1 gave up: %v (%v), want %v", c.name, err != nil, err, c.slow)
		}
		slow, err := slowHash(t, p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res, err := HashFile(p, Options{})
		if err != nil || res.Digest != slow.Digest {
			t.Errorf("%s: HashFile %v %v, graph %s", c.name, res, err, slow.Digest)
		}
	}
}
