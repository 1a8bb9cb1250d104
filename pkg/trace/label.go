package trace

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Type codes. dill's own (from its pickler's trace) where the pickle tells
// the same story, ours (documented in docs/pk-trace.md) for the rest.
const (
	CodeFile     = "File" // the input
	CodeStream   = "Pk"   // one pickle stream
	CodeTrailing = "Tr"   // trailing bytes that are not a pickle

	CodeT1  = "T1"  // builtin type by name: dill _load_type / cloudpickle _builtin_type
	CodeT2  = "T2"  // class pickled by value: dill _create_type, cloudpickle _make_skeleton_class/_make_skeleton_enum
	CodeT4  = "T4"  // class by reference (a global whose name looks like a class)
	CodeT6  = "T6"  // namedtuple: dill _create_namedtuple
	CodeT7  = "T7"  // NoneType / NotImplementedType / ellipsis
	CodeD1  = "D1"  // the __main__ module's dict (dill: __builtin__.__main__)
	CodeD2  = "D2"  // a dict
	CodeD4  = "D4"  // a module's dict by reference (a global named __dict__)
	CodeF1  = "F1"  // function pickled by value: dill _create_function, cloudpickle _make_function
	CodeF2  = "F2"  // function by reference (a global whose name looks like a function)
	CodeCe1 = "Ce1" // cell with contents: dill _create_cell, cloudpickle _make_cell
	CodeCe2 = "Ce2" // empty cell: cloudpickle _make_empty_cell
	CodeMe1 = "Me1" // bound method: types.MethodType(...)
	CodeM1  = "M1"  // module by value: _import_module/dynamic_subimport with state
	CodeM2  = "M2"  // module by reference: dill _import_module, cloudpickle subimport
	CodeCo  = "Co"  // code object: types.CodeType / dill _create_code

	CodeNone   = "No"
	CodeBool   = "Bo"
	CodeInt    = "I"
	CodeFloat  = "Fl"
	CodeStr    = "S"
	CodeBytes  = "By"
	CodeBArr   = "Ba"
	CodeList   = "L"
	CodeTuple  = "Tu"
	CodeSet    = "Se"
	CodeFSet   = "Fs"
	CodeGlobal = "G"  // any other global
	CodeReduce = "R"  // a call (REDUCE) of anything else
	CodeObj    = "O"  // an instance: NEWOBJ, NEWOBJ_EX, INST, OBJ
	CodePers   = "P"  // persistent id (resolved by the loader)
	CodeExt    = "X"  // extension code
	CodeBuf    = "Bf" // out-of-band buffer
	CodeArray  = "Ar" // numpy.ndarray (_reconstruct + BUILD)
	CodeDtype  = "Dt" // numpy.dtype
	CodeStore  = "St" // torch storage (persistent id)
	CodeTensor = "Tn" // torch tensor (_rebuild_tensor*)
	CodeRef    = "→"  // a reference to an object built elsewhere
)

// canonical returns "module.name" of a global with producer module
// prefixes folded: vendored cloudpickles become "cloudpickle", dill's
// modules "dill", numpy's core/_core "numpy.core".
func canonical(n *pickle.Node) string {
	if n == nil || n.Kind != pickle.KindGlobal || n.Flags&pickle.FlagDynamic != 0 {
		return ""
	}
	mod, name := n.Str, n.Name()
	switch {
	case mod == "cloudpickle" || strings.HasSuffix(mod, "cloudpickle.cloudpickle") || strings.HasSuffix(mod, "cloudpickle.cloudpickle_fast") || strings.HasSuffix(mod, ".cloudpickle") || mod == "cloudpickle.cloudpickle_fast":
		mod = "cloudpickle"
	case mod == "dill._dill" || mod == "dill.dill" || mod == "dill._shims":
		mod = "dill"
	case mod == "numpy._core" || strings.HasPrefix(mod, "numpy._core."):
		mod = "numpy.core" + mod[len("numpy._core"):]
	}
	return mod + "." + name
}

