package canon

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// dump renders a view as an indented tree (test helper for debugging).
func dump(v *View) string {
	var b strings.Builder
	seen := map[*Node]bool{}
	type it struct {
		n     *Node
		depth int
		label string
	}
	var stack []it
	push := func(n *Node, d int, l string) {
		if n != nil {
			stack = append(stack, it{n, d, l})
		}
	}
	roots := append([]*Node{v.Root()}, v.EffectNodes()...)
	for i := len(roots) - 1; i >= 0; i-- {
		push(roots[i], 0, "")
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := x.n
		ind := strings.Repeat("  ", x.depth)
		if seen[n] && !n.Pure() {
			fmt.Fprintf(&b, "%s%s-> %s\n", ind, x.label, n.Path())
			continue
		}
		seen[n] = true
		fmt.Fprintf(&b, "%s%s%s %s\n", ind, x.label, KindName(n.Kind()), n.Value())
		var kids []it
		for i, c := range n.Items() {
			kids = append(kids, it{c, x.depth + 1, fmt.Sprintf("%d: ", i)})
		}
		for _, e := range n.Entries() {
			kids = append(kids, it{e.Key, x.depth + 1, "k: "}, it{e.Value, x.depth + 2, "v: "})
		}
		if n.Kind() == 13 {
			kids = append(kids, it{n.Func(), x.depth + 1, n.CallForm() + " f: "}, it{n.Args(), x.depth + 1, "args: "})
			if kw := n.Kwargs(); kw != nil {
				kids = append(kids, it{kw, x.depth + 1, "kw: "})
			}
		}
		for _, o := range n.Ops() {
			for _, a := range o.Args {
				kids = append(kids, it{a, x.depth + 1, "op " + o.Name + ": "})
			}
		}
		for i := len(kids) - 1; i >= 0; i-- {
			push(kids[i].n, kids[i].depth, kids[i].label)
		}
	}
	return b.String()
}

func TestDump(t *testing.T) {
	p := os.Getenv("PK_DUMP")
	if p == "" {
		t.Skip("set PK_DUMP=file")
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, path := range strings.Split(p, ",") {
		_ = path
	}
	pf := parse(t, mustRead(t, p))
	for _, s := range pf.Streams {
		v := Normalize(s, Options{})
		fmt.Print(dump(v))
		for _, a := range v.Applied() {
			fmt.Printf("# %s %s %d\n", a.Rule, a.Path, a.Count)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
