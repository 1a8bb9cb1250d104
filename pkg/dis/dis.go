// Package dis owns pk's disassembler: `pk dis` prints every opcode of every
// pickle stream in a file, with its offset, name and argument, in the format
// of `python -m pickletools` (or as JSON lines with typed arguments), without
// executing anything.
//
// The opcodes come from pickle.Reader; dis adds only a light emulation of
// the unpickler's stack (depths and the offset of the opcode that built each
// item, never values) to indent MARK blocks, annotate memo operations and
// reject what CPython's unpickler rejects at stack level: stack underflow, a
// missing MARK, a GET of a memo key never stored. Memory stays linear in the
// input; nothing recurses. See docs/pk-dis.md.
package dis

import (
	"io"
	"math"
	"strconv"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// MaxIndentLevels caps the indentation: MARK blocks nested deeper than this
// are indented as if at this level (pickletools indents without bound,
// which makes the output of 10^6 nested MARKs quadratic).
const MaxIndentLevels = 64

// HoldLimit is how much output of a stream after the first is held back
// before it is written: if the stream turns out not to be a pickle, the held
// lines are dropped and the bytes are reported as trailing instead.
const HoldLimit = 4 << 20

// Gap describes bytes inside a stream that are not opcodes: the raw array
// data joblib writes after a NumpyArrayWrapper BUILD (Pickle false), or a
// nested pickle there (Pickle true, for object arrays).
type Gap struct {
	Len    int64
	Pickle bool
}

// Options tune Run.
type Options struct {
	// JSON writes one JSON object per opcode instead of text.
	JSON bool
	// Pickletools writes exactly what `python -m pickletools FILE` writes
	// for the first stream (no stream headers, no memo origins, only the
	// first stream), for diffing the two.
	Pickletools bool
	// BlobThreshold: payloads of at least this many bytes are shown
	// shortened with their length (0: pickle.DefaultBlobThreshold).
	BlobThreshold int64
	// Indent is the number of spaces per MARK level (0: 4, as pickletools).
	Indent int
	// Part, when set, is the index of the container part being
	// disassembled: JSON records carry it as "part".
	Part *int
	// GapAfter, when set, is asked after every opcode whether non-opcode
	// bytes follow it.
	GapAfter func(op *pickle.Op) (Gap, bool)
}

// Summary says what Run saw.
type Summary struct {
	Streams  int
	Ops      int64
	Trailing *pickle.Trailing
	// Unsure (Count only): a stream held an opcode that the emulator lets
	// through and that pkg/pickle's machine (as CPython's unpickler) may
	// refuse from what the emulator does not follow: DICT or SETITEMS of
	// an odd number of items, STACK_GLOBAL of an item not made by a str
	// opcode, EXT of a code <= 0. Without it, every stream the emulator
	// read to its STOP is one the machine reads to its STOP too
	// (FuzzCount holds them to it).
	Unsure bool
	// First (Count only): the opcode that made the first stream's result
	// (GET and DUP: the opcode that made what they push).
	First pickle.Opcode
}

// emu is the stack emulation of one stream.
type emu struct {
	stack    []int64   // origin of each item: offset<<8 | opcode
	marks    []int     // stack length at each open MARK
	markPos  []int64   // offset of each open MARK
	memo     [][]int64 // origin+1 per memo index (0: unset), dense part in chunks
	memoMap  map[int64]int64
	memoLen  int
	maxProto int
	gapEnd   int64 // for a nested pickle: where it must end
}

func newEmu() *emu { return &emu{maxProto: -1, gapEnd: -1} }

func (e *emu) reset() {
	e.stack = e.stack[:0]
	e.marks = e.marks[:0]
	e.markPos = e.markPos[:0]
	for _, c := range e.memo {
		clear(c)
	}
	e.memoMap = nil
	e.memoLen = 0
	e.maxProto = -1
	e.gapEnd = -1
}

func (e *emu) fence() int {
	if len(e.marks) == 0 {
		return 0
	}
	return e.marks[len(e.marks)-1]
}

// The dense part of the memo is kept in chunks, so growing it never copies
// (a 100 MB pickle has millions of memo entries).
const memoChunkBits = 16

func (e *emu) memoGet(i int64) (int64, bool) {
	if i >= 0 {
		if c := i >> memoChunkBits; c < int64(len(e.memo)) && e.memo[c] != nil {
			v := e.memo[c][i&(1<<memoChunkBits-1)]
			if v != 0 {
				return v - 1, true
			}
		}
	}
	v, ok := e.memoMap[i]
	return v, ok
}

func (e *emu) memoPut(i int64, origin int64, ops int64) {
	// Chunks are made only for indices in proportion to the opcodes read,
	// so huge LONG_BINPUT indices cost a map entry, not memory.
	if i >= 0 && i < 2*ops+4096 {
		c := i >> memoChunkBits
		for int64(len(e.memo)) <= c {
			e.memo = append(e.memo, nil)
		}
		if e.memo[c] == nil {
			e.memo[c] = make([]int64, 1<<memoChunkBits)
		}
		slot := &e.memo[c][i&(1<<memoChunkBits-1)]
		if *slot == 0 {
			if _, ok := e.memoMap[i]; ok {
				delete(e.memoMap, i)
			} else {
				e.memoLen++
			}
		}
		*slot = origin + 1
		return
	}
	if _, ok := e.memoGet(i); !ok {
		e.memoLen++
	}
	if e.memoMap == nil {
		e.memoMap = map[int64]int64{}
	}
	e.memoMap[i] = origin
}

type disassembler struct {
	rd    *pickle.Reader
	w     io.Writer
	cur   pickle.Op // the opcode being shown (a field, so it is not allocated per opcode)
	opt   Options
	out   []byte // pending output
	hold  bool   // keep out until the stream is known to be a pickle
	err   error  // write error
	emus  []*emu
	spare *emu
	ops   int64
	// per stream
	stream int
	indent []byte
	// room made in out before each text line (line.go)
	lineRoom int
	// opcodes decoded from the read buffer at once (pickle.NextBuffered)
	batch []pickle.Op
	// Count: no output; each is given every opcode
	count  bool
	each   func(o *pickle.Op)
	unsure bool
	first  pickle.Opcode
}

// batchOps is how many opcodes are decoded from the read buffer at once.
const batchOps = 256

// Run disassembles every pickle stream read from r (size bytes, -1 when
// unknown) onto w. name is used in errors. It returns the first error that
// stops the first stream (a *pickle.Error naming file, offset, opcode and
// reason) after writing every opcode read before it; a later stream that is
// not a pickle is reported in Summary.Trailing, as pickle.Parse does.
func Run(w io.Writer, r io.Reader, size int64, name string, opt Options) (Summary, error) {
	rd := pickle.NewReader(r, size, name)
	return RunReader(w, rd, opt)
}

// RunReader is Run over an existing reader.
func RunReader(w io.Writer, rd *pickle.Reader, opt Options) (Summary, error) {
	rd.BlobThreshold = opt.BlobThreshold
	if opt.Indent <= 0 {
		opt.Indent = 4
	}
	d := &disassembler{rd: rd, w: w, opt: opt, out: make([]byte, 0, 2*flushAt), batch: make([]pickle.Op, batchOps)}
	// every opcode is shown before the next is read: its short str and
	// bytes arguments may point into the read buffer
	defer func(b bool) { rd.Borrow = b }(rd.Borrow)
	rd.Borrow = true
	d.indent = make([]byte, MaxIndentLevels*opt.Indent)
	for i := range d.indent {
		d.indent[i] = ' '
	}
	d.lineRoom = lineRoom + len(d.indent)
	sum, err := d.run()
	d.flush(true)
	if err == nil && d.err != nil {
		err = d.err
	}
	return sum, err
}

// Count reads every pickle stream of rd as RunReader does, with the same
// emulation and the same verdicts (the Summary's streams and trailing
// bytes, the error that stops the first stream), and writes nothing: a
// first pass for a header that says how many streams follow. each, when
// not nil, is given every opcode read (its short arguments may point into
// the read buffer: valid until each returns). Summary.Unsure and First
// say what the machine of pkg/pickle may see otherwise (Summary). Only
// opt.BlobThreshold is read.
func Count(rd *pickle.Reader, opt Options, each func(o *pickle.Op)) (Summary, error) {
	rd.BlobThreshold = opt.BlobThreshold
	d := &disassembler{rd: rd, w: io.Discard, opt: Options{Indent: 1}, batch: make([]pickle.Op, batchOps), count: true, each: each}
	defer func(b bool) { rd.Borrow = b }(rd.Borrow)
	rd.Borrow = true
	sum, err := d.run()
	sum.Unsure, sum.First = d.unsure, d.first
	return sum, err
}

// codeRepr is repr(opcode.code)[1:-1] as pickletools prints it.
func codeRepr(c byte) string {
	switch {
	case c == '\\':
		return `\\`
	case c == '\'':
		return `\'`
	case c == '\t':
		return `\t`
	case c == '\n':
		return `\n`
	case c == '\r':
		return `\r`
	case c >= 0x20 && c < 0x7F:
		return string(rune(c))
	case c >= 0xA1 && c != 0xAD:
		return string(rune(c))
	}
	return `\x` + string([]byte{hexDigits[c>>4], hexDigits[c&15]})
}

// flushAt is how much output is gathered before it is written.
const flushAt = 1 << 20

// maybeFlush is flush(false), its first test inlined.
func (d *disassembler) maybeFlush() {
	if len(d.out) >= flushAt {
		d.flush(false)
	}
}

func (d *disassembler) flush(force bool) {
	if !force {
		if len(d.out) < flushAt {
			return
		}
		if d.hold {
			if len(d.out) < HoldLimit {
				return
			}
			d.hold = false // too long to hold: commit to it
		}
	}
	if len(d.out) == 0 {
		return
	}
	if d.err == nil {
		if _, err := d.w.Write(d.out); err != nil {
			d.err = err
		}
	}
	d.out = d.out[:0]
}

func (d *disassembler) comment(s string) {
	if d.opt.JSON || d.opt.Pickletools || d.count {
		return
	}
	d.out = append(d.out, "# "...)
	d.out = append(d.out, s...)
	d.out = append(d.out, '\n')
}

func (d *disassembler) run() (Summary, error) {
	var sum Summary
	rd := d.rd
	for {
		if rd.AtEOF() {
			break
		}
		if d.opt.Pickletools && sum.Streams > 0 {
			break
		}
		start := rd.Offset()
		var prefix []byte
		if sum.Streams > 0 {
			prefix = append(prefix, rd.Peek(pickle.BlobPrefix)...)
			d.flush(true)
			d.hold = true
		}
		mark := len(d.out)
		d.stream = sum.Streams
		d.comment("stream " + strconv.Itoa(sum.Streams) + " at offset " + strconv.FormatInt(start, 10))
		err := d.runStream(start)
		if err != nil {
			if sum.Streams == 0 {
				return sum, err
			}
			// Not a pickle: the bytes from start on are trailing.
			reason := err.Error()
			if pe, ok := pickle.AsError(err); ok {
				c := *pe
				c.File = ""
				reason = c.Error()
			}
			if d.hold {
				d.out = d.out[:mark]
			}
			d.hold = false
			rd.Discard(math.MaxInt64)
			tr := &pickle.Trailing{Offset: start, Len: rd.Offset() - start, Reason: reason, Prefix: prefix}
			sum.Trailing = tr
			d.trailing(tr)
			break
		}
		d.hold = false
		sum.Streams++
		d.flush(false)
	}
	sum.Ops = d.ops
	if sum.Streams == 0 {
		return sum, &pickle.Error{File: rd.Name(), Offset: 0, Reason: "empty input: not a pickle"}
	}
	return sum, nil
}

func (d *disassembler) trailing(tr *pickle.Trailing) {
	if d.opt.Pickletools {
		return
	}
	if d.opt.JSON {
		d.out = d.jsonHead(d.out)
		d.out = append(d.out, `,"record":"trailing","offset":`...)
		d.out = strconv.AppendInt(d.out, tr.Offset, 10)
		d.out = append(d.out, `,"len":`...)
		d.out = strconv.AppendInt(d.out, tr.Len, 10)
		d.out = append(d.out, `,"reason":`...)
		d.out = jsonl.AppendString(d.out, tr.Reason)
		d.out = append(d.out, "}\n"...)
		return
	}
	d.out = append(d.out, "# trailing "...)
	d.out = strconv.AppendInt(d.out, tr.Len, 10)
	d.out = append(d.out, " bytes at offset "...)
	d.out = strconv.AppendInt(d.out, tr.Offset, 10)
	d.out = append(d.out, " are not a pickle: "...)
	d.out = append(d.out, tr.Reason...)
	d.out = append(d.out, "\n# starting "...)
	d.out = appendBytesRepr(d.out, string(tr.Prefix))
	if tr.Len > int64(len(tr.Prefix)) {
		d.out = append(d.out, "..."...)
	}
	d.out = append(d.out, '\n')
}

func (d *disassembler) fail(o *pickle.Op, format string, args ...any) error {
	return &pickle.Error{File: d.rd.Name(), Offset: o.Offset, Op: o.Code.String(), Reason: sprintf(format, args...)}
}

// runStream disassembles one stream, from start to its STOP.
func (d *disassembler) runStream(start int64) error {
	e := d.spare
	if e == nil {
		e = newEmu()
	} else {
		e.reset()
		d.spare = nil
	}
	d.emus = append(d.emus[:0], e)
	rd := d.rd
	for {
		e := d.emus[len(d.emus)-1]
		if d.opt.GapAfter == nil {
			// the opcodes whole in the read buffer, none of them STOP (a
			// gap would consume bytes behind them)
			if n := rd.NextBuffered(d.batch); n > 0 {
				for i := range d.batch[:n] {
					d.ops++
					if _, err := d.step(e, &d.batch[i]); err != nil {
						return err
					}
					d.maybeFlush()
				}
				continue
			}
		}
		err := rd.NextInto(&d.cur)
		o := &d.cur
		if err != nil {
			if err == io.EOF {
				if rd.Offset() == start {
					return &pickle.Error{File: rd.Name(), Offset: rd.Offset(), Reason: "empty input: not a pickle"}
				}
				return &pickle.Error{File: rd.Name(), Offset: rd.Offset(), Reason: "pickle data was truncated: input ends before STOP"}
			}
			return err
		}
		d.ops++
		stop, err := d.step(e, o)
		if err != nil {
			return err
		}
		if stop {
			if !d.opt.JSON && !d.count {
				d.out = append(d.out, "highest protocol among opcodes = "...)
				d.out = strconv.AppendInt(d.out, int64(e.maxProto), 10)
				d.out = append(d.out, '\n')
				if n, m := len(e.stack), len(e.marks); (n > 0 || m > 0) && !d.opt.Pickletools {
					d.comment(strconv.Itoa(n) + " item(s) and " + strconv.Itoa(m) + " MARK(s) left on the stack under the result (CPython ignores them)")
				}
			}
			if len(d.emus) == 1 {
				d.spare = e
				return nil
			}
			// end of a nested pickle
			if rd.Offset() != e.gapEnd {
				return d.fail(o, "nested pickle ends at offset %d, not at the end of its region %d", rd.Offset(), e.gapEnd)
			}
			d.emus = d.emus[:len(d.emus)-1]
			d.flush(false)
			continue
		}
		if d.opt.GapAfter != nil {
			if g, ok := d.opt.GapAfter(o); ok {
				if err := d.gap(o, g); err != nil {
					return err
				}
			}
		}
		d.flush(false)
	}
}

func (d *disassembler) gap(o *pickle.Op, g Gap) error {
	pos := d.rd.Offset()
	name := "@RAW"
	if g.Pickle {
		name = "@NESTED"
	}
	if d.opt.JSON {
		d.out = d.jsonHead(d.out)
		d.out = append(d.out, `,"stream":`...)
		d.out = strconv.AppendInt(d.out, int64(d.stream), 10)
		d.out = append(d.out, `,"offset":`...)
		d.out = strconv.AppendInt(d.out, pos, 10)
		d.out = append(d.out, `,"op":"`...)
		d.out = append(d.out, name...)
		d.out = append(d.out, `","arg":`...)
		d.out = strconv.AppendInt(d.out, g.Len, 10)
		d.out = append(d.out, "}\n"...)
	} else if !d.opt.Pickletools {
		d.out = appendPos(d.out, pos)
		d.out = append(d.out, name...)
		d.out = append(d.out, ' ')
		d.out = strconv.AppendInt(d.out, g.Len, 10)
		if g.Pickle {
			d.out = append(d.out, " bytes: a nested pickle\n"...)
		} else {
			d.out = append(d.out, " bytes of raw data\n"...)
		}
	}
	if !g.Pickle {
		n, err := d.rd.Discard(g.Len)
		if err != nil || n != g.Len {
			return d.fail(o, "raw data of %d bytes after offset %d is truncated", g.Len, pos)
		}
		return nil
	}
	e := newEmu()
	e.gapEnd = pos + g.Len
	d.emus = append(d.emus, e)
	return nil
}

func appendPos(b []byte, pos int64) []byte {
	// "%5d: "
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], pos, 10)
	for i := len(s); i < 5; i++ {
		b = append(b, ' ')
	}
	b = append(b, s...)
	return append(b, ':', ' ')
}

