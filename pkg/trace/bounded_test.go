package trace

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

var boundedNs = []int{2, 3, 5, 10, 40, 1000}

// boundedSums checks a bounded view's text: at most lines tree lines, and
// on every line with shown children, self + their sizes = size.
func boundedSums(t *testing.T, name, out string, lines int) {
	t.Helper()
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(rows) < 3 || !strings.Contains(rows[0], "SIZE") || !strings.HasPrefix(rows[len(rows)-1], "SIZE: ") {
		t.Fatalf("%s: no header or legend:\n%s", name, out)
	}
	rows = rows[1 : len(rows)-1]
	if strings.Contains(out, "...(depth ") {
		return // lines too deep to draw: their depth is not in the branches
	}
	if len(rows) > lines {
		t.Errorf("%s --lines %d: %d lines", name, lines, len(rows))
	}
	// --bytes, ASCII: SIZE (12) PCT (7) SELF (12), two spaces, the branches
	const col = 12 + 1 + 7 + 1 + 12 + 2
	type fr struct{ size, sum int64 }
	var stack []fr
	check := func(f fr) {
		if f.sum != f.size {
			t.Errorf("%s --lines %d: a line of %d bytes has self + children = %d\n%s", name, lines, f.size, f.sum, out)
		}
	}
	for _, r := range rows {
		if len(r) < col+2 {
			t.Fatalf("%s: bad line %q", name, r)
		}
		br := r[col:]
		k := strings.IndexAny(br, "+-")
		if k < 0 {
			t.Fatalf("%s: bad line %q", name, r)
		}
		depth := k
		size, _ := strconv.ParseInt(strings.TrimSpace(r[:12]), 10, 64)
		self, _ := strconv.ParseInt(strings.TrimSpace(r[21:33]), 10, 64)
		open := br[k] == '+'
		for len(stack) > depth {
			check(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		}
		if depth > 0 && len(stack) > 0 {
			stack[len(stack)-1].sum += size
		}
		if open {
			stack = append(stack, fr{size: size, sum: self})
		} else {
			stack = append(stack, fr{size: size, sum: size})
		}
	}
	for len(stack) > 0 {
		check(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
	}
}

// agreeBounded checks the bounded view of path on the graph path (sizes
// add up, the budget holds) and that the fast path, when it applies,
// prints the same bytes.
func agreeBounded(t *testing.T, path string) (fast int) {
	t.Helper()
	slow, err := slowTree(path)
	if err != nil {
		return 0
	}
	for _, n := range boundedNs {
		var want bytes.Buffer
		if err := slow.WriteBounded(&want, slow.Root(), n, Style{ASCII: true, Bytes: true}); err != nil {
			t.Fatal(err)
		}
		boundedSums(t, path, want.String(), n)
		ft := FastBounded(path, n)
		if ft == nil {
			continue
		}
		fast++
		for _, sty := range []Style{{}, {ASCII: true, Bytes: true}} {
			var got, w bytes.Buffer
			ft.WriteBounded(&got, ft.Root(), n, sty)
			slow.WriteBounded(&w, slow.Root(), n, sty)
			if got.String() != w.String() {
				t.Errorf("%s --lines %d: fast path differs\n--- fast\n%s--- graph\n%s", path, n, got.String(), w.String())
				return fast
			}
		}
	}
	return fast
}

func TestBoundedCorpus(t *testing.T) {
	corpusAgrees(t, "the bounded fast path", 2<<20, func(t *testing.T, p string) bool { return agreeBounded(t, p) > 0 })
}

func TestBoundedGenerated(t *testing.T) {
	dir := t.TempDir()
	for proto := 0; proto <= 5; proto++ {
		for seed := int64(0); seed < 40; seed++ {
			b := genPickle(seed*7+int64(proto), proto)
			p := writeTemp(t, dir, fmt.Sprintf("g%d_%d.pkl", proto, seed), b)
			if agreeBounded(t, p) == 0 && !strings.HasSuffix(fastReason(b), objKeyReason) {
				t.Errorf("proto %d seed %d: plain data fell back", proto, seed)
			}
		}
	}
}

// A wide table: the view stays within its budget, the rest of the rows is
// one line.
func TestBoundedWide(t *testing.T) {
	var e enc
	e.proto = 4
	e.op(0x80, 4)
	e.op(']') // EMPTY_LIST
	e.op('(') // MARK
	for i := 0; i < 5000; i++ {
		e.op('}')
		e.str("id")
		e.int(int64(i))
		e.op('s')
	}
	e.op('e') // APPENDS
	e.op('.')
	p := writeTemp(t, t.TempDir(), "wide.pkl", e.b.Bytes())
	ft := FastBounded(p, 10)
	if ft == nil {
		t.Fatal("the fast path did not apply")
	}
	var b bytes.Buffer
	ft.WriteBounded(&b, ft.Root(), 10, Style{Bytes: true})
	out := b.String()
	if n := strings.Count(out, "\n"); n != 12 {
		t.Errorf("%d lines, want 10 and the header and legend:\n%s", n, out)
	}
	if !strings.Contains(out, "… 4,993 more items, ") {
		t.Errorf("no aggregate line:\n%s", out)
	}
	agreeBounded(t, p)
}
