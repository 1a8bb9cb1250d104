// Package array knows numpy arrays and torch tensors the way their users
// see them, without executing anything:
//
//   - element types in every spelling a pickle carries (ParseDType): numpy's
//     type strings ("<f4", "|b1", ">c16", "<M8[ns]", "|S3") and torch's
//     dtype names ("float32", "bfloat16", "complex64", "bool"), with their
//     element sizes and the Python rendering of one element (Format);
//     torch's storage classes ("FloatStorage") by their dtype (StorageDType);
//   - where an element is: the index of the i-th element of the data in C
//     or Fortran order (Index), of a storage element in a strided tensor
//     (TensorIndex);
//   - the forms a pickle writes a numpy array in (recognize.go): numpy's
//     _reconstruct + BUILD (protocols 0-4), _frombuffer (protocol 5),
//     joblib's NumpyArrayWrapper, and the pickled numpy.dtype they name,
//     read over any graph that answers Graph's questions (pkg/canon's
//     normalised view, pkg/trace's store).
//
// It depends on pkg/pickle only; pkg/input, pkg/canon, pkg/trace and
// pkg/diff use it, so each of these rules has one implementation.
package array

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DType is an element type as ParseDType reads it.
type DType struct {
	// Kind is numpy's kind letter: 'b' bool, 'i' signed, 'u' unsigned,
	// 'f' float, 'c' complex, 'M' datetime, 'm' timedelta, 'S' bytes,
	// 'U' str, 'V' void (raw bytes), 'B' bfloat16 (torch), 'q' a torch
	// quantized or packed type (raw bytes).
	Kind  byte
	Size  int    // bytes per element
	Big   bool   // big-endian
	Unit  string // the unit of a datetime/timedelta ("[ns]")
	Torch string // the torch dtype name, when written so
}

// torchDTypes are torch's dtype names and element sizes.
var torchDTypes = map[string]DType{
	"float64": {Kind: 'f', Size: 8}, "float32": {Kind: 'f', Size: 4}, "float16": {Kind: 'f', Size: 2},
	"bfloat16": {Kind: 'B', Size: 2}, "int64": {Kind: 'i', Size: 8}, "int32": {Kind: 'i', Size: 4},
	"int16": {Kind: 'i', Size: 2}, "int8": {Kind: 'i', Size: 1}, "uint8": {Kind: 'u', Size: 1},
	"uint16": {Kind: 'u', Size: 2}, "uint32": {Kind: 'u', Size: 4}, "uint64": {Kind: 'u', Size: 8},
	"bool": {Kind: 'b', Size: 1}, "complex128": {Kind: 'c', Size: 16}, "complex64": {Kind: 'c', Size: 8},
	"complex32": {Kind: 'c', Size: 4}, "qint8": {Kind: 'q', Size: 1}, "quint8": {Kind: 'q', Size: 1},
	"qint32": {Kind: 'q', Size: 4}, "quint4x2": {Kind: 'q', Size: 1}, "quint2x4": {Kind: 'q', Size: 1},
	"float8_e4m3fn": {Kind: 'q', Size: 1}, "float8_e5m2": {Kind: 'q', Size: 1},
	// numpy-style aliases torch also prints
	"double": {Kind: 'f', Size: 8}, "float": {Kind: 'f', Size: 4}, "half": {Kind: 'f', Size: 2},
	"long": {Kind: 'i', Size: 8}, "int": {Kind: 'i', Size: 4}, "short": {Kind: 'i', Size: 2},
}

// storageDTypes maps torch's storage classes (the second item of a torch
// persistent id) to the dtype of their data.
var storageDTypes = map[string]string{
	"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
	"BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
	"ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
	"BoolStorage": "bool", "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
	"ComplexHalfStorage": "complex32", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
	"QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
	"UntypedStorage": "uint8", "Float8_e4m3fnStorage": "float8_e4m3fn", "Float8_e5m2Storage": "float8_e5m2",
	"UInt16Storage": "uint16", "UInt32Storage": "uint32", "UInt64Storage": "uint64",
}

// StorageDType is the dtype name and element size of a torch storage
// class ("FloatStorage": "float32", 4), or false.
func StorageDType(class string) (string, int64, bool) {
	name, ok := storageDTypes[class]
	if !ok {
		return "", 0, false
	}
	return name, int64(torchDTypes[name].Size), true
}

