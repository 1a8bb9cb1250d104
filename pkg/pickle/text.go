package pickle

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// seqLen is the length of the UTF-8 sequence that lead byte c starts (0 if c
// cannot start one).
func seqLen(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c >= 0xC2 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF4:
		return 4
	}
	return 0
}

// utf8Prefix returns the length of the longest prefix of b made of whole
// valid sequences (surrogates allowed, as Python's surrogatepass), and false
// if b holds an invalid sequence that is not merely cut off at the end.
func utf8Prefix(b []byte) (int, bool) {
	i := 0
	n := len(b)
	for i < n {
		// ASCII fast path: eight bytes at a time
		for i+8 <= n && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		if i == n {
			break
		}
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		l := seqLen(c)
		if l == 0 {
			return i, false
		}
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xE0:
			lo = 0xA0
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
		for j := 1; j < l; j++ {
			if i+j >= n {
				return i, true // cut off
			}
			d := b[i+j]
			if j == 1 {
				if d < lo || d > hi {
					return i, false
				}
			} else if d < 0x80 || d > 0xBF {
				return i, false
			}
		}
		i += l
	}
	return i, true
}

// validUTF8SP returns -1 when b is valid UTF-8 with surrogates allowed, or
// the index of the first bad byte.
func validUTF8SP(b []byte) int {
	k, ok := utf8Prefix(b)
	if ok && k == len(b) {
		return -1
	}
	return k
}

func hasSurrogate(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == 0xED && b[i+1] >= 0xA0 {
			return true
		}
	}
	return false
}

type utf8Stream struct {
	carry [4]byte
	n     int
}

func (s *utf8Stream) write(p []byte) bool {
	if s.n > 0 {
		need := seqLen(s.carry[0])
		for s.n < need && len(p) > 0 {
			s.carry[s.n] = p[0]
			s.n++
			p = p[1:]
		}
		if s.n < need {
			k, ok := utf8Prefix(s.carry[:s.n])
			return ok && k == 0
		}
		k, ok := utf8Prefix(s.carry[:s.n])
		if !ok || k != s.n {
			return false
		}
		s.n = 0
	}
	k, ok := utf8Prefix(p)
	if !ok {
		return false
	}
	s.n = copy(s.carry[:], p[k:])
	return true
}

func (s *utf8Stream) done() bool { return s.n == 0 }

// appendRuneSP appends the UTF-8 form of r, surrogates included.
func appendRuneSP(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	default:
		return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12)&0x3F, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
}

// Latin1ToUTF8 converts Latin-1 bytes (how Python 3 loads a Python 2 str
// with encoding='latin1', and how pickletools shows them) to UTF-8.
func Latin1ToUTF8(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s)*2)
	for i := 0; i < len(s); i++ {
		b = appendRuneSP(b, rune(s[i]))
	}
	return string(b)
}

// rawUnicodeEscapeDecode is Python's 'raw-unicode-escape' codec: bytes are
// Latin-1 code points except \uXXXX and \UXXXXXXXX after an odd number of
// backslashes.
func rawUnicodeEscapeDecode(s []byte) (string, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = appendRuneSP(out, rune(c))
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			out = append(out, '\\')
			j++
		}
		if (j-i)&1 == 0 || j >= len(s) || (s[j] != 'u' && s[j] != 'U') {
			i = j
			continue
		}
		out = out[:len(out)-1]
		count := 4
		if s[j] == 'U' {
			count = 8
		}
		j++
		if j+count > len(s) {
			return "", errors.New("truncated \\uXXXX escape in raw-unicode-escape text")
		}
		v, err := strconv.ParseUint(string(s[j:j+count]), 16, 32)
		if err != nil || strings.ContainsAny(string(s[j:j+count]), "+-_") {
			return "", errors.New("truncated \\uXXXX escape in raw-unicode-escape text")
		}
		if v > 0x10FFFF {
			return "", errors.New("\\Uxxxxxxxx out of range in raw-unicode-escape text")
		}
		out = appendRuneSP(out, rune(v))
		i = j + count
	}
	return string(out), nil
}

// escapeDecode is Python's codecs.escape_decode of the inside of a STRING
// argument; the result is raw bytes.
func escapeDecode(s []byte) (string, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("trailing \\ in string")
		}
		c = s[i]
		switch c {
		case '\n':
		case '\\', '\'', '"':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'v':
			out = append(out, '\v')
		case 'a':
			out = append(out, '\a')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			out = append(out, byte(v))
		case 'x':
			if i+2 < len(s)+0 && isHex(s[i+1]) && isHex(s[i+2]) {
				v, _ := strconv.ParseUint(string(s[i+1:i+3]), 16, 8)
				out = append(out, byte(v))
				i += 2
			} else {
				return "", errors.New("invalid \\x escape in string")
			}
		default:
			out = append(out, '\\', c)
		}
	}
	return string(out), nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

var errInt = errors.New("could not convert string to int")

