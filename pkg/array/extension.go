package array

// pandas extension arrays as blocks of a frame (pandas 1.5, protocols
// 2-5): a block whose values are no numpy array but one extension array
// of the frame's rows, placed at one column. How pandas 1.5.3 writes them:
//
//	Categorical, StringArray, PandasArray, DatetimeArray, TimedeltaArray:
//	  pandas._libs.arrays.__pyx_unpickle_NDArrayBacked(cls, checksum, None)
//	    BUILD (dtype, ndarray, attrs)          Cython's NDArrayBacked state
//	  a Categorical's ndarray is its codes (int8..int64, -1 for NaN), its
//	  dtype CategoricalDtype NEWOBJ () BUILD {'categories': Index, 'ordered': bool}
//	  a DatetimeArray's or TimedeltaArray's ndarray is datetime64 or
//	  timedelta64 (int64 counts of its unit, NaT the int64 minimum), 2-D
//	  (1, rows) in a frame's block, 1-D in a Series; attrs {'_freq': ...};
//	  its dtype numpy's M8[ns]/m8[ns] (naive) or DatetimeTZDtype NEWOBJ ()
//	  BUILD {'unit': 'ns', 'tz': tz}, tz one of pytz._UTC(), pytz._p(zone,
//	  ...), pytz.FixedOffset(minutes), datetime.timezone(timedelta[, name]),
//	  zoneinfo.ZoneInfo._unpickle(zone, ...)
//	IntegerArray, BooleanArray, FloatingArray (the nullable Int64, boolean, Float64):
//	  cls NEWOBJ () BUILD {'_data': ndarray, '_mask': bool ndarray, ...}
//
// The values of a cell are then exact: a categorical's category at its
// code, a masked array's value or <NA>, an NDArrayBacked array's element
// of its ndarray (a datetime as pandas shows it: FormatTimestamp). Others
// (sparse, period, interval, arrow-backed strings) are not recognised: a
// frame holding one is no Frame.

import "github.com/pk-tools/pk/pkg/pickle"

