package canon

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestFastLazyTuples: the pure tuples of a list result, whose digests the
// hashing goroutine writes (lazySum), hash as on the graph path, and so do
// those read by something else first (settle): a tuple in a tuple, in a
// list, a dict key, a frozenset item, memoised and read back, beside
// containers in the same APPENDS; past the first chunk of bgHash and
// within it, under every algorithm.
func TestFastLazyTuples(t *testing.T) {
	tuples := func(n int) []byte {
		w := (&pw{}).op(0x80, 4).op(']').memo().op('(')
		lastMemo := -1
		for i := 0; i < n; i++ {
			if i > 0 && i%1000 == 0 {
				w.op('e', '(')
			}
			s := fmt.Sprintf("s%07d", i)
			switch {
			case i%7 == 0: // a tuple in a tuple
				w.int(i).int(i + 1).str(s).op(0x86).op(0x86)
			case i%11 == 0: // memoised, read back by the next row
				w.int(i).str(s).op(0x86).memo()
				lastMemo = w.n - 1
			case i%11 == 1 && lastMemo >= 0:
				w.op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(lastMemo))
			case i%13 == 0: // in a list
				w.op(']').int(i).str(s).op(0x86, 'a')
			case i%17 == 0: // a dict key
				w.op('}').int(i).str(s).op(0x86).int(1).op('s')
			case i%19 == 0: // frozenset items
				w.op('(').int(i).str(s).op(0x86).int(i).op(0x85).op(0x91)
			default: // (int, str, float)
				w.int(i).str(s).op('G').b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(float64(i)*0.5))
				w.op(0x87)
			}
		}
		return w.op('e', '.').b
	}
	dir := t.TempDir()
	for _, n := range []int{30, 3000, 40000} {
		p := filepath.Join(dir, fmt.Sprintf("tuples%d.pkl", n))
		if err := os.WriteFile(p, tuples(n), 0o644); err != nil {
			t.Fatal(err)
		}
		fastMatchesGraph(t, p, fmt.Sprint(n))
	}
}

// TestBGHashSums: writeSums gives the digest of the bytes with each lazy
// digest in its place, in pieces of every size around bgHash's chunk.
func TestBGHashSums(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, piece := range []int{40, 4096, bgChunk - 1, bgChunk + 5} {
		b := newBGHash(sha256.New())
		b.algo = SHA256
		want := sha256.New()
		for total := 0; total < 4*bgChunk; {
			n := piece + rng.Intn(64)
			p := make([]byte, n)
			rng.Read(p)
			var sums []lazySum
			var bodies []byte
			for pos := rng.Intn(40); pos+32 <= n; pos += 32 + rng.Intn(200) {
				body := make([]byte, rng.Intn(80))
				rng.Read(body)
				sums = append(sums, lazySum{pos: pos, lo: len(bodies), hi: len(bodies) + len(body)})
				bodies = append(bodies, body...)
			}
			ref := append([]byte(nil), p...)
			putSums(SHA256, ref, sums, bodies)
			want.Write(ref)
			if rng.Intn(2) == 0 && len(sums) == 0 {
				b.Write(p)
			} else {
				b.writeSums(p, sums, bodies)
			}
			total += n
		}
		if got, w := b.Sum(nil), want.Sum(nil); string(got) != string(w) {
			t.Fatalf("piece %d: Sum differs", piece)
		}
	}
}

// TestFastLazyRows: the pure tuples in the rows of a list result (values
// of a row dict, items of a row list, in a dict row set item by item,
// beside a tuple key, a nested list and a memoised row) hash as on the
// graph path.
func TestFastLazyRows(t *testing.T) {
	dir := t.TempDir()
	for _, mixed := range []bool{false, true} {
		for _, n := range []int{40, 5000, 30000} {
			p := filepath.Join(dir, fmt.Sprintf("rows%d-%v.pkl", n, mixed))
			if err := os.WriteFile(p, lazyRows(n, mixed), 0o644); err != nil {
				t.Fatal(err)
			}
			fastMatchesGraph(t, p, fmt.Sprintf("%d mixed=%v", n, mixed))
		}
	}
}

// lazyRows is TestFastLazyRows' list of n rows (mixed: with the rows
// whose tuples are read first).
func lazyRows(n int, mixed bool) []byte {
	w := (&pw{}).op(0x80, 4).op(']').memo().op('(')
	for i := 0; i < n; i++ {
		if i > 0 && i%500 == 0 {
			w.op('e', '(')
		}
		k := i % 6
		if !mixed {
			k %= 3
		}
		switch k {
		case 0: // a dict row with tuple values, keys out of order
			w.op('}', '(').str("z")
			lazyTuple(w, i).str("a").int(i).str("m")
			lazyTuple(w, i+1).op('u')
		case 1: // a list row
			w.op(']', '(')
			lazyTuple(w, i).int(i)
			lazyTuple(w, i+2).op('e')
		case 2: // a dict row set one item at a time
			w.op('}').str("p")
			lazyTuple(w, i).op('s').str("b").int(i).op('s')
		case 3: // a tuple key
			w.op('}').int(i).op(0x85).str("v").op('s')
		case 4: // a nested list: a record in the row
			w.op('}', '(').str("t")
			lazyTuple(w, i).str("l").op(']').int(i).op('a', 'u')
		case 5: // memoised and read back in the next row's place
			w.op(']')
			lazyTuple(w, i).op('a').memo()
		}
	}
	return w.op('e', '.').b
}

// lazyTuple writes a pure tuple (int, str, float) of i.
func lazyTuple(w *pw, i int) *pw {
	w.int(i).str(fmt.Sprintf("t%d", i)).op('G').b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(float64(i)*0.25))
	return w.op(0x87)
}

// fastMatchesGraph checks that the fast path hashes file p as the graph
// path does, under SHA-256, XXH3 and KeepDictOrder (label names p in the
// messages).
func fastMatchesGraph(t *testing.T, p, label string) {
	t.Helper()
	for _, opt := range []Options{{}, {Algo: XXH3}, {KeepDictOrder: true}} {
		slow, err := slowHash(t, p, opt)
		if err != nil {
			t.Fatalf("%s: graph path: %v", label, err)
		}
		fast, ok := fastHashFile(p, opt)
		if !ok {
			t.Fatalf("%s: the fast path gave up", label)
		}
		if fast.Digest != slow.Digest {
			t.Errorf("%s %+v: fast %s, graph %s", label, opt, fast.Digest, slow.Digest)
		}
	}
}
