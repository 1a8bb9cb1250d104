package write

import (
	"bytes"
	"encoding/binary"

	"github.com/pk-tools/pk/pkg/pickle"
)

// The writer traverses a stream once. Whether an object is memoized depends
// on whether it is used again later in the traversal, which is known only
// at its end, and frame boundaries depend on the bytes written, which
// depend on the memo. So the traversal writes a tape: the output's bytes
// without memo opcodes, and, between them, events at the positions where
// the framer would have been asked something (an object's start, a large
// payload, the start and end of framing), where an object was built (a
// provisional memo index, one per object with a key, in build order) and
// where one was fetched again (its provisional index). replay then writes
// the stream through a framer, memoizing the objects whose key is used more
// than once, numbered 0, 1, 2 ... in build order: the bytes a dry run that
// counts uses and a second run that writes would give, for one traversal
// instead of two. Uses are counted by key, as that dry run counted them: a
// value built afresh several times (a global resolved as several effects)
// is memoized at each build once its key is used twice, and a fetch reads
// the latest build.

// Tape events: a byte holding the kind (low 4 bits) and the number of
// bytes written since the previous event (high 4 bits; 15: a uvarint
// follows), then, for some kinds, a uvarint argument. Memo writes carry no
// argument: provisional indices are assigned in order.
const (
	evBoundary = iota // an object starts: a full frame is closed
	evMemo            // an object with a key is built (the next provisional index)
	evGet             // a built object is fetched again: its provisional index
	evHeader          // the next arg bytes are the header of a payload of FrameTarget bytes or more
	evBig             // a payload of FrameTarget bytes or more: index into bigs
	evRaw             // the next arg bytes are written outside frames (PROTO)
	evStart           // framing starts
	evEnd             // framing ends: the last frame is closed
)

// tape records one stream's traversal (see above).
type tape struct {
	buf    []byte // the bytes written, without memo opcodes and large payloads
	ev     []byte // the events
	last   int    // len(buf) at the last event
	lastEv byte   // the last event's kind
	bigs   []string
	group  []int32 // by provisional index: its key's group (replay: its memo index, -1: none)
	uses   []int32 // by group: builds and fetches of the key
}

func (t *tape) event(kind byte, arg uint64, witharg bool) {
	d := len(t.buf) - t.last
	if d < 15 {
		t.ev = append(t.ev, kind|byte(d)<<4)
	} else {
		t.ev = append(t.ev, kind|0xf0)
		t.ev = binary.AppendUvarint(t.ev, uint64(d))
	}
	if witharg {
		t.ev = binary.AppendUvarint(t.ev, arg)
	}
	t.last = len(t.buf)
	t.lastEv = kind
}

func (t *tape) raw(b []byte) {
	t.event(evRaw, uint64(len(b)), true)
	t.buf = append(t.buf, b...)
	t.last = len(t.buf)
}

func (t *tape) start() { t.event(evStart, 0, false) }
func (t *tape) end()   { t.event(evEnd, 0, false) }

func (t *tape) boundary() {
	if t.lastEv == evBoundary && t.last == len(t.buf) && len(t.ev) > 0 {
		return // the same boundary again
	}
	t.event(evBoundary, 0, false)
}

func (t *tape) write(b ...byte) { t.buf = append(t.buf, b...) }

func (t *tape) writeString(s string) { t.buf = append(t.buf, s...) }

// header writes an opcode with its length argument; a payload of n bytes
// follows (payload / payloadString).
func (t *tape) header(h []byte, n int64) {
	if n >= FrameTarget {
		t.event(evHeader, uint64(len(h)), true)
		t.buf = append(t.buf, h...)
		t.last = len(t.buf)
		return
	}
	t.buf = append(t.buf, h...)
}

func (t *tape) payload(b []byte) {
	if len(b) >= FrameTarget {
		t.payloadString(string(b))
		return
	}
	t.buf = append(t.buf, b...)
}

