package write

import (
	"hash/maphash"
	"math/rand/v2"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/internal/huge"

	"github.com/zeebo/xxh3"
)

// values numbers distinct values (vkey) 0, 1, 2 ... in order of first
// appearance: open-addressing tables of slots, each the index (or
// ordinal) of a value plus one (0: empty) beside 32 bits of its hash, so
// that a value not seen before (most strings of a table) costs one probe of
// the slots and no comparison.
//
// With fingerprints, a str or bytes value is told apart from the others by
// a 64-bit fingerprint of its text (xxh3 with a seed drawn for the table,
// the tag choosing the seed): 8 bytes a value, whatever its length,
// instead of its text (a table of two million distinct strs: 16 MB; with
// 128-bit fingerprints, 32 MB. Two of them collide with a chance of about
// 1 in 10^7, which costs a second write). So is a pure tuple, frozenset or
// computed global by its key, its embedding: 'H' and the digest of its
// canonical body (a table of a million distinct tuples: 8 MB, not the 50 MB
// of their keys, ends and indexes). Two distinct values with one fingerprint
// would be numbered as one, and the second written as a fetch of the
// first: the output would then hold the first value where the second was,
// and not have the input's canonical digest (two keys differ only where
// the canonical forms do), which every output written
// with fingerprints is checked against (write.go: Stream, File); the stream
// is then written again without them (streamWriter.retry), and the
// numbering is the same as with fingerprints when none collide. So a
// collision costs a second write, never a wrong output, and the output does
// not depend on the seed. A container that collides with a value inside it
// is the one collision the check cannot tell (the inner value's build and
// the container's count as two builds of one value: both are memoized):
// the writer notes it (emitter.itemsBuilt) and traverses the stream again
// without fingerprints. Other values (globals, dtypes, large payloads by
// digest) are always compared by their texts: two of them can differ in
// how they are written and not in the canonical form (a global in the
// getattr form or not), which the check would not tell.
//
// Values compared by text are kept one after the other in one arena (a tag
// byte, then the text), each ending where ends says, by ordinal among them.
type values struct {
	fingerprints bool // strs, bytes and pure containers told apart by fingerprint (set before the first lookup)
	seed         maphash.Seed
	fseed        uint64
	n            int32 // values numbered

	// values compared by text: slots hold ordinal+1 among them
	slots []uint64 // hash>>32 << 32 | ordinal+1
	arena []byte
	ends  []int   // by ordinal: where the value ends in arena
	index []int32 // by ordinal: the value's index (with fingerprints; else the ordinal)
	// fingerprinted values in the table: fslots hold fp>>32<<32 | their
	// ordinal among them + 1 (the order they came in)
	fslots []uint64
	fps    [][]uint64 // by ordinal, in chunks of fpChunk (no copy of the whole as they grow)
	fidx   [][]int32  // by ordinal, the same chunks: the value's index
	hint   int        // how many fingerprinted values to make room for at first
	nfp    int        // fingerprinted values in the table
	// once, when set, says which fingerprinted values the stream holds
	// once (once.go): those are numbered and never put in the table
	once *onceSketch
	// hot caches the last value looked up at each of 256 places by hash:
	// the few values a table's every row repeats (its dicts' keys) are
	// found without a probe of the slots, which a table of millions of
	// values keeps out of the processor's caches. hot is made when the
	// slots first grow (past 8 values), fhot with fslots: a writer per
	// stream of a million small ones (a million `N.` pickles, or of small
	// dicts) allocated 4 KiB a stream for a cache it did not need.
	hot  *[256]hotValue
	fhot *[256]hotValue // (made with fslots)

	touched uint64 // what touch loaded (kept, so that the loads are made)
}

type hotValue struct {
	h   uint64
	idx int32 // hot: ordinal + 1, fhot: ordinal among the fingerprinted + 1; 0: none
}

