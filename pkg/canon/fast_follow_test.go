package canon

import (
	"bytes"
	"io"
	"testing"
)

// TestFastHashFollow: wherever the streaming path takes a bare pickle whose
// result is a list, FastHashFollow with the hint pass 1 gives has its
// digest; with a wrong item count, or the other memo opcode kind when the
// pickle has memo opcodes, it gives up (never another digest).
func TestFastHashFollow(t *testing.T) {
	taken, wrong := 0, 0
	for _, p := range fastCorpus(t) {
		scan, _, err := fastScan(p)
		if err != nil || scan.rootList != 0 {
			continue
		}
		want, ok := fastHashFile(p, Options{})
		if !ok {
			continue
		}
		r, _, done, err := openBare(p) // (decompressed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil || done() != nil {
			t.Fatal(p, err)
		}
		follow := func(h FastHint) (*Result, bool) {
			return FastHashFollow(bytes.NewReader(b), bytes.NewReader(b), p, h, Options{}, func() {})
		}
		right := FastHint{RootLen: scan.rootLen, Memoize: scan.memoize}
		got, ok := follow(right)
		if !ok || got.Digest != want.Digest {
			t.Errorf("%s: FastHashFollow with the right hint: %v %v, want %s", p, ok, got, want.Digest)
			continue
		}
		taken++
		hints := []FastHint{{RootLen: scan.rootLen + 1, Memoize: scan.memoize}, {RootLen: max(scan.rootLen-1, 0), Memoize: scan.memoize}}
		if len(scan.live) > 0 {
			hints = append(hints, FastHint{RootLen: scan.rootLen, Memoize: !scan.memoize})
		}
		for _, h := range hints {
			if h == right {
				continue
			}
			if got, ok := follow(h); ok {
				t.Errorf("%s: FastHashFollow with the wrong hint %+v (right: %+v) gave %s", p, h, right, got.Digest)
			}
			wrong++
		}
	}
	t.Logf("%d list results followed, %d wrong hints given up on", taken, wrong)
	if taken < 20 {
		t.Errorf("only %d list results followed", taken)
	}
}
