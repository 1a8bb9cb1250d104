package trace

// Elements and cells: pk diff names a changed element of an array or
// tensor root['fc.weight'][3, 7], and a changed cell of a pandas frame
// root['score'][42] (column and row label; a Series' root[42]). Neither is
// an object of the pickle, so no line of the tree has that path; --path
// finds the array (a frame's: the block that holds the column) and says
// which element of it the path names, with its value when its bytes are
// in memory or can be read again. pkg/path reads the steps
// (ElementIndex, Label); this file only looks them up.

import (
	"errors"
	"io"
	"math"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Element is the element of an array or tensor, or the cell of a pandas
// DataFrame or Series, that a path names.
type Element struct {
	Path string // the element's path, as pkg/path spells it
	// At is the path of the node FindElement returns: the array or tensor
	// holding the element (a cell's: the values of the frame's block that
	// holds its column), or the element itself when it is an object of the
	// pickle (an item of an object array)
	At string
	// Frame, Column and Row say where a cell is: the path of the frame
	// (or Series), the column's and the row's label as path keys
	// (['score'], [42]; Column "" for a Series) and the row's position
	Frame       string
	Series      bool // the frame is a pandas Series
	Column, Row string
	RowPos      int64
	Kind        string // what holds it: "numpy.ndarray", "joblib array", "torch.Tensor", "torch storage", "object array"
	DType       string // as the holder's label names it (int32, float32)
	Shape       []int64
	Index       []int64 // of the element in the holder
	Value       string  // as Python prints the scalar; "" when it is not read (Why)
	Typed       array.Value
	HasTyped    bool
	Why         string // why the value is not shown
	Ext         string // a pandas extension column's cell: what the array holding it is
	Tensor      string // Kind "torch storage" (root['w']<data>[k]): the path of the tensor whose storage it is
}

// Line is the line pk trace --path prints above the tree: which element
// the path names, of what, and its value.
func (e *Element) Line() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Frame != "" {
		b.WriteString(": the cell of ")
		if e.Column != "" {
			b.WriteString("column " + e.Column + ", ")
		}
		what := "frame"
		if e.Series {
			what = "Series"
		}
		b.WriteString("row " + e.Row + " (position " + itoa(e.RowPos) + ") of the " + what + " at " + e.Frame + ";")
	} else {
		b.WriteString(":")
	}
	b.WriteString(" element " + ppath.Element(e.Index) + " of the " + strings.TrimSpace(e.DType+" "+array.ShapeText(e.Shape)) + " " + e.Kind)
	if e.Tensor != "" {
		b.WriteString(" of the tensor at " + e.Tensor + ",")
	}
	b.WriteString(" at " + e.At)
	if e.Ext != "" {
		b.WriteString(", " + e.Ext)
	}
	if e.Kind == "object array" {
		b.WriteString(", the object below")
		return b.String()
	}
	b.WriteString(" (below): ")
	if e.Value != "" {
		b.WriteString("value " + e.Value)
	} else {
		b.WriteString("value not read: " + e.Why)
	}
	return b.String()
}

// FindElement is Find for a path that may name an element of an array or
// tensor or a cell of a frame: the item at the path, or the item holding
// the element with the element (nil for a path that names an object).
func (t *Tree) FindElement(p string) (Item, *Element, error) {
	if f := t.found; f != nil && f.p == p {
		return f.it, f.elem, f.err
	}
	it, elem, err := t.findElement(p)
	t.found = &foundAt{p, it, elem, err}
	return it, elem, err
}

// foundAt is FindElement's answer for path p.
type foundAt struct {
	p    string
	it   Item
	elem *Element
	err  error
}

func (t *Tree) findElement(p string) (Item, *Element, error) {
	it, err := t.findPath(p)
	if err == nil {
		return it, nil, nil
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		return Item{}, nil, err
	}
	parsed, perr := ppath.Parse(p)
	if perr != nil {
		return Item{}, nil, err
	}
	if alt, ok, err2 := t.effect(parsed); ok && err2 == nil {
		parsed = alt
	}
	if x, e, ok := t.element(parsed); ok {
		e.Path = parsed.String()
		return x, e, nil
	}
	return Item{}, nil, err
}

// locate is findPath of a parsed path.
func (t *Tree) locate(parsed ppath.Path) (Item, bool) {
	it, err := t.find(parsed)
	if err == nil {
		return it, true
	}
	if alt, ok := t.unfold(parsed, 0); ok {
		return alt, true
	}
	return Item{}, false
}

