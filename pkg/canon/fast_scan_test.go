package canon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// memoRows writes, after the header head, a list of n dicts whose "name"
// value each row memoises (the put opcode, e.g. MEMOIZE or BINPUT with its
// index) and the next row reads back (get, with the index) while every
// third row's entry is never read: GETs at every offset there is, so each
// frame's, window's and buffer's edge falls on or next to one.
func memoRows(head []byte, n int, put func(b []byte, i int) []byte, get func(b []byte, i int) []byte) []byte {
	b := append([]byte(nil), head...)
	b = append(b, ']')
	b = put(b, 0)
	b = append(b, '(')
	idx := 1
	for i := range n {
		b = append(b, '}')
		b = put(b, idx)
		idx++
		b = append(b, '(', 0x8c, 2, 'i', 'd', 'J')
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		b = append(b, 0x8c, 4, 'n', 'a', 'm', 'e')
		if i%3 == 1 {
			b = get(b, idx-2) // the entry before this row's dict
		} else {
			s := fmt.Sprintf("user%07d", i)
			b = append(b, 0x8c, byte(len(s)))
			b = append(b, s...)
			b = put(b, idx)
			idx++
		}
		b = append(b, 'u')
		if i%100 == 99 {
			b = append(b, 'e', '(')
		}
	}
	return append(b, 'e', '.')
}

// framed puts the opcodes of a protocol-4 stream p (PROTO first, no
// frames) into FRAMEs of about size bytes, cut at opcode boundaries, as
// pickle.dump does at 64 KiB.
func framed(t testing.TB, p []byte, size int) []byte {
	rd := pickle.NewReader(bytes.NewReader(p), int64(len(p)), "t")
	var cuts []int64
	var o pickle.Op
	last := int64(2)
	for {
		if err := rd.NextInto(&o); err != nil {
			t.Fatal(err)
		}
		if o.Offset-last >= int64(size) {
			cuts = append(cuts, o.Offset)
			last = o.Offset
		}
		if o.Code == pickle.STOP {
			break
		}
	}
	cuts = append(cuts, int64(len(p)))
	out := append([]byte(nil), p[:2]...)
	from := int64(2)
	for _, c := range cuts {
		out = append(out, 0x95)
		out = binary.LittleEndian.AppendUint64(out, uint64(c-from))
		out = append(out, p[from:c]...)
		from = c
	}
	return out
}

// getsOf is the memo indices the GETs of p read, by the reader's Next.
func getsOf(t *testing.T, p []byte) map[int64]bool {
	rd := pickle.NewReader(bytes.NewReader(p), int64(len(p)), "t")
	gets := map[int64]bool{}
	var o pickle.Op
	for o.Code != pickle.STOP {
		if err := rd.NextInto(&o); err != nil {
			t.Fatal(err)
		}
		switch o.Code {
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			gets[o.Int] = true
		}
	}
	return gets
}

// TestFastScanMemoReads: pass 1 (decoding from the reader's window, and
// reading what the window does not hold with Next) marks live exactly the
// memo indices some GET reads - a GET at a frame's edge, across the read
// buffer's, in protocol 2 without frames - and the digest is the graph
// path's.
func TestFastScanMemoReads(t *testing.T) {
	memoize := func(b []byte, _ int) []byte { return append(b, 0x94) }
	longGet := func(b []byte, i int) []byte { return binary.LittleEndian.AppendUint32(append(b, 'j'), uint32(i)) }
	binput := func(b []byte, i int) []byte {
		if i < 256 {
			return append(b, 'q', byte(i))
		}
		return binary.LittleEndian.AppendUint32(append(b, 'r'), uint32(i))
	}
	binget := func(b []byte, i int) []byte {
		if i < 256 {
			return append(b, 'h', byte(i))
		}
		return longGet(b, i)
	}
	const n = 30000 // about 1 MB: several read buffers
	p4 := memoRows([]byte("\x80\x04"), n, memoize, longGet)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"proto4", p4},
		{"framed64k", framed(t, p4, 64<<10)},
		{"framed1k", framed(t, p4, 1000)},      // frames inside a window
		{"framed300k", framed(t, p4, 300<<10)}, // frames beyond the read buffer
		{"proto2", memoRows([]byte("\x80\x02"), n, binput, binget)},
	} {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, _, err := fastScan(p)
		if err != nil {
			t.Fatalf("%s: pass 1 gave up: %v", c.name, err)
		}
		gets := getsOf(t, c.data)
		for i := int64(0); i < 3*n; i++ {
			if res.isLive(i) != gets[i] {
				t.Fatalf("%s: memo index %d live %v, read by a GET %v", c.name, i, res.isLive(i), gets[i])
			}
		}
		if res.rootList != 0 || res.rootLen != n {
			t.Errorf("%s: result list %d of %d items, want 0 of %d", c.name, res.rootList, res.rootLen, n)
		}
		slow, err := slowHash(t, p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fast, ok := fastHashFile(p, Options{}); !ok || fast.Digest != slow.Digest {
			t.Errorf("%s: fast %v %v, graph %s", c.name, fast, ok, slow.Digest)
		}
	}
}
