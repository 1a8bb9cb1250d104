package trace

import (
	"github.com/pk-tools/pk/pkg/input"
)

// A compressed bare pickle read through its spool (input.SpoolDecompressed:
// the decompressed bytes in a temporary file, which the paths for bare
// files read as a bare file). NewDoc gives such a file two lines above its
// streams, the File ("f.pkl.gz (gzip+pickle, 1 part; N bytes on disk,
// sizes are decompressed)") and its one pickle part ("pickle (N streams)"),
// where a bare file shows its only stream, or a File line of its streams.
// Compressed gives a tree the bare paths made of the spool those two
// lines, so that it prints what NewDoc's tree of the compressed file
// prints.

// Compressed makes t, the tree a path for bare files made of sp's
// decompressed bytes (FastBounded, EachBounded), the tree of the
// compressed file sp was made from, as NewDoc gives it: its root the
// File, with the one pickle part of the streams below it. A bounded view
// the fast path computed (FastBounded, for lines-2 lines: the two lines
// above the stream take two of the budget, and the rest is chosen as from
// the stream) becomes the compressed file's view of lines lines. It
// returns false when it cannot give that tree exactly (trailing bytes
// after the streams, a bounded view that does not show the stream's
// result): the caller reads the file through input.Open.
func (t *Tree) Compressed(sp *input.Spool, lines int) bool {
	if t.Doc != nil || sp == nil || t.File.Trailing != nil {
		// (trailing bytes: the reason they are not a pickle is worded
		// from a reader that knows the stream's size, the spool's, where
		// Open's does not: "exceeds the 3 bytes left" against "truncated
		// inside the argument")
		return false
	}
	t.File.Name = sp.Name
	t.Doc = &input.Doc{Path: sp.Name, Format: sp.Format(), Compression: sp.Compression, Size: sp.OnDisk,
		Parts: []input.Part{{Role: input.RolePickle, Pickle: t.File, Of: -1}}}
	n := max(t.streamCount(), 1) // (the whole view's fast tree holds none: FastWholeCompressed)
	pt := &partItem{idx: 0, code: CodePart, pickle: t.Streams, trailing: t.File.Trailing,
		label: "pickle (" + itoa(int64(n)) + " stream" + plural(n) + ")"}
	t.parts = [][]*StreamTree{t.Streams}
	t.top = []Item{{Kind: ItemPart, part: pt, Size: t.Total}}
	if b := t.bnd; b != nil {
		// the fast path's view of the one stream, from its line (start:
		// its aggregate line was counted before its result was shown)
		r := b.root
		if r.it.Kind != ItemStream || !r.start || len(r.shown) == 0 || b.lines+2 != lines {
			return false
		}
		r.start = false
		part := &bnode{it: t.top[0], kids: 1, shown: []*bnode{r}}
		file := &bnode{it: t.Root(), kids: 1, shown: []*bnode{part}, start: true}
		t.bnd = &boundedView{it: file.it, lines: lines, root: file}
	}
	return true
}

// compressedPart reports whether it is the one pickle part of a tree
// Compressed made, whose streams are only some of the file's (each.go).
func (t *Tree) compressedPart(it Item) bool {
	return it.Kind == ItemPart && it.part != nil && t.Doc != nil && len(t.top) == 1 && it.part == t.top[0].part &&
		t.nStreams > 0
}
