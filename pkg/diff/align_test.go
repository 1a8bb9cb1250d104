package diff

import (
	"fmt"
	"strings"
	"testing"
)

func render(ops []EditOp) string {
	var b strings.Builder
	for _, o := range ops {
		fmt.Fprintf(&b, "%c%d,%d ", o.Kind, o.A, o.B)
	}
	return strings.TrimSpace(b.String())
}

func TestAlign(t *testing.T) {
	seq := func(n int, ins map[int]string) []string {
		var s []string
		for i := 0; i < n; i++ {
			if v, ok := ins[i]; ok {
				s = append(s, v)
			}
			s = append(s, fmt.Sprint(i))
		}
		return s
	}
	a := seq(50, nil)
	b := seq(50, map[int]string{25: "new"})
	ops := Align(a, b)
	var changes []EditOp
	for _, o := range ops {
		if o.Kind != '=' {
			changes = append(changes, o)
		}
	}
	if len(changes) != 1 || changes[0].Kind != '+' || changes[0].B != 25 {
		t.Fatalf("one insertion should be one entry, got %v", render(changes))
	}
	// a change in place
	c := append([]string(nil), a...)
	c[10] = "x"
	ops = Align(a, c)
	changes = changes[:0]
	for _, o := range ops {
		if o.Kind != '=' {
			changes = append(changes, o)
		}
	}
	if len(changes) != 1 || changes[0].Kind != '~' || changes[0].A != 10 {
		t.Fatalf("in-place change: %v", render(changes))
	}
	// removal in the middle with a change elsewhere
	d := append(append([]string(nil), a[:5]...), a[6:]...)
	d[30] = "y"
	got := Align(a, d)
	var ks []string
	for _, o := range got {
		if o.Kind != '=' {
			ks = append(ks, fmt.Sprintf("%c%d,%d", o.Kind, o.A, o.B))
		}
	}
	if strings.Join(ks, " ") != "-5,-1 ~31,30" {
		t.Fatalf("got %v", ks)
	}
	// every index appears once on each side
	for _, pair := range [][2][]string{{a, b}, {a, c}, {a, d}, {nil, a}, {a, nil}, {[]string{"1", "2"}, []string{"3", "4", "5"}}} {
		ops := Align(pair[0], pair[1])
		na, nb := 0, 0
		for _, o := range ops {
			if o.A >= 0 {
				if o.A != na {
					t.Fatalf("A order broken: %s", render(ops))
				}
				na++
			}
			if o.B >= 0 {
				if o.B != nb {
					t.Fatalf("B order broken: %s", render(ops))
				}
				nb++
			}
		}
		if na != len(pair[0]) || nb != len(pair[1]) {
			t.Fatalf("lost elements: %s", render(ops))
		}
	}
}

func TestAlignLarge(t *testing.T) {
	a := make([]string, 1_000_000)
	for i := range a {
		a[i] = fmt.Sprint(i)
	}
	b := append([]string(nil), a...)
	b[500000] = "changed"
	ops := Align(a, b)
	n := 0
	for _, o := range ops {
		if o.Kind != '=' {
			n++
		}
	}
	if n != 1 {
		t.Fatal(n)
	}
}
