package canon

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"unsafe"
)

// Reading embeddings back: the encodings of plain scalars and of lists and
// dicts of them, as the encoder writes them (docs/canonical-form.md), for
// pk canon's writer sink (pkg/write/wsink.go), which writes the subtrees the
// canon sink folded back from their bytes. Only these forms are read:
//
//	n                      None
//	b <0|1>                a bool
//	f <8 bytes>            a float (the bytes of BINFLOAT's argument)
//	i <+|-> len magnitude  an int (big-endian magnitude)
//	s len text, y len text a str or bytes of at most InlineMax bytes
//	N <l|d> count 0 ...    a list (count items) or dict (count key, value
//	                       pairs) with no operations
//
// Anything else (a long str by its digest, a tuple, a set, a call, a
// global, an operation) is not plain here.

// PlainEmbedding reports whether enc is exactly one embedding of the forms
// above, nested at most maxDepth levels.
func PlainEmbedding(enc []byte, maxDepth int) bool {
	n, ok := skipPlain(enc, 0, maxDepth)
	return ok && n == len(enc)
}

// skipPlain returns the end of the plain embedding at the start of b.
func skipPlain(b []byte, depth, maxDepth int) (int, bool) {
	if len(b) == 0 || depth > maxDepth {
		return 0, false
	}
	switch b[0] {
	case 'n':
		return 1, true
	case 'b':
		return 2, len(b) >= 2
	case 'f':
		return 9, len(b) >= 9
	case 'i':
		if len(b) < 2 || b[1] != '+' && b[1] != '-' {
			return 0, false
		}
		l, w := binary.Uvarint(b[2:])
		if w <= 0 || l > uint64(len(b)) || 2+w+int(l) > len(b) {
			return 0, false
		}
		return 2 + w + int(l), true
	case 's', 'y':
		l, w := binary.Uvarint(b[1:])
		if w <= 0 || l > InlineMax || 1+w+int(l) > len(b) {
			return 0, false
		}
		return 1 + w + int(l), true
	case 'N':
		if len(b) < 2 || b[1] != 'l' && b[1] != 'd' {
			return 0, false
		}
		cnt, w := binary.Uvarint(b[2:])
		if w <= 0 || cnt > uint64(len(b)) {
			return 0, false
		}
		i := 2 + w
		if i >= len(b) || b[i] != 0 { // no operations
			return 0, false
		}
		i++
		if b[1] == 'd' {
			cnt *= 2
		}
		for ; cnt > 0; cnt-- {
			n, ok := skipPlain(b[i:], depth+1, maxDepth)
			if !ok {
				return 0, false
			}
			i += n
		}
		return i, true
	}
	return 0, false
}

// Emb is one embedding read by EmbReader: Tag is 'n', 'b', 'f', 'i', 's',
// 'y', 'l' (a list: Count items follow) or 'd' (a dict: Count key, value
// pairs follow).
type Emb struct {
	Tag   byte
	Bool  bool
	Float [8]byte // BINFLOAT's argument
	Neg   bool    // an int's sign
	// Text is a str's or bytes' text, an int's big-endian magnitude; valid
	// until the next call of Next
	Text  string
	Count int
}

// ErrNotPlain is EmbReader's error for bytes that are not a plain
// embedding (or end early).
var ErrNotPlain = errors.New("canon: not a plain embedding")

// EmbReader reads plain embeddings one after the other (a container's
// header, then its items).
type EmbReader struct {
	r   *bufio.Reader
	buf []byte
	f   [8]byte // a float's bits (read here: an Emb read into would escape)
}

// Reset reads from rd next, reusing the buffers.
func (d *EmbReader) Reset(rd io.Reader) {
	if d.r == nil {
		d.r = bufio.NewReaderSize(rd, 64<<10)
	} else {
		d.r.Reset(rd)
	}
}

func (d *EmbReader) text() (string, error) {
	l, err := binary.ReadUvarint(d.r)
	if err != nil || l > math.MaxInt32 {
		return "", ErrNotPlain
	}
	if cap(d.buf) < int(l) {
		d.buf = make([]byte, l)
	}
	d.buf = d.buf[:l]
	if _, err := io.ReadFull(d.r, d.buf); err != nil {
		return "", ErrNotPlain
	}
	return unsafe.String(unsafe.SliceData(d.buf), len(d.buf)), nil
}

// Next reads the next embedding (of a container, its header only).
func (d *EmbReader) Next() (Emb, error) {
	tag, err := d.r.ReadByte()
	if err != nil {
		return Emb{}, ErrNotPlain
	}
	e := Emb{Tag: tag}
	switch tag {
	case 'n':
	case 's', 'y':
		if e.Text, err = d.text(); err != nil {
			return Emb{}, err
		}
	case 'b':
		b, err := d.r.ReadByte()
		if err != nil {
			return Emb{}, ErrNotPlain
		}
		e.Bool = b != 0
	case 'f':
		if _, err := io.ReadFull(d.r, d.f[:]); err != nil {
			return Emb{}, ErrNotPlain
		}
		e.Float = d.f
	case 'i':
		sign, err := d.r.ReadByte()
		if err != nil {
			return Emb{}, ErrNotPlain
		}
		e.Neg = sign == '-'
		if e.Text, err = d.text(); err != nil {
			return Emb{}, err
		}
	case 'N':
		kind, err := d.r.ReadByte()
		if err != nil || kind != 'l' && kind != 'd' {
			return Emb{}, ErrNotPlain
		}
		cnt, err := binary.ReadUvarint(d.r)
		if err != nil || cnt > math.MaxInt32 {
			return Emb{}, ErrNotPlain
		}
		if ops, err := d.r.ReadByte(); err != nil || ops != 0 {
			return Emb{}, ErrNotPlain
		}
		e.Tag, e.Count = kind, int(cnt)
	default:
		return Emb{}, ErrNotPlain
	}
	return e, nil
}
