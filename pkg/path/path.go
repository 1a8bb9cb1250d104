// Package path owns pk's path syntax: how every command names a place in
// what loading a pickle produces, and how every flag that takes a place
// reads it. pk trace, pk diff, pk hash --explain and their JSON output
// print paths with this package's formatters (Attr, Index, Key, ...), and
// pk trace --path and pk diff --ignore read them with Parse; no other
// package spells or parses a path. The grammar is in docs/paths.md:
//
//	path  = head { step }
//	head  = "root"                   what loading the file returns
//	      | "stream[" INT "]"        the result of another pickle stream of the file
//	      | "part[" STR "]"          a part of a container, by member name
//	      | "trailing"               the bytes after the last pickle stream
//	step  = "." NAME                 an attribute (or a dunder pk names: .__reduce__, ...)
//	      | "[" key { "," key } [","] "]"   an item or dict value (several: a tuple key)
//	      | "[" INT ":" INT "]"      a run of items
//	      | "{" key "}" | "{#" INT "}"      a set element, by value or by position
//	      | "()"                     a call of the attribute before it: .__getstate__()
//	      | "<" WORD [ " " INT [ ":" INT ] ] ">"   no Python value: <popped 0>, <key 1>, <data>
//	key   = INT | FLOAT | STR | BYTES | None | True | False | "(" [ key { "," key } [","] ] ")"
//	      | "<key" INT ">"           a dict key that is no literal (the value under it)
//
// Literals are spelled as Python's repr spells them (str with single
// quotes unless it holds one and no double quote, escapes \\ \' \t \n \r
// \xhh \uhhhh \Uhhhhhhhh, lone surrogates as \udXXX; bytes as b'...';
// floats as repr, float('inf'), float('-inf'), float('nan')); Parse also
// reads double quotes and the other escapes Python reads, and Format
// gives the one spelling back.
package path

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/dis"
)

// Heads.
const (
	Root     = "root"
	Trailing = "trailing"
)

// Stream is the head of pickle stream i that is not the main one.
func Stream(i int) string { return "stream[" + strconv.Itoa(i) + "]" }

// StreamHead is the head of the paths of stream i of a pickle part: root
// for what loading returns (stream mainStream of the main part), stream[i]
// for the other streams of that part, part['key'] and part['key']<stream
// i> in another pickle part (key: the part's name, input.Doc.Key).
func StreamHead(mainPart bool, key string, i, mainStream int) string {
	switch {
	case mainPart && i == mainStream:
		return Root
	case mainPart:
		return Stream(i)
	case i == 0:
		return Part(key)
	}
	return Part(key) + Pseudo("stream", i)
}

// Part is the head of a container part.
func Part(name string) string { return "part[" + dis.StrRepr(name) + "]" }

// Attr is the step .name; a name that is not a Python identifier is
// written .__dict__['name'].
func Attr(name string) string {
	if IsIdent(name) {
		return "." + name
	}
	return ".__dict__[" + dis.StrRepr(name) + "]"
}

// Index is the step [i].
func Index(i int) string {
	if i >= 0 && i < len(smallIndex) {
		return smallIndex[i]
	}
	return "[" + strconv.Itoa(i) + "]"
}

var smallIndex = func() []string {
	out := make([]string, 1024)
	for i := range out {
		out[i] = "[" + strconv.Itoa(i) + "]"
	}
	return out
}()

// Slice is the step [i:j] (a run of items).
func Slice(i, j int) string { return "[" + strconv.Itoa(i) + ":" + strconv.Itoa(j) + "]" }

// Key is the step [k] of a dict value (or a __setitem__), k a literal.
func Key(k Value) string {
	if k.Kind == KTuple && len(k.Items) > 0 {
		// d[1, 2] is d[(1, 2)]
		b := []byte{'['}
		b = appendItems(b, k.Items)
		if len(k.Items) == 1 {
			b = append(b, ',')
		}
		return string(append(b, ']'))
	}
	return "[" + k.String() + "]"
}

// KeyAt is the step [<key i>]: the value of entry i whose key is no
// literal.
func KeyAt(i int) string { return "[<key " + strconv.Itoa(i) + ">]" }

// SetElem is the step {v}: the set element v.
func SetElem(v Value) string { return "{" + v.String() + "}" }

// SetPos is the step {#i}: the set element at position i.
func SetPos(i int) string { return "{#" + strconv.Itoa(i) + "}" }

// Pseudo is the step <word> or <word i>: a place that is no Python value
// (an effect of loading, a dict key object, attached data).
func Pseudo(word string, i int) string {
	if i < 0 {
		return "<" + word + ">"
	}
	return "<" + word + " " + strconv.Itoa(i) + ">"
}

// PseudoSpan is the step <word i:j>: a run of places that are no Python
// values (effects i to j-1).
func PseudoSpan(word string, i, j int) string {
	return "<" + word + " " + strconv.Itoa(i) + ":" + strconv.Itoa(j) + ">"
}

// The names pk gives the parts of a call and of an object's state, in
// every command.
const (
	Callable = ".__reduce__[0]"          // the callable of a call (REDUCE)
	Class    = ".__class__"              // the class NEWOBJ and NEWOBJ_EX create an instance of
	NewArgs  = ".__getnewargs__()"       // their positional arguments
	Args     = ".__reduce__[1]"          // its positional arguments (a tuple)
	Kwargs   = ".__getnewargs_ex__()[1]" // NEWOBJ_EX's keyword arguments
	State    = ".__getstate__()"         // the (first) BUILD state
	Parts    = ".__parts__"              // the name parts of a computed global
	Data     = "<data>"                  // data attached to an object (a storage's bytes, a joblib array's)
	PID      = "<pid>"                   // the persistent id of a persistent load
	Unreach  = "<not reachable from the result>"
)

