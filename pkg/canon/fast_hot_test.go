package canon

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// hotRows is a protocol-4 list of n dicts that uses every opcode runHot
// takes inline, each at many offsets: BININT1, BININT2 and BININT
// (negative too), BINFLOAT, NONE, short str (ASCII, other UTF-8, longer
// than InlineMax), BINGET and LONG_BINGET of live MEMOIZE entries, MEMOIZE
// of entries no GET reads, MARK; and some it leaves to step (NEWTRUE,
// TUPLE2, EMPTY_DICT, SETITEMS, APPENDS). surrogate: every 50th row holds a
// str with a surrogate (UTF-8 only with surrogates passed), which the
// reader decodes itself.
func hotRows(n int, surrogate bool) []byte {
	b := []byte("\x80\x04]\x94(")
	memo := 1
	memoize := func() int { b = append(b, 0x94); memo++; return memo - 1 }
	str := func(s string) { b = append(b, 0x8c, byte(len(s))); b = append(b, s...) }
	get := func(i int) {
		if i < 256 {
			b = append(b, 'h', byte(i))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 'j'), uint32(i))
		}
	}
	long := fmt.Sprintf("%0100d", 7)
	var keys [4]int
	var names []int // memo indices of the strs of rows below 300
	for i := range n {
		b = append(b, '}')
		memoize()
		b = append(b, '(')
		for k, key := range []string{"id", "v", "name", "t"} {
			if i == 0 {
				str(key)
				keys[k] = memoize()
			} else {
				get(keys[k])
			}
			switch k {
			case 0:
				switch i % 3 {
				case 0:
					b = append(b, 'K', byte(i))
				case 1:
					b = binary.LittleEndian.AppendUint16(append(b, 'M'), uint16(i))
				default:
					b = binary.LittleEndian.AppendUint32(append(b, 'J'), uint32(int32(-i*1000)))
				}
			case 1:
				switch i % 4 {
				case 0:
					b = binary.BigEndian.AppendUint64(append(b, 'G'), math.Float64bits(float64(i)*0.5))
				case 1:
					b = append(b, 'N')
				case 2:
					b = append(b, 0x88)
				default:
					str(long)
				}
			case 2:
				switch {
				case surrogate && i%50 == 7:
					str("a\xed\xa0\x80b")
				case i%5 == 0:
					str(fmt.Sprintf("é%06d", i))
					memoize() // never read
				case i%5 == 1 && i >= 300:
					get(names[i%len(names)]) // a str of an earlier row
				default:
					str(fmt.Sprintf("n%06d", i))
					if i < 300 {
						names = append(names, memoize())
					}
				}
			case 3:
				b = append(b, 'K', byte(i%7), 'K', byte(i%11), 0x86)
			}
		}
		b = append(b, 'u')
		if i%100 == 99 {
			b = append(b, 'e', '(')
		}
	}
	return append(b, 'e', '.')
}

// TestFastHot: pk hash's pass 2 decoding in the reader's window (runHot)
// gives the digest of the batches (noHot) and of the graph path, framed
// or not, with frames inside a window and past the read buffer, with
// strs the reader must decode itself; and on a table it leaves to the
// batches only the opcodes the window does not hold whole.
func TestFastHot(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	plain := hotRows(n, false)
	for _, c := range []struct {
		name string
		data []byte
		most bool // runHot takes nearly every opcode
	}{
		{"proto4", plain, true},
		{"framed64k", framed(t, plain, 64<<10), true},
		{"framed1k", framed(t, plain, 1000), true},
		{"framed300k", framed(t, plain, 300<<10), true},
		{"surrogates", framed(t, hotRows(n, true), 64<<10), false},
	} {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		batched := 0
		onBatch = func(k int) { batched += k }
		fast, ok := fastHashFile(p, Options{})
		onBatch = nil
		if !ok {
			t.Fatalf("%s: the fast path gave up", c.name)
		}
		noHot = true
		off, ok2 := fastHashFile(p, Options{})
		noHot = false
		slow, err := slowHash(t, p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !ok2 || off.Digest != fast.Digest || slow.Digest != fast.Digest {
			t.Fatalf("%s: in place %s, batches %v %v, graph %s", c.name, fast.Digest, off, ok2, slow.Digest)
		}
		// (about 20 opcodes a row: a few per frame or read buffer's edge
		// go to the batches)
		if c.most && batched > n/20 {
			t.Errorf("%s: %d opcodes decoded into batches, want few of %d", c.name, batched, 20*n)
		}
	}
}
