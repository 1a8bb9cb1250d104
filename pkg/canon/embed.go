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
//	H digest T count ...   a tuple as pk canon's writer sink has it folded
//	                       (fold.go, the side items): its embedding ('H'
//	                       and its digest, dsize bytes), then 'T' and its
//	                       items (count), which the canonical encoding
//	                       leaves out; read only with a digest size
//	g|G len mod len name   a global by its module and name (G: read from
//	                       a dotted name below protocol 4)
//	N C form nops (b 1)... g|G ... args state...
//	                       a call (form c: REDUCE, w: NEWOBJ, o: INST or
//	                       OBJ without arguments) whose only operations
//	                       are BUILDs of one state each (nops of them): its
//	                       callable a global, then its argument tuple (a
//	                       tuple with its side items), then each BUILD's
//	                       state; the header and the callable read as one
//	                       form, of 1 + nops items
//
// Anything else (a long str by its digest, a tuple without its items, a
// set, a computed global, a call of anything but a global, a call's
// keyword arguments, an operation other than a call's BUILD) is not plain
// here.

// PlainEmbedding reports whether enc is exactly one embedding of the forms
// above (a tuple's with dsize > 0: its digest's size), nested at most
// maxDepth levels. It reads them in one loop with a
// count of the embeddings still to read at each level (pk canon's writer
// sink asks it of every row of a table: a recursive reader cost 2 % of pk
// canon's CPU on one; TestPlainEmbeddingLoop keeps that reader as the
// reference).
func PlainEmbedding(enc []byte, maxDepth, dsize int) bool {
	var small [65]uint64
	left := small[:] // embeddings still to read, by depth
	if maxDepth < 0 {
		return false
	}
	if maxDepth+1 > len(small) { // (deeper than the writer sink reads)
		left = make([]uint64, maxDepth+1)
	}
	left[0] = 1
	depth, i := 0, 0
	for {
		for left[depth] == 0 {
			if depth == 0 {
				return i == len(enc)
			}
			depth--
		}
		left[depth]--
		size, items, _ := PlainForm(enc[i:], dsize)
		if size == 0 {
			return false
		}
		if enc[i] == 'N' && enc[i+1] == 'C' && (i+size == len(enc) || enc[i+size] != 'H') {
			return false // (a call's arguments are a tuple)
		}
		i += size
		if items > 0 {
			if depth == maxDepth {
				return false // (its items would be deeper than maxDepth)
			}
			depth++
			left[depth] = items
		}
	}
}

// PlainForm reads the one form at the start of b, of those above, a list's,
// dict's, tuple's or call's header counting as one form (a tuple's only
// with dsize > 0, its digest's size): its size in bytes (0 when b does not
// start with a whole form of them), for a list, dict, tuple or call the
// embeddings that follow it (a dict's keys and values counted apart; a
// call's arguments and states), and for a str, bytes or int its text (an
// int's magnitude), for a tuple its embedding ('H' and the digest), for a
// global its form and for a call its callable's (PlainGlobal reads them),
// a view of b. It is where the forms' sizes are read:
// PlainEmbedding's loop, the canonical encoding of a run with side items
// (fold.go), and pk canon's writer sink reading a run ahead (pkg/write,
// touchAhead).
func PlainForm(b []byte, dsize int) (size int, items uint64, text []byte) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	switch b[0] {
	case 'n':
		return 1, 0, nil
	case 'b':
		if len(b) < 2 {
			return 0, 0, nil
		}
		return 2, 0, nil
	case 'f':
		if len(b) < 9 {
			return 0, 0, nil
		}
		return 9, 0, nil
	case 'i':
		if len(b) < 2 || b[1] != '+' && b[1] != '-' {
			return 0, 0, nil
		}
		l, w := binary.Uvarint(b[2:])
		if w <= 0 || l > uint64(len(b)) || 2+w+int(l) > len(b) {
			return 0, 0, nil
		}
		return 2 + w + int(l), 0, b[2+w : 2+w+int(l)]
	case 's', 'y':
		l, w := binary.Uvarint(b[1:])
		if w <= 0 || l > InlineMax || 1+w+int(l) > len(b) {
			return 0, 0, nil
		}
		return 1 + w + int(l), 0, b[1+w : 1+w+int(l)]
	case 'g', 'G':
		size, _, _ := globalForm(b)
		return size, 0, b[:size]
	case 'N':
		if len(b) >= 2 && b[1] == 'C' {
			return plainCall(b)
		}
		if len(b) < 2 || b[1] != 'l' && b[1] != 'd' {
			return 0, 0, nil
		}
		cnt, w := binary.Uvarint(b[2:])
		if w <= 0 || cnt > uint64(len(b)) {
			return 0, 0, nil
		}
		j := 2 + w
		if j >= len(b) || b[j] != 0 { // no operations
			return 0, 0, nil
		}
		if b[1] == 'd' {
			cnt *= 2
		}
		return j + 1, cnt, nil
	case 'H':
		j := 1 + dsize
		if dsize <= 0 || j >= len(b) || b[j] != 'T' {
			return 0, 0, nil
		}
		cnt, w := binary.Uvarint(b[j+1:])
		if w <= 0 || cnt > uint64(len(b)) {
			return 0, 0, nil
		}
		return j + 1 + w, cnt, b[:j]
	}
	return 0, 0, nil
}

// plainCall is PlainForm of a call's header and callable at the start of b
// ('N', 'C', ...: see above).
func plainCall(b []byte) (size int, items uint64, text []byte) {
	if len(b) < 3 || b[2] != 'c' && b[2] != 'w' && b[2] != 'o' {
		return 0, 0, nil
	}
	nops, w := binary.Uvarint(b[3:])
	if w <= 0 || nops > uint64(len(b)) {
		return 0, 0, nil
	}
	j := 3 + w
	for range nops {
		if j+1 >= len(b) || b[j] != 'b' || b[j+1] != 1 { // (a BUILD of one state)
			return 0, 0, nil
		}
		j += 2
	}
	g, _, _ := globalForm(b[j:])
	if g == 0 {
		return 0, 0, nil
	}
	return j + g, 1 + nops, b[j : j+g]
}

// globalForm reads the global form at the start of b: its size (0 when b
// does not start with a whole one), its module and its name.
func globalForm(b []byte) (size int, mod, name []byte) {
	if len(b) == 0 || b[0] != 'g' && b[0] != 'G' {
		return 0, nil, nil
	}
	i := 1
	var parts [2][]byte
	for k := range parts {
		l, w := binary.Uvarint(b[i:])
		if w <= 0 || l > uint64(len(b)) || i+w+int(l) > len(b) {
			return 0, nil, nil
		}
		parts[k] = b[i+w : i+w+int(l)]
		i += w + int(l)
	}
	return i, parts[0], parts[1]
}

// PlainGlobal returns the module and name of a global's form, text as
// PlainForm gives it for a global or a call (views of it), and whether the
// name was read dotted ('G'). ok is false when text is no such form.
func PlainGlobal(text []byte) (mod, name []byte, dotted, ok bool) {
	size, mod, name := globalForm(text)
	return mod, name, size > 0 && text[0] == 'G', size > 0 && size == len(text)
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
