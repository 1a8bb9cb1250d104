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
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for i := 0; i < p; i++ {
		ops = append(ops, EditOp{'=', i, i})
	}
	mid := myers(a[p:len(a)-s], b[p:len(b)-s], p, p)
	ops = append(ops, pairChanges(mid)...)
	for i := 0; i < s; i++ {
		ops = append(ops, EditOp{'=', len(a) - s + i, len(b) - s + i})
	}
	return ops
}

// pairChanges turns runs of k removals followed by k' insertions into
// min(k,k') in-place changes plus the rest.
func pairChanges(ops []EditOp) []EditOp {
	var out []EditOp
	for i := 0; i < len(ops); {
		if ops[i].Kind != '-' {
			out = append(out, ops[i])
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
		n := len(dels)
		if len(ins) < n {
			n = len(ins)
		}
		for t := 0; t < n; t++ {
			out = append(out, EditOp{'~', dels[t].A, ins[t].B})
		}
		out = append(out, dels[n:]...)
		out = append(out, ins[n:]...)
		i = k
	}
	return out
}

func myers(a, b []string, offA, offB int) []EditOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		var ops []EditOp
		for i := 0; i < n; i++ {
			ops = append(ops, EditOp{'-', offA + i, -1})
		}
		for j := 0; j < m; j++ {
			ops = append(ops, EditOp{'+', -1, offB + j})
		}
		return ops
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
			for x < n && y < m && a[x] == b[y] {
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
		var ops []EditOp
		for i := 0; i < n || i < m; i++ {
			switch {
			case i < n && i < m && a[i] == b[i]:
				ops = append(ops, EditOp{'=', offA + i, offB + i})
			case i < n && i < m:
				ops = append(ops, EditOp{'~', offA + i, offB + i})
			case i < n:
				ops = append(ops, EditOp{'-', offA + i, -1})
			default:
				ops = append(ops, EditOp{'+', -1, offB + i})
			}
		}
		return ops
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
	return ops
}
