package input

import (
	"fmt"
	"hash"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/pickle"
)

// joblibHook reads what joblib's NumpyUnpickler reads after the BUILD of a
// NumpyArrayWrapper: (joblib >= 1.2, numpy_array_alignment_bytes set) one
// padding-length byte and that many padding bytes, then the array's bytes;
// for object arrays, a nested pickle instead.
type joblibHook struct {
	doc   *Doc
	where string
	opt   pickle.Options
	ra    *readerAtSize
	parts []Part
}

var wrapperNames = map[string]bool{
	"joblib.numpy_pickle.NumpyArrayWrapper":                   true,
	"sklearn.externals.joblib.numpy_pickle.NumpyArrayWrapper": true,
}

var oldWrapperNames = map[string]bool{
	"joblib.numpy_pickle.NDArrayWrapper":                          true,
	"joblib.numpy_pickle.ZNDArrayWrapper":                         true,
	"joblib.numpy_pickle_compat.NDArrayWrapper":                   true,
	"joblib.numpy_pickle_compat.ZNDArrayWrapper":                  true,
	"sklearn.externals.joblib.numpy_pickle.NDArrayWrapper":        true,
	"sklearn.externals.joblib.numpy_pickle.ZNDArrayWrapper":       true,
	"sklearn.externals.joblib.numpy_pickle_compat.NDArrayWrapper": true,
}

// classOf returns the qualified class name an instance node was made from
// (NEWOBJ/NEWOBJ_EX/INST/OBJ of a global, or copyreg._reconstructor(cls, ...)).
func classOf(s *pickle.Store, n pickle.ID) string {
	if g := classGlobal(s, n); g >= 0 {
		return s.Qualified(g)
	}
	return ""
}

// classGlobal is the global node whose qualified name classOf returns, or
// NoID. Its Name costs no allocation, so a check can look at it first.
func classGlobal(s *pickle.Store, n pickle.ID) pickle.ID {
	if s.Kind(n) != pickle.KindCall || s.Func(n) < 0 {
		return pickle.NoID
	}
	f := s.Func(n)
	if a := s.Args(n); s.Name(f) == "_reconstructor" && s.Qualified(f) == "copyreg._reconstructor" && a >= 0 && s.NItems(a) > 0 {
		return s.Items(a)[0]
	}
	if s.Op(n) == pickle.REDUCE || s.Kind(f) != pickle.KindGlobal {
		return pickle.NoID
	}
	return f
}

func (j *joblibHook) fail(rd *pickle.Reader, format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	if j.where != "" {
		reason += fmt.Sprintf(" (offset %d is in the %s)", rd.Offset(), j.where)
	}
	return &pickle.Error{File: j.doc.Path, Offset: rd.Offset(), Op: "BUILD", Reason: reason}
}

func (j *joblibHook) afterBuild(rd *pickle.Reader, s *pickle.Store, n pickle.ID) error {
	// every name in wrapperNames and oldWrapperNames ends so; a BUILD of any
	// other class (a million of them in some files) costs no string
	g := classGlobal(s, n)
	if g < 0 || !strings.HasSuffix(s.Name(g), "ArrayWrapper") {
		return nil
	}
	cls := s.Qualified(g)
	if oldWrapperNames[cls] {
		return j.fail(rd, "%s: joblib < 0.10 kept arrays in separate files; pk does not read that format", cls)
	}
	if !wrapperNames[cls] {
		return nil
	}
	st, err := wrapperState(s, n)
	if err != nil {
		return j.fail(rd, "joblib NumpyArrayWrapper: %v; joblib could not read its array either, pk refuses", err)
	}
	if fl := rd.FrameLeft(); fl > 0 {
		return j.fail(rd, "joblib array data inside a pickle frame (%d frame bytes left): joblib reads it after the frame; pk refuses", fl)
	}
	idx := len(j.parts)
	gapStart := rd.Offset()
	if st.object {
		saved := rd.AfterBuild
		rd.AfterBuild = nil
		start := rd.Offset()
		ns, err := pickle.RunStream(rd, 0)
		rd.AfterBuild = saved
		if err != nil {
			if pe, ok := pickle.AsError(err); ok {
				c := *pe
				c.Reason = "in the nested pickle of a joblib object array: " + c.Reason
				if j.where != "" {
					c.Reason += fmt.Sprintf(" (offset %d is in the %s)", c.Offset, j.where)
				}
				return &c
			}
			return err
		}
		if rd.FrameLeft() > 0 {
			return j.fail(rd, "the nested pickle of a joblib object array ends inside a frame")
		}
		f := &pickle.File{Name: j.doc.Path, Size: rd.Offset() - start, Streams: []*pickle.Stream{ns}}
		j.parts = append(j.parts, Part{Name: fmt.Sprintf("array %d", idx), Role: RoleObjects, Pickle: f, NodeID: n, NodeStream: s.Index, Of: 0, Gap: [2]int64{gapStart, rd.Offset()}})
		return nil
	}
	if st.padded {
		b := rd.Peek(1)
		if len(b) < 1 {
			return j.fail(rd, "joblib array: the input ends before the padding byte")
		}
		pad := int64(b[0])
		if _, err := rd.Discard(1 + pad); err != nil {
			return j.fail(rd, "joblib array: the input ends inside the %d padding bytes", pad)
		}
	}
	if size := rd.Size(); size >= 0 && st.nbytes > size-rd.Offset() {
		return j.fail(rd, "joblib array of %d bytes (%s, shape %v) exceeds the %d bytes left", st.nbytes, st.dtype, st.shape, size-rd.Offset())
	}
	raw := &Raw{Offset: rd.Offset(), Where: j.where, DType: st.dtype, Shape: st.shape, Order: st.order}
	if err := readRaw(rd, st.nbytes, raw, j.opt.NewHash); err != nil {
		return j.fail(rd, "joblib array of %d bytes (%s, shape %v): %v", st.nbytes, st.dtype, st.shape, err)
	}
	if j.ra != nil && j.ra.r != nil && j.where == "" {
		raw.open = sectionOpener(j.ra.r, raw.Offset, raw.Len)
	}
	j.parts = append(j.parts, Part{Name: fmt.Sprintf("array %d", idx), Role: RoleArray, Raw: raw, NodeID: n, NodeStream: s.Index, Of: 0, Gap: [2]int64{gapStart, rd.Offset()}})
	return nil
}

