package diff

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

const corpus = "../../testdata"

// The differ corpus: each pair must differ with exactly these entries.
var wantDiffer = map[string][]string{
	"alias_change":        {"alias changed root['x'][1]"},
	"cp210_default_arg":   {"changed root.__defaults__[0]"},
	"cp220_default_arg":   {"changed root.__defaults__[0]"},
	"cp210_method_body":   {"changed root.predict.__code__.co_code"},
	"cp220_method_body":   {"changed root.predict.__code__.co_code"},
	"dict_key_added":      {"added root['x']['c']"},
	"dict_key_removed":    {"removed root['x']['b']"},
	"discarded_call":      {"added root<effect 0>", "added root<effect 1>"},
	"discarded_call_memo": {"added root<effect 0>", "added root<effect 1>"},
	"int_vs_bool":         {"type changed root['x']"},
	"int_vs_float":        {"type changed root['x']"},
	"list_insertion":      {"added root['x'][25]"},
	"list_order":          {"removed root['x'][1]", "added root['x'][2]"},
	"set_vs_frozenset":    {"type changed root['x']"},
	"str_vs_bytes":        {"type changed root['x']"},
	"tuple_vs_list":       {"type changed root['x']"},
	"value_changed":       {"changed root['x'][2]"},
	"zero_vs_negzero":     {"changed root['x']"},
}

