package array

// The array recognizer: the one place that knows how a numpy array is
// written (docs/canonical-form-2.md §2):
//
//   - the dtype: a pickled numpy.dtype (numpy.dtype(typestr, align, copy)
//     REDUCE + BUILD (version, byteorder, subarray, names, fields, elsize,
//     alignment, flags[, metadata])), read into a canonical descr;
//   - the array header (dtype, shape, memory order) and where its elements
//     are, from every form that writes one in a pickle: numpy's
//     _reconstruct(ndarray, (0,), b'b') + BUILD (version, shape, dtype,
//     is_fortran, data) at protocols 0-4, _frombuffer(buf, dtype, shape,
//     order) at protocol 5, joblib's NumpyArrayWrapper (its BUILD state);
//     under numpy 1's numpy.core and numpy 2's numpy._core names alike.
//
// It reads any Graph: pkg/canon's normalised view (where protocol 2's
// _codecs.encode(s, 'latin1') data is already bytes) and a plain
// pickle.Store (StoreGraph). It never copies a payload.

import (
	"math"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Graph is what the recognizer asks of a graph of pickle nodes. Every
// method but Res takes a node as given; the helpers that resolve (Tuple,
// Str, Small, Global, IsNone) resolve their argument first.
type Graph interface {
	Res(n pickle.ID) pickle.ID // the node n stands for (itself in a plain store)
	Kind(n pickle.ID) pickle.Kind
	Op(n pickle.ID) pickle.Opcode
	Func(n pickle.ID) pickle.ID
	Args(n pickle.ID) pickle.ID
	Kwargs(n pickle.ID) pickle.ID
	Folded(n pickle.ID) bool      // calls were folded into n (pkg/canon)
	Callable(fn pickle.ID) string // "std:numpy.dtype" for a plain global
	Tuple(n pickle.ID) ([]pickle.ID, bool)
	Str(n pickle.ID) (string, bool)
	Small(n pickle.ID) (int64, bool) // an int or bool that fits an int64
	Global(n pickle.ID) (mod, name string, ok bool)
	IsNone(n pickle.ID) bool
	Muts(n pickle.ID) []pickle.SMut
	NMuts(n pickle.ID) int
	Items(n pickle.ID) []pickle.ID
	NItems(n pickle.ID) int
	Special(n pickle.ID) byte // pkg/canon's placeholders and trackers: not values
	Blob(n pickle.ID) *pickle.Blob
	Text(n pickle.ID) string
	PayloadLen(n pickle.ID) int64
}

// Rule names of the array forms.
const (
	RuleNumpyReconstruct = "numpy-reconstruct" // _reconstruct + BUILD, protocols 0-4
	RuleNumpyFrombuffer  = "numpy-frombuffer"  // _frombuffer, protocol 5
	RuleJoblibArray      = "joblib-array"      // joblib NumpyArrayWrapper + raw bytes
)

// Descr is a recognised dtype: its canonical descr, its item size and
// whether it holds Python objects.
type Descr struct {
	Descr  string
	Size   int64
	Object bool
}

// Header is what an array's form says of it.
type Header struct {
	Descr Descr
	Shape []int64
	Order byte // 'C' or 'F' (MemOrder)
	// Data is the node of the elements as the form writes them: the data
	// bytes (or, for objects, the list) of _reconstruct's state, the buffer
	// of _frombuffer; NoID for joblib (its bytes follow the pickle).
	Data pickle.ID
	Rule string
}

// Reader recognises arrays in one graph; it reads each dtype node once.
type Reader struct {
	G        Graph
	dtypes   map[pickle.ID]Descr
	foreigns map[pickle.ID]*Reader // the readers of foreign graphs (ForeignGraph)
}

// NewReader reads graph g.
func NewReader(g Graph) *Reader { return &Reader{G: g} }

// IsReconstruct, IsFrombuffer and IsDtype name numpy's callables under
// numpy 1 (numpy.core) and numpy 2 (numpy._core).
func IsReconstruct(who string) bool {
	return who == "std:numpy.core.multiarray._reconstruct" || who == "std:numpy._core.multiarray._reconstruct"
}

func IsFrombuffer(who string) bool {
	return who == "std:numpy.core.numeric._frombuffer" || who == "std:numpy._core.numeric._frombuffer"
}

func IsDtype(who string) bool {
	return who == "std:numpy.dtype" || who == "std:numpy.core.multiarray.dtype" || who == "std:numpy._core.multiarray.dtype"
}

// MaxDtypeDepth bounds the nesting of structured and subarray dtypes.
const MaxDtypeDepth = 32

// DTypeOf reads a pickled numpy.dtype node, once per node (many arrays
// share one dtype object through the memo).
func (r *Reader) DTypeOf(n pickle.ID, depth int) (Descr, bool) {
	n = r.G.Res(n)
	if d, ok := r.dtypes[n]; ok {
		return d, d.Size >= 0
	}
	d, ok := r.readDtype(n, depth)
	if !ok {
		d = Descr{Size: -1}
	}
	if r.dtypes == nil {
		r.dtypes = map[pickle.ID]Descr{}
	}
	r.dtypes[n] = d
	return d, ok
}

func (r *Reader) readDtype(n pickle.ID, depth int) (Descr, bool) {
	g := r.G
	var no Descr
	if depth > MaxDtypeDepth || n < 0 || g.Kind(n) != pickle.KindCall || g.Op(n) != pickle.REDUCE || g.Folded(n) {
		return no, false
	}
	if !IsDtype(g.Callable(g.Func(n))) {
		return no, false
	}
	args, ok := g.Tuple(g.Args(n))
	if !ok || len(args) < 1 || len(args) > 3 {
		return no, false
	}
	ts, ok := g.Str(args[0])
	if !ok || ts == "" {
		return no, false
	}
	muts := g.Muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return no, false
	}
	st, ok := g.Tuple(muts[0].Args[0])
	if !ok || len(st) < 8 || len(st) > 9 {
		return no, false
	}
	ver, ok1 := g.Small(st[0])
	bo, ok2 := g.Str(st[1])
	elsize, ok3 := g.Small(st[5])
	flags, ok4 := g.Small(st[7])
	if !ok1 || !ok2 || !ok3 || !ok4 || (ver != 3 && ver != 4) || (bo != "<" && bo != ">" && bo != "|") {
		return no, false
	}
	// the type string: letters, then the item size
	i := 0
	for i < len(ts) && (ts[i] < '0' || ts[i] > '9') {
		i++
	}
	kind := ts[:i]
	if len(kind) != 1 {
		return no, false
	}
	size := int64(-1)
	if i < len(ts) {
		x, err := strconv.ParseInt(ts[i:], 10, 32)
		if err != nil || x < 0 {
			return no, false
		}
		size = x
		if kind == "U" {
			size *= 4
		}
	}
	if elsize > 0 {
		size = elsize
	}
	if size < 0 || size > math.MaxInt32 {
		return no, false
	}
	d := Descr{Size: size}
	var unit string
	if len(st) == 9 {
		// version 4: metadata; datetimes: (metadata, (unit, num, den, events))
		meta := st[8]
		if kind == "M" || kind == "m" {
			t, ok := g.Tuple(meta)
			if !ok || len(t) != 2 {
				return no, false
			}
			meta = t[0]
			dt, ok := g.Tuple(t[1])
			if !ok || len(dt) != 4 {
				return no, false
			}
			u := g.Res(dt[0])
			num, ok1 := g.Small(dt[1])
			den, ok2 := g.Small(dt[2])
			ev, ok3 := g.Small(dt[3])
			if g.Kind(u) != pickle.KindBytes || g.NMuts(u) > 0 || g.Blob(u) != nil || !ok1 || !ok2 || !ok3 || den != 1 || ev != 1 || num < 1 {
				return no, false
			}
			unit = g.Text(u)
			if unit != "generic" {
				if num != 1 {
					unit = strconv.FormatInt(num, 10) + unit
				}
				unit = "[" + unit + "]"
			} else {
				unit = ""
			}
		}
		if m := g.Res(meta); g.Kind(m) != pickle.KindDict || g.NItems(m) != 0 || g.NMuts(m) > 0 {
			return no, false // dtype metadata: not canonicalised
		}
	} else if kind == "M" || kind == "m" {
		return no, false
	}
	names, fields := g.Res(st[3]), g.Res(st[4])
	switch {
	case !g.IsNone(st[2]): // subarray (base, shape)
		sub, ok := g.Tuple(st[2])
		if !ok || len(sub) != 2 || !g.IsNone(st[3]) {
			return no, false
		}
		base, ok := r.DTypeOf(sub[0], depth+1)
		shape, ok2 := r.Shape(sub[1])
		if !ok || !ok2 {
			return no, false
		}
		d.Descr = "(" + base.Descr + ")" + DescrShape(shape)
		d.Object = base.Object
	case !g.IsNone(names):
		nm, ok := g.Tuple(names)
		if !ok || g.Kind(fields) != pickle.KindDict || g.NMuts(fields) > 0 || kind != "V" {
			return no, false
		}
		ents := g.Items(fields)
		byName := make(map[string]pickle.ID, len(ents)/2)
		for j := 0; j+1 < len(ents); j += 2 {
			if s, ok := g.Str(ents[j]); ok {
				byName[s] = ents[j+1] // the last value of a key, as in Python
			}
		}
		var b strings.Builder
		b.WriteString("{")
		for k, x := range nm {
			name, ok := g.Str(x)
			if !ok {
				return no, false
			}
			f, ok := byName[name]
			if !ok {
				return no, false
			}
			ft, ok := g.Tuple(f)
			if !ok || len(ft) < 2 || len(ft) > 3 {
				return no, false
			}
			sub, ok := r.DTypeOf(ft[0], depth+1)
			off, ok2 := g.Small(ft[1])
			if !ok || !ok2 || off < 0 {
				return no, false
			}
			d.Object = d.Object || sub.Object
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(name))
			b.WriteString(":")
			b.WriteString(sub.Descr)
			b.WriteString("@")
			b.WriteString(strconv.FormatInt(off, 10))
			if len(ft) == 3 {
				title, ok := g.Str(ft[2])
				if !ok {
					return no, false
				}
				b.WriteString("#")
				b.WriteString(strconv.Quote(title))
			}
		}
		b.WriteString("}")
		b.WriteString(strconv.FormatInt(size, 10))
		if flags&0x80 != 0 { // NPY_ALIGNED_STRUCT
			b.WriteString("a")
		}
		d.Descr = b.String()
	default:
		if !g.IsNone(fields) {
			return no, false
		}
		if kind == "O" {
			d.Object = true
		}
		num := size
		if kind == "U" {
			num = size / 4
		}
		d.Descr = bo + kind + strconv.FormatInt(num, 10) + unit
	}
	if !d.Object && flags&0x03 != 0 { // NPY_ITEM_REFCOUNT | NPY_ITEM_HASOBJECT without an object field
		return no, false
	}
	return d, true
}

