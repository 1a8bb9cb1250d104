package canon

// The array recognizer: the one place that knows how a numpy array is
// written (docs/canonical-form-2.md §2). It owns
//
//   - the dtype: a pickled numpy.dtype (numpy.dtype(typestr, align, copy)
//     REDUCE + BUILD (version, byteorder, subarray, names, fields, elsize,
//     alignment, flags[, metadata])) and a .npy header's type string, read
//     into a canonical descr (Descr);
//   - the array, from every form that writes one: numpy's
//     _reconstruct(ndarray, (0,), b'b') + BUILD (version, shape, dtype,
//     is_fortran, data) at protocols 0-4 (data bytes, or a list for object
//     arrays), _frombuffer(buf, dtype, shape, order) at protocol 5 (buf
//     in-band bytearray/bytes or out-of-band buffer), joblib's
//     NumpyArrayWrapper with its raw part, a .npy file's raw part; under
//     numpy 1's numpy.core and numpy 2's numpy._core names alike.
//
// Recognition reads the normalised view (so protocol 2's
// _codecs.encode(s, 'latin1') data is already bytes) and never copies a
// payload: the element bytes stay where they are (a node's text, a
// streamed blob's digest, a raw part's digest). With Form2 the view
// replaces each array it recognises by an array node (KindArray) that the
// encoding writes as a value (encodeArray); with Form1 nothing here runs.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// KindArray is a numpy array recognised by pk-canon/2 (see Array).
const KindArray = KindTracker + 1

// Rule names of the array recognizer (pk-canon/2).
const (
	RuleNumpyReconstruct = array.RuleNumpyReconstruct // _reconstruct + BUILD, protocols 0-4
	RuleNumpyFrombuffer  = array.RuleNumpyFrombuffer  // _frombuffer, protocol 5
	RuleJoblibArray      = array.RuleJoblibArray      // joblib NumpyArrayWrapper + raw bytes
)

// Array is a recognised numpy array: what pk-canon/2 encodes.
type Array struct {
	Descr string  // canonical dtype descr (see dtypeDescr)
	Item  int64   // bytes per element
	Shape []int64 // dimensions
	Order byte    // 'C' or 'F': the order of the elements in the data
	// The elements: one of
	Data   pickle.ID  // a bytes/bytearray node holding them (view ID), or NoID
	Buffer pickle.ID  // an out-of-band buffer node (protocol 5), or NoID
	Raw    *input.Raw // a raw part (joblib, .npy)
	Items  pickle.ID  // object arrays: the list of items, in C order, or NoID
	Rule   string
}

// Count is the number of elements.
func (a *Array) Count() int64 {
	n, _ := count(a.Shape)
	return n
}

// Object reports whether the array holds Python objects (its Items).
func (a *Array) Object() bool { return a.Items != pickle.NoID }

// small returns the value of an int (or bool) node that fits an int64.
func (v *View) small(n pickle.ID) (int64, bool) {
	n = v.res(n)
	if n < 0 || v.nmuts(n) > 0 || v.specialOf(n) != 0 || (v.kind(n) != pickle.KindInt && v.kind(n) != pickle.KindBool) || v.isBig(n) {
		return 0, false
	}
	return v.ival(n), true
}

// count is the product of the dimensions.
func count(shape []int64) (int64, bool) { return array.Count(shape) }

func shapeText(shape []int64) string { return array.DescrShape(shape) }

// nbytes is count × item size, or false on overflow.
func nbytes(shape []int64, item int64) (int64, bool) { return array.NBytes(shape, item) }

// viewGraph is a view as pkg/array's recognizer reads it.
type viewGraph struct{ v *View }