// callee returns the canonical name of what a call node calls; calls of
// dill's _load_type / cloudpickle's _builtin_type on a literal name become
// "types.Name".
func callee(n *pickle.Node) string {
	if n == nil || n.Kind != pickle.KindCall {
		return ""
	}
	f := n.Func()
	if f == nil {
		return ""
	}
	if f.Kind == pickle.KindCall {
		switch callee(f) {
		case "dill._load_type", "cloudpickle._builtin_type":
			if a := arg(f, 0); a != nil && a.Kind == pickle.KindStr {
				return "types." + a.Str
			}
		}
		return ""
	}
	return canonical(f)
}

// arg returns item i of a call's argument tuple.
func arg(n *pickle.Node, i int) *pickle.Node {
	a := n.Args()
	if a == nil || a.Kind != pickle.KindTuple || i >= len(a.Items) {
		return nil
	}
	return a.Items[i]
}

// state returns the first BUILD state of n.
func state(n *pickle.Node) *pickle.Node {
	for _, m := range n.Muts() {
		if m.Op == pickle.BUILD && len(m.Args) == 1 {
			return m.Args[0]
		}
	}
	return nil
}

func dictGet(d *pickle.Node, key string) *pickle.Node {
	if d == nil || d.Kind != pickle.KindDict {
		return nil
	}
	for i := 0; i+1 < len(d.Items); i += 2 {
		if k := d.Items[i]; k.Kind == pickle.KindStr && k.Str == key {
			return d.Items[i+1]
		}
	}
	return nil
}

func strOf(n *pickle.Node) string {
	if n != nil && n.Kind == pickle.KindStr {
		return n.Str
	}
	return ""
}

// setstates maps the targets of cloudpickle's _function_setstate and
// _class_setstate calls (REDUCE then POP) to their state tuples.
func (st *StreamTree) setstates() map[int32]*pickle.Node {
	if st.extra != nil {
		return st.extra
	}
	st.extra = map[int32]*pickle.Node{}
	for _, e := range st.S.Log {
		if e.Kind != pickle.EvCall {
			continue
		}
		switch callee(e.Node) {
		case "cloudpickle._function_setstate", "cloudpickle._class_setstate":
			if t, s := arg(e.Node, 0), arg(e.Node, 1); t != nil && s != nil {
				if _, ok := st.extra[t.ID]; !ok {
					st.extra[t.ID] = s
				}
			}
		}
	}
	return st.extra
}

// qualname finds __qualname__ in a state: a dict, or a (dict, slotstate) tuple.
func qualname(s *pickle.Node) string {
	if s == nil {
		return ""
	}
	if s.Kind == pickle.KindTuple {
		for _, c := range s.Items {
			if q := strOf(dictGet(c, "__qualname__")); q != "" {
				return q
			}
		}
		return ""
	}
	return strOf(dictGet(s, "__qualname__"))
}

// Code returns the type code of an item.
func (t *Tree) Code(it Item) string {
	switch it.Kind {
	case ItemFile:
		return CodeFile
	case ItemStream:
		return CodeStream
	case ItemTrailing:
		return CodeTrailing
	case ItemPart:
		return it.part.code
	case ItemElided:
		return "…"
	case ItemRef:
		return CodeRef
	}
	c, _ := it.Stream.describe(it.Node)
	return c
}

