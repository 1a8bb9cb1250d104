package input

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz"
)

// TestPeekFile: the compression and decompressed size PeekFile gives
// without decompressing: exact for a plain, gzip and xz file (one block
// and several), eight times the file for another compression.
func TestPeekFile(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e."), 5000)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	cases := []struct {
		path string
		kind string
		size int64
	}{
		{write("p.pkl", data), "", int64(len(data))},
		{write("p.pkl.gz", gz.Bytes()), "gzip", int64(len(data))},
	}
	for i, cfg := range []xz.WriterConfig{{}, {BlockSize: 1024, CheckSum: xz.CRC32}} {
		var buf bytes.Buffer
		w, _ := cfg.NewWriter(&buf)
		w.Write(data)
		w.Close()
		cases = append(cases, struct {
			path string
			kind string
			size int64
		}{write(filepath.Base(t.Name())+string(rune('a'+i))+".xz", buf.Bytes()), "xz", int64(len(data))})
	}
	lz, _ := os.ReadFile(cases[1].path)
	lz[0] = 0x04 // (not gzip any more: an lz4 magic, its size guessed)
	lz = append([]byte{0x04, 0x22, 0x4d, 0x18}, lz...)
	cases = append(cases, struct {
		path string
		kind string
		size int64
	}{write("p.lz4", lz), "lz4", 8 * int64(len(lz))})
	for _, c := range cases {
		kind, size := PeekFile(c.path)
		if kind != c.kind || size != c.size {
			t.Errorf("%s: %q, %d bytes; want %q, %d", filepath.Base(c.path), kind, size, c.kind, c.size)
		}
	}
	if _, size := PeekFile(filepath.Join(dir, "none")); size != -1 {
		t.Errorf("a missing file: %d bytes", size)
	}
}
