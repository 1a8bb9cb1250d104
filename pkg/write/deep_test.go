package write

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// tooDeepRef is tooDeep as a plain walk to its end, each node's depth
// kept: the calls that the result does not reach (found by a walk of its
// own first) start the walk with it and what was popped or left.
func tooDeepRef(s *pickle.Store) (int64, bool) {
	n := s.Len()
	if n <= 2*MaxDepth {
		return 0, false
	}
	var kids []pickle.ID
	reached := make([]bool, n)
	for stack := []pickle.ID{s.Root}; len(stack) > 0; {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id < 0 || int(id) >= n || reached[id] {
			continue
		}
		reached[id] = true
		stack = append(stack, s.Children(id, kids[:0])...)
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
		if ev.Node >= 0 && int(ev.Node) < n && !reached[ev.Node] {
			add(ev.Node, 1)
		}
	}
	for _, l := range [][]pickle.ID{s.Popped, s.Leftover, s.Tops} {
		for _, id := range l {
			add(id, 1)
		}
	}
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
	for _, levels := range []int{MaxDepth, MaxDepth + 1, 2*MaxDepth - 1, 2 * MaxDepth, 3 * MaxDepth} {
		// objects made by calls, each the state of the one above (cost
		// shape nest_newobj_build): every call is reached from the result
		var b strings.Builder
		b.WriteString("\x80\x04ctypes\nSimpleNamespace\nq\x000\x8c\x01aq\x010")
		b.WriteString(strings.Repeat("h\x00)\x81}h\x01", levels/2))
		b.WriteString("h\x00)\x81")
		b.WriteString(strings.Repeat("sb", levels/2))
		b.WriteString(".")
		inputs = append(inputs, []byte(b.String()))
		// the same nesting left on the stack by a discarded call's
		// argument, and again as the argument of calls nothing reaches:
		// builtins.list((list((...,)),)) popped
		b.Reset()
		b.WriteString("\x80\x04cbuiltins\nlist\nq\x00")
		b.WriteString(strings.Repeat("h\x00", levels))
		b.WriteString("]")
		b.WriteString(strings.Repeat("\x85R", levels))
		b.WriteString("0N.")
		inputs = append(inputs, []byte(b.String()))
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
			if boff, bdeep := tooDeepBeside(s)(); boff != off || bdeep != deep {
				t.Errorf("input %d: tooDeepBeside %d %v, tooDeep %d %v", i, boff, bdeep, off, deep)
			}
			checked++
		}
	}
	t.Logf("%d streams", checked)
}

// TestTooDeepObjects: a nesting of objects made by calls (cost shape
// nest_newobj_build) is refused by tooDeep, before the view and its
// digest, at the object where the writer refuses one it walks into (a
// nesting of 30,000 levels, below 2 x MaxDepth): each object's state holds
// the next, two levels an object, and object 10,000's NEWOBJ is at offset
// 34 + 7 x 10,000 + 3.
func TestTooDeepObjects(t *testing.T) {
	for _, objects := range []int{15000, 100000} {
		var b strings.Builder
		b.WriteString("\x80\x04ctypes\nSimpleNamespace\nq\x000\x8c\x01aq\x010")
		b.WriteString(strings.Repeat("h\x00)\x81}h\x01", objects))
		b.WriteString("h\x00)\x81")
		b.WriteString(strings.Repeat("sb", objects))
		b.WriteString(".")
		data := []byte(b.String())
		f, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "", canon.ReadOptions(Options{}.CanonOptions()))
		if err != nil {
			t.Fatal(err)
		}
		off, deep := tooDeep(f.Streams[0].Store())
		if deep != (objects == 100000) {
			t.Errorf("%d objects: tooDeep %v", objects, deep)
		}
		p := filepath.Join(t.TempDir(), "objects.pkl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = File(p, Options{}, false)
		var we *Error
		if !errors.As(err, &we) || !strings.Contains(we.Reason, "levels deep") || we.Offset != 70037 {
			t.Errorf("%d objects: %v, want the refusal at offset 70037", objects, err)
		}
		if deep && off != 70037 {
			t.Errorf("%d objects: tooDeep names offset %d, want 70037", objects, off)
		}
	}
}

// TestTooDeepBesideView: the writer sink walks a stream's depth while its
// view is made (tooDeepBeside); nestings within MaxDepth, within twice it
// (refused by the writer's own count) and past it (refused by the walk),
// behind a wide list so that the walk takes a while, give what the read
// without the sink gives, which walks before the view (run it with -race:
// the walk and the view read one store).
func TestTooDeepBesideView(t *testing.T) {
	defer func() { noSink = false }()
	for _, levels := range []int{MaxDepth - 1, 2*MaxDepth - 1, 3 * MaxDepth} {
		var b strings.Builder
		b.WriteString("\x80\x04]")
		for range 4 * MaxDepth {
			b.WriteString("Na")
		}
		b.WriteString(strings.Repeat("]", levels))
		b.WriteString(strings.Repeat("a", levels))
		b.WriteString(".")
		p := filepath.Join(t.TempDir(), "nest.pkl")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var outs [2]string
		for i, off := range []bool{false, true} {
			noSink = off
			res, err := File(p, Options{}, false)
			if err != nil {
				outs[i] = "error: " + err.Error()
				continue
			}
			var buf bytes.Buffer
			if _, err := res.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			res.Close()
			outs[i] = buf.String()
		}
		if outs[0] != outs[1] {
			t.Errorf("%d levels: through the sink %.80q, without it %.80q", levels, outs[0], outs[1])
		}
		if refused := strings.HasPrefix(outs[0], "error: "); refused != (levels > MaxDepth) {
			t.Errorf("%d levels: %.80q", levels, outs[0])
		}
	}
}
