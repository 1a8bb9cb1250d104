package canon

import (
	"encoding/binary"

	"github.com/pk-tools/pk/pkg/internal/grow"
)

// spanTab holds the byte ranges of the items FastItems records: for each,
// where it starts, how many bytes build it and the memo's size at its
// start. The items of a container are built one after the other, so each
// is written as varints relative to the one before (its start from where
// the previous one ended, its memo count from the previous one's, its
// length), with the absolute values every spanEvery items for Span to
// start from: a list of floats takes three bytes an item, where a record
// of the three took 16 (pk diff of two files of 4 million floats held 32
// bytes an item a file with the fingerprints; docs/engine.md §4, session 47).
type spanTab struct {
	b    []byte   // the varints of each item
	cps  []spanCP // item k*spanEvery's place in b and what it is relative to
	n    int      // items
	base int      // the first item kept (a multiple of spanEvery: dropFront)
	end  int64    // where the last item ended
	memo int32    // the last item's memo count
}

// spanCP is where item k*spanEvery's varints start in b, and the end and
// memo count of the item before it.
type spanCP struct {
	at   int64
	end  int64
	memo int32
}

// spanEvery is how many items a checkpoint covers: Span reads at most
// this many items' varints.
const spanEvery = 64

// add records the next item: it starts at start, is l bytes long, and
// the memo had memo entries at its start.
func (t *spanTab) add(start int64, l uint32, memo int32) {
	if (t.base+t.n)%spanEvery == 0 {
		t.cps = grow.Push(t.cps, spanCP{at: int64(len(t.b)), end: t.end, memo: t.memo})
	}
	var buf [3 * binary.MaxVarintLen64]byte
	k := binary.PutVarint(buf[:], start-t.end)
	k += binary.PutUvarint(buf[k:], uint64(l))
	k += binary.PutVarint(buf[k:], int64(memo)-int64(t.memo))
	t.b = append(t.b, buf[:k]...)
	t.n++
	t.end, t.memo = start+int64(l), memo
}

// at returns item i's start, length and memo count (base <= i).
func (t *spanTab) at(i int) (start int64, l uint32, memo int32) {
	cp := t.cps[(i-t.base)/spanEvery]
	b := t.b[cp.at:]
	end, m := cp.end, cp.memo
	for k := i % spanEvery; ; k-- {
		d, n1 := binary.Varint(b)
		ln, n2 := binary.Uvarint(b[n1:])
		dm, n3 := binary.Varint(b[n1+n2:])
		b = b[n1+n2+n3:]
		start, l, memo = end+d, uint32(ln), int32(int64(m)+dm)
		if k == 0 {
			return start, l, memo
		}
		end, m = start+int64(l), memo
	}
}

// len is the number of items recorded (dropped ones too).
func (t *spanTab) len() int { return t.base + t.n }

// reset forgets every item, keeping the arrays.
func (t *spanTab) reset() {
	t.b, t.cps, t.n, t.base, t.end, t.memo = t.b[:0], t.cps[:0], 0, 0, 0, 0
}

// dropFront forgets the items before item to (rounded down to a
// checkpoint), moving the rest to the front of the arrays; it returns the
// new base.
func (t *spanTab) dropFront(to int) int {
	k := (to - t.base) / spanEvery
	if k <= 0 {
		return t.base
	}
	if k >= len(t.cps) {
		k = len(t.cps) - 1 // (the last checkpoint's items may be under way)
		if k <= 0 {
			return t.base
		}
	}
	at := t.cps[k].at
	t.b = t.b[:copy(t.b, t.b[at:])]
	t.cps = t.cps[:copy(t.cps, t.cps[k:])]
	for i := range t.cps {
		t.cps[i].at -= at
	}
	t.base += k * spanEvery
	t.n -= k * spanEvery
	return t.base
}

// reserve makes room for k more items at about per bytes each.
func (t *spanTab) reserve(k int, per float64) {
	if need := int(float64(k)*per) + 16; need > cap(t.b)-len(t.b) {
		t.b = grow.To(t.b, len(t.b)+need)
	}
	if need := k/spanEvery + 1; need > cap(t.cps)-len(t.cps) {
		t.cps = grow.To(t.cps, len(t.cps)+need)
	}
}

// perItem is the bytes an item took so far (3 before any).
func (t *spanTab) perItem() float64 {
	if t.n == 0 {
		return 3
	}
	return float64(len(t.b)) / float64(t.n)
}