// itemOf is the item of node n of stream st, where the tree shows it.
func (t *Tree) itemOf(st *StreamTree, n pickle.ID) (Item, bool) {
	parsed, err := ppath.Parse(t.PathOf(st, n))
	if err != nil {
		return Item{}, false
	}
	return t.locate(parsed)
}

// element reads the last step of parsed as an element of the array or
// tensor before it (or a row of the Series before it), or its last two as
// a cell of the DataFrame before them or an element of the storage of the
// tensor before them (T<data>[k]).
func (t *Tree) element(parsed ppath.Path) (Item, *Element, bool) {
	n := len(parsed)
	if n < 2 || parsed[n-1].Kind != ppath.SKey {
		return Item{}, nil, false
	}
	if x, ok := t.locate(parsed[:n-1]); ok && x.Kind == ItemPart && x.part != nil && x.part.idx >= 0 && t.Doc != nil {
		// the data of a .npy file (root)
		if p := &t.Doc.Parts[x.part.idx]; p.Raw != nil && p.Role == input.RoleArray {
			if idx, ok := ppath.ElementIndex(parsed[n-1]); ok {
				if it, e, ok := t.rawElement(x, t.Doc, p.Raw, "npy array", idx); ok {
					return it, e, true
				}
			}
		}
	} else if ok && x.Kind == ItemNode {
		if idx, ok := ppath.ElementIndex(parsed[n-1]); ok {
			if it, e, ok := t.arrayElement(x, idx); ok {
				return it, e, true
			}
		}
		if row, ok := ppath.Label(parsed[n-1]); ok {
			if it, e, ok := t.cell(x, nil, row); ok {
				return it, e, true
			}
		}
	}
	if n >= 3 && parsed[n-2].Kind == ppath.SPseudo && parsed[n-2].Name == "data" && parsed[n-2].I < 0 {
		// T<data>[k]: element k of the storage of tensor T
		if x, ok := t.locate(parsed[:n-2]); ok && x.Kind == ItemNode {
			if idx, ok := ppath.ElementIndex(parsed[n-1]); ok {
				if it, e, ok := t.storageElement(x, idx); ok {
					return it, e, true
				}
			}
		}
	}
	if n >= 3 && parsed[n-2].Kind == ppath.SKey {
		col, ok1 := ppath.Label(parsed[n-2])
		row, ok2 := ppath.Label(parsed[n-1])
		if x, ok := t.locate(parsed[:n-2]); ok && ok1 && ok2 && x.Kind == ItemNode {
			if it, e, ok := t.cell(x, &col, row); ok {
				return it, e, true
			}
		}
	}
	return Item{}, nil, false
}

// joblibPart is the raw part (or nested pickle) holding the data of the
// joblib NumpyArrayWrapper n, or nil.
func (st *StreamTree) joblibPart(n pickle.ID) *input.Part {
	if st.attach == nil || st.doc == nil {
		return nil
	}
	for _, a := range st.attach[n] {
		p := &st.doc.Parts[a.part]
		if s, id := partNode(st.doc, p); s == st.Store && id == n {
			return p
		}
	}
	return nil
}

// nested is the first stream of the nested pickle attached to node n (a
// joblib object array's), or nil.
func (t *Tree) nested(st *StreamTree, n pickle.ID) *StreamTree {
	for _, s := range t.Streams {
		if s.up == st && s.upNode == n && s.prefix == "" {
			return s
		}
	}
	return nil
}