func (g viewGraph) Res(n pickle.ID) pickle.ID                 { return g.v.res(n) }
func (g viewGraph) Kind(n pickle.ID) pickle.Kind              { return g.v.kind(n) }
func (g viewGraph) Op(n pickle.ID) pickle.Opcode              { return g.v.opOf(n) }
func (g viewGraph) Func(n pickle.ID) pickle.ID                { return g.v.fn(n) }
func (g viewGraph) Args(n pickle.ID) pickle.ID                { return g.v.argsOf(n) }
func (g viewGraph) Kwargs(n pickle.ID) pickle.ID              { return g.v.kwargsOf(n) }
func (g viewGraph) Folded(n pickle.ID) bool                   { return len(g.v.extra(n)) > 0 }
func (g viewGraph) Callable(fn pickle.ID) string              { return g.v.callable(fn) }
func (g viewGraph) Tuple(n pickle.ID) ([]pickle.ID, bool)     { return g.v.tuple(n) }
func (g viewGraph) Str(n pickle.ID) (string, bool)            { return g.v.str(n) }
func (g viewGraph) Small(n pickle.ID) (int64, bool)           { return g.v.small(n) }
func (g viewGraph) Global(n pickle.ID) (string, string, bool) { return g.v.global(n) }
func (g viewGraph) IsNone(n pickle.ID) bool                   { return g.v.isNone(n) }
func (g viewGraph) Muts(n pickle.ID) []pickle.SMut            { return g.v.muts(n) }
func (g viewGraph) NMuts(n pickle.ID) int                     { return g.v.nmuts(n) }
func (g viewGraph) Items(n pickle.ID) []pickle.ID             { return g.v.items(n) }
func (g viewGraph) NItems(n pickle.ID) int                    { return g.v.nitems(n) }
func (g viewGraph) Special(n pickle.ID) byte                  { return g.v.specialOf(n) }
func (g viewGraph) Blob(n pickle.ID) *pickle.Blob             { return g.v.blob(n) }
func (g viewGraph) Text(n pickle.ID) string                   { return g.v.text(n) }
func (g viewGraph) PayloadLen(n pickle.ID) int64              { return g.v.plen(n) }

// arrays is the view's array recognizer (pkg/array), made when first
// needed: it reads each dtype node once.
func (v *View) arrayReader() *array.Reader {
	if v.arrR == nil {
		v.arrR = array.NewReader(viewGraph{v})
	}
	return v.arrR
}

func newArray(h *array.Header) *Array {
	return &Array{Descr: h.Descr.Descr, Item: h.Descr.Size, Shape: h.Shape, Order: h.Order,
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Rule: h.Rule}
}

// reconstructArray reads numpy's protocol 0-4 form (array.Reader.Reconstruct)
// with its data: the bytes of the elements, or the list of an object array's
// items.
func (v *View) reconstructArray(n pickle.ID) (*Array, bool) {
	r := v.arrayReader()
	h, ok := r.Reconstruct(n)
	if !ok {
		return nil, false
	}
	a := newArray(h)
	if h.Descr.Object {
		l := v.res(h.Data)
		c, _ := count(h.Shape)
		if v.kind(l) != pickle.KindList || v.nmuts(l) > 0 || int64(v.nitems(l)) != c {
			return nil, false
		}
		a.Items = l
		return a, true
	}
	want, ok := nbytes(h.Shape, h.Descr.Size)
	if !ok {
		return nil, false
	}
	data, ok := r.Bytes(h.Data, want)
	if !ok || v.kind(data) != pickle.KindBytes {
		return nil, false
	}
	a.Data = data
	return a, true
}

// frombufferArray reads numpy's protocol 5 form (array.Reader.Frombuffer)
// with its buffer: in-band bytes or bytearray, or an out-of-band buffer.
func (v *View) frombufferArray(n pickle.ID) (*Array, bool) {
	r := v.arrayReader()
	h, ok := r.Frombuffer(n)
	if !ok {
		return nil, false
	}
	a := newArray(h)
	if b := v.res(h.Data); b >= 0 && v.kind(b) == pickle.KindBuffer && v.nmuts(b) == 0 {
		a.Buffer = b
		return a, true
	}
	want, ok := nbytes(h.Shape, h.Descr.Size)
	if !ok {
		return nil, false
	}
	data, ok := r.Bytes(h.Data, want)
	if !ok {
		return nil, false
	}
	a.Data = data
	return a, true
}

