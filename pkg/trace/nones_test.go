package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// topOut writes --top n of the file at p (text or JSON) as EachTop reads it.
func topOut(t *testing.T, p string, n int, js bool) string {
	t.Helper()
	var got string
	ok, err := EachTop(p, n, false, func(tr *Tree) error {
		var err error
		got, err = writeTop(tr, n, js)
		return err
	})
	if !ok || err != nil {
		t.Fatalf("%s: %v %v", p, ok, err)
	}
	return got
}

// TestSharedNones: --top of every cloudpickle and dill fixture through the
// sink with its Nones shared is what it is without them (PK_TRACE_NONES=0)
// and without the sink; the sink answers most runs with Nones shared,
// each NONE then no record of its own: fewer None records than NONEs read.
func TestSharedNones(t *testing.T) {
	files := codeFixtures(t)
	defer func(a, b bool) { noShareNones, noSink = a, b }(noShareNones, noSink)
	shared := 0
	for _, p := range files {
		for _, n := range []int{3, 20} {
			for _, js := range []bool{false, true} {
				noShareNones, noSink = false, true
				want := topOut(t, p, n, js)
				noSink = false
				if got := topOut(t, p, n, js); got != want {
					t.Errorf("%s --top %d (json %v):\n%s\nwant\n%s", p, n, js, got, want)
				}
				noShareNones = true
				if got := topOut(t, p, n, js); got != want {
					t.Errorf("%s --top %d (json %v), Nones not shared:\n%s\nwant\n%s", p, n, js, got, want)
				}
			}
		}
		// the store the sink answered from
		noShareNones = false
		sk := &topSink{n: 20}
		var nones int
		ok, err := eachTree(p, &topKeep{n: 20}, sk, func(tr *Tree) error {
			s := tr.Streams[0].Store
			for id := range pickle.ID(s.Len()) {
				if s.Kind(id) == pickle.KindNone {
					nones++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ok && sk.args != nil && sk.args.pushes > 0 {
			shared++
			b, _ := os.ReadFile(p)
			if reads := bytes.Count(b, []byte{'N'}); int64(nones)+sk.args.pushes > int64(reads) || sk.args.pushes == 0 {
				t.Errorf("%s: %d None records and %d shared NONEs, %d N bytes", p, nones, sk.args.pushes, reads)
			}
		}
	}
	if shared < len(files)/4 {
		t.Errorf("the sink answered %d of %d files with Nones shared", shared, len(files))
	}
	t.Logf("the sink answered %d of %d files with Nones shared", shared, len(files))
}

// TestSharedNonesRefused: after a code object's arguments fold, what would
// make a shared None differ from a None of its own (a memo write, DUP,
// BUILD of None, POP, a None left on the stack) reads the file again
// without the sink: the same output as the store path's.
func TestSharedNonesRefused(t *testing.T) {
	cases := sharedNoneCases()
	dir := t.TempDir()
	defer func(v bool) { noSink = v }(noSink)
	for name, body := range cases {
		p := filepath.Join(dir, name+".pkl")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		sk := &topSink{n: 3}
		ok, _ := eachTree(p, &topKeep{n: 3}, sk, func(*Tree) error { return nil })
		if answered := ok && sk.args != nil && sk.args.pushes > 0; answered != (name == "plain") {
			t.Errorf("%s: the sink answered with Nones shared: %v", name, answered)
		}
		for _, js := range []bool{false, true} {
			noSink = true
			want := topOut(t, p, 3, js)
			noSink = false
			if got := topOut(t, p, 3, js); got != want {
				t.Errorf("%s (json %v):\n%s\nwant\n%s", name, js, got, want)
			}
		}
	}
}

// sharedNoneCases are pickles of a code object whose arguments fold, then
// Nones: shared (plain), or each refusal (FuzzTopSink has them as seeds).
func sharedNoneCases() map[string]string {
	code := "ctypes\nCodeType\n(" + strings.Repeat("K\x01", 16) + "tR"
	cases := map[string]string{
		"plain":   "](" + code + "NNN](NNee.",
		"memo":    "](" + code + "NNq\x05Ne.",
		"memoize": "\x80\x04](" + code + "NN\x94Ne.",
		"dup":     "](" + code + "NN2e.",
		"build":   "](" + code + "NN}be.",
		"pop":     "](" + code + "NN0Ne.",
		"popmark": "](" + code + "N(NN1e.",
		"left":    "](" + code + "eNN].",
		"root":    "(" + code + "N1N.",
	}
	for name, body := range cases {
		if !strings.HasPrefix(body, "\x80") {
			cases[name] = "\x80\x02" + body
		}
	}
	return cases
}
