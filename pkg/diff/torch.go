package diff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// MaxTensorScan bounds the nodes visited to name tensors.
const MaxTensorScan = 5_000_000

// tensorPaths finds, breadth first from the root of each pickle part, the
// Python path of every tensor rebuilt from a storage, by storage key, and
// of every joblib array wrapper, by "array:" + part name:
// a changed storage is then reported at root['layer.weight'], not at the
// zip member that holds it; and the tensor at each such path (by
// storage key, the first; by "path:" + path, each); and, by path, the
// named steps on the way (stepTuple: the entries of a joblib model's raw
// arrays say which step they are in).
func tensorPaths(doc *input.Doc, opt canon.Options) (map[string]string, map[string]*input.TensorRef, map[string]string) {
	out := map[string]string{}
	steps := map[string]string{}
	refs := map[string]*input.TensorRef{}
	// joblib arrays: the NumpyArrayWrapper node each raw part follows
	type at struct {
		part, stream int
		id           pickle.ID
	}
	wrappers := map[at]string{}
	for _, p := range doc.Parts {
		if p.JoblibArray() {
			wrappers[at{p.Of, p.NodeStream, p.NodeID}] = p.Name
		}
	}
	for pi, p := range doc.Parts {
		if p.Pickle == nil || p.Role != input.RolePickle {
			continue
		}
		for _, st := range p.Pickle.Streams {
			hasPID := len(wrappers) > 0
			for _, ev := range st.Store().Events() {
				if ev.Kind == pickle.EvPersID {
					hasPID = true
					break
				}
			}
			if !hasPID {
				continue
			}
			v := canon.Normalize(st, opt)
			type item struct {
				n    *canon.Node
				path string
			}
			seen := map[*canon.Node]bool{}
			queue := []item{{v.Root(), ppath.Root}}
			visited := 0
			for len(queue) > 0 && visited < MaxTensorScan {
				it := queue[0]
				queue = queue[1:]
				if seen[it.n] {
					continue
				}
				seen[it.n] = true
				visited++
				n := it.n
				if note := stepTuple(n, it.path); note != "" {
					steps[it.path] = note
				}
				id, inStream := n.StreamID()
				if name, ok := wrappers[at{pi, st.Index, id}]; ok && inStream {
					if _, dup := out["array:"+name]; !dup {
						out["array:"+name] = it.path
					}
				}
				// (a call a rule built is never a tensor's: rules rewrite
				// only copyreg, functools, cloudpickle and dill calls)
				if n.Kind() == pickle.KindCall && inStream {
					if t, ok := doc.TensorAt(v.Store(), id); ok && t.Storage != nil {
						if _, dup := out[t.Storage.Key]; !dup {
							out[t.Storage.Key] = it.path
							refs[t.Storage.Key] = t
						}
						refs["path:"+it.path] = t
						continue
					}
				}
				for _, k := range viewKids(n) {
					if !seen[k.n] {
						queue = append(queue, item{k.n, it.path + k.edge})
					}
				}
			}
		}
	}
	return out, refs, steps
}

// tensors reports the first differing element of two tensors a and b at
// path (torch._utils._rebuild_tensor_v2 calls) of one dtype, shape, stride
// and storage offset whose storages differ: root['fc.weight'][3, 7]. A
// storage is a storage node of pk-canon/2's view (a torch.save zip member or
// legacy record, or pickle.dump's nested torch.save bytes) or, where the
// view does not read it as one (pk-canon/1, a compressed input), pickle.dump's
// torch.storage._load_from_bytes call, whose elements are read from the
// nested bytes (input.FromBytesAt). When the tensors' other arguments are
// equal, it returns true: the entry says all. Otherwise, for storage nodes,
// the storage it named is left out of the walk that follows (c.skip), which
// reports the rest; nothing when the element bytes cannot be read (the
// walk then names the storage).
func (c *cmp) tensors(a, b *canon.Node, path pathRef) bool {
	ida, okA := a.StreamID()
	idb, okB := b.StreamID()
	if !okA || !okB || c.storeA == nil || c.storeB == nil || c.docA == nil || c.docB == nil || !rebuildsTensor(c.storeA, ida) || !rebuildsTensor(c.storeB, idb) {
		return false
	}
	aa, ab := a.Args(), b.Args()
	if aa == nil || ab == nil || aa.NItems() < 4 || aa.NItems() != ab.NItems() {
		return false
	}
	ia, ib := aa.Items(), ab.Items()
	sa, sb := ia[0], ib[0]
	stor := func(n *canon.Node) bool { return n.Kind() == canon.KindStorage || n.Kind() == pickle.KindCall }
	if !stor(sa) || !stor(sb) || !c.differs(sa, sb) {
		return false
	}
	ta, okA := c.docA.TensorAt(c.storeA, ida)
	tb, okB := c.docB.TensorAt(c.storeB, idb)
	if !okA || !okB {
		return false
	}
	ra, rb := ta.Storage, tb.Storage
	if ra.DType == "" || ra.DType != rb.DType || ra.Numel != rb.Numel || ta.Offset != tb.Offset || !slices.Equal(ta.Shape, tb.Shape) || !slices.Equal(ta.Stride, tb.Stride) {
		return false
	}
	rest := c.differs(a.Func(), b.Func()) || a.Kwargs() != nil || b.Kwargs() != nil || len(a.Ops())+len(b.Ops()) > 0
	for i := 1; i < len(ia) && !rest; i++ {
		rest = c.differs(ia[i], ib[i])
	}
	both := sa.Kind() == canon.KindStorage && sb.Kind() == canon.KindStorage
	if rest && !both {
		return false
	}
	e, ok := tensorElements(c.paths.String(path), ra.Open, rb.Open, ra.Numel*ra.ElemSize, ra.DType, ta)
	if !ok {
		return false
	}
	e.NoOffset, e.OffA, e.OffB = false, a.Offset(), b.Offset()
	c.add(e)
	if !rest {
		return true
	}
	if c.skip == nil {
		c.skip = map[pickle.ID]bool{}
	}
	c.skip[sa.ID()] = true
	return false
}

