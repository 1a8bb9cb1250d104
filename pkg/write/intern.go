package write

import (
	"hash/maphash"
	"unsafe"
)

// values numbers distinct values (vkey) 0, 1, 2 ... in order of first
// appearance: an open-addressing table of slots, each the index of a value
// plus one (0: empty) beside 32 bits of its hash, so that a value not seen
// before (most strings of a table) costs one probe of the slots and no
// comparison. The values themselves are kept one after the other in one
// arena (a tag byte, then the text), each ending where ends says: 8 bytes
// and its text a value, not a string header and an allocation of its own.
type values struct {
	seed  maphash.Seed
	slots []uint64 // hash>>32 << 32 | index+1
	arena []byte
	ends  []int // by index: where the value ends in arena
	// hot caches the last value looked up at each of 256 places by hash:
	// the few values a table's every row repeats (its dicts' keys) are
	// found without a probe of the slots, which a table of millions of
	// values keeps out of the processor's caches
	hot [256]struct {
		h   uint64
		idx int32 // index + 1; 0: none
	}
}

// index returns the value's index, numbering it when it is new.
func (t *values) index(v vkey) int32 { return t.lookup(v) }

// indexTemp is index of a value whose text is a buffer the caller reuses
// (the arena keeps a copy of a new value's text, as it does of any).
func (t *values) indexTemp(v vkey) int32 { return t.lookup(v) }

func (t *values) hash(tag byte, s string) uint64 {
	return maphash.String(t.seed, s) ^ uint64(tag)*0x9e3779b97f4a7c15
}

// at returns value idx's tag and text (a view of the arena).
func (t *values) at(idx int32) (byte, string) {
	start := 0
	if idx > 0 {
		start = t.ends[idx-1]
	}
	b := t.arena[start:t.ends[idx]]
	return b[0], unsafe.String(unsafe.SliceData(b[1:]), len(b)-1)
}

func (t *values) lookup(v vkey) int32 {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
		t.slots = make([]uint64, 64)
	}
	h := t.hash(v.tag, v.s)
	c := &t.hot[h&255]
	if c.h == h && c.idx > 0 {
		if tag, text := t.at(c.idx - 1); tag == v.tag && text == v.s {
			return c.idx - 1
		}
	}
	idx := t.find(v, h)
	c.h, c.idx = h, idx+1
	return idx
}

// find is lookup past the hot cache (h: the value's hash).
func (t *values) find(v vkey, h uint64) int32 {
	mask := uint64(len(t.slots) - 1)
	fp := h >> 32 << 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			idx := int32(len(t.ends))
			t.arena = append(append(t.arena, v.tag), v.s...)
			t.ends = append(t.ends, len(t.arena))
			t.slots[i] = fp | uint64(idx+1)
			if 2*len(t.ends) > len(t.slots) {
				t.grow()
			}
			return idx
		}
		if s>>32<<32 == fp {
			idx := int32(uint32(s)) - 1
			if tag, text := t.at(idx); tag == v.tag && text == v.s {
				return idx
			}
		}
	}
}

// grow doubles the slots (load at most one half).
func (t *values) grow() {
	slots := make([]uint64, 2*len(t.slots))
	mask := uint64(len(slots) - 1)
	for idx := range t.ends {
		h := t.hash(t.at(int32(idx)))
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h>>32<<32 | uint64(idx+1)
	}
	t.slots = slots
}
