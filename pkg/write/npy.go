package write

// The canonical .npy file of a .npy file of plain data (docs/pk-canon.md,
// Containers): pk-canon/2 reads such a file as a pickle whose root is its
// array (docs/canonical-form-2.md §2.2, npy-array): descr, shape, memory
// order and element bytes. pk canon writes it back as the .npy file
// numpy.save writes for that array (numpy 1.24's numpy/lib/format.py):
//
//	\x93NUMPY major minor  header length (2 bytes at 1.0, 4 at 2.0 and 3.0)
//	{'descr': D, 'fortran_order': B, 'shape': S, }  spaces  \n
//	element bytes
//
// D is the canonical descr as numpy spells a dtype in a header (dtype.str, or
// dtype.descr's list for a structured dtype, padding as ('', '|Vn') fields),
// B is True exactly when the canonical order is F, S the shape as a Python
// tuple; the header is padded as numpy pads it (21 spaces less the digits
// of the axis that may grow, then spaces and a newline up to a multiple of 64
// bytes, preamble included), in the lowest version that holds it (1.0; 2.0
// for a header of 64 KiB or more; 3.0 when it is not latin-1). Bytes after the
// array's data (numpy ignores them; pk hash covers them) are copied.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
)

// npyAlign is numpy's ARRAY_ALIGN; npyGrowthDigits its GROWTH_AXIS_MAX_DIGITS.
const (
	npyAlign        = 64
	npyGrowthDigits = 21
)

// npyPlain reports whether doc is a .npy file of plain data (its array part,
// perhaps trailing bytes), compressed or not.
func npyPlain(doc *input.Doc) bool {
	base := strings.TrimPrefix(doc.Format, doc.Compression+"+")
	if base != "npy" || len(doc.Parts) == 0 || doc.Parts[0].Role != input.RoleArray || doc.Parts[0].Raw == nil {
		return false
	}
	for _, p := range doc.Parts[1:] {
		if p.Role != input.RoleTrailing || p.Raw == nil {
			return false
		}
	}
	return true
}

