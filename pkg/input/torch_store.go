package input

import (
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/pickle"
)

// What a torch persistent id and a tensor rebuild say, read from a store.

// parsePIDAt reads a torch persistent id node of a store.
func parsePIDAt(s *pickle.Store, pid pickle.ID) (*StorageRef, bool) {
	if pid < 0 || s.Kind(pid) != pickle.KindPersID || s.NItems(pid) != 1 {
		return nil, false
	}
	t := s.Items(pid)[0]
	if s.Kind(t) != pickle.KindTuple || s.NItems(t) < 5 {
		return nil, false
	}
	it := s.Items(t)
	if s.Kind(it[0]) != pickle.KindStr || s.Str(it[0]) != "storage" || s.Kind(it[2]) != pickle.KindStr || s.Kind(it[4]) != pickle.KindInt || s.IsBig(it[4]) {
		return nil, false
	}
	r := &StorageRef{Key: s.Str(it[2]), Numel: s.Int(it[4])}
	if s.Kind(it[1]) == pickle.KindGlobal {
		r.Type = s.Qualified(it[1])
		name := s.Name(it[1])
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if dt, size, ok := array.StorageDType(name); ok && (s.Str(it[1]) == "torch" || strings.HasPrefix(s.Str(it[1]), "torch.")) {
			r.DType, r.ElemSize = dt, size
		}
	}
	if s.Kind(it[3]) == pickle.KindStr {
		r.Location = s.Str(it[3])
	}
	return r, true
}

// StorageAt returns what the torch persistent id node pid of store s
// refers to: the storage's key, dtype and element count, and the Raw part
// holding its bytes.
func (d *Doc) StorageAt(s *pickle.Store, pid pickle.ID) (*StorageRef, bool) {
	r, ok := parsePIDAt(s, pid)
	if !ok {
		return nil, false
	}
	d.attach(r)
	return r, true
}

// TensorAt reads the call node of store s that rebuilds a tensor,
// torch._utils._rebuild_tensor_v2 / _rebuild_tensor(storage, storage_offset,
// size, stride, ...), its storage a persistent id (torch.save) or
// torch.storage._load_from_bytes(b) (pickle.dump: FromBytesAt).
func (d *Doc) TensorAt(s *pickle.Store, call pickle.ID) (*TensorRef, bool) {
	if call < 0 || s.Kind(call) != pickle.KindCall || s.Func(call) < 0 {
		return nil, false
	}
	switch s.Qualified(s.Func(call)) {
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
	default:
		return nil, false
	}
	a := s.Args(call)
	if a < 0 || s.Kind(a) != pickle.KindTuple || s.NItems(a) < 4 {
		return nil, false
	}
	it := s.Items(a)
	st, ok := d.StorageAt(s, it[0])
	if !ok {
		st, ok = d.FromBytesAt(s, it[0])
	}
	if !ok || s.Kind(it[1]) != pickle.KindInt {
		return nil, false
	}
	t := &TensorRef{Storage: st, Offset: s.Int(it[1])}
	ints := func(n pickle.ID) ([]int64, bool) {
		if s.Kind(n) != pickle.KindTuple {
			return nil, false
		}
		out := make([]int64, 0, s.NItems(n))
		for _, x := range s.Items(n) {
			if s.Kind(x) != pickle.KindInt {
				return nil, false
			}
			out = append(out, s.Int(x))
		}
		return out, true
	}
	if t.Shape, ok = ints(it[2]); !ok {
		return nil, false
	}
	if t.Stride, ok = ints(it[3]); !ok {
		return nil, false
	}
	return t, true
}

// attach sets the Raw part holding the storage r names.
func (d *Doc) attach(r *StorageRef) {
	for i := range d.Parts {
		if d.Parts[i].Role == RoleStorage && d.Parts[i].Key == r.Key {
			r.Part = &d.Parts[i]
			break
		}
	}
}

// TorchLegacyMagic reports whether a stream's store is the first pickle of a
// legacy torch.save file (its magic number), which Open reads as torch's
// five pickles and storage records, not as a bare pickle.
func TorchLegacyMagic(s *pickle.Store) bool {
	r := s.Root
	return r >= 0 && s.Kind(r) == pickle.KindInt && s.IsBig(r) && s.Big(r).Cmp(torchMagic) == 0
}