func TestDifferCorpus(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(corpus, "differ", "*"))
	if len(dirs) == 0 {
		t.Fatal("no differ corpus: testdata/differ is empty")
	}
	for _, d := range dirs {
		name := filepath.Base(d)
		t.Run(name, func(t *testing.T) {
			r, err := Files(filepath.Join(d, "a.pkl"), filepath.Join(d, "b.pkl"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Same {
				t.Fatal("pair reported the same")
			}
			var got []string
			for _, e := range r.Entries {
				got = append(got, e.Kind+" "+e.Path)
			}
			want, ok := wantDiffer[name]
			if !ok {
				t.Fatalf("no expectation for this case; got %q", got)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// Every pair of files in one equiv case is the same, with a reason line,
// and pk diff agrees with pk hash.
func TestEquivCorpus(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(corpus, "equiv", "*"))
	if len(dirs) == 0 {
		t.Fatal("no equiv corpus")
	}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.pkl"))
		sort.Strings(files)
		if len(files) < 2 {
			continue
		}
		a, b := files[0], files[len(files)-1]
		r, err := Files(a, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Same {
			var buf bytes.Buffer
			r.WriteText(&buf, 10)
			t.Errorf("%s: not the same:\n%s", filepath.Base(d), buf.String())
			continue
		}
		if r.BytesEqual || len(r.Reasons) == 0 {
			t.Errorf("%s: want a reason line for byte-different files", filepath.Base(d))
		}
		ha, _ := canon.HashFile(a, canon.Options{})
		hb, _ := canon.HashFile(b, canon.Options{})
		if ha.Digest != r.DigestA || hb.Digest != r.DigestB {
			t.Errorf("%s: diff digests are not pk hash's", filepath.Base(d))
		}
	}
}

func parseBytes(t *testing.T, name string, b []byte) *input.Doc {
	t.Helper()
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), name, canon.ReadOptions(canon.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	return &input.Doc{Path: name, Format: "pickle", Parts: []input.Part{{Pickle: f}}}
}

// laughs builds a memo "billion laughs": level i is a list of 10 GETs of
// level i-1; leaf differs between the two sides.
func laughs(leaf string, levels int) []byte {
	var b bytes.Buffer
	b.WriteString("\x80\x04")
	b.WriteString("\x8c" + string(rune(len(leaf))) + leaf + "q\x00")
	for i := 1; i <= levels; i++ {
		b.WriteString("](")
		for j := 0; j < 10; j++ {
			b.WriteString("h" + string(rune(i-1)))
		}
		b.WriteString("eq" + string(rune(i)))
	}
	b.WriteString(".")
	return b.Bytes()
}

func TestSharedSubtreesAreFast(t *testing.T) {
	a := parseBytes(t, "a", laughs("x", 10))
	b := parseBytes(t, "b", laughs("y", 10))
	start := time.Now()
	r, err := Docs(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("billion laughs took %v", d)
	}
	if r.Same || len(r.Entries) == 0 {
		t.Fatal("laughs with different leaves must differ")
	}
	// the first entry is at the leaf, reached once
	if !strings.HasSuffix(r.Entries[0].Path, "[0]") || r.Entries[0].Kind != Changed {
		t.Fatalf("entry %+v", r.Entries[0])
	}
	same, err := Docs(a, parseBytes(t, "a2", laughs("x", 10)), Options{})
	if err != nil || !same.Same {
		t.Fatalf("equal laughs: %v %+v", err, same)
	}
}

func TestCycles(t *testing.T) {
	// l = [1]; l.append(l) vs l = [2]; l.append(l)
	mk := func(v byte) []byte {
		return []byte("\x80\x04]q\x00(K" + string(rune(v)) + "h\x00e.")
	}
	r, err := Docs(parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(2)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Same || len(r.Entries) != 1 || r.Entries[0].Path != "root[0]" {
		t.Fatalf("%+v", r.Entries)
	}
	r, err = Docs(parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(1)), Options{})
	if err != nil || !r.Same {
		t.Fatalf("same cycle: %v %+v", err, r)
	}
}

func TestBadInputNamesSide(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pkl")
	bad := filepath.Join(dir, "bad.pkl")
	os.WriteFile(good, []byte("\x80\x04K\x01."), 0o644)
	os.WriteFile(bad, []byte("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff."), 0o644)
	for i, pair := range [][2]string{{good, bad}, {bad, good}} {
		_, err := Files(pair[0], pair[1], Options{})
		ie, ok := err.(*InputError)
		if !ok {
			t.Fatalf("%d: %v", i, err)
		}
		want := byte("ba"[i])
		if ie.Side != want {
			t.Fatalf("side %c, want %c", ie.Side, want)
		}
		pe, ok := pickle.AsError(ie.Err)
		if !ok || pe.Offset != 2 || pe.Op != "BINBYTES8" {
			t.Fatalf("error %v", ie.Err)
		}
	}
}

func TestLargeListOneChange(t *testing.T) {
	// 100000 ints, one changed in the middle: one entry
	mk := func(change bool) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x04](")
		for i := 0; i < 100000; i++ {
			v := i
			if change && i == 50000 {
				v = -1
			}
			b.Write([]byte{'J', byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
		}
		b.WriteString("e.")
		return b.Bytes()
	}
	r, err := Docs(parseBytes(t, "a", mk(false)), parseBytes(t, "b", mk(true)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root[50000]" {
		t.Fatalf("%+v", r.Entries)
	}
}

// Containers: a changed tensor is reported at its path in the state dict,
// a changed joblib array at its key, each at the changed element with both
// values and the count of changed elements.
func TestContainers(t *testing.T) {
	in := filepath.Join(corpus, "inputs")
	r, err := Files(filepath.Join(in, "torch_zip_a.pt"), filepath.Join(in, "torch_zip_b.pt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root['layer.weight'][1, 2]" || r.Entries[0].A != "1.25" || r.Entries[0].B != "99.0" || r.Entries[0].Note != "1 of 6 elements differ" {
		t.Fatalf("torch: %+v", r.Entries)
	}
	r, err = Files(filepath.Join(in, "joblib_a.joblib"), filepath.Join(in, "joblib_b.joblib"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root['ids'][3]" || r.Entries[0].A != "3" || r.Entries[0].B != "42" || r.Entries[0].Note != "1 of 5 elements differ" {
		t.Fatalf("joblib: %+v", r.Entries)
	}
	// the same joblib content, gzip-compressed: the same
	r, err = Files(filepath.Join(in, "joblib_a.joblib"), filepath.Join(in, "joblib_a_gzip.joblib.gz"), Options{})
	if err != nil || !r.Same {
		t.Fatalf("joblib gzip: %v %+v", err, r)
	}
}

// Two call chains 50,000 deep that differ at the bottom: the entry is at
// the bottom, in seconds.
func TestDeepChainsDiff(t *testing.T) {
	mk := func(v byte) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x04cbuiltins\nprint\n(K" + string(rune(v)) + "tR")
		for i := 0; i < 50000; i++ {
			b.WriteString(")R")
		}
		b.WriteString(".")
		return b.Bytes()
	}
	start := time.Now()
	r, err := Docs(parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(2)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Same || len(r.Entries) != 1 {
		t.Fatalf("must differ with one entry: %d", len(r.Entries))
	}
	if p := r.Entries[0].Path; strings.Count(p, ".__reduce__[0]") != 50000 || !strings.HasSuffix(p, "[0]") {
		t.Fatalf("entry at %.100s... (%d bytes)", p, len(p))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
}

// deepList is levels nested lists, the innermost empty or [1].
func deepList(levels int, one bool) []byte {
	b := []byte("\x80\x02" + strings.Repeat("(", levels))
	if one {
		b = append(b, "K\x01"...)
	}
	return append(append(b, strings.Repeat("l", levels)...), '.')
}

// deepDict is levels nested {0: ...}, the innermost {} or 1.
func deepDict(levels int, one bool) []byte {
	b := []byte("\x80\x02" + strings.Repeat("(K\x00", levels))
	if one {
		b = append(b, "K\x01"...)
	} else {
		b = append(b, '}')
	}
	return append(append(b, strings.Repeat("d", levels)...), '.')
}

// TestDeepDiff: a million nested lists that differ in the innermost one
// are compared to the bottom (no recursion, no depth bound), the entry at
// the path a million levels down; nested dicts too; the time grows
// linearly with the depth (100,000 against 200,000 levels: less than 3x,
// the best of three runs each, in CPU time).
func TestDeepDiff(t *testing.T) {
	diff := func(a, b []byte) (*Result, time.Duration) {
		da, db := parseBytes(t, "a", a), parseBytes(t, "b", b)
		start := time.Now()
		r, err := Docs(da, db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r, time.Since(start)
	}
	M := 1_000_000
	if testing.Short() {
		M = 200_000
	}
	r, d := diff(deepList(M, false), deepList(M, true))
	want := "root" + strings.Repeat("[0]", M-1) + "[0]"
	if len(r.Entries) != 1 || r.Entries[0].Path != want || r.Entries[0].Kind != Added || r.Entries[0].B != "1" {
		t.Fatalf("%d entries, the first %.80s... %s", len(r.Entries), r.Entries[0].Path, r.Entries[0].Kind)
	}
	if d > 120*time.Second {
		t.Fatalf("a million levels took %v", d)
	}
	t.Logf("%d nested lists: %v", M, d)
	r, _ = diff(deepDict(200_000, false), deepDict(200_000, true))
	if len(r.Entries) != 1 || r.Entries[0].Path != "root"+strings.Repeat("[0]", 200_000) || r.Entries[0].Kind != TypeChanged {
		t.Fatalf("dicts: %d entries, the first %.80s... %s", len(r.Entries), r.Entries[0].Path, r.Entries[0].Kind)
	}
	// CPU time, the best of three runs after a collection
	best := func(n int) time.Duration {
		a, b := deepList(n, false), deepList(n, true)
		var d time.Duration
		for i := 0; i < 3; i++ {
			da, db := parseBytes(t, "a", a), parseBytes(t, "b", b)
			runtime.GC()
			start := cpuTime()
			if _, err := Docs(da, db, Options{}); err != nil {
				t.Fatal(err)
			}
			if x := cpuTime() - start; i == 0 || x < d {
				d = x
			}
		}
		return d
	}
	d1, d2 := best(100_000), best(200_000)
	t.Logf("100,000 levels %v, 200,000 levels %v", d1, d2)
	if d2 > 3*d1 && d2 > 500*time.Millisecond {
		t.Fatalf("not linear: 100,000 levels %v, 200,000 levels %v", d1, d2)
	}
}

// TestManySetitems: 20,000 SETITEMs on one memoised OrderedDict, the last
// value changed: one entry, at its key.
func TestManySetitems(t *testing.T) {
	mk := func(last byte) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x02ccollections\nOrderedDict\n)R\x94")
		for i := 0; i < 20000; i++ {
			v := byte(1)
			if i == 19999 {
				v = last
			}
			b.Write([]byte{'h', 0, 'J', byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24), 'K', v, 's', '0'})
		}
		b.WriteString("h\x00.")
		return b.Bytes()
	}
	r, err := Docs(parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(2)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root[19999]" || r.Entries[0].Kind != Changed {
		t.Fatalf("%+v", r.Entries)
	}
}

// An effect is numbered by its place in the stream's call log, so the same
// call has the same path whichever form locates the differences: in
// discarded_call, pk-canon/1 lists the global builtins.print (log entry 0)
// and the call (entry 1) as effects, pk-canon/2 the call alone; both name
// the call root<effect 1> (a count of the effects gave it <effect 1> in
// one and <effect 0> in the other).
func TestEffectNumberSameInEveryForm(t *testing.T) {
	d := filepath.Join(corpus, "differ", "discarded_call")
	for _, f := range []canon.Form{canon.Form1, canon.Form2} {
		r, err := Files(filepath.Join(d, "a.pkl"), filepath.Join(d, "b.pkl"), Options{Canon: canon.Options{Form: f}})
		if err != nil {
			t.Fatal(err)
		}
		call := ""
		for _, e := range r.Entries {
			if strings.HasSuffix(e.B, "(...)") {
				call = e.Path
			}
		}
		if call != "root<effect 1>" {
			t.Errorf("form %v: the discarded call is %q, want root<effect 1> (entries %+v)", f, call, r.Entries)
		}
	}
}

// TestSetitemSameKey: __setitem__ pairs that set one key many times (the
// cost shape setitem_same_key) are compared as a sequence: one changed value
// is one entry, not an entry per pair (matched by key, every pair met the
// last one).
func TestSetitemSameKey(t *testing.T) {
	mk := func(at int, v byte) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x02ccollections\nOrderedDict\n)R\x94")
		for i := 0; i < 2000; i++ {
			x := byte(i % 200)
			if i == at {
				x = v
			}
			b.Write([]byte{'h', 0, 'X', 1, 0, 0, 0, 'k', 'K', x, 's', '0'})
		}
		b.WriteString("h\x00.")
		return b.Bytes()
	}
	for _, c := range []struct {
		a, b []byte
		want string
	}{
		{mk(700, 201), mk(700, 202), "changed root['k']"},
		{mk(-1, 0), mk(1999, 250), "changed root['k']"},
	} {
		r, err := Docs(parseBytes(t, "a", c.a), parseBytes(t, "b", c.b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range r.Entries {
			got = append(got, e.Kind+" "+e.Path)
		}
		if strings.Join(got, "\n") != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestDetailKeepsPathHeads: two nestings of 1,000 lists that differ at
// every level give 1,000 entries, whose paths grow a level each (n²/2
// bytes in all: 40,000 levels took 3 GB). Past Options.Detail an entry
// keeps the head of its path only: the entries, their kinds and --stat's
// counts are those of the whole run, the kept paths stay short, and a
// report shows no entry past the first elided one.
func TestDetailKeepsPathHeads(t *testing.T) {
	const n = 1000
	mk := func(v byte) []byte {
		b := []byte("\x80\x04")
		b = append(b, bytes.Repeat([]byte("]"), n+1)...)
		b = append(b, bytes.Repeat([]byte{'a', 'K', v, 'a'}, n)...)
		return append(b, '.')
	}
	a, b := parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(2))
	whole, err := Docs(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b = parseBytes(t, "a", mk(1)), parseBytes(t, "b", mk(2))
	cut, err := Docs(a, b, Options{Detail: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Entries) != n || len(cut.Entries) != n {
		t.Fatalf("%d and %d entries, want %d", len(whole.Entries), len(cut.Entries), n)
	}
	total := 0
	for i, e := range cut.Entries {
		w := whole.Entries[i]
		if e.Kind != w.Kind || e.Elided != (i >= 5) || w.Elided {
			t.Fatalf("entry %d: %s elided %v, whole %s elided %v", i, e.Kind, e.Elided, w.Kind, w.Elided)
		}
		if i < 5 && e.Path != w.Path || TopPath(e.Path) != TopPath(w.Path) {
			t.Fatalf("entry %d: path %.60q, whole %.60q", i, e.Path, w.Path)
		}
		total += len(e.Path)
	}
	if total > 40*n {
		t.Fatalf("the paths kept take %d bytes", total)
	}
	if !reflect.DeepEqual(cut.Stat(), whole.Stat()) {
		t.Fatalf("--stat: %+v, whole %+v", cut.Stat(), whole.Stat())
	}
	var tw, tc bytes.Buffer
	whole.WriteText(&tw, 5)
	cut.WriteText(&tc, 5)
	if tw.String() != tc.String() {
		t.Fatalf("reports differ:\n%s\n%s", tw.String(), tc.String())
	}
	// an entry dropped after the fact brings an elided one into the
	// first five: the report stops before it
	cut.Entries = append(cut.Entries[:2], cut.Entries[3:]...)
	tc.Reset()
	cut.WriteText(&tc, 5)
	if got := strings.Count(tc.String(), " changed\n"); got != 4 {
		t.Fatalf("%d entries shown:\n%s", got, tc.String())
	}
}
