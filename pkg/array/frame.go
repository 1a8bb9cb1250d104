package array

// The frame recognizer: how pandas writes a DataFrame, read without
// executing anything (pandas 1.x and 2.x, protocols 0-5, joblib):
//
//	pandas.core.frame.DataFrame NEWOBJ () (or copyreg._reconstructor)
//	  BUILD {'_mgr': BlockManager, ...}
//	BlockManager = pandas.core.internals.managers.BlockManager(blocks, axes)
//	  blocks = (pandas._libs.internals._unpickle_block(values, placement, ndim), ...)
//	    values: an array of shape (columns of the block, rows)
//	    placement (mgr_locs): slice(start, stop, step) or an int64 array of
//	    the column positions of the block's rows
//	  axes = [columns, rows], each an Index:
//	    pandas.core.indexes.base._new_Index(cls, {'data': array, 'name': ...})
//	    or _new_Index(RangeIndex, {'start':, 'stop':, 'step':, 'name':})
//
// The recognizer gives the node of each block's values; what the values
// are is the caller's array (Reader.ArrayAt).

import (
	"encoding/binary"
	"math"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Label is a column or row label: an int, float, str or bool, or None.
type Label struct {
	Kind  byte // 'i' int, 'f' float, 's' str, 'b' bool, 'n' None
	Int   int64
	Float float64
	Str   string
}

// Block is one block of a frame: its values and the column position of
// each of its rows (an extension array's block: one column, ExtensionAt).
type Block struct {
	Values pickle.ID
	Locs   []int64
	// Ext is set when the values are a pandas extension array (one
	// column: a categorical, a nullable Int64 or boolean, a string array)
	Ext *Extension
}

// Frame is a recognised pandas DataFrame. Columns holds the column labels
// when the pickle holds them (NCols of them); a joblib file's object Index
// is a nested pickle, and only its length is known here.
type Frame struct {
	Columns         []Label
	NCols           int64
	Rows            int64
	Blocks          []Block
	Columns0, Index pickle.ID // the nodes of the column and row Index (their digests say whether they changed)
	Series          bool      // a pandas Series (SeriesAt): one block, its values 1-D
	r               *Reader
	start, step     int64       // a RangeIndex
	rowItems        []pickle.ID // an object Index: its items (of rowR's graph)
	rowR            *Reader
	rowInts         string    // an int64 Index: its data bytes (little-endian)
	rowKind         byte      // 'r' range, 'o' objects, 'i' int64
	rowData         pickle.ID // the array of an Index whose labels are elsewhere (joblib: a raw part)
	rowDescr        string    // its descr
}

// RowData is the array node of the row Index when its labels are not in
// the graph (a joblib file's int64 Index: its data is a raw part; an int64
// Index whose data bytes the graph does not hold as text: a payload of 1
// MiB or more, protocol 0-2's latin-1 text in a plain store), with its
// descr; NoID otherwise.
func (f *Frame) RowData() (pickle.ID, string) {
	if f.rowKind != 0 {
		return pickle.NoID, ""
	}
	return f.rowData, f.rowDescr
}

// SetRowInts gives the labels of a row Index RowData names, its data
// bytes (little-endian int64, 8 a row): false when they are not that.
func (f *Frame) SetRowInts(b string) bool {
	if f.rowKind != 0 || f.rowData == pickle.NoID || f.rowDescr != "<i8" || int64(len(b)) != 8*f.Rows {
		return false
	}
	f.rowKind, f.rowInts = 'i', b
	return true
}

// ArrayGraph is a graph that recognised arrays itself (pkg/canon's Form2
// view): the header of the array node n stands for, its Data the list of
// items of an object array or the bytes node of the elements.
type ArrayGraph interface {
	ArrayAt(n pickle.ID) (*Header, bool)
}

// ForeignGraph is a graph some of whose nodes stand for a node of another
// graph (pkg/canon's view: a joblib object array is the array its nested
// pickle makes).
type ForeignGraph interface {
	Foreign(n pickle.ID) (Graph, pickle.ID, bool)
}

// foreign is the reader and node of the graph node n stands for, or r and
// n themselves.
func (r *Reader) foreign(n pickle.ID) (*Reader, pickle.ID) {
	if fg, ok := r.G.(ForeignGraph); ok {
		if g2, m, ok := fg.Foreign(n); ok {
			if r.foreigns == nil {
				r.foreigns = map[pickle.ID]*Reader{}
			}
			r2 := r.foreigns[n]
			if r2 == nil {
				r2 = NewReader(g2)
				r.foreigns[n] = r2
			}
			return r2, m
		}
	}
	return r, n
}

// ArrayAt reads the array node n stands for in any form.
func (r *Reader) ArrayAt(n pickle.ID) (*Header, bool) {
	if ag, ok := r.G.(ArrayGraph); ok {
		if h, ok := ag.ArrayAt(n); ok {
			return h, true
		}
	}
	n = r.G.Res(n)
	if n < 0 || r.G.Kind(n) != pickle.KindCall {
		return nil, false
	}
	switch who := r.G.Callable(r.G.Func(n)); {
	case IsReconstruct(who):
		return r.Reconstruct(n)
	case IsFrombuffer(who):
		return r.Frombuffer(n)
	}
	return r.Joblib(n)
}

// Row is the label of row i.
func (f *Frame) Row(i int64) (Label, bool) {
	if i < 0 || i >= f.Rows {
		return Label{}, false
	}
	switch f.rowKind {
	case 'r':
		return Label{Kind: 'i', Int: f.start + f.step*i}, true
	case 'i':
		return Label{Kind: 'i', Int: int64(binary.LittleEndian.Uint64([]byte(f.rowInts[8*i : 8*i+8])))}, true
	case 'o':
		return f.rowR.label(f.rowItems[i])
	}
	return Label{}, false
}

// Column is the label and column position of row j of block b.
func (f *Frame) Column(b, j int) (Label, bool) {
	if b < 0 || b >= len(f.Blocks) || j < 0 || j >= len(f.Blocks[b].Locs) {
		return Label{}, false
	}
	c := f.Blocks[b].Locs[j]
	if c < 0 || c >= int64(len(f.Columns)) || int64(len(f.Columns)) != f.NCols {
		return Label{}, false
	}
	return f.Columns[c], true
}

func (r *Reader) label(n pickle.ID) (Label, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.NMuts(n) > 0 || g.Special(n) != 0 {
		return Label{}, false
	}
	switch g.Kind(n) {
	case pickle.KindNone:
		return Label{Kind: 'n'}, true
	case pickle.KindBool:
		x, ok := g.Small(n)
		return Label{Kind: 'b', Int: x}, ok
	case pickle.KindInt:
		x, ok := g.Small(n)
		return Label{Kind: 'i', Int: x}, ok
	case pickle.KindStr:
		s, ok := g.Str(n)
		return Label{Kind: 's', Str: s}, ok
	}
	return Label{}, false
}

// strDict reads a dict of str keys without operations.
func (r *Reader) strDict(n pickle.ID) (map[string]pickle.ID, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Kind(n) != pickle.KindDict || g.NMuts(n) > 0 || g.Special(n) != 0 {
		return nil, false
	}
	it := g.Items(n)
	out := make(map[string]pickle.ID, len(it)/2)
	for i := 0; i+1 < len(it); i += 2 {
		k, ok := g.Str(it[i])
		if !ok {
			return nil, false
		}
		out[k] = it[i+1]
	}
	return out, true
}

// call returns the callable's name and the arguments of call n (REDUCE,
// no keyword arguments, no operations).
func (r *Reader) call(n pickle.ID) (string, []pickle.ID, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Kind(n) != pickle.KindCall || g.Op(n) != pickle.REDUCE || g.Kwargs(n) != pickle.NoID || g.NMuts(n) > 0 || g.Folded(n) {
		return "", nil, false
	}
	args, ok := g.Tuple(g.Args(n))
	return g.Callable(g.Func(n)), args, ok
}

// IsFrameClass names pandas' DataFrame.
func IsFrameClass(mod, name string) bool {
	return name == "DataFrame" && (mod == "pandas.core.frame" || mod == "pandas")
}

// FrameAt reads the DataFrame node n stands for, or false; a Series is
// read as a frame of one column (SeriesAt, Frame.Series).
func (r *Reader) FrameAt(n pickle.ID) (*Frame, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Kind(n) != pickle.KindCall || g.Folded(n) {
		return nil, false
	}
	cls := g.Func(n)
	switch g.Op(n) {
	case pickle.NEWOBJ:
		if a, ok := g.Tuple(g.Args(n)); !ok || len(a) != 0 {
			return nil, false
		}
	case pickle.REDUCE: // copyreg._reconstructor(DataFrame, object, None)
		if g.Callable(cls) != "std:copyreg._reconstructor" {
			return nil, false
		}
		a, ok := g.Tuple(g.Args(n))
		if !ok || len(a) != 3 || !g.IsNone(a[2]) {
			return nil, false
		}
		cls = a[0]
	default:
		return nil, false
	}
	if mod, name, ok := g.Global(cls); !ok || !IsFrameClass(mod, name) {
		if ok && IsSeriesClass(mod, name) {
			return r.SeriesAt(n)
		}
		return nil, false
	}
	muts := g.Muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return nil, false
	}
	st, ok := r.strDict(muts[0].Args[0])
	if !ok {
		return nil, false
	}
	mgr, ok := st["_mgr"]
	if !ok {
		return nil, false
	}
	who, args, ok := r.call(mgr)
	if !ok || who != "std:pandas.core.internals.managers.BlockManager" || len(args) != 2 {
		return nil, false
	}
	blocks, ok := g.Tuple(args[0])
	axes := g.Res(args[1])
	if !ok || axes < 0 || g.Kind(axes) != pickle.KindList || g.NMuts(axes) > 0 || g.NItems(axes) != 2 {
		return nil, false
	}
	ax := g.Items(axes)
	f := &Frame{r: r, Columns0: g.Res(ax[0]), Index: g.Res(ax[1])}
	// columns: labels
	kind, ch, ok := r.index(ax[0])
	if !ok {
		return nil, false
	}
	f.NCols = ch.n
	if f.NCols > 1<<20 {
		return nil, false
	}
	switch kind {
	case 'r':
		c, ok := rangeLen(ch.start, ch.stop, ch.step)
		if !ok || c > 1<<20 {
			return nil, false
		}
		for i := int64(0); i < c; i++ {
			f.Columns = append(f.Columns, Label{Kind: 'i', Int: ch.start + ch.step*i})
		}
	case 'o':
		for _, it := range ch.items {
			l, ok := ch.r.label(it)
			if !ok {
				f.Columns = nil
				break
			}
			f.Columns = append(f.Columns, l)
		}
	case 'i':
		for i := 0; i+8 <= len(ch.ints); i += 8 {
			f.Columns = append(f.Columns, Label{Kind: 'i', Int: int64(binary.LittleEndian.Uint64([]byte(ch.ints[i : i+8])))})
		}
	}
	// rows
	if !r.rows(f, ax[1]) {
		return nil, false
	}
	// blocks
	seen := make([]bool, f.NCols)
	for _, b := range blocks {
		who, a, ok := r.call(b)
		if !ok || who != "std:pandas._libs.internals._unpickle_block" || len(a) != 3 {
			return nil, false
		}
		fr, fv := r.foreign(a[0]) // (a joblib object array: its nested pickle's)
		cols := int64(1)
		var ext *Extension
		if h, ok := fr.ArrayAt(fv); ok {
			if len(h.Shape) != 2 || h.Shape[1] != f.Rows {
				return nil, false
			}
			cols = h.Shape[0]
		} else if ext, ok = r.ExtensionAt(a[0]); !ok || ext.Len != f.Rows {
			// an extension array (category, Int64, string, ...): one column
			return nil, false
		}
		locs, ok := r.placement(a[1])
		if !ok || int64(len(locs)) != cols {
			return nil, false
		}
		for _, c := range locs {
			if c < 0 || c >= int64(len(seen)) || seen[c] {
				return nil, false
			}
			seen[c] = true
		}
		f.Blocks = append(f.Blocks, Block{Values: g.Res(a[0]), Locs: locs, Ext: ext})
	}
	for _, s := range seen {
		if !s {
			return nil, false
		}
	}
	return f, true
}

