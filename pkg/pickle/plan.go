package pickle

import (
	"errors"
	"io"
	"math"
)

// Plan is pass 1 of the engine (docs/engine.md §2.1): for one stream, the
// offset of the last opcode that reads each memo index (GET, BINGET,
// LONG_BINGET). The machine uses it to tell a memo entry that a later
// opcode reads from one that nothing reads again: an object held only by
// dead memo entries is final once it is off the stack.
//
// A plan costs 4 bytes per memo index up to the highest index read (dense,
// as picklers number their writes 0, 1, 2, ...; an index read far beyond
// the ones before goes to a map, so the dense part is at most about twice
// the reads plus 4096) and a map entry for each other index read, and for
// each index last read 4 GiB or more into the stream; indices that are
// written and never read cost nothing.
type Plan struct {
	base   int64    // where the stream begins
	dense  []uint32 // 1 + offset - base of the last read of index i; 0: not in dense
	sparse map[int64]int64
}

// memoReads marks the opcodes a plan reads (and STOP, which skim reports
// anyway).
var memoReads = [256]bool{GET: true, BINGET: true, LONG_BINGET: true}

// planDense bounds the dense part: indices read above it go to the map.
const planDense = 1 << 24

// PlanStream reads one stream from rd's position to its STOP with Skim
// (opcodes and integer arguments only) and returns its plan. It fails where
// Skim fails; a truncated stream gives io.ErrUnexpectedEOF.
func PlanStream(rd *Reader) (*Plan, error) {
	p := &Plan{base: rd.Offset()}
	var buf [512]Skimmed
	for {
		n, err := rd.skim(buf[:], &memoReads)
		for j := range buf[:n] {
			o := &buf[j] // (not copied: most opcodes are looked at for their code only)
			switch o.Code {
			case GET, BINGET, LONG_BINGET:
				switch rel := o.Offset - p.base; {
				case o.Big:
				case o.Int >= 0 && o.Int < int64(len(p.dense)) && rel < math.MaxUint32-1:
					p.dense[o.Int] = uint32(rel + 1) // (read's most common case, inline)
				default:
					p.read(o.Int, o.Offset)
				}
			case STOP:
				if cap(p.dense) > len(p.dense)+len(p.dense)/8 {
					// (held while the stream is read: not the doubling's room)
					p.dense = append([]uint32(nil), p.dense...)
				}
				return p, nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

func (p *Plan) read(i, off int64) {
	if i < 0 {
		return
	}
	if rel := off - p.base; rel < math.MaxUint32-1 && i < planDense && i <= 2*int64(len(p.dense))+4096 {
		// dense while the indices read stay near the ones before: a
		// hostile LONG_BINGET of index 2^24-1 in a tiny file costs a map
		// entry, not 128 MB
		if i >= int64(len(p.dense)) {
			if i >= int64(cap(p.dense)) {
				d := make([]uint32, i+1, max(2*cap(p.dense), int(i)+1, 64))
				copy(d, p.dense)
				p.dense = d
			}
			p.dense = p.dense[:i+1]
		}
		p.dense[i] = uint32(rel + 1)
		return
	}
	if i < int64(len(p.dense)) {
		p.dense[i] = 0 // (read again 4 GiB into the stream: the map has it)
	}
	if p.sparse == nil {
		p.sparse = map[int64]int64{}
	}
	p.sparse[i] = off
}

// LastRead returns the offset of the last opcode that reads memo index i,
// or -1 when nothing reads it.
func (p *Plan) LastRead(i int64) int64 {
	if i >= 0 && i < int64(len(p.dense)) && p.dense[i] != 0 {
		return p.base + int64(p.dense[i]) - 1
	}
	if off, ok := p.sparse[i]; ok {
		return off
	}
	return -1
}

// ReadAfter reports whether an opcode after offset off reads memo index i.
func (p *Plan) ReadAfter(i, off int64) bool { return p.LastRead(i) > off }

// Reads returns the number of memo indices the stream reads.
func (p *Plan) Reads() int {
	n := len(p.sparse)
	for _, v := range p.dense {
		if v != 0 {
			n++
		}
	}
	return n
}
