package canon

// Pass 2 of the streaming hash on several goroutines (see fast.go): the
// items of a list result split into segments at places pass 1 noted
// (segMark: right after an APPENDS to the list, nothing else on the stack),
// each segment encoded by a worker into a buffer of its own, the buffers
// hashed in file order by the goroutine that runs pass 2. What a segment
// needs of what came before it is known there: the memo (its entries
// written by earlier segments), the memo's size, the lists made and the
// protocol (pass 1 noted the last three at each mark). So a worker runs
// step and runHot as the one pass does, from the mark's state, with a stack
// holding the list result alone; the bytes it gives are those the one pass
// would give for the same opcodes, in the same order.
//
// The memo is the fixed table (memoTab.fixed: one place per live index,
// made once), each entry written by the segment its MEMOIZE lies in: a
// worker reads its own segment's entries as the one pass does, an earlier
// segment's once that segment is done (it waits for it, which never waits
// for a later one), and takes an index of a later segment for one not yet
// written, as the one pass would at that point. Anything a worker refuses
// makes the whole pass give up (errSlow), as it would have.
//
// Only pk hash's pass (no hooks, in place: fast_hot.go) of a bare file read
// with MEMOIZE (or no memo write), whose result is a list of at least
// parMinSegs segments, on two CPUs or more, takes this way.

import (
	"bufio"
	"hash"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/pk-tools/pk/pkg/pickle"
)

// noPar turns the split off (tests compare both ways).
var noPar bool

// onSplit, when set, is told how many segments a split pass 2 hands to
// workers (tests).
var onSplit func(n int)

// parMinSegs is the fewest segments worth the goroutines.
const parMinSegs = 4

// parAhead bounds the segments taken but not yet hashed: their outputs are
// what the split holds beyond the one pass.
const parAhead = 4

// segCap is how much of a segment's output a worker holds: past it, the
// worker waits for its turn (every earlier segment hashed) and hashes it
// itself (a variable: tests).
var segCap = 1 << 20

// parRun is the state the workers and the hashing goroutine share, under mu.
type parRun struct {
	mu   sync.Mutex
	cond sync.Cond
	segs []segMark // segment i is the bytes from segs[i].off to segs[i+1].off
	st   []segState
	next int // the next segment to take
	// hashed: the segments written to the hash; done: the first segment
	// not done (every one before it is); memoOK: the memo's size at its
	// start (every entry below it is written for good)
	hashed, done int
	memoOK       int64
	failed       bool
	h            hash.Hash // the stream digest (written directly: bgHash is stopped)
	n            int64     // bytes written to h by workers in their turn
	file         *os.File
	path         string
	size         int64
	proto        *fastEnc // the encoder whose settings the workers copy
	wg           sync.WaitGroup
	pool         [][]byte // output buffers hashed, for reuse
}

type segState struct {
	out    []byte
	items  int64
	logged bool
	done   bool
}

// parPlan says whether pass 2 of e splits the list result among goroutines;
// it makes the ranked memo then.
func (e *fastEnc) parPlan(size int64, hot bool) bool {
	s := e.scan
	if noPar || !hot || !e.hashOnly || size < 0 || len(s.segs) < parMinSegs+1 || s.allLive || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	// (the fixed memo's dense slice: at most an eighth of the file)
	m := fixedMemo(s.live, s.nmemo, size/8)
	if m == nil {
		return false
	}
	e.memo = m
	return true
}

