package trace

import (
	"bufio"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Style says how text output looks.
type Style struct {
	ASCII bool // branches in ASCII instead of box drawing
	Bytes bool // exact byte counts instead of human units
}

// UTF8Locale reports whether the environment's locale is UTF-8 (the first
// of LC_ALL, LC_CTYPE, LANG that is set decides; none set: UTF-8, as most
// terminals are).
func UTF8Locale() bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return true
}

// layout gives the tree glyphs and the width of the size column of a style.
func (sty Style) layout() (glyphs, int) {
	g, width := boxGlyphs, 10
	if sty.ASCII {
		g = asciiGlyphs
	}
	if sty.Bytes {
		width = 12
	}
	return g, width
}

type glyphs struct{ vert, tee, end, open, leaf, ref, cycle, more, times string }

var (
	boxGlyphs   = glyphs{"│", "├", "└", "┬", "─", "→", "↻", "…", "×"}
	asciiGlyphs = glyphs{"|", "|", "`", "+", "-", "->", "<cycle>", "...", "x"}
)

// maxIndent bounds the drawn nesting; deeper lines show their depth instead.
const maxIndent = 60

var (
	cCode  = color.New(color.FgCyan)
	cRef   = color.New(color.Faint)
	cCycle = color.New(color.FgYellow)
	cSize  = color.New(color.Bold)
	cPath  = color.New(color.FgGreen)
)

func (s Style) size(n int64) string { return string(s.appendSize(nil, n)) }

// appendSize appends size(n) to b: a line of the tree formats its sizes
// into the line, not into strings of their own (two million lines, two
// million times three strings).
func (s Style) appendSize(b []byte, n int64) []byte {
	if s.Bytes {
		return strconv.AppendInt(b, n, 10)
	}
	return appendHuman(b, n)
}

func pct(n, total int64) string { return string(appendPct(nil, n, total)) }

func appendPct(b []byte, n, total int64) []byte {
	if total <= 0 {
		return append(b, "100.0%"...)
	}
	x := float64(n) * 100 / float64(total)
	if n >= 0 && x < 1<<20 {
		// x = m·2^e: AppendFloat's tenths, in integers (every line of a
		// tree has one)
		bits := math.Float64bits(x)
		m, e := bits&(1<<52-1), int(bits>>52)
		if e == 0 {
			e = 1 // subnormal
		} else {
			m |= 1 << 52
		}
		e -= 1075 // x = m·2^e, e < 0 as x < 2^20
		if -e > 63 {
			// x < 2^-11: 0.0
			return append(b, "0.0%"...)
		}
		return append(appendTenths(b, m, uint(-e)), '%')
	}
	return append(strconv.AppendFloat(b, x, 'f', 1, 64), '%')
}

// padSize writes size(n) right-aligned in w columns; padPct pct(n, total)
// in 7.
func (l *lineBuf) padSize(sty Style, n int64, w int) {
	var tmp [32]byte
	l.padBytes(sty.appendSize(tmp[:0], n), w)
}

func (l *lineBuf) padPct(n, total int64) {
	var tmp [32]byte
	l.padBytes(appendPct(tmp[:0], n, total), 7)
}

func (l *lineBuf) padBytes(s []byte, w int) {
	for i := len(s); i < w; i++ {
		l.b = append(l.b, ' ')
	}
	l.b = append(l.b, s...)
}

// WriteText prints the tree from start, one line per item:
//
//	SIZE  PERCENT  SELF  BRANCHES CODE ROLE LABEL
//
// Lines are formatted as they are visited (nothing below the depth limit is
// formatted or built).
func (t *Tree) WriteText(w io.Writer, start Item, opt Options, sty Style) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	g, width := sty.layout()
	var line lineBuf
	var err error
	opt.noPaths = true // a line shows its role, never its path
	t.Walk(start, opt, func(v *Visit) {
		if err != nil {
			return
		}
		line.Reset()
		t.textLine(&line, v, g, width, sty)
		if sty.ASCII {
			_, err = bw.WriteString(asciiOnly(line.String()))
		} else {
			_, err = bw.Write(line.b)
		}
	}, nil)
	if err != nil {
		return err
	}
	return bw.Flush()
}

