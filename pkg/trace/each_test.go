package trace

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// eachOut is what the stream-by-stream path prints for the default view
// of lines lines and for --top n (text and JSON); ok false: it did not
// apply.
func eachOut(t *testing.T, path string, lines, n int) (string, bool) {
	t.Helper()
	var b bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	ok, err := EachBounded(path, lines, func(tr *Tree) error {
		return tr.WriteBounded(&b, tr.Root(), lines, sty)
	})
	// (cmd's traceOne starts from Root() whatever it prints)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !ok {
		return "", false
	}
	for _, leaves := range []bool{false, true} {
		b.WriteString("--\n")
		ok, err = EachTop(path, n, leaves, func(tr *Tree) error {
			tr.Leaves = leaves
			root := tr.Root()
			b.WriteString(root.Role + " " + itoa(root.Size) + " " + itoa(root.Self) + "\n")
			if err := tr.WriteTop(&b, n, sty); err != nil {
				return err
			}
			b.WriteString("--\n")
			return tr.WriteTopJSON(&b, n)
		})
		if err != nil || !ok {
			t.Fatalf("%s: --top %d: %v %v", path, n, ok, err)
		}
	}
	return b.String(), true
}

// wholeOut is the same from the tree of the whole input.
func wholeOut(t *testing.T, path string, lines, n int) (string, bool) {
	t.Helper()
	tr, err := slowTree(path)
	if err != nil {
		return "", false
	}
	var b bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	tr.WriteBounded(&b, tr.Root(), lines, sty)
	for _, leaves := range []bool{false, true} {
		tr.Leaves = leaves
		b.WriteString("--\n")
		root := tr.Root()
		b.WriteString(root.Role + " " + itoa(root.Size) + " " + itoa(root.Self) + "\n")
		tr.WriteTop(&b, n, sty)
		b.WriteString("--\n")
		tr.WriteTopJSON(&b, n)
	}
	return b.String(), true
}

func agreeEach(t *testing.T, path string, lines, n int) bool {
	t.Helper()
	got, ok := eachOut(t, path, lines, n)
	if !ok {
		return false
	}
	want, wok := wholeOut(t, path, lines, n)
	if !wok {
		t.Errorf("%s: the stream-by-stream path took an input the whole tree refuses", path)
		return true
	}
	if got != want {
		t.Errorf("%s --lines %d / --top %d: stream by stream differs\n--- each\n%s--- whole\n%s", path, lines, n, got, want)
	}
	return true
}

// TestEachSame: on every file of the corpus, the stream-by-stream path
// prints what the tree of the whole input prints, or does not apply.
func TestEachSame(t *testing.T) {
	took := 0
	for _, p := range testfile.Sample(corpusFiles(2<<20), 2) {
		for _, c := range [][2]int{{40, 20}, {3, 1}} {
			if agreeEach(t, p, c[0], c[1]) && c[0] == 40 {
				took++
			}
		}
	}
	if took < testfile.ShortDiv(100, 2) {
		t.Errorf("the stream-by-stream path applied to only %d files", took)
	}
}

// TestEachStreams: files of many pickles of different sizes (ties, a
// largest stream first, last or in the middle, trailing bytes, one
// stream): the streams kept give the whole tree's lines.
func TestEachStreams(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 40; i++ {
		var b []byte
		ns := 1 + r.Intn(60)
		if i%10 == 0 {
			ns = 1
		}
		for j := 0; j < ns; j++ {
			b = append(b, genPickle(int64(i*100+j), r.Intn(6))...)
			if r.Intn(4) == 0 {
				b = append(b, 'N', '.')
			}
		}
		if i%3 == 1 {
			b = append(b, "trailing garbage"...)
		}
		p := writeTemp(t, dir, fmt.Sprintf("s%d.pkl", i), b)
		for _, c := range [][2]int{{40, 20}, {2, 1}, {5, 3}, {1000, 1000}} {
			if !agreeEach(t, p, c[0], c[1]) {
				t.Errorf("%s: the stream-by-stream path did not apply", p)
			}
		}
	}
}

// TestEachStreamsBounded: a file of many pickles holds a few streams,
// not one each.
func TestEachStreamsBounded(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 20000; i++ {
		b.WriteString("N.")
	}
	p := writeTemp(t, t.TempDir(), "nones.pkl", b.Bytes())
	var held int
	ok, err := EachBounded(p, 40, func(tr *Tree) error { held = len(tr.Streams); return nil })
	if !ok || err != nil || held > 40 {
		t.Fatalf("ok %v, err %v, %d streams held", ok, err, held)
	}
	ok, err = EachTop(p, 20, false, func(tr *Tree) error { held = len(tr.Streams); return nil })
	if !ok || err != nil || held > 20 {
		t.Fatalf("--top: ok %v, err %v, %d streams held", ok, err, held)
	}
	agreeEach(t, p, 40, 20)
}

// TestEachFallsBack: stdin, a missing file and bad input are left to the
// caller (which opens the input and reports what is wrong).
func TestEachFallsBack(t *testing.T) {
	dir := t.TempDir()
	bad := writeTemp(t, dir, "bad.pkl", []byte("\x80\x04N"))
	for _, p := range []string{"-", dir + "/missing.pkl", bad, dir} {
		ok, err := EachBounded(p, 40, func(*Tree) error { t.Errorf("%s: out called", p); return nil })
		if ok || err != nil {
			t.Errorf("%s: ok %v, err %v", p, ok, err)
		}
	}
	_ = os.Remove(bad)
}

// TestSizeForest: on every stream of the corpus, the sizes summed leaves
// first (sizeForest) are the post-order's (sizeDFS), and the forest path
// applies to nearly all.
func TestSizeForest(t *testing.T) {
	forest, all := 0, 0
	for _, p := range corpusFiles(2 << 20) {
		d, err := input.OpenWith(p, pickle.Options{}, input.Options{})
		if err != nil {
			continue
		}
		for _, part := range d.Parts {
			if part.Pickle == nil {
				continue
			}
			for _, ps := range part.Pickle.Streams {
				s := ps.Store()
				st := sizeStream(s, nil, nil, nil)
				// the reference keeps 8 bytes a size, the tree 4 (sizes.go)
				ref := &StreamTree{Store: s, incl: sizesOf(make([]int64, s.Len()))}
				ref.sizeDFS(nil)
				all++
				if st.ownStart == nil {
					forest++
				}
				if st.incl.large != nil || !sameSizes(&st.incl, &ref.incl) || !slices.Equal(st.Orphans, ref.Orphans) {
					t.Fatalf("%s stream %d: sizes differ from the post-order's", p, s.Index)
				}
				for id := range pickle.ID(s.Len()) {
					if st.ownsAny(id) != ref.ownsAny(id) {
						t.Fatalf("%s stream %d: node %d owns differently", p, s.Index, id)
					}
				}
			}
		}
	}
	t.Logf("%d streams, %d summed leaves first", all, forest)
	if forest < all*9/10 {
		t.Errorf("only %d of %d streams summed leaves first", forest, all)
	}
}

func sameSizes(a, b *sizes) bool {
	if a.len() != b.len() {
		return false
	}
	for id := range pickle.ID(a.len()) {
		if a.at(id) != b.at(id) {
			return false
		}
	}
	return true
}
