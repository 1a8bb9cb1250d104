package write

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzFile: any bytes are written or refused in one line naming the file,
// never a panic; what is written is canonical (File reads it back) and
// idempotent. Without -fuzz only the seeds run (small corpus pickles).
func FuzzFile(f *testing.F) {
	for _, p := range []string{
		"../../testdata/fixtures/stdlib/values_p4_c_py311.pkl",
		"../../testdata/fixtures/stdlib/item_selfref_tuple_p2_c_py311.pkl",
		"../../testdata/equiv/cp220_dynclass/p4_seed5_a.pkl",
		"../../testdata/equiv/dill036_closure/p3_seed19_a.pkl",
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x04]\x94h\x00a."))
	// compressed: read as it is decompressed (input.EachStreamDecompressed)
	if b, err := os.ReadFile("../../testdata/fixtures/stdlib/values_p4_c_py311.pkl"); err == nil {
		for _, kind := range []string{"gzip", "zlib", "lz4"} {
			if z, err := compress(kind, b); err == nil {
				f.Add(z)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "f.pkl")
		os.WriteFile(in, b, 0o644)
		res, err := File(in, Options{}, false)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		out := filepath.Join(dir, "o.pkl")
		o, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		res.WriteTo(o) // (Data, or a spooled output)
		o.Close()
		res.Close()
		again, err := File(out, Options{}, true)
		if err != nil {
			t.Fatalf("the output is refused: %v", err)
		}
		if !again.Canonical() {
			t.Fatal("not idempotent")
		}
	})
}
