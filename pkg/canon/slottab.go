package canon

import "github.com/pk-tools/pk/pkg/pickle"

// slotTab maps node IDs to int32 values while few nodes have one: an
// open-addressed table (8 bytes an entry, at most 3/4 full) where a
// table by node ID would cost 4 bytes a node of the view. It holds the
// slots of pure digests (encState.ptab: 7,200 of the 380,000 nodes of a
// cloudpickle state) and, in the main encoder of a large view, the
// ordinals of the nodes it may meet again (encoder.ordTab). Past its bound
// (max entries) set reports false, and the caller gives way to the table
// by node ID.
type slotTab struct {
	ents  []slotEnt
	shift uint8 // 32 - log2(len(ents))
	n     int
	max   int
}

// slotEnt is one entry: id is the node's ID + 1 (0: empty).
type slotEnt struct {
	id  int32
	val int32
}

const slotTabMin = 256

// slotTabFrom is the least view (nodes) whose pure slots and main
// ordinals start compact: below, the table by node ID is at most 16 KB
// (a variable: tests lower it).
var slotTabFrom = 4096

// newSlotTab returns a table that holds entries without growing and at
// most max entries.
func newSlotTab(entries, max int) *slotTab {
	size := slotTabMin
	for 3*size < 4*entries {
		size *= 2
	}
	t := &slotTab{ents: make([]slotEnt, size), max: max}
	t.shift = uint8(32 - log2(size))
	return t
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func (t *slotTab) home(n pickle.ID) uint32 {
	return (uint32(n) * 0x9E3779B1) >> t.shift
}

// get returns n's value.
func (t *slotTab) get(n pickle.ID) (int32, bool) {
	mask := uint32(len(t.ents) - 1)
	for i := t.home(n); ; i = (i + 1) & mask {
		en := &t.ents[i]
		if en.id == 0 {
			return 0, false
		}
		if en.id == int32(n)+1 {
			return en.val, true
		}
	}
}

// set sets n's value; false when n is new and the table holds max entries
// (nothing set then).
func (t *slotTab) set(n pickle.ID, val int32) bool {
	mask := uint32(len(t.ents) - 1)
	for i := t.home(n); ; i = (i + 1) & mask {
		en := &t.ents[i]
		if en.id == int32(n)+1 {
			en.val = val
			return true
		}
		if en.id != 0 {
			continue
		}
		if t.n >= t.max {
			return false
		}
		if 4*(t.n+1) > 3*len(t.ents) {
			t.grow()
			return t.set(n, val)
		}
		*en = slotEnt{id: int32(n) + 1, val: val}
		t.n++
		return true
	}
}

// grow doubles the table.
func (t *slotTab) grow() {
	old := t.ents
	t.ents, t.shift, t.n = make([]slotEnt, 2*len(old)), t.shift-1, 0
	for _, en := range old {
		if en.id != 0 {
			t.set(pickle.ID(en.id-1), en.val)
		}
	}
}

// each calls fn with every entry.
func (t *slotTab) each(fn func(n pickle.ID, val int32)) {
	for _, en := range t.ents {
		if en.id != 0 {
			fn(pickle.ID(en.id-1), en.val)
		}
	}
}
