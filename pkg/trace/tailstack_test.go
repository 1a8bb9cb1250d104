package trace

import (
	"math"
	"math/rand"
	"testing"
)

// TestTailStack: what a tailStack pops is what was pushed, for IDs of
// either sign and far apart (-1 is an item that is not a node) and counts
// of every size, across pages and after a reset.
func TestTailStack(t *testing.T) {
	var s tailStack
	rng := rand.New(rand.NewSource(1))
	ids := []int32{-1, 0, 1, math.MaxInt32, 127, 128, -1, 16384, math.MaxInt32 - 1}
	for round := range 2 {
		s.reset()
		var want []tailFrame
		for i := range 20000 {
			f := tailFrame{id: int32(rng.Intn(1 << (rng.Intn(31) + 1))), n: int32(rng.Intn(1 << (rng.Intn(31) + 1)))}
			if i < len(ids) {
				f.id = ids[i]
			}
			if i%7 == 0 {
				f.id = -1
			}
			s.push(f)
			want = append(want, f)
			if i%3 == 0 { // pop some as the walk does, between pushes
				got := s.pop()
				if w := want[len(want)-1]; got != w {
					t.Fatalf("round %d: pop %d: got %+v, want %+v", round, len(want)-1, got, w)
				}
				want = want[:len(want)-1]
			}
			if s.n != len(want) {
				t.Fatalf("round %d: %d frames, want %d", round, s.n, len(want))
			}
		}
		for i := len(want) - 1; i >= 0; i-- {
			if got := s.pop(); got != want[i] {
				t.Fatalf("round %d: pop %d: got %+v, want %+v", round, i, got, want[i])
			}
		}
		if s.n != 0 || s.size != 0 || s.last != 0 {
			t.Fatalf("round %d: left %d frames, %d bytes, last %d", round, s.n, s.size, s.last)
		}
		s.push(tailFrame{id: 5, n: 3}) // left on it: reset empties it
	}
}
