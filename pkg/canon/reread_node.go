package canon

import "io"

// OpenBytes reads the payload of a bytes node of the view again when it is
// a streamed blob (a payload of 1 MiB or more): from the file, and for the
// bytes codecs-bytes made of a streamed str (protocol 0-2's
// _codecs.encode(s, 'latin1'): an array's data), as the latin-1 bytes of
// that str. pk diff streams an array's elements so. False when the view
// cannot (standard input, or not pk-canon/2). A payload that reads
// otherwise than the first time ends in an error.
func (n *Node) OpenBytes() (io.Reader, func(), bool) {
	if n == nil || n.v.blob(n.src) == nil {
		return nil, nil, false
	}
	r, done, _, err := n.v.bytesReader(n.src)
	if err != nil {
		return nil, nil, false
	}
	return r, done, true
}
