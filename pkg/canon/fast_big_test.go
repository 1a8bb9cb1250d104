package canon

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// pw writes protocol-4 opcodes (no frames) for tests.
type pw struct {
	b []byte
	n int // memo entries so far
}

func (w *pw) op(c ...byte) *pw { w.b = append(w.b, c...); return w }
func (w *pw) str(s string) *pw {
	if len(s) < 256 {
		w.b = append(w.b, 0x8c, byte(len(s)))
	} else {
		w.b = append(w.b, 'X')
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(s)))
	}
	w.b = append(w.b, s...)
	return w
}
func (w *pw) int(i int) *pw {
	w.b = append(w.b, 'J')
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(int32(i)))
	return w
}
func (w *pw) memo() *pw { w.n++; return w.op(0x94) }

// rows writes a list of n small dicts (their keys memoised once and read
// back with GET), filled by APPENDS batches of 1000.
func (w *pw) rows(n int) *pw {
	w.op(']').memo().op('(')
	var id, name int
	for i := 0; i < n; i++ {
		if i > 0 && i%1000 == 0 {
			w.op('e', '(')
		}
		w.op('}').memo().op('(')
		if i == 0 {
			id = w.n
			w.str("id").memo()
		} else {
			w.op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(id))
		}
		w.int(i)
		if i == 0 {
			name = w.n
			w.str("name").memo()
		} else {
			w.op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(name))
		}
		w.str(fmt.Sprintf("user%07d", i))
		w.op('u')
	}
	return w.op('e')
}

// TestFastBigValues: containers of more than a megabyte of encoding below
// the result (sealed in place) and results that are not lists (written
// straight to the hash) hash as on the graph path.
func TestFastBigValues(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]func() []byte{
		"dict-root": func() []byte {
			w := (&pw{}).op(0x80, 4).op('}').memo().op('(')
			w.str("rows").memo()
			w.rows(60000)
			w.str("meta").op('}', 'u')
			return w.op('.').b
		},
		"tuple-root": func() []byte {
			w := (&pw{}).op(0x80, 4)
			w.rows(40000)
			w.op('}').str("z").int(1).op('s').str("a").op(']').op('s')
			return w.op(0x86, '.').b
		},
		"call-root": func() []byte {
			w := (&pw{}).op(0x80, 4).str("mod").str("Cls").op(0x93).memo().op(')', 0x81).memo()
			w.op('}', '(').str("b").op('(')
			w.rows(30000)
			w.op('l').str("a").int(7).op('u')
			return w.op('b', '.').b
		},
	}
	for name, make := range cases {
		p := filepath.Join(dir, name+".pkl")
		if err := os.WriteFile(p, make(), 0o644); err != nil {
			t.Fatal(err)
		}
		slow, err := slowHash(t, p, Options{})
		if err != nil {
			t.Errorf("%s: graph path: %v", name, err)
			continue
		}
		fast, ok := fastHashFile(p, Options{})
		if !ok {
			t.Errorf("%s: the fast path gave up", name)
			continue
		}
		if fast.Digest != slow.Digest {
			t.Errorf("%s: fast %s, graph %s", name, fast.Digest, slow.Digest)
		}
	}
}
