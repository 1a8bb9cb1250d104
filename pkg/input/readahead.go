package input

import (
	"io"
	"sync"
)

// readAhead runs a reader (a decompressor) in a goroutine of its own, a few
// chunks ahead of its consumer, so decompressing and parsing use two cores
// as `gzip -dc file | pk hash -` does. Memory: readAheadChunks buffers.
type readAhead struct {
	ch     chan raChunk
	pool   chan []byte
	done   chan struct{}
	exited chan struct{}
	cur    []byte
	last   []byte
	err    error
	once   sync.Once
}

type raChunk struct {
	b   []byte
	err error
}

const (
	readAheadChunks = 6
	readAheadSize   = 1 << 20
)

func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{
		ch:     make(chan raChunk, readAheadChunks),
		pool:   make(chan []byte, readAheadChunks),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for i := 0; i < readAheadChunks-1; i++ {
		ra.pool <- make([]byte, readAheadSize)
	}
	go ra.fill(r)
	return ra
}

func (ra *readAhead) fill(r io.Reader) {
	defer close(ra.exited)
	defer close(ra.ch)
	for {
		var buf []byte
		select {
		case buf = <-ra.pool:
		case <-ra.done:
			return
		}
		// fill buf; the reader's own error (io.EOF, or a truncation the
		// decompressor reports as io.ErrUnexpectedEOF) passes through as is
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = r.Read(buf[n:])
			n += k
		}
		if n > 0 {
			select {
			case ra.ch <- raChunk{b: buf[:n]}:
			case <-ra.done:
				return
			}
		}
		if err != nil {
			select {
			case ra.ch <- raChunk{err: err}:
			case <-ra.done:
			}
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.last != nil {
			ra.pool <- ra.last[:cap(ra.last)]
			ra.last = nil
		}
		c, ok := <-ra.ch
		if !ok {
			ra.err = io.EOF
			continue
		}
		if c.err != nil {
			ra.err = c.err
			continue
		}
		ra.cur, ra.last = c.b, c.b
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it, so the decompressor can be
// closed after.
func (ra *readAhead) Close() {
	ra.once.Do(func() {
		close(ra.done)
		<-ra.exited
	})
}
