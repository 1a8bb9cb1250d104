package input

// The storage of a tensor written by pickle.dump (or any pickler): torch's
// Storage.__reduce__ gives torch.storage._load_from_bytes(b), b a whole
// legacy torch.save file of that one storage (five pickles: the magic
// number, the protocol version 1001, the system info, the persistent id
// ('storage', T, key, location, numel), the key list [key]; then the
// storage record: an 8-byte element count and the elements). Protocols 0-2
// write b as _codecs.encode(s, 'latin1'). pk reads only the head of b (its
// five small pickles) with its own reader and never runs anything; the
// elements are where b is: in memory, or, for a payload of 1 MiB or more
// (a streamed blob), read again from the file (through its decompression).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/pickle"
)

// nestedHeadMax bounds the head of a nested torch.save file that is read
// (its five pickles take a few hundred bytes).
const nestedHeadMax = 64 << 10

// Open re-reads the element bytes of the storage r names: its raw part
// (a zip member, a legacy record) or, for a _load_from_bytes storage, the
// record inside the nested bytes.
func (r *StorageRef) Open() (io.ReadCloser, error) {
	if r.open != nil {
		return r.open()
	}
	if r.Part != nil && r.Part.Raw != nil {
		return r.Part.Raw.Open()
	}
	return nil, fmt.Errorf("storage %q: no bytes", r.Key)
}

// FromBytesAt reads call node n of store s as torch.storage._load_from_bytes(b)
// (REDUCE, one argument, no operation) whose b is a legacy torch.save file
// of one storage: what the nested file's persistent id says, and where its
// elements are (StorageRef.Open; FromBytes is set, Part is nil).
func (d *Doc) FromBytesAt(s *pickle.Store, n pickle.ID) (*StorageRef, bool) {
	if n < 0 || s.Kind(n) != pickle.KindCall || s.Op(n) != pickle.REDUCE || s.NMuts(n) > 0 || s.Kwargs(n) != pickle.NoID {
		return nil, false
	}
	if f := s.Func(n); f < 0 || s.Qualified(f) != "torch.storage._load_from_bytes" {
		return nil, false
	}
	a := s.Args(n)
	if a < 0 || s.Kind(a) != pickle.KindTuple || s.NItems(a) != 1 {
		return nil, false
	}
	src, size, ok := d.nestedBytes(s, s.Items(a)[0])
	if !ok {
		return nil, false
	}
	r, ok := readNestedHead(src, size)
	if !ok {
		return nil, false
	}
	r.FromBytes = true
	r.open = section(src, r.dataOff, r.Numel*r.ElemSize)
	return r, true
}

// nestedBytes opens the bytes of node b: a bytes node (in memory or a
// streamed blob) or protocol 0-2's _codecs.encode(s, 'latin1') of a str
// (decoded to its latin-1 bytes); size is their length.
func (d *Doc) nestedBytes(s *pickle.Store, b pickle.ID) (func() (io.ReadCloser, error), int64, bool) {
	if b < 0 || s.NMuts(b) > 0 {
		return nil, 0, false
	}
	switch s.Kind(b) {
	case pickle.KindBytes:
		if bl := s.Blob(b); bl != nil {
			open := d.StreamSection(bl.Offset, bl.Len)
			return open, bl.Len, open != nil
		}
		t := s.Str(b)
		return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(t)), nil }, int64(len(t)), true
	case pickle.KindCall:
		if f := s.Func(b); f < 0 || s.Qualified(f) != "_codecs.encode" || s.Kwargs(b) != pickle.NoID {
			return nil, 0, false
		}
		a := s.Args(b)
		if a < 0 || s.Kind(a) != pickle.KindTuple || s.NItems(a) != 2 {
			return nil, 0, false
		}
		x, e := s.Items(a)[0], s.Items(a)[1]
		if s.Kind(x) != pickle.KindStr || s.NMuts(x) > 0 || s.Kind(e) != pickle.KindStr || s.Blob(e) != nil || s.Str(e) != "latin1" {
			return nil, 0, false
		}
		if bl := s.Blob(x); bl != nil {
			open := d.StreamSection(bl.Offset, bl.Len)
			if open == nil {
				return nil, 0, false
			}
			// the latin-1 length: one byte a code point
			return func() (io.ReadCloser, error) {
				rc, err := open()
				if err != nil {
					return nil, err
				}
				return struct {
					io.Reader
					io.Closer
				}{&latin1Reader{br: bufio.NewReaderSize(rc, 64<<10)}, rc}, nil
			}, -1, true
		}
		t := s.Str(x)
		lat, ok := latin1Text(t)
		if !ok {
			return nil, 0, false
		}
		return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(lat)), nil }, int64(len(lat)), true
	}
	return nil, 0, false
}

