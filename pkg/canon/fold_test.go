package canon

import (
	"testing"

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
	files := fastCorpus(t)
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
				foldSeen = 0
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
				if foldSeen > 0 {
					folded++
				}
			}
		}
	}
	t.Logf("%d of %d runs had folded runs at STOP", folded, 2*len(files)*len(opts))
	if folded < 100 {
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
		{"mixed_p5", true, false}, {"deep_p1", true, false}, {"slots_p4", true, false},
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
		foldSeen, refolds = 0, 0
		got, err := HashFile(p, Options{})
		if err != nil || got.Digest != want.Digest {
			t.Errorf("%s: sink %v %v, whole store %s", c.file, got, err, want.Digest)
			continue
		}
		if (foldSeen > 0) != c.folds || (refolds > 0) != c.again {
			t.Errorf("%s: %d folded runs at STOP, hashed again %d times; want folds %v, again %v", c.file, foldSeen, refolds, c.folds, c.again)
		}
	}
}
