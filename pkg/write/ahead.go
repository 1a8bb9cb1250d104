package write

import (
	"io"
	"unsafe"

	"github.com/pk-tools/pk/pkg/canon"
)

// The decoder's read ahead on the second processor. Writing a large folded
// run (a table's rows: wsink.go), the decoder reads each embedding twice:
// touchAhead reads the forms a little ahead of item to compute the
// fingerprints of its strs, bytes and tuples and load the table slots
// their lookups will probe, then item reads them to write them. While the
// writer walks the runs at STOP the machine's other processor is idle, so
// for a run of aheadMin items or more a goroutine of the run's own
// (ahead.run) reads the run in blocks, walks the forms of each as
// touchAhead does and computes their fingerprints, and hands each block
// with them to the decoder, which reads the run from those blocks (Read),
// takes the fingerprints in order (queued) and touches the slots of those
// not in the hot cache at touchAhead's pace (touchTo). The fingerprint of
// the form at an offset is a function of the run's bytes there and the
// table's seed, whoever computes it, so what the writer writes is the
// same, and every fingerprint item or tuple takes is that of the bytes it
// reads there (TestAheadMatches). The goroutine stops when the decoder
// moves on (stopAhead); it walks no further than aheadCarry bytes into a
// form it cannot read whole (not plain: item refuses it; or longer), after
// which the decoder computes the fingerprints it needs itself.

// aheadMin is the fewest items of a run read ahead so (tests lower it): a
// run of a few entries would pay a goroutine for a few rows.
var aheadMin = 256

// aheadBlock is the size of the blocks the goroutine reads; aheadBlocks
// is how many it may have handed over and the decoder not yet read.
const (
	aheadFirst  = 4 << 10 // (the first: the decoder waits for it)
	aheadBlock  = 32 << 10
	aheadBlocks = 4
	aheadCarry  = 64 << 10
)

// noAhead turns the read ahead off (tests compare both ways); aheadRuns
// counts the runs read ahead (tests).
var (
	noAhead   bool
	aheadRuns int
)

// block is a block of a run and the fingerprints of the forms that end in
// it, with their offsets in the run.
type block struct {
	b   []byte
	fps []queuedFP
	err error // after b: the run's reader's error (io.EOF at its end)
}

// aheadPool is what the read ahead of one run hands to the next (a
// decoder's): its blocks and its window, so that a table's thousand runs
// allocate them once.
type aheadPool struct {
	free chan *block
	win  []byte
	q    []queuedFP
}

// ahead is the read ahead of one run.
type ahead struct {
	blocks chan *block
	pool   *aheadPool
	free   chan *block
	stop   chan struct{}
	done   chan struct{}
	cur    *block // the block Read takes from, from cur.b[pos:]
	pos    int
	err    error // the run's reader's error, once met
	// the fingerprints received and not yet taken by queued, in order:
	// q[qh:]; q[:touched] were touched or passed over by touchTo
	q       []queuedFP
	qh      int
	touched int
}