func pack(o *pickle.Op) int64 { return o.Offset<<8 | int64(o.Code) }

// effect is the stack effect of an opcode that does not need special
// handling: pop items, then need more items that stay, then push one
// item built by the opcode.
type effect struct{ pop, need, push int8 }

var effects [256]effect

func init() {
	for _, c := range []pickle.Opcode{
		pickle.FLOAT, pickle.INT, pickle.BININT, pickle.BININT1, pickle.LONG, pickle.BININT2, pickle.NONE,
		pickle.PERSID, pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING, pickle.UNICODE, pickle.BINUNICODE,
		pickle.GLOBAL, pickle.EMPTY_DICT, pickle.EMPTY_LIST, pickle.EMPTY_TUPLE, pickle.BINFLOAT, pickle.EXT1,
		pickle.EXT2, pickle.EXT4, pickle.NEWTRUE, pickle.NEWFALSE, pickle.LONG1, pickle.LONG4, pickle.BINBYTES,
		pickle.SHORT_BINBYTES, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8, pickle.BINBYTES8, pickle.EMPTY_SET,
		pickle.BYTEARRAY8, pickle.NEXT_BUFFER,
	} {
		effects[c] = effect{0, 0, 1}
	}
	effects[pickle.BINPERSID] = effect{1, 0, 1}
	effects[pickle.REDUCE] = effect{2, 0, 1}
	effects[pickle.APPEND] = effect{1, 1, 0}
	effects[pickle.BUILD] = effect{1, 1, 0}
	effects[pickle.SETITEM] = effect{2, 1, 0}
	effects[pickle.NEWOBJ] = effect{2, 0, 1}
	effects[pickle.NEWOBJ_EX] = effect{3, 0, 1}
	effects[pickle.TUPLE1] = effect{1, 0, 1}
	effects[pickle.TUPLE2] = effect{2, 0, 1}
	effects[pickle.TUPLE3] = effect{3, 0, 1}
	effects[pickle.STACK_GLOBAL] = effect{2, 0, 1}
	effects[pickle.READONLY_BUFFER] = effect{0, 1, 0}
	effects[pickle.PUT] = effect{0, 1, 0}
	effects[pickle.BINPUT] = effect{0, 1, 0}
	effects[pickle.LONG_BINPUT] = effect{0, 1, 0}
	effects[pickle.MEMOIZE] = effect{0, 1, 0}
	effects[pickle.DUP] = effect{0, 1, 0}
	effects[pickle.STOP] = effect{1, 0, 0}
	// mark-consuming opcodes: after the MARK, APPENDS/SETITEMS/ADDITEMS
	// need their target below it; the others push their result.
	for _, c := range []pickle.Opcode{pickle.DICT, pickle.INST, pickle.LIST, pickle.OBJ, pickle.TUPLE, pickle.FROZENSET} {
		effects[c] = effect{0, 0, 1}
	}
	for _, c := range []pickle.Opcode{pickle.APPENDS, pickle.SETITEMS, pickle.ADDITEMS} {
		effects[c] = effect{0, 1, 0}
	}
}

