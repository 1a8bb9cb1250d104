package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// foldStats counts, per test, the streams whose store had folded runs at
// STOP (set by normalize through stageHook's absence: see countFolds).
func countFolds(s *pickle.Store) int {
	n := 0
	for id := pickle.ID(0); int(id) < s.Len(); id++ {
		if s.Kind(id) == pickle.KindFolded {
			n++
		}
	}
	return n
}

// TestFoldMatches: with every stream compacted early and often (a tiny
// MinCompact), the canon sink's digests are those of the whole store, for
// every file of testdata and every option that changes the encoding.
func TestFoldMatches(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	opts := []Options{{}, {Form: Form2}, {KeepDictOrder: true}, {Algo: XXH3}, {Strict: true}, {Form: Form2, StripLineno: true}}
	files := testfile.Sample(fastCorpus(t), 8)
	folded := 0
	defer func(v int) { spoolMem = v }(spoolMem)
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		spoolMem = min * 16 // the spool's file too
		for _, p := range files {
			for _, opt := range opts {
				noFast, noFold = true, true
				want, werr := HashFile(p, opt)
				noFold = false
				foldSeen.Store(0)
				got, gerr := HashFile(p, opt)
				noFast = false
				if (werr == nil) != (gerr == nil) {
					t.Errorf("%s %+v: whole store: %v; sink: %v", p, opt, werr, gerr)
					continue
				}
				if werr != nil {
					if werr.Error() != gerr.Error() {
						t.Errorf("%s %+v: errors differ:\n whole: %v\n sink:  %v", p, opt, werr, gerr)
					}
					continue
				}
				if want.Digest != got.Digest {
					t.Errorf("%s %+v (MinCompact %d): whole store %s, sink %s", p, opt, min, want.Digest, got.Digest)
				}
				if foldSeen.Load() > 0 {
					folded++
				}
			}
		}
	}
	t.Logf("%d of %d runs had folded runs at STOP", folded, 2*len(files)*len(opts))
	if folded < testfile.ShortDiv(100, 8) {
		t.Errorf("only %d runs folded anything", folded)
	}
}

// TestFoldShapes: the shapes of testdata/fold fold (objects, their calls and
// globals, rows sharing a tuple), refuse what they must (rows sharing a
// list, cycles) and are hashed again where a fold cannot stand (a rule's
// call after the rows, calls in a list that is dropped).
func TestFoldShapes(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	pickle.MinCompact = 64
	defer func() { noFast = false }()
	defer func(v int) { spoolMem = v }(spoolMem)
	spoolMem = 100
	for _, c := range []struct {
		file         string
		folds, again bool
	}{
		{"objects_p2", true, false}, {"objects_p4", true, false}, {"reduce_p2", true, false}, {"objects_p0", false, false},
		{"objdict_p5", true, false}, {"nested_p4", true, false}, {"sharedtuple_p4", true, false},
		{"mixed_p5", false, false}, {"deep_p1", false, false}, {"slots_p4", true, false}, // (rows of 1,100 small lists: still on the stack, and too small to be folded into)
		{"namespaces_p2", true, false}, {"namespaces_p4", true, false}, {"ordered_p4", true, false}, {"decimals_p2", true, false},
		{"dict_overwrite", true, false}, {"dictroot_p0", true, false}, {"dictroot_p4", true, false}, {"dictvals_p2", true, false},
		{"cycles_p4", false, false},
		{"ruleafter_p2", true, true}, {"ruleafter_p4", true, true}, {"dropped_calls", true, true},
	} {
		p := "../../testdata/fold/" + c.file + ".pkl.gz"
		noFast, noFold = true, true
		want, err := HashFile(p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		noFold = false
		foldSeen.Store(0)
		refolds.Store(0)
		got, err := HashFile(p, Options{})
		if err != nil || got.Digest != want.Digest {
			t.Errorf("%s: sink %v %v, whole store %s", c.file, got, err, want.Digest)
			continue
		}
		if (foldSeen.Load() > 0) != c.folds || (refolds.Load() > 0) != c.again {
			t.Errorf("%s: %d folded runs at STOP, hashed again %d times; want folds %v, again %v", c.file, foldSeen.Load(), refolds.Load(), c.folds, c.again)
		}
	}
}

// FuzzFold: on any bytes, hashing with the canon sink (every stream
// compacted after a few records, its bytes spooled to the file) gives the
// digest, or the error, of the whole store, and never panics.
func FuzzFold(f *testing.F) {
	n := 0
	for _, p := range fastCorpus(f) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 && n < 64 {
			f.Add(b)
			n++
		}
	}
	// code objects whose arguments fold at their REDUCE (foldArgs)
	for _, p := range []string{"cp210_closure/p4_seed21_a.pkl", "cp210_dynclass/p2_seed1_a.pkl", "dill036_closure/p3_seed19_a.pkl"} {
		if b, err := os.ReadFile(filepath.Join("../../testdata/equiv", p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x04]\x94(}\x94(\x8c\x01a\x94K\x01u}\x94(h\x02K\x02ue."))
	f.Add([]byte("\x80\x02]q\x00(c__main__\nP\nq\x01)\x81q\x02}q\x03X\x01\x00\x00\x00iK\x01sbh\x01)\x81q\x04}q\x05X\x01\x00\x00\x00iK\x02sbe0]q\x06(K\x01K\x02e."))
	dir := f.TempDir()
	defer func(v, w int) { pickle.MinCompact, spoolMem = v, w }(pickle.MinCompact, spoolMem)
	pickle.MinCompact, spoolMem = 4, 16
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in.pkl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip()
		}
		defer func() { noFast, noFold = false, false }()
		for _, opt := range []Options{{}, {Form: Form2, NoPaths: true}} {
			noFast, noFold = true, true
			want, werr := HashFile(p, opt)
			noFold = false
			got, gerr := HashFile(p, opt)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("%+v: whole store: %v; sink: %v", opt, werr, gerr)
			}
			if werr == nil && want.Digest != got.Digest {
				t.Fatalf("%+v: whole store %s, sink %s", opt, want.Digest, got.Digest)
			}
		}
	})
}

