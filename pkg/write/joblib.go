package write

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// arrayData is one joblib array: its bytes, written right after the BUILD
// of its NumpyArrayWrapper, as joblib writes them.
type arrayData struct {
	data   func() ([]byte, error)
	nested bool // an object array: data is a canonical pickle, without padding
}

// array writes the bytes of a joblib array after its wrapper n (built and
// its BUILD applied): the frame is closed, then, when the wrapper's state
// sets numpy_array_alignment_bytes A, a padding byte p and p bytes 0xff so
// that the data starts at a multiple of A (p in 1..A, as joblib computes
// it), then the data, outside any frame.
func (e *emitter) array(n *canon.Node, k key, a *arrayData) error {
	ops := n.Ops()
	if len(ops) != 1 || ops[0].Name != "build" || len(ops[0].Args) != 1 {
		return refuse(n, "a joblib NumpyArrayWrapper without exactly one BUILD: joblib would not read its array")
	}
	if _, waits := e.incomplete[nodeID(n)]; waits {
		return refuse(n, "a joblib NumpyArrayWrapper whose BUILD waits for a cycle: its array cannot follow it")
	}
	twice := refuse(n, "a joblib NumpyArrayWrapper used twice: joblib replaces it by its array where it is built").(*refusal)
	prov := int32(-1)
	if p, ok := e.memo.get(k); ok {
		prov = p
		if e.out.used(p) > 1 {
			return twice
		}
	}
	align := int64(0)
	for _, en := range ops[0].Args[0].Entries() {
		if a.nested {
			break // joblib pickles object arrays without padding
		}
		if en.Key.Kind() == pickle.KindStr && en.Key.Str() == "numpy_array_alignment_bytes" {
			switch en.Value.Kind() {
			case pickle.KindInt:
				if v := en.Value.Int(); v.IsInt64() && v.Int64() > 0 && v.Int64() < 256 {
					align = v.Int64()
				} else {
					return refuse(n, "numpy_array_alignment_bytes %s: joblib writes 16", v)
				}
			case pickle.KindNone:
			default:
				return refuse(n, "numpy_array_alignment_bytes is not an int")
			}
		}
	}
	// the bytes, and the check that the wrapper is not used again later,
	// when the tape is replayed
	e.out.array(arrayEvent{a: a, align: align, prov: prov, ref: twice})
	return nil
}

// joblibFile writes the canonical joblib file of doc: the canonical pickle
// with each array's bytes after its wrapper's BUILD, compressed as the
// input was; the output is read back and must have the input's pk hash.
func joblibFile(path string, doc *input.Doc, opt Options, copt canon.Options) ([]byte, error) {
	pk := doc.Parts[0]
	if pk.Pickle == nil || len(pk.Pickle.Streams) != 1 || pk.Pickle.Trailing != nil {
		return nil, &Error{File: path, Offset: -1, Reason: "a joblib file that is not one pickle stream with its arrays: pk canon does not write it"}
	}
	var whole []byte // the decompressed input, for arrays that cannot be re-read in place
	arrays := map[int64]*arrayData{}
	ps := pk.Pickle.Streams[0].Store()
	for _, p := range doc.Parts[1:] {
		if p.Role == input.RoleObjects && p.Pickle != nil && len(p.Pickle.Streams) == 1 && p.JoblibArray() && p.NodeStream == 0 {
			// an object array: joblib writes it as a protocol 2 pickle
			// after the wrapper's BUILD; written canonical, at protocol 2
			ns := p.Pickle.Streams[0]
			var nb bytes.Buffer
			if err := Stream(canon.Normalize(ns, canon.DocOptions(doc, copt)), Options{Protocol: 2, KeepDictOrder: opt.KeepDictOrder}, &nb); err != nil {
				var r *refusal
				if errors.As(err, &r) {
					return nil, &Error{File: path, Offset: r.off, Reason: "in the nested pickle of a joblib object array: " + r.reason}
				}
				return nil, &Error{File: path, Offset: ns.Offset, Reason: "in the nested pickle of a joblib object array: " + err.Error()}
			}
			b := nb.Bytes()
			arrays[ps.Offset(p.NodeID)] = &arrayData{data: func() ([]byte, error) { return b, nil }, nested: true}
			continue
		}
		if p.Role != input.RoleArray || p.Raw == nil || !p.JoblibArray() || p.NodeStream != 0 {
			return nil, &Error{File: path, Offset: -1, Reason: fmt.Sprintf("joblib part %q: pk canon does not write it", p.Name)}
		}
		raw := p.Raw
		arrays[ps.Offset(p.NodeID)] = &arrayData{data: func() ([]byte, error) {
			if rc, err := raw.Open(); err == nil {
				defer rc.Close()
				return io.ReadAll(rc)
			}
			if whole == nil {
				r, _, finish, err := input.OpenBare(path, input.Options{})
				if err != nil {
					return nil, err
				}
				whole, err = io.ReadAll(r)
				if ferr := finish(); err == nil {
					err = ferr
				}
				if err != nil {
					return nil, err
				}
			}
			if raw.Offset < 0 || raw.Offset+raw.Len > int64(len(whole)) {
				return nil, errors.New("array bytes past the end of the input")
			}
			return whole[raw.Offset : raw.Offset+raw.Len], nil
		}}
	}
	s := pk.Pickle.Streams[0]
	w, err := newStreamWriter(canon.Normalize(s, canon.DocOptions(doc, copt)), opt.proto())
	if err != nil {
		return nil, pickle.WithFile(err, path)
	}
	w.arrays = arrays
	out, err := w.write(false, nil)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return nil, &Error{File: path, Offset: r.off, Reason: r.reason}
		}
		return nil, &Error{File: path, Offset: s.Offset, Reason: err.Error()}
	}
	return finishDoc(path, doc, out, copt, "pk cannot write this joblib file canonically: its arrays would come out in another order "+
		"(pk hash counts them in stream order, which follows dict insertion order; --keep-dict-order keeps it)")
}
