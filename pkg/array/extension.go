package array

// pandas extension arrays as blocks of a frame (pandas 1.5, protocols
// 2-5): a block whose values are no numpy array but one 1-D extension
// array of the frame's rows, placed at one column. How pandas 1.5.3 writes
// them:
//
//	Categorical, StringArray, PandasArray (a 1-D ndarray; pandas 1.5.3 writes a
//	tz-aware DatetimeArray's and a TimedeltaArray's 2-D, which is not read):
//	  pandas._libs.arrays.__pyx_unpickle_NDArrayBacked(cls, checksum, None)
//	    BUILD (dtype, ndarray, attrs)          Cython's NDArrayBacked state
//	  a Categorical's ndarray is its codes (int8..int64, -1 for NaN), its
//	  dtype CategoricalDtype NEWOBJ () BUILD {'categories': Index, 'ordered': bool}
//	IntegerArray, BooleanArray, FloatingArray (the nullable Int64, boolean, Float64):
//	  cls NEWOBJ () BUILD {'_data': ndarray, '_mask': bool ndarray, ...}
//
// The values of a cell are then exact: a categorical's category at its
// code (both sides' categories the same), a masked array's value or <NA>,
// an NDArrayBacked array's element of its ndarray. Others (sparse, period,
// interval, arrow-backed strings, 2-D datetime and timedelta blocks) are
// not recognised: a frame holding one is no Frame.

import "github.com/pk-tools/pk/pkg/pickle"

// Extension is a block's extension array.
type Extension struct {
	Class string // "pandas.core.arrays.categorical.Categorical", ...
	// Kind: 'c' a Categorical (Data its codes, Categories its categories),
	// 'm' a masked array (Data its values, Mask its mask), 'n' another
	// NDArrayBacked array (Data its ndarray: strings are an object array)
	Kind byte
	Data pickle.ID
	Mask pickle.ID
	// Categories is the node of a Categorical's categories Index; CatItems
	// its items (an object Index, in the frame's graph), CatLabels its
	// labels (a RangeIndex or an int64 Index), whichever it is
	Categories pickle.ID
	CatItems   []pickle.ID
	CatLabels  []Label
	Len        int64 // rows
}

// maxCategories bounds the categories read.
const maxCategories = 1 << 20

// ExtensionAt reads the pandas extension array node n stands for, or false.
func (r *Reader) ExtensionAt(n pickle.ID) (*Extension, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Kind(n) != pickle.KindCall || g.Folded(n) {
		return nil, false
	}
	if g.Op(n) == pickle.REDUCE && g.Callable(g.Func(n)) == "std:pandas._libs.arrays.__pyx_unpickle_NDArrayBacked" {
		a, ok := g.Tuple(g.Args(n))
		if !ok || len(a) != 3 {
			return nil, false
		}
		mod, name, ok := g.Global(a[0])
		muts := g.Muts(n)
		if !ok || len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
			return nil, false
		}
		st, ok := g.Tuple(muts[0].Args[0])
		if !ok || len(st) != 3 {
			return nil, false
		}
		h, ok := r.ArrayAt(st[1])
		if !ok || len(h.Shape) != 1 {
			return nil, false
		}
		e := &Extension{Class: mod + "." + name, Kind: 'n', Data: g.Res(st[1]), Mask: pickle.NoID, Categories: pickle.NoID, Len: h.Shape[0]}
		if mod == "pandas.core.arrays.categorical" && name == "Categorical" {
			ds, ok := r.instance(st[0], func(mod, name string) bool {
				return mod == "pandas.core.dtypes.dtypes" && name == "CategoricalDtype"
			})
			if !ok {
				return nil, false
			}
			d, ok := r.strDict(ds)
			if !ok || h.Descr.Object || h.Descr.Size < 1 || h.Descr.Size > 8 || !isIntDescr(h.Descr.Descr) {
				return nil, false
			}
			cats, ok := d["categories"]
			if !ok {
				return nil, false
			}
			kind, ch, ok := r.index(cats)
			if !ok || ch.n > maxCategories {
				return nil, false
			}
			e.Kind, e.Categories = 'c', g.Res(cats)
			switch kind {
			case 'o':
				if ch.r != r {
					return nil, false // (a joblib file's nested pickle: not this graph's nodes)
				}
				e.CatItems = ch.items
			case 'r':
				for i := int64(0); i < ch.n; i++ {
					e.CatLabels = append(e.CatLabels, Label{Kind: 'i', Int: ch.start + ch.step*i})
				}
			case 'i':
				f := &Frame{rowKind: 'i', rowInts: ch.ints, Rows: ch.n}
				for i := int64(0); i < ch.n; i++ {
					l, _ := f.Row(i)
					e.CatLabels = append(e.CatLabels, l)
				}
			case 0:
				// labels this graph does not hold (protocol 0-2's latin-1
				// text in a plain store): the codes alone
			default:
				return nil, false
			}
		}
		return e, true
	}
	for _, cls := range []string{"IntegerArray", "BooleanArray", "FloatingArray"} {
		mod := map[string]string{"IntegerArray": "integer", "BooleanArray": "boolean", "FloatingArray": "floating"}[cls]
		state, ok := r.instance(n, func(m, name string) bool { return m == "pandas.core.arrays."+mod && name == cls })
		if !ok {
			continue
		}
		d, ok := r.strDict(state)
		if !ok {
			return nil, false
		}
		data, ok1 := d["_data"]
		mask, ok2 := d["_mask"]
		if !ok1 || !ok2 {
			return nil, false
		}
		hd, ok1 := r.ArrayAt(data)
		hm, ok2 := r.ArrayAt(mask)
		if !ok1 || !ok2 || len(hd.Shape) != 1 || len(hm.Shape) != 1 || hd.Shape[0] != hm.Shape[0] || hm.Descr.Descr != "|b1" || hd.Descr.Object {
			return nil, false
		}
		return &Extension{Class: "pandas.core.arrays." + mod + "." + cls, Kind: 'm', Data: g.Res(data), Mask: g.Res(mask), Categories: pickle.NoID, Len: hd.Shape[0]}, true
	}
	return nil, false
}

// isIntDescr: a signed integer descr (a Categorical's codes).
func isIntDescr(d string) bool { return len(d) == 3 && d[1] == 'i' && (d[0] == '<' || d[0] == '|') }

// Category is the label of category i of a Categorical whose categories
// are a RangeIndex or an int64 Index (CatLabels), or false.
func (e *Extension) Category(i int64) (Label, bool) {
	if i < 0 || i >= int64(len(e.CatLabels)) {
		return Label{}, false
	}
	return e.CatLabels[i], true
}
