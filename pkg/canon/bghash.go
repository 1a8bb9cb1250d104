package canon

// The stream digest beside the encoding: on two CPUs a long stream's
// SHA-256 runs on a goroutine of its own while the encoder goes on.

import (
	"hash"
	"sync"
)

// bgChunk is what bgHash gathers before it hands a chunk to a goroutine:
// large enough that starting one costs nothing beside digesting it
// (about 0.1 ms for SHA-256), small enough that the two buffers are no
// memory to speak of. A stream's first chunk is digested on the caller's
// goroutine, as without bgHash, so a short stream costs nothing more.
const bgChunk = 256 << 10

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
}

func newBGHash(h hash.Hash) *bgHash { return &bgHash{h: h} }

func (b *bgHash) Write(p []byte) (int, error) {
	n := len(p)
	if b.sync < bgChunk {
		// the stream's first chunk: here, so a short stream costs no buffer
		b.sync += n
		return b.h.Write(p)
	}
	for len(p) > 0 {
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
	full := b.buf
	b.buf, b.idle = b.idle[:0], nil
	b.busy.Add(1)
	go func() {
		b.h.Write(full)
		b.idle = full
		b.busy.Done()
	}()
}

// stop waits for the chunk in flight and digests what is left here.
func (b *bgHash) stop() {
	b.busy.Wait()
	if len(b.buf) > 0 {
		b.h.Write(b.buf)
		b.buf = b.buf[:0]
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
