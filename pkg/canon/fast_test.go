package canon

import (
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
	files := testfile.Sample(fastCorpus(t), 3)
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
	if taken < testfile.ShortDiv(20, 3) {
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
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in.pkl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip()
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
	})
}
