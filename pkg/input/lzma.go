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
// size or all ones) declares the dictionary the encoder used, and
// ulikunitz/xz allocates it whole before the first byte is decoded: a
// 17-byte file declaring 221 MB cost 221 MB of heap. Real files declare
// their preset's window (joblib: 4-64 MiB) whatever their size, so the
// declared size cannot be refused either.
//
// lzmaAlone decodes with a window that starts small and grows only when the
// stream proves it needs more. The window is written into a copy of the
// header (the decoder allocates what the header says, and refuses a header
// above ReaderConfig.DictCap, which stays the bound on the declared size).
// A window smaller than a match distance fails with "writeMatch: distance
// out of range" (a distance is checked before its match is written, and
// every later reference to old bytes goes through such a match first, so a
// small window never decodes wrong bytes; it fails). Then the stream is
// decoded again from its first byte with a window 8 times larger (at most
// the declared one), and the bytes already delivered are skipped.
//
// A retry happens only when the failed attempt had delivered a byte: the
// decoder fills its whole window before it gives out the first byte, so by
// then the output has reached the window (less a match length, 273 bytes),
// and the next window is at most 8 times the output. A stream whose data is
// wrong from the start (a hostile header over a few bytes of noise) fails in
// the first window and is never given the declared one.
//
// The compressed bytes are kept in memory (to decode them again) only while
// the window is below the declared size: at most the compressed size, and
// the first window is 64 times that, so for files above 1/64 of their
// declared dictionary (128 KiB for joblib's 8 MiB default) the first window
// is the declared one and nothing is kept.
type lzmaAlone struct {
	src      io.Reader // compressed bytes not read yet
	seen     []byte    // compressed bytes read so far (after the header), while a retry is possible
	hdr      [lzma.HeaderLen]byte
	dictCap  int   // ReaderConfig.DictCap: the largest declared dictionary accepted
	need     int64 // the largest window the stream may use: declared, at most the uncompressed size
	window   int64 // the current attempt's window
	dec      *lzma.Reader
	out      int64 // bytes delivered to the caller
	got      int64 // bytes the current attempt's decoder gave out (skipped ones included)
	skip     int64 // bytes the current attempt must skip (delivered by an earlier one)
	attempts int
	err      error
}

const (
	lzmaMinWindow  = 1 << 20
	lzmaSizeFactor = 64 // first window: this many times the compressed size (at least lzmaMinWindow)
	lzmaGrowth     = 8
)

// newLzmaAlone reads the header from r; compressed is the stream's size in
// bytes (header included), -1 when not known.
func newLzmaAlone(r io.Reader, dictCap int, compressed int64) (*lzmaAlone, error) {
	z := &lzmaAlone{src: r, dictCap: dictCap}
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
	z.need = declared
	if size := binary.LittleEndian.Uint64(z.hdr[5:]); size != 1<<64-1 && size < uint64(z.need) {
		z.need = int64(size) // the decoder never looks further back than the output
	}
	z.need = max(z.need, lzma.MinDictCap)
	z.window = lzmaMinWindow
	if compressed > 0 && compressed < (1<<40)/lzmaSizeFactor {
		z.window = max(z.window, lzmaSizeFactor*compressed)
	}
	z.window = min(z.window, z.need)
	if err := z.start(); err != nil {
		return nil, err
	}
	return z, nil
}

// start makes the decoder of an attempt.
func (z *lzmaAlone) start() error {
	hdr := z.hdr
	binary.LittleEndian.PutUint32(hdr[1:5], uint32(z.window))
	var body io.Reader
	switch {
	case z.window < z.need && len(z.seen) == 0:
		body = io.TeeReader(z.src, (*appendWriter)(&z.seen))
	case z.window < z.need:
		body = io.MultiReader(bytes.NewReader(z.seen), io.TeeReader(z.src, (*appendWriter)(&z.seen)))
	default: // the last attempt: no retry, nothing more to keep
		body = io.MultiReader(bytes.NewReader(z.seen), z.src)
		z.seen = nil
	}
	dec, err := lzma.ReaderConfig{DictCap: z.dictCap}.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), body))
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
func (z *lzmaAlone) retry(err error) bool {
	if z.window >= z.need || z.got == 0 || !strings.Contains(err.Error(), "distance out of range") {
		return false
	}
	z.window = min(z.need, lzmaGrowth*z.window)
	z.dec = nil
	if err := z.start(); err != nil {
		z.err = err
	}
	return true
}

func (z *lzmaAlone) Read(p []byte) (int, error) {
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