// joblibArray reads joblib's form: wrapper node n (array.Reader.Joblib)
// and the raw part of its bytes.
func (v *View) joblibArray(n pickle.ID, raw *input.Raw) (*Array, bool) {
	h, ok := v.arrayReader().Joblib(n)
	if !ok || h.Descr.Object {
		return nil, false
	}
	if want, ok := nbytes(h.Shape, h.Descr.Size); !ok || want != raw.Len {
		return nil, false
	}
	a := newArray(h)
	a.Raw = raw
	return a, true
}

// joblibObjects reads joblib's object array: wrapper node n (a
// NumpyArrayWrapper of an object dtype) followed by a nested pickle whose
// result is that array (numpy-reconstruct) and which does nothing else. The
// nested stream's view is returned: the encoding embeds its array where the
// wrapper is (encoder.foreign).
func (v *View) joblibObjects(n pickle.ID, f *pickle.File) (*View, bool) {
	if f == nil || len(f.Streams) != 1 || f.Trailing != nil {
		return nil, false
	}
	r := v.arrayReader()
	state, ok := r.WrapperState(n)
	if !ok {
		return nil, false
	}
	shape, ok := r.Shape(state["shape"])
	if !ok {
		return nil, false
	}
	if d, ok := r.DTypeOf(state["dtype"], 0); !ok || !d.Object {
		return nil, false
	}
	o := v.Opt
	o.arrays, o.src, o.NoPaths = nil, "", true
	if v.rr != nil && v.Opt.src == "" {
		// its offsets are the outer stream's: its payloads are read
		// again from the outer part
		o.nestedRR = &rrAt{v.rr, v.rrPart}
	}
	vb := normalize(f.Streams[0], o, nil)
	root := vb.res(vb.s.Root)
	a := vb.arr[root]
	if root < 0 || vb.specialOf(root) != 'A' || a == nil || !a.Object() || !slices.Equal(a.Shape, shape) {
		return nil, false
	}
	if len(vb.Effects()) > 0 || len(vb.s.Leftover) > 0 || vb.s.LeftoverMarks > 0 {
		return nil, false // the nested pickle does more than make the array
	}
	return vb, true
}

// foreign embeds the array of a joblib object array's nested pickle where
// its wrapper n stands, as if the array were written in this stream: its
// nodes get the next ordinals of this encoding (the nested pickle cannot
// refer to this stream's objects, nor they to its), so the encoding is that
// of pickle.dump of the same objects when nothing is shared across.
func (e *encoder) foreign(n pickle.ID) {
	vb := e.v.foreigns[n]
	start := e.next
	sub := &encoder{v: vb, h: e.h, buf: e.buf, iso: true, ordM: map[pickle.ID]int32{}, next: start}
	sub.node(vb.s.Root)
	sub.run()
	e.buf, e.next = sub.buf, sub.next
	e.wrote = e.wrote || sub.wrote
	if err := vb.state().err; err != nil && e.v.state().err == nil {
		e.v.state().err = err
	}
	// a second reference to the wrapper refers to the array
	if e.gen != 0 {
		e.ordSet(n, start)
	} else if e.iso {
		e.ordM[n] = start
	} else {
		e.setOrdinal(n, start)
	}
}

// NpyArray reads the array of a .npy file's raw part (doc.Format "npy"),
// when its dtype is a type string.
func NpyArray(raw *input.Raw) (*Array, bool) {
	if raw == nil {
		return nil, false
	}
	var d array.Descr
	var ok bool
	switch {
	case raw.DTypeString:
		d, ok = array.NpyDescr(raw.DType)
	case raw.Descr != nil:
		d, ok = array.NpyFields(raw.Descr, 0)
	}
	if !ok || d.Object {
		return nil, false
	}
	if want, ok := nbytes(raw.Shape, d.Size); !ok || want != raw.Len {
		return nil, false
	}
	return &Array{Descr: d.Descr, Item: d.Size, Shape: raw.Shape, Order: array.MemOrder(raw.Order == "F", raw.Shape),
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Raw: raw, Rule: "npy-array"}, true
}

// ---- in the view ----

