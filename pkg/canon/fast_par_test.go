package canon

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// splitSmall makes pass 2 split files of a few kilobytes, and its workers
// hash their own output past out bytes (segFlush; they look at it past
// 64 KiB, as flush is called), until the returned func is called.
func splitSmall(seg int64, out int) func() {
	b, c, g := segBytes, segCap, runtime.GOMAXPROCS(0)
	segBytes, segCap = seg, out
	if g < 2 {
		runtime.GOMAXPROCS(2)
	}
	return func() { segBytes, segCap = b, c; runtime.GOMAXPROCS(g) }
}

// hashSplit hashes p on the streaming path with pass 2 split and not, and
// says how many segments the split had.
func hashSplit(t *testing.T, p string, opt Options) (split, one *Result, okSplit, okOne bool, segs int) {
	t.Helper()
	onSplit = func(n int) { segs = n }
	defer func() { onSplit = nil }()
	split, okSplit = fastHashFile(p, opt)
	noPar = true
	one, okOne = fastHashFile(p, opt)
	noPar = false
	return
}

// splitRows is a list of n rows {"id": i, "name": one of names, "city": one
// of cities}, in APPENDS batches of batch rows, each str memoised where it
// first appears and read back with GET later (from the batch before, and
// from far back); back > 0 makes every row also read the name that row
// i-back memoised, which may lie in the segment right before.
func splitRows(n, batch, names, cities, back int) []byte {
	b, _ := splitRowsFwd(n, batch, names, cities, back, -1, 0)
	return b
}

// splitRowsFwd is splitRows whose row fwdRow also holds a GET of memo entry
// fwdIdx (not memoised yet there: a forward reference); at is the memo's
// size at each row.
func splitRowsFwd(n, batch, names, cities, back, fwdRow, fwdIdx int) (b []byte, at []int) {
	w := (&pw{}).op(0x80, 4).op(']').memo().op('(')
	memo := map[string]int{}
	get := func(s string) {
		if k, ok := memo[s]; ok {
			w.op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(k))
			return
		}
		memo[s] = w.n
		w.str(s).memo()
	}
	for i := 0; i < n; i++ {
		if i > 0 && i%batch == 0 {
			w.op('e', '(')
		}
		at = append(at, w.n)
		w.op('}').memo().op('(')
		if i == fwdRow {
			w.str("fwd").op('j').b = binary.LittleEndian.AppendUint32(w.b, uint32(fwdIdx))
		}
		get("id")
		w.int(i)
		get("name")
		get(fmt.Sprintf("name-%05d", i%names))
		get("city")
		get(fmt.Sprintf("city-%02d", i%cities))
		if back > 0 && i >= back {
			get("prev")
			get(fmt.Sprintf("name-%05d", (i-back)%names))
		}
		w.op('u')
	}
	return w.op('e', '.').b, at
}

// TestFastSplit: pass 2 split among workers (fast_par.go) gives the digest
// of the one pass, and the graph path's, on tables whose rows read memo
// entries of earlier segments (the one right before, far back), hold pure
// tuples, nested lists and dicts, with outputs past segCap; and gives up
// where the one pass does.
func TestFastSplit(t *testing.T) {
	defer splitSmall(512, 300)()
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		slow bool // the fast path gives up
	}{
		{"memo", splitRows(3000, 7, 500, 13, 0), false},
		{"memo-back", splitRows(3000, 5, 3000, 50, 3), false},
		{"memo-far", splitRows(4000, 100, 97, 7, 40), false},
		{"lazy", lazyRows(3000, true), false},
		{"lazy-plain", lazyRows(4000, false), false},
	}
	// items that read back a str of InlineMax bytes in batches of 2,500:
	// each segment's output passes 64 KiB, where workers look at segCap
	// (flush)
	big := (&pw{}).op(0x80, 4).op(']').memo().op('(').str(fmt.Sprintf("%0*d", InlineMax, 7)).memo()
	for i := 0; i < 20000; i++ {
		if i%2500 == 2499 {
			big.op('e', '(')
		}
		big.op('h', 1)
		if i%10 == 0 {
			big.int(i)
		}
	}
	cases = append(cases, struct {
		name string
		data []byte
		slow bool
	}{"expand", big.op('e', '.').b, false})
	// a GET of an entry memoised later (a forward reference) in a row of
	// an early segment, of a later one: both ways give up there
	_, at := splitRowsFwd(3000, 5, 3000, 13, 0, -1, 0)
	fwd, _ := splitRowsFwd(3000, 5, 3000, 13, 0, 700, at[2500])
	fwd2, _ := splitRowsFwd(3000, 5, 3000, 13, 0, 700, at[702]) // (in its own segment)
	cases = append(cases, []struct {
		name string
		data []byte
		slow bool
	}{{"forward", fwd, true}, {"forward-near", fwd2, true}}...)
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{}, {Algo: XXH3}, {KeepDictOrder: true}} {
			split, one, okSplit, okOne, segs := hashSplit(t, p, opt)
			if okSplit != okOne || okSplit == c.slow {
				t.Fatalf("%s: split %v, one pass %v, want %v", c.name, okSplit, okOne, !c.slow)
			}
			if !c.slow && segs < parMinSegs {
				t.Fatalf("%s: %d segments, want a split", c.name, segs)
			}
			if okSplit && split.Digest != one.Digest {
				t.Errorf("%s %+v: split %s, one pass %s", c.name, opt, split.Digest, one.Digest)
			}
		}
		if !c.slow {
			fastMatchesGraph(t, p, c.name)
		}
	}
}

// TestFixedMemo: the fixed memo places every live index below nmemo, and
// no other, and is refused past its limit.
func TestFixedMemo(t *testing.T) {
	live := []uint64{1<<3 | 1<<63, 0, 1 << 5, 1<<0 | 1<<10}
	m := fixedMemo(live, 64*3+5, 1<<20) // (index 64*3+10 is from nmemo on)
	if m == nil || len(m.ents) != 4 || len(m.dense) != 64*3+1 {
		t.Fatalf("%+v", m)
	}
	for i := int64(0); i < 64*4; i++ {
		want := live[i>>6]&(1<<(i&63)) != 0 && i < 64*3+5
		if got := uint64(i) < uint64(len(m.dense)) && m.dense[i] > 0; got != want {
			t.Fatalf("index %d: placed %v", i, got)
		}
		if e := m.get(i); want && (e == nil || fkPure(e.kind)) {
			t.Fatalf("index %d: an entry not written reads as %+v", i, e)
		}
	}
	m.put(3, memoEnt{kind: fkStr, enc: []byte("s\x01a")})
	if e := m.get(3); e == nil || e.kind != fkStr || m.get(4) != nil {
		t.Fatal("put")
	}
	sparse := make([]uint64, 40)
	sparse[0], sparse[39] = 1, 1
	if fixedMemo(sparse, 64*40, 4*64*40) == nil || fixedMemo(sparse, 64*40, 4*64*39) != nil {
		t.Fatal("its limit")
	}
}
