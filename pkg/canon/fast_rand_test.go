package canon

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// randValue writes a random plain-data value (nested lists, dicts, tuples,
// sets, frozensets, objects made by NEWOBJ with a BUILD state) of at most
// depth levels: the shapes the streaming path seals.
func randValue(r *rand.Rand, a *asm, depth int) {
	k := r.Intn(10)
	if depth <= 0 {
		k = r.Intn(3)
	}
	switch k {
	case 0:
		a.op('K', byte(r.Intn(256)))
	case 1:
		a.str(fmt.Sprintf("s%d", r.Intn(50)))
	case 2:
		a.binint(int32(r.Intn(1 << 20)))
	case 3: // list: EMPTY_LIST + batches
		a.op(']')
		for b := r.Intn(3); b > 0; b-- {
			a.mark()
			for n := r.Intn(4); n > 0; n-- {
				randValue(r, a, depth-1)
			}
			a.op('e')
		}
	case 4: // list by MARK ... LIST
		a.mark()
		for n := r.Intn(4); n > 0; n-- {
			randValue(r, a, depth-1)
		}
		a.op('l')
	case 5: // dict: str keys, random values, SETITEMS batches
		a.op('}')
		for b := r.Intn(3); b > 0; b-- {
			a.mark()
			for n := r.Intn(4); n > 0; n-- {
				a.str(fmt.Sprintf("k%d", r.Intn(1000)))
				randValue(r, a, depth-1)
			}
			a.op('u')
		}
	case 6: // tuple
		a.mark()
		for n := r.Intn(4); n > 0; n-- {
			randValue(r, a, depth-1)
		}
		a.op('t')
	case 7: // set of ints
		a.op(0x8f).mark()
		for n := r.Intn(5); n > 0; n-- {
			a.binint(int32(r.Intn(100)))
		}
		a.op(0x90)
	case 8: // frozenset of strs
		a.mark()
		for n := r.Intn(4); n > 0; n-- {
			a.str(fmt.Sprintf("f%d", r.Intn(100)))
		}
		a.op(0x91)
	case 9: // C.__new__(C, *args) with a BUILD of a dict state
		a.global("__main__", "C").mark()
		for n := r.Intn(3); n > 0; n-- {
			randValue(r, a, depth-1)
		}
		a.op('t', 0x81)
		if r.Intn(2) == 0 {
			a.op('}').mark()
			for n := r.Intn(4); n > 0; n-- {
				a.str(fmt.Sprintf("a%d", r.Intn(20)))
				randValue(r, a, depth-1)
			}
			a.op('u', 'b')
		}
	}
}

// The streaming path's records (sealed containers whose bytes do not move)
// give the graph path's digest on random nested plain data, results of
// every kind, in every option set that changes the order.
func TestFastRandomNesting(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	taken := 0
	const n = 400
	for i := 0; i < n; i++ {
		a := p4()
		randValue(r, a, 2+r.Intn(6))
		b := a.stop()
		p := filepath.Join(dir, fmt.Sprintf("r%d.pkl", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{}, {KeepDictOrder: true}} {
			fast, ok := fastHashFile(p, opt)
			if !ok {
				continue
			}
			taken++
			slow, err := slowHash(t, p, opt)
			if err != nil {
				t.Fatalf("%d: graph path: %v", i, err)
			}
			if fast.Digest != slow.Digest {
				t.Errorf("%d %s: streaming %s, graph %s\n% x", i, opt.Tag(), fast.Digest, slow.Digest, bytes.TrimSpace(b))
			}
		}
	}
	if taken < n {
		t.Errorf("the streaming path took only %d of %d", taken, 2*n)
	}
}