// Label returns the readable label of an item (without its role).
func (t *Tree) Label(it Item) string {
	switch it.Kind {
	case ItemFile:
		if d := t.Doc; d != nil {
			l := d.Path + " (" + d.Format + ", " + itoa(int64(len(d.Parts))) + " part" + plural(len(d.Parts))
			if d.Deflated() && d.Size >= 0 {
				l += "; " + itoa(d.Size) + " bytes on disk, sizes are decompressed"
			}
			return l + ")"
		}
		return t.File.Name + " (" + itoa(int64(len(t.Streams))) + " streams)"
	case ItemPart:
		return it.part.label
	case ItemStream:
		s := it.Stream.S
		l := "stream " + itoa(int64(it.Index)) + ", protocol " + itoa(int64(s.Proto)) + ", offset " + itoa(s.Offset)
		if o := it.Stream.outside; o > 0 {
			l += ": " + itoa(s.Len()) + " bytes + " + itoa(o) + " bytes of storages"
		}
		return l
	case ItemTrailing:
		return "trailing bytes: " + t.File.Trailing.Reason
	case ItemElided:
		return ""
	case ItemRef:
		c, l := it.Stream.describe(it.Node)
		return "#" + itoa(int64(it.Node.ID)) + " " + c + " " + l
	}
	_, l := it.Stream.describe(it.Node)
	return l
}

// describe returns the code and label of a node.
func (st *StreamTree) describe(n *pickle.Node) (string, string) {
	switch n.Kind {
	case pickle.KindNone:
		return CodeNone, "None"
	case pickle.KindBool:
		if n.Int != 0 {
			return CodeBool, "True"
		}
		return CodeBool, "False"
	case pickle.KindInt:
		if n.IsBig() {
			return CodeInt, bigLabel(n.Big())
		}
		return CodeInt, itoa(n.Int)
	case pickle.KindFloat:
		return CodeFloat, strconv.FormatFloat(n.Float(), 'g', -1, 64)
	case pickle.KindStr:
		return CodeStr, "str " + quote(n.Str, n.Len())
	case pickle.KindBytes:
		return CodeBytes, "bytes[" + itoa(n.Len()) + "]"
	case pickle.KindByteArray:
		return CodeBArr, "bytearray[" + itoa(n.Len()) + "]"
	case pickle.KindList:
		return CodeList, "list[" + itoa(int64(len(n.Items)+mutCount(n))) + "]"
	case pickle.KindTuple:
		return CodeTuple, "tuple[" + itoa(int64(len(n.Items))) + "]"
	case pickle.KindDict:
		return CodeD2, "dict[" + itoa(int64(len(n.Items)/2)) + "]"
	case pickle.KindSet:
		return CodeSet, "set[" + itoa(int64(len(n.Items))) + "]"
	case pickle.KindFrozenSet:
		return CodeFSet, "frozenset[" + itoa(int64(len(n.Items))) + "]"
	case pickle.KindGlobal:
		return globalCode(n)
	case pickle.KindPersID:
		return persid(n)
	case pickle.KindExt:
		return CodeExt, "extension " + itoa(n.Int)
	case pickle.KindBuffer:
		return CodeBuf, "out-of-band buffer " + itoa(n.Int)
	case pickle.KindCall:
		return st.call(n)
	}
	return "?", n.Kind.String()
}

func mutCount(n *pickle.Node) int {
	c := 0
	for _, m := range n.Muts() {
		if m.Op == pickle.APPEND || m.Op == pickle.APPENDS {
			c += len(m.Args)
		}
	}
	return c
}

func globalCode(n *pickle.Node) (string, string) {
	if n.Flags&pickle.FlagDynamic != 0 {
		return CodeGlobal, "global (computed name)"
	}
	q := n.Str + "." + n.Name()
	name := n.Name()
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case (n.Str == "builtins" || n.Str == "__builtin__") && name == "__main__":
		return CodeD1, q
	case name == "__dict__":
		return CodeD4, q
	case n.Str == "builtins" && isBuiltinType(name):
		return CodeT4, q
	case name != "" && name[0] >= 'A' && name[0] <= 'Z':
		return CodeT4, q
	}
	return CodeF2, q
}

