package dis

import (
	"encoding/binary"
	"math/bits"

	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// A text line is written straight into the output buffer at an index,
// after making room for its fixed parts once (lineRoom), instead of by
// appends: the short pieces that every line repeats (the opcode column,
// the name, "(memo[") are stored as fixed-size arrays, each copied with one
// or two moves, and numbers are written in place, two digits a step.

// lineRoom is the room made before a line, besides its indentation: the
// numbers (20 bytes and a sign each), the fixed pieces (8 to 32 bytes, each
// stored whole), a short str argument written in place (up to 257 bytes)
// and the notes.
const lineRoom = 512

// piece is a string of at most 32 bytes kept in an array, so that copying
// it is one fixed-size store (the bytes after n are spaces, written and
// then overwritten by what follows).
type piece struct {
	b [32]byte
	n int
}

func mkPiece(s string) piece {
	var p piece
	for i := range p.b {
		p.b[i] = ' '
	}
	p.n = copy(p.b[:], s)
	return p
}

var spaces32 = mkPiece("").b

// lineTable holds, per opcode byte, the pieces of a line that depend only
// on the opcode.
type lineTable struct {
	code    [256][8]byte // repr of the opcode byte padded as "%-4s " (always 5 bytes)
	name    [256]piece   // the name
	nameArg [256]piece   // the name padded to 10 columns (before an argument or a note)
	memoMid [256]piece   // "] = NAME at " (the memo note of a slot built by the opcode)
}

var lines = func() *lineTable {
	t := &lineTable{}
	for c := 0; c < 256; c++ {
		s := codeRepr(byte(c))
		for len(s) < 4 {
			s += " "
		}
		copy(t.code[c][:], s+"    ")
		name := pickle.Opcode(c).String()
		t.memoMid[c] = mkPiece("] = " + name + " at ")
		if pickle.Lookup(byte(c)) == nil {
			continue
		}
		t.name[c] = mkPiece(name)
		for len(name) < 10 {
			name += " "
		}
		t.nameArg[c] = mkPiece(name)
	}
	return t
}()

// pairs[k] is the two decimal digits of k (0-99) as a little-endian
// uint16: tens in the low byte.
var pairs = func() (t [100]uint16) {
	for k := range t {
		t[k] = uint16('0'+k/10) | uint16('0'+k%10)<<8
	}
	return t
}()

var pow10u = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decLen is the number of decimal digits of u (1 for 0).
func decLen(u uint64) int {
	t := (bits.Len64(u|1) * 1233) >> 12 // floor(log10(2^bits)): t or t+1 digits
	if u >= pow10u[t] {
		return t + 1
	}
	return max(t, 1)
}

// digits8 returns the 8 decimal digits of u < 10^8, leading zeros
// included, as the little-endian word of their ASCII bytes. The four pairs
// are computed independently of each other.
func digits8(u uint64) uint64 {
	hi := u / 10000
	lo := u - hi*10000
	h1 := hi / 100
	l1 := lo / 100
	return uint64(pairs[h1]) | uint64(pairs[hi-h1*100])<<16 |
		uint64(pairs[l1])<<32 | uint64(pairs[lo-l1*100])<<48
}

// putUint writes u in decimal at b[n:] (which has room for 24 bytes: up to
// 8 bytes after the digits may be overwritten) and returns the index after
// the digits.
func putUint(b []byte, n int, u uint64) int {
	if u < 1e8 {
		nd := decLen(u)
		binary.LittleEndian.PutUint64(b[n:], digits8(u)>>(8*(8-nd)))
		return n + nd
	}
	if u < 1e16 {
		hi := u / 1e8
		nd := decLen(hi)
		binary.LittleEndian.PutUint64(b[n:], digits8(hi)>>(8*(8-nd)))
		binary.LittleEndian.PutUint64(b[n+nd:], digits8(u-hi*1e8))
		return n + nd + 8
	}
	hi := u / 1e16 // 1 to 1844
	nd := decLen(hi)
	mid := u - hi*1e16
	binary.LittleEndian.PutUint64(b[n:], digits8(hi)>>(8*(8-nd)))
	binary.LittleEndian.PutUint64(b[n+nd:], digits8(mid/1e8))
	binary.LittleEndian.PutUint64(b[n+nd+8:], digits8(mid%1e8))
	return n + nd + 16
}

// putInt is putUint for a signed value (room for 21 bytes).
func putInt(b []byte, n int, v int64) int {
	u := uint64(v)
	if v < 0 {
		b[n] = '-'
		n++
		u = -u
	}
	return putUint(b, n, u)
}

// putOffset writes pos as "%5d: " (pos >= 0) at b[n:].
func putOffset(b []byte, n int, pos int64) int {
	if pos < 0 {
		return n + copy(b[n:], appendPos(nil, pos))
	}
	u := uint64(pos)
	if u < 1e5 {
		// five columns: the 5-nd leading '0's (0x30) become spaces (0x20),
		// then ": "
		w := digits8(u) >> 24
		w &^= 0x1010101010 & (1<<(8*(5-decLen(u))) - 1)
		binary.LittleEndian.PutUint64(b[n:], w|0x3A<<40|0x20<<48)
		return n + 7
	}
	n = putUint(b, n, u)
	b[n], b[n+1] = ':', ' '
	return n + 2
}

// putString writes s at b[n:] (which has room for it).
func putString(b []byte, n int, s string) int { return n + copy(b[n:], s) }

// textLine writes the line of one opcode as pickletools does: "%5d: ",
// the opcode byte's repr as "%-4s ", the indentation, the name, and when
// there is an argument or a note the name padded to 10 columns, then
// " repr(arg)", " (MARK at N)" and pk's memo note or pickletools' "(as N)".
func (d *disassembler) textLine(lvl int, o *pickle.Op, info *pickle.OpInfo, markPos, memoIdx, memoOrigin int64) {
	b := grow.Room(d.out, d.lineRoom)
	n := len(b)
	b = b[:cap(b)]
	c := o.Code
	n = putOffset(b, n, o.Offset)
	*(*[8]byte)(b[n:]) = lines.code[c]
	n += 5
	if lvl > MaxIndentLevels {
		lvl = MaxIndentLevels
	}
	if w := lvl * d.opt.Indent; w > 0 {
		if w <= 32 {
			*(*[32]byte)(b[n:]) = spaces32
		} else {
			copy(b[n:], d.indent[:w])
		}
		n += w
	}
	hasArg := info.Arg != pickle.ArgNone
	memoNote := !d.opt.Pickletools && memoOrigin >= 0
	if !hasArg && markPos == -2 && c != pickle.MEMOIZE && !memoNote {
		p := &lines.name[c]
		*(*[32]byte)(b[n:]) = p.b
		b[n+p.n] = '\n'
		d.out = b[:n+p.n+1]
		return
	}
	p := &lines.nameArg[c]
	*(*[32]byte)(b[n:]) = p.b
	n += p.n
	if hasArg {
		b[n] = ' '
		n++
		n, b = d.putArg(b, n, o)
	}
	if markPos != -2 {
		*(*[16]byte)(b[n:]) = [16]byte{' ', '(', 'M', 'A', 'R', 'K', ' ', 'a', 't', ' '}
		n = putInt(b, n+10, markPos)
		b[n] = ')'
		n++
	}
	if c == pickle.MEMOIZE && d.opt.Pickletools {
		*(*[8]byte)(b[n:]) = [8]byte{' ', '(', 'a', 's', ' '}
		n = putInt(b, n+5, memoIdx)
		b[n] = ')'
		n++
	}
	if memoNote {
		*(*[8]byte)(b[n:]) = [8]byte{' ', '(', 'm', 'e', 'm', 'o', '['}
		n = putInt(b, n+7, memoIdx)
		m := &lines.memoMid[memoOrigin&0xFF]
		*(*[32]byte)(b[n:]) = m.b
		n = putInt(b, n+m.n, memoOrigin>>8)
		b[n] = ')'
		n++
	}
	b[n] = '\n'
	d.out = b[:n+1]
}

// putArg writes the argument's repr at b[n:] and returns the index after it
// and the buffer, with room for d.lineRoom more bytes (a long argument is
// appended, which may move the buffer).
func (d *disassembler) putArg(b []byte, n int, o *pickle.Op) (int, []byte) {
	switch o.Info().Arg {
	case pickle.ArgUint1, pickle.ArgUint2, pickle.ArgInt4, pickle.ArgUint4:
		// the fixed-width ints, never bool or big
		return putInt(b, n, o.Int), b
	case pickle.ArgUnicode1:
		if o.Blob == nil {
			if m, ok := putASCIIRepr(b, n, o.Str); ok {
				return m, b
			}
		}
	}
	out := appendArgRepr(b[:n], o)
	out = grow.Room(out, d.lineRoom)
	return len(out), out[:cap(out)]
}

// putASCIIRepr writes repr(s) at b[n:] when s (at most 255 bytes) is
// printable ASCII without a quote or a backslash, the common case, where
// repr is s in single quotes; ok is false otherwise.
func putASCIIRepr(b []byte, n int, s string) (int, bool) {
	if len(s) > 255 {
		return n, false
	}
	b = b[n : n+len(s)+2]
	b[0] = '\''
	t := b[1 : 1+len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7F || c == '\'' || c == '\\' {
			return n, false
		}
		t[i] = c
	}
	b[len(s)+1] = '\''
	return n + len(s) + 2, true
}
