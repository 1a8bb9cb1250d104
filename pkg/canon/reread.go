package canon

// Re-reading streamed payloads (pk-canon/2). A payload of 1 MiB or more is
// streamed by the reader and only its length, prefix and digest are kept.
// Two rules of pk-canon/2 need more of such a payload than its digest: the
// latin-1 bytes of protocol 0-2's _codecs.encode(s, 'latin1') (an array's
// data of 1 MiB or more) and the nested torch.save file of
// _load_from_bytes (a tensor's storage of 1 MiB or more). When the input is
// a regular, uncompressed file read from its first byte, the payload is
// read again from the file, streamed (memory stays bounded), digested as
// the rule needs. Otherwise the rule does not apply (docs/canonical-form-2.md §5).

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// srcOf returns the path whose offsets are the reader's, for doc: a plain
// uncompressed pickle file, else "". Standard input ("-") has one when
// HashFile spooled all of it to a temporary file (spool).
func srcOf(doc *input.Doc, spool string) string {
	if doc == nil || doc.Path == "" || doc.Compression != "" || doc.Format != "pickle" {
		return ""
	}
	if doc.Path == "-" {
		return spool
	}
	return doc.Path
}

// BareOptions is opt for the streams of the bare pickle file at path, as
// EachStream reads them: pk-canon/2 reads a large array payload again from
// the file, from its first byte.
func BareOptions(path string, opt Options) Options {
	if opt.v2() {
		opt.src = path
	}
	return opt
}

// reread opens the bytes of blob bl again, or reports false.
func (v *View) reread(bl *pickle.Blob) (io.Reader, func(), bool) {
	if !v.Opt.v2() || v.Opt.src == "" || bl == nil || bl.Offset < 0 {
		return nil, nil, false
	}
	f, err := os.Open(v.Opt.src)
	if err != nil {
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < bl.Offset+bl.Len {
		f.Close()
		return nil, nil, false
	}
	return io.NewSectionReader(f, bl.Offset, bl.Len), func() { f.Close() }, true
}

// latin1Blob streams the UTF-8 str blob bl again and returns the blob of
// its latin-1 encoding (length, prefix, digest), or false when a code
// point is above U+00FF or the file cannot be read again.
func (v *View) latin1Blob(bl *pickle.Blob) (*pickle.Blob, bool) {
	r, done, ok := v.reread(bl)
	if !ok {
		return nil, false
	}
	defer done()
	lr := &latin1Reader{br: bufio.NewReaderSize(r, 256<<10)}
	h := v.Opt.Algo.New()
	out := &pickle.Blob{Offset: -1}
	buf := make([]byte, 64<<10)
	for {
		n, err := lr.Read(buf)
		if len(out.Prefix) < pickle.BlobPrefix {
			out.Prefix += string(buf[:min(n, pickle.BlobPrefix-len(out.Prefix))])
		}
		h.Write(buf[:n])
		out.Len += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false
		}
	}
	out.Digest = h.Sum(nil)
	return out, true
}

// errNotLatin1: a code point above U+00FF (or invalid UTF-8).
var errNotLatin1 = errors.New("not latin-1")

// latin1Reader reads UTF-8 text as its latin-1 bytes.
type latin1Reader struct{ br *bufio.Reader }

func (l *latin1Reader) Read(p []byte) (int, error) {
	// Code points up to U+00FF are one byte (< 0x80) or two (0xC2/0xC3
	// then a continuation byte) in UTF-8; anything else is not latin-1.
	n := 0
	for n < len(p) {
		chunk, err := l.br.Peek(min(l.br.Buffered(), 2*(len(p)-n)))
		if len(chunk) == 0 {
			if chunk, err = l.br.Peek(1); len(chunk) == 0 {
				if n > 0 && err == io.EOF {
					return n, nil
				}
				return n, err
			}
		}
		i := 0
		for i < len(chunk) && n < len(p) {
			c := chunk[i]
			if c < 0x80 {
				p[n] = c
				n++
				i++
				continue
			}
			if c != 0xC2 && c != 0xC3 {
				return n, errNotLatin1
			}
			if i+1 >= len(chunk) {
				break // the pair straddles the chunk: read it next time
			}
			d := chunk[i+1]
			if d&0xC0 != 0x80 {
				return n, errNotLatin1
			}
			p[n] = (c&0x03)<<6 | d&0x3F
			n++
			i += 2
		}
		l.br.Discard(i)
		if i == 0 {
			// a lone lead byte at the end of the buffer: take two bytes
			two, err := l.br.Peek(2)
			if len(two) < 2 {
				if err == nil || err == io.EOF {
					err = errNotLatin1 // the text ends inside a character
				}
				return n, err
			}
			if (two[0] != 0xC2 && two[0] != 0xC3) || two[1]&0xC0 != 0x80 {
				return n, errNotLatin1
			}
			p[n] = (two[0]&0x03)<<6 | two[1]&0x3F
			n++
			l.br.Discard(2)
		}
	}
	return n, nil
}

// bytesReader opens again the payload of a bytes node that is a streamed
// blob: read from the file, or, for protocol 0-2's latin-1 str made bytes
// by codecsBlob, read from the file as latin-1.
func (v *View) bytesReader(b pickle.ID) (io.Reader, func(), bool) {
	bl := v.blob(b)
	if src, ok := v.latin1Src[b]; ok {
		r, done, ok := v.reread(src)
		if !ok {
			return nil, nil, false
		}
		return &latin1Reader{br: bufio.NewReaderSize(r, 256<<10)}, done, true
	}
	return v.reread(bl)
}
