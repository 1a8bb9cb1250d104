package write

import (
	"archive/zip"
	"bytes"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// torchStorages numbers the storages of a torch.save file's data pickle as
// the writer meets them: their keys "0", "1", ... and, in that order, the
// storages whose bytes become the members data/<key>.
type torchStorages struct {
	key  map[int32]int
	list []*canon.Storage
}

// persistentStorage writes a storage of a torch.save file as torch.save's
// persistent id: ('storage', torch.<Type>Storage, key, location, numel)
// BINPERSID, its key the storage's ordinal in the order written.
func (e *emitter) persistentStorage(n canon.Ref, k key, st *canon.Storage) error {
	i := strings.LastIndexByte(st.Type, '.')
	if i <= 0 || strings.ContainsAny(st.Type+st.Location, "\n") {
		return refuse(n, "torch storage type %q cannot be written as a global", st.Type)
	}
	t := e.torch
	id := nodeID(n)
	ord, seen := t.key[id]
	if !seen {
		ord = len(t.list)
		t.key[id] = ord
		t.list = append(t.list, st)
	}
	e.op(pickle.MARK)
	if err := e.str(n, "storage"); err != nil {
		return err
	}
	if err := e.global(n, st.Type[:i], st.Type[i+1:], false); err != nil {
		return err
	}
	if err := e.str(n, strconv.Itoa(ord)); err != nil {
		return err
	}
	if err := e.str(n, st.Location); err != nil {
		return err
	}
	e.smallInt(st.Numel)
	e.op(pickle.TUPLE)
	e.op(pickle.BINPERSID)
	return e.built(k)
}

// torchFromView writes a torch.save file (zip or legacy) that pk-canon/2
// reads as the bare pickle of its data pickle (every storage a value; its
// other members the archive's version and a little-endian byteorder:
// canonical-form-2.md §2.3) as the canonical torch.save zip of that pickle:
// archive/data.pkl, written from the pk-canon/2 view with each storage a
// persistent id keyed by its ordinal in the order written, then
// archive/data/0, data/1, ... (the storages' bytes, in that order), then
// archive/version "3"; stored, aligned to 64 bytes, as torchZip writes. So a
// zip and a legacy file of the same tensors give one output. ok is false
// when the file is not read so, or the output does not hash as the input
// (the caller then writes it from the pk-canon/1 view).
func torchFromView(path string, data []byte, doc *input.Doc, opt Options, copt canon.Options) (out []byte, ok bool, err error) {
	dopt := canon.DocOptions(doc, copt)
	if len(doc.Parts) == 0 || doc.Parts[0].Role != input.RolePickle || doc.Parts[0].Pickle == nil {
		return nil, false, nil
	}
	f := doc.Parts[0].Pickle
	stream := 0
	switch {
	case strings.Contains(doc.Format, "torch-zip") && len(f.Streams) == 1 && f.Trailing == nil:
	case strings.Contains(doc.Format, "torch-legacy") && len(f.Streams) == 5 && f.Trailing == nil:
		stream = 3
	default:
		return nil, false, nil
	}
	for _, ref := range canon.Parts(doc, dopt) {
		if ref.Index == 0 {
			continue
		}
		if ref.Index < 0 {
			return nil, false, nil
		}
		p := doc.Parts[ref.Index]
		switch {
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "version"):
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "byteorder") && string(p.Raw.Prefix) == "little":
		default:
			return nil, false, nil // a storage not read as a value, or other content
		}
	}
	v := canon.Normalize(f.Streams[stream], dopt)
	w, err := newStreamWriter(v, opt.proto())
	if err != nil {
		return nil, false, nil
	}
	w.torch = &torchStorages{key: map[int32]int{}}
	pkl, err := w.write(false, nil)
	if err != nil {
		return nil, false, nil
	}
	raw := rawReader(path, data)
	var buf bytes.Buffer
	cw := &countWriter{w: &buf}
	zw := zip.NewWriter(cw)
	add := func(name string, b []byte) error { return storeMember(zw, cw, name, b) }
	if err := add(TorchFolder+"/data.pkl", pkl); err != nil {
		return nil, false, err
	}
	for i, st := range w.torch.list {
		b, err := raw(st.Raw)
		if err != nil || int64(len(b)) != st.Raw.Len {
			return nil, false, nil
		}
		if err := add(TorchFolder+"/data/"+strconv.Itoa(i), b); err != nil {
			return nil, false, err
		}
	}
	if err := add(TorchFolder+"/version", []byte("3\n")); err != nil {
		return nil, false, err
	}
	if err := zw.Close(); err != nil {
		return nil, false, err
	}
	if err := verifyDoc(path, doc, buf.Bytes(), copt); err != nil {
		return nil, false, nil
	}
	return buf.Bytes(), true, nil
}
