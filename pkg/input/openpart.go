package input

import (
	"compress/flate"
	"fmt"
	"io"
	"os"
)

// partSource says where the stream holding a pickle part can be read
// again: a section of the file (a bare file, a stored or deflated zip
// member) or the whole file through its compression.
type partSource struct {
	path        string
	off, n      int64  // section of the file (n < 0: to the end)
	method      uint16 // 8: the section is deflated (zip member)
	compression string // whole-file compression ("" when none)
	limit       int64  // the decompression limit the file was read with (-1: none)
}

// setSources records, after a successful open, how every top-level pickle
// part can be re-read (nothing for stdin); limit is the decompression limit
// the file was read with, which bounds every later decompression of it.
func (d *Doc) setSources(ra *readerAtSize, limit int64) {
	if d.Path == "-" {
		return
	}
	for i := range d.Parts {
		p := &d.Parts[i]
		if p.Pickle == nil || p.Of >= 0 || p.src != nil {
			continue
		}
		switch {
		case d.Compression != "":
			p.src = &partSource{path: d.Path, n: -1, compression: d.Compression, limit: limit}
		case ra != nil && ra.r != nil:
			p.src = &partSource{path: d.Path, n: ra.size, limit: -1}
		}
	}
}

// Deflated reports whether any content of d was compressed in the file
// (whole-file compression or a deflated zip member): the parts' lengths
// then do not add up to the file's size.
func (d *Doc) Deflated() bool { return d.Compression != "" || d.deflated }

// OpenPart re-opens the file and returns the bytes of part i as they were
// read: for a pickle part, the first Pickle.Size bytes of the stream that
// holds it (the file, the decompressed stream, or the zip member), so that
// offsets in it are those of Pickle.Streams and Part.Gap; for a raw part,
// its bytes (Raw.Open). It fails for stdin, for raw parts inside a
// compressed stream, and for a pickle nested in another part (a joblib
// object array: its bytes are the Gap of part Of).
func (d *Doc) OpenPart(i int) (io.ReadCloser, int64, error) {
	if i < 0 || i >= len(d.Parts) {
		return nil, 0, fmt.Errorf("no part %d (the input has %d)", i, len(d.Parts))
	}
	p := &d.Parts[i]
	if p.Raw != nil {
		rc, err := p.Raw.Open()
		return rc, p.Raw.Len, err
	}
	if p.Pickle == nil {
		return nil, 0, fmt.Errorf("part %d holds no bytes", i)
	}
	if p.Of >= 0 {
		return nil, 0, fmt.Errorf("part %q is nested in part %d (bytes %d to %d of its stream)", p.Name, p.Of, p.Gap[0], p.Gap[1])
	}
	s := p.src
	if s == nil {
		return nil, 0, fmt.Errorf("the bytes of part %q cannot be read again (stdin)", p.Name)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, 0, err
	}
	var r io.Reader = f
	closers := []func(){}
	if s.n >= 0 {
		r = io.NewSectionReader(f, s.off, s.n)
	}
	if s.method == 8 {
		z := flate.NewReader(r)
		closers = append(closers, func() { z.Close() })
		r = z
	}
	if s.compression != "" {
		var reopen func() io.Reader
		compressed := s.n
		if s.n < 0 && s.method != 8 {
			// the whole file: its size, as the first read knew it (the
			// lzma and xz windows start from it), and read again from
			// the file rather than kept for a larger window
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				compressed = fi.Size()
			}
		}
		if compressed >= 0 && s.method != 8 {
			reopen = func() io.Reader { return io.NewSectionReader(f, s.off, compressed) }
		}
		layer := s.compression + "-decompressed stream"
		dec, closer, err := decompressor(s.compression, r, s.limit, compressed, reopen)
		if err != nil {
			f.Close()
			return nil, 0, &Error{File: d.Path, Member: layer, Offset: 0, Reason: "cannot start decompressing: " + err.Error()}
		}
		closers = append(closers, closer)
		// bounded as the first read was (a file replaced by a bomb since)
		r = &limitReader{r: dec, limit: s.limit, file: d.Path, layer: layer}
	}
	size := p.Pickle.Size
	return &partReader{r: io.LimitReader(r, size), f: f, closers: closers}, size, nil
}

type partReader struct {
	r       io.Reader
	f       *os.File
	closers []func()
}

func (p *partReader) Read(b []byte) (int, error) { return p.r.Read(b) }

func (p *partReader) Close() error {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	return p.f.Close()
}
