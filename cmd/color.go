package cmd

import (
	"bytes"
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/pk-tools/pk/cmd/internal/colorenv"
)

// Colour is decided once, before a command runs, for every command alike:
//
//	--color=always  colour, whatever NO_COLOR, TERM or stdout say
//	--color=never   no colour
//	--color=auto    colour only when stdout is a terminal, NO_COLOR is unset
//	                or empty and TERM is not "dumb" (the default)
//
// and never with --json. Every colour object follows color.NoColor: NO_COLOR
// was taken out of the environment by cmd/internal/colorenv before any
// object was made (see there why that matters).
func setupColor(mode string, json bool) {
	switch {
	case json || mode == "never":
		color.NoColor = true
	case mode == "always":
		color.NoColor = false
	default:
		color.NoColor = colorenv.NoColor || os.Getenv("TERM") == "dumb" || !IsTerminal(os.Stdout)
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// disWriter rewrites pk dis's text listing line by line: opcode names in
// colour, offsets and comment lines dimmed (when colour is on), and the
// MARK indentation taken out (--indent 0). pkg/dis indents by at least one
// space a level; the listing's columns are "%5d: " CODE (padded to 4) " "
// INDENT NAME ...
type disWriter struct {
	w        io.Writer
	colour   bool
	noIndent bool
	line     []byte
	out      []byte
}

func newDisWriter(w io.Writer, colour, noIndent bool) io.Writer {
	if !colour && !noIndent {
		return w
	}
	return &disWriter{w: w, colour: colour, noIndent: noIndent}
}

func (d *disWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.line = append(d.line, p...)
			break
		}
		d.line = append(d.line, p[:i]...)
		d.out = d.rewrite(d.out, d.line)
		d.out = append(d.out, '\n')
		d.line = d.line[:0]
		p = p[i+1:]
		if len(d.out) > 64<<10 {
			if _, err := d.w.Write(d.out); err != nil {
				return 0, err
			}
			d.out = d.out[:0]
		}
	}
	if len(d.out) > 0 {
		if _, err := d.w.Write(d.out); err != nil {
			return 0, err
		}
		d.out = d.out[:0]
	}
	return n, nil
}

// flush writes a last line that has no newline.
func (d *disWriter) flush() {
	if len(d.line) > 0 {
		d.w.Write(d.rewrite(nil, d.line))
		d.line = d.line[:0]
	}
}

const (
	sgrDim   = "\x1b[2m"
	sgrBold  = "\x1b[1m"
	sgrCyan  = "\x1b[36m"
	sgrReset = "\x1b[0m"
)

func (d *disWriter) rewrite(out, l []byte) []byte {
	if len(l) > 0 && l[0] == '#' {
		if !d.colour {
			return append(out, l...)
		}
		sgr := sgrDim
		if bytes.HasPrefix(l, []byte("# stream")) || bytes.HasPrefix(l, []byte("# part")) || bytes.HasPrefix(l, []byte("# file")) {
			sgr = sgrBold
		}
		out = append(out, sgr...)
		out = append(out, l...)
		return append(out, sgrReset...)
	}
	// "%5d: " offset
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	j := i
	for j < len(l) && l[j] >= '0' && l[j] <= '9' {
		j++
	}
	if j == i || j+1 >= len(l) || l[j] != ':' || l[j+1] != ' ' {
		return append(out, l...)
	}
	pos := l[:j+1]
	rest := l[j+2:]
	// the code column: the opcode's byte as pickletools shows it, padded to 4
	k := bytes.IndexByte(rest, ' ')
	if k <= 0 || rest[0] == '@' {
		return d.plainOp(out, pos, rest, nil, nil)
	}
	code := rest[:k]
	m := k
	for m < len(rest) && rest[m] == ' ' {
		m++
	}
	e := m
	for e < len(rest) && (rest[e] >= 'A' && rest[e] <= 'Z' || rest[e] >= '0' && rest[e] <= '9' || rest[e] == '_') {
		e++
	}
	if e == m {
		return d.plainOp(out, pos, rest, nil, nil)
	}
	indent := rest[k:m]
	if d.noIndent {
		width := max(len(code), 4) + 1
		indent = []byte("     ")[:width-len(code)]
	}
	return d.plainOp(out, pos, code, indent, rest[m:e], rest[e:]...)
}

// plainOp writes an opcode line: pos, code, indent, name, then the rest.
func (d *disWriter) plainOp(out, pos, code, indent, name []byte, rest ...byte) []byte {
	if d.colour {
		out = append(out, sgrDim...)
		out = append(out, pos...)
		out = append(out, sgrReset...)
	} else {
		out = append(out, pos...)
	}
	out = append(out, ' ')
	out = append(out, code...)
	out = append(out, indent...)
	if d.colour && len(name) > 0 {
		out = append(out, sgrCyan...)
		out = append(out, name...)
		out = append(out, sgrReset...)
	} else {
		out = append(out, name...)
	}
	return append(out, rest...)
}
