package write

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestOneTableByID: the writer's walk keeps one int32 array by node ID for
// the memo's identity nodes (and whether one is in construction) and the
// pure nodes' keys (table, keyCache), not three arrays. A list of 300,000
// lists of a str each (600,001 nodes, half of them identity nodes, half
// pure) allocates 23.7 bytes a node in its traversal (two arrays: 27.7; the
// rest is the tape: its bytes, events and builds); a list of 200,000 tuples
// of an empty list each (400,001 identity nodes, each tuple in
// construction while its list is written) 20.6 (with an array of a byte a
// node for "in construction": 21.6).
func TestOneTableByID(t *testing.T) {
	const n = 300000
	b := []byte{0x80, 4, ']', '('}
	for i := range n {
		s := fmt.Sprintf("%x", i%251)
		b = append(b, ']', 0x8c, byte(len(s)))
		b = append(append(b, s...), 'a')
	}
	b = append(b, 'e', '.')
	traversalBytes(t, "lists of a str", b, 25.5)
	b = []byte{0x80, 4, ']', '('}
	for range 200000 {
		b = append(b, ']', 0x85) // (TUPLE1 of an empty list)
	}
	b = append(b, 'e', '.')
	traversalBytes(t, "tuples of a list", b, 21.1)
}

// traversalBytes checks that the writer's traversal of pickle b allocates
// at most max bytes a node of its view.
func traversalBytes(t *testing.T, what string, b []byte, max float64) {
	t.Helper()
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "", canon.ReadOptions(canon.Options{NoPaths: true}))
	if err != nil {
		t.Fatal(err)
	}
	v := canon.Normalize(f.Streams[0], canon.Options{NoPaths: true})
	w, err := newStreamWriter(v, 4)
	if err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	tp, err := w.traverse(false)
	runtime.ReadMemStats(&m1)
	tp.close()
	if err != nil {
		t.Fatal(err)
	}
	per := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(v.NodeCount())
	t.Logf("%s: %d nodes, %.2f bytes allocated a node", what, v.NodeCount(), per)
	if per > max {
		t.Errorf("%s: the traversal allocated %.2f bytes a node", what, per)
	}
}
