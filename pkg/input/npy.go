package input

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/pickle"
)

// MaxNpyHeader bounds the header of a .npy file (numpy's own loader refuses
// headers over 10000 bytes unless told otherwise).
const MaxNpyHeader = 1 << 20

// maxLiteralDepth bounds the nesting of the header's Python literal.
const maxLiteralDepth = 64

// readNpy reads a .npy file: magic, version, header (a Python dict literal
// with descr, fortran_order, shape), then the array's bytes, or a pickle
// when the dtype holds objects.
func readNpy(doc *Doc, br *bufio.Reader, size int64, where string, opt pickle.Options, lim *limitReader) error {
	rd := pickle.NewReader(br, size, doc.Path)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	fail := func(off int64, format string, args ...any) error {
		if le := lim.failure(); le != nil {
			return le
		}
		return &Error{File: doc.Path, Member: where, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	pre := rd.Peek(12)
	if len(pre) < 10 {
		return fail(0, ".npy file truncated inside its preamble")
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	var skip int64
	switch major {
	case 1:
		hlen, skip = int64(binary.LittleEndian.Uint16(pre[8:])), 10
	case 2, 3:
		if len(pre) < 12 {
			return fail(0, ".npy file truncated inside its preamble")
		}
		hlen, skip = int64(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return fail(6, ".npy format version %d.%d is not one numpy writes (1.0, 2.0, 3.0)", major, minor)
	}
	rd.Discard(skip)
	if hlen > MaxNpyHeader {
		return fail(8, ".npy header of %d bytes is over pk's limit of %d bytes", hlen, MaxNpyHeader)
	}
	hb := make([]byte, 0, hlen)
	for int64(len(hb)) < hlen {
		chunk := rd.Peek(int(min(hlen-int64(len(hb)), 64<<10)))
		if len(chunk) == 0 {
			return fail(rd.Offset(), ".npy file truncated inside its header")
		}
		hb = append(hb, chunk...)
		rd.Discard(int64(len(chunk)))
	}
	var header string
	if major == 3 {
		if !utf8.Valid(hb) {
			return fail(skip, ".npy 3.0 header is not valid UTF-8")
		}
		header = string(hb)
	} else {
		header = latin1(hb)
	}
	v, err := parseLiteral(header)
	if err != nil {
		return fail(skip, ".npy header: %v", err)
	}
	d, ok := v.(map[string]any)
	if !ok {
		return fail(skip, ".npy header is not a dict")
	}
	shapeV, ok1 := d["shape"].([]any)
	fo, ok2 := d["fortran_order"].(bool)
	descr, ok3 := d["descr"]
	if !ok1 || !ok2 || !ok3 || len(d) != 3 {
		return fail(skip, ".npy header must hold exactly descr, fortran_order and shape (numpy refuses otherwise)")
	}
	var shape []int64
	count := int64(1)
	for _, s := range shapeV {
		n, ok := s.(int64)
		if !ok || n < 0 {
			return fail(skip, ".npy shape holds %v, not a non-negative int", s)
		}
		hi, lo := bits.Mul64(uint64(count), uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return fail(skip, ".npy shape overflows")
		}
		count = int64(lo)
		shape = append(shape, n)
	}
	item, object, dstr, err := descrSize(descr, 0)
	if err != nil {
		return fail(skip, ".npy descr: %v", err)
	}
	order := "C"
	if fo {
		order = "F"
	}
	start := rd.Offset()
	if object {
		o := opt
		o.AfterBuild = nil
		f, err := pickle.ParseReader(rd, o)
		if err != nil {
			return located(doc.Path, where, lim, err)
		}
		if le := lim.failure(); le != nil {
			return le
		}
		doc.Parts = append(doc.Parts, Part{Name: "npy object array", Role: RoleObjects, Pickle: f, Of: -1})
		return nil
	}
	hi, lo := bits.Mul64(uint64(count), uint64(item))
	if hi != 0 || lo > math.MaxInt64 {
		return fail(skip, ".npy array size overflows")
	}
	n := int64(lo)
	if size >= 0 && n > size-start {
		return fail(start, ".npy array of %d bytes (%s, shape %v) exceeds the %d bytes left (truncated)", n, dstr, shape, size-start)
	}
	_, isStr := descr.(string)
	raw := &Raw{Offset: start, Where: where, DType: dstr, Shape: shape, Order: order, DTypeString: isStr, Descr: descr}
	if err := readRaw(rd, n, raw, opt.NewHash); err != nil {
		return fail(start, ".npy array of %d bytes: %v", n, err)
	}
	doc.Parts = append(doc.Parts, Part{Name: "npy array", Role: RoleArray, Raw: raw, Of: -1})
	if !rd.AtEOF() {
		t := &Raw{Offset: rd.Offset(), Where: where}
		readRaw(rd, math.MaxInt64, t, opt.NewHash)
		doc.Parts = append(doc.Parts, Part{Name: "trailing", Role: RoleTrailing, Raw: t, Of: -1})
		doc.Notes = append(doc.Notes, fmt.Sprintf("%d bytes after the array's data (numpy ignores them)", t.Len))
	}
	return lim.failure()
}

func latin1(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// descrSize returns the item size of a numpy descr (a type string or a
// list of (name, descr[, shape]) fields), whether it holds objects, and a
// label.
func descrSize(v any, depth int) (int64, bool, string, error) {
	if depth > maxLiteralDepth {
		return 0, false, "", fmt.Errorf("nested too deeply")
	}
	switch d := v.(type) {
	case string:
		s := d
		if i := strings.IndexByte(s, '['); i >= 0 { // datetime unit
			s = s[:i]
		}
		if len(s) < 2 {
			return 0, false, "", fmt.Errorf("type string %q", d)
		}
		if s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=' {
			s = s[1:]
		}
		if s == "" {
			return 0, false, "", fmt.Errorf("type string %q", d)
		}
		kind := s[0]
		if kind == 'O' {
			return 8, true, d, nil
		}
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return 0, false, "", fmt.Errorf("type string %q: no item size", d)
		}
		if kind == 'U' {
			n *= 4
		}
		return n, false, d, nil
	case []any:
		var total int64
		obj := false
		for _, f := range d {
			t, ok := f.([]any)
			if !ok || len(t) < 2 || len(t) > 3 {
				return 0, false, "", fmt.Errorf("field %v is not (name, descr[, shape])", f)
			}
			sz, o, _, err := descrSize(t[1], depth+1)
			if err != nil {
				return 0, false, "", err
			}
			obj = obj || o
			if len(t) == 3 {
				var shp []any
				switch s := t[2].(type) {
				case []any:
					shp = s
				case int64:
					shp = []any{s}
				default:
					return 0, false, "", fmt.Errorf("field shape %v", t[2])
				}
				for _, x := range shp {
					k, ok := x.(int64)
					if !ok || k < 0 {
						return 0, false, "", fmt.Errorf("field shape %v", t[2])
					}
					hi, lo := bits.Mul64(uint64(sz), uint64(k))
					if hi != 0 || lo > math.MaxInt32 {
						return 0, false, "", fmt.Errorf("field too large")
					}
					sz = int64(lo)
				}
			}
			total += sz
			if total > math.MaxInt32 {
				return 0, false, "", fmt.Errorf("structured dtype too large")
			}
		}
		return total, obj, "|V" + strconv.FormatInt(total, 10), nil
	}
	return 0, false, "", fmt.Errorf("descr %v is neither a str nor a list", v)
}

// parseLiteral parses the Python literal of a .npy header: dicts, lists,
// tuples (both as []any), str, int, True/False/None. Depth is bounded.
func parseLiteral(s string) (any, error) {
	p := &litParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the literal at byte %d", p.s[p.i:min(p.i+10, len(p.s))], p.i)
	}
	return v, nil
}

type litParser struct {
	s string
	i int
}

func (p *litParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *litParser) errf(format string, args ...any) error {
	return fmt.Errorf("byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *litParser) value(depth int) (any, error) {
	if depth > maxLiteralDepth {
		return nil, p.errf("nested too deeply")
	}
	p.ws()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		m := map[string]any{}
		for {
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return m, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, p.errf("dict key is not a str")
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errf("expected ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[ks] = v
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return m, nil
			}
			return nil, p.errf("expected ',' or '}'")
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		out := []any{}
		for {
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				return out, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				return out, nil
			}
			return nil, p.errf("expected ',' or %q", end)
		}
	case c == '\'' || c == '"':
		p.i++
		var sb strings.Builder
		for p.i < len(p.s) && p.s[p.i] != c {
			if p.s[p.i] == '\\' && p.i+1 < len(p.s) {
				if err := p.escape(&sb); err != nil {
					return nil, err
				}
				continue
			}
			sb.WriteByte(p.s[p.i])
			p.i++
		}
		if p.i >= len(p.s) {
			return nil, p.errf("unterminated string")
		}
		p.i++
		return sb.String(), nil
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i
		if c == '-' {
			p.i++
		}
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long
			n, err := strconv.ParseInt(p.s[j:p.i], 10, 64)
			p.i++
			return n, err
		}
		n, err := strconv.ParseInt(p.s[j:p.i], 10, 64)
		if err != nil {
			return nil, p.errf("bad int %q", p.s[j:p.i])
		}
		return n, nil
	default:
		for _, w := range []struct {
			s string
			v any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if strings.HasPrefix(p.s[p.i:], w.s) {
				p.i += len(w.s)
				return w.v, nil
			}
		}
		return nil, p.errf("unexpected %q", c)
	}
}

// escape decodes the backslash escape at p.i into sb, as Python reads it
// in a str literal (numpy's header is one: ast.literal_eval): \\ \' \" \a
// \b \f \n \r \t \v, \ooo, \xhh, \uhhhh, \Uhhhhhhhh, and a backslash
// before a newline, which continues the line. Any other keeps its
// backslash, as Python keeps it.
func (p *litParser) escape(sb *strings.Builder) error {
	p.i++ // the backslash
	c := p.s[p.i]
	p.i++
	if r, ok := map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'n': '\n', 'r': '\r', 't': '\t', 'v': 11}[c]; ok {
		sb.WriteByte(r)
		return nil
	}
	hex := func(n int) (rune, error) {
		if p.i+n > len(p.s) {
			return 0, p.errf("truncated \\%c escape", c)
		}
		v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
		if err != nil {
			return 0, p.errf("bad \\%c escape %q", c, p.s[p.i:p.i+n])
		}
		p.i += n
		return rune(v), nil
	}
	switch {
	case c == '\n':
		return nil
	case c >= '0' && c <= '7':
		v := int(c - '0')
		for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
			v = v*8 + int(p.s[p.i]-'0')
			p.i++
		}
		sb.WriteRune(rune(v))
	case c == 'x' || c == 'u' || c == 'U':
		r, err := hex(map[byte]int{'x': 2, 'u': 4, 'U': 8}[c])
		if err != nil {
			return err
		}
		if r > 0x10FFFF {
			return p.errf("escape beyond U+10FFFF")
		}
		sb.WriteRune(r)
	default:
		sb.WriteByte('\\')
		sb.WriteByte(c)
	}
	return nil
}