func underflowReason(e *emu) string {
	if len(e.marks) > 0 {
		return "unexpected MARK found (stack underflow)"
	}
	return "unpickling stack underflow"
}

// step prints one opcode and applies its stack effect. It returns true at
// STOP.
func (d *disassembler) step(e *emu, o *pickle.Op) (bool, error) {
	info := o.Info()
	lvl := len(e.marks) // pickletools indents by the MARKs open before the opcode
	if info.Proto > e.maxProto {
		e.maxProto = info.Proto
	}
	var stackErr string
	markPos := int64(-2) // -2: no mark message
	memoIdx := int64(-1)
	var memoOrigin int64 = -1
	c := o.Code

	switch {
	case c == pickle.MARK:
		e.marks = grow.Push(e.marks, len(e.stack))
		e.markPos = grow.Push(e.markPos, o.Offset)
	case c == pickle.POP:
		n := len(e.stack)
		if len(e.marks) > 0 && e.marks[len(e.marks)-1] == n {
			markPos = e.markPos[len(e.markPos)-1]
			e.marks = e.marks[:len(e.marks)-1]
			e.markPos = e.markPos[:len(e.markPos)-1]
		} else if n <= e.fence() {
			stackErr = underflowReason(e)
		} else {
			e.stack = e.stack[:n-1]
		}
	case info.Mark:
		if len(e.marks) == 0 {
			stackErr = "could not find MARK"
			break
		}
		top := e.marks[len(e.marks)-1]
		markPos = e.markPos[len(e.markPos)-1]
		// indentation of this line is one level less: pop the mark first
		e.marks = e.marks[:len(e.marks)-1]
		e.markPos = e.markPos[:len(e.markPos)-1]
		items := len(e.stack) - top
		if d.count && items%2 != 0 && (c == pickle.DICT || c == pickle.SETITEMS) {
			d.unsure = true
		}
		e.stack = e.stack[:top]
		if c == pickle.OBJ && items < 1 {
			stackErr = underflowReason(e)
			break
		}
		ef := effects[c]
		if len(e.stack)-e.fence() < int(ef.need) {
			stackErr = underflowReason(e)
			break
		}
		if ef.push > 0 {
			e.stack = grow.Push(e.stack, pack(o))
		}
	default:
		ef := effects[c]
		avail := len(e.stack) - e.fence()
		if avail < int(ef.pop)+int(ef.need) {
			stackErr = underflowReason(e)
			break
		}
		switch c {
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			memoIdx = o.Int
			if o.Big != nil {
				stackErr = "memo key out of range"
				break
			}
			org, ok := e.memoGet(o.Int)
			if !ok {
				stackErr = "memo key " + strconv.FormatInt(o.Int, 10) + " has never been stored into"
				break
			}
			memoOrigin = org
			e.stack = grow.Push(e.stack, org)
		case pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT, pickle.MEMOIZE:
			if c == pickle.MEMOIZE {
				memoIdx = int64(e.memoLen)
			} else {
				memoIdx = o.Int
				if o.Big != nil || o.Int < 0 {
					stackErr = "negative or too large memo key"
					break
				}
			}
			memoOrigin = e.stack[len(e.stack)-1]
			e.memoPut(memoIdx, memoOrigin, d.ops)
		case pickle.DUP:
			e.stack = grow.Push(e.stack, e.stack[len(e.stack)-1])
		case pickle.PROTO:
			if o.Int > pickle.HighestProtocol {
				stackErr = "unsupported pickle protocol: " + strconv.FormatInt(o.Int, 10)
			}
		default:
			if d.count {
				d.countChecks(e, o)
			}
			e.stack = e.stack[:len(e.stack)-int(ef.pop)]
			if ef.push > 0 {
				e.stack = grow.Push(e.stack, pack(o))
			}
		}
	}

	if d.count {
		if d.each != nil {
			d.each(o)
		}
	} else if d.opt.JSON {
		d.jsonLine(o, info, memoIdx, c == pickle.MEMOIZE)
	} else if !d.opt.Pickletools || len(d.emus) == 1 {
		d.textLine(lvl, o, info, markPos, memoIdx, memoOrigin)
	}
	if stackErr != "" {
		return false, d.fail(o, "%s", stackErr)
	}
	return c == pickle.STOP, nil
}

