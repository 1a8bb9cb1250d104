// Package input owns the way pk opens what a user hands it: a bare pickle
// stream, a file of several pickles, stdin, compressed pickles (gzip, bz2,
// xz, lzma, zlib, zstd, lz4), PyTorch checkpoints (zip and legacy formats),
// joblib files (plain and compressed, with their raw array bytes) and .npy
// files, recognised by content, never by name. Every command opens its
// inputs through Open, so they all see the same parts.
//
// A Doc is a list of parts: pickle parts (a *pickle.File of one or more
// streams) and raw parts (bytes that are content but not pickle: a torch
// storage, a numpy array's data), each digested with Options.NewHash and
// streamed, never held in memory whole. Hostile containers are refused with
// an *Error naming the file, the member and the offset (see docs/inputs.md).
package input

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Role says what a part is for.
type Role string

const (
	RolePickle   Role = "pickle"   // the pickle of the input (data.pkl, the joblib stream, ...)
	RoleStorage  Role = "storage"  // a torch storage (Part.Key is its key)
	RoleArray    Role = "array"    // a numpy array's data (joblib, .npy)
	RoleObjects  Role = "objects"  // an object array written as a nested pickle (joblib)
	RoleMeta     Role = "meta"     // container metadata that the loader reads (torch version, byteorder)
	RoleExtra    Role = "extra"    // a zip member the loader never reads
	RoleTrailing Role = "trailing" // bytes after the data that the loader ignores
)

// Part is one piece of an input: a pickle file (one or more streams), or
// raw bytes that belong to the content (a tensor storage, an array's data).
type Part struct {
	// Name says where the part sits inside the input ("" for a bare pickle,
	// "archive/data.pkl" inside a zip, "archive/data/0" for a storage,
	// "array 0" for the first joblib array, ...).
	Name string
	Role Role
	// Pickle is set for pickle parts.
	Pickle *pickle.File
	// Raw is set for raw data parts.
	Raw *Raw
	// Key is the torch storage key of a RoleStorage part.
	Key string
	// NodeID is, for joblib arrays (RoleArray, RoleObjects), the
	// NumpyArrayWrapper node whose BUILD the bytes follow, in the pickle
	// part Of: node NodeID of its stream NodeStream (pickle.NoID for
	// other parts).
	NodeID     pickle.ID
	NodeStream int
	// Of is the index in Doc.Parts of the pickle part that refers to this
	// part, or -1.
	Of int
	// Gap is, for joblib arrays, the range [Gap[0], Gap[1]) of the pickle
	// part's (decompressed) stream that is not its opcodes: the padding and
	// the array's bytes, or the nested pickle. A disassembler skips it.
	Gap [2]int64

	src *partSource // how to re-read a top-level pickle part (OpenPart)
}

// JoblibArray reports whether the part is a joblib array (its data, or the
// nested pickle of an object array) that follows the BUILD of node NodeID
// in stream NodeStream of part Of.
func (p *Part) JoblibArray() bool {
	return p.Of >= 0 && (p.Role == RoleArray || p.Role == RoleObjects)
}

// Raw is a run of bytes that is content but not pickle.
type Raw struct {
	Len    int64
	Digest []byte // with Options.NewHash
	Prefix []byte // the first bytes (at most pickle.BlobPrefix)
	// Offset is where the bytes start: in the file, in the zip member, or in
	// the decompressed stream (see Where).
	Offset int64
	Where  string // "" (the file itself), "member NAME", "gzip-decompressed stream", ...
	// DType and Shape describe array data when known: numpy's dtype string
	// ("<f8", "|b1", "|V20") and the shape; Order is "C" or "F".
	DType string
	Shape []int64
	Order string
	// DTypeString is set when DType is a .npy header's own type string
	// (not the "|V<size>" label of a structured descr).
	DTypeString bool
	// Descr is a .npy header's descr as parsed: a string, or a list of
	// fields ([]any of []any{name, descr[, shape]}).
	Descr any

	open func() (io.ReadCloser, error)
}

