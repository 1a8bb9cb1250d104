package diff

// pandas DataFrames in their users' terms: two frames of the same columns,
// row index and block layout whose cells differ are one entry per
// differing block at its first differing cell, named by column and row
// label, root['score'][42], with both values and how many cells of the
// block differ. pkg/array's frame recognizer (the one pk trace labels
// frames with) reads the BlockManager: axes (the column labels and the
// row index) and blocks (arrays with their placement, mgr_locs).

import (
	"slices"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
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

// frames reports the differing cells of two frames a and b at path. The
// blocks it names are left out of the walk that follows (c.skip), which
// still reports whatever else of the frames differs; false when a or b is
// no frame, or their columns, rows or layout differ (the walk names those).
func (c *cmp) frames(a, b *canon.Node, path pathRef) {
	fa, fb := a.Frame(), b.Frame()
	if fa != nil && fb != nil {
		rowLabels(c.docA, a, fa)
		rowLabels(c.docB, b, fb)
	}
	if fa == nil || fb == nil || fa.Rows != fb.Rows || fa.NCols != fb.NCols || len(fa.Blocks) != len(fb.Blocks) || !slices.Equal(fa.Columns, fb.Columns) {
		return
	}
	if c.differs(a.Under(fa.Index), b.Under(fb.Index)) {
		return // another row index: the walk names it
	}
	for i := range fa.Blocks {
		if !slices.Equal(fa.Blocks[i].Locs, fb.Blocks[i].Locs) {
			return
		}
	}
	at := c.paths.String(path)
	for i := range fa.Blocks {
		va, vb := a.Under(fa.Blocks[i].Values), b.Under(fb.Blocks[i].Values)
		if fa.Blocks[i].Ext != nil || fb.Blocks[i].Ext != nil {
			// a pandas extension column (extcells.go)
			if va != nil && vb != nil && c.differs(va, vb) {
				c.extCells(fa, fb, i, a, b, at, false)
			}
			continue
		}
		if va != nil && vb != nil && c.differs(va, vb) && c.withForeign(va, vb, func(va, vb *canon.Node) {
			c.objectCells(fa, i, va, vb, va.Array(), vb.Array(), at) // a joblib str block against a pickled one
		}) {
			continue
		}
		xa, xb := va.Array(), vb.Array()
		if va == nil || vb == nil || xa == nil || xb == nil || !c.differs(va, vb) {
			continue
		}
		if xa.Object() || xb.Object() {
			c.objectCells(fa, i, va, vb, xa, xb, at)
			continue
		}
		e, ok := arrayEntry(at, xa.Descr, xb.Descr, xa.Item, xa.Shape, xb.Shape, xa.Order, xb.Order, arraySrc(c.docA, va, xa), arraySrc(c.docB, vb, xb))
		if ok && e.Elem != nil && fa.Series && len(e.Elem.Index) == 1 {
			// a Series: its element by row label, root[42]
			if row, ok := fa.Row(e.Elem.Index[0]); ok {
				e.Path = at + labelKey(row)
				e.Elem.At = at
				e.NoOffset, e.OffA, e.OffB = false, va.Offset(), vb.Offset()
				if xa.Descr == xb.Descr {
					timeCell(&e, xa.Descr)
				}
				c.add(e)
				if c.skip == nil {
					c.skip = map[pickle.ID]bool{}
				}
				c.skip[va.ID()] = true
			}
			continue
		}
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
		e.Note = cellNote(e.Elem.Differ, e.Elem.Of, len(fa.Blocks[i].Locs))
		if xa.Descr == xb.Descr {
			timeCell(&e, xa.Descr)
		}
		e.NoOffset, e.OffA, e.OffB = false, va.Offset(), vb.Offset()
		c.add(e)
		if c.skip == nil {
			c.skip = map[pickle.ID]bool{}
		}
		c.skip[va.ID()] = true
	}
}

// frameCell is a frame block's values as a raw part holds them (joblib):
// the frame's path, the frame and the block.
type frameCell struct {
	at    string
	f     *array.Frame
	block int
	// ext: the path is of an array of the block's extension array (its
	// data, mask or codes), n the frame's node (of framePaths' view)
	ext bool
	n   *canon.Node
}

// maxFrameScan bounds the nodes framePaths visits.
const maxFrameScan = 1 << 20

// framePaths finds the frames of a joblib file's pickle (on pk-canon/2's
// view, where its arrays are recognised) and gives, by the path of each
// block's values, where its cells are named.
func framePaths(doc *input.Doc, opt canon.Options) map[string]frameCell {
	out := map[string]frameCell{}
	if doc == nil || doc.Format != "joblib" {
		return out
	}
	o := opt
	o.Form = canon.Form2
	o = canon.DocOptions(doc, o)
	for _, p := range doc.Parts {
		if p.Pickle == nil || p.Role != input.RolePickle || len(p.Pickle.Streams) == 0 {
			continue
		}
		v := canon.Normalize(p.Pickle.Streams[0], o)
		type item struct {
			n    *canon.Node
			path string
		}
		seen := map[*canon.Node]bool{}
		queue := []item{{v.Root(), ppath.Root}}
		for len(queue) > 0 && len(seen) < maxFrameScan {
			it := queue[0]
			queue = queue[1:]
			if seen[it.n] {
				continue
			}
			seen[it.n] = true
			if it.n.Kind() == pickle.KindCall {
				if f := it.n.Frame(); f != nil {
					rowLabels(doc, it.n, f)
					if f.Series {
						// its values, and the copy joblib writes of them in
						// the manager's extra state
						for _, p := range seriesPaths() {
							out[it.path+p] = frameCell{at: it.path, f: f, n: it.n}
							extPaths(out, it.path+p, frameCell{at: it.path, f: f, n: it.n})
						}
						continue
					}
					for i := range f.Blocks {
						out[it.path+blockPath(i)] = frameCell{at: it.path, f: f, block: i, n: it.n}
						extPaths(out, it.path+blockPath(i), frameCell{at: it.path, f: f, block: i, n: it.n})
					}
					continue
				}
			}
			for _, k := range viewKids(it.n) {
				if !seen[k.n] {
					queue = append(queue, item{k.n, it.path + k.edge})
				}
			}
		}
		break // the pickle loading returns
	}
	return out
}

// extPaths adds, for an extension array at path values (the values of
// block fc.block), the paths of its arrays a joblib file writes as raw
// parts or nested pickles: a masked array's ._data and ._mask, an
// NDArrayBacked array's ndarray .__getstate__()[1].
func extPaths(out map[string]frameCell, values string, fc frameCell) {
	e := fc.f.Blocks[fc.block].Ext
	if e == nil {
		return
	}
	fc.ext = true
	if e.Kind == 'm' {
		out[values+ppath.Attr("_data")] = fc
		out[values+ppath.Attr("_mask")] = fc
		return
	}
	out[values+ppath.Attr("__getstate__")+"()"+ppath.Index(1)] = fc
}

// rawExt names the cells of a joblib frame's extension column one of
// whose arrays, the raw part at arrPath, changed (extCells over
// framePaths' views, where the frames' other raw parts are read too):
// true when the cells are named, or were already (another array of the
// same column: data and mask).
func (c *cmp) rawExt(arrPath string) bool {
	if c.framesA == nil {
		c.framesA, c.framesB = framePaths(c.docA, c.opt.Canon), framePaths(c.docB, c.opt.Canon)
	}
	ca, okA := c.framesA[arrPath]
	cb, okB := c.framesB[arrPath]
	if !okA || !okB || !ca.ext || !cb.ext || ca.at != cb.at || ca.block != cb.block || ca.n == nil || cb.n == nil {
		return false
	}
	fa, fb := ca.f, cb.f
	if c.extDone[ca.at+extValuesPath(fa.Series, ca.block)] {
		return true
	}
	if fa.Series != fb.Series || fa.Rows != fb.Rows || fa.NCols != fb.NCols || len(fa.Blocks) != len(fb.Blocks) || !slices.Equal(fa.Columns, fb.Columns) ||
		!slices.Equal(fa.Blocks[ca.block].Locs, fb.Blocks[cb.block].Locs) || digestsDiffer(ca.n.Under(fa.Index), cb.n.Under(fb.Index)) {
		return false
	}
	return c.extCells(fa, fb, ca.block, ca.n, cb.n, ca.at, true)
}

// blockPath is the path of block i's values under its frame:
// ._mgr.__reduce__[1][0][i].__reduce__[1][0].
func blockPath(i int) string {
	return ppath.Attr("_mgr") + ppath.Attr("__reduce__") + ppath.Index(1) + ppath.Index(0) + ppath.Index(i) + ppath.Attr("__reduce__") + ppath.Index(1) + ppath.Index(0)
}

// extValuesPath is the path of block i's values under its frame, or of
// a Series' values.
func extValuesPath(series bool, i int) string {
	if series {
		return seriesPaths()[0]
	}
	return blockPath(i)
}

// seriesPaths are the paths of a Series' values under it (pandas'
// SingleBlockManager state: (axes, [values], items, extra), extra holding
// {'0.14.1': {'blocks': [{'values': values, ...}]}}).
func seriesPaths() []string {
	st := ppath.Attr("_mgr") + ppath.Attr("__getstate__") + "()"
	return []string{
		st + ppath.Index(1) + ppath.Index(0),
		st + ppath.Index(3) + ppath.Key(ppath.Str("0.14.1")) + ppath.Key(ppath.Str("blocks")) + ppath.Index(0) + ppath.Key(ppath.Str("values")),
	}
}

// rawCell renames an element entry of a joblib frame block's raw part to
// the cell it is (root['score'][4]), when both sides' frames agree there;
// of a Series to its row (root[42]). An entry of an object block's item
// (Elem.Differ 0: heldObjects) keeps its note.
func (c *cmp) rawCell(e Entry, arrPath string) Entry {
	if e.Elem == nil || len(e.Elem.Index) != 2 && len(e.Elem.Index) != 1 {
		return e
	}
	if c.framesA == nil {
		c.framesA, c.framesB = framePaths(c.docA, c.opt.Canon), framePaths(c.docB, c.opt.Canon)
	}
	ca, okA := c.framesA[arrPath]
	cb, okB := c.framesB[arrPath]
	if !okA || !okB || ca.at != cb.at || ca.block != cb.block {
		return e
	}
	fa, fb := ca.f, cb.f
	if fa.Series || fb.Series {
		if !fa.Series || !fb.Series || len(e.Elem.Index) != 1 || fa.Rows != fb.Rows {
			return e
		}
		row, ok1 := fa.Row(e.Elem.Index[0])
		rowB, ok2 := fb.Row(e.Elem.Index[0])
		if !ok1 || !ok2 || row != rowB {
			return e
		}
		e.Path = ca.at + labelKey(row)
		e.Elem.At = ca.at
		c.rawTimeCell(&e, ca, cb)
		return e
	}
	if ca.ext || cb.ext {
		// a string column's item (its ndarray a nested pickle); other
		// extension arrays' cells are rawExt's
		if !ca.ext || !cb.ext || fa.Blocks[ca.block].Ext.Kind != 'n' || fb.Blocks[cb.block].Ext.Kind != 'n' || len(e.Elem.Index) != 1 || fa.Rows != fb.Rows || fa.NCols != fb.NCols || !slices.Equal(fa.Columns, fb.Columns) {
			return e
		}
		col, ok1 := fa.Column(ca.block, 0)
		row, ok2 := fa.Row(e.Elem.Index[0])
		rowB, ok3 := fb.Row(e.Elem.Index[0])
		if !ok1 || !ok2 || !ok3 || row != rowB {
			return e
		}
		e.Path = ca.at + labelKey(col) + labelKey(row)
		e.Elem.At = ca.at
		return e
	}
	if len(e.Elem.Index) != 2 {
		return e
	}
	if fa.Rows != fb.Rows || fa.NCols != fb.NCols || !slices.Equal(fa.Columns, fb.Columns) || !slices.Equal(fa.Blocks[ca.block].Locs, fb.Blocks[cb.block].Locs) {
		return e
	}
	j, r := e.Elem.Index[0], e.Elem.Index[1]
	col, ok1 := fa.Column(ca.block, int(j))
	row, ok2 := fa.Row(r)
	rowB, ok3 := fb.Row(r)
	if !ok1 || !ok2 || !ok3 || row != rowB {
		return e
	}
	e.Path = ca.at + labelKey(col) + labelKey(row)
	e.Elem.At = ca.at
	if e.Elem.Differ > 0 {
		e.Note = cellNote(e.Elem.Differ, e.Elem.Of, len(fa.Blocks[ca.block].Locs))
		c.rawTimeCell(&e, ca, cb)
	}
	return e
}

// rawTimeCell is timeCell for a joblib block's raw part, whose dtype (with
// its unit) the block's array in framePaths' view gives.
func (c *cmp) rawTimeCell(e *Entry, ca, cb frameCell) {
	if ca.n == nil || cb.n == nil {
		return
	}
	xa := ca.n.Under(ca.f.Blocks[ca.block].Values).Array()
	xb := cb.n.Under(cb.f.Blocks[cb.block].Values).Array()
	if xa != nil && xb != nil && xa.Descr == xb.Descr {
		timeCell(e, xa.Descr)
	}
}

// reignore drops the entries from index from on that an --ignore path
// covers once they were renamed (heldObjects: a joblib object array's
// item to its element or cell, which add did not see).
func (c *cmp) reignore(from int) {
	if len(c.opt.Ignore) == 0 || from < 0 || from >= len(c.entries) {
		return
	}
	keep := c.entries[:from]
	for _, e := range c.entries[from:] {
		covered := false
		for i, ig := range c.opt.Ignore {
			if ppath.Under(e.Path, ig) {
				c.hit[i] = true
				covered = true
			}
		}
		if covered {
			c.ignored++
			continue
		}
		keep = append(keep, e)
	}
	c.entries = keep
}

// cellNote is "1 of 6 cells differ[, in a block of 2 columns]".
func cellNote(differ, of int64, cols int) string {
	n := Thousands(differ) + " of " + Thousands(of) + " cells differ"
	if differ == 1 && of == 1 {
		n = "1 of 1 cell differs"
	}
	if cols > 1 {
		n += ", in a block of " + Thousands(int64(cols)) + " columns"
	}
	return n
}

// objectCells reports the differing cells of block i of two frames (or
// Series) whose values are object arrays of one shape (str columns): one
// entry a cell, root['name'][20], with both values shown short. The block
// is then left out of the walk (c.skip); nothing when a cell has no label.
func (c *cmp) objectCells(f *array.Frame, i int, va, vb *canon.Node, xa, xb *canon.Array, at string) {
	if !xa.Object() || !xb.Object() || xa.Descr != xb.Descr || !slices.Equal(xa.Shape, xb.Shape) {
		return
	}
	la, lb := va.ArrayData(), vb.ArrayData()
	if la == nil || lb == nil || la.NItems() != lb.NItems() {
		return
	}
	ia, ib := la.Items(), lb.Items()
	var es []Entry
	for k := range ia {
		if !c.differs(ia[k], ib[k]) {
			continue
		}
		idx := array.Index(int64(k), xa.Shape, 'C')
		var p string
		switch {
		case f.Series && len(idx) == 1:
			row, ok := f.Row(idx[0])
			if !ok {
				return
			}
			p = at + labelKey(row)
		case !f.Series && len(idx) == 2:
			col, ok1 := f.Column(i, int(idx[0]))
			row, ok2 := f.Row(idx[1])
			if !ok1 || !ok2 {
				return
			}
			p = at + labelKey(col) + labelKey(row)
		default:
			return
		}
		a, b := ia[k], ib[k]
		kind := Changed
		if a.Kind() != b.Kind() {
			kind = TypeChanged
		}
		e := Entry{Path: p, Kind: kind, A: c.short(a), ValA: typed(a), B: c.short(b), ValB: typed(b), OffA: a.Offset(), OffB: b.Offset()}
		if kind == Changed {
			e.A, e.B, e.Note = c.changedShort(a, b)
		}
		es = append(es, e)
	}
	for _, e := range es {
		c.add(e)
	}
	if c.skip == nil {
		c.skip = map[pickle.ID]bool{}
	}
	c.skip[va.ID()] = true
}

// maxRowLabels bounds the bytes of a row Index read from a raw part.
const maxRowLabels = 8 << 20

// rowLabels reads the labels of frame f's int64 row Index when they are a
// raw part of doc (joblib writes the Index's array so), from the file.
func rowLabels(doc *input.Doc, n *canon.Node, f *array.Frame) {
	id, descr := f.RowData()
	if id == pickle.NoID || descr != "<i8" {
		return
	}
	x := n.Under(id).Array()
	if x == nil || x.Raw == nil || x.Raw.Len > maxRowLabels {
		return
	}
	src := rawSrc(doc, x.Raw)
	if src == nil {
		return
	}
	b, ok := src.read(x.Raw.Len)
	if !ok {
		return
	}
	f.SetRowInts(string(b))
}