// parallel runs the segments from the first mark to the last on workers
// and hashes their outputs; rd is at the first mark, and so is e. It
// returns a reader at the last mark, e's state set to what the one pass
// would have there.
func (e *fastEnc) parallel(rd *pickle.Reader) (*pickle.Reader, error) {
	segs := e.scan.segs
	m0 := segs[0]
	if len(e.stack) != 1 || len(e.marks) != 0 || e.stack[0].c < 0 || !e.conts[e.stack[0].c].stream ||
		len(e.pend) != 0 || len(e.arena) != e.stack[0].off || e.nmemo != m0.nmemo || e.lists != m0.nlists || e.proto != m0.proto {
		return rd, nil // (not where pass 1 said: the one pass goes on)
	}
	f, err := os.Open(e.path)
	if err != nil {
		return rd, nil
	}
	e.parFile = f // (closed with the replay file: the reader returned reads it)
	if fi, err := f.Stat(); err != nil || fi.Size() != e.size {
		return nil, errSlow
	}
	e.flush()
	e.bg.stop() // (the segments are hashed here, after what it holds)
	p := &parRun{segs: segs, st: make([]segState, len(segs)-1), memoOK: m0.nmemo, h: e.bg.h, file: f,
		path: e.path, size: e.size, proto: e}
	p.cond.L = &p.mu
	if onSplit != nil {
		onSplit(len(p.st))
	}
	workers := min(runtime.GOMAXPROCS(0), len(p.st))
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	err = p.hashAll()
	p.wg.Wait()
	if err != nil {
		return nil, err
	}
	e.h.n += p.n
	c := &e.conts[e.stack[0].c]
	for i := range p.st {
		c.n += p.st[i].items
		e.logged = e.logged || p.st[i].logged
	}
	last := segs[len(segs)-1]
	e.nmemo, e.lists, e.proto = last.nmemo, last.nlists, last.proto
	r := pickle.NewReaderAt(f, e.size, e.path, last.off)
	r.NewHash, r.Borrow = rd.NewHash, rd.Borrow
	return r, nil
}