// docArrays is what an input tells the views of its streams about arrays
// outside them: joblib's raw array parts, by the wrapper node they follow.
type docArrays struct {
	doc   *input.Doc       // the input (torch storages)
	rr    *docReread       // where streamed payloads are read again (reread.go)
	part  int              // the pickle part being normalised (HashDoc sets it)
	raws  map[arrayKey]int // (pickle part, stream, wrapper node) -> index of the raw part
	objs  map[arrayKey]int // the same for the nested pickles of object arrays
	parts []input.Part     // the input's parts
	used  map[int]bool     // raw parts a view encoded as an array's data
}

type arrayKey struct {
	part, stream int
	node         pickle.ID
}

// sortedArrayKeys returns m's keys by part, stream and node.
func sortedArrayKeys(m map[arrayKey]int) []arrayKey {
	keys := make([]arrayKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b arrayKey) int {
		return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.stream, b.stream), cmp.Compare(a.node, b.node))
	})
	return keys
}

// newDocArrays collects the joblib raw array parts of doc (nil when none).
func newDocArrays(doc *input.Doc) *docArrays {
	if doc == nil {
		return nil
	}
	d := &docArrays{doc: doc, rr: newDocReread(doc), raws: map[arrayKey]int{}, objs: map[arrayKey]int{}, parts: doc.Parts, used: map[int]bool{}}
	for i, p := range doc.Parts {
		if p.Role == input.RoleObjects && p.Pickle != nil && p.Of >= 0 && p.NodeID >= 0 {
			d.objs[arrayKey{p.Of, p.NodeStream, p.NodeID}] = i
		}
		if p.Role != input.RoleArray || p.Raw == nil || p.Of < 0 || p.NodeID < 0 {
			continue
		}
		d.raws[arrayKey{p.Of, p.NodeStream, p.NodeID}] = i
	}
	return d
}

// decide finds which raw parts the views of the input's streams will
// encode as arrays (so that Parts leaves them out before any stream is
// hashed): it normalises the streams that have joblib wrappers once.
func (d *docArrays) decide(opt Options) {
	if d == nil {
		return
	}
	opt.arrays = d
	opt.NoPaths = true
	seen := map[[2]int]bool{}
	torch := false
	for _, p := range d.parts {
		torch = torch || p.Role == input.RoleStorage
	}
	if torch {
		// the torch storages: every stream of every pickle part
		for i, p := range d.parts {
			if p.Pickle == nil {
				continue
			}
			d.part = i
			for j, st := range p.Pickle.Streams {
				seen[[2]int{i, j}] = true
				normalize(st, opt, nil)
			}
		}
	}
	for _, k := range append(sortedArrayKeys(d.raws), sortedArrayKeys(d.objs)...) {
		ps := [2]int{k.part, k.stream}
		if seen[ps] {
			continue
		}
		seen[ps] = true
		p := d.parts[k.part]
		if p.Pickle == nil || k.stream < 0 || k.stream >= len(p.Pickle.Streams) {
			continue
		}
		d.part = k.part
		normalize(p.Pickle.Streams[k.stream], opt, nil)
	}
}

// arrayCandidate notes a call whose callable may make an array, to be read
// once every other rule has run (its data is rewritten after the call is
// made: protocol 2's bytes come later in the stream).
func (v *View) arrayCandidate(n pickle.ID) {
	if !v.Opt.v2() || v.kind(n) != pickle.KindCall {
		return
	}
	fn := v.res(v.fn(n))
	if fn < 0 || v.kind(fn) != pickle.KindGlobal {
		return
	}
	if mod := v.text(fn); !strings.HasPrefix(mod, "numpy") && !strings.HasPrefix(mod, "torch") {
		return
	}
	v.arrCand = append(v.arrCand, n)
}

