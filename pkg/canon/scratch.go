package canon

import "github.com/pk-tools/pk/pkg/pickle"

// Scratch holds the tables and buffers that the views of one input's
// streams can share when each view is done with before the next stream is
// normalised, as pk hash's stream-by-stream path shares them: an input of a
// million small streams then allocates them once, not once a stream.
type Scratch struct{ s docScratch }

// NormalizeScratch is Normalize reusing scr: the view it returns, and
// everything got from it, is valid until the next call with scr.
func NormalizeScratch(st *pickle.Stream, opt Options, scr *Scratch) *View {
	return normalize(st, opt, &scr.s)
}
