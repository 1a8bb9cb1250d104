package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/dis"
	"github.com/pk-tools/pk/pkg/pickle"
)

// MaxRawOps bounds how many opcodes --raw reads from each side.
const MaxRawOps = 2_000_000

// RawLines returns the opcode listing used by --raw: one line per opcode,
// without offsets, memo writes (PUT, BINPUT, LONG_BINPUT, MEMOIZE), memo
// indices on GETs, and FRAME, so that only the story of the bytes remains.
// A payload streamed as a blob (1 MiB or more, of which the reader keeps
// only the first bytes) is compared whole: its line ends with its length
// and the SHA-256 of all its bytes.
func RawLines(rd *pickle.Reader) ([]string, error) {
	if rd.NewHash == nil {
		rd.NewHash = sha256.New
	}
	var lines []string
	stream := 0
	header := ""
	for len(lines) < MaxRawOps {
		o, err := rd.Next()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			if stream > 0 {
				// after a complete pickle: trailing bytes, as pickle.Parse reports them
				pe, _ := pickle.AsError(err)
				reason := err.Error()
				if pe != nil {
					reason = pe.Reason
				}
				return append(lines, "# trailing bytes after the last STOP: "+reason), nil
			}
			return lines, err
		}
		if header != "" {
			lines = append(lines, header)
			header = ""
		}
		switch o.Code {
		case pickle.PUT, pickle.BINPUT, pickle.LONG_BINPUT, pickle.MEMOIZE, pickle.FRAME:
			continue
		case pickle.GET, pickle.BINGET, pickle.LONG_BINGET:
			lines = append(lines, "GET")
			continue
		}
		arg := ""
		if o.Info().Arg != pickle.ArgNone {
			arg = rawArg(&o)
		}
		if arg != "" {
			lines = append(lines, o.Code.String()+" "+arg)
		} else {
			lines = append(lines, o.Code.String())
		}
		if o.Code == pickle.STOP {
			stream++
			if rd.AtEOF() {
				return lines, nil
			}
			header = fmt.Sprintf("# stream %d", stream)
		}
	}
	return append(lines, fmt.Sprintf("# (stopped after %d opcodes)", MaxRawOps)), nil
}

// rawArg is an opcode's argument in the --raw listing: as pickletools
// prints it, but a payload of LargeValue bytes or more shortened to its
// first bytes and followed by its length and the SHA-256 of all of it, so
// that two payloads differing anywhere differ in the listing.
func rawArg(o *pickle.Op) string {
	if o.Blob != nil {
		short := *o
		short.Blob, short.Str = nil, o.Blob.Prefix
		return dis.ArgRepr(&short) + fmt.Sprintf("... [%s bytes, sha256:%s]", Thousands(o.Blob.Len), hex.EncodeToString(o.Blob.Digest))
	}
	switch o.Info().Arg {
	case pickle.ArgString4, pickle.ArgBytes4, pickle.ArgBytes8, pickle.ArgBytearray8, pickle.ArgUnicode4, pickle.ArgUnicode8:
	default:
		return dis.ArgRepr(o)
	}
	if len(o.Str) < LargeValue {
		return dis.ArgRepr(o)
	}
	sum := sha256.Sum256([]byte(o.Str))
	short := *o
	cut := pickle.BlobPrefix
	if o.Info().Arg == pickle.ArgUnicode4 || o.Info().Arg == pickle.ArgUnicode8 {
		for cut > 0 && !utf8.RuneStart(o.Str[cut]) {
			cut--
		}
	}
	short.Str = o.Str[:cut]
	return dis.ArgRepr(&short) + fmt.Sprintf("... [%s bytes, sha256:%s]", Thousands(int64(len(o.Str))), hex.EncodeToString(sum[:]))
}

// WriteUnified writes a unified diff of a and b with ctx lines of context.
// It returns whether the listings differ.
func WriteUnified(w io.Writer, nameA, nameB string, a, b []string, ctx int) bool {
	ops := Align(a, b)
	// expand '~' into '-' '+'
	var ex []EditOp
	for _, o := range ops {
		if o.Kind == '~' {
			ex = append(ex, EditOp{'-', o.A, -1}, EditOp{'+', -1, o.B})
		} else {
			ex = append(ex, o)
		}
	}
	changed := false
	for _, o := range ex {
		if o.Kind != '=' {
			changed = true
			break
		}
	}
	if !changed {
		return false
	}
	red := color.New(color.FgRed).SprintFunc()
	green := color.New(color.FgGreen).SprintFunc()
	cyan := color.New(color.FgCyan).SprintFunc()
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	for i := 0; i < len(ex); {
		if ex[i].Kind == '=' {
			i++
			continue
		}
		start := i - ctx
		if start < 0 {
			start = 0
		}
		end := i
		for end < len(ex) {
			if ex[end].Kind != '=' {
				end++
				continue
			}
			run := end
			for run < len(ex) && ex[run].Kind == '=' {
				run++
			}
			if run-end > 2*ctx || run == len(ex) {
				end += min(ctx, run-end)
				break
			}
			end = run
		}
		aStart, bStart, aN, bN := -1, -1, 0, 0
		for _, o := range ex[start:end] {
			if o.A >= 0 {
				if aStart < 0 {
					aStart = o.A
				}
				aN++
			}
			if o.B >= 0 {
				if bStart < 0 {
					bStart = o.B
				}
				bN++
			}
		}
		fmt.Fprintln(w, cyan(fmt.Sprintf("@@ -%d,%d +%d,%d @@", aStart+1, aN, bStart+1, bN)))
		for _, o := range ex[start:end] {
			switch o.Kind {
			case '=':
				fmt.Fprintf(w, " %s\n", a[o.A])
			case '-':
				fmt.Fprintln(w, red("-"+a[o.A]))
			case '+':
				fmt.Fprintln(w, green("+"+b[o.B]))
			}
		}
		i = end
	}
	return true
}
