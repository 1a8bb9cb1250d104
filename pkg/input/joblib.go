package input

import (
	"fmt"
	"hash"
	"io"
	"math"
	"math/bits"
	"strconv"

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
func classOf(n *pickle.Node) string {
	if n.Kind != pickle.KindCall || n.Func() == nil {
		return ""
	}
	f := n.Func()
	q := f.Qualified()
	if q == "copyreg._reconstructor" && n.Args() != nil && len(n.Args().Items) > 0 {
		return n.Args().Items[0].Qualified()
	}
	if n.Op == pickle.REDUCE {
		return ""
	}
	return q
}

func (j *joblibHook) fail(rd *pickle.Reader, format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	if j.where != "" {
		reason += fmt.Sprintf(" (offset %d is in the %s)", rd.Offset(), j.where)
	}
	return &pickle.Error{File: j.doc.Path, Offset: rd.Offset(), Op: "BUILD", Reason: reason}
}

func (j *joblibHook) afterBuild(rd *pickle.Reader, stream int, n *pickle.Node) error {
	cls := classOf(n)
	if oldWrapperNames[cls] {
		return j.fail(rd, "%s: joblib < 0.10 kept arrays in separate files; pk does not read that format", cls)
	}
	if !wrapperNames[cls] {
		return nil
	}
	st, err := wrapperState(n)
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
		s, err := pickle.RunStream(rd, 0)
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
		f := &pickle.File{Name: j.doc.Path, Size: rd.Offset() - start, Streams: []*pickle.Stream{s}}
		j.parts = append(j.parts, Part{Name: fmt.Sprintf("array %d", idx), Role: RoleObjects, Pickle: f, Node: n, NodeID: pickle.ID(n.ID), NodeStream: stream, Of: 0, Gap: [2]int64{gapStart, rd.Offset()}})
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
	j.parts = append(j.parts, Part{Name: fmt.Sprintf("array %d", idx), Role: RoleArray, Raw: raw, Node: n, NodeID: pickle.ID(n.ID), NodeStream: stream, Of: 0, Gap: [2]int64{gapStart, rd.Offset()}})
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
func wrapperState(n *pickle.Node) (*wrapperInfo, error) {
	state := map[string]*pickle.Node{}
	for _, m := range n.Muts() {
		if m.Op != pickle.BUILD || len(m.Args) != 1 {
			continue
		}
		s := m.Args[0]
		if s.Kind == pickle.KindTuple && len(s.Items) == 2 { // (dict, slotstate)
			s = s.Items[0]
		}
		if s.Kind == pickle.KindNone {
			continue
		}
		if s.Kind != pickle.KindDict {
			return nil, fmt.Errorf("state is a %s, not a dict", s.Kind)
		}
		for i := 0; i+1 < len(s.Items); i += 2 {
			if k := s.Items[i]; k.Kind == pickle.KindStr {
				state[k.Str] = s.Items[i+1]
			}
		}
	}
	w := &wrapperInfo{order: "C"}
	sh, ok := state["shape"]
	if !ok || sh.Kind != pickle.KindTuple {
		return nil, fmt.Errorf("no shape tuple")
	}
	count := int64(1)
	for _, it := range sh.Items {
		if it.Kind != pickle.KindInt || it.IsBig() || it.Int < 0 {
			return nil, fmt.Errorf("shape holds %s, not a non-negative int", it.Kind)
		}
		hi, lo := bits.Mul64(uint64(count), uint64(it.Int))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, fmt.Errorf("shape overflows")
		}
		count = int64(lo)
		w.shape = append(w.shape, it.Int)
	}
	if o, ok := state["order"]; ok && o.Kind == pickle.KindStr {
		w.order = o.Str
	}
	dt, ok := state["dtype"]
	if !ok {
		return nil, fmt.Errorf("no dtype")
	}
	d, err := dtypeOf(dt)
	if err != nil {
		return nil, err
	}
	w.dtype, w.object = d.str, d.object
	if a, ok := state["numpy_array_alignment_bytes"]; ok && a.Kind != pickle.KindNone {
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
func dtypeOf(n *pickle.Node) (*dtypeInfo, error) {
	if n.Kind != pickle.KindCall || n.Func() == nil {
		return nil, fmt.Errorf("dtype is a %s, not a numpy.dtype call", n.Kind)
	}
	switch n.Func().Qualified() {
	case "numpy.dtype", "numpy.core.multiarray.dtype", "numpy._core.multiarray.dtype":
	default:
		return nil, fmt.Errorf("dtype made by %q, not numpy.dtype", n.Func().Qualified())
	}
	args := n.Args()
	if args == nil || args.Kind != pickle.KindTuple || len(args.Items) < 1 || args.Items[0].Kind != pickle.KindStr {
		return nil, fmt.Errorf("numpy.dtype without a type string")
	}
	ts := args.Items[0].Str
	d := &dtypeInfo{}
	order := "|"
	elsize := int64(-1)
	var flags int64
	for _, m := range n.Muts() {
		if m.Op != pickle.BUILD || len(m.Args) != 1 || m.Args[0].Kind != pickle.KindTuple {
			continue
		}
		it := m.Args[0].Items
		if len(it) >= 8 {
			if it[1].Kind == pickle.KindStr {
				order = it[1].Str
			}
			if it[5].Kind == pickle.KindInt {
				elsize = it[5].Int
			}
			if it[7].Kind == pickle.KindInt {
				flags = it[7].Int
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
	d.size = size
	return d, nil
}