// indexOf returns the value's index, numbering it when it is new.
func (t *values) indexOf(v vkey) int32 { return t.lookup(v) }

// indexTemp is indexOf a value whose text is a buffer the caller reuses
// (the table keeps a copy of a new value's text, or its fingerprint).
func (t *values) indexTemp(v vkey) int32 { return t.lookup(v) }

// runKey is the key of a str, bytes or tuple value of a folded run (v,
// its fingerprint fp when queued: decoder.queued), or noKey for a value
// the stream holds once (lookupOnce): it is written and never fetched, as
// a value of its own number would be.
func (t *values) runKey(v vkey, fp uint64, queued bool) key {
	if t.slots == nil {
		t.init()
	}
	if !t.fingerprints || !fingerprinted(v.tag) {
		return key{id: valueID, v: t.lookup(v)}
	}
	if !queued {
		fp = t.fingerprint(v.tag, v.s)
	}
	if idx := t.lookupOnce(fp); idx != heldOnce {
		return key{id: valueID, v: idx}
	}
	return noKey
}

func (t *values) hash(tag byte, s string) uint64 {
	return maphash.String(t.seed, s) ^ uint64(tag)*0x9e3779b97f4a7c15
}

// fingerprinted reports whether values of tag are told apart by
// fingerprint (with fingerprints): strs, bytes, and pure containers by
// their embeddings.
func fingerprinted(tag byte) bool { return tag == 's' || tag == 'y' || tag == 'H' }

// fingerprint is the value's 64-bit fingerprint (the tag picks the seed).
func (t *values) fingerprint(tag byte, s string) uint64 { return fingerprint(t.fseed, tag, s) }

// fingerprint is the 64-bit fingerprint of a str or bytes value with
// seed (the table's, or the sketch's that the table then takes: once.go).
func fingerprint(seed uint64, tag byte, s string) uint64 {
	fp := xxh3.HashStringSeed(s, seed^uint64(tag)*0x9e3779b97f4a7c15)
	if fpCollide {
		fp &= 3
	}
	return fp
}

// fpCollide cuts fingerprints to 2 bits, so that values collide (tests);
// fpRetries counts the streams written again without fingerprints whose
// second write was right, fpNested the traversals made again for a value
// that collided with one inside it (tests).
var (
	fpCollide bool
	fpRetries int
	fpNested  int
)

// at returns the tag and text of the value of ordinal ord among those
// compared by text (a view of the arena).
func (t *values) at(ord int32) (byte, string) {
	start := 0
	if ord > 0 {
		start = t.ends[ord-1]
	}
	b := t.arena[start:t.ends[ord]]
	return b[0], unsafe.String(unsafe.SliceData(b[1:]), len(b)-1)
}

func (t *values) init() {
	t.seed = maphash.MakeSeed()
	t.slots = make([]uint64, 16)
	if t.fingerprints {
		t.fseed = rand.Uint64()
		if t.once != nil {
			t.fseed = t.once.seed // (the fingerprints once counted)
		}
		n := 64
		for n < 2*t.hint && n < 1<<26 {
			n *= 2
		}
		t.fslots = make([]uint64, n)
		huge.Advise(t.fslots) // (probed at random: see growFP)
		t.fhot = new([256]hotValue)
	}
}

// fpChunk is the number of fingerprints a chunk of values.fps holds.
const fpChunk = 1 << 14

// fp is the fingerprint of the fingerprinted value of ordinal ord.
func (t *values) fp(ord int32) *uint64 { return &t.fps[ord/fpChunk][ord%fpChunk] }

