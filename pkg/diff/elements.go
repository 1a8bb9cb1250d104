package diff

// Arrays and tensors in their users' terms: two arrays of one dtype and
// shape that differ are one entry at the first differing element,
// root['w'][3, 7], with both values and how many elements differ. The
// element bytes are streamed from where they are (a payload in the stream,
// a payload of 1 MiB or more read again from the file, a raw part of a
// joblib, .npy or torch file), never held whole.

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Element is where two arrays first differ (Entry.Elem).
type Element struct {
	Index  []int64 // of the first differing element
	Differ int64   // how many elements differ
	Of     int64   // how many elements each array has
	// At is the path of the object holding the element when it is not the
	// path less its last step: a frame's, for a cell root['score'][42]
	At string
}

// elemSrc opens the element bytes of one side.
type elemSrc func() (io.ReadCloser, error)

// textSrc is bytes held in memory.
func textSrc(s string) elemSrc {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

// read reads the first n bytes of src (n bounded by its caller), or false.
func (src elemSrc) read(n int64) ([]byte, bool) {
	rc, err := src()
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, false
	}
	return b, true
}

// blobSrc reads a streamed payload again from the file (through its
// decompression when it is compressed: the blob's offsets are those of the
// decompressed stream).
func blobSrc(d *input.Doc, bl *pickle.Blob) elemSrc {
	if d == nil || bl.Offset < 0 {
		return nil
	}
	return d.StreamSection(bl.Offset, bl.Len)
}

// nodeSrc is the element bytes of a bytes/bytearray node of doc d.
func nodeSrc(d *input.Doc, n *canon.Node) elemSrc {
	if n == nil {
		return nil
	}
	if k := n.Kind(); k != pickle.KindBytes && k != pickle.KindByteArray {
		return nil
	}
	if bl := n.Blob(); bl != nil {
		if bl.Offset < 0 {
			// bytes pk-canon/2 made of a streamed str (codecs-bytes):
			// its latin-1 bytes, read again by the view
			if r, done, ok := n.OpenBytes(); ok {
				return func() (io.ReadCloser, error) {
					return struct {
						io.Reader
						io.Closer
					}{r, closer(done)}, nil
				}
			}
			return nil
		}
		return blobSrc(d, bl)
	}
	if int64(len(n.Str())) != n.Len() {
		return nil
	}
	return textSrc(n.Str())
}

// closer is a Close that calls done once.
type closer func()

func (c closer) Close() error {
	c()
	return nil
}

// rawSrc is the bytes of a raw part of doc d: a section of the file, or
// of its decompressed stream (a compressed joblib file's array).
func rawSrc(d *input.Doc, r *input.Raw) elemSrc {
	if r == nil {
		return nil
	}
	if d == nil {
		return r.Open
	}
	if open := d.RawOpener(r); open != nil {
		return open
	}
	return nil
}

// maxElemCompare bounds the bytes compared element by element (beyond it
// the digests alone say the arrays differ).
const maxElemCompare = 1 << 40

// firstElements streams both sides (of n bytes each) and returns how many
// elements of size bytes differ, the position of the first and its bytes
// on each side.
func firstElements(sa, sb elemSrc, n, size int64) (differ, first int64, ea, eb []byte, ok bool) {
	if sa == nil || sb == nil || size <= 0 || n%size != 0 || n > maxElemCompare {
		return 0, 0, nil, nil, false
	}
	ra, err := sa()
	if err != nil {
		return 0, 0, nil, nil, false
	}
	defer ra.Close()
	rb, err := sb()
	if err != nil {
		return 0, 0, nil, nil, false
	}
	defer rb.Close()
	chunk := int64(1<<20) - int64(1<<20)%size
	if chunk == 0 {
		chunk = size
	}
	ba, bb := make([]byte, chunk), make([]byte, chunk)
	first = -1
	var at int64
	for at < n {
		want := min(chunk, n-at)
		na, err1 := io.ReadFull(ra, ba[:want])
		nb, err2 := io.ReadFull(rb, bb[:want])
		if err1 != nil || err2 != nil || int64(na) != want || int64(nb) != want {
			return 0, 0, nil, nil, false
		}
		if !bytes.Equal(ba[:want], bb[:want]) {
			for i := int64(0); i < want; i += size {
				if !bytes.Equal(ba[i:i+size], bb[i:i+size]) {
					if first < 0 {
						first = (at + i) / size
						ea = append([]byte(nil), ba[i:i+size]...)
						eb = append([]byte(nil), bb[i:i+size]...)
					}
					differ++
				}
			}
		}
		at += want
	}
	return differ, first, ea, eb, first >= 0
}