// parseCInt reads the INT argument as CPython's load_int does: C strtol with
// base 0 (so "010" is 8 and "0x10" is 16), falling back to Python's int()
// rules on overflow or leftover characters; "00"/"01" (and any 2-character
// text worth 0 or 1) are False/True.
func parseCInt(s []byte) (int64, *big.Int, bool, error) {
	if len(s) == 0 {
		return 0, nil, false, errors.New("pickle data was truncated: empty INT argument")
	}
	v, end, overflow := strtol(s)
	if !overflow && end == len(s) && end > 0 {
		if len(s) == 2 && (v == 0 || v == 1) {
			return v, nil, true, nil
		}
		return v, nil, false, nil
	}
	b, err := parsePyInt(s, 0)
	if err != nil {
		return 0, nil, false, err
	}
	i, bg := fromBig(b)
	return i, bg, false, nil
}

// strtol emulates C strtol(s, &end, 0) on a line without its newline.
func strtol(s []byte) (v int64, end int, overflow bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && isHex(s[i+2]) {
		base = 16
		i += 2
	} else if i < len(s) && s[i] == '0' {
		base = 8
	}
	start := i
	var u uint64
	for i < len(s) {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		if u > (math.MaxUint64-d)/base {
			overflow = true
		} else {
			u = u*base + d
		}
		i++
	}
	if i == start {
		return 0, 0, false
	}
	if neg {
		if u > 1<<63 {
			overflow = true
		}
		return -int64(u), i, overflow
	}
	if u > math.MaxInt64 {
		overflow = true
	}
	return int64(u), i, overflow
}

func digitVal(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'z':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return uint64(c-'A') + 10
	}
	return 99
}

// MaxIntDigits is CPython's limit on decimal digits in int(str).
const MaxIntDigits = 4300

// parsePyInt is Python's int(s, base) for base 0 or 10 on ASCII text:
// surrounding whitespace, a sign, 0x/0o/0b prefixes (base 0), single
// underscores between digits, and the 4300-digit limit for decimal.
func parsePyInt(s []byte, base int) (*big.Int, error) {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	t := s[i:j]
	neg := false
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	b := 10
	if base == 0 && len(t) >= 2 && t[0] == '0' {
		switch t[1] {
		case 'x', 'X':
			b = 16
		case 'o', 'O':
			b = 8
		case 'b', 'B':
			b = 2
		}
		if b != 10 {
			t = t[2:]
			if len(t) > 0 && t[0] == '_' {
				t = t[1:]
			}
		}
	}
	if len(t) == 0 {
		return nil, errInt
	}
	digits := make([]byte, 0, len(t))
	for k, c := range t {
		if c == '_' {
			if k == 0 || k == len(t)-1 || t[k-1] == '_' {
				return nil, errInt
			}
			continue
		}
		if digitVal(c) >= uint64(b) {
			return nil, errInt
		}
		digits = append(digits, c)
	}
	if base == 0 && b == 10 && len(digits) > 1 && digits[0] == '0' {
		for _, c := range digits {
			if c != '0' {
				return nil, errInt
			}
		}
	}
	if b == 10 && len(digits) > MaxIntDigits {
		return nil, errors.New("exceeds the limit (4300 digits) for integer string conversion")
	}
	v, ok := new(big.Int).SetString(string(digits), b)
	if !ok {
		return nil, errInt
	}
	if neg {
		v.Neg(v)
	}
	return v, nil
}

// parseMemoIndex reads the GET/PUT text argument (Python int(s, 10)).
func parseMemoIndex(s []byte) (int64, error) {
	v, err := parsePyInt(s, 10)
	if err != nil {
		return 0, err
	}
	if !v.IsInt64() {
		return 0, errors.New("memo index out of range")
	}
	return v.Int64(), nil
}

// parseCFloat is CPython's load_float: PyOS_string_to_double over the whole
// line, no hex, no underscores, overflow is an error.
func parseCFloat(s []byte) (float64, error) {
	bad := errors.New("could not convert string to float")
	if len(s) == 0 {
		return 0, bad
	}
	t := s
	if t[0] == '+' || t[0] == '-' {
		t = t[1:]
	}
	low := strings.ToLower(string(t))
	switch low {
	case "inf", "infinity", "nan":
		f, _ := strconv.ParseFloat(string(t), 64)
		if s[0] == '-' {
			f = -f
		}
		if math.IsNaN(f) {
			// Python's float('nan') is the quiet NaN 0x7ff8000000000000
			// (Go's is ...0001); '-nan' sets the sign bit.
			bits := uint64(0x7ff8000000000000)
			if s[0] == '-' {
				bits |= 1 << 63
			}
			f = math.Float64frombits(bits)
		}
		return f, nil
	}
	// decimal: digits [. digits] [e [sign] digits]
	k := 0
	nd := 0
	for k < len(t) && t[k] >= '0' && t[k] <= '9' {
		k++
		nd++
	}
	if k < len(t) && t[k] == '.' {
		k++
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
			nd++
		}
	}
	if nd == 0 {
		return 0, bad
	}
	if k < len(t) && (t[k] == 'e' || t[k] == 'E') {
		k++
		if k < len(t) && (t[k] == '+' || t[k] == '-') {
			k++
		}
		ne := 0
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
			ne++
		}
		if ne == 0 {
			return 0, bad
		}
	}
	if k != len(t) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		if math.IsInf(f, 0) {
			return 0, errors.New("float text out of range")
		}
		if f == 0 {
			return f, nil
		}
		return 0, bad
	}
	return f, nil
}
