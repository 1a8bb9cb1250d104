package dis

import (
	"math"
	"math/big"
	"strconv"
	"unicode"
)

const hexDigits = "0123456789abcdef"

// decodeSP decodes one UTF-8 sequence of s at i, surrogates allowed (as
// Python's surrogatepass). Invalid bytes come back as themselves with
// size 1 and ok false (the reader never hands those over for str ops).
func decodeSP(s string, i int) (r rune, size int, ok bool) {
	c := s[i]
	switch {
	case c < 0x80:
		return rune(c), 1, true
	case c >= 0xC2 && c <= 0xDF && i+1 < len(s):
		return rune(c&0x1F)<<6 | rune(s[i+1]&0x3F), 2, true
	case c >= 0xE0 && c <= 0xEF && i+2 < len(s):
		return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3, true
	case c >= 0xF0 && c <= 0xF4 && i+3 < len(s):
		return rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4, true
	}
	return rune(c), 1, false
}

// pyPrintable is Python's str.isprintable for one code point: everything
// but the Other (C*) and Separator (Z*) categories, except the ASCII space.
// Go's unicode.IsPrint has the same definition (its Unicode version may
// differ from the Python that wrote the oracle for newly assigned code
// points).
func pyPrintable(r rune) bool {
	if r < 0x80 {
		return r >= 0x20 && r < 0x7F
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return false
	}
	return unicode.IsPrint(r)
}

// quoteFor picks the quote Python's repr uses: ' unless the text holds a '
// and no ".
func quoteFor(s string) byte {
	sq, dq := false, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			sq = true
		case '"':
			dq = true
		}
	}
	if sq && !dq {
		return '"'
	}
	return '\''
}

// appendStrRepr appends Python's repr of the str whose UTF-8 (surrogatepass)
// form is s.
func appendStrRepr(b []byte, s string) []byte {
	q := quoteFor(s)
	b = append(b, q)
	b = appendStrBody(b, s, q)
	return append(b, q)
}

func appendStrBody(b []byte, s string, q byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			if c == q || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
			i++
			continue
		}
		r, n, ok := decodeSP(s, i)
		i += n
		if !ok {
			// not reachable for reader output; show the byte
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		switch r {
		case '\t':
			b = append(b, '\\', 't')
			continue
		case '\n':
			b = append(b, '\\', 'n')
			continue
		case '\r':
			b = append(b, '\\', 'r')
			continue
		}
		switch {
		case pyPrintable(r):
			b = append(b, s[i-n:i]...)
		case r < 0x100:
			b = append(b, '\\', 'x', hexDigits[r>>4], hexDigits[r&15])
		case r < 0x10000:
			b = append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
		default:
			b = append(b, '\\', 'U')
			for sh := 28; sh >= 0; sh -= 4 {
				b = append(b, hexDigits[r>>uint(sh)&15])
			}
		}
	}
	return b
}

// appendLatin1Repr appends Python's repr of the str whose code points are
// the bytes of s (how pickletools shows BINSTRING and SHORT_BINSTRING).
func appendLatin1Repr(b []byte, s string) []byte {
	q := quoteFor(s)
	b = append(b, q)
	b = appendEscaped(b, s, q, true)
	return append(b, q)
}

// appendBytesRepr appends Python's repr of a bytes object.
func appendBytesRepr(b []byte, s string) []byte {
	q := quoteFor(s)
	b = append(b, 'b', q)
	b = appendBytesBody(b, s, q)
	return append(b, q)
}

func appendBytesBody(b []byte, s string, q byte) []byte { return appendEscaped(b, s, q, false) }

// appendEscaped escapes the bytes of s as Python's repr does: of bytes, or
// (latin1) of the str whose code points are those bytes, where printable
// Latin-1 letters and signs stay as they are (U+00AD SOFT HYPHEN is Cf).
func appendEscaped(b []byte, s string, q byte, latin1 bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q || c == '\\':
			b = append(b, '\\', c)
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c >= 0x20 && c < 0x7F:
			b = append(b, c)
		case latin1 && c >= 0xA1 && c != 0xAD:
			b = append(b, 0xC0|c>>6, 0x80|c&0x3F)
		default:
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return b
}