// hashAll writes the segments' outputs to the hash in order, as they are
// done; on a worker's error it stops them all.
func (p *parRun) hashAll() error {
	for i := range p.st {
		p.mu.Lock()
		for !p.st[i].done && !p.failed {
			p.cond.Wait()
		}
		if p.failed {
			p.mu.Unlock()
			return errSlow
		}
		out := p.st[i].out
		p.st[i].out = nil
		p.mu.Unlock()
		p.h.Write(out)
		p.n += int64(len(out))
		p.mu.Lock()
		p.hashed = i + 1
		p.pool = append(p.pool, out[:0])
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	return nil
}

// fail stops every worker and the hashing goroutine.
func (p *parRun) fail() {
	p.mu.Lock()
	p.failed = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

// work takes segments in order and encodes each, with one encoder and
// one read buffer for all.
func (p *parRun) work() {
	defer p.wg.Done()
	br := bufio.NewReaderSize(nil, 256<<10)
	w := p.worker()
	for {
		p.mu.Lock()
		for !p.failed && p.next < len(p.st) && p.next >= p.hashed+parAhead {
			p.cond.Wait()
		}
		if p.failed || p.next >= len(p.st) {
			p.mu.Unlock()
			return
		}
		i := p.next
		p.next++
		var out []byte
		if n := len(p.pool); n > 0 {
			out, p.pool = p.pool[n-1], p.pool[:n-1]
		} else {
			// (twice the segment's bytes: what a table's rows take, so that
			// a buffer seldom grows)
			out = make([]byte, 0, min(2*(p.segs[i+1].off-p.segs[i].off), int64(segCap))+64<<10)
		}
		memoOK := p.memoOK
		p.mu.Unlock()
		w.startSeg(i, memoOK, out)
		err := w.segment(br)
		p.mu.Lock()
		s := &p.st[i]
		s.done = true
		if err != nil {
			p.failed = true
		} else {
			s.out, s.items, s.logged = w.out, w.conts[w.stack[0].c].n, w.logged
			w.out = nil
		}
		for p.done < len(p.st) && p.st[p.done].done {
			p.done++
		}
		p.memoOK = p.segs[p.done].nmemo
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// worker is an encoder for segments: pk hash's one pass but that no list
// is the result (each segment's stand-in for it is made here).
func (p *parRun) worker() *fastEnc {
	e0 := p.proto
	scan := &fastScanResult{rootList: -1, memoize: e0.scan.memoize, live: e0.scan.live, maxStack: e0.scan.maxStack, maxMarks: e0.scan.maxMarks}
	w := &fastEnc{opt: e0.opt, scan: scan, memo: e0.memo, path: p.path, size: p.size, hashOnly: true, par: p}
	w.stack = make([]fslot, 0, scan.maxStack+1)
	w.conts, w.free = make([]fcont, 0, scan.maxStack+1), make([]int32, 0, scan.maxStack+1)
	w.marks, w.marks0 = make([]int, 0, scan.maxMarks+1), make([]int64, 0, scan.maxMarks+1)
	c := w.newCont(fkList)
	w.conts[c].stream = true
	return w
}

// startSeg sets the worker to the state of the one pass at segment i's
// mark, its output to go to out. (A segment the worker did before ended
// with the stand-in alone on the stack and every other container free:
// segment checks it.)
func (w *fastEnc) startSeg(i int, memoOK int64, out []byte) {
	p := w.par
	m := p.segs[i]
	w.nmemo, w.lists, w.proto = m.nmemo, m.nlists, m.proto
	w.seg, w.memoOK, w.own0, w.own1 = i, memoOK, m.nmemo, p.segs[i+1].nmemo
	w.out, w.segErr, w.logged, w.opOff = out[:0], nil, false, m.off
	w.arena, w.hdrs, w.ents = w.arena[:0], w.hdrs[:0], w.ents[:0]
	w.recs.cut(0)
	s := &w.stack[0]
	s.off, s.r0, s.kh, s.kt = 0, 0, -1, -1
	w.conts[s.c].n = 0
}

// segment encodes the worker's segment, reading it with br.
func (w *fastEnc) segment(br *bufio.Reader) error {
	p := w.par
	start, end := p.segs[w.seg].off, p.segs[w.seg+1].off
	br.Reset(io.NewSectionReader(p.file, start, p.size-start))
	// offsets from the segment's start (a reader of the whole file would
	// take a buffer a segment); the opcodes' own are start + those
	rd := pickle.NewReader(br, p.size-start, p.path)
	rd.NewHash = w.opt.Algo.New
	rd.Borrow = true
	var one [1]pickle.Op
	for {
		off := start + rd.Offset()
		if off >= end {
			if off != end {
				return errSlow
			}
			break
		}
		if win, th := rd.SkimWindow(); len(win) > 0 {
			win = win[:min(int64(len(win)), end-off)]
			at, err := w.runHot(win, off, th)
			if err != nil {
				return err
			}
			rd.SkimDone(at)
			if at > 0 {
				continue
			}
		}
		o := &one[0]
		if err := rd.NextInto(o); err != nil {
			return errSlow
		}
		o.Offset += start
		if stop, err := w.run(one[:], nil); err != nil || stop {
			return errSlow
		}
	}
	if w.segErr != nil {
		return w.segErr
	}
	if s := w.stack; len(s) != 1 || s[0].c < 0 || !w.conts[s[0].c].stream || len(w.marks) != 0 || w.nmemo != w.own1 || len(w.arena) != s[0].off {
		return errSlow
	}
	return nil
}

// memoWait is memoGet of an index the worker may not read yet: an earlier
// segment's, once that segment is done; nil for a later segment's (not
// written yet, as in the one pass).
//
//go:noinline
func (w *fastEnc) memoWait(i int64) *memoEnt {
	if i >= w.own1 {
		return nil
	}
	p := w.par
	p.mu.Lock()
	for p.memoOK <= i && !p.failed {
		p.cond.Wait()
	}
	w.memoOK = p.memoOK
	failed := p.failed
	p.mu.Unlock()
	if failed {
		return nil
	}
	return w.memo.get(i)
}

// segFlush hashes a worker's output held past segCap, in its turn.
//
//go:noinline
func (w *fastEnc) segFlush() {
	p := w.par
	p.mu.Lock()
	for p.hashed < w.seg && !p.failed {
		p.cond.Wait()
	}
	failed := p.failed
	p.mu.Unlock()
	if failed {
		w.segErr = errSlow
	} else {
		// (the hashing goroutine waits for this segment to be done: h
		// is this goroutine's until then)
		p.h.Write(w.out)
		p.n += int64(len(w.out))
	}
	w.out = w.out[:0]
}

// memoGet is memo.get for pass 2's GETs, which a worker may make wait.
func (e *fastEnc) memoGet(i int64) *memoEnt {
	if e.par != nil && i >= e.memoOK && (i < e.own0 || i >= e.own1) {
		return e.memoWait(i)
	}
	return e.memo.get(i)
}
