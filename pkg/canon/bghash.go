package canon

// The stream digest beside the encoding: on two CPUs a long stream's
// SHA-256 runs on a goroutine of its own while the encoder goes on, and
// so do the digests of the pure tuples the fast hash streams (lazySum).

import (
	"hash"
	"sync"
)

// bgChunk is what bgHash gathers before it hands a chunk to a goroutine:
// large enough that starting one costs nothing beside digesting it
// (about 30 us for SHA-256), small enough that the two buffers are no
// memory to speak of. A stream's first chunk is digested on the caller's
// goroutine, as without bgHash, so a short stream costs nothing more. Both
// buffers are written whole, and they are live at pk hash's peak on a
// code-carrying state (the end of the digest, beside the store, the view
// and the encoder's tables): at 256 KB they were 0.5 MB of it (cloudpickle
// state, 6 interleaved runs: 27.8-28.1 -> 27.3-27.8 MB at 64 KB; the
// instructions within 0.1 %).
const bgChunk = 64 << 10

// bgHash is a hash.Hash that digests full chunks of what it is written on
// another goroutine, one chunk at a time and in order, so the digest is
// the one h gives the same bytes. It holds two buffers: the one being
// filled and the one being digested; a writer that fills its buffer
// before the other is done waits for it. Sum, Reset and stop wait for the
// chunk in flight, so no goroutine outlives them.
type bgHash struct {
	h    hash.Hash
	buf  []byte // being filled
	idle []byte // the other buffer, when no chunk is in flight
	sync int    // bytes digested here, up to bgChunk, before the first hand-over
	busy sync.WaitGroup
	// the lazy digests of buf (writeSums), their bodies, and the other
	// buffer's storage for them
	sums, idleSums     []lazySum
	bodies, idleBodies []byte
	algo               Algo // of the lazy digests (set once, before the first writeSums)
}

// lazySum is a digest written into a buffer just before the buffer is
// digested: the algo.Size() bytes at pos are to be the digest of
// bodies[lo:hi]. The fast hash streams a table's pure tuples this way
// ('H' and the digest of the tuple's body), so that the tuples' digests,
// a third of the CPU of a table of tuples, run on the hashing goroutine.
type lazySum struct{ pos, lo, hi int }

func newBGHash(h hash.Hash) *bgHash { return &bgHash{h: h} }

// putSums writes the digests sums into buf (see lazySum).
func putSums(a Algo, buf []byte, sums []lazySum, bodies []byte) {
	n := a.Size()
	for _, s := range sums {
		a.sum(buf[s.pos:s.pos:s.pos+n], bodies[s.lo:s.hi]) // (in place: within the capacity)
	}
}

// writeSums writes p, in which the digests sums (of bodies, with b.algo,
// positions in p) are still to be written (p's placeholders may be
// overwritten here): on the hashing goroutine with the chunk that holds
// them, or here before the first hand-over. A chunk takes p whole (it may
// pass bgChunk by len(p)), so no digest is split between two chunks.
func (b *bgHash) writeSums(p []byte, sums []lazySum, bodies []byte) {
	if b.sync < bgChunk {
		putSums(b.algo, p, sums, bodies)
		b.Write(p)
		return
	}
	base, bb := len(b.buf), len(b.bodies)
	b.buf = append(b.buf, p...)
	b.bodies = append(b.bodies, bodies...)
	for _, s := range sums {
		b.sums = append(b.sums, lazySum{pos: base + s.pos, lo: bb + s.lo, hi: bb + s.hi})
	}
	if len(b.buf) >= bgChunk {
		b.hand()
	}
}

func (b *bgHash) Write(p []byte) (int, error) {
	n := len(p)
	if b.sync < bgChunk {
		// the stream's first chunk: here, so a short stream costs no buffer
		b.sync += n
		return b.h.Write(p)
	}
	for len(p) > 0 {
		if b.buf == nil {
			// (either buffer, at its full size: grown by append, it left as
			// much behind)
			b.buf = make([]byte, 0, bgChunk)
		}
		k := min(len(p), bgChunk-len(b.buf))
		b.buf, p = append(b.buf, p[:k]...), p[k:]
		if len(b.buf) == bgChunk {
			b.hand()
		}
	}
	return n, nil
}

// hand gives the full buffer to a goroutine, after the chunk before it is
// done, and goes on filling the other.
func (b *bgHash) hand() {
	b.busy.Wait()
	full, sums, bodies := b.buf, b.sums, b.bodies
	b.buf, b.idle = b.idle[:0], nil
	b.sums, b.idleSums = b.idleSums[:0], nil
	b.bodies, b.idleBodies = b.idleBodies[:0], nil
	b.busy.Add(1)
	go func() {
		putSums(b.algo, full, sums, bodies)
		b.h.Write(full)
		b.idle, b.idleSums, b.idleBodies = full, sums[:0], bodies[:0]
		b.busy.Done()
	}()
}

// stop waits for the chunk in flight and digests what is left here.
func (b *bgHash) stop() {
	b.busy.Wait()
	if len(b.buf) > 0 {
		putSums(b.algo, b.buf, b.sums, b.bodies)
		b.h.Write(b.buf)
		b.buf, b.sums, b.bodies = b.buf[:0], b.sums[:0], b.bodies[:0]
	}
}

func (b *bgHash) Sum(in []byte) []byte {
	b.stop()
	return b.h.Sum(in)
}

func (b *bgHash) Reset() {
	b.stop()
	b.h.Reset()
	b.sync = 0
}

func (b *bgHash) Size() int      { return b.h.Size() }
func (b *bgHash) BlockSize() int { return b.h.BlockSize() }