// addFP puts fingerprint fp in the next ordinal, for the value of index
// idx, and returns the ordinal. The first chunk grows as values come (a
// stream of a few values, one of a million in a file, allocates a few),
// the others are made whole.
func (t *values) addFP(fp uint64, idx int32) int32 {
	ord := int32(t.nfp)
	t.nfp++
	c := ord / fpChunk
	switch {
	case c == 0:
		if len(t.fps) == 0 {
			t.fps, t.fidx = append(t.fps, make([]uint64, 0, 8)), append(t.fidx, make([]int32, 0, 8))
		}
		t.fps[0], t.fidx[0] = append(t.fps[0], fp), append(t.fidx[0], idx)
		return ord
	case ord%fpChunk == 0:
		t.fps, t.fidx = append(t.fps, make([]uint64, fpChunk)), append(t.fidx, make([]int32, fpChunk))
	}
	t.fps[c][ord%fpChunk], t.fidx[c][ord%fpChunk] = fp, idx
	return ord
}

// sizeHint makes room at first for about the values a stream of n bytes
// holds when most of it is short distinct strs (a table's names: one in
// 50 bytes of a table of small dicts), so that the slots of a large table
// are not rehashed as it grows: at most one slot in 32 bytes of the stream
// (slots never touched cost address space, not memory).
//
// With once, the table holds the values whose counters are two: about as
// many as those counters.
func (t *values) sizeHint(n int64) {
	if t.slots == nil && t.fingerprints && n > 0 {
		t.hint = int(min(n/64, 1<<25))
		if t.once != nil {
			t.hint = min(t.hint, t.once.multi)
		}
	}
}

// fpMin is the size of the smallest stream whose values are fingerprinted:
// a small stream's table is small, and a file of a million small streams
// would pay a second table for each (tests lower it).
var fpMin int64 = 1 << 20

// next numbers a new value.
func (t *values) next() int32 {
	idx := t.n
	t.n++
	return idx
}

func (t *values) lookup(v vkey) int32 {
	if t.slots == nil {
		t.init()
	}
	if t.fingerprints && fingerprinted(v.tag) {
		return t.lookupFP(t.fingerprint(v.tag, v.s))
	}
	h := t.hash(v.tag, v.s)
	var c *hotValue
	if t.hot != nil {
		c = &t.hot[h&255]
		if c.h == h && c.idx > 0 {
			if tag, text := t.at(c.idx - 1); tag == v.tag && text == v.s {
				if !t.fingerprints {
					return c.idx - 1
				}
				return t.index[c.idx-1]
			}
		}
	}
	ord := t.find(v, h)
	if c != nil {
		c.h, c.idx = h, ord+1
	}
	if !t.fingerprints {
		return ord // (the ordinal is the index)
	}
	return t.index[ord]
}

// lookupFP is lookup by fingerprint: its low bits place it in fslots. A
// value once says the stream holds once is numbered and left out of the
// table: no lookup will ask for it again.
func (t *values) lookupFP(fp uint64) int32 {
	if idx := t.lookupOnce(fp); idx != heldOnce {
		return idx
	}
	return t.next()
}

// heldOnce is what lookupOnce returns for a value the stream holds once.
const heldOnce = -1

// lookupOnce is lookupFP, but a value once says the stream holds once is
// not numbered: heldOnce. Nothing will look it up again, so a value that
// no node stands for (a folded run's: the writer sink's decoder) needs no
// number, no memo slot and no build on the tape, which a number would
// give it (a table of two million distinct names held 18 MB of them,
// wsink.go). A node's value is numbered (lookupFP): the writer keeps its
// key by node ID, and a node the stream reaches twice is fetched by it.
func (t *values) lookupOnce(fp uint64) int32 {
	h := fp
	c := &t.fhot[h&255]
	if t.hotFP(fp) {
		return t.idxOf(c.idx - 1)
	}
	if t.once != nil && t.once.single(fp) {
		if onceSeen != nil {
			onceSeen(fp)
		}
		return heldOnce
	}
	mask := uint64(len(t.fslots) - 1)
	tag := h >> 32 << 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.fslots[i]
		if s == 0 {
			idx := t.next()
			ord := t.addFP(fp, idx)
			t.fslots[i] = tag | uint64(ord+1)
			if 4*t.nfp > 3*len(t.fslots) {
				t.growFP()
			}
			c.idx = ord + 1
			return idx
		}
		if s>>32<<32 == tag {
			if ord := int32(uint32(s)) - 1; *t.fp(ord) == fp {
				c.idx = ord + 1
				return t.idxOf(ord)
			}
		}
	}
}