// latin1Text is the latin-1 encoding of UTF-8 text t, false when a code point
// is above U+00FF.
func latin1Text(t string) (string, bool) {
	b := make([]byte, 0, len(t))
	for _, c := range t {
		if c > 0xff || c == utf8.RuneError {
			return "", false
		}
		b = append(b, byte(c))
	}
	return string(b), true
}

// latin1Reader reads UTF-8 text as its latin-1 bytes (an error at a code
// point above U+00FF).
type latin1Reader struct{ br *bufio.Reader }

var errNotLatin1 = errors.New("not latin-1")

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, size, err := l.br.ReadRune()
		if err != nil {
			if n > 0 && err == io.EOF {
				return n, nil
			}
			return n, err
		}
		if c > 0xff || c == utf8.RuneError && size == 1 {
			return n, errNotLatin1
		}
		p[n] = byte(c)
		n++
	}
	return n, nil
}

// readNestedHead reads the five pickles of a legacy torch.save file of one
// storage from the head of src, and checks its record: the element count
// the persistent id says, and (when size is known, >= 0) exactly its bytes
// after it.
func readNestedHead(src func() (io.ReadCloser, error), size int64) (*StorageRef, bool) {
	rc, err := src()
	if err != nil {
		return nil, false
	}
	head, err := io.ReadAll(io.LimitReader(rc, nestedHeadMax))
	rc.Close()
	if err != nil {
		return nil, false
	}
	rd := pickle.NewReader(bytes.NewReader(head), int64(len(head)), "_load_from_bytes")
	var ref *StorageRef
	key := ""
	count, ok := 0, true
	_, err = pickle.ParseEach(rd, pickle.Options{MaxStreams: 5}, func(st *pickle.Stream) error {
		s := st.Store()
		r := s.Root
		switch count {
		case 0:
			ok = ok && TorchLegacyMagic(s)
		case 1:
			ok = ok && r >= 0 && s.Kind(r) == pickle.KindInt && !s.IsBig(r) && s.Int(r) == 1001
		case 3:
			var pok bool
			ref, pok = parsePIDAt(s, r)
			ok = ok && pok && len(s.Popped)+len(s.Leftover) == 0 && s.LeftoverMarks == 0 && PlainStorageID(s, r)
			for _, e := range s.Events() {
				// the root is the persistent id; nothing else happens than
				// the resolution of its storage type
				if e.Node != r && (s.Kind(e.Node) != pickle.KindGlobal || e.Kind == pickle.EvMut) {
					ok = false
				}
			}
		case 4:
			ok = ok && r >= 0 && s.Kind(r) == pickle.KindList && s.NItems(r) == 1
			if ok {
				k := s.Items(r)[0]
				ok = s.Kind(k) == pickle.KindStr && s.Blob(k) == nil
				key = s.Str(k)
			}
		}
		count++
		return nil
	})
	if err != nil || !ok || count != 5 || ref == nil || ref.Key != key || ref.ElemSize == 0 || ref.Numel < 0 {
		return nil, false
	}
	at := rd.Offset()
	if at+8 > int64(len(head)) {
		return nil, false
	}
	numel := int64(binary.LittleEndian.Uint64(head[at : at+8]))
	hi, lo := bits.Mul64(uint64(ref.Numel), uint64(ref.ElemSize))
	if numel != ref.Numel || hi != 0 || lo > math.MaxInt64-uint64(at+8) {
		return nil, false
	}
	if size >= 0 && size != at+8+int64(lo) {
		return nil, false
	}
	ref.dataOff = at + 8
	return ref, true
}

