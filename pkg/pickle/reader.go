package pickle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"math/big"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
)

// DefaultBlobThreshold is the payload size from which a str, bytes or
// bytearray argument is streamed (hashed and measured) instead of kept.
const DefaultBlobThreshold = 1 << 20

// MaxLine bounds the text argument of the protocol-0 opcodes.
const MaxLine = 256 << 20

// MaxLong bounds the byte length of a LONG1/LONG4 argument kept as an int.
const MaxLong = 64 << 20

// Op is one decoded opcode.
type Op struct {
	Code   Opcode
	Offset int64 // offset of the opcode byte in the input
	Len    int64 // bytes taken by the opcode and its argument

	// The argument, by kind:
	//   ints (uint1..uint8, int4, BININT*, LONG*, INT, GET, PUT): Int, or Big when it does not fit
	//   INT "00"/"01": IsBool with Int 0/1
	//   float: Int holds the IEEE-754 bits
	//   str ops (UNICODE, BINUNICODE*): Str holds UTF-8 (surrogates kept, as Python's surrogatepass)
	//   bytes ops and Py2 STRING/BINSTRING/SHORT_BINSTRING: Str holds the raw bytes
	//   GLOBAL/INST: Str is the module line, Name the name line
	//   PERSID: Str is the line
	Int    int64
	Big    *big.Int
	IsBool bool
	Str    string
	Name   string
	// Blob is set instead of Str when the payload reached the blob threshold.
	Blob *Blob
}

// Info returns the table entry of the opcode.
func (o *Op) Info() *OpInfo { return opTable[o.Code] }

// Float returns the float argument of FLOAT/BINFLOAT.
func (o *Op) Float() float64 { return math.Float64frombits(uint64(o.Int)) }

// Blob is a payload too large to keep: its length, its first bytes and, when
// the reader was given a hash, its digest.
type Blob struct {
	Len    int64
	Prefix string // at most BlobPrefix bytes (whole UTF-8 sequences for str)
	Digest []byte
	Offset int64 // offset of the first payload byte
}

// BlobPrefix is how much of a blob is kept.
const BlobPrefix = 64

// Reader reads opcodes from a byte stream. It never allocates more than the
// input can hold: every declared length is checked against what is left
// (when the size is known) and payloads above BlobThreshold are streamed.
type Reader struct {
	br       *bufio.Reader
	src      io.Reader // what br reads from (see readAhead)
	file     string
	off      int64
	size     int64 // total input size, -1 when unknown
	frameEnd int64 // end of the current frame, -1 outside frames

	// BlobThreshold: payloads of at least this many bytes are streamed into
	// an Op.Blob. Zero means DefaultBlobThreshold.
	BlobThreshold int64
	// Longest is the length of the longest str, bytes or bytearray payload
	// read so far that did not lie whole in the read buffer (256 KiB): a
	// payload of DefaultBlobThreshold bytes or more is counted whatever
	// the threshold (pk canon: whether pk hash would have streamed one).
	Longest int64
	// NewHash, when set, is used to digest blobs.
	NewHash func() hash.Hash

	// Tee, when set, receives every byte consumed.
	Tee io.Writer

	// Borrow, when set, lets the Str of a short str/bytes argument point
	// into the read buffer instead of a copy: it is then valid only until
	// the next read. For callers that consume each Op at once.
	Borrow bool

	// AfterBuild, when set, is called right after each BUILD with the object
	// the state was applied to, before the next opcode is read. It may
	// consume bytes that are not opcodes (Peek, Discard, or RunStream for a
	// nested pickle), as joblib's unpickler does to read an array's data
	// after its NumpyArrayWrapper; the machine attributes the bytes it
	// consumes to the target's Self. An error stops the stream.
	AfterBuild func(rd *Reader, s *Store, target ID) error

	line  []byte
	tmp   [8]byte
	arena []byte  // see small
	one   [1]byte // an opcode byte for Tee (no allocation per opcode)
}

// smallArg is the largest argument carved from the reader's arena.
const smallArg = 256

// small returns n bytes carved from a chunk shared by many small arguments
// (one allocation per 16 KiB instead of one per string). Carved bytes are
// never written again once read, so strings may point into them.
func (r *Reader) small(n int) []byte {
	if n > len(r.arena) {
		r.arena = make([]byte, 16<<10)
	}
	b := r.arena[:n:n]
	r.arena = r.arena[n:]
	return b
}

// NewReader returns a reader of r. size is the number of bytes r holds, or
// -1 when unknown (stdin); name is used in errors.
func NewReader(r io.Reader, size int64, name string) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	return &Reader{br: br, src: r, file: name, size: size, frameEnd: -1}
}

// Offset returns the offset of the next byte to be read.
func (r *Reader) Offset() int64 { return r.off }