// rows reads the row Index n of frame f.
func (r *Reader) rows(f *Frame, n pickle.ID) bool {
	kind, rh, ok := r.index(n)
	if !ok {
		return false
	}
	f.rowKind, f.Rows = kind, rh.n
	switch kind {
	case 'r':
		f.start, f.step = rh.start, rh.step
	case 'o':
		f.rowItems, f.rowR = rh.items, rh.r
	case 'i':
		f.rowInts = rh.ints
	case 0:
		f.rowData, f.rowDescr = rh.data, rh.descr
	}
	return true
}

// IsSeriesClass names pandas' Series.
func IsSeriesClass(mod, name string) bool {
	return name == "Series" && (mod == "pandas.core.series" || mod == "pandas")
}

// instance returns the one BUILD state of an instance of a class that
// is (module, name) says: NEWOBJ (cls) with no arguments, or
// copyreg._reconstructor(cls, object, None).
func (r *Reader) instance(n pickle.ID, is func(mod, name string) bool) (pickle.ID, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Kind(n) != pickle.KindCall || g.Folded(n) {
		return pickle.NoID, false
	}
	cls := g.Func(n)
	switch g.Op(n) {
	case pickle.NEWOBJ:
		if a, ok := g.Tuple(g.Args(n)); !ok || len(a) != 0 {
			return pickle.NoID, false
		}
	case pickle.REDUCE:
		if g.Callable(cls) != "std:copyreg._reconstructor" {
			return pickle.NoID, false
		}
		a, ok := g.Tuple(g.Args(n))
		if !ok || len(a) != 3 || !g.IsNone(a[2]) {
			return pickle.NoID, false
		}
		cls = a[0]
	default:
		return pickle.NoID, false
	}
	if mod, name, ok := g.Global(cls); !ok || !is(mod, name) {
		return pickle.NoID, false
	}
	muts := g.Muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return pickle.NoID, false
	}
	return muts[0].Args[0], true
}

