package write

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/pk-tools/pk/pkg/internal/grow"
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
	// builds, by provisional index: for a key's first build, how often
	// the key was built and fetched so far (1 or more); for a later build
	// of the key, -1 - the first one's provisional index. replay writes
	// over each, in order, its memo index (-1: not memoized): one int32 a
	// build, where a group and a count were two (a table of two million
	// distinct strs: 8 MB less)
	builds []int32
	nev    int // events recorded
	// longest: the longest payload (or LONG4 argument) of FrameTarget
	// bytes or more written, 0 for none
	longest int64

	// past tapeMem bytes of buf and ev together, they are written out in chunks to a
	// temporary file (unlinked at once where the system allows), read back
	// in order by replay: a stream's tape is about the size of its output
	spool   *os.File
	spoolAt int64 // where the next chunk goes (the file's good bytes)
	spooled int64 // bytes of buf written out
	stay    bool  // the file cannot be written: the rest stays in memory
	named   bool  // the file's name still exists
}

// tapeMem is how many bytes of a tape, its bytes and its events together,
// are kept in memory before they are written out (tests lower it): 1 MiB,
// whose buffers hold 3 MB at most (4 MiB held 13 MB on a 100 MB table).
// The events count too: a code-carrying state's are more than its bytes
// (2.1 million events beside 1.4 MB of bytes on a cloudpickle state, most
// of them memo writes and fetches), and flushed by its bytes alone, the
// events' buffer had grown to 2.7 MB at the end of the traversal, where pk
// canon's peak is.
var tapeMem = 1 << 20

// flush writes buf up to the last event, and the events, to the spool as
// one chunk: a header of their two lengths, then both. The bytes after the
// last event stay (the next event's).
func (t *tape) flush() {
	if t.spool == nil {
		f, err := os.CreateTemp("", "pk-canon-*.tape")
		if err != nil {
			t.stay = true
			return
		}
		t.spool, t.named = f, os.Remove(f.Name()) != nil
	}
	var h [16]byte
	binary.LittleEndian.PutUint64(h[:], uint64(t.last))
	binary.LittleEndian.PutUint64(h[8:], uint64(len(t.ev)))
	at := t.spoolAt
	for _, b := range [][]byte{h[:], t.buf[:t.last], t.ev} {
		if _, err := t.spool.WriteAt(b, at); err != nil {
			t.stay = true // (a disk full: this chunk stays in memory, the file's chunks are whole)
			return
		}
		at += int64(len(b))
	}
	t.spoolAt = at
	t.spooled += int64(t.last)
	n := copy(t.buf, t.buf[t.last:])
	t.buf, t.ev, t.last = t.buf[:n], t.ev[:0], 0
}

// close removes the spool.
func (t *tape) close() {
	if t.spool != nil {
		t.spool.Close()
		if t.named {
			os.Remove(t.spool.Name())
		}
		t.spool = nil
	}
}

func (t *tape) event(kind byte, arg uint64, witharg bool) {
	if t.last+len(t.ev) >= tapeMem && !t.stay {
		t.flush()
	}
	t.nev++
	t.ev = grow.Room(t.ev, 1+2*binary.MaxVarintLen64)
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
	t.buf = append(grow.Room(t.buf, len(b)), b...)
	t.last = len(t.buf)
}

func (t *tape) start() { t.event(evStart, 0, false) }
func (t *tape) end()   { t.event(evEnd, 0, false) }

func (t *tape) boundary() {
	if t.lastEv == evBoundary && t.last == len(t.buf) && t.nev > 0 {
		return // the same boundary again
	}
	t.event(evBoundary, 0, false)
}

func (t *tape) write(b ...byte) { t.buf = append(grow.Room(t.buf, len(b)), b...) }

func (t *tape) writeString(s string) { t.buf = append(grow.Room(t.buf, len(s)), s...) }

