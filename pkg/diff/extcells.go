package diff

// pandas extension columns by cell (pkg/array's ExtensionAt): a changed
// value of a category, nullable Int64/boolean/Float64, string, datetime
// (naive or tz-aware) or timedelta column is named root['col'][row_label]
// with both values as pandas shows them:
//
//   - a Categorical: each row's value is its code's category (nan for
//     code -1); with the same categories on both sides the codes are
//     compared and shown; when the categories changed, each side's code is
//     mapped through its own categories and the values compared
//     ("categories changed: 2 → 3"). Categories that changed with no
//     row's value changing (a reorder, an unused category) are left to
//     the walk (the dtype's parts and the codes);
//   - a masked array (IntegerArray, BooleanArray, FloatingArray): a cell
//     is its value, or <NA> where the mask is set; values that differ
//     only under a set mask (pandas shows <NA> on both sides) are one
//     entry at the first such cell, "- <NA> + <NA> (a value under the
//     mask: 5 → 7)", or a count in the note of a cell that differs;
//   - a DatetimeArray or TimedeltaArray (2-D (1, rows) in a frame's
//     block): its element as str(Timestamp) or str(Timedelta), in the
//     side's own time zone ("2021-01-01 00:00:00+00:00", NaT);
//   - another NDArrayBacked array of a 1-D ndarray (StringArray): its
//     ndarray's element (a string array's object items one entry a cell,
//     as an object block's).
//
// One entry a block at its first differing cell, with the count, as for a
// numpy block (a string block: one a cell). What the entry names (the
// codes, values, mask; the categories when they changed) is left out of
// the walk; the rest of the array (a dtype's time zone, _freq, ordered) is
// still compared there.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	ppath "github.com/pk-tools/pk/pkg/path"
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
	// foreign: items are of a nested pickle's view (joblib), not of the
	// walk's (compared by digest)
	foreign bool
	dt      array.DType
	descr   string
}