// SeriesAt reads the pandas Series node n stands for as a frame of one
// column whose one block is its values (1-D): pandas writes
//
//	pandas.core.series.Series NEWOBJ () BUILD {'_mgr': SingleBlockManager, '_name': ..., ...}
//	SingleBlockManager NEWOBJ () BUILD (axes [index], [values], [items], extra)
//
// Columns is empty (the Series' name is not a column label); Frame.Row
// gives the row labels.
func (r *Reader) SeriesAt(n pickle.ID) (*Frame, bool) {
	g := r.G
	state, ok := r.instance(n, IsSeriesClass)
	if !ok {
		return nil, false
	}
	st, ok := r.strDict(state)
	if !ok {
		return nil, false
	}
	mgr, ok := st["_mgr"]
	if !ok {
		return nil, false
	}
	ms, ok := r.instance(mgr, func(mod, name string) bool {
		return mod == "pandas.core.internals.managers" && name == "SingleBlockManager"
	})
	if !ok {
		return nil, false
	}
	t, ok := g.Tuple(ms)
	if !ok || len(t) != 4 {
		return nil, false
	}
	axes, vals := g.Res(t[0]), g.Res(t[1])
	if axes < 0 || vals < 0 || g.Kind(axes) != pickle.KindList || g.Kind(vals) != pickle.KindList || g.NMuts(axes)+g.NMuts(vals) > 0 || g.NItems(axes) != 1 || g.NItems(vals) != 1 {
		return nil, false
	}
	f := &Frame{r: r, Columns0: pickle.NoID, Index: g.Res(g.Items(axes)[0]), NCols: 1, Series: true}
	if !r.rows(f, g.Items(axes)[0]) {
		return nil, false
	}
	v := g.Items(vals)[0]
	fr, fv := r.foreign(v)
	var ext *Extension
	if h, ok := fr.ArrayAt(fv); ok {
		if len(h.Shape) != 1 || h.Shape[0] != f.Rows {
			return nil, false
		}
	} else if ext, ok = r.ExtensionAt(v); !ok || ext.Len != f.Rows {
		return nil, false
	}
	f.Blocks = []Block{{Values: g.Res(v), Locs: []int64{0}, Ext: ext}}
	return f, true
}

