package pickle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// parseBytes runs Parse over b with its size known.
func parseBytes(b []byte) (*File, error) {
	return Parse(bytes.NewReader(b), int64(len(b)), "t.pkl", Options{})
}

// onlyReader hides bytes.Reader's other methods, as stdin would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// checkError checks that err is a *Error whose offset lies inside the input.
func checkError(err error, size int) (*Error, error) {
	pe, ok := AsError(err)
	if !ok {
		return nil, fmt.Errorf("error is %T, not *pickle.Error: %v", err, err)
	}
	if pe.Offset < 0 || pe.Offset > int64(size) {
		return pe, fmt.Errorf("error offset %d outside [0, %d]: %v", pe.Offset, size, err)
	}
	if pe.Reason == "" {
		return pe, errors.New("error without a reason")
	}
	return pe, nil
}

// checkFile checks the invariants every parsed file must satisfy: streams
// cover the input back to back (then the trailing bytes), every byte of a
// stream is attributed once (sum of Node.Self over Stream.All plus
// Stream.Self is the stream's length), node IDs index Stream.All, and the
// root, tops and log point into the stream.
func checkFile(f *File, size int64) error {
	pos := int64(0)
	for i, st := range f.Streams {
		if st.Index != i {
			return fmt.Errorf("stream %d has Index %d", i, st.Index)
		}
		if st.Offset != pos {
			return fmt.Errorf("stream %d starts at %d, want %d", i, st.Offset, pos)
		}
		if st.End <= st.Offset {
			return fmt.Errorf("stream %d: empty span [%d,%d)", i, st.Offset, st.End)
		}
		pos = st.End
		sum := st.Self
		if st.Self < 0 {
			return fmt.Errorf("stream %d: negative Self %d", i, st.Self)
		}
		inStream := func(n *Node) bool { return n != nil && n.ID >= 0 && int(n.ID) < len(st.All) && st.All[n.ID] == n }
		for j, n := range st.All {
			if n == nil {
				return fmt.Errorf("stream %d: nil node %d", i, j)
			}
			if int(n.ID) != j {
				return fmt.Errorf("stream %d: node at %d has ID %d", i, j, n.ID)
			}
			if n.Self < 0 {
				return fmt.Errorf("stream %d: node %d has negative Self %d", i, j, n.Self)
			}
			if n.Offset < st.Offset || n.Offset >= st.End {
				return fmt.Errorf("stream %d: node %d offset %d outside [%d,%d)", i, j, n.Offset, st.Offset, st.End)
			}
			sum += n.Self
		}
		if sum != st.Len() {
			return fmt.Errorf("stream %d: attributed %d bytes, stream has %d", i, sum, st.Len())
		}
		if st.Root == nil || !inStream(st.Root) {
			return fmt.Errorf("stream %d: root not in All", i)
		}
		for _, n := range st.All {
			if n.Owner != nil && !inStream(n.Owner) {
				return fmt.Errorf("stream %d: node %d owned outside the stream", i, n.ID)
			}
			for _, c := range n.Children() {
				if !inStream(c) {
					return fmt.Errorf("stream %d: node %d has a child outside the stream", i, n.ID)
				}
			}
		}
		for _, n := range st.Tops {
			if !inStream(n) || n.Owner != nil {
				return fmt.Errorf("stream %d: top node %d not in All or owned", i, n.ID)
			}
		}
		for _, e := range st.Log {
			if !inStream(e.Node) {
				return fmt.Errorf("stream %d: log event at %d without a node of the stream", i, e.Offset)
			}
			if e.Offset < st.Offset || e.Offset >= st.End {
				return fmt.Errorf("stream %d: log event offset %d outside the stream", i, e.Offset)
			}
			if e.Kind == EvMut && (e.Mut < 0 || e.Mut >= len(e.Node.Muts())) {
				return fmt.Errorf("stream %d: mutation event index %d out of range", i, e.Mut)
			}
		}
		// The ownership tree has no cycle: following Owner from any node
		// ends (state 1: on the current path, 2: known to end).
		state := make([]uint8, len(st.All))
		var path []*Node
		for _, n := range st.All {
			path = path[:0]
			for p := n; p != nil && state[p.ID] != 2; p = p.Owner {
				if state[p.ID] == 1 {
					return fmt.Errorf("stream %d: Owner chain of node %d loops", i, n.ID)
				}
				state[p.ID] = 1
				path = append(path, p)
			}
			for _, p := range path {
				state[p.ID] = 2
			}
		}
	}
	if f.Trailing != nil {
		if f.Trailing.Offset != pos {
			return fmt.Errorf("trailing bytes start at %d, want %d", f.Trailing.Offset, pos)
		}
		pos += f.Trailing.Len
	}
	if pos != size || f.Size != size {
		return fmt.Errorf("streams and trailing bytes cover %d bytes, Size %d, input %d", pos, f.Size, size)
	}
	return nil
}

// fixtureFiles lists the committed plain pickles of the shared corpus
// (testdata/fixtures at the repository root), or nil when it is absent.
func fixtureFiles(maxSize int64) []string {
	var out []string
	root := filepath.Join("..", "..", "testdata", "fixtures")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if !isPickleName(p) {
			return nil
		}
		if fi, err := d.Info(); err != nil || (maxSize > 0 && fi.Size() > maxSize) {
			return nil
		}
		out = append(out, p)
		return nil
	})
	return out
}

func isPickleName(p string) bool {
	for _, ext := range []string{".pkl", ".pickle", ".p"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}