// elemDType is the element type of a descr, raw bytes when it is not one
// ParseDType reads (structured dtypes).
func elemDType(descr string, item int64) array.DType {
	if d, ok := array.ParseDType(descr); ok && int64(d.Size) == item {
		return d
	}
	return array.DType{Kind: 'V', Size: int(item)}
}

// elemEdge is the step of an element: [i] in one dimension, [i, j] in more,
// [()] for a 0-d array (pkg/path's Element, which ElementIndex reads back).
func elemEdge(idx []int64) string { return ppath.Element(idx) }

// elemValue is an element as a typed JSON value (pkg/jsonl), nil for the
// kinds that have none (complex, raw bytes).
func elemValue(v array.Value) json.RawMessage { return jsonl.Element(v) }

// elemNote is "1 of 1,000 elements differ".
func elemNote(differ, of int64) string {
	w := "elements differ"
	if differ == 1 && of == 1 {
		w = "element differs"
	}
	return Thousands(differ) + " of " + Thousands(of) + " " + w
}

// arrayEntry is the entry of two arrays (descr, item size, shape and
// order each) at path whose element bytes sa and sb stream: the first
// differing element when dtype and shape agree, else what changed. ok is
// false when the bytes could not be compared (the caller keeps its own
// entry).
func arrayEntry(path, descrA, descrB string, item int64, shA, shB []int64, ordA, ordB byte, sa, sb elemSrc) (Entry, bool) {
	ra := &Array{DType: descrA, Shape: shA}
	rb := &Array{DType: descrB, Shape: shB}
	if descrA != descrB || !slices.Equal(shA, shB) {
		e := Entry{NoOffset: true, Path: path, Kind: Changed, ArrA: ra, ArrB: rb,
			A: "array " + descrA + " " + array.ShapeText(shA), B: "array " + descrB + " " + array.ShapeText(shB)}
		var what []string
		if descrA != descrB {
			what = append(what, "dtype "+descrA+" → "+descrB)
		}
		if !slices.Equal(shA, shB) {
			what = append(what, "shape "+array.ShapeText(shA)+" → "+array.ShapeText(shB))
		}
		e.Note = strings.Join(what, ", ")
		return e, true
	}
	n, ok := array.NBytes(shA, item)
	of, _ := array.Count(shA)
	if !ok {
		return Entry{}, false
	}
	if ordA != ordB {
		return orderEntry(path, descrA, item, shA, ordA, ordB, sa, sb, n, of, ra, rb)
	}
	differ, first, ea, eb, ok := firstElements(sa, sb, n, item)
	if !ok {
		return Entry{}, false
	}
	return elemEntry(path, array.Index(first, shA, ordA), elemDType(descrA, item), ea, eb, differ, of, ra, rb), true
}

// elemEntry is the entry of the first differing element at index idx.
func elemEntry(path string, idx []int64, dt array.DType, ea, eb []byte, differ, of int64, ra, rb *Array) Entry {
	return Entry{NoOffset: true, Path: path + elemEdge(idx), Kind: Changed,
		A: dt.Format(ea), B: dt.Format(eb), ValA: elemValue(dt.Decode(ea)), ValB: elemValue(dt.Decode(eb)),
		ArrA: ra, ArrB: rb, Elem: &Element{Index: idx, Differ: differ, Of: of}, Note: elemNote(differ, of)}
}

// arraySrc is the element bytes of an array node of doc d.
func arraySrc(d *input.Doc, n *canon.Node, a *canon.Array) elemSrc {
	switch {
	case a.Raw != nil:
		return rawSrc(d, a.Raw)
	case a.Data != pickle.NoID:
		return nodeSrc(d, n.ArrayData())
	}
	return nil
}

