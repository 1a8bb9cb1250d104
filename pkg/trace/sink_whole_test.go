package trace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestWholeSinkCorpus: with every stream compacted early and often, the
// whole tree written through the whole tree's sink (text, in two styles,
// and JSON; whole and to --depth 2) is what the tree of the whole store
// writes, for every file under testdata/, or the sink gives up having
// written nothing; and it folds rows in many of them.
func TestWholeSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	rows := make(map[string]bool) // (made here: the corpus has no table of rows that are no scalars)
	for _, wrap := range []bool{false, true} {
		p := filepath.Join(t.TempDir(), "objects.pkl")
		key := ""
		if wrap {
			key = "rows"
		}
		if err := os.WriteFile(p, objectRowsPickle(600, key), 0o644); err != nil {
			t.Fatal(err)
		}
		files, rows[p] = append(files, p), true
	}
	folded, gaveUp := 0, 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for i, p := range files {
			sty := Style{}
			if i%2 == 1 {
				sty = Style{ASCII: true, Bytes: true}
			}
			for _, asJSON := range []bool{false, true} {
				for k, opt := range wholeOpts {
					if testing.Short() && k >= 2 && (i+k)%3 != 0 {
						continue // (under -short, --all and --min-size on a third of the files)
					}
					what := fmt.Sprintf("%s (MinCompact %d, %+v, JSON %v)", p, min, opt, asJSON)
					ok, got, folds, err := wholeSinkOut(t, p, true, opt, sty, asJSON)
					if !ok {
						if rows[p] {
							t.Errorf("%s: the sink gave up", what)
						}
						if got != "" {
							t.Errorf("%s: the sink gave up after writing", what)
						}
						gaveUp++
						continue
					}
					_, want, _, werr := wholeSinkOut(t, p, false, opt, sty, asJSON)
					switch {
					case (err == nil) != (werr == nil):
						t.Errorf("%s: sink %v, whole store %v", what, err, werr)
					case got != want:
						t.Errorf("%s: the trees differ\n%s", what, firstDiff(got, want))
					}
					if folds > 0 {
						folded++
					} else if rows[p] {
						t.Errorf("%s: no row folded", what)
					}
				}
			}
		}
	}
	t.Logf("%d files, twice, %d views, text and JSON: %d written with rows folded, %d not taken", len(files), len(wholeOpts), folded, gaveUp)
}

// wholeOpts are the views of the whole tree its sink is checked with: the
// whole tree, to a depth, --all, --min-size (one that elides most rows
// whole, one that elides the items inside them), and both.
var wholeOpts = []Options{{Depth: -1}, {Depth: 2}, {Depth: -1, All: true}, {Depth: -1, MinSize: 200}, {Depth: -1, MinSize: 9},
	{Depth: -1, All: true, MinSize: 30}}

