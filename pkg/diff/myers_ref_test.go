package diff

import (
	"math/rand"
	"slices"
	"testing"
)

// TestMyersReference: myers, which keeps of each round's v only what its
// backtrack reads and holds small middles on the stack, gives the same
// steps as the textbook form below (every round's v kept whole), on random
// pairs of sequences with and without '=' steps. The steps decide which
// items a diff pairs, so any change of tie-breaking would show.
func TestMyersReference(t *testing.T) {
	iters := 50_000
	if testing.Short() {
		iters = 10_000
	}
	r := rand.New(rand.NewSource(1))
	for it := range iters {
		n, m := r.Intn(12), r.Intn(12)
		if it%50 == 0 {
			n, m = r.Intn(300), r.Intn(300)
		}
		alpha := 1 + r.Intn(5)
		if it%5000 == 0 {
			n, m, alpha = r.Intn(2500), r.Intn(2500), 1+r.Intn(50)
		}
		a, b := make([]int, n), make([]int, m)
		for i := range a {
			a[i] = r.Intn(alpha)
		}
		for i := range b {
			b[i] = r.Intn(alpha)
		}
		eq := func(i, j int) bool { return a[i] == b[j] }
		for _, keep := range []bool{true, false} {
			var got, want []EditOp
			myers(n, m, eq, 3, 5, keep, func(o EditOp) { got = append(got, o) })
			myersRef(n, m, eq, 3, 5, keep, func(o EditOp) { want = append(want, o) })
			if !slices.Equal(got, want) {
				t.Fatalf("%v against %v (keep %v):\n got  %v\n want %v", a, b, keep, got, want)
			}
		}
	}
}

// myersRef is myers as it was before session 23: a snapshot of the whole
// of v at every round, the reference for TestMyersReference.
func myersRef(n, m int, eq func(i, j int) bool, offA, offB int, keepEqual bool, emit func(EditOp)) {
	if n == 0 || m == 0 {
		for i := 0; i < n; i++ {
			emit(EditOp{'-', offA + i, -1})
		}
		for j := 0; j < m; j++ {
			emit(EditOp{'+', -1, offB + j})
		}
		return
	}
	if n == 1 && m == 1 { // (the middle after the common prefix and suffix: they differ)
		if eq(0, 0) {
			if keepEqual {
				emit(EditOp{'=', offA, offB})
			}
		} else {
			emit(EditOp{'~', offA, offB})
		}
		return
	}
	max := n + m
	if max > MaxEditCost {
		max = MaxEditCost
	}
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	found := -1
	for d := 0; d <= max; d++ {
		snap := make([]int, len(v))
		copy(snap, v)
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && eq(x, y) {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
		if found >= 0 {
			break
		}
	}
	if found < 0 {
		// too different: position by position
		for i := 0; i < n || i < m; i++ {
			switch {
			case i < n && i < m && eq(i, i):
				if keepEqual {
					emit(EditOp{'=', offA + i, offB + i})
				}
			case i < n && i < m:
				emit(EditOp{'~', offA + i, offB + i})
			case i < n:
				emit(EditOp{'-', offA + i, -1})
			default:
				emit(EditOp{'+', -1, offB + i})
			}
		}
		return
	}
	// backtrack
	var rev []EditOp
	x, y := n, m
	for d := found; d > 0; d-- {
		vd := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && vd[off+k-1] < vd[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd[off+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, EditOp{'=', offA + x, offB + y})
		}
		if x == px {
			y--
			rev = append(rev, EditOp{'+', -1, offB + y})
		} else {
			x--
			rev = append(rev, EditOp{'-', offA + x, -1})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, EditOp{'=', offA + x, offB + y})
	}
	ops := make([]EditOp, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	pairChanges(ops, keepEqual, emit)
}