type indexData struct {
	n                 int64 // its length
	start, stop, step int64
	items             []pickle.ID
	r                 *Reader // the reader of items' graph
	ints              string
	data              pickle.ID // an Index whose labels are elsewhere: its array node
	descr             string
}

// index reads a pandas Index: 'r' a RangeIndex, 'o' an object Index (its
// items), 'i' an int64 Index (its little-endian data bytes), 0 an Index
// whose length alone is known (its data elsewhere: joblib).
func (r *Reader) index(n pickle.ID) (byte, indexData, bool) {
	g := r.G
	var no indexData
	who, a, ok := r.call(n)
	if !ok || who != "std:pandas.core.indexes.base._new_Index" || len(a) != 2 {
		return 0, no, false
	}
	mod, name, ok := g.Global(a[0])
	if !ok {
		return 0, no, false
	}
	d, ok := r.strDict(a[1])
	if !ok {
		return 0, no, false
	}
	if mod == "pandas.core.indexes.range" && name == "RangeIndex" {
		start, ok1 := g.Small(d["start"])
		stop, ok2 := g.Small(d["stop"])
		step, ok3 := g.Small(d["step"])
		if !ok1 || !ok2 || !ok3 || step == 0 {
			return 0, no, false
		}
		c, ok := rangeLen(start, stop, step)
		return 'r', indexData{n: c, start: start, stop: stop, step: step}, ok
	}
	switch {
	case mod == "pandas.core.indexes.base" && name == "Index":
	case mod == "pandas.core.indexes.numeric" && (name == "Int64Index" || name == "UInt64Index" || name == "Float64Index"):
	default:
		return 0, no, false
	}
	r0 := r
	r, data := r.foreign(d["data"])
	g = r.G
	h, ok := r.ArrayAt(data)
	if !ok || len(h.Shape) != 1 {
		return 0, no, false
	}
	c := h.Shape[0]
	if h.Data == pickle.NoID {
		if r == r0 {
			return 0, indexData{n: c, data: r.G.Res(data), descr: h.Descr.Descr}, true
		}
		return 0, indexData{n: c}, true
	}
	if h.Descr.Object {
		l := g.Res(h.Data)
		if l < 0 || g.Kind(l) != pickle.KindList || g.NMuts(l) > 0 || int64(g.NItems(l)) != h.Shape[0] {
			return 0, no, false
		}
		return 'o', indexData{n: c, items: g.Items(l), r: r}, true
	}
	if h.Descr.Descr != "<i8" {
		return 0, indexData{n: c}, true
	}
	b, ok := r.Bytes(h.Data, h.Shape[0]*8)
	if !ok || g.Blob(b) != nil || int64(len(g.Text(b))) != h.Shape[0]*8 {
		if r == r0 {
			// bytes this graph does not hold as text (a streamed payload;
			// in a plain store, protocol 0-2's latin-1 text): RowData
			return 0, indexData{n: c, data: r.G.Res(data), descr: h.Descr.Descr}, true
		}
		return 0, indexData{n: c}, true
	}
	return 'i', indexData{n: c, ints: g.Text(b)}, true
}

