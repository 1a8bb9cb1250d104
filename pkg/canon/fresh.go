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
func (v *View) SetFreshNodes(on bool) { v.fresh = on }

// AppendPure appends the embedding of pure node n (Pure) in its parent's
// encoding to b: an inline scalar, or 'H' and the digest of a pure
// container. Two pure nodes have equal embeddings exactly when their
// Digests are equal (Digest hashes it); pk diff's fingerprints read it.
func (n *Node) AppendPure(b []byte) []byte { return n.v.appendPure(b, n.src) }

// ItemIDs appends to buf the IDs of Items() (pickle.NoID where Items has
// nil), without making their nodes.
func (n *Node) ItemIDs(buf []pickle.ID) []pickle.ID {
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
func (n *Node) EntryIDs(buf []pickle.ID) []pickle.ID {
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
