package pickle

import (
	"errors"
	"io"
	"math"
	"math/bits"
)

// Plan is pass 1 of the engine (docs/engine.md §2.1): for one stream, the
// offset of the last opcode that reads each memo index (GET, BINGET,
// LONG_BINGET). The machine uses it to tell a memo entry that a later
// opcode reads from one that nothing reads again: an object held only by
// dead memo entries is final once it is off the stack.
//
// A plan costs, while pass 1 runs, 4 bytes per memo index up to the
// highest index read (dense, as picklers number their writes 0, 1, 2, ...;
// an index read far beyond the ones before goes to a map, so the dense
// part is at most about twice the reads plus 4096) and a map entry for each
// other index read, and for each index last read 4 GiB or more into the
// stream; indices that are written and never read cost nothing. The dense
// part is allocated a page at a time, each written once: a table doubled
// and copied as it grew left three times its size behind (a cloudpickle
// state's 1.5 MB plan allocated 5.5 MB, written while the store grew
// beside it). At STOP, when fewer than about half of the dense indices are
// read, the pages are sealed into a table of the read ones (seal): a bit
// an index and 4 bytes a read index (a cloudpickle state reads 57,634 of
// its 404,859 memo indices: 0.3 MB instead of 1.6), which the memo's own
// table follows (memoTable.slot).
type Plan struct {
	base int64 // where the stream begins
	n    int64 // indices in the dense part
	// dense, while pass 1 runs (nil once sealed), in pages of planPage:
	// 1 + offset - base of the last read of index i; 0: not in dense
	pages []*[planPage]uint32
	// sealed: bit i of bits is set when index i is read (in the dense
	// part), rank[w] counts the bits set in bits[:w], and last holds, by
	// that rank, what pages held for the index
	bits   []uint64
	rank   []uint32
	last   []uint32
	sparse map[int64]int64
}

// planPage is the number of indices in one page of Plan.pages (16 KB).
const planPage = 1 << 12

// dense returns the number of indices the dense part holds.
func (p *Plan) dense() int64 { return p.n }

// sealed reports whether the dense part is a table of the read indices.
func (p *Plan) sealed() bool { return p.bits != nil }

// slot returns the rank of index i among the dense read indices of a
// sealed plan, and whether i is one.
func (p *Plan) slot(i int64) (int, bool) {
	if i < 0 || i >= p.n {
		return 0, false
	}
	w, b := i>>6, uint64(1)<<(i&63)
	if p.bits[w]&b == 0 {
		return 0, false
	}
	return int(p.rank[w]) + bits.OnesCount64(p.bits[w]&(b-1)), true
}

// lastAt is LastRead of the index of rank r in a sealed plan.
func (p *Plan) lastAt(r int) int64 { return p.base + int64(p.last[r]) - 1 }

// seal replaces the pages by the table of the read indices when that
// holds less than half their bytes.
func (p *Plan) seal() {
	reads := 0
	for _, pg := range p.pages {
		for _, v := range pg {
			if v != 0 {
				reads++
			}
		}
	}
	words := (p.n + 63) / 64
	if words == 0 || 12*words+4*int64(reads) > 2*p.n {
		return
	}
	p.bits, p.rank, p.last = make([]uint64, words), make([]uint32, words), make([]uint32, 0, reads)
	for k, pg := range p.pages {
		for j, v := range pg {
			if v != 0 {
				i := k*planPage + j
				p.bits[i>>6] |= 1 << (i & 63)
				p.last = append(p.last, v)
			}
		}
	}
	r := uint32(0)
	for w, b := range p.bits {
		p.rank[w] = r
		r += uint32(bits.OnesCount64(b))
	}
	p.pages = nil
}

// planDense bounds the dense part: indices read above it go to the map.
const planDense = 1 << 24

// PlanStream reads one stream from rd's position to its STOP with Skim
// (opcodes and integer arguments only) and returns its plan. It fails where
// Skim fails; a truncated stream gives io.ErrUnexpectedEOF.
//
// The opcodes that lie whole in the read buffer are decoded from it in
// place (Reader.SkimWindow, as Skim's skimBuffered decodes them: the same
// opcodes, widths and bounds), with no record an opcode: most are no memo
// read (a cloudpickle state: 593,000 reads of 1.9 million opcodes), and
// a record an opcode, filtered, was about 46 instructions of the 60 an
// opcode cost here. The others (a frame's end, a text or long argument,
// STOP, an error) are read one at a time the ordinary way.
func PlanStream(rd *Reader) (*Plan, error) {
	p := &Plan{base: rd.Offset()}
	for {
		if win, th := rd.SkimWindow(); len(win) > 0 {
			at := rd.Offset()
			i := 0
			for i < len(win) {
				k, ok := bufferedOp(win, i, len(win), th)
				if !ok {
					break
				}
				if c := win[i]; c == byte(BINGET) || c == byte(LONG_BINGET) {
					p.note(fixedArg(bufArg[c], win[i+1:]), at+int64(i))
				}
				i += 1 + k
			}
			rd.SkimDone(i)
		}
		// one opcode the ordinary way: an empty window, a frame boundary,
		// a text or long argument, STOP, an error
		var o Op
		if err := rd.next(&o); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		switch o.Code {
		case GET, BINGET, LONG_BINGET:
			if o.Big == nil {
				p.note(o.Int, o.Offset)
			}
		case STOP:
			p.seal()
			return p, nil
		}
	}
}

// note records a read of memo index i by the opcode at offset off.
func (p *Plan) note(i, off int64) {
	if rel := off - p.base; i >= 0 && i < p.n && rel < math.MaxUint32-1 {
		p.pages[i/planPage][i%planPage] = uint32(rel + 1) // (read's most common case, inline)
		return
	}
	p.read(i, off)
}

func (p *Plan) read(i, off int64) {
	if i < 0 {
		return
	}
	if rel := off - p.base; rel < math.MaxUint32-1 && i < planDense && i <= 2*p.dense()+4096 {
		// dense while the indices read stay near the ones before: a
		// hostile LONG_BINGET of index 2^24-1 in a tiny file costs a map
		// entry, not 128 MB
		for i >= p.dense() {
			p.pages = append(p.pages, new([planPage]uint32))
			p.n += planPage
		}
		p.pages[i/planPage][i%planPage] = uint32(rel + 1)
		return
	}
	if i < p.dense() {
		p.pages[i/planPage][i%planPage] = 0 // (read again 4 GiB into the stream: the map has it)
	}
	if p.sparse == nil {
		p.sparse = map[int64]int64{}
	}
	p.sparse[i] = off
}

// LastRead returns the offset of the last opcode that reads memo index i,
// or -1 when nothing reads it.
func (p *Plan) LastRead(i int64) int64 {
	if p.sealed() {
		if r, ok := p.slot(i); ok {
			return p.lastAt(r)
		}
	} else if i >= 0 && i < p.dense() {
		if v := p.pages[i/planPage][i%planPage]; v != 0 {
			return p.base + int64(v) - 1
		}
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
	n := len(p.sparse) + len(p.last)
	for _, pg := range p.pages {
		for _, v := range pg {
			if v != 0 {
				n++
			}
		}
	}
	return n
}
