package canon

import (
	"math/big"

	"github.com/pk-tools/pk/pkg/pickle"
)

// The view reads every node by pickle.ID. IDs below View.base are the
// stream's nodes, read from its pickle.Store; IDs from base on are the
// nodes the rules built (a rewritten call, a placeholder, a tracker), held
// in a small store of the view's own (View.x, local ID = ID - base) whose
// items name nodes of either kind. The stream's store is never written:
// several views of one stream (pk diff normalises a stream more than once)
// see the same nodes and may coexist.
//
// The synthetic nodes' texts (a placeholder's name, a rewritten global's
// module, the payload of a rewritten bytes or bytearray) are kept in
// View.xstr (by ID, only for the nodes that have one), strings shared with the stream's store where they come from
// it, so that a rule never copies a payload; their special role
// (placeholder, tracker) in View.xspec.

// at returns the store holding id and id's index in it.
func (v *View) at(id pickle.ID) (*pickle.Store, pickle.ID) {
	if id < v.base {
		return v.s, id
	}
	return &v.x, id - v.base
}

// mutsAt is at for the operations of id: a synthetic copy of a call
// reads those of the stream's node it copies (View.xmut), which are not
// copied.
func (v *View) mutsAt(id pickle.ID) (*pickle.Store, pickle.ID) {
	if id >= v.base {
		if src, ok := v.xmut[id]; ok {
			return v.s, src
		}
	}
	return v.at(id)
}

// nodeClass is what View.cls holds of a stream node: its kind (the
// stream's kinds are below 32) and classMuts when it has operations.
type nodeClass uint8

const (
	classKind nodeClass = 31
	classMuts nodeClass = 32
)

func classOf(k pickle.Kind, nmuts int) nodeClass {
	c := nodeClass(k) & classKind
	if nmuts > 0 {
		c |= classMuts
	}
	return c
}

// leafKinds are the kinds that never have items (appendTo gives a
// container's items only to a container of the opcode's kind).
const leafKinds = 1<<pickle.KindNone | 1<<pickle.KindBool | 1<<pickle.KindInt | 1<<pickle.KindFloat |
	1<<pickle.KindStr | 1<<pickle.KindBytes | 1<<pickle.KindByteArray | 1<<pickle.KindExt | 1<<pickle.KindBuffer

// plainLeaf reports whether stream node c (its class known) has no items,
// no operations, no replacement and no folded calls: nothing reachable
// from it but itself.
func (v *View) plainLeaf(c pickle.ID) bool {
	if uint32(c) >= uint32(len(v.cls)) {
		return false
	}
	k := v.cls[c]
	return k&classMuts == 0 && leafKinds&(1<<(k&classKind)) != 0 && !v.replSet.has(c) && !v.extraSet.has(c)
}

// nmuts is the number of operations of id (the stream's nodes first: the
// encoding asks at every node, and a synthetic node has none of its own).
func (v *View) nmuts(id pickle.ID) int {
	if uint32(id) < uint32(len(v.cls)) {
		if v.cls[id]&classMuts == 0 {
			return 0
		}
		return v.s.NMuts(id)
	}
	if id < v.base {
		return v.s.NMuts(id)
	}
	return v.nmutsSynth(id)
}

func (v *View) nmutsSynth(id pickle.ID) int { s, i := v.mutsAt(id); return s.NMuts(i) }

func (v *View) kind(id pickle.ID) pickle.Kind {
	if uint32(id) < uint32(len(v.cls)) {
		return pickle.Kind(v.cls[id] & classKind)
	}
	s, i := v.at(id)
	return s.Kind(i)
}
func (v *View) opOf(id pickle.ID) pickle.Opcode { s, i := v.at(id); return s.Op(i) }
func (v *View) flags(id pickle.ID) pickle.Flags { s, i := v.at(id); return s.Flags(i) }
func (v *View) offset(id pickle.ID) int64       { s, i := v.at(id); return s.Offset(i) }
func (v *View) muts(id pickle.ID) []pickle.SMut { s, i := v.mutsAt(id); return s.Muts(i) }
func (v *View) items(id pickle.ID) []pickle.ID  { s, i := v.at(id); return s.Items(i) }
func (v *View) nitems(id pickle.ID) int         { s, i := v.at(id); return s.NItems(i) }
func (v *View) fn(id pickle.ID) pickle.ID       { s, i := v.at(id); return s.Func(i) }
func (v *View) argsOf(id pickle.ID) pickle.ID   { s, i := v.at(id); return s.Args(i) }
func (v *View) kwargsOf(id pickle.ID) pickle.ID { s, i := v.at(id); return s.Kwargs(i) }
func (v *View) name(id pickle.ID) string        { s, i := v.at(id); return s.Name(i) }
func (v *View) isBig(id pickle.ID) bool         { s, i := v.at(id); return s.IsBig(i) }
func (v *View) bigOf(id pickle.ID) *big.Int     { s, i := v.at(id); return s.Big(i) }
func (v *View) blob(id pickle.ID) *pickle.Blob  { s, i := v.at(id); return s.Blob(i) }
func (v *View) float(id pickle.ID) float64      { s, i := v.at(id); return s.Float(i) }
func (v *View) selfBytes(id pickle.ID) int64    { s, i := v.at(id); return s.Self(i) }
func (v *View) owner(id pickle.ID) pickle.ID    { s, i := v.at(id); return s.Owner(i) }
func (v *View) hasFlag(id pickle.ID, f pickle.Flags) bool {
	return v.flags(id)&f != 0
}

