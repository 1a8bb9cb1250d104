package input

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// An xz file (the .xz format, version 1.0.4 of its specification) is a run of
// streams; each stream a 12-byte header, blocks, an index and a 12-byte
// footer. Each block starts with a header that names its filters; the last is
// LZMA2, whose one property byte encodes the dictionary size. ulikunitz/xz
// allocates that dictionary when the block starts (its ReaderConfig.DictCap
// is a minimum, not a cap), so the block headers are rewritten on the way in:
// xzHeaders copies the compressed bytes and, in each block header whose CRC32
// is right, lowers the dictionary to the attempt's window (and writes the
// CRC32 again). Nothing else changes: the sizes the index records stay true,
// and the check of each block (over its uncompressed bytes) still holds. A
// window too small for the data fails as in windowed (lzma.go), which decodes
// the file again with a larger one, at most the largest dictionary declared.
//
// xzHeaders follows the structure only as far as it needs to find the block
// headers: LZMA2's chunk headers give the length of each chunk, so the end of
// a block is found without decoding. Where the bytes are not what the format
// says, it stops looking and copies the rest as it is, for the decoder to
// refuse.
type xzHeaders struct {
	in       *bufio.Reader
	window   int64
	declared *int64 // the largest dictionary a block header declared so far
	pending  []byte // bytes to give out before reading more
	data     int64  // bytes to copy as they are before the next structure
	state    int
	check    int   // bytes of each block's check field
	block    int64 // bytes of the current block so far (header and data)
	records  uint64
	index    int64 // bytes of the current index so far
	err      error
}

const (
	xzStreamHeader = iota
	xzBlockOrIndex
	xzChunk
	xzIndexRecords
	xzIndexEnd
	xzFooter
	xzStreamPadding
	xzCopy // not understood: copy the rest
)

// newXZ decodes an xz file with windows (lzma.go's windowed); compressed is
// its size (-1: not known), reopen gives its bytes from the start again (nil:
// keep them for a retry).
func newXZ(r io.Reader, compressed int64, reopen func() io.Reader) (io.Reader, error) {
	var declared int64
	z := &windowed{src: r, reopen: reopen, keepAll: true}
	z.need = func() int64 { return max(declared, lzma.MinDictCap) }
	z.window = firstWindow(compressed)
	z.newDec = func(body io.Reader, window int64) (io.Reader, error) {
		h := &xzHeaders{in: bufio.NewReaderSize(body, 64<<10), window: window, declared: &declared}
		return xz.ReaderConfig{DictCap: lzma.MinDictCap}.NewReader(h)
	}
	if err := z.start(); err != nil {
		return nil, err
	}
	return z, nil
}

// xzDictSize is the dictionary size an LZMA2 property byte encodes (0 to 40).
func xzDictSize(b byte) int64 {
	if b >= 40 {
		return 1<<32 - 1
	}
	return int64(2|b&1) << (b/2 + 11)
}

// checkSize is the size of the check field for a stream's check ID.
func xzCheckSize(id byte) int {
	if id == 0 {
		return 0
	}
	return 4 << ((id - 1) / 3)
}

func (h *xzHeaders) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(h.pending) > 0 {
			n := copy(p, h.pending)
			h.pending = h.pending[n:]
			return n, nil
		}
		if h.err != nil {
			return 0, h.err
		}
		if h.data > 0 || h.state == xzCopy {
			q := p
			if h.state != xzCopy && int64(len(q)) > h.data {
				q = q[:h.data]
			}
			n, err := h.in.Read(q)
			if h.state != xzCopy {
				h.data -= int64(n)
			}
			if err != nil {
				h.err = err
			}
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		h.step()
	}
}

// take reads n bytes into pending; false (and the error kept) when it cannot.
func (h *xzHeaders) take(n int) []byte {
	start := len(h.pending)
	buf := make([]byte, n)
	k, err := io.ReadFull(h.in, buf)
	h.pending = append(h.pending[:start], buf[:k]...)
	if err != nil {
		if err == io.EOF && k == 0 && h.state == xzStreamPadding {
			h.err = io.EOF
		} else {
			h.err = io.ErrUnexpectedEOF
		}
		return nil
	}
	return h.pending[start:]
}

// uvarint reads a multibyte integer of the format into pending.
func (h *xzHeaders) uvarint() (uint64, bool) {
	var v uint64
	for i := 0; i < 9; i++ {
		b := h.take(1)
		if b == nil {
			return 0, false
		}
		v |= uint64(b[0]&0x7f) << (7 * i)
		if b[0]&0x80 == 0 {
			return v, true
		}
	}
	h.state = xzCopy
	return 0, false
}

