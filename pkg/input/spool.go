package input

import (
	"errors"
	"io"
	"os"
	"strconv"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Spool is a regular file under one layer of whole-file compression whose
// decompressed bytes start as a bare pickle (Open would read them as plain
// pickle streams, unless they turn out to be joblib or legacy torch
// content), decompressed into a temporary file: a seekable copy that the
// commands' paths for bare files read as they read a bare file, more than
// once and at its offsets (passes 1 and 2, re-reads of streams and spans),
// which a decompressor cannot do. Its offsets are the decompressed
// stream's, as Open's. The temporary file is removed from its directory as
// soon as it is made where the system allows (Linux: Path is then
// /proc/self/fd/N, so nothing is left behind however pk ends), else when
// Close is called. pk dis, pk trace and pk diff read a compressed bare
// pickle through it; what they print names the user's file (Name), the
// document's format (Layered(Compression, "pickle")) and, in errors, the
// decompressed layer: every error is reported by reading the user's file
// again through Open (a Spool is only made of a file that decompresses
// within the limit, whole and with a good trailer).
type Spool struct {
	// Name is the user's file.
	Name string
	// Compression is the file's compression ("gzip", ...).
	Compression string
	// Size is the bytes decompressed; OnDisk the file's own.
	Size, OnDisk int64

	f       *os.File
	path    string // what the bare paths open
	removed bool   // f's name is gone from its directory
}

// noSpool turns spools off (PK_SPOOL=0: the commands read a compressed
// file through Open, as before; tests compare both).
var noSpool = os.Getenv("PK_SPOOL") == "0"

// SpoolDecompressed decompresses the regular file at path into a Spool
// when it is under one layer of compression and its content, not empty,
// starts as a bare pickle (by its first bytes: PlainPickle), within the
// decompression limit of iopt. ok is false for anything else, and for any failure (a
// corrupt stream, a bad trailer, the limit, no room for the temporary
// file): the caller then reads path as it did before (through Open, which
// says what is wrong in its words). Close the Spool when done.
func SpoolDecompressed(path string, iopt Options) (sp *Spool, ok bool) {
	if noSpool || ReadOnce(path) {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, false // (never read a pipe or a device here)
	}
	var h [16]byte
	k, _ := io.ReadFull(f, h[:])
	f.Close()
	kind := sniffCompression(h[:k])
	if kind == "" {
		return nil, false // (a bare file: this costs its commands an open and a read of 16 bytes)
	}
	// the decompression OpenBare makes (its limit, its read-ahead, its
	// check that the content starts as a bare pickle)
	r, _, finish, err := OpenBare(path, iopt)
	if err != nil {
		return nil, false
	}
	defer finish()
	sp = &Spool{Name: path, Compression: kind, OnDisk: fi.Size()}
	if err := sp.create(); err != nil {
		return nil, false
	}
	n, err := io.Copy(sp.f, r)
	if err == nil {
		err = finish() // the trailer (a bad CRC), the limit
	}
	if err == nil && n == 0 {
		err = io.ErrUnexpectedEOF // (no pickle at all: Open says so)
	}
	if err != nil {
		sp.Close()
		return nil, false
	}
	sp.Size = n
	return sp, true
}

// create makes the temporary file, removed from its directory at once
// where an open file can be reopened by its descriptor.
func (sp *Spool) create() error {
	f, err := os.CreateTemp("", "pk-spool-*")
	if err != nil {
		return err
	}
	sp.f, sp.path = f, f.Name()
	fdPath := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	own, err := f.Stat()
	if fi, ferr := os.Stat(fdPath); err == nil && ferr == nil && fi.Mode().IsRegular() && os.SameFile(fi, own) {
		if os.Remove(f.Name()) == nil {
			sp.path, sp.removed = fdPath, true
		}
	}
	return nil
}

// Path is a path the spool's bytes can be opened at, as a regular file,
// until Close.
func (sp *Spool) Path() string { return sp.path }

// Format is the document's format as Open names it ("gzip+pickle").
func (sp *Spool) Format() string { return Layered(sp.Compression, "pickle") }

// Close removes the temporary file; Close of a nil Spool does nothing.
func (sp *Spool) Close() error {
	if sp == nil || sp.f == nil {
		return nil
	}
	err := sp.f.Close()
	if !sp.removed {
		if rerr := os.Remove(sp.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
		sp.removed = true
	}
	sp.f = nil
	return err
}

// errNotAsOpen: the spool's document is not what Open gives the compressed
// file (content other than plain pickle streams, trailing bytes).
var errNotAsOpen = errors.New("the spool's document differs from the compressed file's")

// Open reads the spool's bytes as Open reads a bare pickle file (the
// reader knowing their size, which grows the store by projection rather
// than by doublings) and returns the document Open gives the compressed
// file: its Path, Format, Compression and on-disk Size, one pickle part
// of the same streams, read again from the spool (Rereader, OpenPart)
// until Close. It fails for anything else (an error of the read; content
// that is not plain pickle streams: joblib, legacy torch; trailing bytes,
// whose reason a reader that knows the size words differently): the
// caller then reads the user's file through Open, which says what is
// wrong in its words.
func (sp *Spool) Open(opt pickle.Options) (*Doc, error) {
	doc, err := OpenWith(sp.path, opt, Options{})
	if err != nil {
		return nil, err
	}
	if doc.Format != "pickle" || doc.Compression != "" || len(doc.Parts) != 1 || doc.Parts[0].Pickle == nil ||
		doc.Parts[0].Pickle.Trailing != nil || len(doc.Notes) > 0 {
		return nil, errNotAsOpen
	}
	doc.Path, doc.Format, doc.Compression, doc.Size = sp.Name, sp.Format(), sp.Compression, sp.OnDisk
	doc.Parts[0].Pickle.Name = sp.Name
	return doc, nil
}