// Shape reads a tuple of non-negative ints whose product fits an int64.
func (r *Reader) Shape(n pickle.ID) ([]int64, bool) {
	g := r.G
	items, ok := g.Tuple(n)
	if !ok || len(items) > 64 {
		return nil, false
	}
	out := make([]int64, len(items))
	for i, it := range items {
		x, ok := g.Small(it)
		if !ok || x < 0 || g.Kind(g.Res(it)) != pickle.KindInt {
			return nil, false
		}
		out[i] = x
	}
	if _, ok := Count(out); !ok {
		return nil, false
	}
	return out, true
}

// DescrShape is a shape as a canonical descr writes it: [2,3].
func DescrShape(shape []int64) string {
	var b strings.Builder
	b.WriteString("[")
	for i, d := range shape {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteString("]")
	return b.String()
}

// MemOrder is the order of an array's data: 'F' only when it differs from
// 'C' (more than one dimension longer than 1).
func MemOrder(fortran bool, shape []int64) byte {
	if !fortran {
		return 'C'
	}
	long := 0
	for _, d := range shape {
		if d > 1 {
			long++
		}
	}
	if long > 1 {
		return 'F'
	}
	return 'C'
}

// Bytes returns a bytes/bytearray node without operations holding exactly
// want bytes (an array's data).
func (r *Reader) Bytes(n pickle.ID, want int64) (pickle.ID, bool) {
	g := r.G
	n = g.Res(n)
	if n < 0 || g.Special(n) != 0 || g.NMuts(n) > 0 || g.Folded(n) {
		return pickle.NoID, false
	}
	if k := g.Kind(n); k != pickle.KindBytes && k != pickle.KindByteArray {
		return pickle.NoID, false
	}
	return n, g.PayloadLen(n) == want
}

// Reconstruct reads the header of numpy's protocol 0-4 form: call n is
// _reconstruct(ndarray, shape0, typecode) with one BUILD of (version,
// shape, dtype, is_fortran, data) (or the 4 items without version). Data is
// the state's data item, unchecked.
func (r *Reader) Reconstruct(n pickle.ID) (*Header, bool) {
	g := r.G
	if g.Op(n) != pickle.REDUCE || g.Kwargs(n) != pickle.NoID || g.Folded(n) || g.Res(n) != n {
		return nil, false
	}
	args, ok := g.Tuple(g.Args(n))
	if !ok || len(args) != 3 {
		return nil, false
	}
	if mod, name, ok := g.Global(args[0]); !ok || mod != "numpy" || name != "ndarray" {
		return nil, false
	}
	if _, ok := g.Tuple(args[1]); !ok {
		return nil, false
	}
	if b := g.Res(args[2]); g.Kind(b) != pickle.KindBytes {
		return nil, false
	}
	muts := g.Muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return nil, false
	}
	st, ok := g.Tuple(muts[0].Args[0])
	if !ok || (len(st) != 5 && len(st) != 4) {
		return nil, false
	}
	if len(st) == 5 {
		if ver, ok := g.Small(st[0]); !ok || ver != 1 {
			return nil, false
		}
		st = st[1:]
	}
	shape, ok := r.Shape(st[0])
	if !ok {
		return nil, false
	}
	d, ok := r.DTypeOf(st[1], 0)
	if !ok {
		return nil, false
	}
	fort := g.Res(st[2])
	if g.Kind(fort) != pickle.KindBool && g.Kind(fort) != pickle.KindInt {
		return nil, false
	}
	f, ok := g.Small(fort)
	if !ok {
		return nil, false
	}
	return &Header{Descr: d, Shape: shape, Order: MemOrder(f != 0, shape), Data: st[3], Rule: RuleNumpyReconstruct}, true
}

