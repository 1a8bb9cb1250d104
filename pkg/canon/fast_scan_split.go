package canon

// Pass 1 on two goroutines (see fast_scan.go): a bare file of protocol 4 or
// more whose result is a list, read in two halves at once. The second half
// begins at a frame near the middle of the file (the frames chain from
// offset 2: a frame's start is an opcode's, whatever came before it) and
// reads on, decoding the opcodes only, to the first place that looks like
// one where pass 2 may split (segMark): right after an APPENDS that closes
// the outermost MARK seen so far, a MARK next. It guesses pass 1's state
// there (the list result alone on the stack, no MARK open) and runs pass 1
// from it to STOP, with the memo's size and the lists' count counted from 0
// (they are not known there) and its own reader, which knows the frame it is
// in as the one pass's does. The first half runs pass 1 from the start and
// stops at that place; the two results are joined when the guess holds and
// nothing that needs the state before it happened after it:
//
//   - the first half's stack there is the list result alone, no MARK open,
//     no PUT (the memo's indices then count MEMOIZEs in file order);
//   - the second half ends with its stand-in of the list alone (the result)
//     and wrote no PUT;
//   - no GET of the second half reads an index at or past the memo's size
//     there (so pass 1's check of a GET of a mutable object, which the
//     second half cannot make, is one of the first half's entries: made
//     when joining), nor one the first half wrote with a mutable object;
//   - neither half nests containers as deep as maxFastOpen (the one pass
//     counts them at other times).
//
// Else the first half goes on from that place to STOP, as the one pass
// does (and so when it passed the place before learning it, or the second
// half found none). The joined result is the one pass's, but that the
// place itself may be a segment mark (segs: the second half's are spaced
// from it).

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/pk-tools/pk/pkg/pickle"
)

// scanSplitMin is the smallest file whose pass 1 is split (a variable:
// tests).
var scanSplitMin int64 = 4 << 20

// noScanSplit turns the split of pass 1 off (tests compare both ways).
var noScanSplit bool

// onScanSplit, when set, is told where the second half began (0: no
// place found) and whether the halves were joined (tests).
var onScanSplit func(at int64, joined bool)

// scanSplitWait makes the first half wait until the second half's place
// is known (tests: a small file's first half may pass it before).
var scanSplitWait bool

// splitGuessMax bounds how far past its frame the second half looks for
// its place.
const splitGuessMax = 4 << 20

// splitList is the second half's handle of the list result (never one of
// the lists it counts from 0).
const splitList int32 = math.MaxInt32

// scanSplits says whether pass 1 of a bare file of size bytes is split.
func scanSplits(size int64) bool {
	return !noPar && !noScanSplit && size >= scanSplitMin && runtime.GOMAXPROCS(0) >= 2
}

