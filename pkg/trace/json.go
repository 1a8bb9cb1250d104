package trace

import (
	"bufio"
	"io"
	"strconv"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// JSON shape (docs/json.md, docs/schema/trace.schema.json): JSON Lines.
// The first record is {"file", "record":"summary", "total"}; then one
// record a node, in the order of the text tree (parents first):
//
//	{"file", "depth", "kind", "code", "label", "role", "path", "size", "self",
//	 "id", "stream", "offset", "op", "dtype", "shape"   (objects; dtype and shape for arrays and tensors)
//	 "ref", "cycle"                                    (references; size 0)
//	 "elided": COUNT                                   (folded small children)
//	 "part", "part_role", "dtype", "shape"             (container parts)
//	 "truncated": true                                 (children hidden by --depth)
//	 "children": COUNT}                                (records that follow at depth+1)
//
// --top writes {"file", "record":"top", "rank", ...the same fields} a
// line, --group {"file", "record":"group", "rank", "path", ...}. It is
// written while walking: nothing is built in memory first.

// MaxJSONPath: longer paths (very deep nesting) are left out of the JSON,
// which would otherwise grow with the square of the depth; "role" still
// says where each node sits.
const MaxJSONPath = 4096

func jsonStr(b *bufio.Writer, s string) {
	// printable ASCII: no copy
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.Write(jsonl.AppendString(b.AvailableBuffer(), s))
}

// jsonArray writes `,"dtype":D,"shape":[...]` (each when known).
func jsonArray(b *bufio.Writer, dtype string, shape []int64) {
	if dtype != "" {
		b.WriteString(`,"dtype":`)
		jsonStr(b, dtype)
	}
	if shape != nil {
		b.WriteString(`,"shape":[`)
		for i, v := range shape {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(itoa(v))
		}
		b.WriteByte(']')
	}
}

// jsonHead writes `{"file":NAME`.
func (t *Tree) jsonHead(b *bufio.Writer) {
	b.WriteString(`{"file":`)
	jsonStr(b, t.File.Name)
}

// jsonSummary writes the first record.
func (t *Tree) jsonSummary(b *bufio.Writer) {
	t.jsonHead(b)
	b.WriteString(`,"record":"summary","total":` + itoa(t.Total) + "}\n")
}

// jsonInt writes `,"name":v`.
func jsonInt(b *bufio.Writer, name string, v int64) {
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	// (in the writer's buffer: a local array passed to Write escapes, an
	// allocation a number, a third of the CPU of a million JSON records)
	b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
}

func (t *Tree) kindName(it Item) string {
	switch it.Kind {
	case ItemFile:
		return "file"
	case ItemStream:
		return "stream"
	case ItemTrailing:
		return "trailing"
	case ItemElided:
		return "elided"
	case ItemRef:
		return "ref"
	case ItemPart:
		return "part"
	}
	if it.sunk != nil {
		return it.sunk.kind
	}
	if _, ok := it.Stream.argFoldOf(it.Node); ok {
		return pickle.KindTuple.String() // (a folded argument tuple)
	}
	return it.Stream.Store.Kind(it.Node).String()
}

// nodeFacts is what a JSON record says of a node besides its lines: its
// number, offset, opcode and, for an array, its dtype and shape.
type nodeFacts struct {
	num, off    int64
	op          string
	dtype       string
	shape       []int64
	arr         bool
	kind        string // (for the top sink's nodes, whose store is gone)
	code, label string
	// for the top sink's nodes (sunkFacts): whether the memo holds it (its
	// line shows "#N"); for the default view's (sink_bounded.go), its
	// display children
	memo bool
	kids int
}

// facts returns the nodeFacts of an ItemNode: from its store, or those
// the top sink kept (sink.go). (A value: a JSON record a node allocated
// one.)
func (it Item) facts() nodeFacts {
	if it.sunk != nil {
		return *it.sunk
	}
	return it.Stream.factsOf(it.Node)
}

// factsOf returns the nodeFacts of node n (code and label left empty).
func (st *StreamTree) factsOf(n pickle.ID) nodeFacts {
	s := st.Store
	f := nodeFacts{num: st.numOf(n), off: s.Offset(n), op: s.Op(n).String(), kind: s.Kind(n).String()}
	if _, ok := st.argFoldOf(n); ok {
		f.kind = pickle.KindTuple.String() // (a folded argument tuple)
	}
	f.dtype, f.shape, f.arr = st.arrayInfo(n)
	return f
}

// jsonFields writes the fields of it from "kind" on: its names, its path
// (when it is at most MaxJSONPath long) and its sizes and facts.
func (t *Tree) jsonFields(b *bufio.Writer, it Item) {
	t.jsonNames(b, it)
	if it.PathLen() <= MaxJSONPath {
		b.WriteString(jsonPathField)
		jsonStr(b, it.Path())
	}
	t.jsonFacts(b, it)
}

// jsonPathField is what a record's path follows.
const jsonPathField = `,"path":`

// jsonNames writes the fields of it before its path: "kind", "code",
// "label" and "role".
func (t *Tree) jsonNames(b *bufio.Writer, it Item) {
	b.WriteString(`,"kind":`)
	jsonStr(b, t.kindName(it))
	if it.Kind != ItemElided {
		var code, label string
		if it.Kind == ItemRef {
			// (its node's label, without Label's "#N code": one describe)
			code = t.Code(it)
			_, label = it.Stream.describe(it.Node)
		} else {
			code, label = t.codeLabel(it)
		}
		b.WriteString(`,"code":`)
		jsonStr(b, code)
		b.WriteString(`,"label":`)
		jsonStr(b, label)
	}
	b.WriteString(`,"role":`)
	jsonStr(b, it.Role)
}

// jsonFacts writes the fields of it after its path: "size", "self" and
// those of its kind.
func (t *Tree) jsonFacts(b *bufio.Writer, it Item) {
	jsonInt(b, "size", it.Size)
	jsonInt(b, "self", it.Self)
	switch it.Kind {
	case ItemNode:
		f := it.facts()
		jsonInt(b, "id", f.num)
		jsonInt(b, "stream", int64(it.Stream.Store.Index))
		jsonInt(b, "offset", f.off)
		b.WriteString(`,"op":`)
		jsonStr(b, f.op)
		if f.arr {
			jsonArray(b, f.dtype, f.shape)
		}
	case ItemRef:
		jsonInt(b, "ref", it.Stream.numOf(it.Node))
		jsonInt(b, "stream", int64(it.Stream.Store.Index))
		b.WriteString(`,"cycle":`)
		b.WriteString(strconv.FormatBool(it.Cycle))
		if it.Count > 1 {
			b.WriteString(`,"count":` + itoa(int64(it.Count)) + `,"role_end":`)
			jsonStr(b, it.RoleEnd)
		}
	case ItemStream:
		b.WriteString(`,"stream":` + itoa(int64(it.Index)) + `,"offset":` + itoa(it.Stream.Store.Begin) + `,"protocol":` + itoa(int64(it.Stream.Store.Proto)))
	case ItemElided:
		b.WriteString(`,"elided":` + itoa(int64(it.Count)))
	case ItemTrailing:
		b.WriteString(`,"offset":` + itoa(t.File.Trailing.Offset))
	case ItemPart:
		if pt := it.part; pt.idx >= 0 {
			p := &t.Doc.Parts[pt.idx]
			b.WriteString(`,"part":`)
			jsonStr(b, p.Name)
			b.WriteString(`,"part_role":`)
			jsonStr(b, string(p.Role))
			if r := p.Raw; r != nil && r.DType != "" {
				sh := r.Shape
				if sh == nil {
					sh = []int64{}
				}
				jsonArray(b, r.DType, sh)
			}
			if pt.ref {
				b.WriteString(`,"counted_elsewhere":true`)
			}
		}
	}
}

// WriteJSON writes the tree from start as JSON Lines: the summary record,
// then a record a node.
func (t *Tree) WriteJSON(w io.Writer, start Item, opt Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	t.jsonSummary(b)
	if t.Element != nil {
		t.jsonElement(b, t.Element)
	}
	t.walk(start, opt, func(v *Visit) { t.jsonVisit(b, v) }, func(v *Visit) {}, false)
	return b.Flush()
}

// jsonVisit writes the record of one line of a walk.
func (t *Tree) jsonVisit(b *bufio.Writer, v *Visit) {
	t.jsonDepth(b, v.Depth)
	t.jsonFields(b, v.Item)
	jsonEnd(b, v)
}

// jsonDepth writes the start of a line's record: `{"file":NAME,"depth":D`.
func (t *Tree) jsonDepth(b *bufio.Writer, depth int) {
	t.jsonHead(b)
	jsonInt(b, "depth", int64(depth))
}

// jsonEnd writes the end of a line's record: what the walk says of its
// children, and the newline.
func jsonEnd(b *bufio.Writer, v *Visit) {
	if v.Truncated {
		b.WriteString(`,"truncated":true`)
	}
	if v.Kids > 0 {
		jsonInt(b, "children", int64(v.Kids))
	}
	b.WriteString("}\n")
}

// WriteTopJSON writes the n largest objects as JSON Lines: the summary
// record, then a record an object, largest first.
func (t *Tree) WriteTopJSON(w io.Writer, n int) error {
	b := bufio.NewWriter(w)
	t.jsonSummary(b)
	for i, it := range t.Top(n) {
		t.jsonHead(b)
		b.WriteString(`,"record":"top"`)
		jsonInt(b, "rank", int64(i+1))
		t.jsonFields(b, it)
		b.WriteString("}\n")
	}
	return b.Flush()
}

// jsonElement writes the element record of a --path that names an element
// of an array or a cell of a frame: {"file", "record":"element", "path",
// "at", "kind", "dtype", "shape", "index", "value" (typed) and "repr", or
// "note" when the value is not read; a cell's "frame", "column", "row",
// "row_position"; a torch storage's element's "tensor"}.
func (t *Tree) jsonElement(b *bufio.Writer, e *Element) {
	t.jsonHead(b)
	b.WriteString(`,"record":"element","path":`)
	jsonStr(b, e.Path)
	b.WriteString(`,"at":`)
	jsonStr(b, e.At)
	b.WriteString(`,"kind":`)
	jsonStr(b, e.Kind)
	if e.Tensor != "" {
		b.WriteString(`,"tensor":`)
		jsonStr(b, e.Tensor)
	}
	jsonArray(b, e.DType, e.Shape)
	b.WriteString(`,"index":[`)
	for i, v := range e.Index {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(itoa(v))
	}
	b.WriteByte(']')
	if e.Frame != "" {
		b.WriteString(`,"frame":`)
		jsonStr(b, e.Frame)
		if e.Column != "" {
			b.WriteString(`,"column":`)
			jsonStr(b, e.Column)
		}
		b.WriteString(`,"row":`)
		jsonStr(b, e.Row)
		jsonInt(b, "row_position", e.RowPos)
	}
	if e.Value != "" {
		if v := elemJSON(e.Typed); e.HasTyped && v != nil {
			b.WriteString(`,"value":`)
			b.Write(v)
		}
		b.WriteString(`,"repr":`)
		jsonStr(b, e.Value)
	} else if e.Why != "" {
		b.WriteString(`,"note":`)
		jsonStr(b, e.Why)
	}
	b.WriteString("}\n")
}

// elemJSON is an element as a typed JSON value (pkg/jsonl), nil for the
// kinds that have none (complex, raw bytes): as pk diff's value_a.
func elemJSON(v array.Value) []byte { return jsonl.Element(v) }
