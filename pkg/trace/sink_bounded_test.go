package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// boundedLines are the budgets the default view's sink is checked with:
// the default, a few lines (rows cut short by the budget), and the least.
var boundedLines = []int{DefaultLines, 7, 2}

// boundedSunk prints the default view of p for each of boundedLines
// through the default view's sink (ok false: it gave up, or did not
// apply), with the number of roots it folded.
func boundedSunk(t *testing.T, p string) (out []byte, ok bool, folds int) {
	t.Helper()
	var b bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	for _, lines := range boundedLines {
		sk := &topSink{n: lines, bview: true}
		ok, err := eachTree(p, &boundedKeep{lines: lines}, sk, func(tr *Tree) error {
			return tr.WriteBounded(&b, tr.Root(), lines, sty)
		})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !ok {
			return nil, false, 0
		}
		folds += sk.folds
		if sk.args != nil {
			folds += int(sk.args.folds.n)
		}
	}
	return b.Bytes(), true, folds
}

// boundedWhole is boundedSunk from the tree of the whole store.
func boundedWhole(p string) []byte {
	tr, err := slowTree(p)
	if err != nil {
		return nil
	}
	var b bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	for _, lines := range boundedLines {
		tr.WriteBounded(&b, tr.Root(), lines, sty)
	}
	return b.Bytes()
}

// TestBoundedSinkCorpus: with every stream compacted early and often (a
// tiny MinCompact), the default view through its sink prints what the
// tree of the whole store prints, for every file under testdata/, or
// gives up; and it folds in many of them.
func TestBoundedSinkCorpus(t *testing.T) {
	sinkCorpus(t, func(_ int, p string) ([]byte, bool, bool) {
		got, ok, folds := boundedSunk(t, p)
		return got, ok, folds > 0
	}, func(_ int, p string) []byte { return boundedWhole(p) })
}

// sinkCorpus checks a view through a sink over every fourth file under
// testdata/ (every sixteenth under -short), with every stream compacted
// at 4 records, then at 64: sunk(i, p) prints file i, p, through the sink
// (ok false: it gave up, or did not apply) and says whether it folded;
// whole(i, p) prints it from the whole store (nil: it fails). Where the
// sink answered, the two must be the same, and at least 40 runs (10 under
// -short) must have folded.
func sinkCorpus(t *testing.T, sunk func(i int, p string) (out []byte, ok, folded bool), whole func(i int, p string) []byte) {
	t.Helper()
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 4)
	folded := 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for i, p := range files {
			got, ok, f := sunk(i, p)
			if !ok {
				continue
			}
			if f {
				folded++
			}
			if want := whole(i, p); want == nil {
				t.Errorf("%s (MinCompact %d): the sink answered, the whole store did not", p, min)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s (MinCompact %d): sink\n%s\nwhole store\n%s", p, min, got, want)
			}
		}
	}
	t.Logf("%d files, twice: %d runs folded and answered", len(files), folded)
	if folded < testfile.ShortDiv(40, 4) {
		t.Errorf("only %d runs folded anything", folded)
	}
}

// TestBoundedSinkTables: tables the sink folds at its own threshold, whose
// lines are rows (ties among them in creation order), objects and strings
// of 1 KiB or more inside rows, and rows that share memoised strings: the
// sink prints what the whole store prints, having folded rows.
func TestBoundedSinkTables(t *testing.T) {
	dir := t.TempDir()
	for name, data := range sinkTables() {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok, folds := boundedSunk(t, p)
		if !ok || folds == 0 {
			t.Fatalf("%s: the sink did not answer (%v) or folded nothing (%d)", name, ok, folds)
		}
		if want := boundedWhole(p); !bytes.Equal(got, want) {
			t.Errorf("%s: sink\n%s\nwhole store\n%s", name, got, want)
		}
	}
}

// sinkTables are the tables the sinks' tests fold at the sink's own
// threshold, by file name: rows of memo-shared strings, of namespaces
// (with 1.5 KiB strings inside some), of objects (some rows that do not
// fold), and the objects under a dict key.
func sinkTables() map[string][]byte {
	return map[string][]byte{
		"strings.pkl": stringRowsPickle(40000, 600),
		"ns.pkl":      nsRowsPickle(30000),
		"objects.pkl": objectRowsPickle(20000, ""),
		"keyed.pkl":   objectRowsPickle(20000, "rows"),
	}
}