// textLine formats one line of the tree, with its newline.
func (t *Tree) textLine(line *lineBuf, v *Visit, g glyphs, width int, sty Style) {
	if v.Kind == ItemRef || (v.Kind == ItemElided && v.Size == 0) || (v.Kind == ItemPart && v.part.ref) {
		pad(line, "", width)
		line.WriteString("         ")
		pad(line, "", width)
	} else {
		line.padSize(sty, v.Size, width)
		line.WriteByte(' ')
		line.padPct(v.Size, t.Total)
		line.WriteByte(' ')
		line.padSize(sty, v.Self, width)
	}
	line.WriteString("  ")
	// branches
	if v.Depth > maxIndent {
		line.WriteString(g.more)
		line.WriteString("(depth ")
		line.b = strconv.AppendInt(line.b, int64(v.Depth), 10)
		line.WriteByte(')')
	}
	from := 1
	if v.Depth > maxIndent {
		from = v.Depth - maxIndent + 1
	}
	if from < v.Depth {
		line.branches(g, v.Last[from-1:v.Depth-1])
	}
	if v.Depth > 0 {
		if v.Last[v.Depth-1] {
			line.WriteString(g.end)
		} else {
			line.WriteString(g.tee)
		}
	}
	if v.Kids > 0 {
		line.WriteString(g.open)
	} else {
		line.WriteString(g.leaf)
	}
	line.WriteByte(' ')
	switch v.Kind {
	case ItemElided:
		line.WriteString(g.more)
		line.WriteByte(' ')
		if v.rest {
			restText(line, v.Item, sty)
		} else {
			line.b = strconv.AppendInt(line.b, int64(v.Count), 10)
			line.WriteString(" more")
		}
	case ItemRef:
		line.paint(cRef, g.ref)
		if v.Role != "" {
			line.WriteByte(' ')
			line.WriteString(v.Role)
			if v.Count > 1 {
				line.WriteString(g.more)
				line.WriteString(v.RoleEnd)
			}
		}
		line.WriteByte(' ')
		if color.NoColor {
			line.WriteByte('#')
			line.b = strconv.AppendInt(line.b, v.Stream.numOf(v.Node), 10)
			line.WriteByte(' ')
			var ok bool
			if _, line.b, ok = v.Stream.codeAppend(line.b, v.Node); !ok {
				_, l := v.Stream.describe(v.Node)
				line.WriteString(l)
			}
		} else {
			_, l := v.Stream.describe(v.Node)
			line.WriteString(cRef.Sprint("#" + itoa(v.Stream.numOf(v.Node)) + " " + l))
		}
		if v.Count > 1 {
			line.WriteString(" " + g.times + itoa(int64(v.Count)))
		}
		if v.Cycle {
			line.WriteByte(' ')
			line.paint(cCycle, g.cycle+" cycle")
		}
	default:
		// the commonest nodes' labels are made in line.lab, not as strings
		var code, label string
		fast := false
		if v.Kind == ItemNode && v.sunk == nil {
			code, line.lab, fast = v.Stream.codeAppend(line.lab[:0], v.Node)
		}
		if !fast {
			code, label = t.codeLabel(v.Item)
		}
		line.paint(cCode, code)
		if (v.Kind == ItemNode || (v.Kind == ItemPart && v.pl != nil && v.pl.up != nil)) && v.Role != "" {
			line.WriteByte(' ')
			line.paint(cPath, v.Role)
		}
		line.WriteByte(' ')
		if fast {
			line.b = append(line.b, line.lab...)
		} else {
			line.WriteString(label)
		}
		if v.Kind == ItemNode && v.sunk != nil {
			if v.sunk.memo {
				line.WriteString(" #")
				line.b = strconv.AppendInt(line.b, v.sunk.num, 10)
			}
		} else if v.Kind == ItemNode && v.Stream.Store.Has(v.Node, pickle.FlagMemo) {
			line.WriteString(" #")
			line.b = strconv.AppendInt(line.b, v.Stream.numOf(v.Node), 10)
		}
		if v.Truncated {
			line.WriteByte(' ')
			line.WriteString(g.more)
		}
	}
	line.WriteByte('\n')
}

