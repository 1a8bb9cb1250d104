package canon

import (
	"bytes"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestPureDigestsShareShortBodies: pure nodes whose bodies are equal share
// one digest once a state has computed smallAfter of them (pureSlot); every
// corpus file, read by the store path under three option sets, hashes to
// the same digest with sharing from the first digest as without it.
func TestPureDigestsShareShortBodies(t *testing.T) {
	defer func(v int) { smallAfter = v }(smallAfter)
	defer func() { noFast = false }()
	files := testfile.Sample(fastCorpus(t), 6)
	shared := 0
	for _, p := range files {
		for _, opt := range []Options{{}, {Form: Form2}, {Algo: XXH3}} {
			noFast = true
			smallAfter = 1 << 30
			want, werr := HashFile(p, opt)
			smallAfter = 0
			got, gerr := HashFile(p, opt)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("%s %+v: without sharing: %v; with: %v", p, opt, werr, gerr)
				continue
			}
			if werr == nil && want.Digest != got.Digest {
				t.Errorf("%s %+v: without sharing %s, with %s", p, opt, want.Digest, got.Digest)
			}
			if werr == nil {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Skip("no corpus")
	}
}

// TestPureSlotShares: equal short bodies get one slot, different ones
// their own, and a long body is never looked up.
func TestPureSlotShares(t *testing.T) {
	defer func(v int) { smallAfter = v }(smallAfter)
	smallAfter = 0
	var st encState
	a := st.pureSlot(SHA256, []byte("T\x00"))
	b := st.pureSlot(SHA256, []byte("T\x00"))
	c := st.pureSlot(SHA256, []byte("T\x01i\x02"))
	long := bytes.Repeat([]byte{'x'}, smallBody+1)
	d, e := st.pureSlot(SHA256, long), st.pureSlot(SHA256, long)
	if a != b || a == c || d == e {
		t.Errorf("slots %d %d %d %d %d: want the first two equal, the rest distinct", a, b, c, d, e)
	}
	if st.pdig.n != 4 {
		t.Errorf("%d digests computed, want 4", st.pdig.n)
	}
}