// header writes an opcode with its length argument; a payload of n bytes
// follows (payload / payloadString).
func (t *tape) header(h []byte, n int64) {
	if n >= FrameTarget {
		t.longest = max(t.longest, n)
		t.event(evHeader, uint64(len(h)), true)
		t.buf = append(grow.Room(t.buf, len(h)), h...)
		t.last = len(t.buf)
		return
	}
	t.buf = append(grow.Room(t.buf, len(h)), h...)
}

func (t *tape) payload(b []byte) {
	if len(b) >= FrameTarget {
		t.payloadString(string(b))
		return
	}
	t.buf = append(grow.Room(t.buf, len(b)), b...)
}

func (t *tape) payloadString(s string) {
	if len(s) >= FrameTarget {
		t.event(evBig, uint64(len(t.bigs)), true)
		t.bigs = append(t.bigs, s)
		return
	}
	t.buf = append(grow.Room(t.buf, len(s)), s...)
}

// built records that an object with a key is built and returns its
// provisional index; prev is the provisional index of the key's previous
// build (-1: none), whose key's count it adds to.
func (t *tape) built(prev int32) int32 {
	p := int32(len(t.builds))
	b := int32(1)
	if prev >= 0 {
		first := t.first(prev)
		t.builds[first]++
		b = -1 - first
	}
	t.builds = append(grow.Room(t.builds, 1), b)
	t.event(evMemo, 0, false)
	return p
}

// first returns the provisional index of the first build of p's key.
func (t *tape) first(p int32) int32 {
	if b := t.builds[p]; b < 0 {
		return -1 - b
	}
	return p
}

// fetch records a memo fetch of the object of provisional index p.
func (t *tape) fetch(p int32) {
	t.builds[t.first(p)]++
	t.event(evGet, uint64(p), true)
}

// replay appends the stream the tape recorded to out, framed at protocol 4
// and above, memoizing the objects used more than once, and returns its
// bytes (a window of out). On error out is as it was.
func (t *tape) replay(proto int, out *bytes.Buffer) ([]byte, error) {
	start := out.Len()
	t.collect()
	out.Grow(t.outSize() + t.nev)
	if err := t.replayTo(proto, out); err != nil {
		out.Truncate(start)
		return nil, err
	}
	return out.Bytes()[start:], nil
}

// replayOut is replay into an outBuf (spill.go). On error out is as it was.
func (t *tape) replayOut(proto int, out *outBuf) error {
	start := out.Len()
	t.collect()
	out.grow(t.outSize(), t.nev)
	if err := t.replayTo(proto, out); err != nil {
		if terr := out.Truncate(start); terr != nil {
			return terr
		}
		return err
	}
	return nil
}

// collect: a large stream's traversal kept tables of values and nodes,
// about the size of the output, which are garbage now; they are collected
// before the output takes their place.
func (t *tape) collect() {
	if t.spooled+int64(len(t.buf)) >= collectAt { // (the tape's bytes, wherever they are)
		runtime.GC()
	}
}

// collectAt is the size of a tape past which collect runs: 1 MiB, the
// tables of a smaller stream are not worth a collection. (At 4 MiB the
// output of a 5 MB cloudpickle state, 3 MB, was laid out beside the
// garbage of its traversal: peak RSS 97-98 MB, 91-92 at 1 MiB.)
const collectAt = 1 << 20

// outSize is about the size of the stream the tape replays to, without
// the memo opcodes, which the tape does not hold: room for t.nev bytes
// more, one an event (most write a MEMOIZE or a BINGET: one or two bytes),
// saves the output buffer a doubling (3 MB copied, for the canonical form
// of a 5 MB cloudpickle state).
func (t *tape) outSize() int {
	size := int(t.spooled) + len(t.buf)
	return size + size/FrameTarget*9 + 16
}

