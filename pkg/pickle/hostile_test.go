package pickle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// cat assembles a pickle from opcodes, bytes and strings.
func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case Opcode:
			b = append(b, byte(v))
		case byte:
			b = append(b, v)
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("cat: %T", p))
		}
	}
	return b
}

func u16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func i32(v int32) []byte  { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func rep(s string, n int) string { return strings.Repeat(s, n) }

// proto4 is the header most hostile cases start with, so that the failing
// opcode sits at a non-zero offset.
const proto4 = "\x80\x04"

type hostileCase struct {
	name string
	in   []byte
	// For a failure: the offset and opcode name of the error, and a
	// substring of the reason.
	off    int64
	op     string
	reason string
	// stricter: the error carries Error.Stricter (CPython would load it).
	stricter bool
	// sreason, sstricter replace reason and stricter when the input is
	// read from a stream of unknown size (stdin).
	sreason   string
	sstricter bool
	// ok: the input loads; check, when set, inspects the result.
	ok    bool
	check func(t *testing.T, f *File)
	// maxAlloc bounds the bytes allocated while parsing, garbage included
	// (0: 16 MiB). The heap kept by the result is always bounded by
	// maxRetained.
	maxAlloc uint64
}

func hostileCases() []hostileCase {
	const maxU64 = math.MaxUint64
	cs := []hostileCase{
		// Declared lengths far past the input.
		{name: "BINBYTES8 2^64-1", in: cat(proto4, BINBYTES8, u64(maxU64), "ab."), off: 2, op: "BINBYTES8", reason: "truncated"},
		{name: "BINBYTES8 2^63", in: cat(proto4, BINBYTES8, u64(1<<63), "ab."), off: 2, op: "BINBYTES8", reason: "truncated"},
		{name: "BINBYTES8 2^63-1", in: cat(proto4, BINBYTES8, u64(math.MaxInt64), "ab."), off: 2, op: "BINBYTES8", reason: "truncated"},
		{name: "BINUNICODE8 2^64-1", in: cat(proto4, BINUNICODE8, u64(maxU64), "ab."), off: 2, op: "BINUNICODE8", reason: "truncated"},
		{name: "BINUNICODE8 one past", in: cat(proto4, BINUNICODE8, u64(4), "ab."), off: 2, op: "BINUNICODE8", reason: "truncated"},
		{name: "BYTEARRAY8 2^64-1", in: cat(proto4, BYTEARRAY8, u64(maxU64), "ab."), off: 2, op: "BYTEARRAY8", reason: "truncated"},
		{name: "FRAME 2^64-1", in: cat(proto4, FRAME, u64(maxU64), "N."), off: 2, op: "FRAME", reason: "truncated"},
		{name: "FRAME 2^63-1", in: cat(proto4, FRAME, u64(math.MaxInt64), "N."), off: 2, op: "FRAME", reason: "truncated", sreason: "overflows"},
		{name: "FRAME one past", in: cat(proto4, FRAME, u64(3), "N."), off: 2, op: "FRAME", reason: "truncated"},
		{name: "BINUNICODE 4GiB-1", in: cat(proto4, BINUNICODE, u32(math.MaxUint32), "ab."), off: 2, op: "BINUNICODE", reason: "truncated"},
		{name: "BINBYTES 4GiB-1", in: cat(proto4, BINBYTES, u32(math.MaxUint32), "ab."), off: 2, op: "BINBYTES", reason: "truncated"},
		{name: "BINSTRING 2GiB-1", in: cat("\x80\x02", BINSTRING, i32(math.MaxInt32), "ab."), off: 2, op: "BINSTRING", reason: "truncated"},
		{name: "BINSTRING negative", in: cat("\x80\x02", BINSTRING, i32(-1), "ab."), off: 2, op: "BINSTRING", reason: "negative byte count"},
		{name: "BINSTRING most negative", in: cat("\x80\x02", BINSTRING, i32(math.MinInt32), "ab."), off: 2, op: "BINSTRING", reason: "negative byte count"},
		{name: "LONG4 negative", in: cat("\x80\x02", LONG4, i32(-1), "ab."), off: 2, op: "LONG4", reason: "negative byte count"},
		{name: "LONG4 2GiB-1", in: cat("\x80\x02", LONG4, i32(math.MaxInt32), "ab."), off: 2, op: "LONG4", reason: "truncated", sreason: "larger than pk's limit", sstricter: true},
		{name: "LONG4 60 MiB past", in: cat("\x80\x02", LONG4, i32(60<<20), "ab."), off: 2, op: "LONG4", reason: "truncated"},
		{name: "BINUNICODE 1 MiB-1 past", in: cat(proto4, BINUNICODE, u32(1<<20-1), "ab."), off: 2, op: "BINUNICODE", reason: "truncated"},
		{name: "LONG1 255 past", in: cat("\x80\x02", LONG1, byte(255), "ab."), off: 2, op: "LONG1", reason: "truncated"},
		{name: "SHORT_BINBYTES past", in: cat(proto4, SHORT_BINBYTES, byte(200), "ab."), off: 2, op: "SHORT_BINBYTES", reason: "truncated"},

		// The memo.
		{name: "LONG_BINPUT 2^32-1", in: cat(proto4, EMPTY_LIST, LONG_BINPUT, u32(math.MaxUint32), LONG_BINGET, u32(math.MaxUint32), APPEND, STOP), ok: true,
			check: func(t *testing.T, f *File) {
				r := f.Streams[0].Root
				if r.Kind != KindList || len(r.Items) != 1 || r.Items[0] != r {
					t.Errorf("want a list holding itself, got %v with %d items", r.Kind, len(r.Items))
				}
			}},
		{name: "PUT huge text index", in: cat(EMPTY_LIST, PUT, "99999999999999\n", GET, "99999999999999\n", APPEND, STOP), ok: true},
		{name: "PUT index past int64", in: cat(EMPTY_LIST, PUT, "99999999999999999999\n", STOP), off: 1, op: "PUT", reason: "out of range"},
		{name: "PUT negative", in: cat(EMPTY_LIST, PUT, "-1\n", STOP), off: 1, op: "PUT", reason: "negative"},
		{name: "BINGET missing", in: cat(proto4, NONE, BINPUT, byte(0), BINGET, byte(5), STOP), off: 5, op: "BINGET", reason: "memo value not found at index 5"},
		{name: "LONG_BINGET missing", in: cat(proto4, LONG_BINGET, u32(1<<31), STOP), off: 2, op: "LONG_BINGET", reason: "not found"},
		{name: "GET missing", in: cat(NONE, GET, "7\n", STOP), off: 1, op: "GET", reason: "not found at index 7"},
		{name: "GET not a number", in: cat(NONE, GET, "x\n", STOP), off: 1, op: "GET", reason: "convert"},
		{name: "billion laughs", in: billionLaughs(10, 10), ok: true, check: func(t *testing.T, f *File) {
			st := f.Streams[0]
			if len(st.All) > 200 {
				t.Errorf("billion laughs expanded to %d nodes", len(st.All))
			}
			// Ten levels of ten references: the root list holds the
			// ninth level ten times.
			r := st.Root
			if r.Kind != KindList || len(r.Items) != 10 || r.Items[0] != r.Items[9] {
				t.Errorf("root: %v with %d items", r.Kind, len(r.Items))
			}
		}},

		// Nesting.
		{name: "1e6 MARKs then STOP", in: cat(rep("(", 1e6), STOP), off: 1e6, op: "STOP", reason: "unexpected MARK found", maxAlloc: 256 << 20},
		{name: "1e6 MARKs kept", in: cat(rep("(", 1e6), NONE, STOP), ok: true, maxAlloc: 256 << 20, check: func(t *testing.T, f *File) {
			if n := f.Streams[0].LeftoverMarks; n != 1e6 {
				t.Errorf("LeftoverMarks %d", n)
			}
		}},
		{name: "1e6 nested lists by APPEND", in: cat(rep("]", 1e6), rep("a", 1e6-1), STOP), ok: true, maxAlloc: 1 << 30, check: depth(1e6, KindList)},
		{name: "1e6 nested lists by MARK LIST", in: cat(rep("(", 1e6), rep("l", 1e6), STOP), ok: true, maxAlloc: 1 << 30, check: depth(1e6, KindList)},
		{name: "1e6 nested tuples by TUPLE1", in: cat(")", rep("\x85", 1e6), STOP), ok: true, maxAlloc: 1 << 30, check: depth(1e6+1, KindTuple)},
		{name: "2e5 nested dicts", in: cat("}", rep("K\x01}", 2e5), rep("s", 2e5), STOP), ok: true, maxAlloc: 1 << 30, check: depth(2e5+1, KindDict)},

		// Cycles.
		{name: "list holds itself", in: cat(proto4, EMPTY_LIST, MEMOIZE, BINGET, byte(0), APPEND, STOP), ok: true, check: func(t *testing.T, f *File) {
			r := f.Streams[0].Root
			if len(r.Items) != 1 || r.Items[0] != r || r.Owner != nil {
				t.Errorf("want l = [l]")
			}
		}},
		{name: "dict is its own key", in: cat(proto4, EMPTY_DICT, MEMOIZE, BINGET, byte(0), BINGET, byte(0), SETITEM, STOP), ok: true, check: func(t *testing.T, f *File) {
			r := f.Streams[0].Root
			if len(r.Items) != 2 || r.Items[0] != r || r.Items[1] != r {
				t.Errorf("want d = {d: d}")
			}
		}},
		{name: "tuple through list cycle", in: cat(proto4, EMPTY_LIST, MEMOIZE, BINGET, byte(0), TUPLE1, APPEND, STOP), ok: true},
		{name: "BUILD with itself", in: cat(proto4, GLOBAL, "m\nC\n", EMPTY_TUPLE, NEWOBJ, MEMOIZE, BINGET, byte(0), BUILD, STOP), ok: true},

		// Odd item counts.
		{name: "DICT odd", in: cat(MARK, BININT1, byte(1), DICT, STOP), off: 3, op: "DICT", reason: "odd number of items for DICT"},
		{name: "SETITEMS odd", in: cat(proto4, EMPTY_DICT, MARK, BININT1, byte(1), SETITEMS, STOP), off: 6, op: "SETITEMS", reason: "odd number of items for SETITEMS"},
		{name: "SETITEMS odd 3", in: cat(proto4, EMPTY_DICT, MARK, NONE, NONE, NONE, SETITEMS, STOP), off: 7, op: "SETITEMS", reason: "odd number"},

		// MARK where an operand is expected.
		{name: "STOP on MARK", in: cat(NONE, MARK, STOP), off: 2, op: "STOP", reason: "unexpected MARK found"},
		{name: "BUILD on MARK", in: cat(NONE, MARK, BUILD, STOP), off: 2, op: "BUILD", reason: "unexpected MARK found"},
		{name: "BUILD state over MARK", in: cat(NONE, MARK, NONE, BUILD, STOP), off: 3, op: "BUILD", reason: "unexpected MARK found"},
		{name: "REDUCE args over MARK", in: cat(GLOBAL, "a\nb\n", MARK, EMPTY_TUPLE, REDUCE, STOP), off: 7, op: "REDUCE", reason: "unexpected MARK found"},
		{name: "APPEND over MARK", in: cat(EMPTY_LIST, MARK, NONE, APPEND, STOP), off: 3, op: "APPEND", reason: "unexpected MARK found"},
		{name: "SETITEM over MARK", in: cat(EMPTY_DICT, MARK, NONE, NONE, SETITEM, STOP), off: 4, op: "SETITEM", reason: "unexpected MARK found"},
		{name: "APPENDS without target", in: cat(MARK, NONE, APPENDS, STOP), off: 2, op: "APPENDS", reason: "stack underflow"},
		{name: "OBJ without class", in: cat(MARK, OBJ, STOP), off: 1, op: "OBJ", reason: "stack underflow"},
		{name: "STACK_GLOBAL on MARK", in: cat(proto4, SHORT_BINUNICODE, byte(1), "m", MARK, SHORT_BINUNICODE, byte(1), "n", STACK_GLOBAL, STOP), off: 9, op: "STACK_GLOBAL", reason: "unexpected MARK found"},
		{name: "STACK_GLOBAL on int", in: cat(proto4, BININT1, byte(1), BININT1, byte(2), STACK_GLOBAL, STOP), off: 6, op: "STACK_GLOBAL", reason: "requires str"},

		// Protocol and opcodes.
		{name: "PROTO 6", in: cat(PROTO, byte(6), NONE, STOP), off: 0, op: "PROTO", reason: "unsupported pickle protocol: 6"},
		{name: "PROTO 255 mid-stream", in: cat(proto4, NONE, PROTO, byte(255), STOP), off: 3, op: "PROTO", reason: "unsupported pickle protocol: 255"},
		{name: "opcode 0xff", in: []byte{0xff}, off: 0, reason: "invalid opcode byte 0xff"},
		{name: "opcode 0xff after header", in: cat(proto4, NONE, byte(0xff), STOP), off: 3, reason: "invalid opcode"},
		{name: "opcode 0x00", in: cat(proto4, byte(0), STOP), off: 2, reason: "invalid opcode byte 0x00"},
		{name: "EXT1 code 0", in: cat("\x80\x02", EXT1, byte(0), STOP), off: 2, op: "EXT1", reason: "code <= 0"},
		{name: "EXT4 negative", in: cat("\x80\x02", EXT4, i32(-5), STOP), off: 2, op: "EXT4", reason: "code <= 0"},

		// Not pickles.
		{name: "empty", in: nil, off: 0, reason: "empty input"},
		{name: "no STOP", in: cat(proto4, NONE), off: 3, reason: "before STOP"},
		{name: "text", in: []byte("hello, world\n"), off: 0, op: "BINGET", reason: "not found at index 101"},
		{name: "PNG header", in: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), off: 6, reason: "invalid opcode byte 0x1a"},
		{name: "zip header", in: []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), off: 0, op: "PERSID", reason: "no newline"},
		{name: "zip header ascii", in: []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00\n"), off: 11, op: "", reason: "before STOP"},
		{name: "gzip header", in: []byte("\x1f\x8b\x08\x00"), off: 0, reason: "invalid opcode byte 0x1f"},
		{name: "JSON", in: []byte(`{"a": 1}`), off: 0, reason: "invalid opcode byte 0x7b"},
		{name: "ELF", in: []byte("\x7fELF\x02\x01\x01"), off: 0, reason: "invalid opcode byte 0x7f"},

		// Frames.
		{name: "argument crosses frame end", in: cat(proto4, FRAME, u64(3), SHORT_BINUNICODE, byte(5), "hello", STOP),
			off: 11, op: "SHORT_BINUNICODE", reason: "crosses the end of the frame at offset 14", stricter: true},
		{name: "length byte crosses frame end", in: cat(proto4, FRAME, u64(1), BININT, u32(7), STOP),
			off: 11, op: "BININT", reason: "crosses the end of the frame at offset 12", stricter: true},
		{name: "text line crosses frame end", in: cat(proto4, FRAME, u64(2), INT, "12345\n", STOP),
			off: 11, op: "INT", reason: "crosses the end of the frame at offset 13", stricter: true},
		{name: "frame inside frame", in: cat(proto4, FRAME, u64(10), FRAME, u64(1), NONE, STOP),
			off: 11, op: "FRAME", reason: "before the end of the current frame at offset 21", stricter: true},
		{name: "large frame", in: bigFrame(300000, 0), ok: true, maxAlloc: 8 << 20},
		{name: "large frame one short", in: bigFrame(300000, 1), off: 2, op: "FRAME", reason: "truncated", maxAlloc: 8 << 20},
		{name: "large frame 2^40", in: cat(proto4, FRAME, u64(1<<40), rep("N", 1<<19), STOP), off: 2, op: "FRAME", reason: "truncated", maxAlloc: 8 << 20},
		{name: "frame right after frame", in: cat(proto4, FRAME, u64(0), FRAME, u64(2), NONE, STOP), ok: true},

		// Strings.
		{name: "BINUNICODE lone surrogate is valid", in: cat(proto4, BINUNICODE, u32(3), "\xed\xa0\x80", STOP), ok: true, check: func(t *testing.T, f *File) {
			if r := f.Streams[0].Root; r.Kind != KindStr || r.Str != "\xed\xa0\x80" {
				t.Errorf("got %v %q", r.Kind, r.Str)
			}
		}},
		{name: "BINUNICODE surrogate pair stays two", in: cat(proto4, SHORT_BINUNICODE, byte(6), "\xed\xa0\xbd\xed\xb8\x80", STOP), ok: true},
		{name: "BINUNICODE 0xff", in: cat(proto4, BINUNICODE, u32(2), "a\xff", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8 at byte 1"},
		{name: "SHORT_BINUNICODE overlong /", in: cat(proto4, SHORT_BINUNICODE, byte(2), "\xc0\xaf", STOP), off: 2, op: "SHORT_BINUNICODE", reason: "invalid UTF-8 at byte 0"},
		{name: "BINUNICODE8 overlong 3-byte", in: cat(proto4, BINUNICODE8, u64(3), "\xe0\x80\xaf", STOP), off: 2, op: "BINUNICODE8", reason: "invalid UTF-8"},
		{name: "BINUNICODE overlong 4-byte", in: cat(proto4, BINUNICODE, u32(4), "\xf0\x80\x80\xaf", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8"},
		{name: "BINUNICODE past U+10FFFF", in: cat(proto4, BINUNICODE, u32(4), "\xf4\x90\x80\x80", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8"},
		{name: "BINUNICODE 5-byte form", in: cat(proto4, BINUNICODE, u32(5), "\xf8\x88\x80\x80\x80", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8"},
		{name: "BINUNICODE cut sequence", in: cat(proto4, BINUNICODE, u32(2), "\xe2\x82", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8"},
		{name: "BINUNICODE lone continuation", in: cat(proto4, BINUNICODE, u32(1), "\x80", STOP), off: 2, op: "BINUNICODE", reason: "invalid UTF-8"},
		{name: "GLOBAL invalid UTF-8", in: cat(GLOBAL, "m\xff\nn\n", STOP), off: 0, op: "GLOBAL", reason: "not valid UTF-8"},
		{name: "GLOBAL surrogate", in: cat(GLOBAL, "m\nn\xed\xa0\x80\n", STOP), off: 0, op: "GLOBAL", reason: "not valid UTF-8"},
		{name: "UNICODE raw escape bad", in: cat(UNICODE, "\\u12\n", STOP), off: 0, op: "UNICODE", reason: "truncated \\uXXXX"},
		{name: "UNICODE past U+10FFFF", in: cat(UNICODE, "\\U00110000\n", STOP), off: 0, op: "UNICODE", reason: "out of range"},
		{name: "UNICODE latin-1 bytes are fine", in: cat(UNICODE, "\xff\xe9\n", STOP), ok: true, check: func(t *testing.T, f *File) {
			if r := f.Streams[0].Root; r.Str != "ÿé" {
				t.Errorf("got %q", r.Str)
			}
		}},
		{name: "STRING unquoted", in: cat(STRING, "abc\n", STOP), off: 0, op: "STRING", reason: "must be quoted"},
		{name: "STRING bad \\x", in: cat(STRING, "'\\x4'\n", STOP), off: 0, op: "STRING", reason: "invalid \\x escape"},
		{name: "PERSID non-ASCII", in: cat(PERSID, "\xe9\n", STOP), off: 0, op: "PERSID", reason: "ASCII"},
		{name: "FLOAT junk", in: cat(FLOAT, "1.5x\n", STOP), off: 0, op: "FLOAT", reason: "could not convert"},
		{name: "FLOAT overflow", in: cat(FLOAT, "1e999\n", STOP), off: 0, op: "FLOAT", reason: "out of range"},
		{name: "INT junk", in: cat(INT, "12a\n", STOP), off: 0, op: "INT", reason: "could not convert"},
		{name: "INT empty", in: cat(INT, "\n", STOP), off: 0, op: "INT", reason: "empty INT"},
		{name: "LONG 4301 digits", in: cat(LONG, rep("9", 4301), "L\n", STOP), off: 0, op: "LONG", reason: "4300 digits"},
	}
	// Truncated text lines at the end of the input.
	for _, op := range []Opcode{INT, LONG, FLOAT, STRING, UNICODE, GET, PUT, PERSID} {
		cs = append(cs, hostileCase{name: op.String() + " without newline", in: cat(NONE, op, "1"), off: 1, op: op.String(), reason: "truncated"})
	}
	return cs
}

// bigFrame is a protocol-4 pickle of one bytes object of n bytes inside a
// frame (as Python 3.4-3.6 wrote them), cut short by cut bytes.
func bigFrame(n, cut int) []byte {
	body := cat(BINBYTES, u32(uint32(n)), rep("x", n), STOP)
	b := cat(proto4, FRAME, u64(uint64(len(body))), body)
	return b[:len(b)-cut]
}

// billionLaughs builds levels lists, each holding the previous one refs
// times through BINGET: 10 levels of 10 are 10^10 leaves when unfolded.
func billionLaughs(levels, refs int) []byte {
	b := cat(proto4, SHORT_BINUNICODE, byte(3), "lol", MEMOIZE)
	for l := 1; l < levels; l++ {
		b = append(b, byte(EMPTY_LIST), byte(MARK))
		for i := 0; i < refs; i++ {
			b = append(b, byte(BINGET), byte(l-1))
		}
		b = append(b, byte(APPENDS), byte(MEMOIZE))
	}
	b = append(b, byte(EMPTY_LIST), byte(MARK))
	for i := 0; i < refs; i++ {
		b = append(b, byte(BINGET), byte(levels-1))
	}
	return append(b, byte(APPENDS), byte(STOP))
}

// depth checks a chain of n nested single-item containers of kind k (the
// innermost one empty), walking it without recursion.
func depth(n int, k Kind) func(t *testing.T, f *File) {
	return func(t *testing.T, f *File) {
		d := 0
		for x := f.Streams[0].Root; x != nil; d++ {
			if x.Kind != k {
				t.Fatalf("level %d is %v", d, x.Kind)
			}
			if len(x.Items) == 0 {
				x = nil
				continue
			}
			x = x.Items[len(x.Items)-1]
		}
		if d != n {
			t.Errorf("depth %d, want %d", d, n)
		}
	}
}

// maxRetained bounds the heap a parsed hostile input may keep alive.
const maxRetained = 256 << 20

func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			runHostile(t, c, false)
			// The large inputs exercise the same paths from stdin; the
			// small ones also check that an unknown size changes nothing.
			if len(c.in) < 1<<16 || strings.Contains(c.name, "frame") {
				runHostile(t, c, true)
			}
		})
	}
}

func runHostile(t *testing.T, c hostileCase, stdin bool) {
	t.Helper()
	var ms0, ms1 runtime.MemStats
	var f *File
	var err error
	var el, wall time.Duration
	// The 2 s limit is on the CPU time the parse used (GC included), as
	// wall-clock time on a shared machine counts the other processes; the
	// wall clock only catches hangs. A slow run is retried once.
	for try := 0; try < 2; try++ {
		f = nil
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		start, cpu0 := time.Now(), cpuTime()
		if stdin {
			f, err = Parse(onlyReader{bytes.NewReader(c.in)}, -1, "-", Options{})
		} else {
			f, err = Parse(bytes.NewReader(c.in), int64(len(c.in)), "t.pkl", Options{})
		}
		el, wall = cpuTime()-cpu0, time.Since(start)
		if el <= 2*time.Second && wall <= 20*time.Second {
			break
		}
	}
	runtime.ReadMemStats(&ms1)
	var ms2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms2)
	if ms2.HeapAlloc > ms0.HeapAlloc && ms2.HeapAlloc-ms0.HeapAlloc > maxRetained {
		t.Errorf("result keeps %d MiB of heap, limit %d MiB", (ms2.HeapAlloc-ms0.HeapAlloc)>>20, maxRetained>>20)
	}
	where := "file"
	if stdin {
		where = "stdin"
	}
	if testing.Verbose() && el > 50*time.Millisecond {
		t.Logf("%s: %v CPU, %v wall, %d MiB allocated, %d MiB kept, %d bytes of input", where, el, wall,
			(ms1.TotalAlloc-ms0.TotalAlloc)>>20, (ms2.HeapAlloc-min(ms2.HeapAlloc, ms0.HeapAlloc))>>20, len(c.in))
	}
	runtime.KeepAlive(f)
	if el > 2*time.Second || wall > 20*time.Second {
		t.Errorf("%s: took %v of CPU, %v of wall-clock time", where, el, wall)
	}
	limit := c.maxAlloc
	if limit == 0 {
		limit = 16 << 20
	}
	if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > limit {
		t.Errorf("%s: allocated %d MiB, limit %d MiB", where, alloc>>20, limit>>20)
	}
	if c.ok {
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if cerr := checkFile(f, int64(len(c.in))); cerr != nil {
			t.Fatalf("%s: %v", where, cerr)
		}
		if c.check != nil {
			c.check(t, f)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: no error", where)
	}
	pe, cerr := checkError(err, len(c.in))
	if cerr != nil {
		t.Fatalf("%s: %v", where, cerr)
	}
	reason, stricter := c.reason, c.stricter
	if stdin && c.sreason != "" {
		reason, stricter = c.sreason, c.sstricter
	}
	if pe.Offset != c.off || pe.Op != c.op || !strings.Contains(pe.Reason, reason) || pe.Stricter != stricter {
		t.Errorf("%s: got %v (offset %d op %q stricter %v)\nwant offset %d op %q reason ~%q stricter %v",
			where, err, pe.Offset, pe.Op, pe.Stricter, c.off, c.op, reason, stricter)
	}
	wantFile := "t.pkl"
	if stdin {
		wantFile = "-"
	}
	if pe.File != wantFile {
		t.Errorf("%s: error names file %q", where, pe.File)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: error is not one line: %q", where, err)
	}
}