func isBuiltinType(s string) bool {
	switch s {
	case "object", "type", "int", "float", "complex", "str", "bytes", "bytearray", "list", "tuple", "dict", "set", "frozenset", "bool", "slice", "range", "property", "classmethod", "staticmethod", "super", "memoryview", "NoneType", "ellipsis":
		return true
	}
	return false
}

func persid(n *pickle.Node) (string, string) {
	if len(n.Items) == 1 {
		p := n.Items[0]
		if p.Kind == pickle.KindTuple && len(p.Items) >= 5 && strOf(p.Items[0]) == "storage" {
			typ := "storage"
			if g := p.Items[1]; g.Kind == pickle.KindGlobal {
				typ = g.Name()
			} else if g.Kind == pickle.KindStr {
				typ = g.Str
			}
			l := "torch " + typ + " key " + quote(strOf(p.Items[2]), -1) + " on " + strOf(p.Items[3])
			if c := p.Items[4]; c.Kind == pickle.KindInt {
				l += ", " + itoa(c.Int) + " elements"
			}
			return CodeStore, l
		}
		return CodePers, "persistent id"
	}
	return CodePers, "persistent id " + quote(n.Str, -1)
}

func (st *StreamTree) call(n *pickle.Node) (string, string) {
	if l := st.joblibLabel(n); l != "" {
		return CodeArray, l
	}
	name := callee(n)
	switch name {
	case "types.MethodType":
		l := "method"
		if f := arg(n, 0); f != nil {
			if _, fl := st.describe1(f); fl != "" {
				l = "method " + fl
			}
		}
		return CodeMe1, l
	case "types.CodeType", "dill._create_code":
		return CodeCo, "code " + codeName(n)
	case "types.FunctionType", "types.LambdaType", "cloudpickle._make_function", "dill._create_function":
		fn := strOf(arg(n, 2))
		if q := qualname(st.setstates()[n.ID]); q != "" {
			fn = q
		} else if q := qualname(state(n)); q != "" {
			fn = q
		} else if c := arg(n, 0); fn == "" && c != nil {
			fn = codeName(c)
		}
		return CodeF1, "function " + fn
	case "cloudpickle._make_skeleton_class", "cloudpickle._make_skeleton_enum":
		i := 1
		if name == "cloudpickle._make_skeleton_enum" {
			i = 1
		}
		cn := strOf(arg(n, i))
		if name == "cloudpickle._make_skeleton_enum" {
			if q := strOf(arg(n, 2)); q != "" {
				cn = q
			}
		}
		if q := qualname(st.setstates()[n.ID]); q != "" {
			cn = q
		}
		return CodeT2, "class " + cn + " (by value)"
	case "dill._create_type":
		cn := strOf(arg(n, 1))
		if q := qualname(arg(n, 3)); q != "" {
			cn = q
		}
		return CodeT2, "class " + cn + " (by value)"
	case "dill._create_namedtuple":
		return CodeT6, "namedtuple " + strOf(arg(n, 0))
	case "cloudpickle._function_setstate", "cloudpickle._class_setstate":
		l := name[len("cloudpickle."):]
		if tg := arg(n, 0); tg != nil {
			c, tl := st.describe1(tg)
			l += " of #" + itoa(int64(tg.ID)) + " " + c + " " + tl
		}
		return CodeReduce, l
	case "cloudpickle._make_cell", "dill._create_cell":
		return CodeCe1, "cell"
	case "cloudpickle._make_empty_cell":
		return CodeCe2, "empty cell"
	case "dill._import_module", "cloudpickle.subimport", "cloudpickle.dynamic_subimport":
		if state(n) != nil || name == "cloudpickle.dynamic_subimport" {
			return CodeM1, "module " + strOf(arg(n, 0))
		}
		return CodeM2, "module " + strOf(arg(n, 0))
	case "dill._load_type", "cloudpickle._builtin_type":
		return CodeT1, "type " + strOf(arg(n, 0))
	case "builtins.type":
		if a := arg(n, 0); a != nil && (a.Kind == pickle.KindNone || a.Kind == pickle.KindGlobal) {
			return CodeT7, "type of " + func() string { _, l := st.describe1(a); return l }()
		}
	case "_codecs.encode":
		if a := arg(n, 0); a != nil && a.Kind == pickle.KindStr {
			return CodeBytes, "bytes[" + itoa(a.Len()) + "] (_codecs.encode)"
		}
	case "numpy.core.multiarray._reconstruct":
		return CodeArray, ndarray(n)
	case "numpy.dtype":
		return CodeDtype, "numpy.dtype " + dtypeName(n)
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		return CodeTensor, st.tensorLabel(n)
	case "torch._utils._rebuild_parameter":
		return CodeTensor, tensor(n)
	}
	if name == "" {
		name = "(computed callable)"
		if f := n.Func(); f != nil && f.Kind == pickle.KindCall {
			_, fl := st.describe1(f)
			name = "call of " + fl
		}
	}
	code := CodeReduce
	if n.Op != pickle.REDUCE {
		code = CodeObj
		if g := n.Func(); g != nil && g.Kind == pickle.KindGlobal {
			name = g.Str + "." + g.Name()
		}
		return code, name
	}
	if name == "copyreg.__newobj__" || name == "copy_reg.__newobj__" {
		if c := arg(n, 0); c != nil && c.Kind == pickle.KindGlobal {
			return CodeObj, c.Str + "." + c.Name()
		}
	}
	if name == "copyreg._reconstructor" {
		if c := arg(n, 0); c != nil && c.Kind == pickle.KindGlobal {
			return CodeObj, c.Str + "." + c.Name()
		}
	}
	return code, name + "(…)"
}

