package canon

// Re-reading streamed payloads (pk-canon/2). A payload of 1 MiB or more is
// streamed by the reader and only its length, prefix and digest are kept.
// Two rules of pk-canon/2 need more of such a payload than its digest: the
// latin-1 bytes of protocol 0-2's _codecs.encode(s, 'latin1') (an array's
// data of 1 MiB or more) and the nested torch.save file of
// _load_from_bytes (a tensor's storage of 1 MiB or more). The payload is
// read again from where the reader read it, streamed (memory stays
// bounded), digested as the rule needs: from the file when the input is a
// plain pickle file (or standard input spooled whole), else from its part
// of the opened input (input.Rereader: a section of the file, or the part's
// stream decompressed again, read forward, under the decompression limit
// of the first read). What is read again must have the length and digest
// the first read saw, else the digest fails (the file changed while pk read
// it). Only a part that cannot be read again (standard input, a pickle
// nested in a joblib object array) leaves the rule unapplied
// (docs/canonical-form-2.md §5).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

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

// docReread reads the streamed payloads of one opened input's pickle parts
// again (DocOptions; not for the bare file of srcOf, read from its path): an
// input.Rereader per part (a section of the file, or the part's stream
// decompressed again and read forward), and what was read, kept per part
// and offset, so that a stream normalised twice (DocOptions' decide, then
// HashDoc) reads each payload once.
type docReread struct {
	doc    *input.Doc
	mu     sync.Mutex
	parts  map[int]*input.Rereader
	latin1 map[rrKey]rrLatin1
	nested map[rrKey]rrNested
}

// rrAt is where one stream's payloads are read again: a part of an input.
type rrAt struct {
	d    *docReread
	part int
}

type rrKey struct {
	part int
	off  int64
}

type rrLatin1 struct {
	bl  *pickle.Blob // nil: not latin-1
	err error
}

type rrNested struct {
	st  *Storage // nil: not a storage
	err error
}

func newDocReread(doc *input.Doc) *docReread {
	if doc == nil {
		return nil
	}
	return &docReread{doc: doc}
}

// section opens the n bytes at off of part's stream again.
func (d *docReread) section(part int, off, n int64) (io.ReadCloser, error) {
	d.mu.Lock()
	r, ok := d.parts[part]
	if !ok {
		r = d.doc.Rereader(part)
		if d.parts == nil {
			d.parts = map[int]*input.Rereader{}
		}
		d.parts[part] = r
	}
	d.mu.Unlock()
	if r == nil {
		return nil, errNoReread
	}
	return r.Section(off, n)
}

// close releases the files and decompressions kept open (a later read
// opens them again).
func (d *docReread) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.parts {
		r.Close()
	}
}

// errNoReread: the payload cannot be read again (standard input, a nested
// pickle, not pk-canon/2): the rule that needs it does not apply.
var errNoReread = errors.New("the payload cannot be read again")

// errRereadOpen: a payload must be read again from a compressed file read
// stream by stream (Options.noReread): the caller hashes it through
// input.Open instead.
var errRereadOpen = errors.New("a payload of a compressed file must be read again: read through input.Open")

