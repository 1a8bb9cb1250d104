package canon

// Torch storages as values (pk-canon/2, docs/canonical-form-2.md §2.3): a
// tensor is torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
// stride, requires_grad, backward_hooks[, metadata]), a call every form
// writes alike; what differs is the storage argument:
//
//   - torch.save zip: a persistent id ('storage', StorageType, key,
//     location, numel) whose bytes are the archive member data/<key>;
//   - torch.save legacy: the same persistent id, the key a memory address,
//     the bytes a storage record after the pickles;
//   - pickle.dump (or any pickler) of a tensor: torch.storage._load_from_bytes(b)
//     with b a whole legacy torch.save file of that one storage.
//
// Each becomes a storage node: its type, location, element count and the
// digest of its bytes. One node per key in a stream (torch writes a
// persistent id at every reference; a pickler memoises the storage once),
// so storages shared by several tensors stay shared. The raw parts read so
// are then not hashed as parts of their own, and a torch file whose every
// storage was read hashes as a bare pickle of its data pickle (the archive's
// version member and the legacy file's magic number, protocol version,
// system information and key list are container metadata).

import (
	"io"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// KindStorage is a torch storage read as a value (pk-canon/2).
const KindStorage = KindArray + 1

// Rule names of the storage reader.
const (
	RuleTorchStorage   = "torch-storage"    // a persistent id of torch.save (zip or legacy) and its bytes
	RuleTorchFromBytes = "torch-from-bytes" // _load_from_bytes(legacy torch.save bytes)
)

// Storage is a torch storage read as a value.
type Storage struct {
	Type     string // "torch.FloatStorage"
	Location string // "cpu"
	Numel    int64
	Raw      *input.Raw // its bytes (length and digest)
	Rule     string
	// From is, for a storage read from _load_from_bytes(b), the view's node
	// of b (the nested torch.save file; Raw.Offset is the storage's place in
	// it); pickle.NoID otherwise. (pk canon's writer reads the bytes there.)
	From pickle.ID
}

// storageCandidate notes a persistent id node (Form2).
func (v *View) storageCandidate(n pickle.ID) {
	if v.Opt.v2() && v.Opt.arrays != nil && v.Opt.arrays.doc != nil {
		v.pidCand = append(v.pidCand, n)
	}
}

// storages replaces the persistent ids and _load_from_bytes calls that
// name a torch storage by storage nodes.
func (v *View) storages() {
	d := v.Opt.arrays
	for _, n := range v.pidCand {
		r, ok := d.doc.StorageAt(v.s, n)
		if !ok || r.Part == nil || r.Part.Raw == nil || r.Type == "" || r.ElemSize == 0 {
			continue
		}
		if want, ok := nbytes([]int64{r.Numel}, r.ElemSize); !ok || want != r.Part.Raw.Len {
			continue
		}
		if v.nitems(n) != 1 {
			continue
		}
		if !input.PlainStorageID(v.s, n) {
			continue // view metadata (torch < 1.0 legacy views): not read
		}
		idx := d.partIndex(r.Part)
		if idx < 0 {
			continue
		}
		x, ok := v.storByKey[r.Key]
		if !ok {
			x = v.newStorage(n, &Storage{Type: r.Type, Location: r.Location, Numel: r.Numel, Raw: r.Part.Raw, Rule: RuleTorchStorage, From: pickle.NoID})
			if v.storByKey == nil {
				v.storByKey = map[string]pickle.ID{}
			}
			v.storByKey[r.Key] = x
		}
		v.replace(n, x, RuleTorchStorage)
		d.used[idx] = true
	}
}

// fromBytes reads torch.storage._load_from_bytes(b): b a legacy torch.save
// file of one storage, read with pk's own reader.
func (v *View) fromBytes(n pickle.ID) {
	if v.opOf(n) != pickle.REDUCE || v.kwargsOf(n) != pickle.NoID || v.nmuts(n) > 0 || len(v.extra(n)) > 0 || v.res(n) != n {
		return
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok || len(args) != 1 {
		return
	}
	b := v.res(args[0])
	if b < 0 || v.kind(b) != pickle.KindBytes || v.nmuts(b) > 0 || v.specialOf(b) != 0 {
		return
	}
	if !strings.HasPrefix(v.text(b), legacyMagic) {
		// only torch's own nested file is read (never a compressed or
		// other container pkg/input would open: no decompression here)
		return
	}
	// read once per bytes node: many calls may share one bytes object
	// through the memo (each call still makes a storage of its own)
	if st, ok := v.nested[b]; ok {
		if st != nil {
			v.replace(n, v.newStorage(n, st), RuleTorchFromBytes)
		}
		return
	}
	if v.nested == nil {
		v.nested = map[pickle.ID]*Storage{}
	}
	v.nested[b] = nil
	var st *Storage
	if v.blob(b) != nil {
		// a storage of 1 MiB or more: its bytes read again from the file
		var ok bool
		if st, ok = v.nestedBlob(b); !ok {
			return
		}
	} else {
		// in memory already (below 1 MiB as pk hash reads, any length when
		// the input was read with every payload in memory, as pk canon
		// reads it): read from there, streamed, as a blob is read again
		var ok bool
		if st, ok = nestedStorage(strings.NewReader(v.text(b)), v.Opt); !ok {
			return
		}
	}
	st.From = b
	v.nested[b] = st
	v.replace(n, v.newStorage(n, st), RuleTorchFromBytes)
}

// nestedBlob reads the nested torch.save file of bytes node b, a streamed
// blob, again (once per payload of the input: rrNested); a payload that
// fails to read or reads otherwise is the view's error.
func (v *View) nestedBlob(b pickle.ID) (*Storage, bool) {
	key := rrKey{v.rrPart, v.blob(b).Offset}
	if src, ok := v.latin1Src[b]; ok {
		key.off = -2 - src.Offset // the str's latin-1 bytes
	}
	cache := v.Opt.src == "" && v.rr != nil
	if cache {
		v.rr.mu.Lock()
		c, ok := v.rr.nested[key]
		v.rr.mu.Unlock()
		if ok {
			if c.err != nil {
				v.fail(c.err)
			}
			if c.st == nil {
				return nil, false
			}
			st := *c.st
			return &st, true
		}
	}
	st, err := v.readNested(b)
	if err == errNoReread {
		return nil, false
	}
	if cache {
		c := rrNested{err: err}
		if st != nil {
			cp := *st
			c.st = &cp
		}
		v.rr.mu.Lock()
		if v.rr.nested == nil {
			v.rr.nested = map[rrKey]rrNested{}
		}
		v.rr.nested[key] = c
		v.rr.mu.Unlock()
	}
	if err != nil {
		v.fail(err)
		return nil, false
	}
	return st, st != nil
}

func (v *View) readNested(b pickle.ID) (*Storage, error) {
	r, done, check, err := v.bytesReader(b)
	if err != nil {
		return nil, err
	}
	defer done()
	st, ok := nestedStorage(r, v.Opt)
	if err := check(); err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return st, nil
}

// legacyMagic is how the nested torch.save file of _load_from_bytes starts:
// its first pickle, torch's magic number at protocol 2 (the text of a
// streamed blob is its first bytes).
const legacyMagic = "\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19."

// nestedStorage reads a legacy torch.save file holding one storage.
func nestedStorage(data io.Reader, opt Options) (*Storage, bool) {
	doc, err := input.OpenReader(data, "_load_from_bytes", ReadOptions(opt), input.Options{})
	if err != nil || doc.Format != "torch-legacy" || len(doc.Parts) != 2 {
		return nil, false
	}
	p := doc.Parts[0].Pickle
	if p == nil || len(p.Streams) != 5 || p.Trailing != nil {
		return nil, false
	}
	s := p.Streams[3].Store()
	if s.Root < 0 || s.Kind(s.Root) != pickle.KindPersID || len(s.Popped)+len(s.Leftover) > 0 || s.LeftoverMarks > 0 {
		return nil, false
	}
	for _, e := range s.Events() {
		// the root must be the persistent id, and nothing else happen
		// than the resolution of its storage type
		if e.Node != s.Root && (s.Kind(e.Node) != pickle.KindGlobal || e.Kind == pickle.EvMut) {
			return nil, false
		}
	}
	r, ok := doc.StorageAt(s, s.Root)
	if !ok || r.Part == nil || r.Part.Raw == nil || r.Type == "" || r.ElemSize == 0 || !input.PlainStorageID(s, s.Root) {
		return nil, false
	}
	if want, ok := nbytes([]int64{r.Numel}, r.ElemSize); !ok || want != r.Part.Raw.Len {
		return nil, false
	}
	return &Storage{Type: r.Type, Location: r.Location, Numel: r.Numel, Raw: r.Part.Raw, Rule: RuleTorchFromBytes}, true
}

func (v *View) newStorage(like pickle.ID, st *Storage) pickle.ID {
	x := v.synth(KindStorage, like)
	v.mark(x, 'S')
	if v.stor == nil {
		v.stor = map[pickle.ID]*Storage{}
	}
	v.stor[x] = st
	return x
}

// encodeStorage writes the body of a storage node (after 'N'):
//
//	'S' str(type) str(location) uvarint(numel) 'y' uvarint(nbytes) H(bytes)
func (e *encoder) encodeStorage(n pickle.ID) {
	v := e.v
	st := v.stor[n]
	e.buf = st.appendBody(e.buf, v, v.offset(n))
}

func (st *Storage) appendBody(b []byte, v *View, off int64) []byte {
	b = append(b, 'S')
	b = appendStr(b, st.Type)
	b = appendStr(b, st.Location)
	b = appendUvarint(b, uint64(st.Numel))
	b = append(b, 'y')
	b = appendUvarint(b, uint64(st.Raw.Len))
	return v.appendDigest(b, st.Raw.Digest, off)
}

// String renders the storage for pk diff.
func (st *Storage) String() string {
	return "storage " + strings.TrimPrefix(st.Type, "torch.") + " of " + itoa(st.Numel) + " elements on " + st.Location
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// partIndex returns the index of part p in the input's parts, or -1.
func (d *docArrays) partIndex(p *input.Part) int {
	for i := range d.doc.Parts {
		if &d.doc.Parts[i] == p {
			return i
		}
	}
	return -1
}

// torchAsPickle reports whether a torch file is hashed as a bare pickle of
// its data pickle (Form2): every storage part was read as a storage node,
// and the other parts are the data pickle and metadata torch.load needs
// only to find and read the storages (the archive's version, a byteorder
// of "little"). It returns the data pickle's part and stream.
func torchAsPickle(doc *input.Doc, opt Options) (part, stream int, ok bool) {
	if !opt.v2() || opt.arrays == nil || !strings.Contains(doc.Format, "torch") {
		return 0, 0, false
	}
	part = -1
	for i, p := range doc.Parts {
		switch {
		case p.Role == input.RolePickle && p.Pickle != nil && part < 0:
			part = i
		case p.Role == input.RoleStorage && opt.arrays.used[i]:
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "version"):
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "byteorder") && string(p.Raw.Prefix) == "little":
		default:
			return 0, 0, false
		}
	}
	if part < 0 {
		return 0, 0, false
	}
	f := doc.Parts[part].Pickle
	switch {
	case strings.Contains(doc.Format, "torch-legacy") && len(f.Streams) == 5 && f.Trailing == nil:
		return part, 3, true
	case strings.Contains(doc.Format, "torch-zip") && len(f.Streams) == 1:
		return part, 0, true
	}
	return 0, 0, false
}
