package diff

// EditOp is one step of an alignment of two sequences.
type EditOp struct {
	Kind byte // '=' same, '-' only in A, '+' only in B, '~' changed in place
	A, B int  // indices in A and B (-1 when absent)
}

// MaxEditCost bounds the Myers search; beyond it the middle of the two
// sequences is aligned position by position.
const MaxEditCost = 2000

// Align aligns a and b by equality of their keys: common prefix and suffix
// first, then Myers' O(ND) shortest edit script on the middle (bounded by
// MaxEditCost). A removal followed by an insertion at the same place is
// reported as one in-place change ('~'), so one changed element is one
// entry and one inserted element is one entry.
func Align(a, b []string) []EditOp {
	var ops []EditOp
	alignEach(len(a), len(b), func(i, j int) bool { return a[i] == b[j] }, true, func(o EditOp) { ops = append(ops, o) })
	return ops
}

// AlignRuns is Align grouped by Runs, for sequences of n and m items
// compared by eq(i, j); with keepEqual false the '=' steps are left out
// (they are never grouped). It holds no step per item of a long stretch
// added or removed, so a table against its first rows costs the two
// sequences only.
func AlignRuns(n, m int, eq func(i, j int) bool, keepEqual bool) []Run {
	return AlignRunsKeyed(n, m, eq, nil, keepEqual)
}

// AlignRunsKeyed is AlignRuns with key, when not nil, giving items keys
// that are different whenever the items are (ok false: no such key for
// that item): when every item of the middle (after the common prefix and
// suffix) has one and no key of A's middle is one of B's, no item of the
// one equals an item of the other and the middle is aligned position by
// position at once, not by a Myers search that would find nothing after
// MaxEditCost steps (a thousand levels of a thousand items each, all
// changed, took minutes).
func AlignRunsKeyed(n, m int, eq func(i, j int) bool, key func(side byte, i int) ([16]byte, bool), keepEqual bool) []Run {
	var acc runAcc
	alignEachKeyed(n, m, eq, key, keepEqual, acc.add)
	acc.flush()
	return acc.out
}

// alignRunsKeeping is AlignRunsKeyed with the '=' steps kept only where
// keep(i, j) says (the walk's: where an item is shared, to compare object
// sharing). Leaving an '=' step out changes no other run: one consumes an
// item of each side, so the steps on either side of it could not have
// been one run anyway. (A list of a million APPENDs against its changed
// copy held a million '=' runs, 32 bytes each, through its comparison.)
func alignRunsKeeping(n, m int, eq func(i, j int) bool, key func(side byte, i int) ([16]byte, bool), keep func(i, j int) bool) []Run {
	var acc runAcc
	alignEachKeyed(n, m, eq, key, true, func(o EditOp) {
		if o.Kind != '=' || keep(o.A, o.B) {
			acc.add(o)
		}
	})
	acc.flush()
	return acc.out
}

// disjoint reports whether the keys of A's items [p, n-s) and B's [p, m-s)
// are all known and share none.
func disjoint(n, m, p, s int, key func(side byte, i int) ([16]byte, bool)) bool {
	if key == nil || n-p-s == 0 || m-p-s == 0 || n-p-s+m-p-s <= 64 {
		return false
	}
	inA := make(map[[16]byte]bool, n-p-s)
	for i := p; i < n-s; i++ {
		k, ok := key('a', i)
		if !ok {
			return false
		}
		inA[k] = true
	}
	for j := p; j < m-s; j++ {
		k, ok := key('b', j)
		if !ok || inA[k] {
			return false
		}
	}
	return true
}

// alignEach is Align on n and m items compared by eq, giving each step to
// emit in order (the '=' steps of the common prefix and suffix only when
// keepEqual).
func alignEach(n, m int, eq func(i, j int) bool, keepEqual bool, emit func(EditOp)) {
	alignEachKeyed(n, m, eq, nil, keepEqual, emit)
}

func alignEachKeyed(n, m int, eq func(i, j int) bool, key func(side byte, i int) ([16]byte, bool), keepEqual bool, emit func(EditOp)) {
	p := 0
	for p < n && p < m && eq(p, p) {
		p++
	}
	s := 0
	for s < n-p && s < m-p && eq(n-1-s, m-1-s) {
		s++
	}
	if keepEqual {
		for i := 0; i < p; i++ {
			emit(EditOp{'=', i, i})
		}
	}
	if disjoint(n, m, p, s, key) {
		for i := 0; i < n-p-s || i < m-p-s; i++ {
			switch {
			case i < n-p-s && i < m-p-s:
				emit(EditOp{'~', p + i, p + i})
			case i < n-p-s:
				emit(EditOp{'-', p + i, -1})
			default:
				emit(EditOp{'+', -1, p + i})
			}
		}
	} else {
		myers(n-p-s, m-p-s, func(i, j int) bool { return eq(p+i, p+j) }, p, p, keepEqual, emit)
	}
	if keepEqual {
		for i := 0; i < s; i++ {
			emit(EditOp{'=', n - s + i, m - s + i})
		}
	}
}

