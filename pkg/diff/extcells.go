package diff

// pandas extension columns by cell (pkg/array's ExtensionAt): a changed
// value of a category, nullable Int64/boolean/Float64 or string column is
// named root['col'][row_label] with both values as pandas shows them:
//
//   - a Categorical: its codes compared, the category at each code shown
//     (nan for code -1), when both sides have the same categories; a
//     change of the categories themselves is left to the walk (the
//     dtype's parts), whose codes may then mean other values;
//   - a masked array (IntegerArray, BooleanArray, FloatingArray): a cell
//     is its value, or <NA> where the mask is set; the values under a set
//     mask are no cell's (pandas does not show them), so two arrays that
//     differ only there are left to the walk;
//   - another NDArrayBacked array of a 1-D ndarray (StringArray): its
//     ndarray's element (a string array's object items one entry a cell,
//     as an object block's).
//
// One entry a block at its first differing cell, with the count, as for a
// numpy block (a string block: one a cell).

import (
	"io"
	"slices"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// maxExtRead bounds the bytes of each array of an extension column read
// to name its cells.
const maxExtRead = 64 << 20

// extColumn is one side's extension array of a block, read.
type extColumn struct {
	data  []byte        // the elements (codes, values), nil for objects
	mask  []byte        // a masked array's mask
	items []*canon.Node // an object ndarray's items
	dt    array.DType
	descr string
}

// readExt reads the arrays of extension e of a frame at node n of doc side.
func (c *cmp) readExt(n *canon.Node, e *array.Extension, side byte) (extColumn, bool) {
	doc := c.docA
	if side == 'b' {
		doc = c.docB
	}
	read := func(id pickle.ID) (*canon.Array, []byte, []*canon.Node, bool) {
		m := n.Under(id)
		x := m.Array()
		if m == nil || x == nil || len(x.Shape) != 1 || x.Shape[0] != e.Len {
			return nil, nil, nil, false
		}
		if x.Object() {
			l := m.ArrayData()
			if l == nil || int64(l.NItems()) != e.Len {
				return nil, nil, nil, false
			}
			return x, nil, l.Items(), true
		}
		nb, ok := array.NBytes(x.Shape, x.Item)
		src := arraySrc(doc, m, x)
		if !ok || nb > maxExtRead || src == nil {
			return nil, nil, nil, false
		}
		rc, err := src()
		if err != nil {
			return nil, nil, nil, false
		}
		defer rc.Close()
		b := make([]byte, nb)
		if _, err := io.ReadFull(rc, b); err != nil {
			return nil, nil, nil, false
		}
		return x, b, nil, true
	}
	x, data, items, ok := read(e.Data)
	if !ok {
		return extColumn{}, false
	}
	col := extColumn{data: data, items: items, descr: x.Descr, dt: elemDType(x.Descr, x.Item)}
	if e.Kind == 'm' {
		_, mask, _, ok := read(e.Mask)
		if !ok || int64(len(mask)) != e.Len {
			return extColumn{}, false
		}
		col.mask = mask
	}
	return col, true
}

// extCells names the differing cells of block i of frames fa and fb (at
// nodes a and b, path at), whose values are extension arrays of one
// class; false when it cannot (the walk then names the parts).
func (c *cmp) extCells(fa, fb *array.Frame, i int, a, b *canon.Node, at string) bool {
	ea, eb := fa.Blocks[i].Ext, fb.Blocks[i].Ext
	if ea == nil || eb == nil || ea.Class != eb.Class || ea.Kind != eb.Kind || ea.Len != eb.Len {
		return false
	}
	if ea.Kind == 'c' && c.differs(a.Under(ea.Categories), b.Under(eb.Categories)) {
		return false // other categories: the codes may mean other values
	}
	ca, ok1 := c.readExt(a, ea, 'a')
	cb, ok2 := c.readExt(b, eb, 'b')
	if !ok1 || !ok2 || ca.descr != cb.descr || (ca.items == nil) != (cb.items == nil) {
		return false
	}
	cell := func(r int64) string {
		if fa.Series {
			row, _ := fa.Row(r)
			return at + labelKey(row)
		}
		col, _ := fa.Column(i, 0)
		row, _ := fa.Row(r)
		return at + labelKey(col) + labelKey(row)
	}
	for r := int64(0); r < ea.Len; r++ {
		if _, ok := fa.Row(r); !ok {
			return false
		}
	}
	if _, ok := fa.Column(i, 0); !ok && !fa.Series {
		return false
	}
	va, vb := a.Under(fa.Blocks[i].Values), b.Under(fb.Blocks[i].Values)
	if ca.items != nil {
		// objects (a StringArray): a cell an entry
		var es []Entry
		for r := range ca.items {
			x, y := ca.items[r], cb.items[r]
			if !c.differs(x, y) {
				continue
			}
			kind := Changed
			if x.Kind() != y.Kind() {
				kind = TypeChanged
			}
			e := Entry{Path: cell(int64(r)), Kind: kind, A: c.short(x), ValA: typed(x), B: c.short(y), ValB: typed(y), OffA: x.Offset(), OffB: y.Offset()}
			if kind == Changed {
				e.Note = firstDiff(x, y)
			}
			es = append(es, e)
		}
		if len(es) == 0 {
			return false
		}
		for _, e := range es {
			c.add(e)
		}
		c.skipNode(va)
		return true
	}
	size := int64(ca.dt.Size)
	if size <= 0 || int64(len(ca.data)) != size*ea.Len || int64(len(cb.data)) != size*ea.Len {
		return false
	}
	elem := func(col extColumn, r int64) []byte { return col.data[r*size : (r+1)*size] }
	na := func(col extColumn, r int64) bool { return col.mask != nil && col.mask[r] != 0 }
	var differ, first int64 = 0, -1
	for r := int64(0); r < ea.Len; r++ {
		nA, nB := na(ca, r), na(cb, r)
		if nA != nB || !nA && !slices.Equal(elem(ca, r), elem(cb, r)) {
			if first < 0 {
				first = r
			}
			differ++
		}
	}
	if first < 0 {
		return false // only values under the mask differ: the walk names them
	}
	e := Entry{Path: cell(first), Kind: Changed, OffA: va.Offset(), OffB: vb.Offset(),
		Elem: &Element{Index: []int64{first}, Differ: differ, Of: ea.Len, At: at}, Note: cellNote(differ, ea.Len, 1)}
	show := func(col extColumn, n *canon.Node, ext *array.Extension) (string, []byte) {
		switch {
		case na(col, first):
			return "<NA>", nil
		case ext.Kind == 'c':
			code := col.dt.Decode(elem(col, first)).Int
			switch {
			case code == -1:
				return "nan", nil
			case code >= 0 && code < int64(len(ext.CatItems)):
				x := n.Under(ext.CatItems[code])
				return c.short(x), typed(x)
			}
			if l, ok := ext.Category(code); ok {
				k := labelKey(l)
				return k[1 : len(k)-1], nil
			}
			return "code " + col.dt.Format(elem(col, first)), nil
		}
		return col.dt.Format(elem(col, first)), elemValue(col.dt.Decode(elem(col, first)))
	}
	e.A, e.ValA = show(ca, a, ea)
	e.B, e.ValB = show(cb, b, eb)
	e.Note += ", in " + extName(ea.Class) + " column"
	if ea.Kind == 'c' {
		e.Note += ", codes " + ca.dt.Format(elem(ca, first)) + " → " + cb.dt.Format(elem(cb, first))
	}
	c.add(e)
	c.skipNode(va)
	return true
}

// skipNode leaves node n out of the walk that follows (its entries were
// made here).
func (c *cmp) skipNode(n *canon.Node) {
	if c.skip == nil {
		c.skip = map[pickle.ID]bool{}
	}
	c.skip[n.ID()] = true
}

// extName is how a note names an extension column: by its pandas dtype.
func extName(class string) string {
	switch class[strings.LastIndexByte(class, '.')+1:] {
	case "Categorical":
		return "a category"
	case "IntegerArray":
		return "a nullable integer (Int64)"
	case "BooleanArray":
		return "a nullable boolean"
	case "FloatingArray":
		return "a nullable float (Float64)"
	case "StringArray":
		return "a string"
	case "DatetimeArray":
		return "a datetime"
	case "TimedeltaArray":
		return "a timedelta"
	}
	return "an extension (" + class + ")"
}
