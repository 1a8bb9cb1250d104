package diff

import (
	"math/rand/v2"
	"testing"
)

// TestPathRuns holds the path table, with its runs, to the strings it
// stands for: a walk's pushes (mostly down a chain of a few repeating
// edges, sometimes from an earlier path), pins of the paths taken, and
// every accessor against the paths' strings.
func TestPathRuns(t *testing.T) {
	edges := []string{"[0]", "[1]", ".a", ".__reduce__[1]", "['k']"}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var p pathTable
		p.reset(nil)
		var str []string // by ref
		var par []pathRef
		var depth []int
		push := func(parent pathRef, e string) {
			r := p.push(parent, e)
			if int(r) != len(str) {
				t.Fatalf("seed %d: push gave ref %d, want %d", seed, r, len(str))
			}
			s, d := e, 1
			if parent >= 0 {
				s, d = str[parent]+e, depth[parent]+1
			}
			str, par, depth = append(str, s), append(par, parent), append(depth, d)
		}
		push(-1, "root")
		period := 1 + rng.IntN(maxPeriod+1)
		for range 3000 {
			last := pathRef(len(str) - 1)
			switch x := rng.IntN(100); {
			case x < 80: // down the chain, mostly repeating its period
				e := edges[rng.IntN(len(edges))]
				if rng.IntN(10) > 0 && depth[last] > period {
					// the edge period levels up
					a := last
					for range period - 1 {
						a = par[a]
					}
					e = str[a][len(str[par[a]]):]
				}
				push(last, e)
			case x < 90: // a sibling, or a path from anywhere
				push(pathRef(rng.IntN(len(str))), edges[rng.IntN(len(edges))])
			case x < 95:
				p.pin(last)
			default:
				period = 1 + rng.IntN(maxPeriod+1)
			}
		}
		for r := range pathRef(len(str)) {
			if got := p.String(r); got != str[r] {
				t.Fatalf("seed %d: String(%d) = %q, want %q", seed, r, got, str[r])
			}
			if got := p.With(r, "[9]"); got != str[r]+"[9]" {
				t.Fatalf("seed %d: With(%d) = %q", seed, r, got)
			}
			if got := p.parent(r); got != par[r] {
				t.Fatalf("seed %d: parent(%d) = %d, want %d", seed, r, got, par[r])
			}
			h, whole := p.Head(r)
			want, wantWhole := str[r], depth[r] <= headEdges
			if !wantWhole {
				a := r
				for depth[a] > headEdges {
					a = par[a]
				}
				want = str[a]
			}
			if h != want || whole != wantWhole {
				t.Fatalf("seed %d: Head(%d) = %q %v, want %q %v", seed, r, h, whole, want, wantWhole)
			}
			y := pathRef(rng.IntN(len(str)))
			if got := p.Same(r, y); got != (str[r] == str[y]) {
				t.Fatalf("seed %d: Same(%q, %q) = %v", seed, str[r], str[y], got)
			}
		}
		if len(p.runs) == 0 {
			t.Fatalf("seed %d: no run", seed)
		}
	}
}

// TestPathRunDeep: a walk down a million levels of list((x,),) keeps its
// paths in a run, not in a node a path.
func TestPathRunDeep(t *testing.T) {
	var p pathTable
	p.reset(nil)
	r := p.root("root")
	for range 1_000_000 {
		r = p.child(r, ".__reduce__[1]")
		r = p.child(r, "[0]")
		r = p.child(r, "[0]")
	}
	if p.n > 16 || len(p.runs) != 1 {
		t.Fatalf("%d plain paths and %d runs for a chain of one pattern", p.n, len(p.runs))
	}
	if s := p.String(r); len(s) != len("root")+1_000_000*len(".__reduce__[1][0][0]") {
		t.Fatalf("path of %d bytes", len(s))
	}
}
