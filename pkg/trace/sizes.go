package trace

import (
	"math"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// sizes holds the inclusive size of every node of a stream, indexed by ID:
// 4 bytes a node when every size fits in 32 bits (the sum of the nodes' own
// bytes and of the bytes attached to them is below 4 GiB, as in every file
// pk has met), 8 otherwise. It is the largest table the tree keeps beside
// the store (a 32-byte record a node), so the half matters.
type sizes struct {
	small []uint32
	large []int64
}

// sizesFor returns zeroed sizes for the n nodes of s, whose sizes sum the
// nodes' Self and add; reuse's arrays are reused when large enough.
func sizesFor(s *pickle.Store, n int, add map[pickle.ID]int64, reuse sizes) sizes {
	var total int64
	for id := range pickle.ID(n) {
		total += s.Self(id)
	}
	for _, v := range add {
		total += max(v, 0)
	}
	if total <= math.MaxUint32 {
		return sizes{small: grow.Reuse(reuse.small, n)}
	}
	return sizes{large: grow.Reuse(reuse.large, n)}
}

// sizesOf wraps a table made elsewhere (the fast paths' synthetic stores).
func sizesOf(v []int64) sizes { return sizes{large: v} }

func (z *sizes) len() int {
	if z.large != nil {
		return len(z.large)
	}
	return len(z.small)
}

func (z *sizes) at(id pickle.ID) int64 {
	if z.large != nil {
		return z.large[id]
	}
	return int64(z.small[id])
}

func (z *sizes) set(id pickle.ID, v int64) {
	if z.large != nil {
		z.large[id] = v
	} else {
		z.small[id] = uint32(v)
	}
}

func (z *sizes) add(id pickle.ID, v int64) { z.set(id, z.at(id)+v) }

func (z *sizes) clear() {
	clear(z.small)
	clear(z.large)
}
