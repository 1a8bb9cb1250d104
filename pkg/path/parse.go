package path

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StepKind says what a step of a parsed path is.
type StepKind uint8

const (
	SHead       StepKind = iota // root, stream[i], part['name'], trailing (Name; I for a stream)
	SAttr                       // .name (Name)
	SKey                        // [key] (Value; a tuple for [1, 2])
	SSlice                      // [i:j] (I, J)
	SSet                        // {v} (Value)
	SSetPos                     // {#i} (I)
	SCall                       // ()
	SPseudo                     // <word> or <word i> (Name; I, -1 when none)
	SPseudoSpan                 // <word i:j> (Name, I, J)
)

// Step is one step of a parsed path.
type Step struct {
	Kind  StepKind
	Name  string
	Value Value
	I, J  int
}

// String spells the step as the formatters do.
func (s Step) String() string {
	switch s.Kind {
	case SHead:
		switch s.Name {
		case "stream":
			return Stream(s.I)
		case "part":
			return Part(s.Value.Str)
		}
		return s.Name
	case SAttr:
		return "." + s.Name
	case SKey:
		return Key(s.Value)
	case SSlice:
		return Slice(s.I, s.J)
	case SSet:
		return SetElem(s.Value)
	case SSetPos:
		return SetPos(s.I)
	case SCall:
		return "()"
	case SPseudo:
		return Pseudo(s.Name, s.I)
	case SPseudoSpan:
		return PseudoSpan(s.Name, s.I, s.J)
	}
	return ""
}

// Path is a parsed path.
type Path []Step

// String spells the path in the one form every command prints.
func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteString(s.String())
	}
	return b.String()
}

// Under reports whether the printed path s is the path p spells (canon,
// from p.String()) or a path below it: s continues canon at a step.
func Under(s, canon string) bool {
	if !strings.HasPrefix(s, canon) {
		return false
	}
	return len(s) == len(canon) || StepStart(s[len(canon)])
}

// StepStart reports whether a step of a printed path can start with c:
// a path continues another at a step, never inside one.
func StepStart(c byte) bool { return strings.IndexByte(".[{(<", c) >= 0 }

// Error is a malformed path: the position (0-based byte offset) where it
// stops being a path, and why.
type Error struct {
	Path   string
	Pos    int
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("malformed path %q at character %d: %s", e.Path, e.Pos+1, e.Reason)
}

