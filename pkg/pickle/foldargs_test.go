package pickle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFoldArgsPlan: a tuple folded at its REDUCE (Keep.FoldArgs) keeps the
// memoised nodes it owned that a GET after the REDUCE reads, whole and
// found at their memo indices, and cuts those nothing reads again when
// pass 1's plan says so (without a plan every memoised node stays). A GET
// the plan did not foresee is Error.Released, never a wrong node.
func TestFoldArgsPlan(t *testing.T) {
	// m.f(0, 0, 'kept' (memo 1), 'cut' (memo 2), ('x',) (memo 3), 0, 0),
	// then (call, memo 1, memo 3)
	head := "\x80\x04\x8c\x01m\x8c\x01f\x93(K\x00K\x00\x8c\x04keptq\x01\x8c\x03cutq\x02\x8c\x01x\x85q\x03K\x00K\x00tR"
	tail := "h\x01h\x03\x87."
	strs := func(s *Store) map[string]int {
		n := map[string]int{}
		for id := ID(0); int(id) < s.Len(); id++ {
			if s.Kind(id) == KindStr {
				n[s.Str(id)]++
			}
		}
		return n
	}
	for _, c := range []struct {
		name, in, replay string // (the input as pass 1 reads it)
		plan             bool
		err              bool
	}{
		{"plan", head + tail, head + tail, true, false},
		{"no plan", head + tail, head, false, false}, // (pass 1 fails: no STOP)
		{"plan wrong", head + "h\x02\x86" + tail, head + "K\x00\x86" + tail, true, true},
	} {
		folds, released := 0, 0
		keep := countingKeep(&folds, &released)
		opt := Options{NoGraph: true, Keep: keep, Replay: strings.NewReader(c.replay)}
		f, err := Parse(strings.NewReader(c.in), int64(len(c.in)), "t", opt)
		if c.err {
			var pe *Error
			if !errors.As(err, &pe) || !pe.Released {
				t.Errorf("%s: %v; want the plan's error (Released)", c.name, err)
			}
			continue
		}
		if err != nil || folds != 1 {
			t.Fatalf("%s: %v, %d folds", c.name, err, folds)
		}
		s := f.Streams[0].Store()
		root := s.Items(s.Root)
		if len(root) != 3 || s.Kind(root[0]) != KindCall || s.Kind(s.Args(root[0])) != KindFolded {
			t.Fatalf("%s: root %v", c.name, root)
		}
		if s.Kind(root[1]) != KindStr || s.Str(root[1]) != "kept" || s.Kind(root[2]) != KindTuple ||
			len(s.Items(root[2])) != 1 || s.Str(s.Items(root[2])[0]) != "x" {
			t.Fatalf("%s: what the GETs read after the REDUCE is not what was memoised", c.name)
		}
		n := strs(s)
		if n["kept"] != 1 || n["x"] != 1 || n["cut"] != map[bool]int{true: 0, false: 1}[c.plan] {
			t.Errorf("%s: strs in the store %v", c.name, n)
		}
		// cut: the tuple, its four ints, and 'cut' when the plan says so
		if want := 5 + map[bool]int{true: 1, false: 0}[c.plan]; released != want {
			t.Errorf("%s: %d nodes released, want %d", c.name, released, want)
		}
	}
}

// TestFoldArgsCallableOwner: in a store that keeps owners (not lean), the
// callable of a call whose argument tuple is folded is owned by the call
// at its new ID, not by the ID the call had before the cut (a later node
// takes it: pk trace sized the callable of a code object in whatever came
// next).
func TestFoldArgsCallableOwner(t *testing.T) {
	// (m.f(0, 0, 0, 0), 'next'): the call's ID drops by five at the fold
	in := "\x80\x04\x8c\x01m\x8c\x01f\x93(K\x00K\x00K\x00K\x00tR\x8c\x04next\x86."
	keep := &Keep{
		FoldCall:    func(*Store, ID) bool { return true },
		FoldArgsMin: 4,
		FoldArgs:    func(s *Store, c, lo ID) Folded { return Folded{OK: true} },
	}
	opt := Options{NoGraph: true, Keep: keep, Replay: strings.NewReader(in)}
	f, err := Parse(strings.NewReader(in), int64(len(in)), "t", opt)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Streams[0].Store()
	if s.Lean() {
		t.Fatal("a lean store")
	}
	items := s.Items(s.Root)
	if len(items) != 2 || s.Kind(items[0]) != KindCall || s.Kind(s.Args(items[0])) != KindFolded {
		t.Fatalf("root's items %v", items)
	}
	c := items[0]
	fn := s.Func(c)
	if fn < 0 || s.Owner(fn) != c {
		t.Errorf("the callable %d is owned by %d, want the call %d (the next node is %d)", fn, s.Owner(fn), c, items[1])
	}
}