// Open re-reads the bytes of a raw part (for a diff that counts changed
// elements). It fails for parts inside a compressed stream or stdin.
func (r *Raw) Open() (io.ReadCloser, error) {
	if r.open == nil {
		return nil, fmt.Errorf("the bytes of this part cannot be read again (compressed stream or stdin)")
	}
	return r.open()
}

// Doc is an opened input.
type Doc struct {
	Path string
	// Format is "pickle", "gzip+pickle", "torch-zip", "torch-legacy",
	// "joblib", "zlib+joblib", "npy", ... (compression, then content).
	Format string
	// Compression is the whole-file compression ("" when none).
	Compression string
	Size        int64 // bytes of the input as given
	Parts       []Part
	// Notes are facts about the container that do not stop reading it (a
	// local zip header naming a member differently, ...).
	Notes []string

	deflated bool // a zip member was deflated (see Deflated)
}

// Options tune how containers are opened.
type Options struct {
	// MaxDecompressed bounds the bytes produced by decompression (whole-file
	// compression and deflated zip members together). 0 means the default,
	// DefaultMaxRatio × the input size + DefaultMaxAllowance, or the value
	// of the PK_MAX_DECOMPRESSED environment variable when set; < 0 means no
	// limit.
	MaxDecompressed int64
	// AllowBadCRC reads zip members whose CRC-32 does not match, as
	// torch.load does (it ignores CRCs); by default pk refuses them.
	AllowBadCRC bool
	// Graph also builds the *Node graph of every stream (Stream.All, Root,
	// ...), for the tests that still read it; the commands read stores
	// (Stream.Store) and leave it out (docs/engine.md).
	Graph bool
}

// Decompression limit defaults.
const (
	DefaultMaxRatio     = 100
	DefaultMaxAllowance = 256 << 20
)

// Error is a container-level failure: it names the file, the member (zip
// member or decompressed layer) and the offset.
type Error struct {
	File   string
	Member string // "" for the file itself
	Offset int64  // -1 when no offset applies
	Reason string
}

func (e *Error) Error() string {
	s := e.File
	if e.Member != "" {
		s += ": " + e.Member
	}
	if e.Offset >= 0 {
		s += ": offset " + strconv.FormatInt(e.Offset, 10)
	}
	return s + ": " + e.Reason
}

// Open reads path ("-" for stdin) with the default Options.
func Open(path string, opt pickle.Options) (*Doc, error) {
	return OpenWith(path, opt, Options{})
}

// OpenWith reads path ("-" for stdin).
func OpenWith(path string, opt pickle.Options, iopt Options) (*Doc, error) {
	if path == "-" {
		return openStream(os.Stdin, -1, "-", nil, opt, iopt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	var ra readerAtSize
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		return nil, DirError(path)
	}
	if err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
		ra = readerAtSize{f, size, path}
	}
	doc, err := openStream(f, size, path, &ra, opt, iopt)
	if err != nil {
		return nil, err
	}
	doc.setSources(&ra, iopt.limit(doc.Size))
	return doc, nil
}

type readerAtSize struct {
	r    io.ReaderAt
	size int64
	path string
}

// limit returns the decompression limit for an input of size bytes.
func (o Options) limit(size int64) int64 {
	if o.MaxDecompressed != 0 {
		return o.MaxDecompressed
	}
	if v := os.Getenv("PK_MAX_DECOMPRESSED"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n != 0 {
			return n
		}
	}
	if size < 0 {
		size = 0
	}
	if size > (1<<62)/DefaultMaxRatio {
		return -1
	}
	return DefaultMaxRatio*size + DefaultMaxAllowance
}