// ParseDType reads a dtype spelling: a numpy type string (byte order,
// kind letter, item size, a datetime unit: "<f8", "|b1", ">i2", "<U5",
// "<M8[ns]") or a torch dtype name ("float32", "torch.bfloat16").
func ParseDType(s string) (DType, bool) {
	if d, ok := torchDTypes[strings.TrimPrefix(s, "torch.")]; ok {
		d.Torch = strings.TrimPrefix(s, "torch.")
		return d, true
	}
	var no DType
	if len(s) < 3 {
		return no, false
	}
	var d DType
	switch s[0] {
	case '<', '|', '=':
	case '>':
		d.Big = true
	default:
		return no, false
	}
	rest := s[1:]
	if j := strings.IndexByte(rest, '['); j >= 0 {
		d.Unit, rest = rest[j:], rest[:j]
	}
	d.Kind = rest[0]
	n, err := strconv.Atoi(rest[1:])
	if err != nil || n <= 0 || n > math.MaxInt32/4 {
		return no, false
	}
	d.Size = n
	switch d.Kind {
	case 'b':
		if n != 1 {
			return no, false
		}
	case 'i', 'u', 'M', 'm':
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return no, false
		}
	case 'f':
		if n != 2 && n != 4 && n != 8 && n != 16 && n != 12 {
			return no, false
		}
	case 'c':
		if n != 8 && n != 16 && n != 32 && n != 24 {
			return no, false
		}
	case 'U':
		d.Size = 4 * n
	case 'S', 'V':
	default:
		return no, false
	}
	return d, true
}

// ItemSize is the element size of a dtype spelling (ParseDType), 0 when it
// is not read.
func ItemSize(s string) int64 {
	d, ok := ParseDType(s)
	if !ok {
		return 0
	}
	return int64(d.Size)
}

