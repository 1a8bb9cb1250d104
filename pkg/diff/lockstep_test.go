package diff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// randomGraph is a pickle whose root is a list of n lists and dicts that
// refer to one another at random (cycles, sharing, self-references),
// holding small ints and tuples of those: small enough that graphs made
// apart are often equal in part.
func randomGraph(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x02(")
	dict := make([]bool, n)
	for i := 0; i < n; i++ {
		dict[i] = r.Intn(3) == 0
		if dict[i] {
			b.WriteString("}")
		} else {
			b.WriteString("]")
		}
		fmt.Fprintf(&b, "q%c", byte(i))
	}
	b.WriteString("l")
	var item func(depth int)
	item = func(depth int) {
		switch k := r.Intn(6); {
		case k < 2:
			fmt.Fprintf(&b, "K%c", byte(r.Intn(2)))
		case k < 5 || depth > 1:
			fmt.Fprintf(&b, "h%c", byte(r.Intn(n)))
		default:
			b.WriteString("(")
			for j := r.Intn(3); j > 0; j-- {
				item(depth + 1)
			}
			b.WriteString("t")
		}
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "h%c(", byte(i))
		for j := r.Intn(3); j > 0; j-- {
			if dict[i] {
				fmt.Fprintf(&b, "K%c", byte(j))
			}
			item(0)
		}
		if dict[i] {
			b.WriteString("u0")
		} else {
			b.WriteString("e0")
		}
	}
	b.WriteString(".")
	return b.Bytes()
}

// TestLockstepIsDigestEquality: over random graphs with cycles and
// sharing, lockstep answers for every pair of nodes what canon's digests
// say, asked in a random order of one table pair (its answers kept from
// walk to walk) and each with new tables.
func TestLockstepIsDigestEquality(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pairs, equal := 0, 0
	for round := 0; round < 300; round++ {
		n := 2 + r.Intn(4)
		pa, pb := randomGraph(r, n), randomGraph(r, n)
		va := canon.Normalize(parseBytes(t, "a", pa).Parts[0].Pickle.Streams[0], canon.Options{})
		vb := canon.Normalize(parseBytes(t, "b", pb).Parts[0].Pickle.Streams[0], canon.Options{})
		ia, ib := va.Root().Items(), vb.Root().Items()
		ta, tb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
		order := r.Perm(len(ia) * len(ib))
		for _, k := range order {
			a, b := ia[k/len(ib)], ib[k%len(ib)]
			want := bytes.Equal(a.Digest(), b.Digest())
			eq, known := lockstep(ta, a.Ref(), tb, b.Ref())
			fa, fb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
			eq1, known1 := lockstep(fa, a.Ref(), fb, b.Ref())
			if !known || !known1 || eq != want || eq1 != want {
				t.Fatalf("round %d: %x vs %x, items %d and %d: lockstep %v/%v (fresh %v/%v), digests equal %v",
					round, pa, pb, k/len(ib), k%len(ib), eq, known, eq1, known1, want)
			}
			pairs++
			if want {
				equal++
			}
		}
	}
	if equal < pairs/20 {
		t.Fatalf("%d equal pairs of %d: the test compares too few equal graphs", equal, pairs)
	}
}

