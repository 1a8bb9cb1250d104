package pickle

import (
	"fmt"

	"github.com/pk-tools/pk/pkg/internal/spill"
)

// Owned returns the stream bytes of node id's subtree in the ownership
// tree: its Self and that of every node it owns, down (what building it
// took; a shared node counts where it was built). 0 in a lean store or one
// whose sides are out (SidesOut). The walk has its own stack, so any depth
// takes no recursion.
func (s *Store) Owned(id ID) int64 {
	var total int64
	var buf []ID
	stack := []ID{id}
	for steps := 0; len(stack) > 0 && steps < 1<<28; steps++ { // ownership is a tree; the cap is a guard
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		total += s.Self(x)
		buf = s.Children(x, buf[:0])
		for _, ch := range buf {
			if ch < 0 || ch == x || s.Owner(ch) != x {
				continue
			}
			if s.Kind(ch) != KindCall && s.NItems(ch) == 0 && s.NMuts(ch) == 0 {
				// (a node with no children, added at once: down a chain of
				// objects each owning an argument tuple the stack held every
				// tuple, 22 MB allocated over a ring of 500,000 objects a side)
				total += s.Self(ch)
				continue
			}
			stack = append(stack, ch)
		}
	}
	return total
}

// SidesOut moves the store's sides (each node's Self and owner, 8 bytes a
// node) out of memory into a temporary file in dir (os.TempDir when ""),
// for a consumer that holds the store a while without reading them (pk
// diff's walk of two large streams, which reads them only for its entries'
// sizes, after the walk: a million levels of calls a side, 24 MB each).
// Until SidesIn, Self reads 0, Owner NoID and Owned 0, as in a lean store.
// On an error the sides stay where they were. A store that is lean, empty
// or out already is left as it is.
func (s *Store) SidesOut(dir string) error {
	if s.out != nil || s.Lean() || len(s.sides) == 0 {
		return nil
	}
	o, err := spill.Out(s.sides, dir)
	if err != nil {
		return err
	}
	s.out, s.sides = o, nil
	return nil
}

// SidesIn brings back the sides SidesOut moved out (nothing when they are
// not out). On an error the store has no sides (Self 0, Owner NoID).
func (s *Store) SidesIn() error {
	o := s.out
	if o == nil {
		return nil
	}
	s.out = nil
	sides, err := spill.In[side](o)
	if err != nil {
		return fmt.Errorf("the sides of a store: %w", err)
	}
	s.sides = sides
	return nil
}

// SidesAreOut reports whether the store's sides are out (SidesOut).
func (s *Store) SidesAreOut() bool { return s.out != nil }