// reread opens the bytes of blob bl again, checked against what the first
// read saw (verified): from the bare file of srcOf, or from the part of the
// opened input the stream is in. errNoReread when neither is known.
func (v *View) reread(bl *pickle.Blob) (*verified, func(), error) {
	if !v.Opt.v2() || bl == nil || bl.Offset < 0 {
		return nil, nil, errNoReread
	}
	if v.Opt.src != "" {
		f, err := os.Open(v.Opt.src)
		if err != nil {
			return nil, nil, v.rereadErr(bl, err)
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < bl.Offset+bl.Len {
			f.Close()
			return nil, nil, v.rereadErr(bl, io.ErrUnexpectedEOF)
		}
		return v.verify(io.NewSectionReader(f, bl.Offset, bl.Len), bl), func() { f.Close() }, nil
	}
	if v.rr == nil {
		if v.Opt.noReread {
			return nil, nil, errRereadOpen
		}
		return nil, nil, errNoReread
	}
	rc, err := v.rr.section(v.rrPart, bl.Offset, bl.Len)
	if err == errNoReread {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, v.rereadErr(bl, err)
	}
	return v.verify(rc, bl), func() { rc.Close() }, nil
}

// where says where a payload is read again from, for errors.
func (v *View) where() string {
	if v.Opt.src == "" && v.rr != nil {
		if c := v.rr.doc.Compression; c != "" {
			return " through its " + c + " decompression"
		}
	}
	return ""
}

// rereadErr is the error of a payload that cannot be read again.
func (v *View) rereadErr(bl *pickle.Blob, err error) error {
	return fmt.Errorf("offset %d: reading the payload of %d bytes again from the file%s: %w", bl.Offset, bl.Len, v.where(), err)
}

// fail records the first error of the view's normalisation (Digest
// returns it).
func (v *View) fail(err error) {
	if v.rerr == nil {
		v.rerr = err
	}
}

// verify wraps the bytes of bl read again: their length and digest must be
// what the first read saw.
func (v *View) verify(r io.Reader, bl *pickle.Blob) *verified {
	c := &verified{r: r, bl: bl, v: v}
	if len(bl.Digest) == v.Opt.Algo.Size() {
		c.h = v.Opt.Algo.New()
	}
	return c
}

// verified reads a payload again and checks, at its end, that it is the
// one the first read saw; any failure is its err (sticky).
type verified struct {
	r   io.Reader
	h   hash.Hash // nil: the length only
	n   int64
	bl  *pickle.Blob
	v   *View
	err error
	eof bool
}

func (c *verified) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.eof {
		return 0, io.EOF
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if c.h != nil {
		c.h.Write(p[:k])
	}
	switch {
	case c.n > c.bl.Len:
		c.err = c.differs()
		return 0, c.err
	case err == io.EOF:
		if c.n != c.bl.Len || (c.h != nil && !bytes.Equal(c.h.Sum(nil), c.bl.Digest)) {
			c.err = c.differs()
			return 0, c.err
		}
		c.eof = true
	case err != nil:
		c.err = c.v.rereadErr(c.bl, err)
	}
	return k, err
}

func (c *verified) differs() error {
	return fmt.Errorf("offset %d: the payload of %d bytes reads otherwise the second time (from the file%s): the file changed while pk read it", c.bl.Offset, c.bl.Len, c.v.where())
}

// finish reads what is left and reports whether the payload was the one
// first read (nil) or not.
func (c *verified) finish() error {
	if c.err == nil && !c.eof {
		io.Copy(io.Discard, c)
	}
	return c.err
}

// latin1Blob streams the UTF-8 str blob bl again and returns the blob of
// its latin-1 encoding (length, prefix, digest), or nil when a code point
// is above U+00FF or the payload cannot be read again; a payload that
// fails to read or reads otherwise is the view's error (fail).
func (v *View) latin1Blob(bl *pickle.Blob) *pickle.Blob {
	key := rrKey{v.rrPart, bl.Offset}
	if v.Opt.src == "" && v.rr != nil {
		v.rr.mu.Lock()
		c, ok := v.rr.latin1[key]
		v.rr.mu.Unlock()
		if ok {
			if c.err != nil {
				v.fail(c.err)
			}
			return c.bl
		}
	}
	out, err := v.readLatin1(bl)
	if err == errNoReread {
		return nil
	}
	if v.Opt.src == "" && v.rr != nil {
		v.rr.mu.Lock()
		if v.rr.latin1 == nil {
			v.rr.latin1 = map[rrKey]rrLatin1{}
		}
		v.rr.latin1[key] = rrLatin1{out, err}
		v.rr.mu.Unlock()
	}
	if err != nil {
		v.fail(err)
		return nil
	}
	return out
}

func (v *View) readLatin1(bl *pickle.Blob) (*pickle.Blob, error) {
	r, done, err := v.reread(bl)
	if err != nil {
		return nil, err
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
		if err == errNotLatin1 && r.err == nil {
			return nil, nil // not latin-1: the rule does not apply
		}
		if err != nil {
			if r.err != nil {
				return nil, r.err
			}
			return nil, v.rereadErr(bl, err)
		}
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	out.Digest = h.Sum(nil)
	return out, nil
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
// by codecsBlob, read from the file as latin-1. check, after the payload was
// read (to its end or not), reports whether it was the one first read.
func (v *View) bytesReader(b pickle.ID) (r io.Reader, done func(), check func() error, err error) {
	bl := v.blob(b)
	if src, ok := v.latin1Src[b]; ok {
		c, done, err := v.reread(src)
		if err != nil {
			return nil, nil, nil, err
		}
		return &latin1Reader{br: bufio.NewReaderSize(c, 256<<10)}, done, c.finish, nil
	}
	c, done, err := v.reread(bl)
	if err != nil {
		return nil, nil, nil, err
	}
	return c, done, c.finish, nil
}