// Frombuffer reads the header of numpy's protocol 5 form: call n is
// _frombuffer(buf, dtype, shape, order). Data is buf, unchecked.
func (r *Reader) Frombuffer(n pickle.ID) (*Header, bool) {
	g := r.G
	if g.Op(n) != pickle.REDUCE || g.Kwargs(n) != pickle.NoID || g.NMuts(n) > 0 || g.Folded(n) || g.Res(n) != n {
		return nil, false
	}
	args, ok := g.Tuple(g.Args(n))
	if !ok || len(args) != 4 {
		return nil, false
	}
	d, ok := r.DTypeOf(args[1], 0)
	if !ok || d.Object {
		return nil, false
	}
	shape, ok := r.Shape(args[2])
	if !ok {
		return nil, false
	}
	o, ok := g.Str(args[3])
	if !ok || (o != "C" && o != "F") {
		return nil, false
	}
	return &Header{Descr: d, Shape: shape, Order: MemOrder(o == "F", shape), Data: args[0], Rule: RuleNumpyFrombuffer}, true
}

// WrapperState returns the BUILD state of joblib's NumpyArrayWrapper n by
// key (a dict of str keys, its only operations BUILDs), when its subclass
// is numpy.ndarray.
func (r *Reader) WrapperState(n pickle.ID) (map[string]pickle.ID, bool) {
	g := r.G
	state := map[string]pickle.ID{}
	for _, m := range g.Muts(n) {
		if m.Op != pickle.BUILD || len(m.Args) != 1 {
			return nil, false
		}
		st := g.Res(m.Args[0])
		if g.Kind(st) != pickle.KindDict || g.NMuts(st) > 0 {
			return nil, false
		}
		it := g.Items(st)
		for i := 0; i+1 < len(it); i += 2 {
			k, ok := g.Str(it[i])
			if !ok {
				return nil, false
			}
			state[k] = it[i+1]
		}
	}
	if mod, name, ok := g.Global(state["subclass"]); !ok || mod != "numpy" || name != "ndarray" {
		return nil, false
	}
	return state, true
}

// Joblib reads the header of joblib's NumpyArrayWrapper n (its BUILD
// state gives subclass, shape, order and dtype); its elements follow the
// pickle (a raw part, or a nested pickle for objects).
func (r *Reader) Joblib(n pickle.ID) (*Header, bool) {
	state, ok := r.WrapperState(n)
	if !ok {
		return nil, false
	}
	sh, ok1 := state["shape"]
	dt, ok2 := state["dtype"]
	if !ok1 || !ok2 {
		return nil, false
	}
	shape, ok := r.Shape(sh)
	if !ok {
		return nil, false
	}
	d, ok := r.DTypeOf(dt, 0)
	if !ok {
		return nil, false
	}
	order := "C"
	if o, ok := state["order"]; ok {
		if order, ok = r.G.Str(o); !ok || (order != "C" && order != "F") {
			return nil, false
		}
	}
	return &Header{Descr: d, Shape: shape, Order: MemOrder(order == "F", shape), Data: pickle.NoID, Rule: RuleJoblibArray}, true
}
