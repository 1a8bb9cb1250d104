package canon

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpanTab: every item's start, length and memo count read back as
// recorded, across checkpoints, with starts that go back (a range inside
// the previous one's), lengths and memo counts of every size; and a list's
// ranges take a few bytes an item.
func TestSpanTab(t *testing.T) {
	type rec struct {
		start int64
		l     uint32
		memo  int32
	}
	r := rand.New(rand.NewPCG(1, 2))
	var tab spanTab
	var want []rec
	end, memo := int64(0), int32(0)
	for i := range 5000 {
		x := rec{start: end + int64(r.IntN(3)), l: uint32(1 + r.IntN(20)), memo: memo + int32(r.IntN(2))}
		switch i % 97 {
		case 5:
			x.start = end - 1000 // (before the previous end)
		case 6:
			x.l = math.MaxUint32
		case 7:
			x.memo = math.MaxInt32
		case 8:
			x.memo = 0
		case 9:
			x.start = 1 << 40
		}
		tab.add(x.start, x.l, x.memo)
		want = append(want, x)
		end, memo = x.start+int64(x.l), x.memo
	}
	if tab.len() != len(want) {
		t.Fatalf("len %d, want %d", tab.len(), len(want))
	}
	for i, w := range want {
		if s, l, m := tab.at(i); s != w.start || l != w.l || m != w.memo {
			t.Fatalf("item %d: %d %d %d, want %+v", i, s, l, m, w)
		}
	}
	// 4 million floats in APPENDS of a thousand: 3 bytes an item and a
	// checkpoint every spanEvery
	tab.reset()
	at := int64(100)
	for i := range 1 << 20 {
		if i%1000 == 0 {
			at += 2 // (APPENDS, MARK)
		}
		tab.add(at, 9, 7)
		at += 9
	}
	if n := len(tab.b) + len(tab.cps)*24; n > 4<<20 {
		t.Errorf("%d bytes for %d items: want about 3 an item", n, tab.len())
	}
	if s, l, m := tab.at(1<<20 - 1); s != at-9 || l != 9 || m != 7 {
		t.Errorf("last item: %d %d %d", s, l, m)
	}
}
