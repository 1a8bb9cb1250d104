package canon

import (
	"bytes"
	"os"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestOwnedIsOwnershipSum: Node.Owned, which adds a child without items,
// call parts or operations at once instead of walking it, gives the sum of
// Self over the ownership tree that a walk of every owned child gives, for
// the nodes of the corpus's views (up to 4,096 a stream). And a view that
// is never encoded whole holds no pslot table after its effects are found
// (encState.slots: made at its first write).
func TestOwnedIsOwnershipSum(t *testing.T) {
	files := testfile.Sample(fastCorpus(t), 3)
	checked := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), p, ReadOptions(Options{}))
		if err != nil {
			continue
		}
		for _, s := range f.Streams {
			v := Normalize(s, Options{})
			root := v.Root()
			if root == nil {
				continue
			}
			st := v.s
			for id := pickle.ID(0); int(id) < st.Len() && id < 4096; id++ {
				n := root.Under(id)
				if n == nil || n.src >= v.base {
					continue
				}
				if got, want := n.Owned(), ownedWalk(st, n.src); got != want {
					t.Errorf("%s node %d: Owned %d, the walk of every owned child %d", p, n.src, got, want)
				}
				checked++
			}
			v.EffectPlaces()
			if v.enc != nil && v.enc.pslot != nil && v.enc.mains == 0 && v.enc.pdig.n == 0 {
				t.Errorf("%s: a view with no digest and no encoding holds a pslot table", p)
			}
		}
	}
	if checked == 0 {
		t.Skip("no corpus")
	}
}

// ownedWalk is Owned as a walk of every owned child.
func ownedWalk(s *pickle.Store, n pickle.ID) int64 {
	var total int64
	var buf []pickle.ID
	stack := []pickle.ID{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		total += s.Self(x)
		buf = s.Children(x, buf[:0])
		for _, ch := range buf {
			if ch >= 0 && ch != x && s.Owner(ch) == x {
				stack = append(stack, ch)
			}
		}
	}
	return total
}