// idxOf is the index of the fingerprinted value of ordinal ord.
func (t *values) idxOf(ord int32) int32 { return t.fidx[ord/fpChunk][ord%fpChunk] }

// touch loads what lookupFP of each of the fingerprints fps will load
// first past the hot cache, its first slot and the fingerprint that slot
// points to, and nothing else: the loads of values read ahead, made in a
// loop of a few instructions each, wait for memory side by side, where the
// lookups, one at a time and each a fingerprint's computation apart, would
// wait for theirs one after the other (a table of millions of values
// misses the processor's caches at almost every probe). A hint only:
// nothing is numbered.
func (t *values) touch(fps []uint64) {
	if t.fslots == nil {
		return
	}
	mask := uint64(len(t.fslots) - 1)
	var slots [touchMax]uint64
	n := 0
	for _, fp := range fps[:min(len(fps), touchMax)] {
		slots[n] = t.fslots[fp&mask]
		n++
	}
	acc := uint64(0)
	if t.once != nil {
		for _, fp := range fps[:n] {
			acc ^= t.once.load(fp)
		}
	}
	for i, slot := range slots[:n] {
		if slot != 0 && slot>>32 == fps[i]>>32 {
			acc ^= *t.fp(int32(uint32(slot)) - 1)
		}
	}
	t.touched ^= acc
}

// touchMax is the most fingerprints one call of touch takes.
const touchMax = 64

// hotFP reports whether the fingerprint fp is in the hot cache.
func (t *values) hotFP(fp uint64) bool {
	c := &t.fhot[fp&255]
	return c.idx > 0 && *t.fp(c.idx - 1) == fp
}

// find is lookup of a value compared by text past the hot cache (h: the
// value's hash); it returns the value's ordinal among those.
func (t *values) find(v vkey, h uint64) int32 {
	mask := uint64(len(t.slots) - 1)
	fp := h >> 32 << 32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			ord := int32(len(t.ends))
			if idx := t.next(); t.fingerprints {
				t.index = append(grow.Room(t.index, 1), idx)
			}
			t.arena = append(append(grow.Room(t.arena, 1+len(v.s)), v.tag), v.s...)
			t.ends = append(grow.Room(t.ends, 1), len(t.arena))
			t.slots[i] = fp | uint64(ord+1)
			if 2*len(t.ends) > len(t.slots) {
				t.grow()
			}
			return ord
		}
		if s>>32<<32 == fp {
			ord := int32(uint32(s)) - 1
			if tag, text := t.at(ord); tag == v.tag && text == v.s {
				return ord
			}
		}
	}
}

// grow doubles the slots of the values compared by text (load at most one
// half).
func (t *values) grow() {
	if t.hot == nil {
		t.hot = new([256]hotValue)
	}
	slots := make([]uint64, 2*len(t.slots))
	mask := uint64(len(slots) - 1)
	for ord := range len(t.ends) {
		h := t.hash(t.at(int32(ord)))
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h>>32<<32 | uint64(ord+1)
	}
	t.slots = slots
}

// growFP doubles fslots (load at most three quarters: a slot is 8 bytes,
// so a probe past a few reads one more cache line at most, and a table of
// two million values sized for 1.6 million, as the hint of a 100 MB table of
// small dicts is, does not double to 64 MB).
func (t *values) growFP() {
	slots := make([]uint64, 2*len(t.fslots))
	huge.Advise(slots)
	mask := uint64(len(slots) - 1)
	for _, s := range t.fslots {
		if s == 0 {
			continue
		}
		h := *t.fp(int32(uint32(s)) - 1)
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	t.fslots = slots
}