// TestRuleStdComplete: every standard-library callable a rule of the form
// names ("std:module.name" in the view's sources) is in ruleStd, so that
// the sink stops folding where a rule may read what it would fold.
func TestRuleStdComplete(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`"std:([A-Za-z_][A-Za-z_0-9.]*\.[A-Za-z_][A-Za-z_0-9]*)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			if name := m[1]; !ruleGlobal(name[:strings.LastIndex(name, ".")], name[strings.LastIndex(name, ".")+1:]) {
				t.Errorf("%s names %q, which ruleGlobal does not count as a rule's", f, "std:"+name)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d std: callables", n)
	}
	if ruleGlobal("types", "SimpleNamespace") || ruleGlobal("builtins", "complex") || !ruleGlobal("builtins", "set") {
		t.Fatal("ruleGlobal: the wrong standard-library globals")
	}
}

// TestFoldSide: read through the sink as pk canon's writer reads it
// (EachStreamWrite: every pure tuple of a folded root followed by its side
// items, which the canonical encoding leaves out), every stream's digest is
// the one the whole store gives (EachStream), for the corpus and the fold
// fixtures (bare), with compactions at 4 and 64 records, the spool's file
// past a few bytes (spans with side items read back across its end) and
// digests of 32 and 16 bytes (the spool's buffer let go at STOP:
// spool.release); and the fixtures of rows holding tuples, or
// made by calls (whose argument tuples have them), fold with side items.
func TestFoldSide(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	defer func(v int) { spoolMem = v }(spoolMem)
	files := testfile.Sample(fastCorpus(t), 4)
	gz, _ := filepath.Glob("../../testdata/fold/*.pkl.gz")
	dir := t.TempDir()
	for _, p := range gz {
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".gz"))
		testfile.GunzipTo(t, p, out)
		files = append(files, out)
	}
	sided := map[string]bool{}
	released := 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact, spoolMem = min, min*16
		for _, opt := range testfile.Sample([]Options{{}, {Algo: XXH3}, {KeepDictOrder: true}}, 2) {
			dsize := opt.Algo.Size()
			accept := func(enc []byte) bool { return PlainEmbedding(enc, 64, dsize) }
			for _, p := range files {
				var want, got [][]byte
				_, _, wok := EachStream(p, opt, func(_ *pickle.Stream, d []byte) error {
					want = append(want, slices.Clone(d))
					return nil
				})
				_, _, gok := EachStreamWrite(p, opt, accept, func(_ *pickle.Stream, view func() *View) error {
					v := view()
					if len(v.Opt.fold.sideRuns) > 0 {
						sided[filepath.Base(p)] = true
					}
					if sp := &v.Opt.fold.sp; sp.f != nil && !sp.stay {
						// (spool.release: the runs are read back from the file)
						if sp.mem != nil {
							t.Errorf("%s: the spool holds its buffer at STOP", p)
						}
						released++
					}
					d, err := v.Digest()
					got = append(got, d)
					return err
				})
				if !wok || !gok {
					continue
				}
				if !slices.EqualFunc(want, got, bytes.Equal) {
					t.Errorf("%s %+v (MinCompact %d): the sink's digests differ from the whole store's", p, opt, min)
				}
			}
		}
	}
	for _, f := range []string{"tuples_p2.pkl", "tuples_p4.pkl", "tuples_p5.pkl", "sharedtuple_p4.pkl",
		"calls_objs_p2.pkl", "calls_objs_p4.pkl", "calls_raw.pkl", "calls_dotted.pkl", "objects_p4.pkl", "namespaces_p2.pkl"} {
		if !sided[f] {
			t.Errorf("%s: nothing folded with side items", f)
		}
	}
	t.Logf("%d files folded with side items", len(sided))
	if released == 0 {
		t.Error("no stream's spool had a file")
	}
}

// TestFoldArgsMatches: pk hash's sink folds code objects' argument tuples
// at their REDUCE (foldArgs) with the digests of the whole store, for
// every file of testdata and the options that change what the code rule
// or the encoding does, each tuple's purity set without decide's walk
// (pureCopy).
func TestFoldArgsMatches(t *testing.T) {
	opts := []Options{{NoPaths: true}, {NoPaths: true, Form: Form2, StripLineno: true}, {NoPaths: true, Strict: true},
		{NoPaths: true, Algo: XXH3}, {NoPaths: true, KeepDictOrder: true}}
	files := testfile.Sample(fastCorpus(t), 4)
	defer func() { noFast, noFold = false, false }()
	folded := 0
	for _, p := range files {
		for _, opt := range opts {
			noFast, noFold = true, true
			want, werr := HashFile(p, opt)
			noFold = false
			argFolds.Store(0)
			pureCopies.Store(0)
			got, gerr := HashFile(p, opt)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("%s %+v: whole store: %v; sink: %v", p, opt, werr, gerr)
				continue
			}
			if werr == nil && want.Digest != got.Digest {
				t.Errorf("%s %+v: whole store %s, sink %s", p, opt, want.Digest, got.Digest)
			}
			if argFolds.Load() > 0 {
				folded++
			}
			if werr == nil && pureCopies.Load() != argFolds.Load() {
				// (what Copier.Owned copies is pure: decide's walk is not
				// needed for a tuple folded; pureCopy)
				t.Errorf("%s %+v: %d tuples folded, %d without decide's walk", p, opt, argFolds.Load(), pureCopies.Load())
			}
		}
	}
	t.Logf("%d of %d runs folded code objects' arguments", folded, len(files)*len(opts))
	if folded < testfile.ShortDiv(100, 4) {
		t.Errorf("only %d runs folded code objects' arguments", folded)
	}
}

// TestFoldArgsRefold: a code object's argument tuple folded at its REDUCE
// (naming nodes from before it or not) gives the whole store's digest,
// and a stream that reads the tuple again
// (a GET of it) or changes what it was read from (a BUILD on its file
// name) is hashed again without folding.
func TestFoldArgsRefold(t *testing.T) {
	// types.CodeType(0, 0, 0, 0, 0, 0, b'', (), (), (), 'file.py', 'f', 1,
	// b'', (), ()): the 16 arguments of Python 3.8-3.10; the tuple is
	// memo 1, its file name memo 2
	code := "\x80\x04\x8c\x05types\x8c\x08CodeType\x93(" + strings.Repeat("K\x00", 6) + "C\x00)))" +
		"\x8c\x07file.pyq\x02\x8c\x01fK\x01C\x00))tq\x01R"
	// the same with its file name and a tuple of constants memoised before
	// the tuple (memo 3, 4): copied, each where it is named
	older := "\x80\x04\x8c\x07file.pyq\x030\x8c\x01x\x85q\x040\x8c\x05types\x8c\x08CodeType\x93(" + strings.Repeat("K\x00", 6) +
		"C\x00h\x04))h\x03\x8c\x01fK\x01C\x00h\x04)tq\x01R"
	for _, c := range []struct {
		name, in     string
		folds, again bool
	}{
		{"alone", code + ".", true, false},
		{"names from before", older + ".", true, false},
		{"tuple read again", code + "h\x01\x86.", true, true},
		{"file name read again", code + "h\x02\x86.", true, false},
		{"file name built on", code + "h\x02}b\x86.", true, true},
	} {
		p := filepath.Join(t.TempDir(), "code.pkl")
		if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{{NoPaths: true}, {NoPaths: true, Strict: true}, {NoPaths: true, StripLineno: true}} {
			noFast, noFold = true, true
			want, werr := HashFile(p, opt)
			noFold = false
			argFolds.Store(0)
			refolds.Store(0)
			got, gerr := HashFile(p, opt)
			noFast = false
			if werr != nil || gerr != nil || want.Digest != got.Digest {
				t.Errorf("%s %+v: whole store %v %v, sink %v %v", c.name, opt, want, werr, got, gerr)
				continue
			}
			if (argFolds.Load() > 0) != c.folds || (refolds.Load() > 0) != c.again {
				t.Errorf("%s %+v: %d folded, hashed again %d times; want folds %v, again %v", c.name, opt, argFolds.Load(), refolds.Load(), c.folds, c.again)
			}
		}
	}
}
