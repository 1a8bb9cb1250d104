package trace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// agreeEachWhole checks that EachWhole declines the file or prints what
// the graph path prints, for every depth, style and JSON; it reports
// whether it took the file.
func agreeEachWhole(t *testing.T, path string) bool {
	t.Helper()
	var slow *Tree
	for _, depth := range wholeDepths {
		for si, sty := range append(wholeStyles, Style{}) {
			asJSON := si == len(wholeStyles) // (the last: JSON)
			var out bytes.Buffer
			began := false
			ok, err := EachWhole(path, &out, Options{Depth: depth}, asJSON, sty, func() { began = true })
			if !ok {
				if out.Len() > 0 || began || err != nil {
					t.Fatalf("%s: EachWhole declined after writing (%v)", path, err)
				}
				return false
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if slow == nil {
				if slow, err = slowTree(path); err != nil {
					t.Fatalf("%s: EachWhole answered but the graph path fails: %v", path, err)
				}
			}
			if want := wholeGraph(t, slow, depth, sty, asJSON); out.String() != want {
				t.Fatalf("%s depth %d %+v json %v: EachWhole differs\n%s", path, depth, sty, asJSON, firstDiff(out.String(), want))
			}
		}
	}
	return true
}

// TestEachWholeCorpus: the files of several streams under testdata/ (four
// of them; every fourth file under -short).
func TestEachWholeCorpus(t *testing.T) {
	took := 0
	for _, p := range testfile.Sample(corpusFiles(8<<20), 4) {
		if agreeEachWhole(t, p) {
			took++
		}
	}
	t.Logf("EachWhole took %d files", took)
	if took < testfile.ShortDiv(4, 4) {
		t.Errorf("EachWhole took only %d files of the corpus", took)
	}
}

// TestEachWholeGenerated: streams of random plain data of every protocol
// back to back, with and without bytes after them; shared and cyclic
// objects and calls (what the fast whole view leaves to the graph path);
// one stream (through the whole tree's sink, text and JSON); one stream
// cut short (declined: the graph path reports the error).
func TestEachWholeGenerated(t *testing.T) {
	dir := t.TempDir()
	var all []byte
	for proto := 0; proto <= 5; proto++ {
		all = append(all, genPickle(int64(proto)*7+1, proto)...)
	}
	shared := "\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94h\x01h\x01e."
	call := "\x80\x04\x8c\x08builtins\x8c\x04list\x93)R\x94K\x01a."
	cycle := "\x80\x04}\x94K\x00h\x00s."
	for i, c := range []struct {
		data     []byte
		declined bool
	}{
		{all, false},
		{append(append([]byte{}, all...), "junk after"...), false},
		{[]byte(shared + call + cycle + shared), false},
		{[]byte(cycle + "N."), false},
		{genPickle(3, 4), false},
		{[]byte(shared[:len(shared)-1]), true},
	} {
		p := writeTemp(t, dir, fmt.Sprintf("each%d.pkl", i), c.data)
		if took := agreeEachWhole(t, p); took == c.declined {
			t.Errorf("case %d: took %v", i, took)
		}
	}
}

// TestEachWholeMissing: what is no file is declined.
func TestEachWholeMissing(t *testing.T) {
	if ok, err := EachWhole(t.TempDir()+"/none.pkl", &bytes.Buffer{}, Options{Depth: -1}, false, Style{}, nil); ok || err != nil {
		t.Errorf("a missing file: %v %v", ok, err)
	}
	if ok, _ := EachWhole("-", &bytes.Buffer{}, Options{Depth: -1}, false, Style{}, nil); ok {
		t.Error("stdin taken")
	}
}

// agreeEachPicture checks that EachPicture declines the file or draws the
// SVG and the page the graph path draws; it reports whether it took it.
func agreeEachPicture(t *testing.T, path string) bool {
	t.Helper()
	var slow *Tree
	took := false
	for _, svg := range []bool{true, false} {
		draw := func(tr *Tree, b *bytes.Buffer) error {
			if svg {
				return tr.WriteSVG(b, tr.Root(), SVGOptions{})
			}
			return tr.WriteHTML(b, tr.Root(), HTMLOptions{})
		}
		so, ho := &SVGOptions{}, (*HTMLOptions)(nil)
		if !svg {
			so, ho = nil, &HTMLOptions{}
		}
		var got bytes.Buffer
		ok, err := EachPicture(path, so, ho, func(tr *Tree) error { return draw(tr, &got) })
		if !ok {
			return took
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		took = true
		if slow == nil {
			if slow, err = slowTree(path); err != nil {
				t.Fatalf("%s: EachPicture answered but the graph path fails: %v", path, err)
			}
		}
		var want bytes.Buffer
		if err := draw(slow, &want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%s svg %v: EachPicture draws otherwise\n%s", path, svg, firstDiff(got.String(), want.String()))
		}
	}
	return took
}

// TestEachPictureCorpus: every bare pickle file under testdata/ (a sample
// under -short), one stream or several.
func TestEachPictureCorpus(t *testing.T) {
	corpusAgrees(t, "EachPicture", 8<<20, agreeEachPicture)
}

// TestEachPictureStreams: streams of many sizes back to back, some wider
// than the narrowest box and most not, so that a stream drawn is placed by
// the bytes of the streams not kept before it; with trailing bytes.
func TestEachPictureStreams(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for i := 0; i < 40; i++ {
		switch i % 4 {
		case 0:
			b = append(b, genPickle(int64(i), 4)...)
		case 1:
			b = append(b, bytes.Repeat([]byte("N."), 3+i)...)
		case 2:
			b = append(b, genPickle(int64(i), 2)...)
			b = append(b, "\x80\x04}\x94K\x00h\x00s."...) // a cycle
		default:
			b = append(b, genPickle(int64(i), 0)...)
		}
	}
	for i, data := range [][]byte{b, append(append([]byte{}, b...), "tail"...), append(bytes.Repeat([]byte("N."), 5000), genPickle(9, 5)...)} {
		p := writeTemp(t, dir, fmt.Sprintf("pic%d.pkl", i), data)
		if !agreeEachPicture(t, p) {
			t.Errorf("case %d: declined", i)
		}
	}
}
