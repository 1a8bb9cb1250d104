package input

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/ulikunitz/xz/lzma"

	"github.com/pk-tools/pk/pkg/pickle"
)

// heapAllocs returns the bytes f allocates on the heap (cumulative, freed or
// not: what the runtime had to find for it).
func heapAllocs(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	runtime.GC()
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// lzmaAloneFile compresses data as an LZMA-alone stream with a dictionary of
// dict bytes, then writes declared into its header's dictionary size (the
// header's uncompressed size stays all ones: not given).
func lzmaAloneFile(t *testing.T, data []byte, dict int, declared uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := lzma.WriterConfig{DictCap: dict, Size: -1, EOSMarker: true}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.LittleEndian.PutUint32(b[1:5], declared)
	binary.LittleEndian.PutUint64(b[5:13], 1<<64-1)
	return b
}

func decompressAll(t *testing.T, b []byte, limit int64) ([]byte, *lzmaAlone, error) {
	t.Helper()
	r, done, err := decompressor("lzma", bytes.NewReader(b), limit, int64(len(b)), nil)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	out, err := io.ReadAll(r)
	return out, r.(*lzmaAlone), err
}

// A header declaring a huge dictionary over a few bytes costs a small window,
// not the declaration: 17 bytes of noise, and a real pickle's stream.
func TestLzmaHugeDictionaryHeader(t *testing.T) {
	const declared = 221 << 20
	noise := append([]byte{0x5d}, binary.LittleEndian.AppendUint32(nil, declared)...)
	noise = append(noise, bytes.Repeat([]byte{0xff}, 8)...)
	noise = append(noise, 0, 0x41, 0x42, 0x43)
	real := lzmaAloneFile(t, []byte("\x80\x02]q\x00(K\x01K\x02e."), 1<<16, declared)
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{{"noise", noise, false}, {"pickle", real, true}} {
		var out []byte
		var err error
		n := heapAllocs(func() { out, _, err = decompressAll(t, tc.b, 256<<20) })
		t.Logf("%s (%d bytes, declares %d MB): %d bytes allocated, err %v", tc.name, len(tc.b), declared>>20, n, err)
		if n > 4<<20 {
			t.Errorf("%s: %d bytes allocated for a %d-byte stream (want < 4 MiB)", tc.name, n, len(tc.b))
		}
		if tc.ok && (err != nil || string(out) != "\x80\x02]q\x00(K\x01K\x02e.") {
			t.Errorf("%s: got %q, %v", tc.name, out, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: decoded noise without an error", tc.name)
		}
	}
	// the same through Open, with its read-ahead buffers (6 MiB)
	p := writeTemp(t, "huge.pkl.lzma", real)
	n := heapAllocs(func() {
		if _, err := Open(p, pickle.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Open: %d bytes allocated", n)
	if n > 12<<20 {
		t.Errorf("Open allocated %d bytes for a %d-byte file (want < 12 MiB)", n, len(real))
	}
}

// A stream that refers back further than the first window is decoded again
// with a larger one and gives the same bytes: 64 KiB of noise, 12 MiB of
// zeros (a few hundred compressed bytes), the noise again 12 MiB back.
func TestLzmaWindowGrows(t *testing.T) {
	noise := make([]byte, 64<<10)
	rand.New(rand.NewSource(1)).Read(noise)
	data := append(append(append([]byte{}, noise...), make([]byte, 12<<20)...), noise...)
	b := lzmaAloneFile(t, data, 16<<20, 16<<20)
	out, z, err := decompressAll(t, b, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatalf("decoded %d bytes, not the %d written", len(out), len(data))
	}
	t.Logf("%d compressed bytes, %d attempts, last window %d", len(b), z.attempts, z.window)
	if z.attempts < 2 {
		t.Errorf("one attempt (window %d): the test stream does not need a larger window", z.window)
	}
	// the window the bytes need is refused when above the cap, as before
	_, _, err = decompressAll(t, lzmaAloneFile(t, data, 16<<20, 3<<30), -1)
	if err == nil || !strings.Contains(err.Error(), "exceeds the dictionary capacity") {
		t.Errorf("a 3 GiB dictionary: %v", err)
	}
	// a wrong distance within the first window stays an error, in one attempt
	bad := append([]byte{}, b...)
	bad[len(bad)/2] ^= 0x55
	if _, z, err := decompressAll(t, bad, -1); err == nil {
		t.Errorf("a flipped byte decoded without an error")
	} else if z != nil {
		t.Logf("flipped byte: %v (%d attempts)", err, z.attempts)
	}
}

// Real joblib .lzma files decompress to the bytes Python's lzma wrote.
func TestLzmaFixturesSameBytes(t *testing.T) {
	for _, p := range []string{"../../testdata/inputs/plain.pkl.lzma", "../../testdata/inputs/joblib_a_lzma.joblib.lzma", "../../testdata/fixtures/joblib/dict_lzma_jl120.joblib.lzma"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := io.ReadAll(mustLzma(t, b))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := decompressAll(t, b, -1)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; the library alone gives %d bytes", p, len(got), err, len(want))
		}
	}
}

func mustLzma(t *testing.T, b []byte) io.Reader {
	r, err := lzma.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
