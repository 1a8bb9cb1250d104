package write

import (
	"encoding/binary"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Framing follows CPython's pickle._Framer (protocol 4 and above): opcodes
// collect in the current frame; at the start of each object written, a
// frame of at least FrameTarget bytes is closed; a payload of FrameTarget
// bytes or more is written outside any frame, after closing the current one;
// a frame shorter than frameMin bytes is written without its FRAME opcode.
const (
	FrameTarget = 64 << 10
	frameMin    = 4
)

// framer collects the output of one stream (the tape's replay writes
// through it).
type framer struct {
	framing bool
	out     outWriter
	cur     []byte
	small   [9]byte // what write hands out outside a frame (b does not escape)
}

func (f *framer) raw(b []byte) {
	f.out.Write(b)
}

// start begins framing (protocol 4 and above).
func (f *framer) start() { f.framing = true }

func (f *framer) write(b ...byte) {
	if f.framing {
		f.cur = append(f.cur, b...)
	} else {
		f.out.Write(b)
	}
}

// writeSmall is write of at most 9 bytes, which do not escape: the
// replay's MEMOIZE, BINPUT and BINGET opcodes cost no allocation (as write's
// arguments they did, one each).
func (f *framer) writeSmall(b ...byte) {
	if f.framing {
		f.cur = append(f.cur, b...)
	} else {
		f.out.Write(f.small[:copy(f.small[:], b)])
	}
}

func (f *framer) writeString(s string) {
	if f.framing {
		f.cur = append(f.cur, s...)
	} else {
		f.out.WriteString(s)
	}
}

// boundary is the start of an object: close a full frame.
func (f *framer) boundary() {
	if f.framing && len(f.cur) >= FrameTarget {
		f.commit()
	}
}

func (f *framer) commit() {
	if len(f.cur) == 0 {
		return
	}
	if len(f.cur) >= frameMin {
		h := &f.small
		h[0] = byte(pickle.FRAME)
		binary.LittleEndian.PutUint64(h[1:], uint64(len(f.cur)))
		f.out.Write(h[:])
	}
	f.out.Write(f.cur)
	f.cur = f.cur[:0]
}

// header writes an opcode with its length argument; a payload of n bytes
// follows (payload / payloadString). A large payload goes outside frames.
func (f *framer) header(h []byte, n int64) {
	if f.framing && n >= FrameTarget {
		f.commit()
		f.out.Write(h)
		return
	}
	f.write(h...)
}

func (f *framer) payload(b []byte) {
	if f.framing && len(b) >= FrameTarget {
		f.out.Write(b) // after header's commit
		return
	}
	f.write(b...)
}

func (f *framer) payloadString(s string) {
	if f.framing && len(s) >= FrameTarget {
		f.out.WriteString(s)
		return
	}
	f.writeString(s)
}

// end closes the last frame.
func (f *framer) end() {
	if f.framing {
		f.commit()
	}
	f.framing = false
}
