package input

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
)

// errNotBare stops EachStream: the file is not a bare pickle after all.
var errNotBare = errors.New("not a bare pickle")

// EachStream reads the file at path stream by stream (pickle.ParseEach: one
// stream's store at a time, reused for the next), when it is a bare pickle
// file: a regular file that Open would read as plain pickle streams, and
// that turns out to be neither joblib content (a NumpyArrayWrapper's BUILD)
// nor legacy torch (its magic number as the first stream). fn gets each
// stream as it is read; the File has Size and Trailing. ok is false when
// the file is not such a file (nothing was finished, and whatever fn did is
// to be dropped) or any error stopped it, fn's included: the caller then
// opens the file with Open, which says what is wrong in its words.
//
// opt is used as it is, with opt.Replay set to the file (pickle.Keep's
// pass 1) and opt.AfterBuild to the joblib check (it must be nil); pk hash
// and pk scan take this path for bare pickles.
func EachStream(path string, opt pickle.Options, fn func(st *pickle.Stream) error) (file *pickle.File, ok bool) {
	file, _, ok = eachStream(path, opt, Options{}, false, fn)
	return file, ok
}

// EachStreamDecompressed is EachStream for a bare pickle file that may
// also be under one layer of whole-file compression (gzip, zlib, bz2, xz,
// lzma, zstd, lz4; compression names it, "" for none), which Open would
// read as plain pickle streams: the streams are read as the file is
// decompressed (on a goroutine of its own, as Open decompresses), never
// whole, within the decompression limit of iopt, and pass 1 of the
// machine (pickle.Keep) decompresses the file again (Options.Replay, as
// Open does). Offsets are the decompressed stream's, as Open's; File.Size
// is -1 for a compressed file. A decompression error, the limit, or a bad
// trailer gives ok false, as anything else that stops EachStream: Open
// then says what is wrong. pk canon takes this path, and pk hash, pk scan
// and pk dis for a compressed file (Open keeps a store for every stream: a
// million pickles of None in 2 KB of gzip took 0.6 GB through it, 20-50 MB
// this way).
func EachStreamDecompressed(path string, opt pickle.Options, iopt Options, fn func(st *pickle.Stream) error) (file *pickle.File, compression string, ok bool) {
	return eachStream(path, opt, iopt, true, fn)
}

func eachStream(path string, opt pickle.Options, iopt Options, decompress bool, fn func(st *pickle.Stream) error) (file *pickle.File, compression string, ok bool) {
	if ReadOnce(path) {
		return nil, "", false // (a regular file only: never opened to look)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, "", false
	}
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(16)
	var r io.Reader = br
	size := fi.Size()
	opt.Replay = f
	var lim *limitReader
	if kind := sniffCompression(head); kind != "" && decompress {
		limit := iopt.limit(fi.Size())
		ra := &readerAtSize{f, fi.Size(), path}
		dec, closer, err := decompressor(kind, br, limit, fi.Size(), func() io.Reader { return io.NewSectionReader(f, 0, fi.Size()) })
		if err != nil {
			return nil, "", false
		}
		defer closer()
		ahead := newReadAhead(dec)
		defer ahead.Close() // before closer: the goroutine stops reading dec first
		lim = &limitReader{r: ahead, limit: limit, file: path, layer: kind + "-decompressed stream"}
		inner := bufio.NewReaderSize(lim, 256<<10)
		head, _ = inner.Peek(16)
		rp := &replay{file: ra, kind: kind, limit: limit}
		defer rp.Release()
		r, size, compression, opt.Replay = inner, -1, kind, rp
	}
	if len(head) == 0 || !PlainPickle(head) {
		return nil, "", false
	}
	opt.AfterBuild = func(_ *pickle.Reader, s *pickle.Store, n pickle.ID) error {
		if JoblibWrapper(s, n) {
			return errNotBare
		}
		return nil
	}
	rd := pickle.NewReader(r, size, path)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	file, err = pickle.ParseEach(rd, opt, func(st *pickle.Stream) error {
		if st.Index == 0 && TorchLegacyMagic(st.Store()) {
			return errNotBare
		}
		return fn(st)
	})
	if err != nil {
		return nil, "", false
	}
	if lim != nil && lim.drain() != nil {
		// the decompressor's trailer (a bad CRC), or the limit
		return nil, "", false
	}
	return file, compression, true
}

// PeekFile reads the first bytes of the regular file at path (and a gzip
// file's last four) and returns its whole-file compression ("" for none,
// as Open recognises it) and about the number of bytes it holds once
// decompressed, without decompressing it, for what is sized or started
// ahead (pk canon's sketch of the values held once, its compressor): the
// file's size when it is not compressed; a gzip file's trailer's size (the
// decompressed size modulo 4 GiB: taken when it is not below the file's
// own); an xz file's index's (xzSize); else, and for the other
// compressions, eight times the file's size (a guess: pickles compress 3
// to 25 times). size is -1 when the file cannot be read.
func PeekFile(path string) (compression string, size int64) {
	if ReadOnce(path) {
		return "", -1
	}
	f, err := os.Open(path)
	if err != nil {
		return "", -1
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", -1
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	switch kind := sniffCompression(head[:n]); {
	case kind == "":
		return "", fi.Size()
	case kind == "gzip" && fi.Size() >= 18:
		var t [4]byte
		if _, err := f.ReadAt(t[:], fi.Size()-4); err == nil {
			if isize := int64(binary.LittleEndian.Uint32(t[:])); isize >= fi.Size() {
				return kind, isize
			}
		}
		return kind, 8 * fi.Size()
	case kind == "xz":
		if n, ok := xzSize(f, fi.Size()); ok && n >= fi.Size() {
			return kind, n
		}
		return kind, 8 * fi.Size()
	default:
		return kind, 8 * fi.Size()
	}
}

// xzSize returns the decompressed size an xz file's index gives (its last
// stream's: a file of one stream, as xz and Python's lzma write it), read
// from the stream footer back; ok is false when the end of the file is not
// a footer and an index of at most 64 KiB.
func xzSize(f io.ReaderAt, size int64) (n int64, ok bool) {
	var foot [12]byte
	if size < 24 {
		return 0, false
	}
	if _, err := f.ReadAt(foot[:], size-12); err != nil || foot[10] != 'Y' || foot[11] != 'Z' {
		return 0, false
	}
	isize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	if isize > 64<<10 || isize > size-24 {
		return 0, false
	}
	idx := make([]byte, isize)
	if _, err := f.ReadAt(idx, size-12-isize); err != nil || idx[0] != 0 {
		return 0, false
	}
	b := idx[1:]
	recs, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, false
	}
	b = b[k:]
	for range recs {
		if _, k = binary.Uvarint(b); k <= 0 { // (unpadded size)
			return 0, false
		}
		b = b[k:]
		u, k := binary.Uvarint(b)
		if k <= 0 || u > 1<<62 || n > 1<<62 {
			return 0, false
		}
		b = b[k:]
		n += int64(u)
	}
	return n, true
}