// arrays compares two array nodes (pk-canon/2's view): one entry at the
// first differing element, or at the array when dtype or shape changed;
// the items of two object arrays of one dimension, item by item.
func (c *cmp) arrays(a, b *canon.Node, path pathRef) ([]task, bool) {
	xa, xb := a.Array(), b.Array()
	if xa == nil || xb == nil {
		return nil, false
	}
	at := c.paths.String(path)
	if xa.Object() && xb.Object() && len(xa.Shape) == 1 && len(xb.Shape) == 1 {
		if la, lb := a.ArrayData(), b.ArrayData(); la != nil && lb != nil {
			return c.seq(itemsOf(la), itemsOf(lb), path, itemsForm, nil, nil), true
		}
	}
	if xa.Object() && xb.Object() && xa.Descr == xb.Descr && slices.Equal(xa.Shape, xb.Shape) {
		// an object array of 0 or several dimensions: its items (in C
		// order) pair by index, each named as numpy takes it, root[1, 2]
		if la, lb := a.ArrayData(), b.ArrayData(); la != nil && lb != nil && la.NItems() == lb.NItems() {
			ia, ib := la.Items(), lb.Items()
			var kids []task
			for i := range ia {
				if c.differs(ia[i], ib[i]) {
					kids = append(kids, task{a: ia[i], b: ib[i], path: c.paths.child(path, elemEdge(array.Index(int64(i), xa.Shape, 'C'))), differ: true})
				}
			}
			return kids, true
		}
	}
	if xa.Object() || xb.Object() {
		return nil, false
	}
	e, ok := arrayEntry(at, xa.Descr, xb.Descr, xa.Item, xa.Shape, xb.Shape, xa.Order, xb.Order, arraySrc(c.docA, a, xa), arraySrc(c.docB, b, xb))
	if !ok {
		e = Entry{Path: at, Kind: Changed, A: xa.String(), B: xb.String(), ArrA: &Array{DType: xa.Descr, Shape: xa.Shape}, ArrB: &Array{DType: xb.Descr, Shape: xb.Shape}}
		switch {
		case xa.Order != xb.Order:
			e.Note = "elements differ, in memory orders " + string(xa.Order) + " and " + string(xb.Order)
		default:
			e.Note = "elements differ; the element bytes of a compressed input, an out-of-band buffer or stdin are not read again"
		}
	}
	e.NoOffset, e.OffA, e.OffB = false, a.Offset(), b.Offset()
	c.add(e)
	return nil, true
}

// foreignArrays compares a joblib object array with a pickled one (or an
// .npy file's) at path: the joblib one is the array its nested pickle
// makes (canon's Foreign), whose items are compared with the other's as
// two pickled object arrays are (c.arrays: root[1], root[1, 2]), in
// withForeign. ok is false when a and b are not such a pair (two joblib
// object arrays are compared as their nested pickles, heldObjects), when
// already below one (no deeper) or when their items are not compared
// (c.arrays: shapes that differ).
func (c *cmp) foreignArrays(a, b *canon.Node, path pathRef) bool {
	ok := false
	c.withForeign(a, b, func(a, b *canon.Node) {
		var kids []task
		kids, ok = c.arrays(a, b, path)
		for _, k := range kids {
			c.walkFrom(k)
		}
	})
	return ok
}

// withForeign runs f on a and b, one of them a joblib object array (the
// other not), with that one replaced by the object array its nested
// pickle makes: a node of that pickle's own view (canon's Foreign). f runs
// with the tables of that view on its side (fingerprints, objects seen,
// pairs compared, the store, side A's blocks left out: all by node ID of
// one view), and the walk's own are put back after; side A's c.skip marks
// made for the nested array are made for a. It reports whether f ran: not
// when neither or both are joblib object arrays, either is no object
// array, or already in f (no deeper).
func (c *cmp) withForeign(a, b *canon.Node, f func(a, b *canon.Node)) bool {
	fa, fb := a.Foreign(), b.Foreign()
	if (fa == nil) == (fb == nil) || c.inForeign {
		return false
	}
	outerA := a
	if fa != nil {
		a = fa
	} else {
		b = fb
	}
	if xa, xb := a.Array(), b.Array(); xa == nil || xb == nil || !xa.Object() || !xb.Object() {
		return false
	}
	ta, tb, storeA, storeB, seenA, seenB, pairs, skip := c.ta, c.tb, c.storeA, c.storeB, c.seenA, c.seenB, c.pairs, c.skip
	table := func(n *canon.Node, algo canon.Algo) *fpTable {
		v := n.View()
		v.SetFreshNodes(true)
		defer v.SetFreshNodes(false)
		return newFPTable(algo, n)
	}
	if fa != nil {
		c.ta, c.storeA, c.seenA, c.skip = table(a, c.optA.Algo), a.View().Store(), &seenPaths{}, nil
	} else {
		c.tb, c.storeB, c.seenB = table(b, c.optB.Algo), b.View().Store(), &seenPaths{}
	}
	c.pairs = &pairSet{}
	c.inForeign = true
	f(a, b)
	c.inForeign = false
	c.ta, c.tb, c.storeA, c.storeB, c.seenA, c.seenB, c.pairs = ta, tb, storeA, storeB, seenA, seenB, pairs
	if fa != nil {
		skipped := c.skip[a.ID()]
		c.skip = skip
		if skipped {
			if c.skip == nil {
				c.skip = map[pickle.ID]bool{}
			}
			c.skip[outerA.ID()] = true
		}
	}
	return true
}

