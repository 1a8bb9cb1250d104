package input

import (
	"bytes"
	"io"
	"testing"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// FuzzDecompress: the windowed xz and LZMA-alone decoders (xz.go, lzma.go)
// never panic, and what they decode without an error is what the library
// alone decodes from the same bytes (compared when every dictionary
// declared is at most 64 MiB, which the library would allocate).
func FuzzDecompress(f *testing.F) {
	data := bytes.Repeat([]byte("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e."), 300)
	for _, cfg := range []xz.WriterConfig{{}, {BlockSize: 1024, CheckSum: xz.CRC32}, {CheckSum: xz.SHA256}, {NoCheckSum: true}} {
		var buf bytes.Buffer
		w, _ := cfg.NewWriter(&buf)
		w.Write(data)
		w.Close()
		f.Add(buf.Bytes())
	}
	var buf bytes.Buffer
	w, _ := lzma.WriterConfig{DictCap: 1 << 16, Size: -1, EOSMarker: true}.NewWriter(&buf)
	w.Write(data)
	w.Close()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		kind := sniffCompression(b[:min(len(b), 16)])
		if kind != "xz" && kind != "lzma" {
			return
		}
		r, done, err := decompressor(kind, bytes.NewReader(b), 64<<20, int64(len(b)), func() io.Reader { return bytes.NewReader(b) })
		if err != nil {
			return
		}
		got, err := io.ReadAll(io.LimitReader(r, 64<<20))
		done()
		if err != nil {
			return
		}
		var z *windowed
		switch d := r.(type) {
		case *windowed:
			z = d
		case *lzmaAlone:
			z = &d.windowed
		}
		if z.need() > 64<<20 {
			return
		}
		var lib io.Reader
		if kind == "xz" {
			x, err := xz.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("windowed decoded %d bytes, the library refuses the header: %v", len(got), err)
			}
			lib = x
		} else {
			x, err := lzma.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("windowed decoded %d bytes, the library refuses the header: %v", len(got), err)
			}
			lib = x
		}
		want, err := io.ReadAll(io.LimitReader(lib, 64<<20))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("windowed decoded %d bytes; the library %d bytes, %v", len(got), len(want), err)
		}
	})
}
