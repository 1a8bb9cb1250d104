package diff

// pandas DataFrames in their users' terms: two frames of the same columns,
// row index and block layout whose cells differ are one entry per
// differing block at its first differing cell, named by column and row
// label, root['score'][42], with both values and how many cells of the
// block differ. pkg/array's frame recognizer (the one pk trace labels
// frames with) reads the BlockManager: axes (the column labels and the
// row index) and blocks (arrays with their placement, mgr_locs).

import (
	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// labelKey is the path key of a frame label.
func labelKey(l array.Label) string {
	switch l.Kind {
	case 'i':
		return ppath.Key(ppath.Int(l.Int))
	case 'f':
		return ppath.Key(ppath.Float(l.Float))
	case 's':
		return ppath.Key(ppath.Str(l.Str))
	case 'b':
		return ppath.Key(ppath.Bool(l.Int != 0))
	}
	return ppath.Key(ppath.None())
}

func labelsEq(a, b []array.Label) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// frames reports the differing cells of two frames a and b at path. The
// blocks it names are left out of the walk that follows (c.skip), which
// still reports whatever else of the frames differs; false when a or b is
// no frame, or their columns, rows or layout differ (the walk names those).
func (c *cmp) frames(a, b *canon.Node, path pathRef) {
	fa, fb := a.Frame(), b.Frame()
	if fa == nil || fb == nil || fa.Rows != fb.Rows || fa.NCols != fb.NCols || len(fa.Blocks) != len(fb.Blocks) || !labelsEq(fa.Columns, fb.Columns) {
		return
	}
	if c.differs(a.Under(fa.Index), b.Under(fb.Index)) {
		return // another row index: the walk names it
	}
	for i := range fa.Blocks {
		if !slicesEq(fa.Blocks[i].Locs, fb.Blocks[i].Locs) {
			return
		}
	}
	at := c.paths.String(path)
	for i := range fa.Blocks {
		va, vb := a.Under(fa.Blocks[i].Values), b.Under(fb.Blocks[i].Values)
		xa, xb := va.Array(), vb.Array()
		if va == nil || vb == nil || xa == nil || xb == nil || xa.Object() || xb.Object() || !c.differs(va, vb) {
			continue
		}
		e, ok := arrayEntry(at, xa.Descr, xb.Descr, xa.Item, xa.Shape, xb.Shape, xa.Order, xb.Order, arraySrc(c.docA, va, xa), arraySrc(c.docB, vb, xb))
		if !ok || e.Elem == nil || len(e.Elem.Index) != 2 {
			continue
		}
		col, ok1 := fa.Column(i, int(e.Elem.Index[0]))
		row, ok2 := fa.Row(e.Elem.Index[1])
		if !ok1 || !ok2 {
			continue
		}
		e.Path = at + labelKey(col) + labelKey(row)
		e.Elem.At = at
		e.Note = Thousands(e.Elem.Differ) + " of " + Thousands(e.Elem.Of) + " cells differ"
		if len(fa.Blocks[i].Locs) == 1 && e.Elem.Differ == 1 && e.Elem.Of == 1 {
			e.Note = "1 of 1 cell differs"
		}
		if len(fa.Blocks[i].Locs) > 1 {
			e.Note += ", in a block of " + Thousands(int64(len(fa.Blocks[i].Locs))) + " columns"
		}
		e.NoOffset, e.OffA, e.OffB = false, va.Offset(), vb.Offset()
		c.add(e)
		if c.skip == nil {
			c.skip = map[pickle.ID]bool{}
		}
		c.skip[va.ID()] = true
	}
}