// pairChanges turns runs of k removals followed by k' insertions into
// min(k,k') in-place changes plus the rest.
func pairChanges(ops []EditOp, keepEqual bool, emit func(EditOp)) {
	for i := 0; i < len(ops); {
		if ops[i].Kind != '-' {
			if ops[i].Kind != '=' || keepEqual {
				emit(ops[i])
			}
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].Kind == '-' {
			j++
		}
		k := j
		for k < len(ops) && ops[k].Kind == '+' {
			k++
		}
		dels, ins := ops[i:j], ops[j:k]
		n := min(len(dels), len(ins))
		for t := 0; t < n; t++ {
			emit(EditOp{'~', dels[t].A, ins[t].B})
		}
		for _, o := range dels[n:] {
			emit(o)
		}
		for _, o := range ins[n:] {
			emit(o)
		}
		i = k
	}
}

// myers aligns the n and m items of the middle (eq on indices from 0;
// offA and offB are added to the indices emitted).
func myers(n, m int, eq func(i, j int) bool, offA, offB int, keepEqual bool, emit func(EditOp)) {
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
	// v, the snapshots of v that the backtrack reads and its steps, in
	// buffers of the stack for the small middles that most alignments are
	// (a tuple (x, x) against another, at each of 400,000 levels, made 13
	// allocations a level: dag_tuple_deep's walk spent half its time in
	// them and the collections they brought)
	var vBuf [2*8 + 3]int
	var trBuf [64]int
	var opBuf [16]EditOp
	v := vBuf[:]
	if 2*max+3 > len(vBuf) {
		v = make([]int, 2*max+3)
	}
	// trace holds, for each d from 1, the v the round d started from at
	// k = -(d-1)..d-1 (what the backtrack from d reads: k±1 for -d < k <
	// d, its predecessor diagonal), at (d-1)²: found² ints in all, not
	// (found+1)·(2·max+3)
	trace := trBuf[:0]
	found := -1
	for d := 0; d <= max; d++ {
		if d > 0 {
			trace = append(trace, v[off-(d-1):off+d]...)
		}
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
	// backtrack, filling ops from its end: at most n+m steps (each takes
	// one item of A, of B, or of both)
	ops := opBuf[:min(n+m, len(opBuf))]
	if n+m > len(opBuf) {
		ops = make([]EditOp, n+m)
	}
	at := n + m
	put := func(o EditOp) {
		at--
		ops[at] = o
	}
	x, y := n, m
	for d := found; d > 0; d-- {
		// vd(k) is v at diagonal k as round d started
		base := (d - 1) * (d - 1)
		vd := func(k int) int { return trace[base+k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && vd(k-1) < vd(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			put(EditOp{'=', offA + x, offB + y})
		}
		if x == px {
			y--
			put(EditOp{'+', -1, offB + y})
		} else {
			x--
			put(EditOp{'-', offA + x, -1})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		put(EditOp{'=', offA + x, offB + y})
	}
	pairChanges(ops[at:], keepEqual, emit)
}

// RunMin is the number of consecutive items added, removed or changed in
// place from which they are reported as one run entry
// (root[200000:600000] added (400,000 items)) instead of one entry each.
const RunMin = 10

// Run is one step of an alignment grouped into runs: N (at least 1)
// consecutive operations of one kind, from A and B ('-': A..A+N-1; '+':
// B..B+N-1; '~': both; '=' is never grouped).
type Run struct {
	Kind byte
	A, B int
	N    int
}

// Runs groups the operations of an alignment (Align's output, with or
// without its '=' operations) into runs of RunMin or more consecutive
// items of one kind; shorter stretches stay single operations (N = 1).
// Both the graph path (seq) and the fast path (fastCmp.list) report an
// alignment through it (AlignRuns), so they give the same entries.
func Runs(ops []EditOp) []Run {
	var acc runAcc
	for _, o := range ops {
		acc.add(o)
	}
	acc.flush()
	return acc.out
}

// runAcc groups operations into runs as they come.
type runAcc struct {
	out []Run
	cur Run // the stretch being grown (N 0: none)
}

func (x *runAcc) add(o EditOp) {
	c := &x.cur
	if c.N > 0 && o.Kind != '=' && o.Kind == c.Kind &&
		(c.A < 0 || o.A == c.A+c.N) && (c.B < 0 || o.B == c.B+c.N) {
		c.N++
		return
	}
	x.flush()
	x.cur = Run{Kind: o.Kind, A: o.A, B: o.B, N: 1}
}

func (x *runAcc) flush() {
	c := x.cur
	x.cur = Run{}
	if c.N == 0 {
		return
	}
	// (doubling: append's quarter steps copy a long list many times;
	// below 256, append's own growth: a million levels align one item each)
	x.out = growLarge(x.out)
	if c.N >= RunMin {
		x.out = append(x.out, c)
		return
	}
	for k := 0; k < c.N; k++ {
		r := Run{Kind: c.Kind, A: c.A, B: c.B, N: 1}
		if r.A >= 0 {
			r.A += k
		}
		if r.B >= 0 {
			r.B += k
		}
		x.out = append(growLarge(x.out), r)
	}
}