func (t *tape) payloadString(s string) {
	if len(s) >= FrameTarget {
		t.event(evBig, uint64(len(t.bigs)), true)
		t.bigs = append(t.bigs, s)
		return
	}
	t.buf = append(t.buf, s...)
}

// built records that an object with a key is built and returns its
// provisional index; prev is the provisional index of the key's previous
// build (-1: none), whose group it joins.
func (t *tape) built(prev int32) int32 {
	p := int32(len(t.group))
	g := int32(len(t.uses))
	if prev >= 0 {
		g = t.group[prev]
		t.uses[g]++
	} else {
		t.uses = append(t.uses, 1)
	}
	t.group = append(t.group, g)
	t.event(evMemo, 0, false)
	return p
}

// used returns how often the key of provisional index p was built and
// fetched so far.
func (t *tape) used(p int32) int32 { return t.uses[t.group[p]] }

// fetch records a memo fetch of the object of provisional index p.
func (t *tape) fetch(p int32) {
	t.uses[t.group[p]]++
	t.event(evGet, uint64(p), true)
}

// replay appends the stream the tape recorded to out, framed at protocol 4
// and above, memoizing the objects used more than once, and returns its
// bytes (a window of out). On error out is as it was.
func (t *tape) replay(proto int, out *bytes.Buffer) ([]byte, error) {
	start := out.Len()
	b, err := t.replayTo(proto, out, start)
	if err != nil {
		out.Truncate(start)
		return nil, err
	}
	return b, nil
}

func (t *tape) replayTo(proto int, out *bytes.Buffer, start int) ([]byte, error) {
	out.Grow(len(t.buf) + len(t.buf)/FrameTarget*9 + 16)
	f := &framer{out: out}
	pos := 0
	next := int32(0)  // the next memo index
	prov := uint64(0) // the next provisional index
	ev := t.ev
	for len(ev) > 0 {
		kind, d := ev[0]&15, uint64(ev[0]>>4)
		ev = ev[1:]
		if d == 15 {
			var n int
			d, n = binary.Uvarint(ev)
			ev = ev[n:]
		}
		if d > 0 {
			f.write(t.buf[pos : pos+int(d)]...)
			pos += int(d)
		}
		var arg uint64
		switch kind {
		case evMemo:
			arg = prov
			prov++
		case evGet, evHeader, evBig, evRaw:
			var n int
			arg, n = binary.Uvarint(ev)
			ev = ev[n:]
		}
		switch kind {
		case evBoundary:
			f.boundary()
		case evMemo:
			if t.uses[t.group[arg]] < 2 {
				t.group[arg] = -1
				continue
			}
			idx := next
			next++
			t.group[arg] = idx
			if proto >= 4 {
				f.write(byte(pickle.MEMOIZE))
			} else if idx < 256 {
				f.write(byte(pickle.BINPUT), byte(idx))
			} else {
				var b [5]byte
				b[0] = byte(pickle.LONG_BINPUT)
				binary.LittleEndian.PutUint32(b[1:], uint32(idx))
				f.write(b[:]...)
			}
		case evGet:
			idx := t.group[arg]
			if idx < 0 {
				return nil, &refusal{reason: "internal: object used again but not memoized"}
			}
			if idx < 256 {
				f.write(byte(pickle.BINGET), byte(idx))
			} else {
				var b [5]byte
				b[0] = byte(pickle.LONG_BINGET)
				binary.LittleEndian.PutUint32(b[1:], uint32(idx))
				f.write(b[:]...)
			}
		case evHeader:
			f.header(t.buf[pos:pos+int(arg)], FrameTarget)
			pos += int(arg)
		case evBig:
			f.payloadString(t.bigs[arg])
		case evRaw:
			f.raw(t.buf[pos : pos+int(arg)])
			pos += int(arg)
		case evStart:
			f.start()
		case evEnd:
			f.end()
		}
	}
	if pos < len(t.buf) {
		f.write(t.buf[pos:]...)
	}
	return out.Bytes()[start:], nil
}
