package diff

import "testing"

// TestFrameStackRuns: the pass's stack gives back each frame's node and
// kb as pushed, the frame below a popped one being the node it was first
// reached from (what pop is told), and holds a kb once a run of frames
// with the same kb (a nesting through last children: no bytes a frame).
func TestFrameStackRuns(t *testing.T) {
	type frame struct{ i, kb int32 }
	var want []frame
	var s frameStack
	// 3 runs of 2*chunkLen frames (two blocks each), then single frames
	for r := range int32(3) {
		for k := range int32(2 * chunkLen) {
			want = append(want, frame{i: r*1e6 + k, kb: 10 * r})
		}
	}
	for k := range int32(100) {
		want = append(want, frame{i: k, kb: 100 + k})
	}
	for _, f := range want {
		s.push(f.i, f.kb)
	}
	if s.runs.n != 3+100 {
		t.Errorf("%d runs of kb, want 103", s.runs.n)
	}
	for len(want) > 0 {
		f := want[len(want)-1]
		want = want[:len(want)-1]
		if i, kb := s.peek(); i != f.i || kb != f.kb {
			t.Fatalf("top (%d, %d), want %+v", i, kb, f)
		}
		below := int32(-1)
		if len(want) > 0 {
			below = want[len(want)-1].i
		}
		s.pop(below)
	}
	if s.len() != 0 || s.runs.n != 0 {
		t.Errorf("empty stack: %d frames, %d runs", s.len(), s.runs.n)
	}
	s.drop()
	if len(s.runs.blocks) > 1 {
		t.Errorf("dropped stack keeps %d blocks", len(s.runs.blocks))
	}
}