// arrays replaces every recognised array by an array node (Form2).
func (v *View) arrays() {
	for _, n := range v.arrCand {
		var a *Array
		var ok bool
		switch who := v.callable(v.fn(n)); {
		case array.IsReconstruct(who):
			a, ok = v.reconstructArray(n)
		case array.IsFrombuffer(who):
			a, ok = v.frombufferArray(n)
		case who == "std:torch.storage._load_from_bytes":
			v.fromBytes(n)
		}
		if ok {
			v.setArray(n, a)
		}
	}
	if d := v.Opt.arrays; d != nil && d.doc != nil {
		v.storages()
	}
	if d := v.Opt.arrays; d != nil {
		// (in node order: map order would make the synthetic nodes and the
		// order of the rules' record, pk hash --explain's lines, differ
		// from run to run)
		for _, k := range sortedArrayKeys(d.raws) {
			i := d.raws[k]
			if k.part != d.part || k.stream != v.Stream.Index || k.node < 0 || k.node >= v.base {
				continue
			}
			if a, ok := v.joblibArray(k.node, d.parts[i].Raw); ok {
				v.setArray(k.node, a)
				d.used[i] = true
			}
		}
		for _, k := range sortedArrayKeys(d.objs) {
			i := d.objs[k]
			if k.part != d.part || k.stream != v.Stream.Index || k.node < 0 || k.node >= v.base {
				continue
			}
			if vb, ok := v.joblibObjects(k.node, d.parts[i].Pickle); ok {
				x := v.synth(KindArray, k.node)
				v.mark(x, 'J')
				if v.foreigns == nil {
					v.foreigns = map[pickle.ID]*View{}
				}
				v.foreigns[x] = vb
				v.replace(k.node, x, RuleJoblibArray)
				d.used[i] = true
			}
		}
	}
}

// setArray replaces n by a new array node. Its items (what pk diff and the
// coverage of effects see) are the data or items node, when it has one.
func (v *View) setArray(n pickle.ID, a *Array) {
	x := v.synth(KindArray, n)
	v.mark(x, 'A')
	switch {
	case a.Items != pickle.NoID:
		v.setKids(x, []pickle.ID{a.Items})
	case a.Data != pickle.NoID:
		v.setKids(x, []pickle.ID{a.Data})
	case a.Buffer != pickle.NoID:
		v.setKids(x, []pickle.ID{a.Buffer})
	}
	if v.arr == nil {
		v.arr = map[pickle.ID]*Array{}
	}
	v.arr[x] = a
	v.replace(n, x, a.Rule)
}

// Array returns the array a node of the view stands for (Form2), or nil.
func (n *Node) Array() *Array { return n.v.arr[n.src] }

// encodeArray writes the body of an array node (after 'N'):
//
//	'A' str(descr) uvarint(ndim) uvarint(dim)... order
//	then 'y' uvarint(nbytes) H(element bytes)  (data in the stream or a raw part)
//	  or 'B' uvarint(index) readonly           (an out-of-band buffer)
//	  or 'o' uvarint(count)                    (objects: the items follow as children)
//
// and returns the children (the items of an object array).
func (e *encoder) encodeArray(n pickle.ID) []pickle.ID {
	v := e.v
	a := v.arr[n]
	e.buf = a.appendHead(e.buf)
	switch {
	case a.Items != pickle.NoID:
		items := v.items(a.Items)
		e.write('o')
		e.buf = appendUvarint(e.buf, uint64(len(items)))
		return items
	case a.Buffer != pickle.NoID:
		e.write('B')
		e.buf = appendUvarint(e.buf, uint64(v.ival(a.Buffer)))
		if v.flags(a.Buffer)&pickle.FlagReadOnly != 0 {
			e.write(1)
		} else {
			e.write(0)
		}
	case a.Raw != nil:
		e.write('y')
		e.buf = appendUvarint(e.buf, uint64(a.Raw.Len))
		e.buf = v.appendDigest(e.buf, a.Raw.Digest, v.offset(n))
	default:
		e.write('y')
		e.buf = appendUvarint(e.buf, uint64(v.plen(a.Data)))
		if bl := v.blob(a.Data); bl != nil {
			e.buf = v.appendDigest(e.buf, bl.Digest, v.offset(a.Data))
		} else if d, ok := v.dataDig[a.Data]; ok {
			e.buf = append(e.buf, d...)
		} else {
			// digested once per data node: many arrays may share one
			// bytes object through the memo
			t := v.text(a.Data)
			d := v.Opt.Algo.sum(nil, unsafe.Slice(unsafe.StringData(t), len(t)))
			if v.dataDig == nil {
				v.dataDig = map[pickle.ID][]byte{}
			}
			v.dataDig[a.Data] = d
			e.buf = append(e.buf, d...)
		}
	}
	return nil
}