// tensorElements is the element entry of tensor t (shape, stride and
// storage offset) at path whose storages of n bytes of dtype on each side
// sa and sb stream: at the first differing element of the storage, named
// by its index in the tensor ("in its storage" when the storage has more
// elements than the tensor), or at path<data>[k] when the tensor does not
// see it.
func tensorElements(path string, sa, sb elemSrc, n int64, dtype string, t *input.TensorRef) (Entry, bool) {
	item := array.ItemSize(dtype)
	differ, first, ea, eb, ok := firstElements(sa, sb, n, item)
	if !ok {
		return Entry{}, false
	}
	dt := elemDType(dtype, item)
	of := n / item
	ra := &Array{DType: dtype, Shape: t.Shape}
	if idx, ok := array.TensorIndex(first, t.Shape, t.Stride, t.Offset); ok {
		e := elemEntry(path, idx, dt, ea, eb, differ, of, ra, ra)
		if c, ok := array.Count(t.Shape); !ok || c != of {
			e.Note += " in its storage"
		}
		return e, true
	}
	// the element lies outside this tensor's view of the storage
	e := elemEntry(path+ppath.Pseudo("data", -1), []int64{first}, dt, ea, eb, differ, of, ra, ra)
	e.Note += " in the storage"
	return e, true
}

// docOptions is canon.DocOptions of d, with a plain pickle file's path for
// pk-canon/2 to read a large payload again (an array's latin-1 data, a
// tensor's nested torch.save bytes), as pk hash reads it.
func docOptions(d *input.Doc, opt canon.Options) canon.Options {
	o := canon.DocOptions(d, opt)
	if d != nil && d.Path != "" && d.Path != "-" && d.Compression == "" && d.Format == "pickle" {
		o = canon.BareOptions(d.Path, o)
	}
	return o
}

// asPickle reports whether doc d, whose parts in canonical order refs
// lists (canon.Parts with opt: storage parts pk-canon/2 read as storage
// nodes are left out), hashes as a bare pickle of its data pickle, as
// canon's torchAsPickle decides (docs/canonical-form-2.md §2.3): pk-canon/2,
// a torch file with no storage part left and no other part than its data
// pickle, the archive's version record and a byteorder of "little". Its
// other parts and its legacy file's other pickles are then container
// metadata, not differences.
func asPickle(d *input.Doc, opt canon.Options, refs []canon.PartRef) bool {
	if d == nil || opt.Form == canon.Form1 || !strings.Contains(d.Format, "torch") {
		return false
	}
	pickles := 0
	for _, r := range refs {
		p := &d.Parts[r.Index]
		switch {
		case p.Role == input.RolePickle && p.Pickle != nil:
			pickles++
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "version"):
		case p.Role == input.RoleMeta && p.Raw != nil && strings.HasSuffix(p.Name, "byteorder") && string(p.Raw.Prefix) == "little":
		default:
			return false
		}
	}
	if pickles != 1 {
		return false
	}
	for _, p := range d.Parts {
		if p.Pickle != nil && strings.Contains(d.Format, "torch-legacy") && (len(p.Pickle.Streams) != 5 || p.Pickle.Trailing != nil) {
			return false
		}
	}
	return true
}

// pickleParts is refs less the metadata parts of a doc that hashes as a
// bare pickle (asPickle).
func pickleParts(d *input.Doc, refs []canon.PartRef) []canon.PartRef {
	var out []canon.PartRef
	for _, r := range refs {
		if d.Parts[r.Index].Pickle != nil {
			out = append(out, r)
		}
	}
	return out
}

