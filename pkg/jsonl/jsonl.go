// Package jsonl owns pk's --json output, the one shape every command writes
// (docs/json.md; one JSON Schema a command in docs/schema/):
//
//   - the framing: JSON Lines, one record (one JSON object) a line, written
//     by Writer (no HTML escaping, no indentation);
//   - the fields every record shares: "file" names the input (diff: "a" and
//     "b"), "offset" is a byte offset in that input's (decompressed) pickle
//     stream (diff: "offset_a" and "offset_b", where one entry has a side in
//     each file);
//   - the record of an input that could not be read, ErrorRecord:
//     {"file", "error", "offset"} (offset null when none applies);
//   - the encoding of pickled values (Append* and the Value types): None is
//     null, a bool true/false, an int a JSON number (beyond MaxIntBits its
//     first hex digits, {"int_hex","bits","shortened"}), a finite
//     float a JSON number ({"float":"nan"|"inf"|"-inf"} otherwise), a str a
//     JSON string (lone surrogates as \uXXXX escapes, as Python's json
//     writes them), bytes {"bytes":"<hex>"}, a bytearray
//     {"bytearray":"<hex>"}; a payload pk kept only the first bytes of adds
//     "len" (the full length in bytes) and "shortened":true;
//   - arrays and tensors: "dtype" (numpy's dtype string or name, torch's
//     storage type) and "shape" (an array of ints) as fields of the record
//     that describes them.
//
// Commands build their records as Go structs (encoding/json) or, on hot
// paths (dis, trace), append them by hand with the Append functions here.
package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Writer writes records, one a line.
type Writer struct {
	b   *bufio.Writer
	enc *json.Encoder
}

// NewEncoder returns the encoder of a command that writes its records
// through encoding/json: each Encode is one line; <, > and & stay as they are.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// NewWriter returns a Writer on w; call Flush at the end.
func NewWriter(w io.Writer) *Writer {
	b := bufio.NewWriter(w)
	return &Writer{b: b, enc: NewEncoder(b)}
}

// Write writes rec (a struct or map that marshals to a JSON object) as one line.
func (w *Writer) Write(rec any) error { return w.enc.Encode(rec) }

// WriteRaw writes a line the caller encoded (without its newline).
func (w *Writer) WriteRaw(line []byte) error {
	w.b.Write(line)
	return w.b.WriteByte('\n')
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error { return w.b.Flush() }

// Error is the record of an input that could not be read.
type Error struct {
	File   string `json:"file"`
	Error  string `json:"error"`
	Offset *int64 `json:"offset"` // null when no offset applies
}

// ErrorRecord gives the record of err, the failure to read file.
func ErrorRecord(file string, err error) Error {
	return Error{File: file, Error: err.Error(), Offset: ErrorOffset(err)}
}

// ErrorOffset is the byte offset err names (of the opcode at fault), or nil.
func ErrorOffset(err error) *int64 {
	var pe *pickle.Error
	if errors.As(err, &pe) {
		o := pe.Offset
		return &o
	}
	var ie *input.Error
	if errors.As(err, &ie) && ie.Offset >= 0 {
		o := ie.Offset
		return &o
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// AppendHex appends the lower-case hex of s.
func AppendHex(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, hexDigits[s[i]>>4], hexDigits[s[i]&15])
	}
	return b
}

// AppendString appends s (a Python str as pk holds it: UTF-8, surrogates
// kept as surrogatepass would write them) as a JSON string. Anything else
// that is not UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		// a surrogate (ED A0..BF xx): \udXXX
		if c == 0xed && i+2 < len(s) && s[i+1]&0xe0 == 0xa0 && s[i+2]&0xc0 == 0x80 {
			r := rune(c&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
			b = append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else if r == 0x2028 || r == 0x2029 {
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// AppendInt appends an int.
func AppendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// MaxIntBits is the largest int written as a JSON number: 14,284 bits,
// about 4,300 decimal digits, the most Python's int() and str() take by
// default (sys.int_info.default_max_str_digits). Writing a larger one in
// decimal would also cost time quadratic in its size.
const MaxIntBits = 14284

// AppendBigInt appends an int: a JSON number when it has at most
// MaxIntBits bits, otherwise {"int_hex":"<sign and first 64 hex digits>",
// "bits":N,"shortened":true} (linear in the size of v).
func AppendBigInt(b []byte, v *big.Int) []byte {
	n := v.BitLen()
	if n <= MaxIntBits {
		return v.Append(b, 10)
	}
	top := new(big.Int).Abs(v)
	top.Rsh(top, uint(n-256))
	b = append(b, `{"int_hex":"`...)
	if v.Sign() < 0 {
		b = append(b, '-')
	}
	b = top.Append(b, 16)
	b = append(b, `","bits":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, `,"shortened":true}`...)
}

// AppendFloat appends a float: a JSON number when finite (the shortest
// text that reads back as the same float, with a ".0" when it would
// otherwise read as an int), {"float":"nan"|"inf"|"-inf"} otherwise.
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `{"float":"nan"}`...)
	case math.IsInf(f, 1):
		return append(b, `{"float":"inf"}`...)
	case math.IsInf(f, -1):
		return append(b, `{"float":"-inf"}`...)
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	for _, c := range b[n:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0') // 1.0, not 1: a JSON reader that keeps ints and floats apart (Python's) sees a float
}

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// AppendBytes appends {"<tag>":"<hex of data>"} where tag is "bytes" or
// "bytearray"; when full (the payload's length) is more than len(data),
// data is its first bytes and "len" and "shortened":true follow.
func AppendBytes(b []byte, tag, data string, full int64) []byte {
	b = append(b, `{"`...)
	b = append(b, tag...)
	b = append(b, `":"`...)
	b = AppendHex(b, data)
	b = append(b, '"')
	return appendShortened(b, int64(len(data)), full)
}

// AppendShortStr appends a str pk kept only the first bytes of (prefix, of
// full bytes in all): {"str":"<prefix>","len":full,"shortened":true}. The
// prefix is cut back to a whole character.
func AppendShortStr(b []byte, prefix string, full int64) []byte {
	for len(prefix) > 0 && !utf8.ValidString(prefix) {
		prefix = prefix[:len(prefix)-1]
	}
	b = append(b, `{"str":`...)
	b = AppendString(b, prefix)
	return appendShortened(b, -1, full)
}

func appendShortened(b []byte, have, full int64) []byte {
	if full > have {
		b = append(b, `,"len":`...)
		b = strconv.AppendInt(b, full, 10)
		b = append(b, `,"shortened":true`...)
	}
	return append(b, '}')
}

// Raw is an encoded value, for encoding/json records (json.RawMessage
// that says where it comes from).
type Raw = json.RawMessage

// Element is an element of an array as a typed JSON value (pk diff's
// value_a and value_b, pk trace's element value), nil for the kinds that
// have none (complex, raw bytes).
func Element(v array.Value) []byte {
	switch v.Kind {
	case 'b':
		return AppendBool(nil, v.Bool)
	case 'i':
		return AppendInt(nil, v.Int)
	case 'u':
		return strconv.AppendUint(nil, v.Uint, 10)
	case 'f':
		if v.Exact {
			return AppendFloat(nil, v.Float)
		}
	case 'U':
		return AppendString(nil, v.Str)
	case 'S':
		return AppendBytes(nil, "bytes", string(v.Bytes), int64(len(v.Bytes)))
	}
	return nil
}
