package canon

import (
	"math"

	"github.com/pk-tools/pk/pkg/pickle"
)

// ordTab holds the ordinals of the outermost isolated encoder (encState)
// while they are few: an open-addressed table keyed by node ID, whose
// entries of another generation are empty (an encoding only adds, so a
// probe stops at the first of them), so that a new encoding clears
// nothing. The isolated encodings of a view (pk canon's class digests, a
// set of mutable objects' sort keys) mostly number a few hundred nodes
// each; the dense tables by node ID they used (8 bytes a node of the view:
// 7 MB on a 5 MB cloudpickle state) were held to the end of the writer's
// walk. Past a quarter of the dense tables' size the table gives way to
// them (spill), so that it never costs more than they would.
type ordTab struct {
	ents  []ordEnt
	shift uint8  // 32 - log2(len(ents))
	gen   uint32 // the generation n counts
	n     int    // entries of generation gen
}

type ordEnt struct {
	id  pickle.ID
	gen uint32
	val int32
}

const ordTabMin = 256

// ordTabFrom is the least view (nodes) whose isolated encodings start
// with an ordTab: below, the dense tables are at most 32 KB (a variable:
// tests lower it).
var ordTabFrom int32 = 4096

// ordDense (tests) makes the isolated encodings use the tables by node ID
// from the first (ordGen, ordVal, isoSlot), as before ordTab.
var ordDense bool

func newOrdTab() *ordTab {
	return &ordTab{ents: make([]ordEnt, ordTabMin), shift: 32 - 8}
}

func (t *ordTab) home(n pickle.ID) uint32 {
	return (uint32(n) * 0x9E3779B1) >> t.shift
}

// get returns n's ordinal in generation gen.
func (t *ordTab) get(n pickle.ID, gen uint32) (int32, bool) {
	mask := uint32(len(t.ents) - 1)
	for i := t.home(n); ; i = (i + 1) & mask {
		en := &t.ents[i]
		if en.gen != gen {
			return 0, false
		}
		if en.id == n {
			return en.val, true
		}
	}
}

// set sets n's ordinal in generation gen; it reports false when the table
// is full and should give way to the dense tables (nothing set then).
func (t *ordTab) set(n pickle.ID, gen uint32, val int32, nsyn int32) bool {
	if gen != t.gen {
		t.gen, t.n = gen, 0
	}
	mask := uint32(len(t.ents) - 1)
	for i := t.home(n); ; i = (i + 1) & mask {
		en := &t.ents[i]
		if en.gen != gen {
			if 2*(t.n+1) > len(t.ents) {
				if !t.grow(gen, nsyn) {
					return false
				}
				return t.set(n, gen, val, nsyn)
			}
			*en = ordEnt{id: n, gen: gen, val: val}
			t.n++
			return true
		}
		if en.id == n {
			en.val = val
			return true
		}
	}
}

// grow doubles the table, keeping generation gen's entries; false when
// the doubled table would pass a quarter of the dense tables' 8 bytes a
// node.
func (t *ordTab) grow(gen uint32, nsyn int32) bool {
	size := 2 * len(t.ents)
	if int64(size)*12 > 2*int64(nsyn) {
		return false
	}
	old := t.ents
	t.ents, t.shift, t.n = make([]ordEnt, size), t.shift-1, 0
	for _, en := range old {
		if en.gen == gen {
			t.set(en.id, gen, en.val, math.MaxInt32)
		}
	}
	return true
}

// reset starts generation 1 over (the generations wrapped).
func (t *ordTab) reset() {
	clear(t.ents)
	t.gen, t.n = 0, 0
}

// ordSet sets n's ordinal in the outermost isolated encoder's tables (e.gen
// != 0), moving them to the dense tables when the compact one is full.
func (e *encoder) ordSet(n pickle.ID, val int32) {
	st := e.v.enc
	if st.ordGen == nil {
		if st.ordTab.set(n, e.gen, val, e.v.nsyn) {
			return
		}
		st.ordGen, st.ordVal = make([]uint32, e.v.nsyn), make([]int32, e.v.nsyn)
		for _, en := range st.ordTab.ents {
			if en.gen == e.gen {
				st.ordGen[en.id], st.ordVal[en.id] = en.gen, en.val
			}
		}
		st.ordTab = nil
	}
	st.ordGen[n], st.ordVal[n] = e.gen, val
}
