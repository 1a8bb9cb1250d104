package diff

import (
	"bytes"
	"os"
	"path/filepath"
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
// a changed joblib array as its part, with the count of changed elements.
func TestContainers(t *testing.T) {
	in := filepath.Join(corpus, "inputs")
	r, err := Files(filepath.Join(in, "torch_zip_a.pt"), filepath.Join(in, "torch_zip_b.pt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root['layer.weight']" || !strings.Contains(r.Entries[0].Note, "element(s) differ") {
		t.Fatalf("torch: %+v", r.Entries)
	}
	r, err = Files(filepath.Join(in, "joblib_a.joblib"), filepath.Join(in, "joblib_b.joblib"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Path != "root['ids']" || !strings.HasPrefix(r.Entries[0].Note, "1 element(s) differ") {
		t.Fatalf("joblib: %+v", r.Entries)
	}
	// the same joblib content, gzip-compressed: the same
	r, err = Files(filepath.Join(in, "joblib_a.joblib"), filepath.Join(in, "joblib_a_gzip.joblib.gz"), Options{})
	if err != nil || !r.Same {
		t.Fatalf("joblib gzip: %v %+v", err, r)
	}
}

// Two call chains 50,000 deep that differ at the bottom: the walk stops at
// MaxDepth and still reports a difference, in seconds.
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
	if r.Same || len(r.Entries) == 0 {
		t.Fatal("must differ with an entry")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
}
