package trace

import (
	"strings"
	"testing"
)

// TestTopWindowIsShownKids: a walk that lists a stream's tops a window at a
// time (topWindow) prints what the walk of shownKids' whole list prints:
// the corpus, and streams of many discarded calls, scalars (elided into
// the "…" line) and leftovers, with windows of 3 so that every window
// boundary and the "…" line's place are crossed. It fails when the count
// of lines, the elided sums or a window's refill is wrong.
func TestTopWindowIsShownKids(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("\x80\x04\x8c\x05types\x8c\x0fSimpleNamespace\x93\x94")
	for i := 0; i < 40; i++ {
		switch i % 4 {
		case 0:
			b.WriteString("h\x00)\x810") // a discarded call
		case 1:
			b.WriteString("N0") // a discarded scalar: elided
		case 2:
			b.WriteString("\x8c\x03abc0")
		default:
			b.WriteString("h\x00)\x81}bh\x00)\x810") // a call with state, then another
		}
	}
	b.WriteString("K\x01K\x02") // leftovers
	b.WriteString("].")
	files := []string{writeTemp(t, dir, "tops.pkl", []byte(b.String()))}
	files = append(files, corpusFiles(1<<20)...)
	if testing.Short() {
		files = files[:min(len(files), 120)]
	}
	defer func(l, w int) { lazyTops, topsWindow = l, w }(lazyTops, topsWindow)
	for _, p := range files {
		tr, err := slowTree(p)
		if err != nil {
			continue
		}
		for _, depth := range wholeDepths {
			for si, sty := range append(wholeStyles, Style{}) {
				asJSON := si == len(wholeStyles)
				lazyTops, topsWindow = 1<<30, 1024
				want := wholeGraph(t, tr, depth, sty, asJSON)
				lazyTops, topsWindow = 0, 3
				if got := wholeGraph(t, tr, depth, sty, asJSON); got != want {
					t.Fatalf("%s depth %d %+v json %v: the windowed walk differs\n%s", p, depth, sty, asJSON, firstDiff(got, want))
				}
			}
		}
	}
}