func (d DType) order() binary.ByteOrder {
	if d.Big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Value is one element as a typed value: exactly one of its fields is
// meaningful, by Kind ('b' Bool, 'i' Int, 'u' Uint, 'f' Float (also
// bfloat16 and float16), 'c' Float and Imag, 'S' Bytes, 'U' Str; 'V' and
// others: Bytes, the raw element).
type Value struct {
	Kind        byte
	Bool        bool
	Int         int64
	Uint        uint64
	Float, Imag float64
	Bytes       []byte
	Str         string
	// Exact is false when Float is not the element's exact value (a
	// float128 read as a float64).
	Exact bool
}

// Decode reads one element (len(b) == d.Size).
func (d DType) Decode(b []byte) Value {
	o := d.order()
	v := Value{Kind: d.Kind, Exact: true}
	switch d.Kind {
	case 'b':
		v.Bool = b[0] != 0
	case 'i', 'M', 'm':
		v.Kind = 'i'
		switch d.Size {
		case 1:
			v.Int = int64(int8(b[0]))
		case 2:
			v.Int = int64(int16(o.Uint16(b)))
		case 4:
			v.Int = int64(int32(o.Uint32(b)))
		case 8:
			v.Int = int64(o.Uint64(b))
		}
	case 'u':
		switch d.Size {
		case 1:
			v.Uint = uint64(b[0])
		case 2:
			v.Uint = uint64(o.Uint16(b))
		case 4:
			v.Uint = uint64(o.Uint32(b))
		case 8:
			v.Uint = o.Uint64(b)
		}
	case 'f':
		v.Float, v.Exact = d.float(b)
	case 'B':
		v.Kind = 'f'
		v.Float = float64(math.Float32frombits(uint32(o.Uint16(b)) << 16))
	case 'c':
		h := d
		h.Kind, h.Size = 'f', d.Size/2
		v.Float, v.Exact = h.float(b[:h.Size])
		im, ex := h.float(b[h.Size:])
		v.Imag, v.Exact = im, v.Exact && ex
	case 'U':
		var s strings.Builder
		for i := 0; i+4 <= len(b); i += 4 {
			r := rune(o.Uint32(b[i:]))
			if r == 0 {
				break
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			s.WriteRune(r)
		}
		v.Str = s.String()
	case 'S':
		e := len(b)
		for e > 0 && b[e-1] == 0 {
			e--
		}
		v.Bytes = append([]byte(nil), b[:e]...)
	default:
		v.Kind = 'V'
		v.Bytes = append([]byte(nil), b...)
	}
	return v
}

// float reads a float of 2, 4, 8, 12 or 16 bytes (the last two: x87
// extended precision, read to a float64).
func (d DType) float(b []byte) (float64, bool) {
	o := d.order()
	switch len(b) {
	case 2:
		return half(o.Uint16(b)), true
	case 4:
		return float64(math.Float32frombits(o.Uint32(b))), true
	case 8:
		return math.Float64frombits(o.Uint64(b)), true
	case 12, 16:
		// x87 80-bit extended in the low 10 bytes (little-endian)
		if d.Big {
			return math.NaN(), false
		}
		mant := binary.LittleEndian.Uint64(b)
		se := binary.LittleEndian.Uint16(b[8:])
		exp := int(se & 0x7fff)
		sign := 1.0
		if se&0x8000 != 0 {
			sign = -1
		}
		switch {
		case exp == 0 && mant == 0:
			return math.Copysign(0, sign), true
		case exp == 0x7fff:
			if mant<<1 == 0 {
				return math.Inf(int(sign)), true
			}
			return math.NaN(), true
		}
		f, _ := new(big.Float).SetMantExp(new(big.Float).SetUint64(mant), exp-16383-63).Float64()
		return sign * f, false
	}
	return math.NaN(), false
}

// half converts an IEEE binary16.
func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// Format renders one element as Python (numpy's repr of the scalar,
// without the type): 0.59, -5.0, 1e-07, nan, True, 3, (1+2j), b'ab', 'ab'.
// Floats are the shortest text that reads back as the same value of the
// element's own precision (float16 0.1, not 0.0999755859375).
func (d DType) Format(b []byte) string {
	if len(b) != d.Size {
		return "?"
	}
	v := d.Decode(b)
	switch v.Kind {
	case 'b':
		if v.Bool {
			return "True"
		}
		return "False"
	case 'i':
		s := strconv.FormatInt(v.Int, 10)
		if d.Kind == 'M' || d.Kind == 'm' {
			s += d.Unit
		}
		return s
	case 'u':
		return strconv.FormatUint(v.Uint, 10)
	case 'f':
		return floatRepr(v.Float, d.precision())
	case 'c':
		bits := d.precision()
		re, im := floatRepr(v.Float, bits), floatRepr(v.Imag, bits)
		if v.Float == 0 && !math.Signbit(v.Float) {
			return trimZero(im) + "j"
		}
		if !strings.HasPrefix(im, "-") {
			im = "+" + im
		}
		return "(" + trimZero(re) + trimZero(im) + "j)"
	case 'U':
		return strconv.Quote(v.Str)
	}
	return bytesRepr(v.Bytes)
}

// precision is the float format of an element: 16 (float16), 'B'
// (bfloat16), 32 or 64.
func (d DType) precision() int {
	switch {
	case d.Kind == 'B':
		return 'B'
	case d.Kind == 'c' && d.Size == 4, d.Kind == 'f' && d.Size == 2:
		return 16
	case d.Kind == 'c' && d.Size == 8, d.Kind == 'f' && d.Size == 4:
		return 32
	}
	return 64
}

// floatRepr is Python's repr of a float of the given precision.
func floatRepr(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	var s string
	switch prec {
	case 32:
		s = strconv.FormatFloat(f, 'g', -1, 32)
	case 16, 'B':
		// the fewest digits that read back as the same value
		for digits := 1; digits <= 9; digits++ {
			s = strconv.FormatFloat(f, 'g', digits, 64)
			x, _ := strconv.ParseFloat(s, 64)
			if roundSmall(x, prec) == f {
				break
			}
		}
	default:
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	// Python style: 1.0, 1e-07, 1e+16
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		if len(exp) < 2 {
			exp = strings.Repeat("0", 2-len(exp)) + exp
		}
		x, _ := strconv.Atoi(exp)
		if sign == '+' && x < 16 || sign == '-' && x <= 4 {
			return strconv.FormatFloat(mustParse(s), 'f', -1, 64) + dotZero(strconv.FormatFloat(mustParse(s), 'f', -1, 64))
		}
		return mant + "e" + string(sign) + exp
	}
	return s + dotZero(s)
}

func mustParse(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }

func dotZero(s string) string {
	if strings.ContainsAny(s, ".eninf") {
		return ""
	}
	return ".0"
}

// trimZero drops the ".0" of a whole complex part, as Python writes
// (1+2j).
func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// roundSmall rounds f to a float16 (prec 16) or bfloat16 ('B').
func roundSmall(f float64, prec int) float64 {
	if prec == 'B' {
		b := math.Float32bits(float32(f))
		// round to nearest even on the upper 16 bits
		b += 0x7fff + (b>>16)&1
		return float64(math.Float32frombits(b &^ 0xffff))
	}
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	fr, exp := math.Frexp(f) // f = fr * 2^exp, 0.5 <= |fr| < 1
	// float16: 11 significant bits for normal numbers (exp-1 >= -14)
	bits := 11
	if exp-1 < -14 {
		bits = 11 - (-14 - (exp - 1))
		if bits < 0 {
			return 0
		}
	}
	return math.Ldexp(math.RoundToEven(math.Ldexp(fr, bits)), exp-bits)
}

func bytesRepr(b []byte) string {
	var s strings.Builder
	s.WriteString("b'")
	for _, c := range b {
		switch {
		case c == '\\' || c == '\'':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			s.WriteString(`\x`)
			s.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
			s.WriteString(strconv.FormatUint(uint64(c)&15, 16))
		}
	}
	s.WriteByte('\'')
	return s.String()
}
