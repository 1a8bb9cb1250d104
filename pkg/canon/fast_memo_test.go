package canon

import "testing"

// memoTab keeps entries in a slice for dense indices and a map for the
// others; what get returns must not depend on which.
func TestMemoTab(t *testing.T) {
	var m memoTab
	ref := map[int64]memoEnt{}
	put := func(i int64, k uint8) {
		x := memoEnt{kind: k, enc: []byte{k}}
		m.put(i, x)
		ref[i] = x
	}
	// sparse first (beyond 2n+1024), then dense growing over it, overwrites
	for _, i := range []int64{5000, 1 << 27, 0, 1, 2} {
		put(i, uint8(i%7))
	}
	for i := int64(3); i < 6000; i += 3 {
		put(i, uint8(i%5))
	}
	put(5000, 9) // was sparse, now in the slice's range
	put(1<<27, 8)
	put(1, 4)
	for i := int64(-2); i < 7000; i++ {
		got := m.get(i)
		ok := got != nil
		want, wok := ref[i]
		if ok != wok || (ok && (got.kind != want.kind || string(got.enc) != string(want.enc))) {
			t.Fatalf("get(%d) = %v %v, want %v %v", i, got, ok, want, wok)
		}
	}
	if got := m.get(1 << 27); got == nil || got.kind != 8 {
		t.Fatalf("get(1<<27) = %v", got)
	}
	if len(m.dense) > 4*m.n+4096 {
		t.Fatalf("dense slice of %d for %d entries", len(m.dense), m.n)
	}
	// spread indices do not grow the slice past the bound
	var s memoTab
	for i := int64(0); i < 40; i++ {
		s.put(i*(1<<20), memoEnt{kind: 1})
	}
	if len(s.dense) > 4*s.n+4096 {
		t.Fatalf("sparse indices: dense slice of %d for %d entries", len(s.dense), s.n)
	}
}