// readRaw consumes n bytes from rd into raw (length, prefix, digest).
func readRaw(rd *pickle.Reader, n int64, raw *Raw, newHash func() hash.Hash) error {
	w := &rawWriter{}
	if newHash != nil {
		w.h = newHash()
	}
	saved := rd.Tee
	if saved != nil {
		rd.Tee = io.MultiWriter(saved, w)
	} else {
		rd.Tee = w
	}
	got, err := rd.Discard(n)
	rd.Tee = saved
	raw.Len = got
	raw.Prefix = w.prefix
	if w.h != nil {
		raw.Digest = w.h.Sum(nil)
	}
	if err != nil || got != n {
		return fmt.Errorf("the input ends after %d of them", got)
	}
	return nil
}

type rawWriter struct {
	h      hash.Hash
	prefix []byte
}

func (w *rawWriter) Write(p []byte) (int, error) {
	if len(w.prefix) < pickle.BlobPrefix {
		k := min(pickle.BlobPrefix-len(w.prefix), len(p))
		w.prefix = append(w.prefix, p[:k]...)
	}
	if w.h != nil {
		w.h.Write(p)
	}
	return len(p), nil
}

type wrapperInfo struct {
	shape  []int64
	order  string
	dtype  string
	object bool
	padded bool
	nbytes int64
}

// wrapperState merges the BUILD states applied so far (as __dict__.update
// does) and reads shape, order, dtype and the alignment.
func wrapperState(s *pickle.Store, n pickle.ID) (*wrapperInfo, error) {
	state := map[string]pickle.ID{}
	for _, m := range s.Muts(n) {
		if m.Op != pickle.BUILD || len(m.Args) != 1 {
			continue
		}
		st := m.Args[0]
		if s.Kind(st) == pickle.KindTuple && s.NItems(st) == 2 { // (dict, slotstate)
			st = s.Items(st)[0]
		}
		if s.Kind(st) == pickle.KindNone {
			continue
		}
		if s.Kind(st) != pickle.KindDict {
			return nil, fmt.Errorf("state is a %s, not a dict", s.Kind(st))
		}
		it := s.Items(st)
		for i := 0; i+1 < len(it); i += 2 {
			if k := it[i]; s.Kind(k) == pickle.KindStr {
				state[s.Str(k)] = it[i+1]
			}
		}
	}
	w := &wrapperInfo{order: "C"}
	sh, ok := state["shape"]
	if !ok || s.Kind(sh) != pickle.KindTuple {
		return nil, fmt.Errorf("no shape tuple")
	}
	count := int64(1)
	for _, it := range s.Items(sh) {
		if s.Kind(it) != pickle.KindInt || s.IsBig(it) || s.Int(it) < 0 {
			return nil, fmt.Errorf("shape holds %s, not a non-negative int", s.Kind(it))
		}
		hi, lo := bits.Mul64(uint64(count), uint64(s.Int(it)))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, fmt.Errorf("shape overflows")
		}
		count = int64(lo)
		w.shape = append(w.shape, s.Int(it))
	}
	if o, ok := state["order"]; ok && s.Kind(o) == pickle.KindStr {
		w.order = s.Str(o)
	}
	dt, ok := state["dtype"]
	if !ok {
		return nil, fmt.Errorf("no dtype")
	}
	d, err := dtypeOf(s, dt)
	if err != nil {
		return nil, err
	}
	w.dtype, w.object = d.str, d.object
	if a, ok := state["numpy_array_alignment_bytes"]; ok && s.Kind(a) != pickle.KindNone {
		w.padded = true
	}
	if !w.object {
		hi, lo := bits.Mul64(uint64(count), uint64(d.size))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, fmt.Errorf("array size overflows")
		}
		w.nbytes = int64(lo)
	}
	return w, nil
}

