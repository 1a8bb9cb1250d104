package input

// Reading payloads of a pickle part again. The reader streams a payload of
// 1 MiB or more (pickle.Blob: its length, prefix and digest only); a rule
// that needs its bytes (pk-canon/2's latin-1 data of an array pickled at
// protocol 0-2, the nested torch.save bytes of a tensor pickled by
// pickle.dump) reads them again from where the part is: a section of the
// file (a bare pickle, joblib or legacy torch file, a stored zip member),
// read at random, or the part's stream decompressed again (a compressed
// file, a deflated zip member), read forward: one decompression is kept
// open and sections at increasing offsets continue it, so reading every
// payload of a part again costs one more decompression of the part at
// most, never one per payload.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Rereader reads sections of the stream holding one top-level pickle part
// again (the offsets of its blobs). It is safe for concurrent use; Close
// releases the file and the decompression kept open (a later Section opens
// them again).
type Rereader struct {
	d    *Doc
	part int
	size int64 // bytes of the part's stream (Pickle.Size)

	mu     sync.Mutex
	plain  *os.File // random access: the part is the section [off, off+size) of it
	off    int64
	cur    io.ReadCloser // sequential: the part's stream, read up to pos
	pos    int64
	busy   bool  // a section of cur is being read
	reopen int   // times the stream was decompressed again (tests)
	spent  int64 // bytes decompressed again so far (sections and what precedes them)
}

// RereadBudget bounds the bytes a Rereader decompresses again, over all its
// sections: twice the part's stream plus 64 MiB. Sections at increasing
// offsets (what producers write: a payload is read where the stream uses
// it) take one pass; a stream that asks for them out of order (a hostile
// memo layout) would cost one pass per payload, and fails past it.
func RereadBudget(size int64) int64 { return 2*max(size, 0) + 64<<20 }

// ErrNoReread says that a part cannot be read again (standard input, a
// pickle nested in another part).
var ErrNoReread = errors.New("the part cannot be read again")

// Rereader returns a Rereader of top-level pickle part i, nil when its bytes
// cannot be read again (standard input, a nested pickle).
func (d *Doc) Rereader(i int) *Rereader {
	if d == nil || i < 0 || i >= len(d.Parts) {
		return nil
	}
	p := &d.Parts[i]
	if p.Pickle == nil || p.Of >= 0 || p.src == nil {
		return nil
	}
	return &Rereader{d: d, part: i, size: p.Pickle.Size}
}

// Section returns the n bytes at offset off of the part's stream. Reading
// past what the part held the first time fails (io.ErrUnexpectedEOF when
// the file now holds less); a decompression fails as the first read's did
// (a corrupt stream, the decompression limit). Close the section before
// asking for the next one.
func (r *Rereader) Section(off, n int64) (io.ReadCloser, error) {
	if r == nil {
		return nil, ErrNoReread
	}
	if off < 0 || n < 0 || (r.size >= 0 && off+n > r.size) {
		return nil, fmt.Errorf("bytes %d to %d are not in the part's %d bytes", off, off+n, r.size)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.d.Parts[r.part].src
	if s.compression == "" && s.method != 8 && s.n >= 0 {
		// a section of the file: read at random
		if r.plain == nil {
			f, err := os.Open(s.path)
			if err != nil {
				return nil, err
			}
			r.plain, r.off = f, s.off
		}
		if fi, err := r.plain.Stat(); err != nil || fi.Size() < r.off+off+n {
			return nil, fmt.Errorf("%s: cannot read %d bytes at %d again: %w", s.path, n, r.off+off, io.ErrUnexpectedEOF)
		}
		return io.NopCloser(io.NewSectionReader(r.plain, r.off+off, n)), nil
	}
	need := off - r.pos + n
	if r.busy || r.cur == nil || off < r.pos {
		need = off + n // decompressed again from the start
	}
	if b := RereadBudget(r.size); r.spent+need > b {
		return nil, fmt.Errorf("reading the part's payloads again out of stream order would decompress more than %d bytes (twice the part's %d, and 64 MiB): pk's bound", b, r.size)
	}
	r.spent += need
	if r.busy {
		// a section still open (a concurrent reader): one of its own
		rc, _, err := r.d.OpenPart(r.part)
		if err != nil {
			return nil, err
		}
		if err := discard(rc, off); err != nil {
			rc.Close()
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{&exact{r: rc, n: n}, rc}, nil
	}
	if r.cur == nil || off < r.pos {
		if r.cur != nil {
			r.cur.Close()
		}
		rc, _, err := r.d.OpenPart(r.part)
		if err != nil {
			r.cur = nil
			return nil, err
		}
		r.cur, r.pos = rc, 0
		r.reopen++
	}
	if err := discard(r.cur, off-r.pos); err != nil {
		r.cur.Close()
		r.cur = nil
		return nil, err
	}
	r.pos = off
	r.busy = true
	return &seqSection{r: r, e: exact{r: r.cur, n: n}, want: n}, nil
}

// Close releases the file and the decompression.
func (r *Rereader) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.plain != nil {
		err = r.plain.Close()
		r.plain = nil
	}
	if r.cur != nil && !r.busy {
		r.cur.Close()
		r.cur = nil
	}
	return err
}

// discard reads and drops n bytes of r; fewer is io.ErrUnexpectedEOF.
func discard(r io.Reader, n int64) error {
	got, err := io.CopyN(io.Discard, r, n)
	if got < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// exact reads exactly n bytes of r: an end before them is
// io.ErrUnexpectedEOF.
type exact struct {
	r io.Reader
	n int64
}

func (e *exact) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	k, err := e.r.Read(p)
	e.n -= int64(k)
	if err == io.EOF {
		if e.n > 0 {
			return k, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return k, err
}

// seqSection is a section of a Rereader's sequential stream; Close gives the
// stream back, positioned after what was read.
type seqSection struct {
	r    *Rereader
	e    exact
	want int64 // e.n at the start
	done bool
	err  error
}

func (s *seqSection) Read(p []byte) (int, error) {
	if s.done {
		return 0, errors.New("read after Close")
	}
	k, err := s.e.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return k, err
}

func (s *seqSection) Close() error {
	if s.done {
		return nil
	}
	s.done = true
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy = false
	if s.err != nil {
		// a failed decompression does not continue
		r.cur.Close()
		r.cur = nil
		return nil
	}
	r.pos += s.want - s.e.n
	return nil
}

// Spooled says that the file at path holds every byte of the standard input
// d was read from (pk hash copies standard input to a temporary file), as
// read with iopt: d's top-level pickle parts can then be read again from
// there, through their decompression (Rereader). It does nothing for an
// input that is not standard input.
func (d *Doc) Spooled(path string, iopt Options) {
	if d == nil || d.Path != "-" {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	for i := range d.Parts {
		p := &d.Parts[i]
		if p.Pickle == nil || p.Of >= 0 || p.src != nil {
			continue
		}
		if d.Compression != "" {
			p.src = &partSource{path: path, n: -1, compression: d.Compression, limit: iopt.limit(d.Size)}
		} else {
			p.src = &partSource{path: path, n: fi.Size(), limit: -1}
		}
	}
}
