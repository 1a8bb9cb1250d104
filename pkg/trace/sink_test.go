package trace

import (
	"bytes"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestSinkCorpus: with every stream compacted early and often (a tiny
// MinCompact), --top n (text and JSON) through the top sink prints what the tree of the
// whole store prints, for every file under testdata/, or gives up (the
// caller then reads the file again); and it folds in many of them.
func TestSinkCorpus(t *testing.T) {
	defer func(v int) { pickle.MinCompact = v }(pickle.MinCompact)
	files := testfile.Sample(corpusFiles(8<<20), 2)
	sty := Style{ASCII: true, Bytes: true}
	folded, lost := 0, 0
	for _, min := range []int{4, 64} {
		pickle.MinCompact = min
		for _, p := range files {
			var whole []byte
			if tr, err := slowTree(p); err == nil {
				var b bytes.Buffer
				tr.WriteTop(&b, 20, sty)
				tr.WriteTopJSON(&b, 20)
				tr.WriteTop(&b, 3, sty)
				whole = b.Bytes()
			}
			sk := &topSink{n: 20}
			var b bytes.Buffer
			ok, err := eachTree(p, &topKeep{n: 20}, sk, func(tr *Tree) error {
				tr.WriteTop(&b, 20, sty)
				return tr.WriteTopJSON(&b, 20)
			})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !ok {
				if sk.num != nil {
					if again, _ := eachTree(p, &topKeep{n: 20}, nil, func(*Tree) error { return nil }); again {
						lost++ // (the file read again without the sink)
					}
				}
				continue
			}
			// n 3: another heap, the same file
			sk3 := &topSink{n: 3}
			eachTree(p, &topKeep{n: 3}, sk3, func(tr *Tree) error { return tr.WriteTop(&b, 3, sty) })
			if sk.folds > 0 {
				folded++
			}
			if whole == nil {
				t.Errorf("%s (MinCompact %d): the sink answered, the whole store did not", p, min)
			} else if !bytes.Equal(b.Bytes(), whole) {
				t.Errorf("%s (MinCompact %d): sink\n%s\nwhole store\n%s", p, min, b.Bytes(), whole)
			}
		}
	}
	t.Logf("%d files, twice: %d runs folded and answered, %d compacted and gave up", len(files), folded, lost)
	if folded < testfile.ShortDiv(40, 2) {
		t.Errorf("only %d runs folded anything", folded)
	}
}
