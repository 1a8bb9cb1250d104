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
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// KindArray is a numpy array recognised by pk-canon/2 (see Array).
const KindArray = KindTracker + 1

// Rule names of the array recognizer (pk-canon/2).
const (
	RuleNumpyReconstruct = "numpy-reconstruct" // _reconstruct + BUILD, protocols 0-4
	RuleNumpyFrombuffer  = "numpy-frombuffer"  // _frombuffer, protocol 5
	RuleJoblibArray      = "joblib-array"      // joblib NumpyArrayWrapper + raw bytes
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

// numpy's names under numpy 1 (numpy.core) and numpy 2 (numpy._core).
func numpyReconstruct(who string) bool {
	return who == "std:numpy.core.multiarray._reconstruct" || who == "std:numpy._core.multiarray._reconstruct"
}

func numpyFrombuffer(who string) bool {
	return who == "std:numpy.core.numeric._frombuffer" || who == "std:numpy._core.numeric._frombuffer"
}

func numpyDtype(who string) bool {
	return who == "std:numpy.dtype" || who == "std:numpy.core.multiarray.dtype" || who == "std:numpy._core.multiarray.dtype"
}

// maxDtypeDepth bounds the nesting of structured and subarray dtypes.
const maxDtypeDepth = 32

// dtype is a recognised dtype.
type dtype struct {
	descr  string
	size   int64
	object bool
}

// dtypeOf reads a pickled numpy.dtype node, once per node (many arrays
// share one dtype object through the memo).
func (v *View) dtypeOf(n pickle.ID, depth int) (dtype, bool) {
	n = v.res(n)
	if d, ok := v.dtypes[n]; ok {
		return d, d.size >= 0
	}
	d, ok := v.readDtype(n, depth)
	if !ok {
		d = dtype{size: -1}
	}
	if v.dtypes == nil {
		v.dtypes = map[pickle.ID]dtype{}
	}
	v.dtypes[n] = d
	return d, ok
}

func (v *View) readDtype(n pickle.ID, depth int) (dtype, bool) {
	var no dtype
	if depth > maxDtypeDepth || n < 0 || v.kind(n) != pickle.KindCall || v.opOf(n) != pickle.REDUCE || len(v.extra(n)) > 0 {
		return no, false
	}
	if !numpyDtype(v.callable(v.fn(n))) {
		return no, false
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok || len(args) < 1 || len(args) > 3 {
		return no, false
	}
	ts, ok := v.str(args[0])
	if !ok || ts == "" {
		return no, false
	}
	muts := v.muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return no, false
	}
	st, ok := v.tuple(muts[0].Args[0])
	if !ok || len(st) < 8 || len(st) > 9 {
		return no, false
	}
	ver, ok1 := v.small(st[0])
	bo, ok2 := v.str(st[1])
	elsize, ok3 := v.small(st[5])
	flags, ok4 := v.small(st[7])
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
	d := dtype{size: size}
	var unit string
	if len(st) == 9 {
		// version 4: metadata; datetimes: (metadata, (unit, num, den, events))
		meta := st[8]
		if kind == "M" || kind == "m" {
			t, ok := v.tuple(meta)
			if !ok || len(t) != 2 {
				return no, false
			}
			meta = t[0]
			dt, ok := v.tuple(t[1])
			if !ok || len(dt) != 4 {
				return no, false
			}
			u := v.res(dt[0])
			num, ok1 := v.small(dt[1])
			den, ok2 := v.small(dt[2])
			ev, ok3 := v.small(dt[3])
			if v.kind(u) != pickle.KindBytes || v.nmuts(u) > 0 || v.blob(u) != nil || !ok1 || !ok2 || !ok3 || den != 1 || ev != 1 || num < 1 {
				return no, false
			}
			unit = v.text(u)
			if unit != "generic" {
				if num != 1 {
					unit = strconv.FormatInt(num, 10) + unit
				}
				unit = "[" + unit + "]"
			} else {
				unit = ""
			}
		}
		if m := v.res(meta); v.kind(m) != pickle.KindDict || v.nitems(m) != 0 || v.nmuts(m) > 0 {
			return no, false // dtype metadata: not canonicalised
		}
	} else if kind == "M" || kind == "m" {
		return no, false
	}
	names, fields := v.res(st[3]), v.res(st[4])
	switch {
	case !v.isNone(st[2]): // subarray (base, shape)
		sub, ok := v.tuple(st[2])
		if !ok || len(sub) != 2 || !v.isNone(st[3]) {
			return no, false
		}
		base, ok := v.dtypeOf(sub[0], depth+1)
		shape, ok2 := v.shape(sub[1])
		if !ok || !ok2 {
			return no, false
		}
		d.descr = "(" + base.descr + ")" + shapeText(shape)
		d.object = base.object
	case !v.isNone(names):
		nm, ok := v.tuple(names)
		if !ok || v.kind(fields) != pickle.KindDict || v.nmuts(fields) > 0 || kind != "V" {
			return no, false
		}
		ents := v.items(fields)
		byName := make(map[string]pickle.ID, len(ents)/2)
		for j := 0; j+1 < len(ents); j += 2 {
			if s, ok := v.str(ents[j]); ok {
				byName[s] = ents[j+1] // the last value of a key, as in Python
			}
		}
		var b strings.Builder
		b.WriteString("{")
		for k, x := range nm {
			name, ok := v.str(x)
			if !ok {
				return no, false
			}
			f, ok := byName[name]
			if !ok {
				return no, false
			}
			ft, ok := v.tuple(f)
			if !ok || len(ft) < 2 || len(ft) > 3 {
				return no, false
			}
			sub, ok := v.dtypeOf(ft[0], depth+1)
			off, ok2 := v.small(ft[1])
			if !ok || !ok2 || off < 0 {
				return no, false
			}
			d.object = d.object || sub.object
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(name))
			b.WriteString(":")
			b.WriteString(sub.descr)
			b.WriteString("@")
			b.WriteString(strconv.FormatInt(off, 10))
			if len(ft) == 3 {
				title, ok := v.str(ft[2])
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
		d.descr = b.String()
	default:
		if !v.isNone(fields) {
			return no, false
		}
		if kind == "O" {
			d.object = true
		}
		num := size
		if kind == "U" {
			num = size / 4
		}
		d.descr = bo + kind + strconv.FormatInt(num, 10) + unit
	}
	if !d.object && flags&0x03 != 0 { // NPY_ITEM_REFCOUNT | NPY_ITEM_HASOBJECT without an object field
		return no, false
	}
	return d, true
}

// npyDescr reads a .npy header's type string ("<f8", "|b1", "<U5",
// "<M8[ns]") into the canonical descr and item size; structured descrs
// (lists) are not read.
func npyDescr(s string) (dtype, bool) {
	var no dtype
	if len(s) < 2 {
		return no, false
	}
	bo := s[:1]
	if bo != "<" && bo != ">" && bo != "|" {
		return no, false
	}
	rest := s[1:]
	unit := ""
	if j := strings.IndexByte(rest, '['); j >= 0 {
		unit, rest = rest[j:], rest[:j]
		if !strings.HasSuffix(unit, "]") || len(unit) < 3 {
			return no, false
		}
	}
	if len(rest) < 2 || rest[0] < 'A' || rest[0] > 'z' {
		return no, false
	}
	kind := rest[:1]
	num, err := strconv.ParseInt(rest[1:], 10, 32)
	if err != nil || num < 0 || kind == "O" || kind == "V" && unit != "" {
		return no, false
	}
	if (unit != "") != (kind == "M" || kind == "m") {
		return no, false
	}
	size := num
	if kind == "U" {
		size *= 4
	}
	if unit == "[generic]" {
		unit = ""
	}
	return dtype{descr: bo + kind + strconv.FormatInt(num, 10) + unit, size: size}, true
}

// npyFields reads a .npy header's structured descr, a list of (name,
// descr[, shape]) fields laid out one after the other (numpy writes the
// padding of other layouts as fields named ”), into the canonical descr of
// §2.1: the same as the pickled packed dtype.
func npyFields(v any, depth int) (dtype, bool) {
	var no dtype
	fields, ok := v.([]any)
	if !ok || depth > maxDtypeDepth || len(fields) == 0 {
		return no, false
	}
	var b strings.Builder
	b.WriteString("{")
	off := int64(0)
	n := 0
	for _, f := range fields {
		t, ok := f.([]any)
		if !ok || len(t) < 2 || len(t) > 3 {
			return no, false
		}
		name, ok := t[0].(string)
		if !ok {
			return no, false // (title, name) pairs: not read
		}
		var sub dtype
		switch x := t[1].(type) {
		case string:
			sub, ok = npyDescr(x)
		case []any:
			sub, ok = npyFields(x, depth+1)
		default:
			ok = false
		}
		if !ok {
			return no, false
		}
		size := sub.size
		if len(t) == 3 {
			var shape []int64
			switch s := t[2].(type) {
			case int64:
				shape = []int64{s}
			case []any:
				for _, d := range s {
					k, ok := d.(int64)
					if !ok || k < 0 {
						return no, false
					}
					shape = append(shape, k)
				}
			default:
				return no, false
			}
			total, ok := nbytes(shape, sub.size)
			if !ok {
				return no, false
			}
			sub.descr, size = "("+sub.descr+")"+shapeText(shape), total
		}
		if name == "" && strings.HasPrefix(sub.descr, "|V") && len(t) == 2 {
			off += size // padding
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		b.WriteString(strconv.Quote(name))
		b.WriteString(":")
		b.WriteString(sub.descr)
		b.WriteString("@")
		b.WriteString(strconv.FormatInt(off, 10))
		off += size
		if off > math.MaxInt32 {
			return no, false
		}
	}
	b.WriteString("}")
	b.WriteString(strconv.FormatInt(off, 10))
	return dtype{descr: b.String(), size: off}, true
}

// small returns the value of an int (or bool) node that fits an int64.
func (v *View) small(n pickle.ID) (int64, bool) {
	n = v.res(n)
	if n < 0 || v.nmuts(n) > 0 || v.specialOf(n) != 0 || (v.kind(n) != pickle.KindInt && v.kind(n) != pickle.KindBool) || v.isBig(n) {
		return 0, false
	}
	return v.ival(n), true
}

// shape reads a tuple of non-negative ints whose product fits an int64.
func (v *View) shape(n pickle.ID) ([]int64, bool) {
	items, ok := v.tuple(n)
	if !ok || len(items) > 64 {
		return nil, false
	}
	out := make([]int64, len(items))
	for i, it := range items {
		x, ok := v.small(it)
		if !ok || x < 0 || v.kind(v.res(it)) != pickle.KindInt {
			return nil, false
		}
		out[i] = x
	}
	if _, ok := count(out); !ok {
		return nil, false
	}
	return out, true
}

// count is the product of the dimensions.
func count(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int64(lo)
	}
	return n, true
}

func shapeText(shape []int64) string {
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

// memOrder is the order of an array's data: 'F' only when it differs from
// 'C' (more than one dimension longer than 1).
func memOrder(fortran bool, shape []int64) byte {
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

// nbytes is count × item size, or false on overflow.
func nbytes(shape []int64, item int64) (int64, bool) {
	c, ok := count(shape)
	if !ok {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(c), uint64(item))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// byteData returns a bytes/bytearray node without operations holding
// exactly want bytes.
func (v *View) byteData(n pickle.ID, want int64) (pickle.ID, bool) {
	n = v.res(n)
	if n < 0 || v.specialOf(n) != 0 || v.nmuts(n) > 0 || len(v.extra(n)) > 0 {
		return pickle.NoID, false
	}
	if k := v.kind(n); k != pickle.KindBytes && k != pickle.KindByteArray {
		return pickle.NoID, false
	}
	return n, v.plen(n) == want
}

// reconstructArray reads numpy's protocol 0-4 form: call n is
// _reconstruct(ndarray, shape0, typecode) with one BUILD of
// (version, shape, dtype, is_fortran, data) (or the 4 items without version).
func (v *View) reconstructArray(n pickle.ID) (*Array, bool) {
	if v.opOf(n) != pickle.REDUCE || v.kwargsOf(n) != pickle.NoID || len(v.extra(n)) > 0 || v.res(n) != n {
		return nil, false
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok || len(args) != 3 {
		return nil, false
	}
	if mod, name, ok := v.global(args[0]); !ok || mod != "numpy" || name != "ndarray" {
		return nil, false
	}
	if _, ok := v.tuple(args[1]); !ok {
		return nil, false
	}
	if b := v.res(args[2]); v.kind(b) != pickle.KindBytes {
		return nil, false
	}
	muts := v.muts(n)
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return nil, false
	}
	st, ok := v.tuple(muts[0].Args[0])
	if !ok || (len(st) != 5 && len(st) != 4) {
		return nil, false
	}
	if len(st) == 5 {
		if ver, ok := v.small(st[0]); !ok || ver != 1 {
			return nil, false
		}
		st = st[1:]
	}
	shape, ok := v.shape(st[0])
	if !ok {
		return nil, false
	}
	d, ok := v.dtypeOf(st[1], 0)
	if !ok {
		return nil, false
	}
	fort := v.res(st[2])
	if v.kind(fort) != pickle.KindBool && v.kind(fort) != pickle.KindInt {
		return nil, false
	}
	f, ok := v.small(fort)
	if !ok {
		return nil, false
	}
	a := &Array{Descr: d.descr, Item: d.size, Shape: shape, Order: memOrder(f != 0, shape),
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Rule: RuleNumpyReconstruct}
	if d.object {
		l := v.res(st[3])
		c, _ := count(shape)
		if v.kind(l) != pickle.KindList || v.nmuts(l) > 0 || int64(v.nitems(l)) != c {
			return nil, false
		}
		a.Items = l
		return a, true
	}
	want, ok := nbytes(shape, d.size)
	if !ok {
		return nil, false
	}
	data, ok := v.byteData(st[3], want)
	if !ok || v.kind(data) != pickle.KindBytes {
		return nil, false
	}
	a.Data = data
	return a, true
}

// frombufferArray reads numpy's protocol 5 form: call n is
// _frombuffer(buf, dtype, shape, order).
func (v *View) frombufferArray(n pickle.ID) (*Array, bool) {
	if v.opOf(n) != pickle.REDUCE || v.kwargsOf(n) != pickle.NoID || v.nmuts(n) > 0 || len(v.extra(n)) > 0 || v.res(n) != n {
		return nil, false
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok || len(args) != 4 {
		return nil, false
	}
	d, ok := v.dtypeOf(args[1], 0)
	if !ok || d.object {
		return nil, false
	}
	shape, ok := v.shape(args[2])
	if !ok {
		return nil, false
	}
	o, ok := v.str(args[3])
	if !ok || (o != "C" && o != "F") {
		return nil, false
	}
	a := &Array{Descr: d.descr, Item: d.size, Shape: shape, Order: memOrder(o == "F", shape),
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Rule: RuleNumpyFrombuffer}
	if b := v.res(args[0]); b >= 0 && v.kind(b) == pickle.KindBuffer && v.nmuts(b) == 0 {
		a.Buffer = b
		return a, true
	}
	want, ok := nbytes(shape, d.size)
	if !ok {
		return nil, false
	}
	data, ok := v.byteData(args[0], want)
	if !ok {
		return nil, false
	}
	a.Data = data
	return a, true
}

// wrapperState returns the BUILD state of joblib's NumpyArrayWrapper n by
// key (a dict of str keys, its only operations BUILDs), when its subclass
// is numpy.ndarray.
func (v *View) wrapperState(n pickle.ID) (map[string]pickle.ID, bool) {
	state := map[string]pickle.ID{}
	for _, m := range v.muts(n) {
		if m.Op != pickle.BUILD || len(m.Args) != 1 {
			return nil, false
		}
		st := v.res(m.Args[0])
		if v.kind(st) != pickle.KindDict || v.nmuts(st) > 0 {
			return nil, false
		}
		it := v.items(st)
		for i := 0; i+1 < len(it); i += 2 {
			k, ok := v.str(it[i])
			if !ok {
				return nil, false
			}
			state[k] = it[i+1]
		}
	}
	if mod, name, ok := v.global(state["subclass"]); !ok || mod != "numpy" || name != "ndarray" {
		return nil, false
	}
	return state, true
}

// joblibArray reads joblib's form: wrapper node n (a NumpyArrayWrapper
// whose BUILD state gives subclass, shape, order and dtype) and the raw
// part of its bytes.
func (v *View) joblibArray(n pickle.ID, raw *input.Raw) (*Array, bool) {
	state, ok := v.wrapperState(n)
	if !ok {
		return nil, false
	}
	sh, ok1 := state["shape"]
	dt, ok2 := state["dtype"]
	if !ok1 || !ok2 {
		return nil, false
	}
	shape, ok := v.shape(sh)
	if !ok {
		return nil, false
	}
	d, ok := v.dtypeOf(dt, 0)
	if !ok || d.object {
		return nil, false
	}
	order := "C"
	if o, ok := state["order"]; ok {
		if order, ok = v.str(o); !ok || (order != "C" && order != "F") {
			return nil, false
		}
	}
	if want, ok := nbytes(shape, d.size); !ok || want != raw.Len {
		return nil, false
	}
	return &Array{Descr: d.descr, Item: d.size, Shape: shape, Order: memOrder(order == "F", shape),
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Raw: raw, Rule: RuleJoblibArray}, true
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
	state, ok := v.wrapperState(n)
	if !ok {
		return nil, false
	}
	shape, ok := v.shape(state["shape"])
	if !ok {
		return nil, false
	}
	if d, ok := v.dtypeOf(state["dtype"], 0); !ok || !d.object {
		return nil, false
	}
	o := v.Opt
	o.arrays, o.src, o.NoPaths = nil, "", true
	vb := normalize(f.Streams[0], o, nil)
	root := vb.res(vb.s.Root)
	a := vb.arr[root]
	if root < 0 || vb.specialOf(root) != 'A' || a == nil || !a.Object() || !slicesEqual(a.Shape, shape) {
		return nil, false
	}
	if len(vb.Effects()) > 0 || len(vb.s.Leftover) > 0 || vb.s.LeftoverMarks > 0 {
		return nil, false // the nested pickle does more than make the array
	}
	return vb, true
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
		st := e.v.enc
		st.ordGen[n], st.ordVal[n] = e.gen, start
	} else if e.iso {
		e.ordM[n] = start
	} else {
		e.ordS[n] = start + 1
	}
}

// NpyArray reads the array of a .npy file's raw part (doc.Format "npy"),
// when its dtype is a type string.
func NpyArray(raw *input.Raw) (*Array, bool) {
	if raw == nil {
		return nil, false
	}
	var d dtype
	var ok bool
	switch {
	case raw.DTypeString:
		d, ok = npyDescr(raw.DType)
	case raw.Descr != nil:
		d, ok = npyFields(raw.Descr, 0)
	}
	if !ok || d.object {
		return nil, false
	}
	if want, ok := nbytes(raw.Shape, d.size); !ok || want != raw.Len {
		return nil, false
	}
	return &Array{Descr: d.descr, Item: d.size, Shape: raw.Shape, Order: memOrder(raw.Order == "F", raw.Shape),
		Data: pickle.NoID, Buffer: pickle.NoID, Items: pickle.NoID, Raw: raw, Rule: "npy-array"}, true
}

// ---- in the view ----

// docArrays is what an input tells the views of its streams about arrays
// outside them: joblib's raw array parts, by the wrapper node they follow.
type docArrays struct {
	doc   *input.Doc       // the input (torch storages)
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

// newDocArrays collects the joblib raw array parts of doc (nil when none).
func newDocArrays(doc *input.Doc) *docArrays {
	if doc == nil {
		return nil
	}
	d := &docArrays{doc: doc, raws: map[arrayKey]int{}, objs: map[arrayKey]int{}, parts: doc.Parts, used: map[int]bool{}}
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
	keys := make([]arrayKey, 0, len(d.raws)+len(d.objs))
	for k := range d.raws {
		keys = append(keys, k)
	}
	for k := range d.objs {
		keys = append(keys, k)
	}
	for _, k := range keys {
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
		case numpyReconstruct(who):
			a, ok = v.reconstructArray(n)
		case numpyFrombuffer(who):
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
		for k, i := range d.raws {
			if k.part != d.part || k.stream != v.Stream.Index || k.node < 0 || k.node >= v.base {
				continue
			}
			if a, ok := v.joblibArray(k.node, d.parts[i].Raw); ok {
				v.setArray(k.node, a)
				d.used[i] = true
			}
		}
		for k, i := range d.objs {
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