func (t *tape) replayTo(proto int, out outWriter) error {
	r := &replayer{t: t, f: &framer{out: out}, proto: proto}
	if t.spool != nil {
		var buf, ev []byte
		var h [16]byte
		for at := int64(0); at < t.spoolAt; {
			if _, err := t.spool.ReadAt(h[:], at); err != nil {
				return fmt.Errorf("reading back what pk spooled (%s): %v", t.spool.Name(), err)
			}
			nb, ne := binary.LittleEndian.Uint64(h[:]), binary.LittleEndian.Uint64(h[8:])
			if nb > uint64(t.spoolAt) || ne > uint64(t.spoolAt) {
				return &refusal{reason: "internal: a damaged tape chunk"}
			}
			buf, ev = slices.Grow(buf[:0], int(nb))[:nb], slices.Grow(ev[:0], int(ne))[:ne]
			if _, err := t.spool.ReadAt(buf, at+16); err != nil {
				return fmt.Errorf("reading back what pk spooled (%s): %v", t.spool.Name(), err)
			}
			if _, err := t.spool.ReadAt(ev, at+16+int64(nb)); err != nil {
				return fmt.Errorf("reading back what pk spooled (%s): %v", t.spool.Name(), err)
			}
			at += 16 + int64(nb) + int64(ne)
			pos, err := r.chunk(buf, ev)
			if err != nil {
				return err
			}
			if pos != len(buf) {
				return &refusal{reason: "internal: a tape chunk not read to its end"}
			}
		}
	}
	pos, err := r.chunk(t.buf, t.ev)
	if err != nil {
		return err
	}
	if pos < len(t.buf) {
		r.f.write(t.buf[pos:]...)
	}
	return nil
}

// replayer is replay's state from one chunk of the tape to the next.
type replayer struct {
	t     *tape
	f     *framer
	proto int
	next  int32  // the next memo index
	prov  uint64 // the next provisional index
}

// chunk replays the events ev over the bytes buf and returns how many
// bytes of buf they took.
func (r *replayer) chunk(buf, ev []byte) (int, error) {
	t, f, proto := r.t, r.f, r.proto
	pos := 0
	for len(ev) > 0 {
		kind, d := ev[0]&15, uint64(ev[0]>>4)
		ev = ev[1:]
		if d == 15 {
			var n int
			d, n = binary.Uvarint(ev)
			ev = ev[n:]
		}
		if d > 0 {
			f.write(buf[pos : pos+int(d)]...)
			pos += int(d)
		}
		var arg uint64
		switch kind {
		case evMemo:
			arg = r.prov
			r.prov++
		case evGet, evHeader, evBig, evRaw:
			var n int
			arg, n = binary.Uvarint(ev)
			ev = ev[n:]
		}
		switch kind {
		case evBoundary:
			f.boundary()
		case evMemo:
			// a first build's count decides for its key; a later build's
			// first build was replayed already (its memo index, or -1)
			if b := t.builds[arg]; b >= 0 && b < 2 || b < 0 && t.builds[-1-b] < 0 {
				t.builds[arg] = -1
				continue
			}
			idx := r.next
			r.next++
			t.builds[arg] = idx
			if proto >= 4 {
				f.writeSmall(byte(pickle.MEMOIZE))
			} else if idx < 256 {
				f.writeSmall(byte(pickle.BINPUT), byte(idx))
			} else {
				var b [5]byte
				b[0] = byte(pickle.LONG_BINPUT)
				binary.LittleEndian.PutUint32(b[1:], uint32(idx))
				f.writeSmall(b[:]...)
			}
		case evGet:
			idx := t.builds[arg]
			if idx < 0 {
				return 0, &refusal{reason: "internal: object used again but not memoized"}
			}
			if idx < 256 {
				f.writeSmall(byte(pickle.BINGET), byte(idx))
			} else {
				var b [5]byte
				b[0] = byte(pickle.LONG_BINGET)
				binary.LittleEndian.PutUint32(b[1:], uint32(idx))
				f.writeSmall(b[:]...)
			}
		case evHeader:
			f.header(buf[pos:pos+int(arg)], FrameTarget)
			pos += int(arg)
		case evBig:
			f.payloadString(t.bigs[arg])
		case evRaw:
			f.raw(buf[pos : pos+int(arg)])
			pos += int(arg)
		case evStart:
			f.start()
		case evEnd:
			f.end()
		}
	}
	return pos, nil
}
