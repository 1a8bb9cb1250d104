package input

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSpool: SpoolDecompressed of any bytes never panics, leaves no
// temporary file, and a spool made holds exactly what Open's decompressor
// gives (a gzip file of a pickle's bytes, as written, or the bytes
// themselves when they are a compressed file of their own), within the
// decompression limit; a file that does not decompress whole, with a
// good trailer, gives none.
func FuzzSpool(f *testing.F) {
	f.Add([]byte("\x80\x04K\x01."), false)
	f.Add([]byte("\x80\x04N.\x80\x04N.junk"), false)
	f.Add([]byte("(lp0\nI1\na."), false)
	f.Add([]byte("PK\x03\x04"), false)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, true)
	f.Fuzz(func(t *testing.T, b []byte, raw bool) {
		dir := t.TempDir()
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		file := b
		if !raw {
			var buf bytes.Buffer
			z := gzip.NewWriter(&buf)
			z.Write(b)
			z.Close()
			file = buf.Bytes()
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, file, 0o644); err != nil {
			t.Fatal(err)
		}
		sp, ok := SpoolDecompressed(p, Options{MaxDecompressed: 1 << 20})
		if ok {
			got, err := os.ReadFile(sp.Path())
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != sp.Size || len(got) > 1<<20 || !PlainPickle(got[:min(len(got), 16)]) || len(got) == 0 {
				t.Fatalf("spool of %d bytes (Size %d) starting %q", len(got), sp.Size, got[:min(len(got), 16)])
			}
			if !raw && !bytes.Equal(got, b) {
				t.Fatalf("spool %q, want %q", got, b)
			}
			if err := sp.Close(); err != nil {
				t.Fatal(err)
			}
		} else if !raw && len(b) > 0 && len(b) <= 1<<20 && PlainPickle(b[:min(len(b), 16)]) {
			t.Fatalf("no spool of a gzip of %q", b[:min(len(b), 16)])
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})
}
