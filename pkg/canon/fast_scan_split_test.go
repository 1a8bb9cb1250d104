package canon

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// scanBoth runs pass 1 of p split (every size) and not; at is where the
// second half began (0: none), joined whether the halves were joined.
func scanBoth(t *testing.T, p string) (split, one *fastScanResult, errSplit, errOne error, at int64, joined bool) {
	t.Helper()
	m, g := scanSplitMin, runtime.GOMAXPROCS(0)
	scanSplitMin, scanSplitWait = 0, true
	if g < 2 {
		runtime.GOMAXPROCS(2)
	}
	onScanSplit = func(a int64, j bool) { at, joined = a, j }
	defer func() { scanSplitMin, scanSplitWait, onScanSplit = m, false, nil; runtime.GOMAXPROCS(g) }()
	split, _, errSplit = fastScan(p)
	noScanSplit = true
	one, _, errOne = fastScan(p)
	noScanSplit = false
	return
}

// sameScan says whether two pass 1 results are the same but for their
// segment marks, which it checks against the rule (after an APPENDS to the
// list, segBytes apart but for the second half's first).
func sameScan(t *testing.T, name string, split, one *fastScanResult) {
	t.Helper()
	a, b := *split, *one
	a.segs, b.segs = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: split %+v\none pass %+v", name, a, b)
	}
	marks := map[int64]segMark{}
	for _, m := range one.segs {
		marks[m.off] = m
	}
	for i, m := range split.segs {
		if i > 0 && m.off <= split.segs[i-1].off {
			t.Fatalf("%s: segs out of order %+v", name, split.segs)
		}
		if o, ok := marks[m.off]; ok && o != m {
			t.Fatalf("%s: mark %+v, one pass %+v", name, m, o)
		}
	}
}

// TestScanSplit: pass 1 in two halves (fast_scan_split.go) gives the one
// pass's result on framed tables, joined where the guess holds; falls back
// to the one pass (same result, same refusal) where the first half's state
// is not the guess, where the second half reads its own memo entries and
// where it reads a mutable one of the first half; and pk hash's digest is
// the one pass's and the graph path's.
func TestScanSplit(t *testing.T) {
	dir := t.TempDir()
	_, at := splitRowsFwd(3000, 5, 3000, 13, 0, -1, 0)
	mutGet, _ := splitRowsFwd(3000, 5, 3000, 13, 0, 2800, at[10]) // (row 10's dict)
	mutOwn, _ := splitRowsFwd(3000, 5, 3000, 13, 0, 2800, at[2500])
	// a dict result whose one value is a long list of lists: its APPENDS
	// look like the list result's
	dl := (&pw{}).op(0x80, 4).op('}').memo().str("k").memo().op(']').memo().op('(')
	for i := 0; i < 3000; i++ {
		if i > 0 && i%7 == 0 {
			dl.op('e', '(')
		}
		dl.op(']').memo().op('(').int(i).str("x").op('e')
	}
	dl.op('e', 's', '.')
	cases := []struct {
		name    string
		data    []byte
		joined  bool
		refused bool
	}{
		{"rows", splitRows(3000, 7, 500, 13, 0), true, false},
		{"rows-far", splitRows(4000, 100, 97, 7, 40), true, false},
		{"rows-lazy", lazyRows(3000, true), true, false},
		{"own-memo", splitRows(3000, 5, 3000, 50, 1), false, false},
		{"mutable-get", mutGet, false, true},
		{"mutable-get-own", mutOwn, false, true},
		{"dict-result", dl.b, false, false},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".pkl")
		if err := os.WriteFile(p, framed(t, c.data, 256), 0o644); err != nil {
			t.Fatal(err)
		}
		split, one, errSplit, errOne, at, joined := scanBoth(t, p)
		if (errSplit != nil) != c.refused || (errOne != nil) != c.refused {
			t.Fatalf("%s: split %v, one pass %v", c.name, errSplit, errOne)
		}
		if at <= 0 || joined != c.joined {
			t.Fatalf("%s: second half at %d, joined %v", c.name, at, joined)
		}
		if !c.refused {
			sameScan(t, c.name, split, one)
		}
		if c.refused {
			continue
		}
		// pk hash: both passes split, as pk hash splits a table
		m, done := scanSplitMin, splitSmall(512, 300)
		scanSplitMin, scanSplitWait = 0, true
		var segs int
		onSplit = func(n int) { segs = n }
		fast, ok := fastHashFile(p, Options{})
		scanSplitMin, scanSplitWait, onSplit = m, false, nil
		done()
		if one.rootList >= 0 && segs < parMinSegs {
			t.Fatalf("%s: pass 2 in %d segments", c.name, segs)
		}
		if !ok {
			t.Fatalf("%s: the fast path gave up", c.name)
		}
		noScanSplit = true
		ref, ok := fastHashFile(p, Options{})
		noScanSplit = false
		if !ok || fast.Digest != ref.Digest {
			t.Fatalf("%s: split %s, one pass %s", c.name, fast.Digest, ref.Digest)
		}
		fastMatchesGraph(t, p, c.name)
	}
	// unframed (protocol 2, 3; a protocol 4 pickle dumped without frames):
	// no second half
	p := filepath.Join(dir, "unframed.pkl")
	if err := os.WriteFile(p, splitRows(3000, 7, 500, 13, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	split, one, errSplit, errOne, at0, joined := scanBoth(t, p)
	if errSplit != nil || errOne != nil || at0 != 0 || joined {
		t.Fatalf("unframed: %v %v at %d joined %v", errSplit, errOne, at0, joined)
	}
	sameScan(t, "unframed", split, one)
}
