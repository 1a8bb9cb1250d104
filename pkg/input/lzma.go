package input

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ulikunitz/xz/lzma"
)

// An LZMA-alone header (13 bytes: properties, dictionary size, uncompressed
// size or all ones), like each block header of an xz file, declares the
// dictionary the encoder used, and ulikunitz/xz allocates it whole before the
// first byte is decoded: a 17-byte file declaring 221 MB cost 221 MB of heap,
// a 68-byte xz file declaring 1.5 GiB 1.6 GB. Real files declare their
// preset's window (joblib: 4-64 MiB) whatever their size, so the declared size
// cannot be refused either.
//
// windowed decodes with a window that starts small and grows only when the
// stream proves it needs more. The window is written into a copy of the
// header (the decoder allocates what the header says). A window smaller than
// a match distance fails with "writeMatch: distance out of range" (a distance
// is checked before its match is written, and every later reference to old
// bytes goes through such a match first, so a small window never decodes
// wrong bytes; it fails). Then the stream is decoded again from its first
// byte with a window 8 times larger (at most the declared one), and the bytes
// already delivered are skipped.
//
// A retry happens only when the failed attempt had delivered a byte: the
// decoder fills its whole window before it gives out the first byte, so by
// then the output has reached the window (less a match length, 273 bytes),
// and the next window is at most 8 times the output. A stream whose data is
// wrong from the start (a hostile header over a few bytes of noise) fails in
// the first window and is never given the declared one.
//
// Decoding again needs the compressed bytes from the start: they are read
// from the file again when there is one (reopen), else kept in memory while a
// retry is possible (at most the compressed size; LZMA-alone: the first window
// is 64 times that, so for files above 1/64 of their declared dictionary, 128
// KiB for joblib's 8 MiB default, the first window is the declared one and
// nothing is kept).
type windowed struct {
	src    io.Reader                                             // compressed bytes not read yet
	reopen func() io.Reader                                      // the compressed bytes from the start again, nil: keep them
	seen   []byte                                                // compressed bytes read so far, kept while a retry is possible
	newDec func(body io.Reader, window int64) (io.Reader, error) // a decoder over body with the window
	need   func() int64                                          // the largest window the stream may use (so far)
	window int64                                                 // the current attempt's window
	dec    io.Reader
	out    int64 // bytes delivered to the caller
	got    int64 // bytes the current attempt's decoder gave out (skipped ones included)
	skip   int64 // bytes the current attempt must skip (delivered by an earlier one)
	// attempts counts the decoders made; keepAll says that the bytes are kept
	// whatever the window (xz: a later block may declare a larger dictionary).
	attempts int
	keepAll  bool
	err      error
}

const (
	lzmaMinWindow  = 1 << 20
	lzmaSizeFactor = 64 // first window: this many times the compressed size (at least lzmaMinWindow)
	lzmaGrowth     = 8
)

// firstWindow is the window of the first attempt for a stream of compressed
// bytes (-1: not known).
func firstWindow(compressed int64) int64 {
	w := int64(lzmaMinWindow)
	if compressed > 0 && compressed < (1<<40)/lzmaSizeFactor {
		w = max(w, lzmaSizeFactor*compressed)
	}
	return w
}

// start makes the decoder of an attempt.
func (z *windowed) start() error {
	retry := z.window < z.need() || z.keepAll
	var body io.Reader
	switch {
	case z.attempts > 0 && z.reopen != nil:
		body = z.reopen()
	case z.reopen != nil:
		body = z.src
	case retry && len(z.seen) == 0:
		body = io.TeeReader(z.src, (*appendWriter)(&z.seen))
	case retry:
		body = io.MultiReader(bytes.NewReader(z.seen), io.TeeReader(z.src, (*appendWriter)(&z.seen)))
	default: // the last attempt: no retry, nothing more to keep
		body = io.MultiReader(bytes.NewReader(z.seen), z.src)
		z.seen = nil
	}
	dec, err := z.newDec(body, z.window)
	if err != nil {
		return err
	}
	z.dec, z.got, z.skip = dec, 0, z.out
	z.attempts++
	return nil
}

type appendWriter []byte

func (w *appendWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// retry starts the next attempt when err says the window was too small.
func (z *windowed) retry(err error) bool {
	need := z.need()
	if z.window >= need || z.got == 0 || !strings.Contains(err.Error(), "distance out of range") {
		return false
	}
	z.window = min(need, lzmaGrowth*z.window)
	z.dec = nil
	if err := z.start(); err != nil {
		z.err = err
	}
	return true
}

func (z *windowed) Read(p []byte) (int, error) {
	for {
		if z.err != nil {
			return 0, z.err
		}
		if z.skip > 0 {
			n, err := io.CopyN(io.Discard, z.dec, z.skip)
			z.got += n
			z.skip -= n
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF // it gave these bytes before
				}
				if !z.retry(err) {
					z.err = err
				}
				continue
			}
		}
		n, err := z.dec.Read(p)
		z.got += int64(n)
		z.out += int64(n)
		if err != nil && err != io.EOF && z.retry(err) {
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// lzmaAlone is the windowed decoder of an LZMA-alone stream; its header is
// read first and rewritten for each attempt.
type lzmaAlone struct {
	windowed
	hdr [lzma.HeaderLen]byte
}

// newLzmaAlone reads the header from r; compressed is the stream's size in
// bytes (header included), -1 when not known. dictCap (the decoder's
// ReaderConfig.DictCap) is the largest declared dictionary accepted.
func newLzmaAlone(r io.Reader, dictCap int, compressed int64) (*lzmaAlone, error) {
	z := &lzmaAlone{}
	if _, err := io.ReadFull(r, z.hdr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errors.New("lzma: unexpected EOF in the 13-byte header")
		}
		return nil, err
	}
	declared := int64(binary.LittleEndian.Uint32(z.hdr[1:5]))
	if declared > int64(dictCap) {
		return nil, fmt.Errorf("lzma: header dictionary size %d exceeds the dictionary capacity %d", declared, dictCap)
	}
	need := declared
	if size := binary.LittleEndian.Uint64(z.hdr[5:]); size != 1<<64-1 && size < uint64(need) {
		need = int64(size) // the decoder never looks further back than the output
	}
	need = max(need, lzma.MinDictCap)
	z.src = r
	z.need = func() int64 { return need }
	z.window = min(firstWindow(compressed), need)
	z.newDec = func(body io.Reader, window int64) (io.Reader, error) {
		hdr := z.hdr
		binary.LittleEndian.PutUint32(hdr[1:5], uint32(window))
		return lzma.ReaderConfig{DictCap: dictCap}.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), body))
	}
	if err := z.start(); err != nil {
		return nil, err
	}
	return z, nil
}