// arrayElement is the element at idx of the array or tensor at item x.
func (t *Tree) arrayElement(x Item, idx []int64) (Item, *Element, bool) {
	st, n := x.Stream, x.Node
	s := st.Store
	e := &Element{At: x.Path()}
	var read func(off, size int64) ([]byte, string)
	var order byte = 'C'
	var stride []int64
	var offset int64
	if h, ok := st.header(n); ok {
		e.Kind, e.DType, e.Shape, order = "numpy.ndarray", array.Name(h.Descr.Descr), h.Shape, h.Order
		if !fix(idx, e.Shape) {
			return Item{}, nil, false
		}
		e.Index = idx
		if h.Descr.Object {
			// an object array: its items are objects of the pickle
			l := h.Data
			k := linear(idx, e.Shape, 'C')
			if l < 0 || s.Kind(l) != pickle.KindList || int64(s.NItems(l)) <= k {
				return Item{}, nil, false
			}
			it, ok := t.itemOf(st, s.Items(l)[k])
			if !ok {
				return Item{}, nil, false
			}
			e.Kind, e.DType, e.At = "object array", "object", x.Path()
			return it, e, true
		}
		read = func(off, size int64) ([]byte, string) { return st.dataBytes(h.Data, off, size) }
		e.DType = array.Name(h.Descr.Descr)
		return t.finishElement(x, e, h.Descr.Descr, h.Descr.Size, order, nil, 0, read)
	}
	if p := st.joblibPart(n); p != nil {
		if p.Raw == nil {
			// an object array: its nested pickle's array
			ns := t.nested(st, n)
			if ns == nil || ns.Store.Root < 0 {
				return Item{}, nil, false
			}
			it, ok := t.itemOf(ns, ns.Store.Root)
			if !ok {
				return Item{}, nil, false
			}
			it, e, ok := t.arrayElement(it, idx)
			if ok {
				e.At = x.Path() // (the array its nested pickle makes is <data>)
			}
			return it, e, ok
		}
		return t.rawElement(x, st.doc, p.Raw, "joblib array", idx)
	}
	if st.doc != nil {
		if tr, ok := st.doc.TensorAt(s, n); ok && tr.Storage.DType != "" {
			e.Kind, e.DType, e.Shape = "torch.Tensor", tr.Storage.DType, tr.Shape
			if !fix(idx, e.Shape) {
				return Item{}, nil, false
			}
			e.Index = idx
			stride, offset = tr.Stride, tr.Offset
			return t.finishElement(x, e, tr.Storage.DType, array.ItemSize(tr.Storage.DType), 'C', stride, offset, storageRead(tr.Storage))
		}
	}
	return Item{}, nil, false
}

// storageRead reads the bytes of a torch storage (a zip member, a legacy
// record, pickle.dump's nested torch.save bytes).
func storageRead(sr *input.StorageRef) func(off, size int64) ([]byte, string) {
	return func(off, size int64) ([]byte, string) {
		if sr.Part == nil && !sr.FromBytes {
			return nil, "the file has no storage " + quote(sr.Key, -1)
		}
		return readAt(sr.Open, off, size)
	}
}

// storageElement is element idx (one index, in the storage's elements) of
// the storage of the tensor at item x: what pk diff names
// root['w']<data>[k] when the storages of two tensors differ where the
// tensor's view (shape, stride, storage offset) does not see. The item is
// the storage, where the tree shows it (the tensor's .__reduce__[1][0],
// or where a storage shared by several tensors is counted).
func (t *Tree) storageElement(x Item, idx []int64) (Item, *Element, bool) {
	st, n := x.Stream, x.Node
	if st.doc == nil || len(idx) != 1 {
		return Item{}, nil, false
	}
	tr, ok := st.doc.TensorAt(st.Store, n)
	if !ok || tr.Storage == nil || tr.Storage.DType == "" {
		return Item{}, nil, false
	}
	sr := tr.Storage
	sx := x
	if a := arg(st.Store, n, 0); a != pickle.NoID {
		if it, ok := t.itemOf(st, a); ok {
			sx = it
		}
	}
	e := &Element{At: sx.Path(), Tensor: x.Path(), Kind: "torch storage", DType: sr.DType, Shape: []int64{sr.Numel}}
	if !fix(idx, e.Shape) {
		return Item{}, nil, false
	}
	e.Index = idx
	return t.finishElement(sx, e, sr.DType, array.ItemSize(sr.DType), 'C', nil, 0, storageRead(sr))
}

// rawElement is the element at idx of the array whose data is raw part r
// of doc d (a joblib array's, a .npy file's), shown at item x.
func (t *Tree) rawElement(x Item, d *input.Doc, r *input.Raw, kind string, idx []int64) (Item, *Element, bool) {
	if r.DType == "" || r.Shape == nil || !fix(idx, r.Shape) {
		return Item{}, nil, false
	}
	e := &Element{At: x.Path(), Kind: kind, DType: array.Name(r.DType), Shape: r.Shape, Index: idx}
	var order byte = 'C'
	if r.Order == "F" {
		order = 'F'
	}
	open := d.RawOpener(r)
	read := func(off, size int64) ([]byte, string) {
		if open == nil {
			return nil, "the array's data cannot be read again (standard input)"
		}
		return readAt(open, off, size)
	}
	return t.finishElement(x, e, r.DType, array.ItemSize(r.DType), order, nil, 0, read)
}

