package canon

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestDedupeLargeIsSmall: dedupeLarge (a sort of the equality keys, used
// past 16 items) keeps what dedupeSmall (each item against those kept)
// keeps, with the same first items, last values and order, over random
// items: many duplicates, keys that share their first 8 bytes and differ
// after, keys shorter than 8 bytes, identity items met again by node, and
// entries of folded runs (whose later duplicate replaces the node). It
// fails if a run is merged out of stream order, a prefix tie is taken for
// equality, or the output leaves stream order.
func TestDedupeLargeIsSmall(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for trial := 0; trial < 400; trial++ {
		n := 17 + r.Intn(600)
		distinct := 1 + r.Intn(n)
		keys := make([][]byte, distinct)
		for i := range keys {
			switch r.Intn(3) {
			case 0: // short
				keys[i] = []byte(fmt.Sprint(r.Intn(40)))
			case 1: // a shared 8-byte head, a differing tail
				keys[i] = []byte(fmt.Sprintf("Hsamehead%d", r.Intn(60)))
			default:
				keys[i] = []byte(fmt.Sprintf("i+%08d", r.Intn(1000)))
			}
		}
		ks := make([]keyed, n)
		pureK := make([]bool, n)
		var eq []byte
		off := []int{0}
		for i := range ks {
			node := pickle.ID(r.Intn(50))
			if r.Intn(10) == 0 {
				node = entFirst - pickle.ID(r.Intn(5)) // an entry of a folded run
			}
			ks[i] = keyed{node: node, val: pickle.ID(1000 + i), pos: i, vpos: i}
			// (purity belongs to the node: a node is pure, or an
			// identity or NaN met again only as itself)
			pureK[i] = isEnt(node) || node%6 != 0
			if pureK[i] {
				eq = append(eq, keys[r.Intn(distinct)]...)
			}
			off = append(off, len(eq))
		}
		key := func(i int) []byte { return eq[off[i]:off[i+1]] }
		small := dedupeSmall(slices.Clone(ks), pureK, key)
		large := dedupeLarge(slices.Clone(ks), pureK, key, &scratch{})
		if !slices.EqualFunc(small, large, func(a, b keyed) bool {
			return a.node == b.node && a.val == b.val && a.pos == b.pos && a.vpos == b.vpos
		}) {
			t.Fatalf("trial %d (%d items): dedupeLarge kept %d items, dedupeSmall %d:\n%v\n%v", trial, n, len(large), len(small), large, small)
		}
	}
}

// TestSortByKeyIsStable: sortByKey (positions sorted beside 8-byte key
// prefixes) gives the order of a stable sort by key, on keys with equal
// prefixes and different tails, keys shorter than 8 bytes, and equal keys
// (whose stream order must stay).
func TestSortByKeyIsStable(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	sc := &scratch{}
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.Intn(500)
		ks := make([]keyed, n)
		for i := range ks {
			var k []byte
			switch r.Intn(4) {
			case 0:
				k = []byte(fmt.Sprint(r.Intn(30)))
			case 1:
				k = []byte(fmt.Sprintf("Hsamehead%d", r.Intn(40)))
			case 2:
				k = []byte{byte(r.Intn(3)), 0, 0}[:r.Intn(4)] // zero bytes: a prefix padded alike
			default:
				k = []byte(fmt.Sprintf("i+%08d", r.Intn(300)))
			}
			ks[i] = keyed{key: k, node: pickle.ID(i), pos: i}
		}
		want := slices.Clone(ks)
		slices.SortStableFunc(want, func(a, b keyed) int { return bytes.Compare(a.key, b.key) })
		sortByKey(ks, sc)
		for i := range ks {
			if ks[i].node != want[i].node {
				t.Fatalf("trial %d (%d keys): at %d node %d (key %q), a stable sort has %d (key %q)", trial, n, i, ks[i].node, ks[i].key, want[i].node, want[i].key)
			}
		}
	}
}
