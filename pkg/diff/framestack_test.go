package diff

import "testing"

// TestFrameStackRuns: the pass's stack gives back each frame's node, kb
// and kept as pushed, and holds a kb once a run of frames with the same kb
// (a nesting through last children: 4 bytes a frame, not 12).
func TestFrameStackRuns(t *testing.T) {
	type frame struct {
		i, kb int32
		kept  bool
	}
	var want []frame
	var s frameStack
	// 3 runs of 2*chunkLen frames (two blocks each), then single frames
	for r := range int32(3) {
		for k := range int32(2 * chunkLen) {
			want = append(want, frame{i: r*1e6 + k, kb: 10 * r, kept: k%5 == 0})
		}
	}
	for k := range int32(100) {
		want = append(want, frame{i: k, kb: 100 + k, kept: k%2 == 1})
	}
	for _, f := range want {
		s.push(f.i, f.kb, f.kept)
	}
	if s.runs.n != 3+100 {
		t.Errorf("%d runs of kb, want 103", s.runs.n)
	}
	for len(want) > 0 {
		f := want[len(want)-1]
		want = want[:len(want)-1]
		if i, kb, kept := s.top(); i != f.i || kb != f.kb || kept != f.kept {
			t.Fatalf("top (%d, %d, %v), want %+v", i, kb, kept, f)
		}
		s.pop()
	}
	if s.len() != 0 || s.runs.n != 0 {
		t.Errorf("empty stack: %d frames, %d runs", s.len(), s.runs.n)
	}
	s.drop()
	if len(s.ids.blocks)+len(s.runs.blocks) > 2 {
		t.Errorf("dropped stack keeps %d blocks", len(s.ids.blocks)+len(s.runs.blocks))
	}
}
