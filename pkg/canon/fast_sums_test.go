package canon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTupleSums: the table of tuple digests gives Algo.sum's digest for
// every body, those found and those that take a place another held; stops
// looking when few looks find one; and pk hash of rows holding repeated and
// distinct small tuples is the same with it and without, and the graph's.
func TestTupleSums(t *testing.T) {
	for _, a := range []Algo{SHA256, XXH3} {
		e := &fastEnc{opt: Options{Algo: a}}
		for i := 0; i < 3*tupleProbe; i++ {
			// bodies of 2 to 47 bytes, 300 of them repeated, and some
			// longer than a place takes
			body := []byte(fmt.Sprintf("T\x02%0*d", 2+i%300%46, i%300))
			if i%1000 == 999 {
				body = bytes.Repeat(body, 3)
			}
			got := e.sumTuple([]byte{'H'}, body)
			if want := a.sum([]byte{'H'}, body); !bytes.Equal(got, want) {
				t.Fatalf("%v %q: %x, want %x", a, body, got, want)
			}
		}
		if e.tsums.off {
			t.Fatalf("%v: off with most looks found", a)
		}
	}
	e := &fastEnc{opt: Options{}}
	for i := 0; i < 2*tupleProbe; i++ {
		body := []byte(fmt.Sprintf("T\x01i%08d", i))
		if got, want := e.sumTuple(nil, body), SHA256.sum(nil, body); !bytes.Equal(got, want) {
			t.Fatal(i)
		}
	}
	if !e.tsums.off {
		t.Fatal("still looking with no look found")
	}
	// rows {"id": i, "pair": (one of 20), "pos": (i, i)}
	w := (&pw{}).op(0x80, 4).op(']').memo().op('(')
	for i := 0; i < 20000; i++ {
		if i > 0 && i%1000 == 0 {
			w.op('e', '(')
		}
		w.op('}').memo().op('(').str("id").int(i).str("pair").str(fmt.Sprintf("a%d", i%10))
		if i%3 == 0 {
			w.op(0x88)
		} else {
			w.op(0x89)
		}
		w.op(0x86).memo().str("pos").int(i).int(i).op(0x86).memo().op('u')
	}
	p := filepath.Join(t.TempDir(), "pairs.pkl")
	if err := os.WriteFile(p, w.op('e', '.').b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Algo: XXH3}} {
		with, ok := fastHashFile(p, opt)
		noTupleSums = true
		without, ok2 := fastHashFile(p, opt)
		noTupleSums = false
		if !ok || !ok2 || with.Digest != without.Digest {
			t.Fatalf("%+v: with %v %v, without %v %v", opt, with, ok, without, ok2)
		}
	}
	fastMatchesGraph(t, p, "pairs")
}

// TestSumChunks: Algo.sum, which digests large data a chunk at a time, gives
// what one Write of it gives, for both algorithms, about the chunk's size.
func TestSumChunks(t *testing.T) {
	data := make([]byte, 3*sumChunk+17)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	for _, a := range []Algo{SHA256, XXH3} {
		for _, n := range []int{0, 1, sumChunk - 1, sumChunk, sumChunk + 1, 2 * sumChunk, len(data)} {
			h := a.New()
			h.Write(data[:n])
			if got, want := a.sum([]byte{'x'}, data[:n]), h.Sum([]byte{'x'}); !bytes.Equal(got, want) {
				t.Fatalf("%v, %d bytes: sum %x, one Write %x", a, n, got, want)
			}
		}
	}
}
