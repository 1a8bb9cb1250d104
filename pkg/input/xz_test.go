package input

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/pk-tools/pk/pkg/pickle"
)

// xzFile compresses data as an xz file with the library's writer.
func xzFile(t *testing.T, data []byte, cfg xz.WriterConfig) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := cfg.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// declareDict writes the LZMA2 dictionary code into the first block header
// of an xz file from xzFile (size, flags, filter 0x21, 1, code, ..., CRC32).
func declareDict(t *testing.T, b []byte, code byte) []byte {
	t.Helper()
	b = append([]byte{}, b...)
	size := (int(b[12]) + 1) * 4
	hdr := b[12 : 12+size]
	if hdr[1] != 0 || hdr[2] != 0x21 || hdr[3] != 1 {
		t.Fatalf("unexpected block header % x", hdr)
	}
	hdr[4] = code
	binary.LittleEndian.PutUint32(hdr[size-4:], crc32.ChecksumIEEE(hdr[:size-4]))
	return b
}

func xzDecode(b []byte, reopen bool) ([]byte, *windowed, error) {
	var ro func() io.Reader
	if reopen {
		ro = func() io.Reader { return bytes.NewReader(b) }
	}
	r, done, err := decompressor("xz", bytes.NewReader(b), -1, int64(len(b)), ro)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	out, err := io.ReadAll(r)
	return out, r.(*windowed), err
}

func xzLibrary(b []byte) ([]byte, error) {
	r, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// A block header declaring a huge dictionary over a small pickle costs a
// small window: the 1.5 GiB such a file declared were 1.6 GB of heap.
func TestXZHugeDictionaryHeader(t *testing.T) {
	const pk = "\x80\x02]q\x00(K\x01K\x02e."
	b := declareDict(t, xzFile(t, []byte(pk), xz.WriterConfig{DictCap: 1 << 16}), 37)
	if xzDictSize(37) != 3<<29 {
		t.Fatalf("code 37 is %d bytes", xzDictSize(37))
	}
	for _, reopen := range []bool{false, true} {
		var out []byte
		var err error
		n := heapAllocs(func() { out, _, err = xzDecode(b, reopen) })
		t.Logf("%d-byte file declaring 1.5 GiB (reopen %v): %d bytes allocated", len(b), reopen, n)
		if err != nil || string(out) != pk {
			t.Fatalf("got %q, %v", out, err)
		}
		if n > 8<<20 {
			t.Errorf("%d bytes allocated for a %d-byte file (want < 8 MiB)", n, len(b))
		}
	}
	p := writeTemp(t, "huge.pkl.xz", b)
	n := heapAllocs(func() {
		if _, err := Open(p, pickle.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Open: %d bytes allocated", n)
	if n > 16<<20 {
		t.Errorf("Open allocated %d bytes for a %d-byte file (want < 16 MiB)", n, len(b))
	}
	// noise behind such a header fails without the declared dictionary
	noise := append([]byte{}, b...)
	for i := 12 + (int(b[12])+1)*4; i < len(noise)-40; i++ {
		noise[i] = byte(i * 7)
	}
	var err error
	n = heapAllocs(func() { _, _, err = xzDecode(noise, false) })
	if err == nil || n > 8<<20 {
		t.Errorf("noise: %v, %d bytes allocated", err, n)
	}
}

// A block that refers back further than the first window is decoded again
// with a larger one, from the bytes kept or read again, to the same bytes.
func TestXZWindowGrows(t *testing.T) {
	noise := make([]byte, 64<<10)
	rand.New(rand.NewSource(1)).Read(noise)
	data := append(append(append([]byte{}, noise...), make([]byte, 12<<20)...), noise...)
	b := xzFile(t, data, xz.WriterConfig{DictCap: 16 << 20})
	for _, reopen := range []bool{false, true} {
		out, z, err := xzDecode(b, reopen)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("decoded %d bytes, not the %d written", len(out), len(data))
		}
		t.Logf("reopen %v: %d compressed bytes, %d attempts, last window %d, %d bytes kept", reopen, len(b), z.attempts, z.window, len(z.seen))
		if z.attempts < 2 {
			t.Errorf("one attempt (window %d): the test stream does not need a larger window", z.window)
		}
		if reopen && len(z.seen) != 0 {
			t.Errorf("kept %d bytes though the file can be read again", len(z.seen))
		}
	}
}

// Every layout of the format decodes to what the library alone gives: one
// block or many, every check, streams concatenated with padding between.
func TestXZLayouts(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Intn(8)) + 'a'
	}
	var files [][]byte
	for _, check := range []byte{xz.None, xz.CRC32, xz.CRC64, xz.SHA256} {
		for _, block := range []int64{0, 128 << 10} {
			files = append(files, xzFile(t, data, xz.WriterConfig{CheckSum: check, NoCheckSum: check == xz.None, BlockSize: block}))
		}
	}
	two := append(append(append([]byte{}, files[1]...), 0, 0, 0, 0), files[2]...)
	files = append(files, two, xzFile(t, nil, xz.WriterConfig{}))
	for _, p := range []string{"../../testdata/inputs/plain.pkl.xz", "../../testdata/inputs/joblib_a_xz.joblib.xz", "../../testdata/fixtures/joblib/dict_xz_jl120.joblib.xz"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for i, b := range files {
		want, err := xzLibrary(b)
		if err != nil {
			t.Fatalf("file %d: the library: %v", i, err)
		}
		for _, reopen := range []bool{false, true} {
			got, _, err := xzDecode(b, reopen)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("file %d (reopen %v): %d bytes, %v; the library alone gives %d bytes", i, reopen, len(got), err, len(want))
			}
		}
	}
}

// Damaged files: where the library alone fails, so does the windowed decoder;
// where it decodes, the windowed one gives the same bytes, or an error: the
// library takes some damaged files without one (a truncated footer, a chunk's
// packed size changed), which xzHeaders, following the chunk headers, finds
// cut short.
func TestXZDamaged(t *testing.T) {
	src := bytes.Repeat([]byte("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e."), 200)
	files := [][]byte{
		xzFile(t, src, xz.WriterConfig{}),
		xzFile(t, src, xz.WriterConfig{BlockSize: 1024, CheckSum: xz.CRC32}),
	}
	rng := rand.New(rand.NewSource(3))
	stricter := 0
	for k := 0; k < 600; k++ {
		b := append([]byte{}, files[k%2]...)
		switch k % 3 {
		case 0:
			b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
		case 1:
			b = b[:rng.Intn(len(b))]
		case 2:
			i := rng.Intn(len(b))
			b = append(b[:i:i], append([]byte{byte(rng.Intn(256))}, b[i:]...)...)
		}
		want, werr := xzLibrary(b)
		got, _, gerr := xzDecode(b, k%4 == 0)
		switch {
		case werr != nil && gerr == nil:
			t.Errorf("mutation %d: the library fails (%v), windowed gives %d bytes", k, werr, len(got))
		case gerr == nil && !bytes.Equal(got, want):
			t.Errorf("mutation %d: the library gives %d bytes, windowed %d other ones", k, len(want), len(got))
		case werr == nil && gerr != nil:
			stricter++
		}
	}
	t.Logf("600 damaged files: %d taken by the library alone and refused here", stricter)
}
