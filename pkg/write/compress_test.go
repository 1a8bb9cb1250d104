package write

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// chunkData is a few MiB that compress a little and a lot by turns: runs of
// text, repeats and random bytes.
func chunkData(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 0, n)
	for len(b) < n {
		switch r.IntN(3) {
		case 0:
			for range r.IntN(4000) {
				b = append(b, "abcdefghij"[r.IntN(10)])
			}
		case 1:
			if len(b) > 100 {
				s := r.IntN(len(b) - 50)
				b = append(b, b[s:s+r.IntN(50)]...)
			}
		default:
			for range r.IntN(3000) {
				b = append(b, byte(r.Uint32()))
			}
		}
	}
	return b[:n]
}

// TestCompressorChunks: each compressor's output does not depend on how the
// bytes are cut into Writes (compressTo writes a spilled output a chunk at a
// time, the in-memory output of old in one Write): one Write, random
// chunks, and compressChunk's chunks give the same bytes, for every kind
// pk canon writes.
func TestCompressorChunks(t *testing.T) {
	n := 3<<20 + 12345
	if testing.Short() {
		n = 1<<20 + 777
	}
	data := chunkData(n)
	r := rand.New(rand.NewPCG(3, 4))
	for kind := range writable {
		if kind == "" {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			one, err := compress(kind, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, max := range []int{1, 100, 70000, compressChunk} {
				var buf bytes.Buffer
				w, err := newCompressor(kind, &buf)
				if err != nil {
					t.Fatal(err)
				}
				for b := data; len(b) > 0; {
					k := min(len(b), 1+r.IntN(max))
					if max == compressChunk {
						k = min(len(b), compressChunk)
					}
					if max == 1 && len(b) > 64<<10 {
						k = 1 + r.IntN(64<<10) // (byte by byte for the start only)
					}
					if _, err := w.Write(b[:k]); err != nil {
						t.Fatal(err)
					}
					b = b[k:]
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), one) {
					t.Fatalf("%s: writes of up to %d bytes give %d bytes, one write %d", kind, max, buf.Len(), len(one))
				}
			}
		})
	}
}