// describe1 describes a node without recursing into calls of calls more
// than once (labels stay bounded).
func (st *StreamTree) describe1(n *pickle.Node) (string, string) {
	if n.Kind == pickle.KindCall {
		name := callee(n)
		switch name {
		case "cloudpickle._make_function", "dill._create_function", "types.FunctionType":
			fn := strOf(arg(n, 2))
			if q := qualname(st.setstates()[n.ID]); q != "" {
				fn = q
			}
			return CodeF1, "function " + fn
		case "cloudpickle._make_skeleton_class", "dill._create_type":
			return CodeT2, "class " + strOf(arg(n, 1))
		}
		if name == "" {
			return CodeReduce, "call"
		}
		return CodeReduce, name
	}
	return st.describe(n)
}

// codeName returns co_qualname (3.11+) or co_name of a CodeType call: the
// string just after co_filename (arg 10 for cloudpickle, 11 for dill ≥3.10).
func codeName(n *pickle.Node) string {
	a := n.Args()
	if a == nil || a.Kind != pickle.KindTuple {
		return ""
	}
	// co_name and co_qualname follow co_filename: find the first run of
	// two or three strings after the bytecode (a bytes item).
	seenCode := false
	for i, c := range a.Items {
		if c.Kind == pickle.KindBytes {
			seenCode = true
			continue
		}
		if !seenCode || c.Kind != pickle.KindStr || i+1 >= len(a.Items) {
			continue
		}
		// items: ..., filename(str), name(str), [qualname(str)], firstlineno(int)
		if a.Items[i+1].Kind == pickle.KindStr {
			if i+2 < len(a.Items) && a.Items[i+2].Kind == pickle.KindStr {
				return a.Items[i+2].Str // qualname
			}
			return a.Items[i+1].Str
		}
	}
	return ""
}

var dtypeNames = map[string]string{
	"f2": "float16", "f4": "float32", "f8": "float64", "f16": "float128", "c8": "complex64", "c16": "complex128",
	"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
	"b1": "bool", "O8": "object", "O4": "object",
}

func dtypeName(n *pickle.Node) string {
	s := strOf(arg(n, 0))
	if v, ok := dtypeNames[s]; ok {
		return v
	}
	return s
}

