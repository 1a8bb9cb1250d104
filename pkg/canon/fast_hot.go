package canon

// Pass 2's opcodes decoded in place (see fast.go): pk hash's pass (no
// hooks) reads the opcodes that lie whole in the reader's window straight
// from it, as pass 1 does, instead of decoding a batch of pickle.Ops first
// and stepping through them: a table's most common opcodes (memo reads and
// writes, MARK, ints, floats, short str) run inline, every other one
// through step with an Op made here. What each does is step's, opcode by
// opcode: the same encodings, the same errors.

import (
	"encoding/binary"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// noHot turns the in-place loop off (tests compare both ways).
var noHot bool

// runHot steps the opcodes whole in win (pickle.SkimWindow, at offset base
// of the input; th its blob threshold) up to the first one the reader must
// decode itself (NextBuffered or NextInto then takes it) and returns the
// bytes it consumed. As run does a batch, it checks the bound on what pass 2
// holds once every fastBatch opcodes and at its end.
func (e *fastEnc) runHot(win []byte, base, th int64) (int, error) {
	at, n := 0, 0
	var o pickle.Op // the opcodes that go through step
loop:
	for at < len(win) {
		// each inline case checks its own width against the window (what
		// pickle.SkimOp would say, without the way through its table)
		c := pickle.Opcode(win[at])
		e.opOff = base + int64(at)
		k := 0
		switch c {
		case pickle.BINGET, pickle.LONG_BINGET:
			var i int64
			if c == pickle.BINGET {
				if at+2 > len(win) {
					break loop
				}
				i, k = int64(win[at+1]), 1
			} else {
				if at+5 > len(win) {
					break loop
				}
				i, k = int64(binary.LittleEndian.Uint32(win[at+1:])), 4
			}
			m := e.memoGet(i)
			if m == nil || !fkPure(m.kind) || len(m.enc) > maxMemoEnc {
				return at, errSlow
			}
			e.push(m.kind)
			if n := len(e.arena); len(m.enc) <= memoChunk && cap(m.enc) >= memoChunk && cap(e.arena)-n >= memoChunk {
				// (as step: one fixed-size copy)
				*(*[memoChunk]byte)(e.arena[n : n+memoChunk]) = *(*[memoChunk]byte)(m.enc[:memoChunk])
				e.arena = e.arena[:n+len(m.enc)]
			} else {
				e.arena = append(e.arena, m.enc...)
			}
		case pickle.MARK:
			e.marks = grow.Push(e.marks, len(e.stack))
			e.marks0 = append(e.marks0, e.opOff)
		case pickle.MEMOIZE:
			if !e.scan.memoize || len(e.stack) <= e.fence() {
				return at, errSlow
			}
			if e.scan.isLive(e.nmemo) {
				if err := e.stepAt(&o, win, at, 0); err != nil {
					return at, err
				}
				break
			}
			e.nmemo++
		case pickle.BININT, pickle.BININT1, pickle.BININT2:
			var v int64
			switch c {
			case pickle.BININT1:
				if at+2 > len(win) {
					break loop
				}
				v, k = int64(win[at+1]), 1
			case pickle.BININT2:
				if at+3 > len(win) {
					break loop
				}
				v, k = int64(binary.LittleEndian.Uint16(win[at+1:])), 2
			default:
				if at+5 > len(win) {
					break loop
				}
				v, k = int64(int32(binary.LittleEndian.Uint32(win[at+1:]))), 4
			}
			e.push(fkInt)
			e.arena = appendIntVal(e.arena, v, nil)
		case pickle.BINFLOAT:
			if at+9 > len(win) {
				break loop
			}
			k = 8
			e.push(fkFloat)
			e.arena = append(e.arena, 'f')
			e.arena = append(e.arena, win[at+1:at+9]...) // (big-endian bits, as step writes them)
		case pickle.NONE:
			e.push(fkNone)
			e.arena = append(e.arena, 'n')
		case pickle.SHORT_BINUNICODE:
			if at+1 >= len(win) || int64(win[at+1]) >= th || at+2+int(win[at+1]) > len(win) {
				break loop
			}
			k = 1 + int(win[at+1])
			p, ok := pickle.SkimStr(win, at)
			if !ok {
				break loop
			}
			if len(p) > InlineMax {
				if err := e.stepAt(&o, win, at, k); err != nil {
					return at, err
				}
				break
			}
			e.push(fkStr)
			e.arena = append(e.arena, 's')
			e.arena = appendUvarint(e.arena, uint64(len(p)))
			e.arena = append(e.arena, p...)
		default:
			var ok bool
			if k, ok = pickle.SkimOp(win, at, th); !ok {
				break loop
			}
			if err := e.stepAt(&o, win, at, k); err != nil {
				return at, err
			}
		}
		at += 1 + k
		if n++; n == fastBatch {
			if err := e.heldOK(base + int64(at)); err != nil {
				return at, err
			}
			n = 0
		}
	}
	return at, e.heldOK(base + int64(at))
}

// stepAt steps the opcode at win[at] (argument width k), decoded into o as
// NextBuffered decodes it.
func (e *fastEnc) stepAt(o *pickle.Op, win []byte, at, k int) error {
	c := pickle.Opcode(win[at])
	o.Code, o.Offset, o.Len, o.Int, o.Str = c, e.opOff, int64(1+k), 0, ""
	if k > 0 {
		if p, ok := pickle.SkimStr(win, at); ok {
			if len(p) > 0 {
				o.Str = unsafe.String(&p[0], len(p)) // (borrowed, as the reader lends it)
			}
		} else {
			o.Int = pickle.SkimArg(win, at)
		}
	}
	_, err := e.step(o)
	return err
}

// heldOK is run's bound on what pass 2 holds, against the bytes read up to
// off.
func (e *fastEnc) heldOK(off int64) error {
	if e.held() > arenaExpansion*off+arenaSlack {
		return errSlow
	}
	return nil
}
