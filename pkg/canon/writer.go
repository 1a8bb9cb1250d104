package canon

import (
	"math/big"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Accessors pk canon's writer (pkg/write) needs to write the pk-canon/2
// view back as a pickle. They read the view; nothing here changes the
// encoding.

// View returns the view the node belongs to.
func (n *Node) View() *View { return n.v }

// Foreign returns, for the array node of a joblib object array (Form2), the
// node of the array its nested pickle makes, in that pickle's own view; nil
// for any other node.
func (n *Node) Foreign() *Node {
	vb := n.v.foreigns[n.src]
	if vb == nil {
		return nil
	}
	return vb.Root()
}

// BareSum is the digest (Result.Sum) HashDoc and HashFile give a bare pickle
// file of n streams, without trailing bytes, whose streams have the digests
// digests (View.Digest of each, one after the other): pk canon checks its
// output with one pk hash of the file against it.
func BareSum(opt Options, n int, digests []byte) []byte {
	h := opt.Algo.New()
	h.Write([]byte(opt.header()))
	h.Write(appendStreamCount(appendStr([]byte{'P'}, ""), n))
	h.Write(digests)
	h.Write([]byte{'z'})
	return h.Sum(nil)
}

// Ref is a node of a view named by its ID, as a value: pk canon's writer
// walks the view through Refs, keying what it keeps by ID, so that walking
// allocates no Node (a Node is 48 bytes and a pointer for the collector to
// follow; a state of a million nodes reached that many). A Ref reads what
// the Node of the same ID reads; it has no path. The zero Ref is no node
// (where a Node method returns nil).
type Ref struct {
	v  *View
	id pickle.ID
}

// RefEntry is Entry as Refs.
type RefEntry struct {
	Key, Value Ref
}

// RefOp is Op as Refs.
type RefOp struct {
	Name   string
	Offset int64
	Args   []Ref
}

// ref is wrap without a Node: the resolved node of id, the zero Ref for
// none.
func (v *View) ref(id pickle.ID) Ref {
	if id < 0 {
		return Ref{}
	}
	return Ref{v: v, id: v.res(id)}
}

// Ref returns the node as a Ref.
func (n *Node) Ref() Ref {
	if n == nil {
		return Ref{}
	}
	return Ref{v: n.v, id: n.src}
}

// RootRef is Root as a Ref.
func (v *View) RootRef() Ref { return v.ref(v.s.Root) }

// EffectRefs is EffectNodes as Refs.
func (v *View) EffectRefs() []Ref {
	v.Root()
	idx := v.effectIndexes()
	if len(idx) == 0 {
		return nil
	}
	out := make([]Ref, 0, len(idx))
	for _, i := range idx {
		out = append(out, v.ref(v.s.Event(i).Node))
	}
	return out
}

// NodeCount is the number of IDs the view's nodes take (every ID is less):
// the size of a table by node ID.
func (v *View) NodeCount() int { return int(v.nsyn) }

// The accessors of a Ref, each as the Node method of the same name.

func (r Ref) IsNil() bool                { return r.v == nil }
func (r Ref) ID() pickle.ID              { return r.id }
func (r Ref) View() *View                { return r.v }
func (r Ref) Kind() pickle.Kind          { return r.v.kind(r.id) }
func (r Ref) Flags() pickle.Flags        { return r.v.flags(r.id) }
func (r Ref) NItems() int                { return r.v.nitems(r.id) }
func (r Ref) Offset() int64              { return r.v.offset(r.id) }
func (r Ref) Pure() bool                 { return r.v.isPure(r.id) }
func (r Ref) Float() float64             { return r.v.float(r.id) }
func (r Ref) Str() string                { return r.v.text(r.id) }
func (r Ref) Len() int64                 { return r.v.plen(r.id) }
func (r Ref) Name() string               { return r.v.name(r.id) }
func (r Ref) Blob() *pickle.Blob         { return r.v.blob(r.id) }
func (r Ref) Array() *Array              { return r.v.arr[r.id] }
func (r Ref) Storage() *Storage          { return r.v.stor[r.id] }
func (r Ref) AppendPure(b []byte) []byte { return r.v.appendPure(b, r.id) }
func (r Ref) ItemKind(i int) pickle.Kind { return r.v.kind(r.v.res(r.v.items(r.id)[i])) }
func (r Ref) Func() Ref                  { return r.v.ref(r.v.fn(r.id)) }
func (r Ref) Args() Ref                  { return r.v.ref(r.v.argsOf(r.id)) }
func (r Ref) node() *Node                { return &Node{v: r.v, src: r.id} }
func (r Ref) Digest() []byte             { return r.node().Digest() }
func (r Ref) Foreign() Ref               { return r.node().Foreign().Ref() }
func (r Ref) Item(i int) Ref             { return r.v.ref(r.v.items(r.id)[i]) }

// Small returns the value of an int or bool node that fits in an int64
// (ok false: Int has it), without making a big.Int.
func (r Ref) Small() (int64, bool) {
	if r.v.isBig(r.id) {
		return 0, false
	}
	return r.v.ival(r.id), true
}

// CallForm is Node.CallForm.
func (r Ref) CallForm() string {
	if r.v.kind(r.id) != pickle.KindCall {
		return ""
	}
	switch f, _ := callForm(r.v, r.id); f {
	case 'w', 'W':
		return "new"
	case 'o':
		return "inst"
	}
	return "call"
}

// Int is Node.Int.
func (r Ref) Int() *big.Int {
	if r.v.isBig(r.id) {
		return r.v.bigOf(r.id)
	}
	return big.NewInt(r.v.ival(r.id))
}

// Items is Node.Items (nil when there is none).
func (r Ref) Items() []Ref { return r.AppendItems(nil) }

// AppendItems appends Items() to buf.
func (r Ref) AppendItems(buf []Ref) []Ref {
	for _, c := range r.v.itemsOf(r.id) {
		buf = append(buf, r.v.ref(c))
	}
	return buf
}

// Entries is Node.Entries.
func (r Ref) Entries() []RefEntry {
	v := r.v
	if v.kind(r.id) != pickle.KindDict {
		return nil
	}
	sc := v.getScratch()
	defer v.putScratch(sc)
	ents := v.dictEntries(r.id, sc)
	out := make([]RefEntry, len(ents))
	for i, k := range ents {
		out[i] = RefEntry{Key: v.ref(k.node), Value: v.ref(k.val)}
	}
	return out
}

// Ops is Node.Ops.
func (r Ref) Ops() []RefOp {
	ops := r.v.ops(r.id)
	if len(ops) == 0 {
		return nil
	}
	out := make([]RefOp, len(ops))
	n := 0
	for _, o := range ops {
		n += len(o.args)
	}
	args := make([]Ref, n)
	for i, o := range ops {
		a := args[:len(o.args):len(o.args)]
		args = args[len(o.args):]
		out[i] = r.v.refOp(o, a)
	}
	return out
}

// refOp is o as a RefOp, its Args in a (of len(o.args)).
func (v *View) refOp(o op, a []Ref) RefOp {
	name := o.displayName()
	for j, c := range o.args {
		a[j] = v.ref(c)
	}
	return RefOp{Name: name, Offset: o.offset, Args: a}
}

// OpList is Ops held as the view's operations, each made a RefOp when
// asked: pk canon's writer reads a node's operations one at a time, and
// an object of 700,000 BUILDs held them twice (the view's and the
// RefOps with their Refs, 90 MB) while it was written.
type OpList struct {
	v   *View
	ops []op
}

// OpList returns the operations Ops gives, as an OpList.
func (r Ref) OpList() OpList { return OpList{v: r.v, ops: r.v.ops(r.id)} }

// Len is the number of operations.
func (l OpList) Len() int { return len(l.ops) }

// Op is operation i, as Ops gives it.
func (l OpList) Op(i int) RefOp {
	o := l.ops[i]
	return l.v.refOp(o, make([]Ref, len(o.args)))
}

// Kwargs is Node.Kwargs.
func (r Ref) Kwargs() Ref {
	if r.v.kind(r.id) != pickle.KindCall {
		return Ref{}
	}
	if _, kw := callForm(r.v, r.id); !kw {
		return Ref{}
	}
	return r.v.ref(r.v.kwargsOf(r.id))
}

// ArrayData is Node.ArrayData.
func (r Ref) ArrayData() Ref {
	a := r.Array()
	if a == nil {
		return Ref{}
	}
	for _, c := range []pickle.ID{a.Items, a.Data, a.Buffer} {
		if c != pickle.NoID {
			return r.v.ref(c)
		}
	}
	return Ref{}
}

// Under is Node.Under.
func (r Ref) Under(id pickle.ID) Ref { return r.v.ref(id) }
