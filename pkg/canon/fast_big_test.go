package canon

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
func (w *pw) rows(n int) *pw { return w.rowsKeys(n, -1, -1) }

// rowsKeys is rows whose key strings are the memo entries id and name
// (-1: memoised by the first row).
func (w *pw) rowsKeys(n, id, name int) *pw {
	w.op(']').memo().op('(')
	for i := 0; i < n; i++ {
		if i > 0 && i%1000 == 0 {
			w.op('e', '(')
		}
		w.op('}').memo().op('(')
		if id < 0 {
			id = w.n
			w.str("id").memo()
		} else {
			w.op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(id))
		}
		w.int(i)
		if name < 0 {
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
		"dict-root-tables": func() []byte {
			// two tables as values, the second reading strings the first
			// memoised (GET across the dropped ranges), a scalar between,
			// a table that is memoised itself, and a list of lists
			w := (&pw{}).op(0x80, 4).op('}').memo().op('(')
			w.str("zeta").memo()
			w.rows(3000)
			w.str("k").int(5)
			w.str("alpha").memo()
			w.rowsKeys(2000, 4, 5) // zeta's first row memoised "id" and "name" as 4 and 5
			w.str("nested").op(']').memo().op('(', ']', 'J', 1, 0, 0, 0, 'a', ']', 'e')
			w.op('u')
			w.str("tail").op(']').memo().op('s')
			return w.op('.').b
		},
		"call-root-state": func() []byte {
			// an object whose BUILD state holds two tables (dropped and
			// read again inside the call's encoding) and a scalar
			w := (&pw{}).op(0x80, 4).str("mod").memo().str("Dataset").memo().op(0x93).memo().op(')', 0x81).memo()
			w.op('}').memo().op('(')
			w.str("train").memo()
			w.rows(4000)
			w.str("n").int(2)
			w.str("test").memo()
			w.rowsKeys(1000, 8, 9) // "id" and "name" of train's first row
			w.op('u', 'b')
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
		for _, opt := range []Options{{}, {KeepDictOrder: true}} {
			slow, err := slowHash(t, p, opt)
			if err != nil {
				t.Errorf("%s: graph path: %v", name, err)
				continue
			}
			fast, ok := fastHashFile(p, opt)
			if !ok {
				t.Errorf("%s: the fast path gave up", name)
				continue
			}
			if fast.Digest != slow.Digest {
				t.Errorf("%s %+v: fast %s, graph %s", name, opt, fast.Digest, slow.Digest)
			}
		}
	}
}

// TestSharedLargeValues: a long string read back 20,000 times through the
// memo is hashed once, on both paths; a 4 MiB int read back 2,000 times (8
// GB of encoding, as the form encodes numbers by value) is refused with an
// error, not hashed for minutes, and the fast path leaves it to the graph
// path rather than filling its arena.
func TestSharedLargeValues(t *testing.T) {
	dir := t.TempDir()
	str := (&pw{}).op(0x80, 4, ']').memo().op('(').str(string(make([]byte, 1<<20-10))).memo()
	for i := 0; i < 20000; i++ {
		str.op('h', 1)
	}
	str.op('e', '.')
	big := (&pw{}).op(0x80, 4, ']').memo().op('(', 0x8b)
	big.b = binary.LittleEndian.AppendUint32(big.b, 4<<20)
	for i := 0; i < 4<<20; i++ {
		big.b = append(big.b, 1)
	}
	big.memo()
	for i := 0; i < 2000; i++ {
		big.op('h', 1)
	}
	big.op('e', '.')
	ps, pb := filepath.Join(dir, "str.pkl"), filepath.Join(dir, "int.pkl")
	os.WriteFile(ps, str.b, 0o644)
	os.WriteFile(pb, big.b, 0o644)

	start := time.Now()
	slow, err := slowHash(t, ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("shared long string: graph path took %v", el)
	}
	if fast, ok := fastHashFile(ps, Options{}); !ok || fast.Digest != slow.Digest {
		t.Errorf("shared long string: fast path %v %v, graph %s", ok, fast, slow.Digest)
	}

	if _, ok := fastHashFile(pb, Options{}); ok {
		t.Error("shared large int: the fast path took it")
	}
	start = time.Now()
	_, err = slowHash(t, pb, Options{})
	if err == nil || !strings.Contains(err.Error(), "64 times its size") {
		t.Errorf("shared large int: graph path gave %v", err)
	}
	if el := time.Since(start); el > 60*time.Second {
		t.Errorf("shared large int: refused after %v", el)
	}
}

// TestHashStdin: standard input is spooled so that the streaming path takes
// it (same digest as the file), and the graph path reads the spooled bytes
// as stdin when it must (errors name "-").
func TestHashStdin(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pkl")
	w := (&pw{}).op(0x80, 4).rows(3000).op('.')
	os.WriteFile(good, w.b, 0o644)
	bad := filepath.Join(dir, "bad.pkl")
	os.WriteFile(bad, w.b[:len(w.b)-5], 0o644)
	old := os.Stdin
	defer func() { os.Stdin = old }()

	want, err := HashFile(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(good)
	os.Stdin = f
	got, err := HashFile("-", Options{})
	f.Close()
	if err != nil || got.Digest != want.Digest {
		t.Errorf("stdin: %v %v, file %s", got, err, want.Digest)
	}

	f, _ = os.Open(bad)
	os.Stdin = f
	_, err = HashFile("-", Options{})
	f.Close()
	if err == nil || !strings.HasPrefix(err.Error(), "-: offset ") {
		t.Errorf("truncated stdin: %v", err)
	}
}

// TestStripLineno: the same function defined at another line (same file
// name, separate processes; testdata/canon/gen_lineno.py) hashes apart by
// default and equal with --strip lineno, for cloudpickle and dill.
func TestStripLineno(t *testing.T) {
	for _, tag := range []string{"cp", "dill"} {
		a := filepath.Join("..", "..", "testdata", "canon", "lineno_"+tag+"_a.pkl")
		b := filepath.Join("..", "..", "testdata", "canon", "lineno_"+tag+"_b.pkl")
		for _, strip := range []bool{false, true} {
			opt := Options{StripLineno: strip}
			ha, err := HashFile(a, opt)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := HashFile(b, opt)
			if err != nil {
				t.Fatal(err)
			}
			if (ha.Digest == hb.Digest) != strip {
				t.Errorf("%s, strip lineno %v: %s vs %s", tag, strip, ha.Digest, hb.Digest)
			}
			if strip {
				found := false
				for _, n := range ha.Applied {
					found = found || n.Rule == RuleLineno
				}
				if !found {
					t.Errorf("%s: --explain does not list %s: %+v", tag, RuleLineno, ha.Applied)
				}
			}
		}
	}
}
