package input

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
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
	for i, cfg := range []xz.WriterConfig{{DictCap: 1 << 16}, {DictCap: 1 << 16, BlockSize: 32 << 10, CheckSum: xz.CRC32}} {
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

// TestEachStreamDecompressed: a compressed bare pickle file is read stream
// by stream as the bare file is (streams, offsets, trailing bytes), its
// compression named; a corrupt trailer (the gzip CRC) or a truncated file
// gives ok false (Open then says what is wrong), and EachStream does not
// take a compressed file.
func TestEachStreamDecompressed(t *testing.T) {
	dir := t.TempDir()
	stream := []byte("\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e.")
	data := append(bytes.Repeat(stream, 3), "tail"...)
	bare := filepath.Join(dir, "p.pkl")
	os.WriteFile(bare, data, 0o644)
	var offs []int64
	want, _, ok := EachStreamDecompressed(bare, pickle.Options{}, Options{}, func(st *pickle.Stream) error {
		offs = append(offs, st.Offset)
		return nil
	})
	if !ok || len(offs) != 3 || want.Trailing == nil {
		t.Fatalf("the bare file: ok %v, %d streams", ok, len(offs))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	p := filepath.Join(dir, "p.pkl.gz")
	os.WriteFile(p, gz.Bytes(), 0o644)
	var got []int64
	f, kind, ok := EachStreamDecompressed(p, pickle.Options{}, Options{}, func(st *pickle.Stream) error {
		got = append(got, st.Offset)
		return nil
	})
	if !ok || kind != "gzip" || !slices.Equal(got, offs) || f.Trailing == nil ||
		f.Trailing.Offset != want.Trailing.Offset || f.Trailing.Len != want.Trailing.Len {
		t.Fatalf("gzip: ok %v, %q, streams at %v (want %v)", ok, kind, got, offs)
	}
	if _, ok := EachStream(p, pickle.Options{}, func(*pickle.Stream) error { return nil }); ok {
		t.Error("EachStream took a compressed file")
	}
	bad := bytes.Clone(gz.Bytes())
	bad[len(bad)-5] ^= 1 // (the CRC)
	os.WriteFile(p, bad, 0o644)
	if _, _, ok := EachStreamDecompressed(p, pickle.Options{}, Options{}, func(*pickle.Stream) error { return nil }); ok {
		t.Error("a bad CRC is taken")
	}
	os.WriteFile(p, gz.Bytes()[:len(gz.Bytes())/2], 0o644)
	if _, _, ok := EachStreamDecompressed(p, pickle.Options{}, Options{}, func(*pickle.Stream) error { return nil }); ok {
		t.Error("a truncated file is taken")
	}
}
