package canon

import "github.com/pk-tools/pk/pkg/pickle"

// FreshNodes makes the view hand out a new *Node each time a node is
// reached (Root, Items, Entries, Ops, ...) instead of keeping one per node
// for the view's life: pointer equality then no longer says identity (ID
// does), and a node's Path is the path by which it was reached this time.
// For a caller that walks the view once and keys what it keeps by ID (pk
// canon's writer), the view then holds no node, 56 bytes each.
func (v *View) FreshNodes() { v.fresh = true }

// ItemKind is Items()[i].Kind() for a list, tuple or persistent id, without
// making the item's Node.
func (n *Node) ItemKind(i int) pickle.Kind { return n.v.kind(n.v.res(n.v.items(n.src)[i])) }

// SetFreshNodes turns FreshNodes on or off: a caller that makes one pass
// over the whole view keyed by ID (pk diff's fingerprints) and then walks
// a few of its nodes by identity turns it on for the pass only, so that
// the view keeps a node only for what the walk reaches. Nodes handed out
// before stay the view's.
func (v *View) SetFreshNodes(on bool) { v.fresh, v.loose = on, false }

// SetLooseNodes is SetFreshNodes, and a node handed out is not linked to
// the node it was reached from either: nothing it leads to keeps it, and
// its Path is its last edge only. pk diff's walk, which keeps paths of its
// own, turns it on: a node a million levels down no longer keeps the
// million above it, nor the view one per node.
func (v *View) SetLooseNodes(on bool) { v.fresh, v.loose = on, on }

// AppendPure appends the embedding of pure node n (Pure) in its parent's
// encoding to b: an inline scalar, or 'H' and the digest of a pure
// container. Two pure nodes have equal embeddings exactly when their
// Digests are equal (Digest hashes it); pk diff's fingerprints read it.
func (n *Node) AppendPure(b []byte) []byte { return n.v.appendPure(b, n.src) }

// PureTuple reports whether r is a pure tuple embedded by its digest: its
// embedding is then 'H' and the digest of 'T', its length and its items'
// embeddings (pureBody). pk diff's fingerprints hash such a tuple from its
// items' fingerprints instead of asking AppendPure, which computes and
// keeps the digest of every pure tuple below it (36 bytes a tuple a side
// down a nesting of a million).
func (r Ref) PureTuple() bool {
	return r.v.kind(r.id) == pickle.KindTuple && r.v.isPure(r.id) && r.v.composite(r.v.state(), r.id)
}

// ItemIDs appends to buf the IDs of Items() (pickle.NoID where Items has
// nil), without making their nodes.
func (n *Node) ItemIDs(buf []pickle.ID) []pickle.ID { return n.Ref().ItemIDs(buf) }

// ItemIDs is Node.ItemIDs.
func (r Ref) ItemIDs(buf []pickle.ID) []pickle.ID {
	n := Node{v: r.v, src: r.id} // (a value: nothing escapes)
	for _, c := range n.v.itemsOf(n.src) {
		if c >= 0 {
			c = n.v.res(c)
		}
		buf = append(buf, c)
	}
	return buf
}

// itemsOf are the items of node s as Node.Items and Ref.Items give them: a
// set's in canonical order, a dynamic global's operands, nothing for the
// kinds without items.
func (v *View) itemsOf(s pickle.ID) []pickle.ID {
	switch v.kind(s) {
	case pickle.KindSet, pickle.KindFrozenSet:
		items, _ := v.setItemsPos(v.items(s), true)
		return items
	case pickle.KindList, pickle.KindTuple, pickle.KindPersID:
		return v.items(s)
	case pickle.KindGlobal:
		if v.flags(s)&pickle.FlagDynamic != 0 {
			return v.items(s)
		}
	}
	return nil
}

// EntryIDs appends to buf the IDs of the keys and values of Entries(), key
// then value, without making their nodes.
func (n *Node) EntryIDs(buf []pickle.ID) []pickle.ID { return n.Ref().EntryIDs(buf) }

// EntryIDs is Node.EntryIDs.
func (r Ref) EntryIDs(buf []pickle.ID) []pickle.ID {
	n := Node{v: r.v, src: r.id} // (a value: nothing escapes)
	if n.v.kind(n.src) != pickle.KindDict {
		return buf
	}
	v := n.v
	sc := v.getScratch()
	defer v.putScratch(sc)
	for _, k := range v.dictEntries(n.src, sc) {
		kid, val := k.node, k.val
		if kid >= 0 {
			kid = v.res(kid)
		}
		if val >= 0 {
			val = v.res(val)
		}
		buf = append(buf, kid, val)
	}
	return buf
}

