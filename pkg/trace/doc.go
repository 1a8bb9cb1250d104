package trace

import (
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Containers (docs/pk-trace.md, "Containers"). NewDoc sizes every part of
// an opened input:
//
//   - the root is the input; its children are the container's parts: each
//     pickle part (its streams below it, as for a bare pickle), each raw
//     part that no object refers to (.npy data, zip records such as
//     version), bytes the loader ignores, and one "container" line for the
//     bytes that are in no part (zip headers and directory, legacy storage
//     record headers, the .npy header);
//   - a torch storage's bytes count in the persistent id that first names
//     it (so in the tensor that holds it: root['layer.weight'] is as large
//     as its data), shown as a ".data" child of that persistent id; later
//     persistent ids naming the same storage get a size-0 line saying where
//     it was counted;
//   - a joblib array's bytes, which pkg/pickle counts in the
//     NumpyArrayWrapper's own bytes (they sit in its stream after its
//     BUILD), are shown as a ".data" child of the wrapper (an object array's
//     nested pickle as a stream below it).
//
// So sizes still add up on every line, and the root's size is the sum of
// the parts' bytes as the loader reads them (decompressed), plus the
// container line. For an input with no compression (no whole-file
// compression, no deflated zip member) that is the file's length; for a
// compressed one it is the decompressed content, and the root's label gives
// the size on disk.

// attachRole is the role of a part shown under the node it belongs to.
const attachRole = ppath.Data

// Codes of container lines.
const (
	CodePart      = "Pk" // a pickle part of a container (its streams below)
	CodeContainer = "Ct" // container bytes in no part, container records the loader reads or skips
)

// attachment is a part shown under a node.
type attachment struct {
	part    int  // index in Doc.Parts
	counted bool // its bytes count here; otherwise a size-0 line naming where
	at      *pickle.Store
	atNode  pickle.ID
}

// partItem describes an ItemPart line.
type partItem struct {
	idx      int // index in Doc.Parts; -1 for container bytes and trailing bytes
	code     string
	label    string
	pickle   []*StreamTree // a pickle part: its streams
	trailing *pickle.Trailing
	ref      bool // a size-0 line pointing to where the bytes are counted
}

// NewDoc sizes an opened input. A bare pickle (one pickle part, no
// compression) gives the same tree as New.
func NewDoc(d *input.Doc) *Tree {
	if len(d.Parts) == 1 && d.Parts[0].Pickle != nil && d.Compression == "" && d.Format == "pickle" {
		t := New(d.Parts[0].Pickle)
		for _, st := range t.Streams {
			st.doc = d // a tensor label reads a large pickle.dump storage's head again from the file
		}
		return t
	}
	t := &Tree{Doc: d}
	add := map[*pickle.Store]map[pickle.ID]int64{}
	inSelf := map[*pickle.Store]map[pickle.ID]int64{}
	attach := map[*pickle.Store]map[pickle.ID][]attachment{}
	attached := make([]bool, len(d.Parts))
	put := func(s *pickle.Store, id pickle.ID, a attachment) {
		if attach[s] == nil {
			attach[s] = map[pickle.ID][]attachment{}
		}
		attach[s][id] = append(attach[s][id], a)
		attached[a.part] = true
	}
	bump := func(m map[*pickle.Store]map[pickle.ID]int64, s *pickle.Store, id pickle.ID, v int64) {
		if m[s] == nil {
			m[s] = map[pickle.ID]int64{}
		}
		m[s][id] += v
	}
	partIndex := map[*input.Part]int{}
	for i := range d.Parts {
		partIndex[&d.Parts[i]] = i
	}
	// torch storages: counted in the first persistent id naming them
	type where struct {
		s *pickle.Store
		n pickle.ID
	}
	first := map[int]where{}
	for _, p := range d.Parts {
		if p.Pickle == nil || p.Of >= 0 {
			continue
		}
		for _, ps := range p.Pickle.Streams {
			s := ps.Store()
			for _, ev := range s.Events() {
				if ev.Kind != pickle.EvPersID {
					continue
				}
				ref, ok := d.StorageAt(s, ev.Node)
				if !ok || ref.Part == nil || ref.Part.Raw == nil {
					continue
				}
				pi := partIndex[ref.Part]
				if w, seen := first[pi]; seen {
					if w.s != s || w.n != ev.Node {
						put(s, ev.Node, attachment{part: pi, at: w.s, atNode: w.n})
					}
					continue
				}
				first[pi] = where{s, ev.Node}
				bump(add, s, ev.Node, ref.Part.Raw.Len)
				put(s, ev.Node, attachment{part: pi, counted: true})
			}
		}
	}
	// joblib arrays: shown under their wrapper, whose Self holds their bytes
	for pi, p := range d.Parts {
		s, id := partNode(d, &p)
		if s == nil {
			continue
		}
		var n int64
		switch {
		case p.Raw != nil:
			n = p.Raw.Len
		case p.Pickle != nil:
			n = partBytes(p.Pickle)
		default:
			continue
		}
		if n > s.Self(id)-inSelf[s][id] {
			continue // not inside the wrapper's bytes: shown at the top instead
		}
		bump(inSelf, s, id, n)
		put(s, id, attachment{part: pi, counted: true})
	}
	t.stOf = map[*pickle.Store]*StreamTree{}
	mk := func(s *pickle.Store, prefix string) *StreamTree {
		st := newStream(s, add[s])
		for _, v := range add[s] {
			st.outside += v
		}
		st.inSelf, st.attach, st.doc, st.tree, st.prefix = inSelf[s], attach[s], d, t, prefix
		t.Streams = append(t.Streams, st)
		t.stOf[s] = st
		return st
	}
	pickles := make([][]*StreamTree, len(d.Parts))
	for pi, p := range d.Parts {
		if p.Pickle == nil || (p.Of >= 0 && attached[pi]) {
			continue
		}
		// root for what loading returns (the fourth pickle of a legacy
		// torch file), stream[i] for the others, part['name'] in a pickle
		// part that is not the main one
		for i, s := range p.Pickle.Streams {
			st := mk(s.Store(), "")
			st.prefix = ppath.StreamHead(pi == d.MainPart(), d.Key(pi), i, d.MainStream(pi))
			st.rootRole = st.prefix
			pickles[pi] = append(pickles[pi], st)
		}
	}
	// nested pickles (joblib object arrays) below their wrapper: the result
	// of the first is the wrapper's <data>
	for pi, p := range d.Parts {
		if p.Pickle == nil || p.Of < 0 || !attached[pi] {
			continue
		}
		us, uid := partNode(d, &p)
		up := t.stOf[us]
		for i, s := range p.Pickle.Streams {
			st := mk(s.Store(), "")
			st.rootRole = ppath.Root
			if i > 0 {
				st.prefix = ppath.Pseudo("stream", i)
				st.rootRole = st.prefix
			}
			st.up, st.upNode = up, uid
			pickles[pi] = append(pickles[pi], st)
		}
	}
	t.parts = pickles
	// the container's lines
	var total int64
	for pi := range d.Parts {
		if attached[pi] {
			continue
		}
		it := t.partLine(pi, nil)
		t.top = append(t.top, it)
		total += it.Size
	}
	if d.Size >= 0 && !d.Deflated() && d.Size > total {
		n := d.Size - total
		t.top = append(t.top, Item{Kind: ItemPart, Size: n, Self: n, Role: "container", part: &partItem{idx: -1, code: CodeContainer, label: containerLabel(d)}})
		total += n
	}
	t.Total = total
	t.File = &pickle.File{Name: d.Path, Size: total}
	return t
}

// partNode returns the store and ID of the node a joblib part belongs to
// (its NumpyArrayWrapper: Part.NodeID in stream Part.NodeStream of the
// pickle part Of), or nil when p is no such part. Torch storages also have
// an Of but no node: they are told apart by their role.
func partNode(d *input.Doc, p *input.Part) (*pickle.Store, pickle.ID) {
	if p.Of < 0 || p.Of >= len(d.Parts) || d.Parts[p.Of].Pickle == nil || !p.JoblibArray() {
		return nil, pickle.NoID
	}
	ss := d.Parts[p.Of].Pickle.Streams
	if p.NodeStream < 0 || p.NodeStream >= len(ss) {
		return nil, pickle.NoID
	}
	s := ss[p.NodeStream].Store()
	if p.NodeID < 0 || int(p.NodeID) >= s.Len() {
		return nil, pickle.NoID
	}
	return s, p.NodeID
}

// Bytes is the stream's length plus the bytes outside it that its nodes
// hold (torch storages).
func (st *StreamTree) Bytes() int64 { return st.Store.Length() + st.outside }

// partBytes is the bytes of a pickle part: its streams and trailing bytes.
func partBytes(f *pickle.File) int64 {
	var n int64
	for _, s := range f.Streams {
		n += s.Len()
	}
	if f.Trailing != nil {
		n += f.Trailing.Len
	}
	return n
}

func containerLabel(d *input.Doc) string {
	switch {
	case strings.HasSuffix(d.Format, "torch-zip"):
		return "zip headers, alignment padding and central directory"
	case strings.HasSuffix(d.Format, "torch-legacy"):
		return "storage record headers (8-byte element counts)"
	case strings.HasSuffix(d.Format, "npy"):
		return ".npy magic, version and header"
	}
	return "bytes in no part"
}

// partLine is the line of part pi, at the top (up nil) or under a node.
func (t *Tree) partLine(pi int, up *pathLink) Item {
	d := t.Doc
	p := &d.Parts[pi]
	pt := &partItem{idx: pi}
	it := Item{Kind: ItemPart, part: pt, Role: p.Name}
	switch {
	case up != nil:
		it.Role = attachRole
		it.pl = link(up, attachRole)
	case p.Pickle == nil:
		it.pl = link(nil, ppath.Part(d.Key(pi)))
	}
	switch {
	case p.Pickle != nil:
		pt.code = CodePart
		pt.pickle = t.parts[pi]
		pt.trailing = p.Pickle.Trailing
		for _, st := range pt.pickle {
			it.Size += st.Bytes()
		}
		if pt.trailing != nil {
			it.Size += pt.trailing.Len
		}
		n := len(p.Pickle.Streams)
		name := p.Name
		if name == "" {
			name = "pickle"
		}
		if up != nil {
			name = "nested pickle of the object array"
		}
		pt.label = name + " (" + itoa(int64(n)) + " stream" + plural(n) + ")"
		if strings.HasSuffix(d.Format, "torch-legacy") && pi == 0 && n == 5 {
			pt.label += ": magic, protocol, sys info, the data (root), storage keys"
		}
	case p.Raw != nil:
		it.Size, it.Self = p.Raw.Len, p.Raw.Len
		pt.code, pt.label = rawLabel(p)
	}
	return it
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rawLabel is the code and label of a raw part.
func rawLabel(p *input.Part) (string, string) {
	r := p.Raw
	desc := ""
	if r.DType != "" {
		desc = r.DType
	}
	if len(r.Shape) > 0 || p.Role == input.RoleArray {
		desc += " " + array.ShapeText(r.Shape)
	}
	if r.Order == "F" {
		desc += " Fortran order"
	}
	desc = strings.TrimSpace(desc)
	name := p.Name
	switch p.Role {
	case input.RoleStorage:
		l := "storage " + name
		if desc != "" {
			l += ": " + desc
		}
		return CodeStore, l
	case input.RoleArray:
		l := "array data"
		if name != "" {
			l = name + " data"
		}
		if desc != "" {
			l += ": " + desc
		}
		return CodeArray, l
	case input.RoleMeta:
		return CodeContainer, name + " (record torch.load reads)"
	case input.RoleExtra:
		return CodeContainer, name + " (member torch.load does not read)"
	case input.RoleTrailing:
		return CodeTrailing, "trailing bytes the loader ignores"
	}
	return CodeContainer, name
}

// partChildren lists the streams (and trailing bytes) of a pickle part.
func (t *Tree) partChildren(it Item) []Item {
	pt := it.part
	var out []Item
	for _, st := range pt.pickle {
		out = append(out, Item{Kind: ItemStream, Stream: st, Index: st.Store.Index, Size: st.Bytes(), Self: st.Store.StreamSelf, pl: link(it.pl, "")})
	}
	if tr := pt.trailing; tr != nil {
		tit := Item{Kind: ItemPart, Size: tr.Len, Self: tr.Len, Role: ppath.Trailing, part: &partItem{idx: -1, code: CodeTrailing, label: "trailing bytes: " + tr.Reason}}
		if it.pl == nil && pt.idx == t.Doc.MainPart() {
			tit.pl = link(nil, ppath.Trailing)
		}
		out = append(out, tit)
	}
	return out
}

// attached appends to kids the parts shown under a node.
func (t *Tree) attached(it Item, kids []Item) []Item {
	st := it.Stream
	for _, a := range st.attach[it.Node] {
		if a.counted {
			kids = append(kids, t.partLine(a.part, it.pl))
			continue
		}
		p := &t.Doc.Parts[a.part]
		_, l := rawLabel(p)
		at := "?"
		if ast := t.stOf[a.at]; ast != nil {
			at = t.PathOf(ast, a.atNode)
		}
		kids = append(kids, Item{Kind: ItemPart, Role: attachRole, pl: link(it.pl, attachRole),
			part: &partItem{idx: a.part, code: CodeRef, label: l + ", counted at " + at, ref: true}})
	}
	return kids
}

// tensorLabel is the label of a torch tensor: dtype (from its storage
// type) and shape, and the storage offset when it is a view.
func (st *StreamTree) tensorLabel(n pickle.ID) string {
	d := st.doc
	if d == nil {
		d = &input.Doc{}
	}
	tr, ok := d.TensorAt(st.Store, n)
	if !ok || tr.Storage.DType == "" {
		return tensor(st.Store, n)
	}
	l := "torch.Tensor " + tr.Storage.DType + " " + array.ShapeText(tr.Shape)
	if tr.Offset != 0 {
		l += " at element " + strconv.FormatInt(tr.Offset, 10)
	}
	return l
}

// joblibLabel labels a NumpyArrayWrapper whose data is attached: "joblib
// array <f8 (3, 4)" ("" for any other node).
func (st *StreamTree) joblibLabel(n pickle.ID) string {
	if st.attach == nil || st.doc == nil {
		return ""
	}
	for _, a := range st.attach[n] {
		p := &st.doc.Parts[a.part]
		if s, id := partNode(st.doc, p); s != st.Store || id != n {
			continue
		}
		if p.Raw == nil {
			return "joblib object array"
		}
		l := "joblib array " + p.Raw.DType + " " + array.ShapeText(p.Raw.Shape)
		if p.Raw.Order == "F" {
			l += " Fortran order"
		}
		return l
	}
	return ""
}