// npyFile writes the canonical .npy file of doc (npyPlain), compressed as the
// input was; data is the input's bytes when kept (stdin, -l). The array's
// data is copied from the input to the output, never held twice: into one
// buffer of the output's size, or, above SpoolAbove bytes, streamed to a
// temporary file (Result.Data nil). The output's pk hash, as pk hash reads
// the file written, is checked against the input's.
func npyFile(path string, data []byte, doc *input.Doc, copt canon.Options) (*Result, error) {
	raw := doc.Parts[0].Raw
	a, ok := canon.NpyArray(raw)
	if !ok {
		return nil, &Error{File: path, Offset: -1, Reason: fmt.Sprintf("a NumPy .npy file whose header descr %s pk-canon/2 does not read as an array's (docs/canonical-form-2.md §2.1): pk canon writes only the .npy files it reads as arrays", pyRepr(raw.Descr))}
	}
	header, err := npyHeader(a.Descr, a.Order == 'F', a.Shape)
	if err != nil {
		return nil, &Error{File: path, Offset: -1, Reason: err.Error()}
	}
	// the element bytes and any trailing bytes, copied from the input
	n := raw.Len
	for _, p := range doc.Parts[1:] {
		if p.Raw.Offset != raw.Offset+n {
			return nil, &Error{File: path, Offset: p.Raw.Offset, Reason: "internal: the bytes after a .npy array's data are not where it ends"}
		}
		n += p.Raw.Len
	}
	want, err := canon.HashDoc(doc, copt)
	if err != nil {
		return nil, err
	}
	copyData := func(w io.Writer) error {
		var err error
		switch {
		case data != nil && doc.Compression == "":
			if raw.Offset+n > int64(len(data)) {
				return fmt.Errorf("past the end of the input")
			}
			_, err = w.Write(data[raw.Offset : raw.Offset+n])
		case doc.Compression == "":
			f, oerr := os.Open(path)
			if oerr != nil {
				return oerr
			}
			defer f.Close()
			var got int64
			got, err = io.Copy(w, io.NewSectionReader(f, raw.Offset, n))
			if err == nil && got != n {
				err = fmt.Errorf("the file ends after %d of its %d bytes", got, n)
			}
		default:
			err = copyDecompressed(path, data, raw.Offset, n, w)
		}
		return err
	}
	reread := func(err error) error {
		return &Error{File: path, Offset: raw.Offset, Reason: fmt.Sprintf(".npy array data cannot be read again: %v", err)}
	}
	// write writes the output to w (a compressor around it when the input
	// was compressed)
	write := func(w io.Writer) error {
		cw := io.WriteCloser(nopCloser{w})
		if doc.Compression != "" {
			var err error
			if cw, err = newCompressor(doc.Compression, w); err != nil {
				return err
			}
		}
		if _, err := cw.Write(header); err != nil {
			return err
		}
		// (a plain Writer: lz4's ReadFrom starts a frame of its own)
		if err := copyData(struct{ io.Writer }{cw}); err != nil {
			return reread(err)
		}
		return cw.Close()
	}
	res := &Result{}
	switch total := int64(len(header)) + n; {
	case total > SpoolAbove:
		tmp, err := os.CreateTemp("", "pk-canon-*.npy")
		if err != nil {
			return nil, err
		}
		res.spool = tmp.Name()
		bw := bufio.NewWriterSize(tmp, 1<<20)
		werr := write(bw)
		if werr == nil {
			werr = bw.Flush()
		}
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			var fi os.FileInfo
			if fi, werr = os.Stat(res.spool); werr == nil {
				res.size = fi.Size()
			}
		}
		if werr != nil {
			res.Close()
			return nil, werr
		}
	case doc.Compression == "":
		// one buffer of the output's size: the element bytes are held once
		res.Data = make([]byte, total)
		copy(res.Data, header)
		if err := copyData(&sliceWriter{b: res.Data[len(header):]}); err != nil {
			return nil, reread(err)
		}
	default:
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return nil, err
		}
		res.Data = buf.Bytes()
	}
	if !noVerify {
		var err error
		if res.spool != "" {
			err = samePkHashFile(path, want.Digest, res.spool, copt)
		} else {
			err = samePkHashAs(path, want.Digest, res.Data, copt)
		}
		if err != nil {
			res.Close()
			return nil, err
		}
		fastChecks++ // one pk hash of the output file (tests count them)
	}
	return res, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// sliceWriter fills b, and fails past its end.
type sliceWriter struct {
	b []byte
	n int
}

func (w *sliceWriter) Write(p []byte) (int, error) {
	if len(p) > len(w.b)-w.n {
		return 0, fmt.Errorf("more bytes than the input held")
	}
	copy(w.b[w.n:], p)
	w.n += len(p)
	return len(p), nil
}

// npyHeader is the preamble and header numpy.save writes for an array of
// the canonical descr, memory order and shape.
func npyHeader(descr string, fortran bool, shape []int64) ([]byte, error) {
	d, err := parseDescr(descr)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("{'descr': ")
	if err := npyDescr(&b, d); err != nil {
		return nil, err
	}
	b.WriteString(", 'fortran_order': ")
	if fortran {
		b.WriteString("True")
	} else {
		b.WriteString("False")
	}
	b.WriteString(", 'shape': ")
	b.WriteString(array.ShapeText(shape))
	b.WriteString(", }")
	if len(shape) > 0 {
		// room for the axis that may grow (numpy's in-place appends)
		axis := shape[0]
		if fortran {
			axis = shape[len(shape)-1]
		}
		b.WriteString(strings.Repeat(" ", max(0, npyGrowthDigits-len(strconv.FormatInt(axis, 10)))))
	}
	h := b.String()
	latin1 := true
	for _, r := range h {
		if r > 0xff {
			latin1 = false
			break
		}
	}
	var enc []byte
	if latin1 {
		enc = make([]byte, 0, len(h))
		for _, r := range h {
			enc = append(enc, byte(r))
		}
	} else {
		enc = []byte(h) // UTF-8: version 3.0
	}
	wrap := func(major byte, lenSize int) []byte {
		hlen := len(enc) + 1
		pad := npyAlign - (6+2+lenSize+hlen)%npyAlign
		out := make([]byte, 0, 8+lenSize+hlen+pad)
		out = append(out, "\x93NUMPY"...)
		out = append(out, major, 0)
		if lenSize == 2 {
			out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
		}
		out = append(out, enc...)
		for range pad {
			out = append(out, ' ')
		}
		return append(out, '\n')
	}
	if !latin1 {
		return wrap(3, 4), nil
	}
	if hlen := len(enc) + 1; hlen+npyAlign-(6+2+2+hlen)%npyAlign <= 0xffff {
		return wrap(1, 2), nil
	}
	if len(enc) > 1<<31 {
		return nil, fmt.Errorf(".npy header of %d bytes: too long", len(enc))
	}
	return wrap(2, 4), nil
}