// ival is the scalar of a node that is no text (int that fits int64,
// bool, float bits, EXT code, buffer index, tracker number): 0 for the
// text kinds, as the graph had it.
func (v *View) ival(id pickle.ID) int64 {
	switch v.kind(id) {
	case pickle.KindStr, pickle.KindBytes, pickle.KindByteArray, pickle.KindPersID, pickle.KindGlobal, KindPlaceholder:
		return 0 // (a placeholder's scalar is its name's index)
	}
	s, i := v.at(id)
	return s.Int(i)
}

// text is the text of a str/bytes/bytearray (the blob's prefix when
// streamed), a PERSID, a global's module, a placeholder's name.
func (v *View) text(id pickle.ID) string {
	if id < v.base {
		return v.s.Str(id)
	}
	if v.xspec[id-v.base] == 'P' {
		s, i := v.at(id)
		return v.pnames[s.Int(i)]
	}
	return v.xstr[id]
}

// plen is the payload length of a str/bytes/bytearray.
func (v *View) plen(id pickle.ID) int64 {
	if b := v.blob(id); b != nil {
		return b.Len
	}
	return int64(len(v.text(id)))
}

// ---- building synthetic nodes ----

// synth adds a node of kind k standing where like stands (its opcode and
// offset), with no flags, items or bytes of its own.
func (v *View) synth(k pickle.Kind, like pickle.ID) pickle.ID {
	return v.synthOp(k, v.opOf(like), v.offset(like))
}

func (v *View) synthOp(k pickle.Kind, op pickle.Opcode, off int64) pickle.ID {
	v.x.Reserve(1, 0, int64(v.walked), int64(v.base))
	local := v.x.Add(k, op, off)
	v.xspec = append(v.xspec, 0)
	v.nsyn++
	return v.base + local
}

func (v *View) setKids(id pickle.ID, items []pickle.ID) {
	v.x.Reserve(0, len(items), int64(v.walked), int64(v.base))
	v.x.SetItems(id-v.base, items)
}
func (v *View) setFlags(id pickle.ID, f pickle.Flags) { v.x.SetFlags(id-v.base, f) }
func (v *View) setInt(id pickle.ID, i int64)          { v.x.SetInt(id-v.base, i) }
func (v *View) setText(id pickle.ID, t string) {
	if v.xstr == nil {
		v.xstr = map[pickle.ID]string{}
	}
	v.xstr[id] = t
}
func (v *View) setName(id pickle.ID, n string)       { v.x.SetName(id-v.base, n) }
func (v *View) setBlob(id pickle.ID, b *pickle.Blob) { v.x.SetBlob(id-v.base, b) }

// setCall sets the parts of synthetic call id (kw may be NoID) and copies
// the operations of call muts (NoID: none) to it.
func (v *View) setCall(id, f, a, kw, muts pickle.ID) {
	if kw != pickle.NoID {
		v.setKids(id, []pickle.ID{f, a, kw})
	} else {
		v.setKids(id, []pickle.ID{f, a})
	}
	if muts == pickle.NoID {
		return
	}
	if muts >= v.base {
		src, ok := v.xmut[muts]
		if !ok {
			return // a synthetic node has operations only as a copy
		}
		muts = src
	}
	if v.s.NMuts(muts) > 0 {
		if v.xmut == nil {
			v.xmut = map[pickle.ID]pickle.ID{}
		}
		v.xmut[id] = muts
	}
}