// finishElement reads the element's bytes (item bytes at its place in
// memory: order, or a tensor's stride and storage offset) and formats them.
func (t *Tree) finishElement(x Item, e *Element, descr string, item int64, order byte, stride []int64, offset int64, read func(off, size int64) ([]byte, string)) (Item, *Element, bool) {
	dt, ok := array.ParseDType(descr)
	if !ok || int64(dt.Size) != item || item <= 0 {
		e.Why = "pk does not decode dtype " + descr
		return x, e, true
	}
	var k int64
	if stride != nil {
		if len(stride) != len(e.Index) {
			return Item{}, nil, false
		}
		k = offset
		for d, i := range e.Index {
			k += i * stride[d]
		}
	} else {
		k = linear(e.Index, e.Shape, order)
	}
	if k < 0 || k > math.MaxInt64/item {
		return Item{}, nil, false
	}
	b, why := read(k*item, item)
	if b == nil {
		e.Why = why
		return x, e, true
	}
	e.Value = dt.Format(b)
	e.Typed, e.HasTyped = dt.Decode(b), true
	return x, e, true
}

// fix checks an index against a shape (numpy's negative indices count from
// the end, and are made positive).
func fix(idx, shape []int64) bool {
	if len(idx) != len(shape) {
		return false
	}
	for d := range idx {
		if idx[d] < 0 {
			idx[d] += shape[d]
		}
		if idx[d] < 0 || idx[d] >= shape[d] {
			return false
		}
	}
	return true
}

// linear is the place in memory of the element at idx of an array of
// shape laid out in order 'C' or 'F'.
func linear(idx, shape []int64, order byte) int64 {
	var k, acc int64 = 0, 1
	for j := range idx {
		d := len(idx) - 1 - j
		if order == 'F' {
			d = j
		}
		k += idx[d] * acc
		acc *= max(shape[d], 1)
	}
	return k
}

// readAt reads size bytes at off of what open opens.
func readAt(open func() (io.ReadCloser, error), off, size int64) ([]byte, string) {
	rc, err := open()
	if err != nil {
		return nil, "the element bytes cannot be read again (" + err.Error() + ")"
	}
	defer rc.Close()
	if sk, ok := rc.(io.Seeker); ok {
		if _, err := sk.Seek(off, io.SeekCurrent); err != nil {
			return nil, "the element bytes cannot be read again (" + err.Error() + ")"
		}
	} else if _, err := io.CopyN(io.Discard, rc, off); err != nil {
		return nil, "the data ends before the element"
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, "the data ends before the element"
	}
	return b, ""
}

// dataBytes reads size bytes at off of an array's data node: bytes or a
// bytearray (in memory, or a payload of 1 MiB or more read again from the
// file), protocol 0-2's _codecs.encode(text, 'latin1').
func (st *StreamTree) dataBytes(data pickle.ID, off, size int64) ([]byte, string) {
	s := st.Store
	if data < 0 {
		return nil, "the array has no data in the pickle"
	}
	switch s.Kind(data) {
	case pickle.KindBytes, pickle.KindByteArray:
		if bl := s.Blob(data); bl != nil {
			if off+size > bl.Len {
				return nil, "the data ends before the element"
			}
			if open := st.doc.StreamSection(bl.Offset+off, size); open != nil {
				return readAt(open, 0, size)
			}
			return nil, "the array's data is a payload of " + commas(bl.Len) + " bytes that cannot be read again here (a zip member, standard input)"
		}
		txt := s.Str(data)
		if int64(len(txt)) < off+size {
			return nil, "the data ends before the element"
		}
		return []byte(txt[off : off+size]), ""
	case pickle.KindBuffer:
		return nil, "the array's data is an out-of-band buffer, not in the file"
	case pickle.KindCall:
		if callee(s, data) == "_codecs.encode" {
			a := arg(s, data, 0)
			if a == pickle.NoID || s.Kind(a) != pickle.KindStr {
				break
			}
			if s.Blob(a) != nil {
				return nil, "the array's data is latin-1 text of " + commas(s.PayloadLen(a)) + " bytes, not read again"
			}
			// its latin-1 characters are the bytes
			txt := s.Str(a)
			var out []byte
			var i int64
			for _, r := range txt {
				if r > 0xff {
					return nil, "the array's data is not latin-1 text"
				}
				if i >= off {
					out = append(out, byte(r))
					if int64(len(out)) == size {
						return out, ""
					}
				}
				i++
			}
			return nil, "the data ends before the element"
		}
	}
	return nil, "pk does not read this array's data"
}