// readExt reads the arrays of extension e of a frame at node n of doc side.
func (c *cmp) readExt(n *canon.Node, e *array.Extension, side byte) (extColumn, bool) {
	doc := c.docA
	if side == 'b' {
		doc = c.docB
	}
	foreign := false
	read := func(id pickle.ID) (*canon.Array, []byte, []*canon.Node, bool) {
		m := n.Under(id)
		if f := m.Foreign(); f != nil {
			m, foreign = f, true // a joblib object array: the array its nested pickle makes
		}
		x := m.Array()
		if m == nil || x == nil {
			return nil, nil, nil, false
		}
		if !(len(x.Shape) == 1 && x.Shape[0] == e.Len || e.Data2D && id == e.Data && len(x.Shape) == 2 && x.Shape[0] == 1 && x.Shape[1] == e.Len) {
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
		b, ok := src.read(nb)
		if !ok {
			return nil, nil, nil, false
		}
		return x, b, nil, true
	}
	x, data, items, ok := read(e.Data)
	if !ok {
		return extColumn{}, false
	}
	col := extColumn{data: data, items: items, foreign: foreign, descr: x.Descr, dt: elemDType(x.Descr, x.Item)}
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
// class; false when it cannot (the walk then names the parts). raw: the
// nodes are of views of their own (a joblib file's frames, framePaths),
// compared by digest, and nothing is left out of the walk.
func (c *cmp) extCells(fa, fb *array.Frame, i int, a, b *canon.Node, at string, raw bool) bool {
	ea, eb := fa.Blocks[i].Ext, fb.Blocks[i].Ext
	if ea == nil || eb == nil || ea.Class != eb.Class || ea.Kind != eb.Kind || ea.Len != eb.Len || ea.Delta != eb.Delta {
		return false
	}
	key := at + extValuesPath(fa.Series, i)
	if c.extDone[key] {
		return true // (named already: a joblib column's data and mask)
	}
	differs := c.differs
	if raw {
		differs = digestsDiffer
	}
	skip := func(n *canon.Node) {
		if !raw && n != nil {
			c.skipNode(n)
		}
	}
	catsChanged := false
	var catsA, catsB []*canon.Node
	if ea.Kind == 'c' {
		c.catInts(a, ea, 'a')
		c.catInts(b, eb, 'b')
		catsA, catsB = catNodes(a, ea), catNodes(b, eb)
		catsChanged = differs(a.Under(ea.Categories), b.Under(eb.Categories))
	}
	ca, ok1 := c.readExt(a, ea, 'a')
	cb, ok2 := c.readExt(b, eb, 'b')
	if !ok1 || !ok2 || ca.descr != cb.descr && !catsChanged || (ca.items == nil) != (cb.items == nil) {
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
		if ca.foreign || cb.foreign {
			differs = digestsDiffer
		}
		var es []Entry
		for r := range ca.items {
			x, y := ca.items[r], cb.items[r]
			if !differs(x, y) {
				continue
			}
			kind := Changed
			if x.Kind() != y.Kind() {
				kind = TypeChanged
			}
			e := Entry{Path: cell(int64(r)), Kind: kind, A: c.short(x), ValA: typed(x), B: c.short(y), ValB: typed(y), OffA: x.Offset(), OffB: y.Offset()}
			if kind == Changed {
				e.A, e.B, e.Note = c.changedShort(x, y)
			}
			es = append(es, e)
		}
		if len(es) == 0 {
			return false
		}
		for _, e := range es {
			c.add(e)
		}
		skip(a.Under(ea.Data))
		c.done(key)
		return true
	}
	sa, sb := int64(ca.dt.Size), int64(cb.dt.Size)
	if sa <= 0 || sb <= 0 || int64(len(ca.data)) != sa*ea.Len || int64(len(cb.data)) != sb*ea.Len {
		return false
	}
	elemA := func(r int64) []byte { return ca.data[r*sa : (r+1)*sa] }
	elemB := func(r int64) []byte { return cb.data[r*sb : (r+1)*sb] }
	na := func(col extColumn, r int64) bool { return col.mask != nil && col.mask[r] != 0 }
	var keysA, keysB []string
	if catsChanged {
		keysA, keysB = catKeys(catsA, ea), catKeys(catsB, eb)
	}
	var differ, first, hidden, firstHidden int64 = 0, -1, 0, -1
	for r := int64(0); r < ea.Len; r++ {
		nA, nB := na(ca, r), na(cb, r)
		d := false
		switch {
		case catsChanged:
			// each side's code through its own categories
			ka, okA := catKey(ca, keysA, elemA(r))
			kb, okB := catKey(cb, keysB, elemB(r))
			if !okA || !okB {
				return false
			}
			d = ka != kb
		case nA != nB:
			d = true
		case nA:
			if !slices.Equal(elemA(r), elemB(r)) {
				// under the mask on both sides: pandas shows <NA>
				if firstHidden < 0 {
					firstHidden = r
				}
				hidden++
			}
		default:
			d = !slices.Equal(elemA(r), elemB(r))
		}
		if d {
			if first < 0 {
				first = r
			}
			differ++
		}
	}
	var e Entry
	switch {
	case differ > 0:
		e = Entry{Path: cell(first), Kind: Changed, OffA: va.Offset(), OffB: vb.Offset(),
			Elem: &Element{Index: []int64{first}, Differ: differ, Of: ea.Len, At: at}, Note: cellNote(differ, ea.Len, 1)}
		e.A, e.ValA = c.extShow(ca, catsA, ea, elemA(first), na(ca, first))
		e.B, e.ValB = c.extShow(cb, catsB, eb, elemB(first), na(cb, first))
		e.Note += ", in " + extColName(ea, eb) + " column"
		switch {
		case catsChanged:
			e.Note += "; " + catsChange(catsA, catsB, ea, eb)
		case ea.Kind == 'c':
			e.Note += ", codes " + ca.dt.Format(elemA(first)) + " → " + cb.dt.Format(elemB(first))
		}
		if hidden > 0 {
			e.Note += "; and " + Thousands(hidden) + " value" + plural(int(hidden)) + " under the mask"
		}
	case hidden > 0:
		// only values under a set mask differ (pandas shows <NA> for
		// both): named at the first, with both values
		r := firstHidden
		e = Entry{Path: cell(r), Kind: Changed, A: "<NA>", B: "<NA>", OffA: va.Offset(), OffB: vb.Offset(),
			Elem: &Element{Index: []int64{r}, Differ: hidden, Of: ea.Len, At: at}}
		x, y := ca.dt.Format(elemA(r)), cb.dt.Format(elemB(r))
		if hidden == 1 {
			e.Note = "a value under the mask: " + x + " → " + y
		} else {
			e.Note = Thousands(hidden) + " of " + Thousands(ea.Len) + " values under the mask differ, the first " + x + " → " + y
		}
	case catsChanged:
		// every row's value the same, the categories changed (reordered,
		// one added or removed unused): one entry at the categories
		e = Entry{Path: at + extValuesPath(fa.Series, i) + ppath.Attr("__getstate__") + "()" + ppath.Index(0) + ppath.Attr("categories"), Kind: Changed,
			A: c.catsText(catsA, ea), B: c.catsText(catsB, eb), OffA: a.Under(ea.Categories).Offset(), OffB: b.Under(eb.Categories).Offset()}
		e.Note = "every cell's value is the same; " + catsChange(catsA, catsB, ea, eb)
		recoded := int64(0)
		for r := int64(0); r < ea.Len; r++ {
			if ca.dt.Decode(elemA(r)).Int != cb.dt.Decode(elemB(r)).Int {
				recoded++
			}
		}
		if recoded > 0 {
			e.Note += ", and " + Thousands(recoded) + " of " + Thousands(ea.Len) + " codes with them"
		}
	default:
		e.Path = ""
	}
	// another time zone (both read): one entry at the dtype's tz; a naive
	// column against a tz-aware one: at the dtype
	tzChanged := ea.Kind == 't' && ea.TZ != nil && eb.TZ != nil && ea.TZOK && eb.TZOK && ea.TZ.String() != eb.TZ.String()
	awareChanged := ea.Kind == 't' && !ea.Delta && (ea.TZ == nil) != (eb.TZ == nil) && ea.DType != pickle.NoID && eb.DType != pickle.NoID
	if e.Path == "" && !tzChanged && !awareChanged {
		return false
	}
	if tzChanged || awareChanged {
		dtype := at + extValuesPath(fa.Series, i) + ppath.Attr("__getstate__") + "()" + ppath.Index(0)
		var d Entry
		var na, nb *canon.Node
		if awareChanged {
			d = Entry{Path: dtype, Kind: Changed, A: datetimeDType(ea.Unit, ea.TZ), B: datetimeDType(eb.Unit, eb.TZ), Note: "the dtype of a datetime column"}
			na, nb = a.Under(ea.DType), b.Under(eb.DType)
		} else {
			d = Entry{Path: dtype + ppath.Attr("tz"), Kind: Changed, A: ea.TZ.String(), B: eb.TZ.String(), Note: "the time zone of a datetime column"}
			na, nb = a.Under(ea.TZNode), b.Under(eb.TZNode)
		}
		d.OffA, d.OffB = na.Offset(), nb.Offset()
		if e.Path == "" && tzChanged {
			d.Note += "; every cell's instant is the same"
		} else if e.Path == "" {
			d.Note += "; every cell's int64 count is the same"
		}
		c.add(d)
		skip(na)
		if e.Path == "" {
			c.done(key)
			return true
		}
	}
	if ea.Kind == 't' && !ea.Delta && ea.TZ != nil || eb.Kind == 't' && !eb.Delta && eb.TZ != nil {
		if !tzShown(ea) || !tzShown(eb) {
			e.Note += "; a time zone not read, shown in UTC"
		}
	}
	c.add(e)
	skip(a.Under(ea.Data))
	if ea.Kind == 'm' {
		skip(a.Under(ea.Mask))
	}
	if catsChanged {
		skip(a.Under(ea.Categories))
	}
	c.done(key)
	return true
}

// done records that the cells of the extension column at key (its values'
// path) are named.
func (c *cmp) done(key string) {
	if c.extDone == nil {
		c.extDone = map[string]bool{}
	}
	c.extDone[key] = true
}

// tzShown: a tz-aware column's values are shown in its own zone.
func tzShown(e *array.Extension) bool {
	if e.TZ == nil {
		return true
	}
	_, ok := array.FormatTimestamp(0, e.Unit, e.TZ)
	return e.TZOK && ok
}

// digestsDiffer compares two nodes of any views by their canonical
// digests.
func digestsDiffer(a, b *canon.Node) bool {
	if a == nil || b == nil {
		return a != b
	}
	da, db := a.Digest(), b.Digest()
	return len(da) == 0 || !bytes.Equal(da, db)
}

// catInts reads the labels of a Categorical's int64 categories whose
// data is no text of the graph (a joblib raw part), from the file.
func (c *cmp) catInts(n *canon.Node, e *array.Extension, side byte) {
	if !e.CatInts() {
		return
	}
	doc := c.docA
	if side == 'b' {
		doc = c.docB
	}
	m := n.Under(e.CatData)
	x := m.Array()
	if x == nil || len(x.Shape) != 1 || x.Shape[0] != e.NCats || x.Descr != "<i8" {
		return
	}
	src := arraySrc(doc, m, x)
	if src == nil {
		return
	}
	b, ok := src.read(8 * e.NCats) // (NCats at most maxCategories)
	if !ok {
		return
	}
	e.SetCatInts(string(b))
}

// catsChange says how two Categoricals' categories differ: "categories
// changed: 2 → 3", "categories reordered" (the same ones in another
// order).
func catsChange(catsA, catsB []*canon.Node, ea, eb *array.Extension) string {
	if ea.NCats == eb.NCats {
		ka, kb := catKeys(catsA, ea), catKeys(catsB, eb)
		slices.Sort(ka)
		slices.Sort(kb)
		if !slices.Contains(ka, "") && slices.Equal(ka, kb) {
			return "categories reordered"
		}
	}
	return "categories changed: " + Thousands(ea.NCats) + " → " + Thousands(eb.NCats)
}

// maxCatsShown bounds the categories an entry lists.
const maxCatsShown = 8

// catsText lists a Categorical's categories as Python shows a list of
// them, the first maxCatsShown: ['a', 'b'], [5, 7, 9].
func (c *cmp) catsText(cats []*canon.Node, e *array.Extension) string {
	var parts []string
	for i := int64(0); i < e.NCats && i < maxCatsShown; i++ {
		switch {
		case i < int64(len(cats)):
			parts = append(parts, shortValue(cats[i], 24))
		case i < int64(len(e.CatLabels)):
			k := labelKey(e.CatLabels[i])
			parts = append(parts, k[1:len(k)-1])
		default:
			return Thousands(e.NCats) + " categories"
		}
	}
	if e.NCats > maxCatsShown {
		parts = append(parts, "… "+Thousands(e.NCats-maxCatsShown)+" more")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// catNodes are the categories of Categorical e (at frame node n) as
// nodes, when they are an object Index: of n's view, or of a joblib
// file's nested pickle (CatData); nil otherwise.
func catNodes(n *canon.Node, e *array.Extension) []*canon.Node {
	if e.CatItems != nil {
		out := make([]*canon.Node, len(e.CatItems))
		for i, id := range e.CatItems {
			out[i] = n.Under(id)
		}
		return out
	}
	if e.CatData == pickle.NoID {
		return nil
	}
	m := n.Under(e.CatData)
	if f := m.Foreign(); f != nil {
		m = f
	}
	x := m.Array()
	if x == nil || !x.Object() || len(x.Shape) != 1 || x.Shape[0] != e.NCats {
		return nil
	}
	l := m.ArrayData()
	if l == nil || int64(l.NItems()) != e.NCats {
		return nil
	}
	return l.Items()
}

// catKeys are what a Categorical's categories are, comparable across two
// sides' categories: a category's digest or label ("" when not read).
func catKeys(cats []*canon.Node, e *array.Extension) []string {
	out := make([]string, e.NCats)
	for i := range out {
		switch {
		case i < len(cats):
			out[i] = "n" + string(cats[i].Digest())
		case i < len(e.CatLabels):
			out[i] = "l" + labelKey(e.CatLabels[i])
		}
	}
	return out
}

// catKey is what a Categorical's element (a code) means: nan or its
// category's key (catKeys); false when the category is not read.
func catKey(col extColumn, keys []string, elem []byte) (string, bool) {
	code := col.dt.Decode(elem).Int
	switch {
	case code == -1:
		return "nan", true
	case code >= 0 && code < int64(len(keys)) && keys[code] != "":
		return keys[code], true
	}
	return "", false
}

// extShow is one side's cell as pandas shows it: <NA> under a set mask, a
// category (nan for code -1), a datetime or timedelta, the element.
func (c *cmp) extShow(col extColumn, cats []*canon.Node, e *array.Extension, elem []byte, na bool) (string, json.RawMessage) {
	switch {
	case na:
		return "<NA>", nil
	case e.Kind == 'c':
		code := col.dt.Decode(elem).Int
		switch {
		case code == -1:
			return "nan", nil
		case code >= 0 && code < int64(len(cats)):
			return c.short(cats[code]), typed(cats[code])
		}
		if l, ok := e.Category(code); ok {
			k := labelKey(l)
			return k[1 : len(k)-1], nil
		}
		return "code " + col.dt.Format(elem), nil
	case e.Kind == 't':
		v := col.dt.Decode(elem)
		s, _ := e.FormatTime(v.Int)
		return s, elemValue(v)
	}
	return col.dt.Format(elem), elemValue(col.dt.Decode(elem))
}

// skipNode leaves node n out of the walk that follows (its entries were
// made here).
func (c *cmp) skipNode(n *canon.Node) {
	if c.skip == nil {
		c.skip = map[pickle.ID]bool{}
	}
	c.skip[n.ID()] = true
}

// extColName is how a note names an extension column: by its pandas
// dtype.
func extColName(e, eb *array.Extension) string {
	class := e.Class
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
		return timeColName(false, e.Unit, e.TZ, eb.TZ)
	case "TimedeltaArray":
		return timeColName(true, e.Unit, nil, nil)
	}
	return "an extension (" + class + ")"
}

// timeColName names a datetime or timedelta column by its pandas dtype:
// "a datetime64[ns, UTC]", "a datetime64[ns, UTC → Europe/Paris]" (two
// sides' zones), "a timedelta64[ns]".
func timeColName(delta bool, unit string, tzA, tzB *array.TZ) string {
	if delta {
		return "a timedelta64" + unit
	}
	switch {
	case tzA != nil && tzB != nil && tzA.String() != tzB.String():
		return "a datetime64[" + strings.Trim(unit, "[]") + ", " + tzA.String() + " → " + tzB.String() + "]"
	case (tzA == nil) != (tzB == nil):
		return "a " + datetimeDType(unit, tzA) + " → " + datetimeDType(unit, tzB)
	}
	return "a " + datetimeDType(unit, tzA)
}

// datetimeDType is pandas' name of a datetime dtype: datetime64[ns],
// datetime64[ns, UTC].
func datetimeDType(unit string, tz *array.TZ) string {
	u := strings.Trim(unit, "[]")
	if tz == nil {
		return "datetime64[" + u + "]"
	}
	return "datetime64[" + u + ", " + tz.String() + "]"
}

// timeCell shows the values of a cell entry of a numpy datetime64 or
// timedelta64 block (pandas before 1.3 wrote such columns so) as pandas
// shows them, str(Timestamp) or str(Timedelta), from the entry's typed
// values (the int64 counts), and names the column's dtype in the note.
func timeCell(e *Entry, descr string) {
	d, ok := array.ParseDType(descr)
	if !ok || d.Size != 8 || d.Kind != 'M' && d.Kind != 'm' {
		return
	}
	show := func(v json.RawMessage) (string, bool) {
		x, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return "", false
		}
		return array.FormatTime(descr, x, nil)
	}
	a, okA := show(e.ValA)
	b, okB := show(e.ValB)
	if !okA || !okB {
		return
	}
	e.A, e.B = a, b
	e.Note += ", in " + timeColName(d.Kind == 'm', d.Unit, nil, nil) + " column"
}