// rawElements is the element entry of two raw parts holding the data of
// one array or tensor at path, or false. A torch storage is read through
// the tensor that uses it (tensor: shape, stride and storage offset);
// a joblib or .npy array through its own dtype, shape and order.
func rawElements(path string, da, db *input.Doc, pa, pb *input.Raw, t *input.TensorRef) (Entry, bool) {
	if pa.DType == "" || pa.DType != pb.DType || pa.Len != pb.Len {
		return Entry{}, false
	}
	item := array.ItemSize(pa.DType)
	if t == nil {
		if pa.Shape == nil || pb.Shape == nil {
			return Entry{}, false
		}
		ord := func(r *input.Raw) byte {
			if r.Order == "F" {
				return 'F'
			}
			return 'C'
		}
		return arrayEntry(path, pa.DType, pb.DType, item, pa.Shape, pb.Shape, array.MemOrder(ord(pa) == 'F', pa.Shape), array.MemOrder(ord(pb) == 'F', pb.Shape), rawSrc(da, pa), rawSrc(db, pb))
	}
	return tensorElements(path, rawSrc(da, pa), rawSrc(db, pb), pa.Len, pa.DType, t)
}

// maxOrderCompare bounds the bytes of each array held to compare two
// arrays stored in different memory orders element by element.
const maxOrderCompare = 64 << 20

// orderEntry compares two arrays of one dtype and shape stored in memory
// orders ordA and ordB ('C', 'F'; n bytes, of elements each) by their
// values, in C index order. pk-canon/2 counts the memory order as part of
// an array's value (docs/canonical-form-2.md §2: np.array_equal of a C and
// a Fortran array of the same values is true, their digests differ), so
// the entry is at the array even when every value is equal, saying so;
// else at the first element whose values differ, with the count.
func orderEntry(path, descr string, item int64, shape []int64, ordA, ordB byte, sa, sb elemSrc, n, of int64, ra, rb *Array) (Entry, bool) {
	if sa == nil || sb == nil || item <= 0 || n > maxOrderCompare {
		return Entry{}, false
	}
	read := func(src elemSrc) ([]byte, bool) { return src.read(n) }
	ba, okA := read(sa)
	bb, okB := read(sb)
	if !okA || !okB {
		return Entry{}, false
	}
	// the element at C index i in a layout of order o
	strides := func(o byte) []int64 {
		st := make([]int64, len(shape))
		acc := int64(1)
		for k := range shape {
			d := k
			if o == 'C' {
				d = len(shape) - 1 - k
			}
			st[d] = acc
			acc *= max(shape[d], 1)
		}
		return st
	}
	sta, stb := strides(ordA), strides(ordB)
	var differ int64
	var firstIdx []int64
	var ea, eb []byte
	for i := int64(0); i < of; i++ {
		idx := array.Index(i, shape, 'C')
		var pa, pb int64
		for d, x := range idx {
			pa += x * sta[d]
			pb += x * stb[d]
		}
		if !bytes.Equal(ba[pa*item:(pa+1)*item], bb[pb*item:(pb+1)*item]) {
			if firstIdx == nil {
				firstIdx = idx
				ea, eb = ba[pa*item:(pa+1)*item], bb[pb*item:(pb+1)*item]
			}
			differ++
		}
	}
	orders := "memory orders " + string(ordA) + " and " + string(ordB)
	if differ == 0 {
		return Entry{NoOffset: true, Path: path, Kind: Changed, ArrA: ra, ArrB: rb,
			A: "array " + descr + " " + array.ShapeText(shape) + orderWord(ordA), B: "array " + descr + " " + array.ShapeText(shape) + orderWord(ordB),
			Note: "the same values, in " + orders + ": np.array_equal is true; pk-canon/2 counts the memory order as part of an array's value"}, true
	}
	e := elemEntry(path, firstIdx, elemDType(descr, item), ea, eb, differ, of, ra, rb)
	e.Note += ", in " + orders
	return e, true
}

// orderWord is how an array's rendering names its memory order.
func orderWord(o byte) string {
	if o == 'F' {
		return " order F"
	}
	return ""
}