// TestDiffPlacesChangeInLongCycle: a cycle of 200,000 lists with one list
// changed deep inside is placed at that list, not reported as the root's
// "could not place" (canon's digest of each list on the cycle encodes the
// whole cycle: the walk down it spent canon's bound on the first few).
func TestDiffPlacesChangeInLongCycle(t *testing.T) {
	const n = 200_000
	mk := func(change bool) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x04]\x94")
		for i := 1; i < n; i++ {
			b.WriteString("]\x94")
		}
		// the innermost list holds the first: l[n-1] = [l0]
		b.WriteString("j\x00\x00\x00\x00a")
		if change {
			b.WriteString("K\x07a")
		}
		for i := 1; i < n; i++ {
			b.WriteString("a")
		}
		b.WriteString(".")
		return b.Bytes()
	}
	r, err := Docs(parseBytes(t, "a", mk(false)), parseBytes(t, "b", mk(true)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Same || len(r.Entries) != 1 {
		t.Fatalf("%d entries: %+v", len(r.Entries), r.Entries)
	}
	e := r.Entries[0]
	if want := "root" + strings.Repeat("[0]", n-1) + "[1]"; e.Path != want || e.Kind != Added {
		t.Fatalf("entry %s at a path of %d bytes, want an addition at %d", e.Kind, len(e.Path), len(want))
	}
}

// graphPickle is a pickle whose root is a list of len(kids) lists, list i
// holding the lists kids[i] names.
func graphPickle(kids [][]int) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x02(")
	for i := range kids {
		fmt.Fprintf(&b, "]q%c", byte(i))
	}
	b.WriteString("l")
	for i, ks := range kids {
		fmt.Fprintf(&b, "h%c(", byte(i))
		for _, k := range ks {
			fmt.Fprintf(&b, "h%c", byte(k))
		}
		b.WriteString("e0")
	}
	b.WriteString(".")
	return b.Bytes()
}

// TestLockstepBrokenPairingKeepsNoVerdictBelow: r = [u, w] with u = [s],
// w = [s] on one side and w = [s2], s2 another empty list, on the other.
// The r pair differs (one list shared where two are), found when the walk
// from it meets s beside s2 under w; the w pair is equal by itself, and is
// still found equal when asked after the r pair.
func TestLockstepBrokenPairingKeepsNoVerdictBelow(t *testing.T) {
	va := canon.Normalize(parseBytes(t, "a", graphPickle([][]int{{3, 1}, {2}, {}, {2}})).Parts[0].Pickle.Streams[0], canon.Options{})
	vb := canon.Normalize(parseBytes(t, "b", graphPickle([][]int{{3, 1}, {4}, {}, {2}, {}})).Parts[0].Pickle.Streams[0], canon.Options{})
	ia, ib := va.Root().Items(), vb.Root().Items()
	ta, tb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
	for _, q := range []struct {
		i    int
		want bool
	}{{0, false}, {1, true}, {3, true}, {0, false}} {
		if eq, known := lockstep(ta, ia[q.i].Ref(), tb, ib[q.i].Ref()); eq != q.want || !known {
			t.Fatalf("item %d: lockstep %v/%v, want %v", q.i, eq, known, q.want)
		}
		if want := bytes.Equal(ia[q.i].Digest(), ib[q.i].Digest()); want != q.want {
			t.Fatalf("item %d: digests equal %v", q.i, want)
		}
	}
}

// FuzzLockstep: on any two pickles whose results are lists, lockstep
// answers for every pair of their items what canon's digests say (when
// both know), asked on shared tables in order and on fresh ones.
func FuzzLockstep(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		f.Add(randomGraph(r, 2+i%4), randomGraph(r, 2+i%3))
	}
	f.Add(graphPickle([][]int{{3, 1}, {2}, {}, {2}}), graphPickle([][]int{{3, 1}, {4}, {}, {2}, {}}))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 4096 || len(b) > 4096 {
			t.Skip()
		}
		view := func(p []byte) *canon.View {
			f, err := pickle.Parse(bytes.NewReader(p), int64(len(p)), "x", canon.ReadOptions(canon.Options{}))
			if err != nil || len(f.Streams) == 0 {
				return nil
			}
			return canon.Normalize(f.Streams[0], canon.Options{})
		}
		va, vb := view(a), view(b)
		if va == nil || vb == nil || va.Root() == nil || vb.Root() == nil ||
			va.Root().Kind() != pickle.KindList || vb.Root().Kind() != pickle.KindList {
			t.Skip()
		}
		ia, ib := va.Root().Items(), vb.Root().Items()
		if len(ia)*len(ib) > 400 {
			t.Skip()
		}
		ta, tb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
		for i, x := range ia {
			for j, y := range ib {
				if x == nil || y == nil {
					continue
				}
				dx, dy := x.Digest(), y.Digest()
				if len(dx) != 32 || len(dy) != 32 {
					continue // canon refused one (its bounds)
				}
				want := bytes.Equal(dx, dy)
				if eq, known := lockstep(ta, x.Ref(), tb, y.Ref()); known && eq != want {
					t.Fatalf("items %d and %d: lockstep %v, digests equal %v", i, j, eq, want)
				}
				fa, fb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
				if eq, known := lockstep(fa, x.Ref(), fb, y.Ref()); known && eq != want {
					t.Fatalf("items %d and %d (fresh tables): lockstep %v, digests equal %v", i, j, eq, want)
				}
			}
		}
	})
}