// wholeSinkOut writes the whole tree of the file at p (to depth, <0: all; as
// text in sty, or JSON) through the whole tree's sink (sink) or from the
// store of the whole file, and the rows the sink folded; ok false when
// the sink gave up.
func wholeSinkOut(t *testing.T, p string, sink bool, opt Options, sty Style, asJSON bool) (ok bool, out string, folds int, err error) {
	t.Helper()
	var b bytes.Buffer
	if !sink {
		tr, err := slowTree(p)
		if err != nil {
			return true, "", 0, err
		}
		if asJSON {
			err = tr.WriteJSON(&b, tr.Root(), opt)
		} else {
			WriteHeader(&b, sty)
			err = tr.WriteText(&b, tr.Root(), opt, sty)
		}
		return true, b.String(), 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := newWholeSink(fi.Size(), opt, sty, asJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.close()
	ok, err = ws.run(p, &b, nil)
	return ok, b.String(), len(ws.mark), err
}

// objectRowsPickle is a pickle of a list of n objects made by NEWOBJ and
// BUILD, as pickle writes instances of a class (protocol 2), each with a
// list in its state, memoised; with a key, the list is the value of that
// key of a dict (its rows' lines then draw a branch of the dict's), whose
// second is a list of 200 dicts. Some rows do
// not fold: every 7th refers to a dict of the first row (a reference to
// anything but a global), every 50th holds lists 70 deep (past
// maxIndent).
func objectRowsPickle(n int, key string) []byte {
	wrap := key != ""
	b := []byte{0x80, 2}
	memo := uint32(0)
	put := func() uint32 {
		b = append(b, 'r', byte(memo), byte(memo>>8), byte(memo>>16), byte(memo>>24))
		memo++
		return memo - 1
	}
	get := func(i uint32) { b = append(b, 'j', byte(i), byte(i>>8), byte(i>>16), byte(i>>24)) }
	str := func(s string) {
		b = append(append(b, 'X', byte(len(s)), byte(len(s)>>8), byte(len(s)>>16), byte(len(s)>>24)), s...)
	}
	if wrap {
		b = append(b, '}')
		put()
		b = append(b, '(')
		str(key)
	}
	b = append(b, ']')
	put()
	var cls, shared uint32
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			b = append(b, '(')
		}
		if i == 0 {
			b = append(b, "cpktables\nRow\n"...)
			cls = put()
		} else {
			get(cls)
		}
		b = append(b, ')', 0x81)
		put()
		b = append(b, '}')
		put()
		b = append(b, '(')
		str("a")
		b = append(b, 'J', byte(i), byte(i>>8), 0, 0)
		str("tags")
		b = append(b, ']')
		put()
		b = append(b, '(', 'K', 1, 'K', 2, 'e')
		switch {
		case i == 0:
			str("shared")
			b = append(b, '}')
			shared = put()
			str("k")
			b = append(b, 'K', 3, 's')
		case i%7 == 3:
			str("shared")
			get(shared)
		case i%50 == 5:
			str("deep")
			for range 70 {
				b = append(b, ']')
			}
			for range 69 {
				b = append(b, 'a')
			}
		}
		b = append(b, 'u', 'b')
		if i%100 == 99 || i == n-1 {
			b = append(b, 'e')
		}
	}
	if wrap {
		// then a list of dicts, during which the last rows above fold
		str("z")
		b = append(b, ']', '(')
		for i := 0; i < 200; i++ {
			b = append(b, '}')
			str("a")
			b = append(b, 'K', byte(i), 's')
		}
		b = append(b, 'e', 'u')
	}
	return append(b, '.')
}

// TestWholeSinkJSONPaths: JSON through the whole tree's sink of rows whose
// list's path needs escaping and is long enough that the paths of the
// first hundred rows are written and those of the others, and of all
// that is below a row, are left out (MaxJSONPath) is what the whole store
// writes.
func TestWholeSinkJSONPaths(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 64
	// root['"é\t…']: the list's path is MaxJSONPath-4 bytes long, so
	// that root[…][99] is MaxJSONPath long and root[…][100] one more
	key := "\"é\t"
	head := len(`root['"é\t']`) // (as pkg/path spells it)
	key += strings.Repeat("k", MaxJSONPath-4-head)
	p := filepath.Join(t.TempDir(), "rows.pkl")
	if err := os.WriteFile(p, objectRowsPickle(300, key), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, got, folds, err := wholeSinkOut(t, p, true, Options{Depth: -1}, Style{}, true)
	if !ok || err != nil || folds == 0 {
		t.Fatalf("the sink: taken %v, %d rows folded, %v", ok, folds, err)
	}
	_, want, _, err := wholeSinkOut(t, p, false, Options{Depth: -1}, Style{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("JSON differs\n%s", firstDiff(got, want))
	}
	for _, s := range []string{`"role":"[99]","path":`, `"role":"[100]","size":`} {
		if !strings.Contains(got, s) {
			t.Errorf("no record with %s", s)
		}
	}
}