// sideStreams is the streamSet of pickle part p of d: only the data pickle
// of a legacy torch file that hashes as a bare pickle (asPickle; its
// magic number, protocol version, system info and key list are container
// metadata), else every stream (docStreams).
func sideStreams(d *input.Doc, p *input.Part, bare bool) streamSet {
	x := docStreams(d, p)
	if !bare || !strings.Contains(d.Format, "torch-legacy") || len(p.Pickle.Streams) != 5 {
		return x
	}
	f := p.Pickle
	head := x.head(3)
	return streamSet{
		n:        1,
		head:     func(int) string { return head },
		offset:   func(int) int64 { return f.Streams[3].Offset },
		length:   func(int) int64 { return f.Streams[3].Len() },
		load:     func(int) (*pickle.Stream, error) { return f.Streams[3], nil },
		digest:   func(int) []byte { return nil },
		trailing: nil,
	}
}

// heldObjects renames the entries from index from on, made in the nested
// pickles pa and pb of two joblib object arrays at part path at, to the
// path of the array that holds them: part['array 0'].__getstate__()[4][5]
// (the nested array's list of items, in C order) becomes root[1, 2], the
// item's index in the array's shape (Entry.Elem gives it), when both
// nested arrays have one shape and the wrapper's path is known.
func (c *cmp) heldObjects(pa, pb *input.Part, at string, from int) {
	if pa.Role != input.RoleObjects || pb.Role != input.RoleObjects || from >= len(c.entries) {
		return
	}
	ha, hb := c.arrayPath('a', pa), c.arrayPath('b', pb)
	if ha == "" || ha != hb {
		return
	}
	shape := func(p *input.Part) []int64 {
		if len(p.Pickle.Streams) == 0 {
			return nil
		}
		s := p.Pickle.Streams[0].Store()
		h, ok := array.NewReader(array.StoreGraph{S: s}).Reconstruct(s.Root)
		if !ok || !h.Descr.Object {
			return nil
		}
		return h.Shape
	}
	sa, sb := shape(pa), shape(pb)
	if sa == nil || !slices.Equal(sa, sb) {
		return
	}
	of, _ := array.Count(sa)
	items := at + ppath.Attr("__getstate__") + "()" + ppath.Index(4)
	for i := from; i < len(c.entries); i++ {
		e := &c.entries[i]
		rest, ok := strings.CutPrefix(e.Path, items+"[")
		if !ok {
			continue
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			continue
		}
		k, err := strconv.ParseInt(rest[:j], 10, 64)
		if err != nil || k < 0 || k >= of {
			continue
		}
		idx := array.Index(k, sa, 'C')
		e.Path = ha + elemEdge(idx) + rest[j+1:]
		e.Elem = &Element{Index: idx}
		if rest[j+1:] == "" {
			*e = c.rawCell(*e, ha) // a frame's str cell: root['name'][20]
		}
	}
	c.reignore(from)
	c.dedupe(0)
}

// dedupe drops the entries from index from on that repeat an earlier one
// of those (path, kind and both sides): joblib writes a Series' values
// twice (its manager's state and extra state), and both copies name the
// same element.
func (c *cmp) dedupe(from int) {
	if from < 0 || from >= len(c.entries) {
		return
	}
	type key struct{ path, kind, a, b string }
	seen := map[key]bool{}
	out := c.entries[:from]
	for _, e := range c.entries[from:] {
		k := key{e.Path, string(e.Kind), e.A, e.B}
		if e.Elem != nil && !e.Elided && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	c.entries = out
}

// arrayPath is the path of the joblib array wrapper whose part is p (side
// 'a' or 'b'; tensorPaths), or "".
func (c *cmp) arrayPath(side byte, p *input.Part) string {
	m, refs, d, opt := &c.tensorsA, &c.tensorRefA, c.docA, c.optA
	if side == 'b' {
		m, refs, d, opt = &c.tensorsB, &c.tensorRefB, c.docB, c.optB
	}
	if *m == nil {
		c.tensorPaths(side, m, refs, d, opt)
	}
	return (*m)["array:"+p.Name]
}

// rebuildsTensor reports whether call n of store s is torch's
// _rebuild_tensor_v2 or _rebuild_tensor (cheap: checked first for every
// pair of calls the walk compares).
func rebuildsTensor(s *pickle.Store, n pickle.ID) bool {
	if n < 0 || s.Kind(n) != pickle.KindCall {
		return false
	}
	f := s.Func(n)
	if f < 0 || s.Kind(f) != pickle.KindGlobal {
		return false
	}
	// (the name in place first: Qualified makes a string, 15 MB for a
	// million nested calls)
	if name := s.Name(f); name != "_rebuild_tensor_v2" && name != "_rebuild_tensor" {
		return false
	}
	q := s.Qualified(f)
	return q == "torch._utils._rebuild_tensor_v2" || q == "torch._utils._rebuild_tensor"
}

// tensorPaths fills side's tables of tensorPaths; side 'a”s named steps
// are the cmp's (stepNote).
func (c *cmp) tensorPaths(side byte, m *map[string]string, refs *map[string]*input.TensorRef, d *input.Doc, opt canon.Options) {
	var steps map[string]string
	*m, *refs, steps = tensorPaths(d, opt)
	if side == 'a' {
		for at, note := range steps {
			c.addStep(at, note)
		}
	}
}
