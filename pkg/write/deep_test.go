package write

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// tooDeepRef is tooDeep as first written: the breadth-first walk to its
// end, each node's depth kept.
func tooDeepRef(s *pickle.Store) (int64, bool) {
	n := s.Len()
	if n <= 2*MaxDepth {
		return 0, false
	}
	depth := make([]int32, n)
	queue := make([]pickle.ID, 0, n)
	add := func(id pickle.ID, d int32) {
		if id >= 0 && int(id) < n && depth[id] == 0 {
			depth[id] = d
			queue = append(queue, id)
		}
	}
	add(s.Root, 1)
	for _, ev := range s.Events() {
		add(ev.Node, 1)
	}
	for _, l := range [][]pickle.ID{s.Popped, s.Leftover, s.Tops} {
		for _, id := range l {
			add(id, 1)
		}
	}
	var kids []pickle.ID
	first := int64(-1)
	for i := 0; i < len(queue); i++ {
		id := queue[i]
		d := depth[id]
		if d > MaxDepth && first < 0 {
			first = s.Offset(id)
		}
		if d > 2*MaxDepth {
			return first, true
		}
		kids = s.Children(id, kids[:0])
		for _, c := range kids {
			add(c, d+1)
		}
	}
	return 0, false
}

// TestTooDeepSame: tooDeep, which stops once no node left can be deep
// enough, answers as the walk to the end does, on nestings around MaxDepth
// and 2 x MaxDepth (with and without a wide part) and on the larger
// pickles of testdata.
func TestTooDeepSame(t *testing.T) {
	var inputs [][]byte
	for _, levels := range []int{MaxDepth, 2*MaxDepth - 1, 2 * MaxDepth, 2*MaxDepth + 1, 3 * MaxDepth} {
		for _, wide := range []int{0, 2 * MaxDepth, 10 * MaxDepth} {
			// a list of `wide` Nones, then `levels` nested lists
			var b strings.Builder
			b.WriteString("\x80\x04]")
			for range wide {
				b.WriteString("Na")
			}
			b.WriteString(strings.Repeat("]", levels))
			b.WriteString(strings.Repeat("a", levels))
			b.WriteString(".")
			inputs = append(inputs, []byte(b.String()))
			// the nesting first, the wide list last
			b.Reset()
			b.WriteString("\x80\x04]")
			b.WriteString(strings.Repeat("]", levels))
			b.WriteString(strings.Repeat("a", levels))
			b.WriteString("]")
			for range wide {
				b.WriteString("Na")
			}
			b.WriteString("\x86.")
			inputs = append(inputs, []byte(b.String()))
		}
	}
	files, _ := filepath.Glob("../../testdata/*/*.pkl")
	more, _ := filepath.Glob("../../testdata/*/*/*.pkl")
	for _, p := range append(files, more...) {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 100<<10 && fi.Size() < 64<<20 {
			if b, err := os.ReadFile(p); err == nil {
				inputs = append(inputs, b)
			}
		}
	}
	ropt := canon.ReadOptions(Options{}.CanonOptions())
	checked := 0
	for i, b := range inputs {
		f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "", ropt)
		if err != nil {
			continue
		}
		for _, st := range f.Streams {
			s := st.Store()
			off, deep := tooDeep(s)
			roff, rdeep := tooDeepRef(s)
			if off != roff || deep != rdeep {
				t.Errorf("input %d: tooDeep %d %v, the walk to the end %d %v", i, off, deep, roff, rdeep)
			}
			checked++
		}
	}
	t.Logf("%d streams", checked)
}
