package write

import (
	"hash/maphash"
	"strings"
)

// values numbers distinct values (vkey) 0, 1, 2 ... in order of first
// appearance: an open-addressing table of slots, each the index of a value
// plus one (0: empty) beside 32 bits of its hash, so that a value not seen
// before (most strings of a table) costs one probe of the slots and no
// comparison.
type values struct {
	seed  maphash.Seed
	slots []uint64 // hash>>32 << 32 | index+1
	keys  []vkey
}

// index returns the value's index, numbering it when it is new.
func (t *values) index(v vkey) int32 { return t.lookup(v, false) }

// indexTemp is index of a value whose text is a buffer the caller reuses:
// a new value keeps a copy of it.
func (t *values) indexTemp(v vkey) int32 { return t.lookup(v, true) }

func (t *values) lookup(v vkey, temp bool) int32 {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
		t.slots = make([]uint64, 64)
	}
	h := maphash.String(t.seed, v.s) ^ uint64(v.tag)*0x9e3779b97f4a7c15
	mask := uint64(len(t.slots) - 1)
	fp := h >> 32 << 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			idx := int32(len(t.keys))
			if temp {
				v.s = strings.Clone(v.s)
			}
			t.keys = append(t.keys, v)
			t.slots[i] = fp | uint64(idx+1)
			if 2*len(t.keys) > len(t.slots) {
				t.grow()
			}
			return idx
		}
		if s>>32<<32 == fp {
			idx := int32(uint32(s)) - 1
			if k := t.keys[idx]; k.tag == v.tag && k.s == v.s {
				return idx
			}
		}
	}
}

// grow doubles the slots (load at most one half).
func (t *values) grow() {
	slots := make([]uint64, 2*len(t.slots))
	mask := uint64(len(slots) - 1)
	for idx, k := range t.keys {
		h := maphash.String(t.seed, k.s) ^ uint64(k.tag)*0x9e3779b97f4a7c15
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h>>32<<32 | uint64(idx+1)
	}
	t.slots = slots
}
