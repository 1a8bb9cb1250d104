package diff

import "github.com/pk-tools/pk/pkg/pickle"

// The walk's records of what it met, by node ID (a view's IDs are dense):
// a slice of 4 bytes a node where a map took about ten times that (the
// walk down a cycle of a million lists records a million of each); a map
// while they hold few (dense), as most walks record only the nodes
// referenced twice.

// byID holds 1 + an int32 value by node ID (0: none): in a map while it
// holds few of the view's IDs, in a slice of them all once dense.
type byID struct {
	p   []int32
	few map[pickle.ID]int32
	ids int // the IDs of the view (reserve), room made when the map fills
}

// get returns 1 + id's value, 0 for none.
func (t *byID) get(id pickle.ID) int32 {
	if t.p == nil {
		return t.few[id]
	}
	if int(id) < len(t.p) {
		return t.p[id]
	}
	return 0
}

// set records 1 + id's value, v.
func (t *byID) set(id pickle.ID, v int32) {
	if t.p == nil {
		if !dense(len(t.few), t.ids) {
			if t.few == nil {
				t.few = map[pickle.ID]int32{}
			}
			t.few[id] = v
			return
		}
		t.p = make([]int32, max(int(id)+1, t.ids))
		for k, w := range t.few {
			t.grow(k)
			t.p[k] = w
		}
		t.few = nil
	}
	t.grow(id)
	t.p[id] = v
}

// grow gives t.p room for id.
func (t *byID) grow(id pickle.ID) {
	if int(id) >= len(t.p) {
		t.p = append(t.p, make([]int32, max(int(id)+1, 2*len(t.p), t.ids)-len(t.p))...)
	}
}

// seenPaths is the first path of each identity node met, by ID.
type seenPaths struct{ byID }

func (s *seenPaths) get(id pickle.ID) (pathRef, bool) {
	p := s.byID.get(id)
	return pathRef(p - 1), p != 0
}

func (s *seenPaths) set(id pickle.ID, p pathRef) { s.byID.set(id, int32(p)+1) }

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
func (t *byID) reserve(n int) { t.ids = n }

// reset forgets every node: cleared while small (a file of a million
// streams makes none per stream), dropped when large.
func (t *byID) reset() {
	if len(t.p) > 1<<16 {
		t.p = nil
	}
	clear(t.p)
	if len(t.few) > 1<<10 {
		t.few = nil
	}
	clear(t.few)
}

// pairSet is the set of the pairs compared: an A node's first partner by
// its ID (1 + the B node's ID, in a byID), the rare further partners of
// the same node in a map.
type pairSet struct {
	first byID
	more  map[uint64]struct{}
}

// add records the pair (a, b) and reports whether it was recorded before.
func (s *pairSet) add(a, b pickle.ID) (before bool) {
	switch first := s.first.get(a); first {
	case int32(b) + 1:
		return true
	case 0:
		s.first.set(a, int32(b)+1)
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

// reserve is byID.reserve.
func (s *pairSet) reserve(n int) { s.first.reserve(n) }

func (s *pairSet) reset() {
	s.first.reset()
	s.more = nil
}