// parentChain is a pickle whose result is l0 = [l1], each l_k = [l_{k+1},
// l_{k-back}] (l_n holds its back-reference only): a chain of lists each
// holding an ancestor.
func parentChain(n, back int) []byte {
	b := []byte("\x80\x04")
	for k := 0; k <= n; k++ {
		b = binary.LittleEndian.AppendUint32(append(b, ']', 'r'), uint32(k))
	}
	for k := n; k > 0; k-- {
		if k < n {
			b = append(b, 'a')
		}
		b = append(binary.LittleEndian.AppendUint32(append(b, 'j'), uint32(max(k-back, 0))), 'a')
	}
	return append(b, 'a', '.')
}

// TestLockstepFindsNearDifferenceFirst: two chains of 3,000 lists, each
// holding its parent on one side and its grandparent on the other, asked
// level by level from the top as pk diff's walk asks: each walk stops at
// the difference one level below the pair asked. Depth first, each went
// down the chain to its end first (4.5 million pairs here; 20,000 levels
// took 10 s in pk diff).
func TestLockstepFindsNearDifferenceFirst(t *testing.T) {
	const n = 3000
	va := canon.Normalize(parseBytes(t, "a", parentChain(n, 1)).Parts[0].Pickle.Streams[0], canon.Options{})
	vb := canon.Normalize(parseBytes(t, "b", parentChain(n, 2)).Parts[0].Pickle.Streams[0], canon.Options{})
	ta, tb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
	x, y := va.Root(), vb.Root()
	start := lockBudget(ta, tb)
	for k := 0; k < n-2; k++ {
		x, y = x.Items()[0], y.Items()[0]
		if eq, known := lockstep(ta, x.Ref(), tb, y.Ref()); eq || !known {
			t.Fatalf("level %d: lockstep %v/%v", k+1, eq, known)
		}
		if k == 0 {
			start = ta.lock.budget + 1 // (the first walk resets the budget)
		}
	}
	if used := start - ta.lock.budget; used > 20*n {
		t.Fatalf("%d pairs visited for %d levels", used, n)
	}
}

// TestLockstepSidesSwapped: tables asked as A then as B, and back, answer
// as fresh ones do (a table asked as B keeps no answers).
func TestLockstepSidesSwapped(t *testing.T) {
	va := canon.Normalize(parseBytes(t, "a", graphPickle([][]int{{3, 1}, {2}, {}, {2}})).Parts[0].Pickle.Streams[0], canon.Options{})
	vb := canon.Normalize(parseBytes(t, "b", graphPickle([][]int{{3, 1}, {4}, {}, {2}, {}})).Parts[0].Pickle.Streams[0], canon.Options{})
	ia, ib := va.Root().Items(), vb.Root().Items()
	ta, tb := newFPTable(canon.SHA256, va.Root()), newFPTable(canon.SHA256, vb.Root())
	for k := 0; k < 3; k++ {
		if eq, known := lockstep(ta, ia[0].Ref(), tb, ib[0].Ref()); eq || !known {
			t.Fatalf("round %d, A then B: %v/%v", k, eq, known)
		}
		if eq, known := lockstep(tb, ib[1].Ref(), ta, ia[1].Ref()); !eq || !known {
			t.Fatalf("round %d, B then A: %v/%v", k, eq, known)
		}
	}
}