// appendDigest appends a payload digest read with the form's algorithm.
func (v *View) appendDigest(b, d []byte, off int64) []byte {
	if len(d) != v.Opt.Algo.Size() {
		if st := v.state(); st.err == nil {
			st.err = fmt.Errorf("offset %d: array data was read without a %s digest (open the input with canon.ReadOptions)", off, v.Opt.Algo)
		}
		return append(b, make([]byte, v.Opt.Algo.Size())...)
	}
	return append(b, d...)
}

// appendHead appends 'A', the descr, the shape and the order.
func (a *Array) appendHead(b []byte) []byte {
	b = append(b, 'A')
	b = appendStr(b, a.Descr)
	b = appendUvarint(b, uint64(len(a.Shape)))
	for _, d := range a.Shape {
		b = appendUvarint(b, uint64(d))
	}
	return append(b, a.Order)
}

// npyStreamDigest is the digest of the stream a pickle of the .npy file's
// array would have: its root is the array, nothing else (so np.save and
// pickle.dump of one array hash alike).
func npyStreamDigest(a *Array, opt Options) ([]byte, error) {
	if len(a.Raw.Digest) != opt.Algo.Size() {
		return nil, fmt.Errorf("array data was read without a %s digest (open the input with canon.ReadOptions)", opt.Algo)
	}
	b := []byte(opt.header())
	b = append(b, 'r', 'N')
	b = a.appendHead(b)
	b = append(b, 'y')
	b = appendUvarint(b, uint64(a.Raw.Len))
	b = append(b, a.Raw.Digest...)
	b = appendUvarint(b, 0)
	b = append(b, '.')
	return opt.Algo.sum(nil, b), nil
}

// String renders the array as pk diff and --explain show it:
// "array <i4 (2, 3)", "array <f8 (3, 4) order F", "array |O8 (4,) of objects".
func (a *Array) String() string {
	var b strings.Builder
	b.WriteString("array ")
	b.WriteString(a.Descr)
	b.WriteString(" (")
	for i, d := range a.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(a.Shape) == 1 {
		b.WriteString(",")
	}
	b.WriteString(")")
	if a.Order == 'F' {
		b.WriteString(" order F")
	}
	switch {
	case a.Object():
		b.WriteString(" of objects")
	case a.Buffer != pickle.NoID:
		b.WriteString(" in an out-of-band buffer")
	}
	return b.String()
}

// ArrayAt is the header of the array node n stands for (pkg/array's
// ArrayGraph): its Data the list of items of an object array, else the
// bytes node of the elements (NoID when they are elsewhere).
func (g viewGraph) ArrayAt(n pickle.ID) (*array.Header, bool) {
	a := g.v.arr[g.v.res(n)]
	if a == nil {
		return nil, false
	}
	h := &array.Header{Descr: array.Descr{Descr: a.Descr, Size: a.Item, Object: a.Object()}, Shape: a.Shape, Order: a.Order, Data: a.Data, Rule: a.Rule}
	if a.Object() {
		h.Data = a.Items
	}
	return h, true
}

// Foreign is the view and node a joblib object array stands for: the array
// its nested pickle makes (pkg/array's ForeignGraph).
func (g viewGraph) Foreign(n pickle.ID) (array.Graph, pickle.ID, bool) {
	vb := g.v.foreigns[g.v.res(n)]
	if vb == nil {
		return nil, pickle.NoID, false
	}
	return viewGraph{vb}, vb.res(vb.s.Root), true
}

// Frame returns the pandas DataFrame n stands for (pkg/array's frame
// recognizer over the view), or nil.
func (n *Node) Frame() *array.Frame {
	if n.v.arr == nil && !n.v.Opt.v2() {
		return nil
	}
	f, ok := n.v.arrayReader().FrameAt(n.src)
	if !ok {
		return nil
	}
	return f
}

// Under is the node of view node id (one a recognizer over n's view gave)
// as a node under n.
func (n *Node) Under(id pickle.ID) *Node { return n.child(id, edge{}) }