// openStream recognises the content of r by its first bytes.
func openStream(r io.Reader, size int64, path string, ra *readerAtSize, opt pickle.Options, iopt Options) (*Doc, error) {
	opt.NoGraph = !iopt.Graph
	br := bufio.NewReaderSize(r, 256<<10)
	head, _ := br.Peek(16)
	doc := &Doc{Path: path, Size: size}
	switch c := Container(head); c {
	case "":
	case "zip":
		if ra == nil || ra.r == nil {
			return nil, &Error{File: path, Offset: 0, Reason: "a zip archive (torch.save) cannot be read from a pipe: pk needs the file (its directory is at the end)"}
		}
		return openTorchZip(doc, ra, opt, iopt)
	case "npy":
		doc.Format = "npy"
		if err := readNpy(doc, br, size, "", opt, nil); err != nil {
			return doc, err
		}
		if ra != nil && ra.r != nil {
			for i := range doc.Parts {
				if r := doc.Parts[i].Raw; r != nil && doc.Parts[i].Role == RoleArray {
					r.open = sectionOpener(ra.r, r.Offset, r.Len) // read again by pk diff
				}
			}
		}
		return doc, nil
	case "joblib-zfile":
		return nil, &Error{File: path, Offset: 0, Reason: "joblib's zlib format of joblib < 0.9.3 (magic \"ZF\") is not supported"}
	default:
		return openCompressed(doc, br, c, opt, iopt, ra)
	}
	if err := readPickleContent(doc, br, size, "", opt, nil, ra); err != nil {
		if ra != nil && ra.r != nil {
			if at, ok := zipAfterJunk(ra); ok {
				return nil, &Error{File: path, Offset: at, Reason: fmt.Sprintf(
					"not a pickle (%v); a zip archive starts at offset %d after other data: torch.load reads a zip only when the file starts with PK\\x03\\x04 and fails on this file too; pk refuses", err, at)}
			}
		}
		return nil, err
	}
	return doc, nil
}