// countChecks notes, for Count, what the machine of pkg/pickle checks
// beyond the emulator in an opcode of the default stack effect (Summary's
// Unsure, First), before the emulator pops its items.
func (d *disassembler) countChecks(e *emu, o *pickle.Op) {
	switch o.Code {
	case pickle.STACK_GLOBAL:
		n := len(e.stack)
		if !strOrigin(e.stack[n-1]) || !strOrigin(e.stack[n-2]) {
			d.unsure = true
		}
	case pickle.EXT1, pickle.EXT2, pickle.EXT4:
		if o.Int <= 0 {
			d.unsure = true
		}
	case pickle.STOP:
		if d.stream == 0 && len(d.emus) == 1 {
			d.first = pickle.Opcode(e.stack[len(e.stack)-1] & 0xFF)
		}
	}
}

// strOrigin reports whether the item of origin org was made by a str
// opcode.
func strOrigin(org int64) bool {
	switch pickle.Opcode(org & 0xFF) {
	case pickle.STRING, pickle.BINSTRING, pickle.SHORT_BINSTRING, pickle.UNICODE, pickle.BINUNICODE, pickle.SHORT_BINUNICODE, pickle.BINUNICODE8:
		return true
	}
	return false
}

// appendArgRepr appends the argument as pickletools prints it: Python's
// repr of the value pickletools decodes.
func appendArgRepr(b []byte, o *pickle.Op) []byte {
	switch o.Info().Arg {
	case pickle.ArgFloatNL, pickle.ArgFloat8:
		return appendFloatRepr(b, o.Float())
	case pickle.ArgStringNL, pickle.ArgString1, pickle.ArgString4:
		if o.Blob != nil {
			return appendBlob(appendLatin1Repr(b, o.Blob.Prefix), o.Blob)
		}
		return appendLatin1Repr(b, o.Str)
	case pickle.ArgUnicodeNL, pickle.ArgUnicode1, pickle.ArgUnicode4, pickle.ArgUnicode8, pickle.ArgStringNLNoEsc:
		if o.Blob != nil {
			return appendBlob(appendStrRepr(b, o.Blob.Prefix), o.Blob)
		}
		return appendStrRepr(b, o.Str)
	case pickle.ArgStringNLPair:
		return appendStrRepr(b, o.Str+" "+o.Name)
	case pickle.ArgBytes1, pickle.ArgBytes4, pickle.ArgBytes8:
		if o.Blob != nil {
			return appendBlob(appendBytesRepr(b, o.Blob.Prefix), o.Blob)
		}
		return appendBytesRepr(b, o.Str)
	case pickle.ArgBytearray8:
		b = append(b, "bytearray("...)
		if o.Blob != nil {
			b = appendBytesRepr(b, o.Blob.Prefix)
			b = append(b, ')')
			return appendBlob(b, o.Blob)
		}
		b = appendBytesRepr(b, o.Str)
		return append(b, ')')
	}
	// integers
	if o.IsBool {
		if o.Int != 0 {
			return append(b, "True"...)
		}
		return append(b, "False"...)
	}
	if o.Big != nil {
		return appendBig(b, o.Big)
	}
	return strconv.AppendInt(b, o.Int, 10)
}

func appendBlob(b []byte, bl *pickle.Blob) []byte {
	b = append(b, "... ("...)
	b = strconv.AppendInt(b, bl.Len, 10)
	return append(b, " bytes, shortened)"...)
}