// TestCompressedSpilled: a compressed pickle file's output is compressed from
// the spilled output into a file of its own (Result.spool, compressTo), not
// held whole, and is the bytes compress gives the bare output in one Write.
func TestCompressedSpilled(t *testing.T) {
	defer func(n int) { spillAt = n }(spillAt)
	spillAt = 64
	bare := filepath.Join(t.TempDir(), "l.pkl")
	// a canonical list of strs at protocol 4 (pk canon writes it back)
	var pk bytes.Buffer
	pk.WriteString("\x80\x04\x95")
	body := []byte{']', 0x94, '('}
	for i := range 3000 {
		s := []byte{'x', byte('a' + i%26), byte('a' + i/26%26), byte('a' + i/676%26)}
		body = append(body, 0x8c, byte(len(s)))
		body = append(body, s...)
		body = append(body, 0x94)
		if i%1000 == 999 {
			body = append(body, 'e', '(')
		}
	}
	body = body[:len(body)-1]
	body = append(body, '.')
	os.WriteFile(bare, body, 0o644)
	want, err := File(bare, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	want.WriteTo(&plain)
	want.Close()
	gz := bare + ".gz"
	f, _ := os.Create(gz)
	zw := gzip.NewWriter(f)
	zw.Write(plain.Bytes())
	zw.Close()
	f.Close()
	zf := zFollowed
	res, err := File(gz, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if zFollowed != zf+1 {
		t.Errorf("the output was not compressed beside its writing")
	}
	if res.Data != nil || res.spool == "" {
		t.Fatalf("the output of a compressed file is held in memory (%d bytes), not spooled", len(res.Data))
	}
	var got bytes.Buffer
	res.WriteTo(&got)
	exp, _ := compress("gzip", plain.Bytes())
	if !bytes.Equal(got.Bytes(), exp) {
		t.Fatalf("compressed output differs: %d bytes, want %d", got.Len(), len(exp))
	}
	if res.Format != "gzip+pickle" {
		t.Fatalf("format %q", res.Format)
	}
	r, _, finish, err := input.OpenDecompressed(gz, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := io.ReadAll(r)
	finish()
	if !bytes.Equal(in, plain.Bytes()) {
		t.Fatal("the gzip file does not hold the output")
	}
}

// TestZFollow: every compressed corpus file, its output spilled past 64
// bytes (so that the compressor follows nearly every output's file), gives
// the output and error it gives with the output compressed once complete.
func TestZFollow(t *testing.T) {
	defer func(n int) { spillAt = n }(spillAt)
	spillAt = 64
	n, followed := 0, zFollowed
	for _, f := range corpusFiles(t) {
		if kind, _ := input.PeekFile(f); kind == "" {
			continue
		}
		n++
		noZFollow = true
		want, werr := File(f, Options{}, false)
		noZFollow = false
		got, gerr := File(f, Options{}, false)
		var a, b bytes.Buffer
		if werr == nil {
			want.WriteTo(&a)
			want.Close()
		}
		if gerr == nil {
			got.WriteTo(&b)
			got.Close()
		}
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: compressed beside the writing: %d bytes, %v; after it: %d bytes, %v", f, b.Len(), gerr, a.Len(), werr)
		}
	}
	if zFollowed == followed {
		t.Error("no output was compressed beside its writing")
	}
	t.Logf("%d compressed files, %d outputs compressed beside their writing", n, zFollowed-followed)
}

// TestCompressedSettled: a compressed bare pickle with no payload pk hash
// streams (1 MiB or more), in the input or in the output, is written
// without pk hash's reads of the input and of the compressed output (the
// check of the bare output settled them, compressOut); a payload of 1 MiB
// or more in the input (even one popped, which the output does not hold),
// or one that only the output holds (bytes of 0.6 MB at protocol 2:
// `_codecs.encode` of a str of 1.2 MB of UTF-8), brings them back. Every
// output has its input's pk hash, settled or checked, and is the same
// either way (noSettle).
func TestCompressedSettled(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		return testfile.WriteCompressed(t, "gzip", filepath.Join(dir, name), data)
	}
	// bytes of n bytes of 0xe9 at protocol 3 (BINBYTES), then STOP
	binbytes := func(n int) []byte {
		b := []byte{0x80, 3, 'B', byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
		b = append(b, bytes.Repeat([]byte{0xe9}, n)...)
		return append(b, '.')
	}
	streams := bytes.Repeat([]byte("\x80\x04N.\x80\x04K\x07."), 500)
	// a payload of 1.2 MB popped: none in the output, one in the input
	popped := append(binbytes(1200 << 10)[:7+1200<<10], '0', 'N', '.')
	cases := []struct {
		name    string
		path    string
		opt     Options
		checked bool
	}{
		{"streams", write("streams.pkl.gz", streams), Options{}, false},
		{"small bytes", write("small.pkl.gz", binbytes(600<<10)), Options{Protocol: 4}, false},
		{"small bytes at protocol 2", write("small2.pkl.gz", binbytes(600<<10)), Options{Protocol: 2}, true},
		{"long bytes", write("long.pkl.gz", binbytes(1200<<10)), Options{Protocol: 4}, true},
		{"long bytes popped", write("popped.pkl.gz", popped), Options{Protocol: 4}, true},
		{"long payload, reread", "../../testdata/reread/array_p2.pkl.gz", Options{Protocol: 4}, true},
	}
	for _, c := range cases {
		before := compressChecks.Load()
		res, err := File(c.path, c.opt, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got bytes.Buffer
		res.WriteTo(&got)
		res.Close()
		if checked := compressChecks.Load() > before; checked != c.checked {
			t.Errorf("%s: output checked as pk hash reads it: %v, want %v", c.name, checked, c.checked)
		}
		out := filepath.Join(dir, "out.pkl.gz")
		os.WriteFile(out, got.Bytes(), 0o644)
		if a, b := digest(t, c.path, c.opt), digest(t, out, c.opt); a != b {
			t.Errorf("%s: output hashes %s, input %s", c.name, b, a)
		}
		noSettle = true
		res, err = File(c.path, c.opt, false)
		noSettle = false
		if err != nil {
			t.Fatalf("%s, every output checked: %v", c.name, err)
		}
		var again bytes.Buffer
		res.WriteTo(&again)
		res.Close()
		if !bytes.Equal(got.Bytes(), again.Bytes()) {
			t.Errorf("%s: another output when every output is checked", c.name)
		}
	}
}