// branches writes the branches of a line's ancestors, each last of its
// siblings or not: a space or a vertical bar each (runs of closed
// ancestors are runs of spaces, written at once).
func (l *lineBuf) branches(g glyphs, last []bool) {
	run := 0
	for _, c := range last {
		if c {
			run++
			continue
		}
		l.spaces(run)
		run = 0
		l.WriteString(g.vert)
	}
	l.spaces(run)
}

// lineBuf is a line being formatted, its buffer kept from line to line.
type lineBuf struct {
	b   []byte
	lab []byte // a label being made (textLine)
}

func (l *lineBuf) Reset() { l.b = l.b[:0] }

const spaces64 = "                                                                "

// spaces writes n spaces.
func (l *lineBuf) spaces(n int) {
	for ; n > len(spaces64); n -= len(spaces64) {
		l.b = append(l.b, spaces64...)
	}
	l.b = append(l.b, spaces64[:n]...)
}
func (l *lineBuf) WriteString(s string) { l.b = append(l.b, s...) }

// paint writes s in colour c, or as it is when colour is off (color.NoColor,
// which pk's --color sets): fatih/color's Sprint allocates even then.
func (l *lineBuf) paint(c *color.Color, s string) {
	if color.NoColor {
		l.WriteString(s)
		return
	}
	l.WriteString(c.Sprint(s))
}
func (l *lineBuf) WriteByte(c byte) error {
	l.b = append(l.b, c)
	return nil
}
func (l *lineBuf) String() string { return string(l.b) }

func pad(b *lineBuf, s string, w int) {
	for i := len(s); i < w; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(s)
}

// WriteTop prints the n largest objects with their paths.
func (t *Tree) WriteTop(w io.Writer, n int, sty Style) error {
	bw := bufio.NewWriter(w)
	width := 10
	if sty.Bytes {
		width = 12
	}
	var line lineBuf
	for i, it := range t.Top(n) {
		line.Reset()
		pad(&line, itoa(int64(i+1))+".", 4)
		line.WriteByte(' ')
		line.padSize(sty, it.Size, width)
		line.WriteByte(' ')
		line.padPct(it.Size, t.Total)
		line.WriteString(" self ")
		line.padSize(sty, it.Self, width)
		line.WriteString("  ")
		code, label := t.codeLabel(it)
		line.paint(cCode, code)
		line.WriteByte(' ')
		if it.pl == nil {
			line.paint(cPath, it.Role) // a container part
		} else {
			line.paint(cPath, it.Path())
		}
		line.WriteString("  ")
		line.WriteString(label)
		line.WriteByte('\n')
		if sty.ASCII {
			bw.WriteString(asciiOnly(line.String()))
		} else {
			bw.WriteString(line.String())
		}
	}
	return bw.Flush()
}

var asciiRepl = strings.NewReplacer("…", "...", "→", "->", "×", "x", "↻", "<cycle>")

// asciiOnly makes s ASCII: our marks become their ASCII forms, any other
// non-ASCII rune (from a label) a \u escape.
func asciiOnly(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			s = asciiRepl.Replace(s)
			var b strings.Builder
			for _, r := range s {
				if r < 0x80 {
					b.WriteRune(r)
				} else {
					q := strconv.QuoteRuneToASCII(r)
					b.WriteString(q[1 : len(q)-1])
				}
			}
			return b.String()
		}
	}
	return s
}