// FuncID is Func's ID (pickle.NoID for none), without making a node.
func (r Ref) FuncID() pickle.ID { return r.v.ref(r.v.fn(r.id)).idOrNo() }

// ArgsID is Args' ID (pickle.NoID for none).
func (r Ref) ArgsID() pickle.ID { return r.v.ref(r.v.argsOf(r.id)).idOrNo() }

// KwargsID is Kwargs' ID (pickle.NoID for none).
func (r Ref) KwargsID() pickle.ID { return r.Kwargs().idOrNo() }

func (r Ref) idOrNo() pickle.ID {
	if r.v == nil {
		return pickle.NoID
	}
	return r.id
}

// EachOp calls f for each operation Ops gives, in order, with its index,
// their number, its name, its offset and its arguments' IDs (pickle.NoID
// for a nil one), without making a node or a Ref for each; args is only valid
// during the call. It returns the number of operations.
//
// The operations are read from the store as f takes them (opIter), not
// made first: 700,000 BUILDs on one object were 67 MB of operations and
// their store records at each call (pk diff's fingerprint pass reads a
// node's operations twice, and its walk once more), a million APPENDs 40
// MB of records for one operation.
func (r Ref) EachOp(f func(i, n int, name string, offset int64, args []pickle.ID)) int {
	v := r.v
	extra := v.extra(r.id)
	if v.nmuts(r.id) == 0 && len(extra) == 0 {
		return 0
	}
	n := 0
	for x := v.opIter(r.id, extra, false); x.next(); {
		n++
	}
	var ids []pickle.ID
	x := v.opIter(r.id, extra, true)
	for i := 0; x.next(); i++ {
		ids = ids[:0]
		for _, c := range x.o.args {
			ids = append(ids, v.ref(c).idOrNo())
		}
		f(i, n, x.o.displayName(), x.o.offset, ids)
	}
	return n
}

// opIter reads the operations of a node that appendOps lists, with the
// same merging (a run of APPENDs, SETITEMs or ADDITEMS with no folded call
// between them is one operation; the folded calls extra in by offset), one
// at a time from the store's records, into o; with gather false a merged
// run's arguments are not gathered (the operations are only counted).
type opIter struct {
	v      *View
	it     pickle.MutIter
	m      pickle.SMut // the next record, when more
	more   bool
	extra  []fold
	j      int // the next of extra
	gather bool
	run    []pickle.ID // a merged run's arguments, gathered
	o      op          // the operation next gave
	merged bool        // o is a merged run (its args are run, gathered or not)
}

func (v *View) opIter(id pickle.ID, extra []fold, gather bool) opIter {
	s, i := v.mutsAt(id)
	x := opIter{v: v, it: s.MutIter(i), extra: extra, gather: gather}
	x.m, x.more = x.it.Next()
	return x
}

// next reads the next operation into x.o, false when there is none.
func (x *opIter) next() bool {
	v := x.v
	// a folded call before the next record, or after the last
	if x.j < len(x.extra) && (!x.more || v.offset(x.extra[x.j].call) < x.m.Offset) {
		x.o, x.merged = v.foldOp(x.extra[x.j]), false
		x.j++
		return true
	}
	if !x.more {
		return false
	}
	m := x.m
	tag := mutTag(m.Op)
	x.o = op{tag: tag, offset: m.Offset, args: m.Args}
	x.m, x.more = x.it.Next()
	x.merged = x.merges(tag)
	if x.merged {
		if x.gather {
			x.run = append(x.run[:0], m.Args...)
		}
		for x.merges(tag) {
			if x.gather {
				x.run = append(x.run, x.m.Args...)
			}
			x.m, x.more = x.it.Next()
		}
		x.o.args = x.run
	}
	return true
}

// merges reports whether the next record is merged into an operation of
// tag: the same tag (no BUILD) and no folded call before it.
func (x *opIter) merges(tag byte) bool {
	return x.more && tag != 'b' && mutTag(x.m.Op) == tag &&
		(x.j >= len(x.extra) || x.v.offset(x.extra[x.j].call) >= x.m.Offset)
}

// HasOps is len(Ops()) > 0, without making them.
func (r Ref) HasOps() bool { return r.v.nmuts(r.id) > 0 || len(r.v.extra(r.id)) > 0 }
