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
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
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
