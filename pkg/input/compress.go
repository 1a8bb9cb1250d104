package input

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/pk-tools/pk/pkg/pickle"
)

var (
	zipMagic  = []byte("PK\x03\x04")
	npyMagic  = []byte("\x93NUMPY")
	gzipMagic = []byte{0x1f, 0x8b}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	lz4Magic  = []byte{0x04, 0x22, 0x4d, 0x18}
)

// sniffCompression names the whole-file compression that head starts with,
// or "". None of these magics can start a pickle that CPython loads
// (docs/inputs.md), except "BZh", which would be a BINBYTES of over 800 MB:
// bzip2 is recognised only with its block or end-of-stream magic after it.
func sniffCompression(head []byte) string {
	switch {
	case hasPrefix(head, gzipMagic):
		return "gzip"
	case hasPrefix(head, xzMagic):
		return "xz"
	case hasPrefix(head, zstdMagic):
		return "zstd"
	case hasPrefix(head, lz4Magic):
		return "lz4"
	case len(head) >= 10 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h' && head[3] >= '1' && head[3] <= '9' &&
		(string(head[4:10]) == "\x31\x41\x59\x26\x53\x59" || string(head[4:10]) == "\x17\x72\x45\x38\x50\x90"):
		return "bz2"
	case len(head) >= 2 && head[0] == 0x5d && head[1] == 0x00:
		// lzma "alone": properties byte 0x5d (lc=3 lp=0 pb=2, what every
		// encoder writes by default), as joblib recognises it. "]\x00" is
		// never a pickle: 0x00 is not an opcode.
		return "lzma"
	case len(head) >= 2 && head[0] == 0x78 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0:
		// zlib (joblib's default compressor); 'x' is not an opcode.
		return "zlib"
	}
	return ""
}