// step reads the next structure into pending (or sets data to copy).
func (h *xzHeaders) step() {
	switch h.state {
	case xzStreamHeader:
		b := h.take(12)
		if b == nil {
			return
		}
		if string(b[:6]) != string(xzMagic) || b[6] != 0 || b[7] > 0x0f {
			h.state = xzCopy
			return
		}
		h.check = xzCheckSize(b[7])
		h.state = xzBlockOrIndex
	case xzBlockOrIndex:
		b := h.take(1)
		if b == nil {
			return
		}
		if b[0] == 0 { // the index
			h.index = 1
			n, ok := h.uvarint()
			if !ok {
				return
			}
			h.index += int64(len(h.pending) - 1)
			h.records = 2 * n
			h.state = xzIndexRecords
			return
		}
		size := (int(b[0]) + 1) * 4
		rest := h.take(size - 1)
		if rest == nil {
			return
		}
		h.rewrite(h.pending[len(h.pending)-size:])
		h.block = int64(size)
		h.state = xzChunk
	case xzChunk:
		b := h.take(1)
		if b == nil {
			return
		}
		c := b[0]
		switch {
		case c == 0: // the end of the block's LZMA2 data; padding, then the check
			h.block++
			h.data = (4-h.block%4)%4 + int64(h.check)
			h.state = xzBlockOrIndex
		case c == 1 || c == 2: // an uncompressed chunk
			s := h.take(2)
			if s == nil {
				return
			}
			h.data = int64(binary.BigEndian.Uint16(s)) + 1
			h.block += 3 + h.data
		case c >= 0x80: // an LZMA chunk: unpacked size, packed size, properties from 0xc0
			n := 4
			if c >= 0xc0 {
				n = 5
			}
			s := h.take(n)
			if s == nil {
				return
			}
			h.data = int64(binary.BigEndian.Uint16(s[2:4])) + 1
			h.block += 1 + int64(n) + h.data
		default:
			h.state = xzCopy
		}
	case xzIndexRecords:
		if h.records == 0 {
			h.state = xzIndexEnd
			return
		}
		start := len(h.pending)
		if _, ok := h.uvarint(); !ok {
			return
		}
		h.index += int64(len(h.pending) - start)
		h.records--
	case xzIndexEnd: // padding to a multiple of four, CRC32
		h.data = (4-h.index%4)%4 + 4
		h.state = xzFooter
	case xzFooter:
		if h.take(12) == nil {
			return
		}
		h.state = xzStreamPadding
	case xzStreamPadding: // zeros in fours, then maybe another stream
		b := h.take(4)
		if b == nil {
			return
		}
		if string(b) != "\x00\x00\x00\x00" {
			if string(b) != string(xzMagic[:4]) {
				h.state = xzCopy
				return
			}
			rest := h.take(8)
			if rest == nil {
				return
			}
			hd := h.pending[len(h.pending)-12:]
			if string(hd[:6]) != string(xzMagic) || hd[6] != 0 || hd[7] > 0x0f {
				h.state = xzCopy
				return
			}
			h.check = xzCheckSize(hd[7])
			h.state = xzBlockOrIndex
		}
	}
}

// rewrite lowers the LZMA2 dictionary of a block header (hdr: all of it, CRC32
// included) to the window, when its CRC32 is right and its filter flags read.
func (h *xzHeaders) rewrite(hdr []byte) {
	body := hdr[:len(hdr)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(hdr[len(hdr)-4:]) {
		return
	}
	flags := body[1]
	i := 2
	varint := func() (uint64, bool) {
		var v uint64
		for k := 0; k < 9 && i < len(body); k++ {
			b := body[i]
			i++
			v |= uint64(b&0x7f) << (7 * k)
			if b&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 {
		if _, ok := varint(); !ok {
			return
		}
	}
	if flags&0x80 != 0 {
		if _, ok := varint(); !ok {
			return
		}
	}
	filters := int(flags&3) + 1
	for f := 0; f < filters; f++ {
		id, ok := varint()
		if !ok {
			return
		}
		size, ok := varint()
		if !ok || size > uint64(len(body)-i) {
			return
		}
		if f == filters-1 && id == 0x21 && size == 1 && body[i] <= 40 {
			declared := xzDictSize(body[i])
			*h.declared = max(*h.declared, declared)
			if h.window < declared {
				c := byte(0)
				for xzDictSize(c) < h.window {
					c++
				}
				body[i] = c
				binary.LittleEndian.PutUint32(hdr[len(hdr)-4:], crc32.ChecksumIEEE(body))
			}
			return
		}
		i += int(size)
	}
}