type dtypeInfo struct {
	str    string // numpy's dtype.str: byte order, kind, item size
	size   int64
	object bool
}

// dtypeOf reads a pickled numpy.dtype: numpy.dtype(typestr, align, copy)
// REDUCE, then BUILD (version, byteorder, subarray, names, fields, elsize,
// alignment, flags[, metadata]).
func dtypeOf(s *pickle.Store, n pickle.ID) (*dtypeInfo, error) {
	if s.Kind(n) != pickle.KindCall || s.Func(n) < 0 {
		return nil, fmt.Errorf("dtype is a %s, not a numpy.dtype call", s.Kind(n))
	}
	switch q := s.Qualified(s.Func(n)); q {
	case "numpy.dtype", "numpy.core.multiarray.dtype", "numpy._core.multiarray.dtype":
	default:
		return nil, fmt.Errorf("dtype made by %q, not numpy.dtype", q)
	}
	args := s.Args(n)
	if args < 0 || s.Kind(args) != pickle.KindTuple || s.NItems(args) < 1 || s.Kind(s.Items(args)[0]) != pickle.KindStr {
		return nil, fmt.Errorf("numpy.dtype without a type string")
	}
	ts := s.Str(s.Items(args)[0])
	d := &dtypeInfo{}
	order := "|"
	elsize := int64(-1)
	var flags int64
	for _, m := range s.Muts(n) {
		if m.Op != pickle.BUILD || len(m.Args) != 1 || s.Kind(m.Args[0]) != pickle.KindTuple {
			continue
		}
		it := s.Items(m.Args[0])
		if len(it) >= 8 {
			if s.Kind(it[1]) == pickle.KindStr {
				order = s.Str(it[1])
			}
			if s.Kind(it[5]) == pickle.KindInt {
				elsize = s.Int(it[5])
			}
			if s.Kind(it[7]) == pickle.KindInt {
				flags = s.Int(it[7])
			}
		}
	}
	if ts == "" {
		return nil, fmt.Errorf("empty dtype type string")
	}
	kind := ts[0]
	digits := ts[1:]
	size := int64(-1)
	if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v >= 0 {
		size = v
		if kind == 'U' {
			size *= 4
		}
	}
	if elsize > 0 {
		size = elsize
	}
	if kind == 'O' || flags&1 != 0 {
		d.object = true
	}
	if size < 0 && !d.object {
		return nil, fmt.Errorf("dtype %q: unknown item size", ts)
	}
	if order == "=" || order == "" {
		order = "<"
	}
	if size >= 0 {
		num := size
		if kind == 'U' {
			num = size / 4
		}
		d.str = order + string(kind) + strconv.FormatInt(num, 10)
	} else {
		d.str = order + ts
	}
	if kind == 'M' || kind == 'm' {
		// a datetime's unit is in the dtype's metadata: pkg/array's
		// reader, as pk-canon/2 reads the dtype ("<M8[D]", not "<M8")
		if x, ok := array.NewReader(array.StoreGraph{S: s}).DTypeOf(n, 0); ok && x.Size == size {
			d.str = x.Descr
		}
	}
	d.size = size
	return d, nil
}

// JoblibWrapper reports whether node n of store s is an instance of one of
// joblib's array wrappers, whose BUILD joblib follows with array bytes that
// are not opcodes: a caller that reads a bare pickle without Open (pk hash
// stream by stream) must leave such a file to Open.
func JoblibWrapper(s *pickle.Store, n pickle.ID) bool {
	if s.Kind(n) != pickle.KindCall || s.Func(n) < 0 {
		return false
	}
	// called on every BUILD: names are joined only for the modules a
	// wrapper's class comes from (or copyreg._reconstructor's)
	if mod := s.Str(s.Func(n)); !strings.HasPrefix(mod, "joblib") && !strings.HasPrefix(mod, "sklearn") && mod != "copyreg" {
		return false
	}
	c := classOf(s, n)
	return wrapperNames[c] || oldWrapperNames[c]
}