// zipAfterJunk reports whether the file ends with a zip end-of-central-
// directory record and holds a local header signature in its first 64 KiB.
func zipAfterJunk(ra *readerAtSize) (int64, bool) {
	tail := min(ra.size, int64(maxZipComment+eocdLen))
	buf := make([]byte, tail)
	if _, err := ra.r.ReadAt(buf, ra.size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	if !bytes.Contains(buf, []byte("PK\x05\x06")) {
		return 0, false
	}
	head := make([]byte, min(ra.size, 64<<10))
	n, _ := ra.r.ReadAt(head, 0)
	i := bytes.Index(head[:n], zipMagic)
	return int64(i), i > 0
}

func hasPrefix(b, p []byte) bool { return len(b) >= len(p) && string(b[:len(p)]) == string(p) }

// readPickleContent reads a pickle-based content (plain pickles, joblib,
// legacy torch) from br; where names the decompressed layer ("" for the
// file itself); lim, when set, reports a decompression limit error.
func readPickleContent(doc *Doc, br *bufio.Reader, size int64, where string, opt pickle.Options, lim *limitReader, ra *readerAtSize) error {
	if isTorchLegacy(br) {
		// its pickles are read whole: the key list names every storage
		opt.Keep, opt.Replay = nil, nil
		return readTorchLegacy(doc, br, size, where, opt, lim, ra)
	}
	rd := pickle.NewReader(br, size, doc.Path)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	jb := &joblibHook{doc: doc, where: where, opt: opt, ra: ra}
	o := opt
	o.AfterBuild = jb.afterBuild
	if o.Keep != nil && ra != nil && ra.r != nil && where == "" {
		o.Replay = ra.r // the file itself: pass 1 reads it again (pickle.Keep)
	}
	f, err := pickle.ParseReader(rd, o)
	if pe, ok := pickle.AsError(err); ok && pe.Released && where == "" && ra != nil && ra.r != nil && o.Keep.Final == nil {
		// pass 1 did not see what pass 2 read (joblib's array data is not
		// opcodes): read the file again, holding every node (a consumer
		// of Keep.Final has taken events already: it gets the error and
		// starts again itself)
		opt.Keep = nil
		br := bufio.NewReaderSize(io.NewSectionReader(ra.r, 0, ra.size), 256<<10)
		return readPickleContent(doc, br, size, where, opt, lim, ra)
	}
	if err != nil {
		return located(doc.Path, where, lim, err)
	}
	if err := lim.failure(); err != nil {
		return err
	}
	part := Part{Name: "", Role: RolePickle, Pickle: f, Of: -1}
	doc.Parts = append([]Part{part}, jb.parts...)
	if len(jb.parts) > 0 {
		doc.Format = withLayer(doc, "joblib")
	} else {
		doc.Format = withLayer(doc, "pickle")
	}
	return nil
}

func withLayer(doc *Doc, content string) string {
	return Layered(doc.Compression, content)
}

// Layered is the Format of content under compression ("gzip+pickle"), or
// content itself when compression is "": what Open names a document, for
// the commands that read a compressed bare pickle without it
// (EachStreamDecompressed).
func Layered(compression, content string) string {
	if compression != "" {
		return compression + "+" + content
	}
	return content
}

// located returns err with the place it happened: a pickle.Error keeps its
// type, with the file name set and the layer named in the reason.
func located(path, where string, lim *limitReader, err error) error {
	if le := lim.failure(); le != nil {
		return le
	}
	if pe, ok := pickle.AsError(err); ok {
		c := *pe
		c.File = path
		if where != "" {
			c.Reason += fmt.Sprintf(" (offset %d is in the %s)", c.Offset, where)
		}
		return &c
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{File: path, Member: where, Offset: -1, Reason: err.Error()}
}

// Key returns the name of part i as it counts for the content: the torch
// archive folder (torch.save names it after the file, or "archive") is
// left out, so the same checkpoint saved under another name has the same
// part keys. Hashing and diffing align parts by Key.
func (d *Doc) Key(i int) string {
	p := &d.Parts[i]
	name := p.Name
	if d.Format == "torch-zip" || strings.HasSuffix(d.Format, "+torch-zip") {
		if j := strings.IndexByte(name, '/'); j >= 0 {
			name = name[j+1:]
		}
	}
	return name
}

// Container names the container Open finds from a file's first bytes
// ("gzip", "lzma", "zip", "npy", "joblib-zfile", ...), or "" when Open reads
// the file as a bare pickle stream. It is the one sniffer of containers:
// every command decides by it whether a file needs pkg/input.
func Container(head []byte) string {
	switch {
	case sniffCompression(head) != "":
		return sniffCompression(head)
	case hasPrefix(head, zipMagic):
		return "zip"
	case hasPrefix(head, npyMagic):
		return "npy"
	case hasPrefix(head, []byte("ZF")):
		return "joblib-zfile"
	}
	return ""
}

// PlainPickle reports whether a file that starts with head would be read by
// Open as a bare pickle stream: no compression, zip or .npy magic. (A bare
// pickle may still turn out to be joblib or legacy torch content; callers
// that take a shortcut for bare pickles must refuse what they don't know.)
func PlainPickle(head []byte) bool { return Container(head) == "" }

// OpenReader reads r as Open reads stdin (its size unknown, so no zip
// archive), naming it name in errors.
func OpenReader(r io.Reader, name string, opt pickle.Options, iopt Options) (*Doc, error) {
	return openStream(r, -1, name, nil, opt, iopt)
}

// MainStream returns the index of the stream of pickle part pi whose
// result loading returns: the fourth of the five pickles of a legacy torch
// file, the first otherwise. Its result is what paths call root.
func (d *Doc) MainStream(pi int) int {
	p := &d.Parts[pi]
	if strings.HasSuffix(d.Format, "torch-legacy") && pi == 0 && p.Pickle != nil && len(p.Pickle.Streams) == 5 {
		return 3
	}
	return 0
}

// MainPart returns the index of the pickle part whose main stream gives
// what loading returns (the first that is not a joblib object array), or -1.
func (d *Doc) MainPart() int {
	for i := range d.Parts {
		if p := &d.Parts[i]; p.Pickle != nil && !p.JoblibArray() {
			return i
		}
	}
	return -1
}