// placement reads a block's mgr_locs: slice(start, stop, step) or an
// int64 array.
func (r *Reader) placement(n pickle.ID) ([]int64, bool) {
	g := r.G
	if who, a, ok := r.call(n); ok && who == "std:builtins.slice" && len(a) == 3 {
		start, ok1 := g.Small(a[0])
		stop, ok2 := g.Small(a[1])
		step := int64(1)
		ok3 := g.IsNone(a[2])
		if !ok3 {
			step, ok3 = g.Small(a[2])
		}
		c, ok := rangeLen(start, stop, step)
		if !ok1 || !ok2 || !ok3 || !ok || c > 1<<20 {
			return nil, false
		}
		out := make([]int64, c)
		for i := range out {
			out[i] = start + step*int64(i)
		}
		return out, true
	}
	h, ok := r.ArrayAt(n)
	if !ok || len(h.Shape) != 1 || h.Descr.Descr != "<i8" || h.Shape[0] > 1<<20 {
		return nil, false
	}
	b, ok := r.Bytes(h.Data, h.Shape[0]*8)
	if !ok || g.Blob(b) != nil {
		return nil, false
	}
	t := g.Text(b)
	if int64(len(t)) != h.Shape[0]*8 {
		return nil, false
	}
	out := make([]int64, h.Shape[0])
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64([]byte(t[8*i : 8*i+8])))
	}
	return out, true
}

// rangeLen is len(range(start, stop, step)).
func rangeLen(start, stop, step int64) (int64, bool) {
	if step == 0 {
		return 0, false
	}
	var lo, hi, st float64 = float64(start), float64(stop), float64(step)
	if step < 0 {
		lo, hi, st = -lo, -hi, -st
	}
	if hi <= lo {
		return 0, true
	}
	c := math.Ceil((hi - lo) / st)
	if c > math.MaxInt32 {
		return 0, false
	}
	// exact in integers
	var n int64
	if step > 0 {
		n = (stop - start + step - 1) / step
	} else {
		n = (start - stop - step - 1) / -step
	}
	return n, n >= 0
}