// Extension is a block's extension array.
type Extension struct {
	Class string // "pandas.core.arrays.categorical.Categorical", ...
	// Kind: 'c' a Categorical (Data its codes, Categories its categories),
	// 'm' a masked array (Data its values, Mask its mask), 't' a
	// DatetimeArray or TimedeltaArray (Data its datetime64/timedelta64
	// ndarray), 'n' another NDArrayBacked array (Data its ndarray: strings
	// are an object array)
	Kind byte
	Data pickle.ID
	Mask pickle.ID
	// Data2D: Data is 2-D, (1, rows) (a frame's datetime block), its
	// element of row r at [0, r]
	Data2D bool
	// Categories is the node of a Categorical's categories Index; CatItems
	// its items (an object Index, in the frame's graph), CatLabels its
	// labels (a RangeIndex or an int64 Index), whichever it is; CatData
	// the node of an object Index's data array when its items are no
	// nodes of this graph (joblib: a nested pickle, ForeignGraph); Ordered
	// the dtype's ordered flag (its node)
	Categories pickle.ID
	CatItems   []pickle.ID
	CatLabels  []Label
	CatData    pickle.ID
	catDescr   string
	NCats      int64
	Ordered    pickle.ID
	// Unit is a 't' array's unit ("[ns]"), Delta true for timedeltas, TZ
	// the time zone of a tz-aware datetime column (nil: naive; TZOK
	// false when it is not read); TZNode the node of the tz, DType the
	// node of the array's dtype (numpy's or a DatetimeTZDtype)
	Unit   string
	Delta  bool
	TZ     *TZ
	TZOK   bool
	TZNode pickle.ID
	DType  pickle.ID
	Len    int64 // rows
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
		fr, fv := r.foreign(st[1]) // (a joblib object array: its nested pickle's)
		h, ok := fr.ArrayAt(fv)
		if !ok {
			return nil, false
		}
		e := &Extension{Class: mod + "." + name, Kind: 'n', Data: g.Res(st[1]), Mask: pickle.NoID, Categories: pickle.NoID, CatData: pickle.NoID, Ordered: pickle.NoID, TZNode: pickle.NoID, DType: pickle.NoID}
		switch {
		case len(h.Shape) == 1:
			e.Len = h.Shape[0]
		case len(h.Shape) == 2 && h.Shape[0] == 1 && (mod == "pandas.core.arrays.datetimes" && name == "DatetimeArray" || mod == "pandas.core.arrays.timedeltas" && name == "TimedeltaArray"):
			e.Len, e.Data2D = h.Shape[1], true
		default:
			return nil, false
		}
		if mod == "pandas.core.arrays.datetimes" && name == "DatetimeArray" || mod == "pandas.core.arrays.timedeltas" && name == "TimedeltaArray" {
			if !r.timeArray(e, h, st[0], name == "TimedeltaArray") {
				return nil, false
			}
			return e, true
		}
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
			e.Kind, e.Categories, e.NCats = 'c', g.Res(cats), ch.n
			if o, ok := d["ordered"]; ok {
				e.Ordered = g.Res(o)
			}
			switch kind {
			case 'o':
				if ch.r != r {
					// a joblib file's nested pickle: not this graph's
					// nodes; the node of the Index's data array
					if _, a, ok := r.call(cats); ok && len(a) == 2 {
						if dd, ok := r.strDict(a[1]); ok {
							if data, ok := dd["data"]; ok {
								e.CatData = g.Res(data)
							}
						}
					}
					break
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
				// labels this graph does not hold (a joblib raw part,
				// protocol 0-2's latin-1 text in a plain store): the node
				// of their array, whose bytes SetCatInts takes
				e.CatData, e.catDescr = ch.data, ch.descr
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
		return &Extension{Class: "pandas.core.arrays." + mod + "." + cls, Kind: 'm', Data: g.Res(data), Mask: g.Res(mask), Categories: pickle.NoID, CatData: pickle.NoID, Ordered: pickle.NoID, TZNode: pickle.NoID, DType: pickle.NoID, Len: hd.Shape[0]}, true
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

// timeArray reads a DatetimeArray's or TimedeltaArray's ndarray h
// (datetime64 or timedelta64 of a unit) and dtype node dt: numpy's dtype
// (naive) or a DatetimeTZDtype (its tz: TZ).
func (r *Reader) timeArray(e *Extension, h *Header, dt pickle.ID, delta bool) bool {
	g := r.G
	d, ok := ParseDType(h.Descr.Descr)
	want := byte('M')
	if delta {
		want = 'm'
	}
	if !ok || d.Kind != want || d.Size != 8 || h.Descr.Object {
		return false
	}
	e.Kind, e.Unit, e.Delta, e.TZOK, e.DType = 't', d.Unit, delta, true, g.Res(dt)
	if delta {
		return true
	}
	state, ok := r.instance(dt, func(mod, name string) bool {
		return mod == "pandas.core.dtypes.dtypes" && name == "DatetimeTZDtype"
	})
	if !ok {
		// numpy's dtype (naive); what it says is the ndarray's descr
		return true
	}
	st, ok := r.strDict(state)
	if !ok {
		return false
	}
	tz, ok := st["tz"]
	if !ok {
		return false
	}
	e.TZ, e.TZOK = r.tz(tz)
	e.TZNode = g.Res(tz)
	return true
}

// tz reads a pickled time zone: pytz's UTC, named and fixed-offset zones,
// datetime.timezone, zoneinfo.ZoneInfo. false (and a TZ of UTC) when it
// is none of these.
func (r *Reader) tz(n pickle.ID) (*TZ, bool) {
	g := r.G
	utc := &TZ{Name: "UTC"}
	who, a, ok := r.call(n)
	if !ok {
		return utc, false
	}
	str := func(i int) (string, bool) {
		if i >= len(a) {
			return "", false
		}
		s, ok := g.Str(a[i])
		return s, ok && len(s) > 0 && len(s) <= 64
	}
	switch who {
	case "std:pytz._UTC":
		return utc, len(a) == 0
	case "std:pytz._p", "std:zoneinfo.ZoneInfo._unpickle":
		if s, ok := str(0); ok {
			return &TZ{Name: s}, true
		}
	case "std:pytz.FixedOffset":
		if len(a) == 1 {
			if m, ok := g.Small(a[0]); ok && m > -24*60 && m < 24*60 {
				return &TZ{Offset: int(m) * 60}, true
			}
		}
	case "std:datetime.timezone":
		if len(a) == 1 || len(a) == 2 {
			w, td, ok := r.call(a[0])
			if !ok || w != "std:datetime.timedelta" || len(td) != 3 {
				break
			}
			days, ok1 := g.Small(td[0])
			secs, ok2 := g.Small(td[1])
			us, ok3 := g.Small(td[2])
			if ok1 && ok2 && ok3 && us == 0 && days >= -1 && days <= 0 && secs >= 0 && secs < 86400 {
				if off := days*86400 + secs; off > -86400 && off < 86400 {
					return &TZ{Offset: int(off)}, true
				}
			}
		}
	}
	return utc, false
}

// CatInts: the categories are an int64 Index whose data bytes are not in
// the graph (CatData is their array): SetCatInts takes them.
func (e *Extension) CatInts() bool {
	return e.Kind == 'c' && e.CatLabels == nil && e.CatItems == nil && e.CatData != pickle.NoID && e.catDescr == "<i8"
}

// SetCatInts gives the labels of the categories CatInts says are
// elsewhere, their data bytes (little-endian int64, 8 a category): false
// when they are not that.
func (e *Extension) SetCatInts(b string) bool {
	if !e.CatInts() || int64(len(b)) != 8*e.NCats {
		return false
	}
	f := &Frame{rowKind: 'i', rowInts: b, Rows: e.NCats}
	for i := int64(0); i < e.NCats; i++ {
		l, _ := f.Row(i)
		e.CatLabels = append(e.CatLabels, l)
	}
	return true
}
