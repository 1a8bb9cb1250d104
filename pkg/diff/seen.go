package diff

import "github.com/pk-tools/pk/pkg/pickle"

// The walk's records of what it met, by node ID (a view's IDs are dense):
// a slice of 4 bytes a node where a map took about ten times that (the
// walk down a cycle of a million lists records a million of each); a map
// while they hold few (dense), as most walks record only the nodes
// referenced twice.

// seenPaths is the first path of each identity node met, by ID.
type seenPaths struct {
	p   []pathRef // 1 + the path; 0: not met
	few map[pickle.ID]pathRef
	ids int // the IDs of the view (reserve), room made when the map fills
}

func (s *seenPaths) get(id pickle.ID) (pathRef, bool) {
	if s.p == nil {
		p, ok := s.few[id]
		return p, ok
	}
	if int(id) < len(s.p) && s.p[id] != 0 {
		return s.p[id] - 1, true
	}
	return 0, false
}

func (s *seenPaths) set(id pickle.ID, p pathRef) {
	if s.p == nil {
		if !dense(len(s.few), s.ids) {
			if s.few == nil {
				s.few = map[pickle.ID]pathRef{}
			}
			s.few[id] = p
			return
		}
		s.p = make([]pathRef, max(int(id)+1, s.ids))
		for k, v := range s.few {
			s.grow(k)
			s.p[k] = v + 1
		}
		s.few = nil
	}
	s.grow(id)
	s.p[id] = p + 1
}

// grow gives s.p room for id.
func (s *seenPaths) grow(id pickle.ID) {
	if int(id) >= len(s.p) {
		s.p = append(s.p, make([]pathRef, max(int(id)+1, 2*len(s.p), s.ids)-len(s.p))...)
	}
}

// dense reports whether a record by ID that holds n of a view's ids
// nodes in a map takes a slice of them all instead: past a sixteenth of
// them (a map entry is 10-20 bytes, the slice 4 a node). Most walks
// record few (only the nodes referenced twice are, a ring's first node),
// and the slice of a million-node view is 4 MB a record.
func dense(n, ids int) bool { return n >= 1024 && 16*n >= ids }

// reserve says the view has n IDs (its NodeCount): the record takes room
// for them all when it holds many (grown by doubling as the walk met
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
	if len(s.few) > 1<<10 {
		s.few = nil
	}
	clear(s.few)
}

// pairSet is the set of the pairs compared: an A node's first partner by
// its ID (in a map while few, as seenPaths), the rare further partners of
// the same node in a map.
type pairSet struct {
	first []int32 // 1 + the B node's ID
	few   map[pickle.ID]int32
	more  map[uint64]struct{}
	ids   int // A's IDs (reserve)
}

// add records the pair (a, b) and reports whether it was recorded before.
func (s *pairSet) add(a, b pickle.ID) (before bool) {
	switch first := s.firstOf(a); first {
	case int32(b) + 1:
		return true
	case 0:
		s.setFirst(a, int32(b)+1)
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

// firstOf is 1 + a's first partner, 0 for none.
func (s *pairSet) firstOf(a pickle.ID) int32 {
	if s.first == nil {
		return s.few[a]
	}
	if int(a) < len(s.first) {
		return s.first[a]
	}
	return 0
}

// setFirst records a's first partner (1 + its ID).
func (s *pairSet) setFirst(a pickle.ID, p int32) {
	if s.first == nil {
		if !dense(len(s.few), s.ids) {
			if s.few == nil {
				s.few = map[pickle.ID]int32{}
			}
			s.few[a] = p
			return
		}
		s.first = make([]int32, max(int(a)+1, s.ids))
		for k, v := range s.few {
			s.grow(k)
			s.first[k] = v
		}
		s.few = nil
	}
	s.grow(a)
	s.first[a] = p
}

// grow gives s.first room for a.
func (s *pairSet) grow(a pickle.ID) {
	if int(a) >= len(s.first) {
		s.first = append(s.first, make([]int32, max(int(a)+1, 2*len(s.first), s.ids)-len(s.first))...)
	}
}

// reserve is seenPaths.reserve.
func (s *pairSet) reserve(n int) { s.ids = n }

func (s *pairSet) reset() {
	if len(s.first) > 1<<16 {
		s.first = nil
	}
	clear(s.first)
	if len(s.few) > 1<<10 {
		s.few = nil
	}
	clear(s.few)
	s.more = nil
}
