package input

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
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

// TestSpoolOpen: Spool.Open gives the document Open gives the compressed
// file (its name, format, compression, on-disk size; the same streams at
// the same offsets, named by the user's file; the part and a section of
// its stream read again from the spool), and refuses trailing bytes (their reason is worded
// differently by a reader that knows the size).
func TestSpoolOpen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	gz := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, testfile.Compress(t, "gzip", b), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := gz("two.pkl.gz", []byte("\x80\x04]\x94(K\x01K\x02e.\x80\x04N."))
	sp, ok := SpoolDecompressed(two, Options{})
	if !ok {
		t.Fatal("no spool")
	}
	defer sp.Close()
	got, err := sp.Open(pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Open(two, pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Path != want.Path || got.Format != want.Format || got.Compression != want.Compression || got.Size != want.Size ||
		len(got.Parts) != 1 || len(want.Parts) != 1 {
		t.Fatalf("spool's document %q %q %q %d (%d parts), want %q %q %q %d (%d parts)", got.Path, got.Format, got.Compression,
			got.Size, len(got.Parts), want.Path, want.Format, want.Compression, want.Size, len(want.Parts))
	}
	g, w := got.Parts[0].Pickle, want.Parts[0].Pickle
	if g.Name != w.Name || g.Size != w.Size || len(g.Streams) != len(w.Streams) || len(g.Streams) != 2 {
		t.Fatalf("spool's pickle %q %d bytes, %d streams; want %q %d bytes, %d streams", g.Name, g.Size, len(g.Streams), w.Name, w.Size, len(w.Streams))
	}
	for i := range g.Streams {
		if g.Streams[i].Offset != w.Streams[i].Offset || g.Streams[i].End != w.Streams[i].End || g.Streams[i].Store().Len() != w.Streams[i].Store().Len() {
			t.Errorf("stream %d differs", i)
		}
	}
	// the part read again, from the spool
	rc, n, err := got.OpenPart(0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if n != 15 || string(b) != "\x80\x04]\x94(K\x01K\x02e.\x80\x04N." {
		t.Errorf("OpenPart: %d bytes %q", n, b)
	}
	// a section of the stream read again (a tensor's pickled storage
	// bytes): from the spool
	open := got.StreamSection(11, 4)
	if open == nil {
		t.Fatal("StreamSection: nil")
	}
	sec, err := open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(sec)
	sec.Close()
	if string(b) != "\x80\x04N." {
		t.Errorf("StreamSection(11, 4): %q", b)
	}
	// trailing bytes after the streams
	junk := gz("junk.pkl.gz", []byte("\x80\x04N.\x80\x04j"))
	sj, ok := SpoolDecompressed(junk, Options{})
	if !ok {
		t.Fatal("no spool of junk.pkl.gz")
	}
	defer sj.Close()
	if doc, err := sj.Open(pickle.Options{}); err == nil {
		t.Errorf("Spool.Open of trailing bytes gave %q (%d parts), want an error", doc.Format, len(doc.Parts))
	}
}
