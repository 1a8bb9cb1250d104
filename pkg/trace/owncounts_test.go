package trace

import (
	"bytes"
	"runtime"
	"slices"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestOwnCounts: sizing counts a node's owned nodes in a byte a node, the
// counts past a byte in a map (lists of 300 tuples in a list of 300, a tuple of 300 ints), with the post-order's sizes; sizeStream allocates at most 6
// bytes a node (the sizes 4, the counts 1, the bitsets): it took 8 and
// more with 4-byte counts.
func TestOwnCounts(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x02](")
	for range 300 {
		b.WriteString("](") // a list of 300 tuples in the list
		for i := range 300 {
			b.Write([]byte{'K', byte(i), 'K', byte(i >> 8), 0x86}) // BININT1, BININT1, TUPLE2
		}
		b.WriteString("e")
	}
	b.WriteString("e(")
	for i := range 300 {
		b.Write([]byte{'M', byte(i), byte(i >> 8)}) // BININT2
	}
	b.WriteString("ta.") // TUPLE, APPEND, STOP
	f, err := pickle.Parse(bytes.NewReader(b.Bytes()), int64(b.Len()), "owncounts.pkl", pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Streams[0].Store()
	n := s.Len()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	st := sizeStream(s, nil, nil, nil)
	runtime.ReadMemStats(&m1)
	ref := &StreamTree{Store: s, incl: sizesOf(make([]int64, n))}
	ref.sizeDFS(nil)
	if st.ownStart != nil || !sameSizes(&st.incl, &ref.incl) || !slices.Equal(st.Orphans, ref.Orphans) {
		t.Fatal("sizes differ from the post-order's, or the forest path did not apply")
	}
	if got := st.incl.at(s.Root); got != s.Length()-s.StreamSelf {
		t.Fatalf("root %d bytes, the stream %d", got, s.Length()-s.StreamSelf)
	}
	if per := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n); per > 6 {
		t.Errorf("sizeStream allocated %.1f bytes a node, want at most 6", per)
	}
	var k ownCounts
	k.c = make([]uint8, 2)
	for range 1000 {
		k.inc(1)
	}
	if k.get(1) != 1000 || k.c[1] != cntFar {
		t.Fatalf("count %d (byte %d), want 1000 in the map", k.get(1), k.c[1])
	}
	for i := 999; i > 0; i-- {
		if k.dec(1) {
			t.Fatalf("none left at %d", i)
		}
	}
	if !k.dec(1) {
		t.Fatal("the last dec left some")
	}
}