func ndarray(n *pickle.Node) string {
	l := "numpy.ndarray"
	s := state(n)
	if s == nil || s.Kind != pickle.KindTuple || len(s.Items) < 5 {
		return l
	}
	shape, dt := s.Items[1], s.Items[2]
	if dt.Kind == pickle.KindCall && callee(dt) == "numpy.dtype" {
		l += " " + dtypeName(dt)
	}
	return l + " " + shapeStr(shape)
}

func shapeStr(t *pickle.Node) string {
	if t == nil || t.Kind != pickle.KindTuple {
		return "(?)"
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range t.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		if c.Kind == pickle.KindInt {
			b.WriteString(itoa(c.Int))
		} else {
			b.WriteByte('?')
		}
	}
	if len(t.Items) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

func tensor(n *pickle.Node) string {
	l := "torch.Tensor"
	if s := arg(n, 2); s != nil {
		l += " " + shapeStr(s)
	}
	if p := arg(n, 0); p != nil && p.Kind == pickle.KindPersID {
		if _, pl := persid(p); strings.HasPrefix(pl, "torch ") {
			l += " " + strings.Fields(pl)[1]
		}
	}
	return l
}

// quote renders a str for a label: Python-like quotes, at most 40 runes.
// full is the real length when the node keeps only a prefix (-1: s is all).
func quote(s string, full int64) string {
	const max = 40
	cut := false
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max])
		cut = true
	}
	if full >= 0 && full > int64(len(s)) {
		cut = true
	}
	q := strconv.Quote(s)
	q = "'" + strings.ReplaceAll(q[1:len(q)-1], "'", `\'`) + "'"
	if cut {
		q += "…"
	}
	return q
}

// keyRepr is the key of a dict entry as it appears in a path.
func keyRepr(k *pickle.Node) string {
	switch k.Kind {
	case pickle.KindStr:
		return quote(k.Str, k.Len())
	case pickle.KindBytes, pickle.KindByteArray:
		return "b" + quote(k.Str, k.Len())
	}
	_, l := (&StreamTree{}).describe(k)
	return l
}

// bigExact is the bit length up to which a big int's label is its decimal
// text (about 1,200 digits: converting that is a few microseconds).
const bigExact = 4096

// bigLabel renders a big int for a label in time linear in its size.
// Up to bigExact bits: its decimal digits, cut after 10 when there are more
// than 24 ("1234567890…31 digits"). Larger: converting the whole number to
// decimal costs the square of its length (minutes for a few megabytes), so
// the label gives its leading digits and its digit count from its top 64
// bits and bit length, without converting it:
// "~1.23456e+2408239 (~2,408,240 digits, 8,000,000 bits)".
func bigLabel(v *big.Int) string {
	bl := v.BitLen()
	if bl <= bigExact {
		s := v.String()
		if len(s) > 24 {
			s = s[:10] + "…" + itoa(int64(len(s))) + " digits"
		}
		return s
	}
	// log10|v| from the top 64 bits: |v| = top * 2^shift (+ lower bits)
	shift := bl - 64
	top := new(big.Int).Abs(v)
	top.Rsh(top, uint(shift))
	l := math.Log10(float64(top.Uint64())) + float64(shift)*math.Log10(2)
	e := math.Floor(l)
	mant := math.Pow(10, l-e) // in [1, 10)
	if mant >= 9.999995 {
		mant, e = 1, e+1
	}
	sign := ""
	if v.Sign() < 0 {
		sign = "-"
	}
	return "~" + sign + strconv.FormatFloat(mant, 'f', 5, 64) + "e+" + itoa(int64(e)) +
		" (~" + commas(int64(e)+1) + " digits, " + commas(int64(bl)) + " bits)"
}

// commas writes n with thousands separators: 2,408,240.
func commas(n int64) string {
	s := itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