// TestPlanAhead: the first stream of a file of planAheadAt bytes or more
// read for a consumer that folds argument tuples has its pass 1 begun
// beside the machine at the stream's first byte (planAhead); the store is
// the one the plan made where it is first asked for gives (the same input
// read without a file to replay: TestFoldArgsPlan's "plan" case). A
// smaller file, a second stream or an input that is not a file make it
// there, as before.
func TestPlanAhead(t *testing.T) {
	head := "\x80\x04\x8c\x01m\x8c\x01f\x93(K\x00K\x00\x8c\x04keptq\x01\x8c\x03cutq\x02\x8c\x01x\x85q\x03K\x00K\x00tR"
	tail := "h\x01h\x03\x87."
	pad := strings.Repeat("\x8c\x06paddin0", int(planAheadAt+8)/8) // (pushed and popped)
	starts := 0
	planAheadHook = func() { starts++ }
	defer func() { planAheadHook = nil }()
	path := filepath.Join(t.TempDir(), "in.pkl")
	// what a read gives: the strs in each stream's store, the nodes
	// released, the folds
	read := func(in string, file bool) string {
		folds, released := 0, 0
		keep := countingKeep(&folds, &released)
		opt := Options{NoGraph: true, Keep: keep, Replay: strings.NewReader(in)}
		if file {
			if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
				t.Fatal(err)
			}
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			opt.Replay = fh
		}
		f, err := Parse(strings.NewReader(in), int64(len(in)), "t", opt)
		if err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprintf("%d folds, %d released;", folds, released)
		for _, st := range f.Streams {
			s := st.Store()
			root := s.Items(s.Root)
			if len(root) != 3 || s.Kind(s.Args(root[0])) != KindFolded || s.Str(root[1]) != "kept" {
				t.Fatalf("root %v", root)
			}
			for id := ID(0); int(id) < s.Len(); id++ {
				if s.Kind(id) == KindStr && s.Str(id) != "paddin" {
					out += " " + s.Str(id)
				}
			}
			out += ";"
		}
		return out
	}
	for _, c := range []struct {
		name   string
		in     string
		starts int
	}{
		{"big", head + pad + tail, 1},
		{"big, two streams", head + pad + tail + head + pad + tail, 1},
		{"small", head + tail, 0},
	} {
		want := read(c.in, false)
		if starts != 0 {
			t.Errorf("%s: pass 1 begun beside the machine without a file", c.name)
		}
		got := read(c.in, true)
		if starts != c.starts {
			t.Errorf("%s: pass 1 begun beside the machine %d times, want %d", c.name, starts, c.starts)
		}
		if got != want {
			t.Errorf("%s: %s; from a file to replay %s", c.name, want, got)
		}
		if strings.Contains(got, "cut") {
			t.Errorf("%s: the plan did not cut what nothing reads again: %s", c.name, got)
		}
		starts = 0
	}
}

// FuzzPlanAhead: pass 1 begun beside the machine (planAhead, here for
// every input, read from a file) gives what pass 1 made where the plan is
// first asked for gives: the same error, the same stores (every node's
// kind and offset, the call log), the same folds.
func FuzzPlanAhead(f *testing.F) {
	fuzzSeeds(f)
	defer func(v int, at int64) { MinCompact, planAheadAt = v, at }(MinCompact, planAheadAt)
	MinCompact, planAheadAt = 4, 0
	path := filepath.Join(f.TempDir(), "in.pkl")
	read := func(b []byte, file bool) (string, error) {
		var out strings.Builder
		keep := &Keep{
			FoldCall:    func(*Store, ID) bool { return true },
			FoldArgsMin: 1,
			FoldArgs: func(s *Store, c, lo ID) Folded {
				fmt.Fprintf(&out, "fold %d %d;", c, lo)
				return Folded{OK: true}
			},
			Released: func(s *Store, id ID) { fmt.Fprintf(&out, "r%d;", id) },
		}
		opt := Options{NoGraph: true, Keep: keep, Replay: bytes.NewReader(b)}
		if file {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return "", err
			}
			fh, err := os.Open(path)
			if err != nil {
				return "", err
			}
			defer fh.Close()
			opt.Replay = fh
		}
		fl, err := Parse(bytes.NewReader(b), int64(len(b)), "k", opt)
		if err != nil {
			return "", err
		}
		for _, st := range fl.Streams {
			s := st.Store()
			fmt.Fprintf(&out, "\nstream %d root %d:", st.Index, s.Root)
			for id := ID(0); int(id) < s.Len(); id++ {
				fmt.Fprintf(&out, " %s@%d", s.Kind(id), s.Offset(id))
			}
			for _, ev := range s.Events() {
				fmt.Fprintf(&out, " %s/%s@%d", ev.Kind, ev.Op, ev.Offset)
			}
		}
		return out.String(), nil
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err1 := read(b, false)
		got, err2 := read(b, true)
		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("errors differ: %v / pass 1 beside: %v", err1, err2)
		}
		if want != got {
			t.Fatalf("pass 1 beside:\n%s\nwhere asked for:\n%s", got, want)
		}
	})
}

// countingKeep folds every call's arguments of 4 or more (a fold that
// only counts) and counts the folds and the nodes released.
func countingKeep(folds, released *int) *Keep {
	return &Keep{
		FoldCall:    func(*Store, ID) bool { return true },
		FoldArgsMin: 4,
		FoldArgs: func(s *Store, c, lo ID) Folded {
			*folds++
			return Folded{OK: true}
		},
		Released: func(*Store, ID) { *released++ },
	}
}
