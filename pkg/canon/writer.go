package canon

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