// PlainStorageID reports whether torch persistent id n is ('storage', type,
// key, location, numel), or with a sixth item None (legacy files: no view).
func PlainStorageID(s *pickle.Store, n pickle.ID) bool {
	t := s.Items(n)[0]
	switch s.NItems(t) {
	case 5:
		return true
	case 6:
		return s.Kind(s.Items(t)[5]) == pickle.KindNone
	}
	return false
}

// StreamSection returns an opener of n bytes at offset off of the stream
// d's top-level pickle offsets are in (a bare pickle, joblib or legacy
// torch file; not a zip member): a section of the file when it is not
// compressed, else its decompressed stream from the start, the first off
// bytes discarded (memory stays bounded; the time is that of decompressing
// off+n bytes). Nil for standard input and when the bytes cannot be read
// again.
func (d *Doc) StreamSection(off, n int64) func() (io.ReadCloser, error) {
	if d == nil || d.Path == "" || d.Path == "-" || off < 0 || n < 0 {
		return nil
	}
	if d.Compression == "" && (d.Format == "pickle" || d.Format == "joblib" || d.Format == "torch-legacy") {
		return fileSection(d.Path, off, n)
	}
	if d.Compression == "" {
		return nil
	}
	// the one top-level pickle part of a compressed input: its stream is
	// the decompressed file, or a copy of it (Spool.Open: a section of the
	// spool, the same bytes)
	for i := range d.Parts {
		p := &d.Parts[i]
		if p.Pickle == nil || p.Of >= 0 || p.src == nil {
			continue
		}
		if s := p.src; s.compression == "" && s.method == 0 && s.off == 0 && s.n >= 0 {
			return fileSection(s.path, off, n)
		}
		if p.src.compression != "" {
			return section(func() (io.ReadCloser, error) { return d.openDecompressed(i) }, off, n)
		}
	}
	return nil
}

// fileSection returns an opener of the n bytes at offset off of the
// regular file at path.
func fileSection(path string, off, n int64) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < off+n {
			f.Close()
			return nil, fmt.Errorf("%s: cannot read %d bytes at %d again", path, n, off)
		}
		return struct {
			io.Reader
			io.Closer
		}{io.NewSectionReader(f, off, n), f}, nil
	}
}

// section returns an opener of the n bytes at off of what open opens (a
// stream read from its start: the bytes before off are read and dropped).
func section(open func() (io.ReadCloser, error), off, n int64) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		if _, err := io.CopyN(io.Discard, rc, off); err != nil {
			rc.Close()
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(rc, n), rc}, nil
	}
}

// openDecompressed is the whole decompressed stream of part pi's source.
func (d *Doc) openDecompressed(pi int) (io.ReadCloser, error) {
	s := d.Parts[pi].src
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	dec, closer, err := decompressor(s.compression, f, s.limit, size, func() io.Reader { return io.NewSectionReader(f, 0, size) })
	if err != nil {
		f.Close()
		return nil, err
	}
	// bounded as the first read was (a file replaced by a bomb since)
	lim := &limitReader{r: dec, limit: s.limit, file: d.Path, layer: s.compression + "-decompressed stream"}
	return &partReader{r: lim, f: f, closers: []func(){closer}}, nil
}

// RawOpener returns how to read raw part r of d again: Raw.Open when the
// part is a section of the file (or a zip member), else, for a part in a
// compressed input's decompressed stream (a compressed joblib file's
// array), that stream decompressed again up to it (StreamSection); nil
// when it cannot be read again (standard input).
func (d *Doc) RawOpener(r *Raw) func() (io.ReadCloser, error) {
	if r == nil {
		return nil
	}
	if r.open != nil {
		return r.open
	}
	if d != nil && d.Compression != "" && strings.HasSuffix(r.Where, "decompressed stream") {
		return d.StreamSection(r.Offset, r.Len)
	}
	return nil
}
