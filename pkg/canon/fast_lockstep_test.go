package canon

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// floatsDict is {'x': [the floats of xs]}, in APPENDS of a thousand.
func floatsDict(xs []float64) []byte {
	b := []byte{0x80, 4, '}', 0x8c, 1, 'x', ']'}
	for i, x := range xs {
		if i%1000 == 0 {
			b = append(b, '(')
		}
		b = append(b, 'G')
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
		if i%1000 == 999 || i == len(xs)-1 {
			b = append(b, 'e')
		}
	}
	return append(b, 's', '.')
}

// TestLockstep: two large lists read in lockstep (BigItemsLockstep) keep
// the items BigItems records from where they may first differ on: every
// item kept is recorded as without the lockstep (fingerprint and range),
// none at or after the first difference is dropped, and the common prefix
// is dropped (all but a few check-ins' worth), whichever side runs ahead.
func TestLockstep(t *testing.T) {
	defer func(e, a int) { lockEvery, lockAhead = e, a }(lockEvery, lockAhead)
	lockEvery, lockAhead = 100, 1000
	const n = 150000 // 9 bytes a float: past BigItemMin
	base := make([]float64, n)
	for i := range base {
		base[i] = float64(i) / 7
	}
	dir := t.TempDir()
	cases := []struct {
		name  string
		edit  func([]float64) []float64
		first int // the first index that may differ
	}{
		{"same", func(x []float64) []float64 { return x }, n},
		{"first", func(x []float64) []float64 { x[0] = -1; return x }, 0},
		{"middle", func(x []float64) []float64 { x[n/2] = -1; return x }, n / 2},
		{"last", func(x []float64) []float64 { x[n-1] = -1; return x }, n - 1},
		{"removed", func(x []float64) []float64 { return append(x[:90000:90000], x[90001:]...) }, 90000},
		{"added", func(x []float64) []float64 { return append(x, 1, 2, 3) }, n},
		{"shorter", func(x []float64) []float64 { return x[:n-5000] }, n - 5000},
	}
	for _, c := range cases {
		b := c.edit(append([]float64(nil), base...))
		pa, pb := filepath.Join(dir, c.name+"a.pkl"), filepath.Join(dir, c.name+"b.pkl")
		if os.WriteFile(pa, floatsDict(base), 0o644) != nil || os.WriteFile(pb, floatsDict(b), 0o644) != nil {
			t.Fatal("cannot write the files")
		}
		for _, slow := range []int{-1, 0, 1} {
			name := fmt.Sprintf("%s/slow%d", c.name, slow)
			var want, got [2]*FastItems
			var big [2]BigItem
			var scan [2]*ItemScan
			for i, p := range []string{pa, pb} {
				s, ok := ScanItems(p, Options{})
				if !ok {
					t.Fatalf("%s: ScanItems did not take %s", name, p)
				}
				r, ok := s.Items(-1)
				if !ok {
					t.Fatalf("%s: Items(-1)", name)
				}
				if big[i], ok = r.Big[0]; !ok {
					t.Fatalf("%s: no Big[0]", name)
				}
				if want[i], ok = s.BigItems(big[i]); !ok {
					t.Fatalf("%s: BigItems", name)
				}
				scan[i] = s
			}
			l := NewLockstep()
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i == slow {
						spin() // this side starts late: the other runs ahead and waits
					}
					var ok bool
					if got[i], ok = scan[i].BigItemsLockstep(big[i], l, i); !ok {
						t.Errorf("%s: side %d: BigItemsLockstep", name, i)
					}
				}()
			}
			wg.Wait()
			if got[0] == nil || got[1] == nil {
				continue
			}
			for i := range 2 {
				g, w := got[i], want[i]
				if g.Len() != w.Len() {
					t.Fatalf("%s: side %d: %d items, want %d", name, i, g.Len(), w.Len())
				}
				if g.Base() > c.first {
					t.Errorf("%s: side %d: dropped up to %d, past the first difference at %d", name, i, g.Base(), c.first)
				}
				// (a pass checks in after an APPENDS: every 1000 items here)
				if slack := 4*lockAhead + 4*1000 + spanEvery; g.Base() < min(c.first, g.Len())-slack {
					t.Errorf("%s: side %d: dropped up to %d only, the lists first differ at %d", name, i, g.Base(), c.first)
				}
				for k := g.Base(); k < g.Len(); k++ {
					if g.Sum(k) != w.Sum(k) || g.Span(k) != w.Span(k) {
						t.Fatalf("%s: side %d: item %d recorded differently", name, i, k)
					}
				}
			}
		}
	}
}

// spin is busy work for a side that starts late.
func spin() {
	s := 0
	for i := range 3 << 20 {
		s += i * i
	}
	spun += s
}

var spun int