// nsRowsPickle is a list of n rows, each types.SimpleNamespace(**d)
// by NEWOBJ and BUILD, d holding an int, a short str, a nested list, and in
// every 997th row a str of 1.5 KiB (a line of its own) and in every 1,009th
// a larger nested list: rows of several sizes, many tied.
func nsRowsPickle(n int) []byte {
	b := []byte{0x80, 4, 0x8c, 5}
	b = append(b, "types"...)
	b = append(b, 0x8c, 15)
	b = append(b, "SimpleNamespace"...)
	b = append(b, 0x93, 0x94, ']', 0x94, '(') // STACK_GLOBAL, MEMOIZE (0); EMPTY_LIST, MEMOIZE (1); MARK
	str := func(s string) {
		if len(s) < 256 {
			b = append(b, 0x8c, byte(len(s)))
		} else {
			b = append(b, 'X', byte(len(s)), byte(len(s)>>8), 0, 0)
		}
		b = append(b, s...)
	}
	for i := 0; i < n; i++ {
		if i > 0 && i%500 == 0 {
			b = append(b, 'e', '(') // APPENDS, MARK
		}
		b = append(b, 'h', 0, ')', 0x81, '}', '(') // BINGET 0, EMPTY_TUPLE, NEWOBJ, EMPTY_DICT, MARK
		str("id")
		b = append(b, 'J', byte(i), byte(i>>8), byte(i>>16), 0)
		str("name")
		str("row" + string(rune('a'+i%26)))
		str("pair")
		b = append(b, ']', '(', 'K', byte(i%7), 'K', byte(i%5))
		if i%1009 == 0 {
			for j := 0; j < 20; j++ {
				b = append(b, 'K', byte(j))
			}
		}
		b = append(b, 'e')
		if i%997 == 0 {
			str("note")
			big := make([]byte, 1536)
			for j := range big {
				big[j] = 'a' + byte((i+j)%26)
			}
			str(string(big))
		}
		b = append(b, 'u', 'b') // SETITEMS, BUILD
	}
	return append(b, 'e', '.')
}

// TestBoundedArgsSink: the default view of every cloudpickle and dill
// fixture through the sink's fold of code objects' arguments
// (sink_args.go, argsBounded) prints what the whole store prints, with
// budgets that show cut nodes (a code object's bytecode and constants) and
// that do not; and the fold answers for most of them.
func TestBoundedArgsSink(t *testing.T) {
	files := codeFixtures(t)
	answered, runs := 0, 0
	for _, p := range files {
		want := boundedWhole(p)
		if want == nil {
			t.Fatalf("%s: no tree", p)
		}
		for _, shares := range []bool{true, false} {
			func() {
				defer func(v bool) { noShareNones = v }(noShareNones)
				noShareNones = !shares
				runs++
				got, ok, _ := boundedSunk(t, p)
				if !ok {
					return
				}
				answered++
				if !bytes.Equal(got, want) {
					t.Errorf("%s (Nones shared %v): sink\n%s\nwhole store\n%s", p, shares, got, want)
				}
			}()
		}
	}
	t.Logf("the fold answered %d of %d runs", answered, runs)
	if answered < runs/2 {
		t.Errorf("the fold answered %d of %d runs", answered, runs)
	}
}

// TestBoundedArgsKeptBelow: a code object's argument tuple holds a bytes
// of 2 KiB that the memo reads again, so it is kept below the cut tuple,
// where its role is gone; it is among the lines the default view shows, so
// the sink gives up, and EachBounded's second read prints what the whole
// store prints.
func TestBoundedArgsKeptBelow(t *testing.T) {
	b := []byte{0x80, 4, '('}
	b = append(b, "ctypes\nCodeType\n("...)
	for i := 0; i < 14; i++ {
		b = append(b, 'K', byte(i))
	}
	big := bytes.Repeat([]byte{'x'}, 2048)
	b = append(b, 'B', 0, 8, 0, 0)
	b = append(append(b, big...), 0x94, 't', 'R', 'h', 0, 'l', '.')
	p := filepath.Join(t.TempDir(), "kept.pkl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sk := &topSink{n: DefaultLines, bview: true}
	ok, err := eachTree(p, &boundedKeep{lines: DefaultLines}, sk, func(*Tree) error { return nil })
	if err != nil || ok || sk.args == nil {
		t.Fatalf("the sink folded %v and answered %v (%v): want a fold, then no answer", sk.args != nil, ok, err)
	}
	var got bytes.Buffer
	sty := Style{ASCII: true, Bytes: true}
	if ok, err := EachBounded(p, DefaultLines, func(tr *Tree) error { return tr.WriteBounded(&got, tr.Root(), DefaultLines, sty) }); !ok || err != nil {
		t.Fatalf("EachBounded: %v %v", ok, err)
	}
	tr, err := slowTree(p)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	tr.WriteBounded(&want, tr.Root(), DefaultLines, sty)
	if got.String() != want.String() || !strings.Contains(want.String(), "bytes[2048]") {
		t.Errorf("got\n%s\nwant (with the bytes' line)\n%s", got.String(), want.String())
	}
}
