package canon

// FreshNodes makes the view hand out a new *Node each time a node is
// reached (Root, Items, Entries, Ops, ...) instead of keeping one per node
// for the view's life: pointer equality then no longer says identity (ID
// does), and a node's Path is the path by which it was reached this time.
// For a caller that walks the view once and keys what it keeps by ID (pk
// canon's writer), the view then holds no node, 56 bytes each.
func (v *View) FreshNodes() { v.fresh = true }