// IsIdent reports whether s is an ASCII Python identifier.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// The literals a path spells out: a dict key or set element that is an int
// of more than MaxIntBits bits, a tuple of more than MaxTupleItems items,
// or a str or bytes kept only in part, is numbered (<key i>, {#i})
// instead. pk trace, pk diff and pk hash --explain apply these to their
// own nodes (a pickle.Store's, a canon.View's).
const (
	MaxIntBits    = 4096
	MaxTupleItems = 16
	MaxTupleDepth = 8
)

// ValueKind is the type of a key literal.
type ValueKind uint8

const (
	KNone ValueKind = iota
	KBool
	KInt
	KFloat
	KStr
	KBytes
	KTuple
	KOpaque // <key i>: a key that is no literal, by entry index (Int)
)

// Value is a literal of a path: a dict key, a set element.
type Value struct {
	Kind  ValueKind
	Bool  bool
	Int   *big.Int // KInt; KOpaque: the entry index
	Float float64
	Str   string // KStr (UTF-8, surrogates as their 3-byte form), KBytes
	Items []Value
}

// Constructors.
func None() Value                { return Value{Kind: KNone} }
func Bool(b bool) Value          { return Value{Kind: KBool, Bool: b} }
func Int(i int64) Value          { return Value{Kind: KInt, Int: big.NewInt(i)} }
func BigInt(i *big.Int) Value    { return Value{Kind: KInt, Int: i} }
func Float(f float64) Value      { return Value{Kind: KFloat, Float: f} }
func Str(s string) Value         { return Value{Kind: KStr, Str: s} }
func Bytes(s string) Value       { return Value{Kind: KBytes, Str: s} }
func Tuple(items ...Value) Value { return Value{Kind: KTuple, Items: items} }

// String spells v as Python's repr does.
func (v Value) String() string { return string(v.appendTo(nil)) }

func (v Value) appendTo(b []byte) []byte {
	switch v.Kind {
	case KNone:
		return append(b, "None"...)
	case KBool:
		if v.Bool {
			return append(b, "True"...)
		}
		return append(b, "False"...)
	case KInt:
		if v.Int == nil {
			return append(b, '0')
		}
		return v.Int.Append(b, 10)
	case KFloat:
		switch {
		case math.IsNaN(v.Float):
			return append(b, "float('nan')"...)
		case math.IsInf(v.Float, 1):
			return append(b, "float('inf')"...)
		case math.IsInf(v.Float, -1):
			return append(b, "float('-inf')"...)
		}
		return append(b, dis.FloatRepr(v.Float)...)
	case KStr:
		return append(b, dis.StrRepr(v.Str)...)
	case KBytes:
		return append(b, dis.BytesRepr(v.Str)...)
	case KTuple:
		b = append(b, '(')
		b = appendItems(b, v.Items)
		if len(v.Items) == 1 {
			b = append(b, ',')
		}
		return append(b, ')')
	case KOpaque:
		return append(b, "<key "+v.Int.String()+">"...)
	}
	return b
}

func appendItems(b []byte, items []Value) []byte {
	for i, it := range items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = it.appendTo(b)
	}
	return b
}

// Equal reports whether two values are the same literal (floats by bits,
// so nan equals nan and -0.0 is not 0.0).
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KBool:
		return v.Bool == w.Bool
	case KInt, KOpaque:
		return v.Int.Cmp(w.Int) == 0
	case KFloat:
		return math.Float64bits(v.Float) == math.Float64bits(w.Float) || math.IsNaN(v.Float) && math.IsNaN(w.Float)
	case KStr, KBytes:
		return v.Str == w.Str
	case KTuple:
		if len(v.Items) != len(w.Items) {
			return false
		}
		for i := range v.Items {
			if !v.Items[i].Equal(w.Items[i]) {
				return false
			}
		}
	}
	return true
}

// Join concatenates a head and steps.
func Join(parts ...string) string { return strings.Join(parts, "") }

// Element is the step of the element at index idx of an array or tensor,
// as numpy takes it: [i] in one dimension, [i, j] in more, [()] for a 0-d
// array (the key of a tuple of ints).
func Element(idx []int64) string {
	if len(idx) == 1 {
		return Key(Int(idx[0]))
	}
	items := make([]Value, len(idx))
	for i, x := range idx {
		items[i] = Int(x)
	}
	return Key(Tuple(items...))
}

// ElementIndex reads a step as the index of an array element, the step
// Element spells: [i], [i, j], ..., [()] (an empty index, of a 0-d array).
// False when the step is no key, or its key no int (that fits an int64) or
// tuple of them; whether an array is there is the caller's to say.
func ElementIndex(s Step) ([]int64, bool) {
	if s.Kind != SKey {
		return nil, false
	}
	one := func(v Value) (int64, bool) {
		if v.Kind != KInt || v.Int == nil || !v.Int.IsInt64() {
			return 0, false
		}
		return v.Int.Int64(), true
	}
	if s.Value.Kind != KTuple {
		i, ok := one(s.Value)
		if !ok {
			return nil, false
		}
		return []int64{i}, true
	}
	out := make([]int64, 0, len(s.Value.Items))
	for _, it := range s.Value.Items {
		i, ok := one(it)
		if !ok {
			return nil, false
		}
		out = append(out, i)
	}
	return out, true
}

// Label reads a step as a pandas label, the key pk diff names a frame's
// column or row with (root['score'][42]): an int, float, str, bool or
// None; false for any other step.
func Label(s Step) (Value, bool) {
	if s.Kind != SKey {
		return Value{}, false
	}
	switch s.Value.Kind {
	case KInt, KFloat, KStr, KBool, KNone:
		return s.Value, true
	}
	return Value{}, false
}