// fastScanSplit is fastScanFrom of a bare file (size known) in two halves.
func fastScanSplit(f io.Reader, size int64, path string, done func() error) (*fastScanResult, int64, error) {
	var stopAt atomic.Int64
	var quit atomic.Bool
	ch := make(chan *pass1, 1)
	go secondHalf(path, size, &stopAt, &quit, ch)
	for scanSplitWait && stopAt.Load() == 0 {
		runtime.Gosched()
	}
	p := newPass1(pickle.NewReader(f, size, path))
	paused, err := p.scan(0, &stopAt)
	var q *pass1
	if paused {
		q = <-ch
		joined := q != nil && p.join(q)
		if onScanSplit != nil {
			onScanSplit(stopAt.Load(), joined)
		}
		if joined {
			return p.finish(size, done)
		}
		paused, err = p.scan(-1, nil)
	} else {
		quit.Store(true)
		<-ch
		if onScanSplit != nil {
			onScanSplit(max(stopAt.Load(), 0), false)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	return p.finish(size, done)
}

// secondHalf finds the second half's place, publishes it in stopAt (-1:
// none) and runs pass 1 from it; it sends the pass (nil: none, or it failed)
// on ch.
func secondHalf(path string, size int64, stopAt *atomic.Int64, quit *atomic.Bool, ch chan<- *pass1) {
	var q *pass1
	defer func() {
		if q == nil {
			stopAt.CompareAndSwap(0, -1)
		}
		ch <- q
	}()
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != size {
		return
	}
	fr := midFrame(f, size, quit)
	if fr < 0 {
		return
	}
	rd := pickle.NewReaderAt(f, size, path, fr)
	at := splitGuess(rd, min(size, fr+splitGuessMax))
	if at < 0 {
		return
	}
	p := newPass1(rd)
	p.quit = quit
	p.h.track = false // (its GETs are checked when joining)
	p.h.stack = append(p.h.stack, splitList)
	p.st.bottom = splitList
	p.proto = -1 // (not known: the first half's)
	p.res.segs = append(p.res.segs, segMark{off: at, proto: -1})
	stopAt.Store(at)
	if paused, err := p.scan(-1, nil); err != nil || paused {
		return
	}
	q = p
}

// midFrame is the offset of the first frame that begins in the second half
// of f, following the frames from offset 2; -1 when the frames do not chain
// so far.
func midFrame(f io.ReaderAt, size int64, quit *atomic.Bool) int64 {
	var b [9]byte
	if _, err := f.ReadAt(b[:2], 0); err != nil || b[0] != byte(pickle.PROTO) || b[1] < 4 {
		return -1
	}
	for off := int64(2); off+9 <= size && !quit.Load(); {
		if _, err := f.ReadAt(b[:], off); err != nil || b[0] != byte(pickle.FRAME) {
			return -1
		}
		if off >= size/2 {
			return off
		}
		n := binary.LittleEndian.Uint64(b[1:])
		if n > uint64(size-off-9) {
			return -1
		}
		off += 9 + int64(n)
	}
	return -1
}

// splitGuess reads rd's opcodes up to limit and returns the offset of the
// first MARK right after an APPENDS that closed the outermost MARK seen so
// far (rd is there), -1 when none.
func splitGuess(rd *pickle.Reader, limit int64) int64 {
	depth, low := 0, 0
	after := false // the opcode before was such an APPENDS
	var op pickle.Op
	for rd.Offset() < limit {
		win, th := rd.SkimWindow()
		at := 0
		for at < len(win) {
			k, ok := pickle.SkimOp(win, at, th)
			if !ok {
				break
			}
			c := pickle.Opcode(win[at])
			if after && c == pickle.MARK {
				rd.SkimDone(at)
				return rd.Offset()
			}
			depth, low, after = guessStep(c, depth, low)
			at += 1 + k
		}
		rd.SkimDone(at)
		if at > 0 {
			continue
		}
		// (an opcode a window does not give: never a MARK)
		if rd.NextInto(&op) != nil || op.Code == pickle.STOP {
			return -1
		}
		depth, low, after = guessStep(op.Code, depth, low)
	}
	return -1
}

// guessStep is splitGuess's count of the open MARKs over opcode c.
func guessStep(c pickle.Opcode, depth, low int) (int, int, bool) {
	switch c {
	case pickle.MARK:
		depth++
	case pickle.APPENDS:
		depth--
		if depth < low {
			return depth, depth, true
		}
	case pickle.SETITEMS, pickle.ADDITEMS, pickle.TUPLE, pickle.LIST, pickle.DICT, pickle.FROZENSET,
		pickle.OBJ, pickle.INST, pickle.POP_MARK:
		depth--
	}
	return depth, min(low, depth), false
}

// join makes p, the first half paused at the second half's place, the one
// pass's state at STOP from q, the second half, when the conditions above
// hold; false leaves p as it was.
func (p *pass1) join(q *pass1) bool {
	h, g := &p.h, &q.h
	if len(h.stack) != 1 || h.stack[0] < 0 || h.stack[0] != p.st.bottom || len(h.marks) != 0 || p.memo == 2 ||
		q.top != splitList || q.st.bottom != splitList || q.memo == 2 || q.st.nlists >= splitList ||
		h.maxStack >= maxFastOpen || g.maxStack >= maxFastOpen {
		return false
	}
	base := h.nmemo
	for w, x := range g.live {
		if x == 0 {
			continue
		}
		if w < len(h.mut) && x&h.mut[w] != 0 {
			return false // a GET of a mutable object
		}
		if hi := int64(w+1) * 64; hi > base {
			if lo := int64(w) * 64; lo >= base || x>>(base-lo) != 0 {
				return false // an index the first half did not write
			}
		}
	}
	segs := q.res.segs
	if len(segs) == 0 || segs[0].nmemo != 0 {
		return false
	}
	for _, m := range segs[1:] {
		m.nmemo += base
		m.nlists += p.st.nlists
		if m.proto < 0 {
			m.proto = p.proto
		}
		p.res.segs = append(p.res.segs, m)
	}
	p.st.bcount += q.st.bcount
	p.st.nlists += q.st.nlists
	if len(g.live) > len(h.live) {
		h.live, g.live = g.live, h.live
	}
	for w, x := range g.live {
		h.live[w] |= x
	}
	h.nmemo += g.nmemo
	h.maxStack, h.maxMarks = max(h.maxStack, g.maxStack), max(h.maxMarks, g.maxMarks)
	p.memo = max(p.memo, q.memo)
	if q.proto >= 0 {
		p.proto = q.proto
	}
	p.top = h.stack[0]
	return true
}