// startAhead starts reading run rd ahead (seed: the table's fingerprint
// seed, dsize the digests' size).
func startAhead(rd io.Reader, seed uint64, dsize int, pool *aheadPool) *ahead {
	if pool.free == nil {
		pool.free = make(chan *block, aheadBlocks+2)
	}
	a := &ahead{
		blocks: make(chan *block, aheadBlocks),
		pool:   pool,
		free:   pool.free,
		q:      pool.q[:0],
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go a.run(rd, seed, dsize, pool.win[:0])
	return a
}

// run reads rd in blocks, computes the fingerprints of the forms of each
// block, and hands the blocks over, until rd ends or the decoder stops it.
func (a *ahead) run(rd io.Reader, seed uint64, dsize int, win []byte) {
	// win: the bytes of the forms not yet walked
	defer func() {
		a.pool.win = win // (for the next run: read once done is closed)
		close(a.done)
	}()
	var off int64   // the run's offset of win[0]
	walking := true // false: past a form it cannot read whole
	size := aheadFirst
	for {
		var blk *block
		select {
		case blk = <-a.free:
		default:
			blk = &block{b: make([]byte, aheadBlock)}
		}
		blk.b, blk.fps, blk.err = blk.b[:size], blk.fps[:0], nil
		size = aheadBlock
		n := 0
		for n < len(blk.b) && blk.err == nil {
			var m int
			m, blk.err = rd.Read(blk.b[n:])
			n += m
			if m == 0 && blk.err == nil {
				blk.err = io.ErrNoProgress
			}
		}
		blk.b = blk.b[:n]
		if walking {
			win = append(win, blk.b...)
			i := 0
			for i < len(win) {
				size, _, text := canon.PlainForm(win[i:], dsize)
				if size == 0 {
					break // not whole yet (or not plain)
				}
				if tag := win[i]; fingerprinted(tag) {
					fp := fingerprint(seed, tag, unsafe.String(unsafe.SliceData(text), len(text)))
					blk.fps = append(blk.fps, queuedFP{off + int64(i), fp})
				}
				i += size
			}
			off += int64(i)
			win = win[:copy(win, win[i:])]
			if len(win) > aheadCarry {
				walking, win = false, nil
			}
		}
		select {
		case a.blocks <- blk:
		case <-a.stop:
			return
		}
		if blk.err != nil {
			return
		}
	}
}

// Read reads the run from the blocks handed over, taking their
// fingerprints into the queue.
func (a *ahead) Read(b []byte) (int, error) {
	for a.cur == nil || a.pos == len(a.cur.b) {
		if a.cur != nil {
			if a.cur.err != nil {
				a.err = a.cur.err
			}
			a.give(a.cur)
			a.cur = nil
		}
		if a.err != nil {
			return 0, a.err
		}
		blk, ok := <-a.blocks
		if !ok {
			a.err = io.ErrUnexpectedEOF
			return 0, a.err
		}
		if a.qh > 0 && a.qh >= len(a.q)/2 {
			k := copy(a.q, a.q[a.qh:])
			a.touched = max(a.touched-a.qh, 0)
			a.q, a.qh = a.q[:k], 0
		}
		a.q = append(a.q, blk.fps...)
		a.cur, a.pos = blk, 0
	}
	n := copy(b, a.cur.b[a.pos:])
	a.pos += n
	return n, nil
}

// queued is decoder.queued from the fingerprints received.
func (a *ahead) queued(at int64) (uint64, bool) {
	for a.qh < len(a.q) {
		q := a.q[a.qh]
		if q.at > at {
			break
		}
		a.qh++
		if q.at == at {
			return q.fp, true
		}
	}
	return 0, false
}

// touchTo touches the table's slots of the fingerprints received of the
// values before offset end of the run (values.touch), those not in its hot
// cache, that were not touched yet.
func (a *ahead) touchTo(t *values, end int64) {
	var fps [touchMax]uint64
	nfp := 0
	i := max(a.touched, a.qh)
	for ; i < len(a.q) && a.q[i].at < end && nfp < touchMax; i++ {
		if fp := a.q[i].fp; !t.hotFP(fp) {
			fps[nfp] = fp
			nfp++
		}
	}
	a.touched = i
	t.touch(fps[:nfp])
}

// close stops the goroutine and waits for it: the run's reader is not read
// once it returns.
func (a *ahead) close() {
	close(a.stop)
	<-a.done
	a.pool.q = a.q
	if a.cur != nil {
		a.give(a.cur)
	}
	for {
		select {
		case blk := <-a.blocks:
			a.give(blk)
		default:
			return
		}
	}
}

// give hands block blk back to the pool (when it has room).
func (a *ahead) give(blk *block) {
	select {
	case a.free <- blk:
	default:
	}
}