// maxRowLabels bounds the bytes of a row Index read again (as pk diff's).
const maxRowLabels = 8 << 20

// cell is the cell at column col (nil for a Series) and row label row of
// the frame or Series at item x: the block's values array, and the cell.
func (t *Tree) cell(x Item, col *ppath.Value, row ppath.Value) (Item, *Element, bool) {
	st := x.Stream
	f, ok := st.arrays().FrameAt(x.Node)
	if !ok || f.Series != (col == nil) {
		return Item{}, nil, false
	}
	if id, descr := f.RowData(); id != pickle.NoID && descr == "<i8" && f.Rows <= maxRowLabels/8 {
		// an int64 row Index whose labels are not in the store: a joblib
		// raw part, protocol 0-2's latin-1 text, a payload read again
		if p := st.joblibPart(id); p != nil && p.Raw != nil {
			if open := st.doc.RawOpener(p.Raw); open != nil {
				if b, _ := readAt(open, 0, p.Raw.Len); b != nil {
					f.SetRowInts(string(b))
				}
			}
		} else if h, ok := st.header(id); ok {
			if b, _ := st.dataBytes(h.Data, 0, 8*f.Rows); b != nil {
				f.SetRowInts(string(b))
			}
		}
	}
	r := int64(-1)
	for i := int64(0); i < f.Rows; i++ {
		if l, ok := f.Row(i); ok && labelIs(l, row) {
			r = i
			break
		}
	}
	if r < 0 {
		return Item{}, nil, false
	}
	b, j := 0, 0
	if col != nil {
		found := false
		for bi := range f.Blocks {
			for ji := range f.Blocks[bi].Locs {
				if l, ok := f.Column(bi, ji); ok && labelIs(l, *col) {
					b, j, found = bi, ji, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return Item{}, nil, false
		}
	}
	values := f.Blocks[b].Values
	idx := []int64{r}
	if col != nil {
		idx = []int64{int64(j), r}
	}
	var ext string
	if x := f.Blocks[b].Ext; x != nil {
		// an extension column: its element of the array that holds it (a
		// category's code, a masked array's value, a string's item)
		values, idx = x.Data, []int64{r}
		if x.Data2D {
			idx = []int64{0, r} // a datetime block's (1, rows)
		}
		ext = map[byte]string{'c': "the codes of a category column", 'm': "the values of a masked column (its _mask says which are <NA>)", 'n': "the data of an extension column", 't': "the int64 counts of a datetime or timedelta column"}[x.Kind]
	}
	vx, ok := t.itemOf(st, values)
	if !ok || vx.Kind != ItemNode {
		return Item{}, nil, false
	}
	it, e, ok := t.arrayElement(vx, idx)
	if !ok {
		return Item{}, nil, false
	}
	// a datetime or timedelta column: its int64 count, and the value as
	// pandas shows it (pk diff's)
	var when string
	var whenOK bool
	if x := f.Blocks[b].Ext; x != nil && x.Kind == 't' && e.HasTyped {
		when, whenOK = x.FormatTime(e.Typed.Int)
	} else if h, ok := st.arrays().ArrayAt(values); ok && x == nil && e.HasTyped {
		if d, ok := array.ParseDType(h.Descr.Descr); ok && (d.Kind == 'M' || d.Kind == 'm') {
			ext = "the int64 counts of a datetime or timedelta column"
			when, whenOK = array.FormatTime(h.Descr.Descr, e.Typed.Int, nil)
		}
	}
	if whenOK {
		ext += ": " + when
	}
	e.Ext = ext
	e.Frame, e.Series, e.Row, e.RowPos = x.Path(), f.Series, ppath.Key(row), r
	if col != nil {
		e.Column = ppath.Key(*col)
	}
	return it, e, true
}

// labelIs reports whether a frame label is the path literal v.
func labelIs(l array.Label, v ppath.Value) bool {
	switch l.Kind {
	case 'i':
		return v.Kind == ppath.KInt && v.Int.IsInt64() && v.Int.Int64() == l.Int
	case 'f':
		return v.Kind == ppath.KFloat && (v.Float == l.Float || math.IsNaN(v.Float) && math.IsNaN(l.Float))
	case 's':
		return v.Kind == ppath.KStr && v.Str == l.Str
	case 'b':
		return v.Kind == ppath.KBool && v.Bool == (l.Int != 0)
	case 'n':
		return v.Kind == ppath.KNone
	}
	return false
}
