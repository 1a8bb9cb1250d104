package diff

import "github.com/pk-tools/pk/pkg/pickle"

// The walk's records of what it met, by node ID (a view's IDs are dense):
// a slice of 4 bytes a node where a map took about ten times that (the
// walk down a cycle of a million lists records a million of each).

// seenPaths is the first path of each identity node met, by ID.
type seenPaths struct {
	p   []pathRef // 1 + the path; 0: not met
	ids int       // the IDs of the view (reserve), room made at the first set
}

func (s *seenPaths) get(id pickle.ID) (pathRef, bool) {
	if int(id) < len(s.p) && s.p[id] != 0 {
		return s.p[id] - 1, true
	}
	return 0, false
}

func (s *seenPaths) set(id pickle.ID, p pathRef) {
	if int(id) >= len(s.p) {
		s.p = append(s.p, make([]pathRef, max(int(id)+1, 2*len(s.p), s.ids)-len(s.p))...)
	}
	s.p[id] = p + 1
}

// reserve says the view has n IDs (its NodeCount): the record takes room
// for them all when it is first set (grown by doubling as the walk met
// higher IDs, it held up to twice the room, and the copies beside it; a
// walk that sets none, down a tree, makes none).
func (s *seenPaths) reserve(n int) { s.ids = n }

// reset forgets every node: cleared while small (a file of a million
// streams makes none per stream), dropped when large.
func (s *seenPaths) reset() {
	if len(s.p) > 1<<16 {
		s.p = nil
	}
	clear(s.p)
}

// pairSet is the set of the pairs compared: an A node's first partner by
// its ID, the rare further partners of the same node in a map.
type pairSet struct {
	first []int32 // 1 + the B node's ID
	more  map[uint64]struct{}
	ids   int // A's IDs (reserve)
}

// add records the pair (a, b) and reports whether it was recorded before.
func (s *pairSet) add(a, b pickle.ID) (before bool) {
	if int(a) >= len(s.first) {
		s.first = append(s.first, make([]int32, max(int(a)+1, 2*len(s.first), s.ids)-len(s.first))...)
	}
	switch s.first[a] {
	case int32(b) + 1:
		return true
	case 0:
		s.first[a] = int32(b) + 1
		return false
	}
	key := uint64(uint32(a))<<32 | uint64(uint32(b))
	if _, ok := s.more[key]; ok {
		return true
	}
	if s.more == nil {
		s.more = map[uint64]struct{}{}
	}
	s.more[key] = struct{}{}
	return false
}

// reserve is seenPaths.reserve.
func (s *pairSet) reserve(n int) { s.ids = n }

func (s *pairSet) reset() {
	if len(s.first) > 1<<16 {
		s.first = nil
	}
	clear(s.first)
	s.more = nil
}