// appendFloatRepr appends Python's repr of a float: the shortest string
// that round-trips, in fixed notation when the decimal exponent is in
// [-4, 16) and in scientific notation otherwise ('1e+16', '1.5e-05').
func appendFloatRepr(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	if a := math.Abs(f); a >= 1e-4 && a < 1e16 {
		// fixed notation. The decimal exponent of the shortest digits is in
		// [-4, 16) exactly when the value is: 1e16 is a double (no double
		// below it has shortest digits reaching it), and every double
		// above float64(1e-4) has shortest digits above 1e-4, every double
		// below it digits below 1e-4.
		if a < 1<<53 && a == math.Trunc(a) {
			// an integer: its digits are the shortest ones (ulp <= 1)
			if f < 0 {
				b = append(b, '-')
			}
			b = strconv.AppendInt(b, int64(a), 10)
			return append(b, '.', '0')
		}
		if a < 1<<40 {
			if b, ok := appendShortFraction(b, f); ok {
				return b
			}
		}
		n := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, 64) // the shortest digits, laid out in fixed notation
		for _, c := range b[n:] {
			if c == '.' {
				return b
			}
		}
		return append(b, '.', '0')
	}
	return appendFloatGeneral(b, f)
}

// appendFloatGeneral is appendFloatRepr for any finite f, from strconv's
// shortest digits in scientific notation (the fast paths above are checked
// against it).
func appendFloatGeneral(b []byte, f float64) []byte {
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	k := 0
	for ; k < len(e) && e[k] != 'e'; k++ {
		if e[k] != '.' {
			digits[nd] = e[k]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[k+1:]))
	if neg {
		b = append(b, '-')
	}
	if exp >= -4 && exp < 16 {
		if exp < 0 {
			b = append(b, '0', '.')
			for i := 0; i < -exp-1; i++ {
				b = append(b, '0')
			}
			return append(b, digits[:nd]...)
		}
		// exp+1 digits before the point
		if nd <= exp+1 {
			b = append(b, digits[:nd]...)
			for i := nd; i < exp+1; i++ {
				b = append(b, '0')
			}
			return append(b, '.', '0')
		}
		b = append(b, digits[:exp+1]...)
		b = append(b, '.')
		return append(b, digits[exp+1:nd]...)
	}
	b = append(b, digits[0])
	if nd > 1 {
		b = append(b, '.')
		b = append(b, digits[1:nd]...)
	}
	b = append(b, 'e')
	if exp < 0 {
		b = append(b, '-')
		exp = -exp
	} else {
		b = append(b, '+')
	}
	if exp < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(exp), 10)
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6}

// appendShortFraction appends f (not an integer, |f| < 2^40) in fixed
// notation when its shortest digits have at most 6 after the point (0.125,
// 0.3, 12.75: what tables hold), without strconv's general search. At the
// first scale k where f*10^k is an integer m (both 10^k and m exact), m/10^k
// is correctly rounded (m < 2^50), so it round-trips when it gives f back; and when
// neither m-1 nor m+1 does, m is the only decimal with k fractional digits
// that gives f, so no shorter one exists (it would be one of them, with
// trailing zeros) and no other of the same length: it is the shortest and
// the closest, repr's choice. Otherwise ok is false and strconv decides.
func appendShortFraction(b []byte, f float64) ([]byte, bool) {
	for k := 1; k < len(pow10); k++ {
		y := f * pow10[k]
		if y != math.Trunc(y) {
			continue
		}
		if math.Abs(y) >= 1<<50 {
			// y-1 and y+1 exact, and y within 1/8 of f*10^k (so m is the
			// integer nearest to it)
			return b, false
		}
		p := pow10[k]
		if y/p != f || (y-1)/p == f || (y+1)/p == f {
			return b, false
		}
		m := int64(y)
		if m < 0 {
			b = append(b, '-')
			m = -m
		}
		for m%10 == 0 { // not reached for the first k, kept for safety
			m /= 10
			k--
		}
		var tmp [24]byte
		ds := strconv.AppendInt(tmp[:0], m, 10)
		if len(ds) <= k {
			b = append(b, '0', '.')
			for i := len(ds); i < k; i++ {
				b = append(b, '0')
			}
			return append(b, ds...), true
		}
		b = append(b, ds[:len(ds)-k]...)
		b = append(b, '.')
		return append(b, ds[len(ds)-k:]...), true
	}
	return b, false
}

// MaxDecimalBits is the size from which a big int is shown in hexadecimal
// instead of decimal (converting a 64 MiB LONG4 to decimal takes minutes).
const MaxDecimalBits = 1 << 20

// appendBig appends v in decimal, or as 0x... hexadecimal when it has more
// than MaxDecimalBits bits.
func appendBig(b []byte, v *big.Int) []byte {
	if v.BitLen() > MaxDecimalBits {
		if v.Sign() < 0 {
			b = append(b, '-')
		}
		b = append(b, '0', 'x')
		return new(big.Int).Abs(v).Append(b, 16)
	}
	return v.Append(b, 10)
}