// limitReader counts decompressed bytes, stops at the limit and keeps the
// first error of the decompressor (a bad CRC comes with the last bytes).
type limitReader struct {
	r     io.Reader
	n     int64
	limit int64 // < 0: none
	file  string
	layer string
	err   error // sticky: limit exceeded or a decompressor error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.limit >= 0 && int64(len(p)) > l.limit-l.n+1 {
		p = p[:l.limit-l.n+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.limit >= 0 && l.n > l.limit {
		l.err = &Error{File: l.file, Member: l.layer, Offset: l.limit, Reason: fmt.Sprintf(
			"decompressed size exceeds the limit of %d bytes: stopped as a decompression bomb (raise the limit with PK_MAX_DECOMPRESSED=<bytes>, -1 for none)", l.limit)}
		return n - int(l.n-l.limit), l.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		l.err = &Error{File: l.file, Member: l.layer, Offset: l.n, Reason: err.Error()}
		return n, l.err
	}
	return n, err
}

// failure returns the limit or decompressor error, if any (nil-safe).
func (l *limitReader) failure() error {
	if l == nil {
		return nil
	}
	if l.err != nil {
		return l.err
	}
	return nil
}

// drain reads what is left so that the decompressor checks its trailer.
func (l *limitReader) drain() error {
	if _, err := io.Copy(io.Discard, l); err != nil {
		return l.failure()
	}
	return l.failure()
}

// decompressor starts decompressing r, a stream of compressed bytes
// (-1: not known) that decompresses to at most limit bytes (-1: no limit).
// reopen, when not nil, gives the same compressed bytes from their start
// again (an xz file decoded again with a larger window reads them there
// rather than keeping them).
func decompressor(kind string, r io.Reader, limit, compressed int64, reopen func() io.Reader) (io.Reader, func(), error) {
	switch kind {
	case "gzip":
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case "zlib":
		z, err := zlib.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case "bz2":
		return bzip2.NewReader(r), func() {}, nil
	case "xz":
		// xz.go: each block's dictionary grows with what the data needs.
		z, err := newXZ(r, compressed, reopen)
		if err != nil {
			return nil, nil, err
		}
		return z, func() {}, nil
	case "lzma":
		dc := int64(64 << 20)
		if limit > dc {
			dc = limit
		}
		if dc > 1<<31-1 {
			dc = 1<<31 - 1
		}
		z, err := newLzmaAlone(r, int(dc), compressed)
		if err != nil {
			return nil, nil, err
		}
		return z, func() {}, nil
	case "zstd":
		wm := uint64(64 << 20)
		if limit > int64(wm) {
			wm = uint64(limit)
		}
		if wm > 1<<31 {
			wm = 1 << 31
		}
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(wm), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, nil, err
		}
		return z, z.Close, nil
	case "lz4":
		return lz4.NewReader(r), func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown compression %q", kind)
}

// openCompressed decompresses br as a stream and reads what it holds.
// ra, when set, is the file itself: pass 1 of the machine (pickle.Keep)
// decompresses it again (replay).
func openCompressed(doc *Doc, br *bufio.Reader, kind string, opt pickle.Options, iopt Options, ra *readerAtSize) (*Doc, error) {
	doc.Compression = kind
	layer := kind + "-decompressed stream"
	limit := iopt.limit(doc.Size)
	var reopen func() io.Reader
	if ra != nil {
		reopen = func() io.Reader { return io.NewSectionReader(ra.r, 0, ra.size) }
	}
	dec, closer, err := decompressor(kind, br, limit, doc.Size, reopen)
	if err != nil {
		return nil, &Error{File: doc.Path, Member: layer, Offset: 0, Reason: "cannot start decompressing: " + err.Error()}
	}
	defer closer()
	ahead := newReadAhead(dec)
	defer ahead.Close() // before closer: the goroutine stops reading dec first
	lim := &limitReader{r: ahead, limit: limit, file: doc.Path, layer: layer}
	inner := bufio.NewReaderSize(lim, 256<<10)
	head, _ := inner.Peek(16)
	if err := lim.failure(); err != nil && len(head) == 0 {
		return nil, err
	}
	switch {
	case sniffCompression(head) != "":
		return nil, &Error{File: doc.Path, Member: layer, Offset: 0, Reason: fmt.Sprintf("compressed twice (%s inside %s): pk reads one layer of compression", sniffCompression(head), kind)}
	case hasPrefix(head, zipMagic):
		return nil, &Error{File: doc.Path, Member: layer, Offset: 0, Reason: "a compressed zip archive (torch.save file): decompress it first; neither torch.load nor pk reads it compressed"}
	case hasPrefix(head, npyMagic):
		doc.Format = kind + "+npy"
		if err := readNpy(doc, inner, -1, layer, opt, lim); err != nil {
			return nil, err
		}
	default:
		o := opt
		if o.Keep != nil && ra != nil && ra.r != nil {
			o.Replay = &replay{file: ra, kind: kind, limit: limit}
		}
		if err := readPickleContent(doc, inner, -1, layer, o, lim, nil); err != nil {
			if pe, ok := pickle.AsError(err); ok && pe.Released && o.Keep.Final == nil {
				// pass 1 did not see what pass 2 read: decompress again,
				// holding every node
				opt.Keep = nil
				return openCompressed(doc, bufio.NewReaderSize(io.NewSectionReader(ra.r, 0, ra.size), 256<<10), kind, opt, iopt, nil)
			}
			return nil, err
		}
	}
	if err := lim.drain(); err != nil {
		return nil, err
	}
	return doc, nil
}

// ErrNotBare is returned by OpenBare for inputs that are not a bare pickle.
var ErrNotBare = errors.New("not a bare pickle file")

// OpenBare opens path, a regular file that holds one bare pickle, plain or
// under one layer of compression, and returns the pickle's bytes (size is
// -1 when compressed). Anything else (a zip, .npy, stdin, ...) gives
// ErrNotBare. finish must be called: it reads what is left of a compressed
// stream so that its trailer is checked, releases everything, and returns
// the first decompression error (corrupt data, the decompression limit).
// finish may be called more than once. Callers that take this shortcut
// must still refuse content they don't know (joblib, legacy torch): Open is
// the reference.
func OpenBare(path string, iopt Options) (r io.Reader, size int64, finish func() error, err error) {
	return openDecompressed(path, iopt, true)
}

// OpenDecompressed is OpenBare for any content: the bytes of the regular
// file at path, decompressed when it is under one layer of compression
// (size -1 then), whatever they hold (a .npy file's, pk canon's writer of
// them). finish must be called, as OpenBare's.
func OpenDecompressed(path string, iopt Options) (r io.Reader, size int64, finish func() error, err error) {
	return openDecompressed(path, iopt, false)
}

func openDecompressed(path string, iopt Options, bare bool) (r io.Reader, size int64, finish func() error, err error) {
	if ReadOnce(path) {
		return nil, 0, nil, ErrNotBare // (stdin, a pipe: never opened only to look)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, nil, ErrNotBare
	}
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(16)
	kind := sniffCompression(head)
	if kind == "" {
		if bare && !PlainPickle(head) {
			f.Close()
			return nil, 0, nil, ErrNotBare
		}
		return br, fi.Size(), func() error { return f.Close() }, nil
	}
	limit := iopt.limit(fi.Size())
	dec, closer, err := decompressor(kind, br, limit, fi.Size(), func() io.Reader { return io.NewSectionReader(f, 0, fi.Size()) })
	if err != nil {
		f.Close()
		return nil, 0, nil, ErrNotBare
	}
	ra := newReadAhead(dec)
	lim := &limitReader{r: ra, limit: limit, file: path, layer: kind + "-decompressed stream"}
	inner := bufio.NewReaderSize(lim, 256<<10)
	var once sync.Once
	var ferr error
	finish = func() error {
		once.Do(func() {
			ferr = lim.drain()
			ra.Close()
			closer()
			f.Close()
		})
		return ferr
	}
	head, _ = inner.Peek(16)
	if bare && !PlainPickle(head) {
		finish()
		return nil, 0, nil, ErrNotBare
	}
	return inner, -1, finish, nil
}