// FrameLeft returns how many bytes of the current frame are still unread
// (0 outside frames).
func (r *Reader) FrameLeft() int64 {
	if r.frameEnd >= 0 && r.off < r.frameEnd {
		return r.frameEnd - r.off
	}
	return 0
}

// Name returns the input name used in errors.
func (r *Reader) Name() string { return r.file }

// Size returns the input size given to NewReader.
func (r *Reader) Size() int64 { return r.size }

// AtEOF reports whether no byte is left.
func (r *Reader) AtEOF() bool {
	if r.size >= 0 {
		return r.off >= r.size
	}
	_, err := r.br.Peek(1)
	return err != nil
}

// Peek returns up to n next bytes without consuming them.
func (r *Reader) Peek(n int) []byte {
	b, _ := r.br.Peek(n)
	return b
}

// Discard skips n bytes (used for data that is not a pickle, such as the
// raw array bytes joblib writes between opcodes).
func (r *Reader) Discard(n int64) (int64, error) {
	var done int64
	for done < n {
		k := n - done
		if k > 1<<30 {
			k = 1 << 30
		}
		var d int
		var err error
		if r.Tee != nil {
			var m int64
			m, err = io.CopyN(r.Tee, r.br, k)
			d = int(m)
		} else {
			d, err = r.br.Discard(int(k))
		}
		done += int64(d)
		r.off += int64(d)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (r *Reader) errAt(off int64, op Opcode, format string, args ...any) *Error {
	name := ""
	if off >= 0 && opTable[op] != nil {
		name = opTable[op].Name
	}
	return &Error{File: r.file, Offset: off, Op: name, Reason: fmt.Sprintf(format, args...)}
}

// ErrNoStop is wrapped by the error returned when input ends before STOP.
var ErrNoStop = errors.New("pickle data was truncated")

// left returns how many bytes remain, or MaxInt64 when unknown.
func (r *Reader) left() int64 {
	if r.size < 0 {
		return math.MaxInt64
	}
	return r.size - r.off
}

// past words what a length that runs past the input exceeds: "the N bytes
// left", or, when the size is unknown (stdin, a decompressed layer), any
// input's length (left's MaxInt64 is no count of bytes to print).
func (r *Reader) past() string {
	if r.size < 0 {
		return "the length of any input"
	}
	return fmt.Sprintf("the %d bytes left", r.left())
}

// need checks that n more bytes of the opcode at opOff exist and stay in the
// current frame.
func (r *Reader) need(opOff int64, op Opcode, n int64, what string) error {
	if n < 0 {
		return r.errAt(opOff, op, "negative %s length %d", what, n)
	}
	if r.frameEnd >= 0 && opOff < r.frameEnd && n > r.frameEnd-r.off {
		e := r.errAt(opOff, op, "%s of %d bytes crosses the end of the frame at offset %d", what, n, r.frameEnd)
		e.Stricter = true
		return e
	}
	if n > r.left() {
		return r.errAt(opOff, op, "%s of %d bytes exceeds %s: pickle data was truncated", what, n, r.past())
	}
	return nil
}

func (r *Reader) readFull(opOff int64, op Opcode, buf []byte) error {
	if len(buf) <= r.br.Buffered() {
		// Fast path: the bytes are in the buffer.
		b, _ := r.br.Peek(len(buf))
		copy(buf, b)
		r.br.Discard(len(buf))
		r.off += int64(len(buf))
		if r.Tee != nil {
			r.Tee.Write(buf)
		}
		return nil
	}
	n, err := io.ReadFull(r.br, buf)
	r.off += int64(n)
	if r.Tee != nil {
		r.Tee.Write(buf[:n])
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.errAt(opOff, op, "pickle data was truncated inside the argument")
		}
		return r.errAt(opOff, op, "read error: %v", err)
	}
	return nil
}

// readN reads an argument of n bytes. When the input size is unknown
// (stdin) need could not check that the bytes exist, so a large argument is
// read into a buffer that grows with the bytes that arrive: a false declared
// length costs no more memory than the input.
func (r *Reader) readN(opOff int64, op Opcode, n int64) ([]byte, error) {
	if n <= smallArg {
		buf := r.small(int(n))
		return buf, r.readFull(opOff, op, buf)
	}
	if r.size >= 0 || n <= 64<<10 {
		buf := make([]byte, n)
		return buf, r.readFull(opOff, op, buf)
	}
	var bb bytes.Buffer
	src := io.Reader(r.br)
	if r.Tee != nil {
		src = io.TeeReader(r.br, r.Tee)
	}
	got, err := io.Copy(&bb, io.LimitReader(src, n))
	r.off += got
	if err != nil {
		return nil, r.errAt(opOff, op, "read error: %v", err)
	}
	if got < n {
		return nil, r.errAt(opOff, op, "pickle data was truncated inside the argument")
	}
	return bb.Bytes(), nil
}

func (r *Reader) fixed(opOff int64, op Opcode, n int) ([]byte, error) {
	if err := r.need(opOff, op, int64(n), "argument"); err != nil {
		return nil, err
	}
	if err := r.readFull(opOff, op, r.tmp[:n]); err != nil {
		return nil, err
	}
	return r.tmp[:n], nil
}

// readLine reads one newline-terminated line, returned without the newline.
// The slice is valid until the next read.
func (r *Reader) readLine(opOff int64, op Opcode) ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.off += int64(len(chunk))
		if r.Tee != nil {
			r.Tee.Write(chunk)
		}
		r.line = append(grow.Room(r.line, len(chunk)), chunk...)
		if r.frameEnd >= 0 && opOff < r.frameEnd && r.off > r.frameEnd {
			e := r.errAt(opOff, op, "text argument crosses the end of the frame at offset %d", r.frameEnd)
			e.Stricter = true
			return nil, e
		}
		if err == nil {
			return r.line[:len(r.line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(r.line) > MaxLine {
				e := r.errAt(opOff, op, "text argument longer than %d bytes", MaxLine)
				e.Stricter = true
				return nil, e
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil, r.errAt(opOff, op, "pickle data was truncated: no newline ends the text argument")
		}
		return nil, r.errAt(opOff, op, "read error: %v", err)
	}
}

func (r *Reader) threshold() int64 {
	if r.BlobThreshold > 0 {
		return r.BlobThreshold
	}
	return DefaultBlobThreshold
}

// payload reads n bytes of a str/bytes argument into o.Str or o.Blob.
func (r *Reader) payload(o *Op, n int64, utf8 bool) error {
	if err := r.need(o.Offset, o.Code, n, "payload"); err != nil {
		return err
	}
	if n > r.Longest {
		r.Longest = n
	}
	if n < r.threshold() {
		if n == 0 {
			o.Str = ""
			return nil
		}
		buf, err := r.readN(o.Offset, o.Code, n)
		if err != nil {
			return err
		}
		if utf8 {
			if bad := validUTF8SP(buf); bad >= 0 {
				return r.errAt(o.Offset, o.Code, "invalid UTF-8 at byte %d of the string (offset %d)", bad, r.off-n+int64(bad))
			}
		}
		o.Str = unsafe.String(&buf[0], len(buf))
		return nil
	}
	return r.stream(o, n, utf8)
}

func (r *Reader) stream(o *Op, n int64, utf8 bool) error {
	b := &Blob{Len: n, Offset: r.off}
	var h hash.Hash
	if r.NewHash != nil {
		h = r.NewHash()
	}
	var us utf8Stream
	var done int64
	var prefix []byte
	for done < n {
		want := n - done
		chunk, err := r.br.Peek(r.br.Size())
		if len(chunk) == 0 && err != nil {
			return r.errAt(o.Offset, o.Code, "pickle data was truncated inside the argument")
		}
		if int64(len(chunk)) > want {
			chunk = chunk[:want]
		}
		if len(prefix) < BlobPrefix {
			k := BlobPrefix - len(prefix)
			if k > len(chunk) {
				k = len(chunk)
			}
			prefix = append(prefix, chunk[:k]...)
		}
		if h != nil {
			h.Write(chunk)
		}
		if r.Tee != nil {
			r.Tee.Write(chunk)
		}
		if utf8 && !us.write(chunk) {
			return r.errAt(o.Offset, o.Code, "invalid UTF-8 in the string near offset %d", r.off)
		}
		d, _ := r.br.Discard(len(chunk))
		r.off += int64(d)
		done += int64(d)
	}
	if utf8 && !us.done() {
		return r.errAt(o.Offset, o.Code, "invalid UTF-8: the string ends inside a character")
	}
	if utf8 {
		k, _ := utf8Prefix(prefix)
		prefix = prefix[:k]
	}
	b.Prefix = string(prefix)
	if h != nil {
		b.Digest = h.Sum(nil)
	}
	o.Blob = b
	return nil
}

// Next reads the next opcode. At the end of the input it returns io.EOF.
func (r *Reader) Next() (Op, error) {
	var o Op
	err := r.next(&o)
	return o, err
}

// next is Next into *o (the machine reuses one Op).
func (r *Reader) next(o *Op) error {
	if r.frameEnd >= 0 && r.off >= r.frameEnd {
		r.frameEnd = -1
	}
	*o = Op{Offset: r.off}
	c, err := r.br.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return r.errAt(r.off, 0, "read error: %v", err)
	}
	r.off++
	if r.Tee != nil {
		r.one[0] = c
		r.Tee.Write(r.one[:])
	}
	o.Code = Opcode(c)
	info := opTable[c]
	if info == nil {
		return &Error{File: r.file, Offset: o.Offset, Reason: fmt.Sprintf("invalid opcode byte 0x%02x (invalid load key %q)", c, rune(c))}
	}
	if !r.fastArg(o, info) {
		if err := r.arg(o, info); err != nil {
			return err
		}
	}
	o.Len = r.off - o.Offset
	if o.Code == FRAME {
		if r.frameEnd >= 0 && r.off < r.frameEnd {
			// CPython's C unpickler accepts it; its pure-Python unpickler
			// (and pickletools) refuse it, and a frame inside a frame makes
			// the byte boundaries ambiguous.
			e := r.errAt(o.Offset, o.Code, "a new frame begins before the end of the current frame at offset %d", r.frameEnd)
			e.Stricter = true
			return e
		}
		n := uint64(o.Int)
		if o.Big != nil || n > uint64(r.left()) {
			return r.errAt(o.Offset, o.Code, "frame length %s exceeds %s: pickle data was truncated", o.argString(), r.past())
		}
		if n > uint64(math.MaxInt64-r.off) {
			return r.errAt(o.Offset, o.Code, "frame length %d overflows", n)
		}
		// Size unknown (stdin): CPython reads the whole frame at once, so a
		// frame that runs past the input fails here too. A frame larger
		// than the buffer is read ahead into memory (Python 3.4-3.6 wrote
		// payloads of any size inside frames).
		if r.size < 0 {
			have := int64(0)
			if n <= uint64(r.br.Size()) {
				p, _ := r.br.Peek(int(n))
				have = int64(len(p))
			} else {
				have = r.readAhead(int64(n))
			}
			if uint64(have) < n {
				return r.errAt(o.Offset, o.Code, "frame length %d exceeds the %d bytes left: pickle data was truncated", n, have)
			}
		}
		r.frameEnd = r.off + int64(n)
	}
	return nil
}

// readAhead reads up to n bytes into memory (as many as arrive: memory
// follows the input, not the declared length) and puts them back in front
// of the rest of the input. It returns how many bytes it got.
func (r *Reader) readAhead(n int64) int64 {
	var buf bytes.Buffer
	got, _ := io.Copy(&buf, io.LimitReader(r.br, n))
	rest := make([]byte, r.br.Buffered())
	p, _ := r.br.Peek(len(rest))
	copy(rest, p)
	r.br.Discard(len(rest))
	// r.src is what r.br reads from; with r.br drained, it continues the
	// input. io.MultiReader flattens nested MultiReaders as it reads, so
	// many large frames do not deepen the chain of readers.
	r.src = io.MultiReader(bytes.NewReader(buf.Bytes()), bytes.NewReader(rest), r.src)
	r.br = bufio.NewReaderSize(r.src, 256<<10)
	return got
}

func (o *Op) argString() string {
	if o.Big != nil {
		return o.Big.String()
	}
	return fmt.Sprint(o.Int)
}

// fastArg decodes the argument of the common fixed-width and short-string
// opcodes straight from the read buffer when all of its bytes are there
// and inside the current frame and the input. It reports false, having
// consumed nothing, in every other case (arg then reads the argument and
// reports any error).
func (r *Reader) fastArg(o *Op, info *OpInfo) bool {
	k := argWidth(info.Arg)
	switch k {
	case 0:
		return true
	case -2:
		return false
	case -1:
		b, err := r.br.Peek(1)
		if err != nil {
			return false
		}
		k = 1 + int(b[0])
		if int64(b[0]) >= r.threshold() {
			return false
		}
	}
	if k > r.br.Buffered() || int64(k) > r.left() || (r.frameEnd >= 0 && o.Offset < r.frameEnd && int64(k) > r.frameEnd-r.off) {
		return false
	}
	b, _ := r.br.Peek(k)
	switch info.Arg {
	case ArgUint1, ArgUint2, ArgInt4, ArgUint4, ArgFloat8:
		o.Int = fixedArg(info.Arg, b)
	default: // short str/bytes
		p := b[1:]
		if info.Arg == ArgUnicode1 && validUTF8SP(p) >= 0 {
			return false
		}
		o.Str = r.shortStr(p)
	}
	if r.Tee != nil {
		r.Tee.Write(b)
	}
	r.br.Discard(k)
	r.off += int64(k)
	return true
}

func (r *Reader) arg(o *Op, info *OpInfo) error {
	op := o.Code
	switch info.Arg {
	case ArgNone:
		return nil
	case ArgUint1:
		b, err := r.fixed(o.Offset, op, 1)
		if err != nil {
			return err
		}
		o.Int = int64(b[0])
	case ArgUint2:
		b, err := r.fixed(o.Offset, op, 2)
		if err != nil {
			return err
		}
		o.Int = int64(binary.LittleEndian.Uint16(b))
	case ArgInt4:
		b, err := r.fixed(o.Offset, op, 4)
		if err != nil {
			return err
		}
		o.Int = int64(int32(binary.LittleEndian.Uint32(b)))
	case ArgUint4:
		b, err := r.fixed(o.Offset, op, 4)
		if err != nil {
			return err
		}
		o.Int = int64(binary.LittleEndian.Uint32(b))
	case ArgUint8:
		b, err := r.fixed(o.Offset, op, 8)
		if err != nil {
			return err
		}
		u := binary.LittleEndian.Uint64(b)
		if u > math.MaxInt64 {
			o.Big = new(big.Int).SetUint64(u)
		} else {
			o.Int = int64(u)
		}
	case ArgFloat8:
		b, err := r.fixed(o.Offset, op, 8)
		if err != nil {
			return err
		}
		o.Int = int64(binary.BigEndian.Uint64(b))
	case ArgDecimalShort:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		if op == INT {
			v, bg, isBool, perr := parseCInt(line)
			if perr != nil {
				return r.errAt(o.Offset, op, "%v in %q", perr, clip(line))
			}
			o.Int, o.Big, o.IsBool = v, bg, isBool
		} else {
			v, perr := parseMemoIndex(line)
			if perr != nil {
				return r.errAt(o.Offset, op, "%v in %q", perr, clip(line))
			}
			o.Int = v
		}
	case ArgDecimalLong:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		s := line
		if len(s) > 0 && s[len(s)-1] == 'L' {
			s = s[:len(s)-1]
		}
		v, perr := parsePyInt(s, 0)
		if perr != nil {
			return r.errAt(o.Offset, op, "%v in %q", perr, clip(line))
		}
		o.Int, o.Big = fromBig(v)
	case ArgFloatNL:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		f, perr := parseCFloat(line)
		if perr != nil {
			return r.errAt(o.Offset, op, "%v in %q", perr, clip(line))
		}
		o.Int = int64(math.Float64bits(f))
	case ArgStringNL:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		if len(line) < 2 || line[0] != line[len(line)-1] || (line[0] != '\'' && line[0] != '"') {
			return r.errAt(o.Offset, op, "the STRING opcode argument must be quoted")
		}
		s, perr := escapeDecode(line[1 : len(line)-1])
		if perr != nil {
			return r.errAt(o.Offset, op, "%v", perr)
		}
		o.Str = s
	case ArgStringNLNoEsc:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		if op == PERSID {
			for i, c := range line {
				if c >= 0x80 {
					return r.errAt(o.Offset, op, "persistent IDs in protocol 0 must be ASCII strings (non-ASCII byte at %d)", i)
				}
			}
		}
		o.Str = string(line)
	case ArgStringNLPair:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		if bad := validUTF8SP(line); bad >= 0 || hasSurrogate(line) {
			return r.errAt(o.Offset, op, "module name is not valid UTF-8")
		}
		o.Str = string(line)
		line, err = r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		if bad := validUTF8SP(line); bad >= 0 || hasSurrogate(line) {
			return r.errAt(o.Offset, op, "global name is not valid UTF-8")
		}
		o.Name = string(line)
	case ArgUnicodeNL:
		line, err := r.readLine(o.Offset, op)
		if err != nil {
			return err
		}
		s, perr := rawUnicodeEscapeDecode(line)
		if perr != nil {
			return r.errAt(o.Offset, op, "%v", perr)
		}
		o.Str = s
	case ArgString1, ArgBytes1, ArgUnicode1:
		b, err := r.fixed(o.Offset, op, 1)
		if err != nil {
			return err
		}
		return r.payload(o, int64(b[0]), info.Arg == ArgUnicode1)
	case ArgString4:
		b, err := r.fixed(o.Offset, op, 4)
		if err != nil {
			return err
		}
		n := int64(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 {
			return r.errAt(o.Offset, op, "BINSTRING pickle has negative byte count %d", n)
		}
		return r.payload(o, n, false)
	case ArgBytes4, ArgUnicode4:
		b, err := r.fixed(o.Offset, op, 4)
		if err != nil {
			return err
		}
		return r.payload(o, int64(binary.LittleEndian.Uint32(b)), info.Arg == ArgUnicode4)
	case ArgBytes8, ArgUnicode8, ArgBytearray8:
		b, err := r.fixed(o.Offset, op, 8)
		if err != nil {
			return err
		}
		u := binary.LittleEndian.Uint64(b)
		if u > uint64(r.left()) || u > math.MaxInt64 {
			return r.errAt(o.Offset, op, "declared length %d exceeds %s: pickle data was truncated", u, r.past())
		}
		return r.payload(o, int64(u), info.Arg == ArgUnicode8)
	case ArgLong1, ArgLong4:
		var n int64
		if info.Arg == ArgLong1 {
			b, err := r.fixed(o.Offset, op, 1)
			if err != nil {
				return err
			}
			n = int64(b[0])
		} else {
			b, err := r.fixed(o.Offset, op, 4)
			if err != nil {
				return err
			}
			n = int64(int32(binary.LittleEndian.Uint32(b)))
			if n < 0 {
				return r.errAt(o.Offset, op, "LONG pickle has negative byte count %d", n)
			}
		}
		if err := r.need(o.Offset, op, n, "integer"); err != nil {
			return err
		}
		if n > MaxLong {
			e := r.errAt(o.Offset, op, "integer of %d bytes is larger than pk's limit of %d bytes", n, MaxLong)
			e.Stricter = true
			return e
		}
		buf, err := r.readN(o.Offset, op, n)
		if err != nil {
			return err
		}
		o.Int, o.Big = decodeLong(buf)
	default:
		return r.errAt(o.Offset, op, "internal: unknown argument kind %d", info.Arg)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// decodeLong decodes a little-endian two's complement integer.
func decodeLong(b []byte) (int64, *big.Int) {
	n := len(b)
	if n == 0 {
		return 0, nil
	}
	if n <= 8 {
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		if b[n-1]&0x80 != 0 && n < 8 {
			u |= ^uint64(0) << (8 * uint(n))
		}
		return int64(u), nil
	}
	be := make([]byte, n)
	for i := range b {
		be[n-1-i] = b[i]
	}
	v := new(big.Int).SetBytes(be)
	if b[n-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return fromBig(v)
}

func fromBig(v *big.Int) (int64, *big.Int) {
	if v.IsInt64() {
		return v.Int64(), nil
	}
	return 0, v
}

// NextInto reads the next opcode into *o, reusing it (see Borrow for how
// long o.Str stays valid). At the end of the input it returns io.EOF.
func (r *Reader) NextInto(o *Op) error { return r.next(o) }

// shortStr is the Str of a short str/bytes argument p, read from the
// buffer: p itself when the reader lends (Borrow: valid until the next
// read), else a copy.
func (r *Reader) shortStr(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if r.Borrow {
		return unsafe.String(&p[0], len(p))
	}
	buf := r.small(len(p))
	copy(buf, p)
	return unsafe.String(&buf[0], len(buf))
}

// NextBuffered decodes into ops, in one pass over the read buffer, the
// opcodes that lie whole in it: those with no argument, a fixed-width one
// (ints, BINFLOAT, memo indices) or a short str/bytes one (SHORT_BINUNICODE,
// SHORT_BINBYTES, SHORT_BINSTRING: a length byte, then the bytes), each as
// NextInto would give it. It stops before the first opcode
// that NextInto must read itself: one not whole in the buffer, crossing the
// end of the current frame or of the input, at or after the frame's end,
// FRAME, STOP, a text or long-length argument, invalid UTF-8, an unknown
// opcode byte; it returns how many it decoded (0: call NextInto). So the
// opcodes, arguments and errors a caller sees are those of NextInto, read
// with fewer calls. The Str of short arguments follows Borrow (borrowed:
// valid until the next read). Not with Tee set (it returns 0).
func (r *Reader) NextBuffered(ops []Op) int { return r.nextBuffered(ops, noStop, false) }

// NextBufferedClean is NextBuffered into ops that hold only what
// NextBufferedClean wrote there (or zero Ops): their Big, Blob, Name and
// IsBool are zero, and not checked again (a batch that NextInto also
// writes is not clean: give NextInto an Op of its own).
func (r *Reader) NextBufferedClean(ops []Op) int { return r.nextBuffered(ops, noStop, true) }

// noStop is nextBuffered's stop when no opcode ends a batch.
const noStop = -1

// nextBuffered is NextBuffered, whose batch also ends after the first
// opcode whose byte is stop (the machine's BUILD, after which an
// AfterBuild hook reads the input itself): one pass over the bytes, where
// counting the opcodes up to that BUILD first took another (1.5 % of pk
// hash's instructions on a cloudpickle state). An Op is written field by
// field, not cleared 12 words at a time (with the collector marking, a
// cleared Op's pointers each took a write barrier: 5 % of the whole
// view's instructions on a table of memo-shared strings); no opcode
// decoded here sets Big, Blob, Name or IsBool, so those are cleared only
// when an earlier opcode left them set. clean says that ops holds only
// what nextBuffered wrote there (the machine's batch): they are zero.
func (r *Reader) nextBuffered(ops []Op, stop int, clean bool) int {
	if r.Tee != nil || len(ops) == 0 {
		return 0
	}
	b, end := r.buffered()
	th := r.threshold()
	i, n := 0, 0
	for n < len(ops) && i < end {
		k, ok := bufferedOp(b, i, end, th)
		if !ok {
			break
		}
		c := b[i]
		arg := bufArg[c]
		o := &ops[n]
		o.Code, o.Offset, o.Len = Opcode(c), r.off+int64(i), int64(1+k)
		if !clean && (o.Big != nil || o.Blob != nil || o.Name != "" || o.IsBool) {
			o.Big, o.Blob, o.Name, o.IsBool = nil, nil, "", false
		}
		var v int64
		str := ""
		if k > 0 {
			if arg == ArgString1 || arg == ArgBytes1 || arg == ArgUnicode1 {
				p := b[i+2 : i+1+k]
				if arg == ArgUnicode1 && validUTF8SP(p) >= 0 {
					break
				}
				str = r.shortStr(p)
			} else {
				v = fixedArg(arg, b[i+1:])
			}
		}
		o.Int = v
		if str != "" || o.Str != "" {
			o.Str = str
		}
		i += 1 + k
		n++
		if int(c) == stop {
			break
		}
	}
	return r.skimmed(i, n)
}

// NewReaderAt returns a reader of the input in ra (size bytes) from offset
// start, with the offsets and bounds of the whole input: for reading again a
// range of a stream already read once.
// A size of -1 (unknown, a decompressed layer) reads up to ra's end.
func NewReaderAt(ra io.ReaderAt, size int64, name string, start int64) *Reader {
	n := size - start
	if size < 0 {
		n = math.MaxInt64 - start
	}
	r := NewReader(io.NewSectionReader(ra, start, n), size, name)
	r.off = start
	return r
}

// Skimmed is one opcode as Skim reports it.
type Skimmed struct {
	Code   Opcode
	Offset int64
	Int    int64 // the argument of integer opcodes, as Op.Int
	Big    bool  // the integer argument did not fit an int64 (Op.Big)
}

// Skim reads up to len(dst) opcodes into dst, for callers that need only the
// opcodes and their integer arguments (a first pass over a large input). The
// opcodes and arguments it reports, and where it stops, are those of Next,
// except that the bytes of short str and bytes arguments are skipped, not
// decoded: Skim does not check their UTF-8 and may accept a file Next
// refuses there. It returns after STOP, at the end of the input (io.EOF,
// possibly with n > 0) or at the error Next would return.
func (r *Reader) Skim(dst []Skimmed) (n int, err error) { return r.skim(dst, nil) }

// skim is Skim reporting only the opcodes only marks (and STOP); nil: all.
func (r *Reader) skim(dst []Skimmed, only *[256]bool) (n int, err error) {
	for n < len(dst) {
		if r.Tee == nil {
			n += r.skimBuffered(dst[n:], only)
			if n == len(dst) {
				return n, nil
			}
		}
		// one opcode the ordinary way: an empty buffer, a frame boundary, a
		// text or long argument, STOP, an error
		var o Op
		if err := r.next(&o); err != nil {
			return n, err
		}
		if only == nil || only[o.Code] || o.Code == STOP {
			dst[n] = Skimmed{Code: o.Code, Offset: o.Offset, Int: o.Int, Big: o.Big != nil}
			n++
		}
		if o.Code == STOP {
			return n, nil
		}
	}
	return n, nil
}

// skimBuffered decodes the opcodes that lie whole in the read buffer, up to
// the first one next must see (see Skim), and consumes them; it reports
// those only marks (nil: all).
func (r *Reader) skimBuffered(dst []Skimmed, only *[256]bool) int {
	b, end := r.buffered()
	i, n := 0, 0
	th := r.threshold()
	for n < len(dst) && i < end {
		k, ok := bufferedOp(b, i, end, th)
		if !ok {
			break
		}
		c := b[i]
		if only != nil && !only[c] {
			i += 1 + k
			continue
		}
		off := r.off + int64(i)
		d := &dst[n]
		*d = Skimmed{Code: Opcode(c), Offset: off}
		if k > 0 {
			d.Int = fixedArg(bufArg[c], b[i+1:])
		}
		i += 1 + k
		n++
	}
	return r.skimmed(i, n)
}

// SkimWindow returns the bytes at the reader's position that a caller may
// decode opcodes from itself (a first pass that keeps no per-opcode record):
// the read buffer up to the end of the current frame and of the input, and
// the blob threshold to give SkimOp. The caller decodes whole opcodes from
// its start with SkimOp and SkimArg, consumes them with SkimDone and reads
// the first opcode SkimOp refuses (or any, once the window is empty) with
// NextInto: so it sees the opcodes and arguments of Skim. Empty with Tee set.
func (r *Reader) SkimWindow() (b []byte, th int64) {
	if r.Tee != nil {
		return nil, 0
	}
	b, end := r.buffered()
	return b[:end], r.threshold()
}

// SkimDone consumes the first n bytes of the window SkimWindow returned, n
// the end of an opcode SkimOp accepted.
func (r *Reader) SkimDone(n int) { r.skimmed(n, 0) }

// SkimOp says whether the opcode at b[i] of a window (SkimWindow) can be
// decoded from it (see bufferedOp); k is its argument's width.
func SkimOp(b []byte, i int, th int64) (k int, ok bool) { return bufferedOp(b, i, len(b), th) }

// SkimArg is the integer argument (Skimmed.Int) of the opcode at b[i] of a
// window, one SkimOp accepted with k > 0.
func SkimArg(b []byte, i int) int64 { return fixedArg(bufArg[b[i]], b[i+1:]) }

// SkimStr is the payload of the short str or bytes argument of the opcode
// at b[i] of a window (SHORT_BINUNICODE, SHORT_BINBYTES, SHORT_BINSTRING),
// one SkimOp accepted, as NextBuffered gives it in Op.Str (b's own bytes);
// ok is false for any other opcode, and for a str that NextBuffered leaves
// to NextInto (not valid UTF-8, surrogates passed).
func SkimStr(b []byte, i int) (p []byte, ok bool) {
	arg := bufArg[b[i]]
	if arg != ArgString1 && arg != ArgBytes1 && arg != ArgUnicode1 {
		return nil, false
	}
	p = b[i+2 : i+2+int(b[i+1])]
	if arg == ArgUnicode1 && validUTF8SP(p) >= 0 {
		return nil, false
	}
	return p, true
}

// buffered returns the read buffer and how far opcodes decoded from it may
// reach: the buffer, the input's end, the current frame's end (0 when the
// frame ends here: the next opcode leaves it first).
func (r *Reader) buffered() ([]byte, int) {
	b, _ := r.br.Peek(r.br.Buffered())
	end := len(b)
	if r.size >= 0 && r.size-r.off < int64(end) {
		end = int(r.size - r.off)
	}
	if r.frameEnd >= 0 {
		if r.off >= r.frameEnd {
			return b, 0
		}
		if r.frameEnd-r.off < int64(end) {
			end = int(r.frameEnd - r.off)
		}
	}
	return b, end
}

// bufWidth is, by opcode byte, what bufferedOp needs: the width of its
// fixed-width argument (argWidth), -1 for a short str/bytes argument, -2
// for a byte that never is decoded from the buffer (unknown, FRAME, STOP,
// a text or long-length argument).
var bufWidth [256]int8

// bufArg is, by opcode byte, its argument's kind (ArgNone for an unknown
// byte), without the way through opTable.
var bufArg [256]ArgKind

func init() {
	for c := range bufWidth {
		bufWidth[c] = -2
	}
	for _, info := range opList {
		bufArg[info.Code] = info.Arg
		if info.Code != FRAME && info.Code != STOP {
			bufWidth[info.Code] = int8(argWidth(info.Arg))
		}
	}
}

// bufferedOp says whether the opcode at b[i] can be decoded from the buffer
// (NextBuffered, skimBuffered): known, not FRAME or STOP, a fixed-width or
// short argument below the blob threshold th, whole before end; k is its
// argument's width.
func bufferedOp(b []byte, i, end int, th int64) (k int, ok bool) {
	k = int(bufWidth[b[i]])
	if k < 0 {
		if k == -2 || i+1 >= end || int64(b[i+1]) >= th {
			return 0, false
		}
		k = 1 + int(b[i+1])
	}
	return k, i+1+k <= end
}

func (r *Reader) skimmed(i, n int) int {
	if i > 0 {
		r.br.Discard(i)
		r.off += int64(i)
	}
	return n
}

// argWidth is the byte width of a fixed-width argument (0: none); -1 for a
// short str/bytes argument (a length byte, then the bytes); -2 for the
// others (text lines, long lengths).
func argWidth(kind ArgKind) int {
	switch kind {
	case ArgNone:
		return 0
	case ArgUint1:
		return 1
	case ArgUint2:
		return 2
	case ArgInt4, ArgUint4:
		return 4
	case ArgFloat8:
		return 8
	case ArgString1, ArgBytes1, ArgUnicode1:
		return -1
	}
	return -2
}

// fixedArg decodes a fixed-width integer argument (a float's bits for
// ArgFloat8) from the start of b, which holds all of it; other kinds are 0.
func fixedArg(kind ArgKind, b []byte) int64 {
	switch kind {
	case ArgUint1:
		return int64(b[0])
	case ArgUint2:
		return int64(binary.LittleEndian.Uint16(b))
	case ArgInt4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case ArgUint4:
		return int64(binary.LittleEndian.Uint32(b))
	case ArgFloat8:
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}