// Parse reads a path in the grammar of the package comment.
func Parse(s string) (Path, error) {
	p := &parser{s: s}
	out, err := p.path()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Canonical parses s and spells it back: the form the commands print.
func Canonical(s string) (string, error) {
	p, err := Parse(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

type parser struct {
	s string
	i int
}

func (p *parser) fail(format string, args ...any) error {
	return &Error{Path: p.s, Pos: p.i, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) eof() bool { return p.i >= len(p.s) }

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) lit(t string) bool {
	if strings.HasPrefix(p.s[p.i:], t) {
		p.i += len(t)
		return true
	}
	return false
}

func (p *parser) expect(t string) error {
	if !p.lit(t) {
		if p.eof() {
			return p.fail("expected %q, the path ends", t)
		}
		return p.fail("expected %q, found %q", t, p.s[p.i:p.i+1])
	}
	return nil
}

func (p *parser) spaces() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) ident() string {
	j := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.i > j && c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[j:p.i]
}

func (p *parser) path() (Path, error) {
	if strings.TrimSpace(p.s) == "" {
		return nil, p.fail("empty path (paths start with root, stream[i], part['name'] or trailing)")
	}
	head, err := p.head()
	if err != nil {
		return nil, err
	}
	out := Path{head}
	for !p.eof() {
		st, err := p.step()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (p *parser) head() (Step, error) {
	start := p.i
	name := p.ident()
	switch name {
	case "root", "trailing":
		return Step{Kind: SHead, Name: name}, nil
	case "stream":
		if err := p.expect("["); err != nil {
			return Step{}, err
		}
		n, err := p.int()
		if err != nil {
			return Step{}, err
		}
		if n < 0 {
			p.i = start
			return Step{}, p.fail("a stream's index is 0 or more")
		}
		if err := p.expect("]"); err != nil {
			return Step{}, err
		}
		return Step{Kind: SHead, Name: name, I: n}, nil
	case "part":
		if err := p.expect("["); err != nil {
			return Step{}, err
		}
		at := p.i
		v, err := p.value()
		if err != nil {
			return Step{}, err
		}
		if v.Kind != KStr {
			p.i = at
			return Step{}, p.fail("a part is named by a str, as part['archive/data/0']")
		}
		if err := p.expect("]"); err != nil {
			return Step{}, err
		}
		return Step{Kind: SHead, Name: name, Value: v}, nil
	}
	p.i = start
	return Step{}, p.fail("a path starts with root, stream[i], part['name'] or trailing")
}

func (p *parser) int() (int, error) {
	j := p.i
	if p.peek() == '-' {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	n, err := strconv.Atoi(p.s[j:p.i])
	if err != nil {
		p.i = j
		return 0, p.fail("expected an integer")
	}
	return n, nil
}

func (p *parser) step() (Step, error) {
	switch c := p.peek(); c {
	case '.':
		p.i++
		name := p.ident()
		if name == "" {
			return Step{}, p.fail("expected an attribute name after '.'")
		}
		return Step{Kind: SAttr, Name: name}, nil
	case '(':
		p.i++
		if err := p.expect(")"); err != nil {
			return Step{}, err
		}
		return Step{Kind: SCall}, nil
	case '<':
		p.i++
		name := p.word()
		if name == "" {
			return Step{}, p.fail("expected a word after '<', as <popped 0>")
		}
		st := Step{Kind: SPseudo, Name: name, I: -1}
		if p.lit(" ") {
			n, err := p.int()
			if err != nil {
				return Step{}, err
			}
			st.I = n
			if p.lit(":") {
				m, err := p.int()
				if err != nil {
					return Step{}, err
				}
				st.Kind, st.J = SPseudoSpan, m
			}
		}
		if err := p.expect(">"); err != nil {
			return Step{}, err
		}
		return st, nil
	case '{':
		p.i++
		if p.lit("#") {
			n, err := p.int()
			if err != nil {
				return Step{}, err
			}
			if err := p.expect("}"); err != nil {
				return Step{}, err
			}
			return Step{Kind: SSetPos, I: n}, nil
		}
		p.spaces()
		v, err := p.value()
		if err != nil {
			return Step{}, err
		}
		p.spaces()
		if err := p.expect("}"); err != nil {
			return Step{}, err
		}
		return Step{Kind: SSet, Value: v}, nil
	case '[':
		open := p.i
		p.i++
		p.spaces()
		// a slice: [i:j]
		save := p.i
		if c := p.peek(); c == '-' || c >= '0' && c <= '9' {
			if n, err := p.int(); err == nil && p.lit(":") {
				m, err := p.int()
				if err != nil {
					return Step{}, err
				}
				if err := p.expect("]"); err != nil {
					return Step{}, err
				}
				return Step{Kind: SSlice, I: n, J: m}, nil
			}
			p.i = save
		}
		items, trailingComma, err := p.items(']')
		if err != nil {
			return Step{}, err
		}
		if len(items) == 0 {
			p.i = open
			return Step{}, p.fail("empty subscript []")
		}
		v := items[0]
		if len(items) > 1 || trailingComma {
			v = Tuple(items...)
		}
		return Step{Kind: SKey, Value: v}, nil
	case ':':
		return Step{}, p.fail("':' is not a step (streams are stream[i], parts part['name'])")
	}
	return Step{}, p.fail("expected '.', '[', '{', '(' or '<', found %q", p.s[p.i:p.i+1])
}

func (p *parser) word() string {
	j := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[j:p.i]
}

// items reads literals separated by commas up to close (consumed).
func (p *parser) items(close byte) ([]Value, bool, error) {
	var out []Value
	comma := false
	for {
		p.spaces()
		if p.peek() == close {
			p.i++
			return out, comma, nil
		}
		if len(out) > 0 && !comma {
			if p.eof() {
				return nil, false, p.fail("expected %q, the path ends", string(close))
			}
			return nil, false, p.fail("expected ',' or %q", string(close))
		}
		v, err := p.value()
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
		p.spaces()
		comma = p.lit(",")
	}
}

// value reads one literal.
func (p *parser) value() (Value, error) {
	p.spaces()
	if p.eof() {
		return Value{}, p.fail("expected a literal, the path ends")
	}
	start := p.i
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		s, err := p.str(false)
		return Str(s), err
	case (c == 'b' || c == 'B') && p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"'):
		p.i++
		s, err := p.str(true)
		return Bytes(s), err
	case c == '(':
		p.i++
		items, comma, err := p.items(')')
		if err != nil {
			return Value{}, err
		}
		if len(items) == 1 && !comma {
			return items[0], nil // (x) is x
		}
		return Tuple(items...), nil
	case c == '<':
		if !p.lit("<key ") {
			return Value{}, p.fail("expected a literal (<key i> for a key that is none)")
		}
		n, err := p.int()
		if err != nil {
			return Value{}, err
		}
		if err := p.expect(">"); err != nil {
			return Value{}, err
		}
		return Value{Kind: KOpaque, Int: big.NewInt(int64(n))}, nil
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	}
	name := p.ident()
	switch name {
	case "None":
		return None(), nil
	case "True":
		return Bool(true), nil
	case "False":
		return Bool(false), nil
	case "float":
		if err := p.expect("("); err != nil {
			return Value{}, err
		}
		at := p.i
		s, err := p.str(false)
		if err != nil {
			return Value{}, err
		}
		if err := p.expect(")"); err != nil {
			return Value{}, err
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			p.i = at
			return Value{}, p.fail("float(%q) is not a float", s)
		}
		return Float(f), nil
	}
	p.i = start
	return Value{}, p.fail("expected a literal (a number, 'str', b'bytes', None, True, False or a tuple)")
}

func (p *parser) number() (Value, error) {
	start := p.i
	if c := p.peek(); c == '-' || c == '+' {
		p.i++
	}
	isFloat := false
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c >= '0' && c <= '9' || c == '_':
		case c == '.' || c == 'e' || c == 'E':
			isFloat = true
		case (c == '-' || c == '+') && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E'):
		case c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'b' || c == 'B' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
		default:
			goto done
		}
		p.i++
	}
done:
	text := p.s[start:p.i]
	if isFloat && !strings.ContainsAny(text, "xXoObB") {
		f, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			p.i = start
			return Value{}, p.fail("%q is not a number", text)
		}
		return Float(f), nil
	}
	n, ok := new(big.Int).SetString(strings.ReplaceAll(text, "_", ""), 0)
	if !ok {
		p.i = start
		return Value{}, p.fail("%q is not a number", text)
	}
	return BigInt(n), nil
}

// str reads a quoted literal at p.i (the quote), as Python reads it.
func (p *parser) str(bytes bool) (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.fail("expected a quote")
	}
	start := p.i
	p.i++
	var b []byte
	for {
		if p.eof() {
			p.i = start
			return "", p.fail("unterminated string")
		}
		c := p.s[p.i]
		if c == q {
			p.i++
			return string(b), nil
		}
		if c != '\\' {
			if c >= 0x80 {
				if bytes {
					return "", p.fail("bytes can only contain ASCII characters")
				}
				r, n := utf8.DecodeRuneInString(p.s[p.i:])
				if r == utf8.RuneError && n == 1 {
					// a lone surrogate in its 3-byte form, else not UTF-8
					if !(c == 0xED && p.i+2 < len(p.s) && p.s[p.i+1] >= 0xA0 && p.s[p.i+1] <= 0xBF && p.s[p.i+2] >= 0x80 && p.s[p.i+2] <= 0xBF) {
						return "", p.fail("the string is not UTF-8")
					}
					n = 3
				}
				b = append(b, p.s[p.i:p.i+n]...)
				p.i += n
				continue
			}
			b = append(b, c)
			p.i++
			continue
		}
		esc := p.i
		p.i++
		if p.eof() {
			p.i = start
			return "", p.fail("unterminated string")
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '\\', '\'', '"':
			b = append(b, e)
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'a':
			b = append(b, 7)
		case 'b':
			b = append(b, 8)
		case 'f':
			b = append(b, 12)
		case 'v':
			b = append(b, 11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
				v = v*8 + int(p.s[p.i]-'0')
				p.i++
			}
			b = p.appendCode(b, rune(v), bytes)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if bytes && e != 'x' {
				b = append(b, '\\', e) // not an escape in bytes
				continue
			}
			if p.i+n > len(p.s) {
				p.i = esc
				return "", p.fail("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || v > 0x10FFFF {
				p.i = esc
				return "", p.fail("bad \\%c escape", e)
			}
			p.i += n
			b = p.appendCode(b, rune(v), bytes)
		default:
			if e >= 0x80 {
				// a backslash before a non-ASCII character: kept, and the
				// character read (and checked as UTF-8) as any other
				b = append(b, '\\')
				p.i--
				continue
			}
			b = append(b, '\\', e) // Python keeps unknown escapes
		}
	}
}

// appendCode appends a code point: a byte in bytes, UTF-8 in str (a lone
// surrogate in the 3-byte form pkg/pickle keeps it in).
func (p *parser) appendCode(b []byte, r rune, bytes bool) []byte {
	if bytes {
		return append(b, byte(r))
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return utf8.AppendRune(b, r)
}
