package trace

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
)

// JSON shape (docs/pk-trace.md):
//
//	{"file": NAME, "total": BYTES, "tree": NODE}
//	NODE = {"kind", "code", "label", "role", "path", "size", "self",
//	        "id", "stream", "offset", "op"        (objects)
//	        "ref": ID, "cycle": BOOL               (references; size 0)
//	        "elided": COUNT                        (folded small children)
//	        "truncated": true                      (children hidden by --depth)
//	        "children": [NODE...]}
//
// It is written while walking: nothing is built in memory first.

// MaxJSONPath: longer paths (very deep nesting) are left out of the JSON,
// which would otherwise grow with the square of the depth; "role" still
// says where each node sits.
const MaxJSONPath = 4096

func jsonStr(b *bufio.Writer, s string) {
	// printable ASCII that json.Marshal leaves as it is: no copy
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
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
	q, _ := json.Marshal(s)
	b.Write(q)
}

// jsonInt writes `,"name":v`.
func jsonInt(b *bufio.Writer, name string, v int64) {
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	var d [24]byte
	b.Write(strconv.AppendInt(d[:0], v, 10))
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
	return it.Stream.Store.Kind(it.Node).String()
}

func (t *Tree) jsonFields(b *bufio.Writer, it Item) {
	b.WriteString(`"kind":`)
	jsonStr(b, t.kindName(it))
	if it.Kind != ItemElided {
		b.WriteString(`,"code":`)
		jsonStr(b, t.Code(it))
		b.WriteString(`,"label":`)
		if it.Kind == ItemRef {
			_, l := it.Stream.describe(it.Node)
			jsonStr(b, l)
		} else {
			jsonStr(b, t.Label(it))
		}
	}
	b.WriteString(`,"role":`)
	jsonStr(b, it.Role)
	if it.PathLen() <= MaxJSONPath {
		b.WriteString(`,"path":`)
		jsonStr(b, it.Path())
	}
	jsonInt(b, "size", it.Size)
	jsonInt(b, "self", it.Self)
	switch it.Kind {
	case ItemNode:
		n, s := it.Node, it.Stream.Store
		jsonInt(b, "id", it.Stream.numOf(n))
		jsonInt(b, "stream", int64(s.Index))
		jsonInt(b, "offset", s.Offset(n))
		b.WriteString(`,"op":`)
		jsonStr(b, s.Op(n).String())
	case ItemRef:
		b.WriteString(`,"ref":` + itoa(it.Stream.numOf(it.Node)) + `,"stream":` + itoa(int64(it.Stream.Store.Index)) + `,"cycle":` + strconv.FormatBool(it.Cycle))
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
			if pt.ref {
				b.WriteString(`,"counted_elsewhere":true`)
			}
		}
	}
}

// WriteJSON writes the tree from start as JSON.
func (t *Tree) WriteJSON(w io.Writer, start Item, opt Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	b.WriteString(`{"file":`)
	jsonStr(b, t.File.Name)
	b.WriteString(`,"total":` + itoa(t.Total) + `,"tree":`)
	first := []bool{}
	t.walk(start, opt, func(v *Visit) {
		if v.Depth > 0 {
			if !first[v.Depth-1] {
				b.WriteByte(',')
			}
			first[v.Depth-1] = false
		}
		b.WriteByte('{')
		t.jsonFields(b, v.Item)
		if v.Truncated {
			b.WriteString(`,"truncated":true`)
		}
		if v.Kids > 0 {
			b.WriteString(`,"children":[`)
			first = append(first[:v.Depth], true)
		}
	}, func(v *Visit) {
		if v.Kids > 0 {
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}, false)
	b.WriteString("}\n")
	return b.Flush()
}

// WriteTopJSON writes the n largest objects as JSON.
func (t *Tree) WriteTopJSON(w io.Writer, n int) error {
	b := bufio.NewWriter(w)
	b.WriteString(`{"file":`)
	jsonStr(b, t.File.Name)
	b.WriteString(`,"total":` + itoa(t.Total) + `,"top":[`)
	for i, it := range t.Top(n) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		t.jsonFields(b, it)
		b.WriteByte('}')
	}
	b.WriteString("]}\n")
	return b.Flush()
}