// npyDescr writes d as numpy writes a dtype in a .npy header: dtype.str for
// a simple dtype, dtype.descr's list of (name, descr[, shape]) for a
// structured one (numpy/core/_internal.py's _array_descr), gaps and the end
// padded with void fields of an empty name ("|Vn").
func npyDescr(b *strings.Builder, d *dtypeSpec) error {
	switch {
	case d.base != nil:
		return fmt.Errorf("dtype descr %q: a subarray dtype is not an array's dtype in a .npy header", d.descr)
	case d.fields == nil && d.kind == 'V' && strings.HasPrefix(d.descr, "{"):
		return fmt.Errorf("dtype descr %q: a structured dtype without fields", d.descr)
	case d.fields == nil:
		b.WriteString(pyStr(d.descr))
		return nil
	}
	if d.aligned {
		return fmt.Errorf("dtype descr %q: an aligned structured dtype is not read from a .npy header (docs/canonical-form-2.md §5)", d.descr)
	}
	b.WriteString("[")
	off := int64(0)
	n := 0
	item := func() {
		if n > 0 {
			b.WriteString(", ")
		}
		n++
	}
	pad := func(k int64) {
		item()
		b.WriteString("('', '|V" + strconv.FormatInt(k, 10) + "')")
		off += k
	}
	for _, f := range d.fields {
		if f.titled {
			return fmt.Errorf("dtype descr %q: a titled field is not read from a .npy header", d.descr)
		}
		if f.off < off {
			return fmt.Errorf("dtype descr %q: overlapping or out-of-order fields have no .npy descr", d.descr)
		}
		if f.off > off {
			pad(f.off - off)
		}
		item()
		b.WriteString("(" + pyStr(f.name) + ", ")
		fd := f.d
		if fd.base != nil {
			if fd.base.base != nil {
				return fmt.Errorf("dtype descr %q: a subarray of a subarray", d.descr)
			}
			if err := npyDescr(b, fd.base); err != nil {
				return err
			}
			b.WriteString(", " + array.ShapeText(fd.shape))
		} else if err := npyDescr(b, fd); err != nil {
			return err
		}
		b.WriteString(")")
		off += fd.size
	}
	if d.size > off {
		pad(d.size - off)
	} else if d.size < off {
		return fmt.Errorf("dtype descr %q: fields past the item size", d.descr)
	}
	b.WriteString("]")
	return nil
}

// pyStr is Python 3's repr of a str: single quotes unless it holds a single
// quote and no double quote; backslash, the quote, \t \n \r escaped, other
// non-printable characters as \xhh, \uhhhh or \Uhhhhhhhh (str.isprintable:
// Unicode's letters, marks, numbers, punctuation, symbols and the space,
// which is Go's unicode.IsPrint).
func pyStr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyRepr renders a parsed .npy header value for a message (at most 200
// bytes of it).
func pyRepr(v any) string {
	if s := pyRepr1(v); len(s) > 200 {
		return s[:200] + "..."
	} else {
		return s
	}
}

func pyRepr1(v any) string {
	switch x := v.(type) {
	case string:
		return pyStr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr1(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "None"
	}
	return fmt.Sprint(v)
}
