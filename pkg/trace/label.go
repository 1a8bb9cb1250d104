package trace

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/input"
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
func canonical(s *pickle.Store, n pickle.ID) string {
	if n == pickle.NoID || s.Kind(n) != pickle.KindGlobal || s.Has(n, pickle.FlagDynamic) {
		return ""
	}
	return canonicalMod(s.Str(n)) + "." + s.Name(n)
}

// canonicalMod is the module canonical names a global of module mod by.
func canonicalMod(mod string) string {
	switch {
	case mod == "cloudpickle" || strings.HasSuffix(mod, "cloudpickle.cloudpickle") || strings.HasSuffix(mod, "cloudpickle.cloudpickle_fast") || strings.HasSuffix(mod, ".cloudpickle") || mod == "cloudpickle.cloudpickle_fast":
		return "cloudpickle"
	case mod == "dill._dill" || mod == "dill.dill" || mod == "dill._shims":
		return "dill"
	case mod == "numpy._core" || strings.HasPrefix(mod, "numpy._core."):
		return "numpy.core" + mod[len("numpy._core"):]
	}
	return mod
}

// canonicalIs reports whether canonical(s, n) is want, without making it
// (a test of every call of a cloudpickle state: sink_args.go).
func canonicalIs(s *pickle.Store, n pickle.ID, want string) bool {
	if n == pickle.NoID || s.Kind(n) != pickle.KindGlobal || s.Has(n, pickle.FlagDynamic) {
		return false
	}
	mod, name := canonicalMod(s.Str(n)), s.Name(n)
	return len(mod)+1+len(name) == len(want) && want[:len(mod)] == mod && want[len(mod)] == '.' && want[len(mod)+1:] == name
}

// calleeIs reports whether callee(s, n) is one of want, without making it.
func calleeIs(s *pickle.Store, n pickle.ID, want ...string) bool {
	if n == pickle.NoID || s.Kind(n) != pickle.KindCall {
		return false
	}
	f := s.Func(n)
	if f == pickle.NoID {
		return false
	}
	if s.Kind(f) == pickle.KindCall {
		// "types." + the literal name of dill's _load_type or cloudpickle's
		// _builtin_type (a call of a call names nothing)
		if g := s.Func(f); !canonicalIs(s, g, "dill._load_type") && !canonicalIs(s, g, "cloudpickle._builtin_type") {
			return false
		}
		a := arg(s, f, 0)
		if a == pickle.NoID || s.Kind(a) != pickle.KindStr {
			return false
		}
		name := s.Str(a)
		for _, w := range want {
			if len(w) == len("types.")+len(name) && w[:len("types.")] == "types." && w[len("types."):] == name {
				return true
			}
		}
		return false
	}
	for _, w := range want {
		if canonicalIs(s, f, w) {
			return true
		}
	}
	return false
}

// callee returns the canonical name of what a call node calls; calls of
// dill's _load_type / cloudpickle's _builtin_type on a literal name become
// "types.Name".
func callee(s *pickle.Store, n pickle.ID) string {
	if n == pickle.NoID || s.Kind(n) != pickle.KindCall {
		return ""
	}
	f := s.Func(n)
	if f == pickle.NoID {
		return ""
	}
	if s.Kind(f) == pickle.KindCall {
		switch callee(s, f) {
		case "dill._load_type", "cloudpickle._builtin_type":
			if a := arg(s, f, 0); a != pickle.NoID && s.Kind(a) == pickle.KindStr {
				return "types." + s.Str(a)
			}
		}
		return ""
	}
	return canonical(s, f)
}

// arg returns item i of a call's argument tuple (NoID: none).
func arg(s *pickle.Store, n pickle.ID, i int) pickle.ID {
	a := s.Args(n)
	if a == pickle.NoID || s.Kind(a) != pickle.KindTuple || i >= s.NItems(a) {
		return pickle.NoID
	}
	return s.Items(a)[i]
}

// state returns the first BUILD state of n.
func state(s *pickle.Store, n pickle.ID) pickle.ID {
	if s.NMuts(n) == 0 {
		return pickle.NoID
	}
	for mi := s.MutIter(n); ; {
		m, ok := mi.Next()
		if !ok {
			break
		}
		if m.Op == pickle.BUILD && len(m.Args) == 1 {
			return m.Args[0]
		}
	}
	return pickle.NoID
}

func dictGet(s *pickle.Store, d pickle.ID, key string) pickle.ID {
	if d == pickle.NoID || s.Kind(d) != pickle.KindDict {
		return pickle.NoID
	}
	items := s.Items(d)
	for i := 0; i+1 < len(items); i += 2 {
		if k := items[i]; s.Kind(k) == pickle.KindStr && s.Str(k) == key {
			return items[i+1]
		}
	}
	return pickle.NoID
}

func strOf(s *pickle.Store, n pickle.ID) string {
	if n != pickle.NoID && s.Kind(n) == pickle.KindStr {
		return s.Str(n)
	}
	return ""
}

// setstates maps the targets of cloudpickle's _function_setstate and
// _class_setstate calls (REDUCE then POP) to their state tuples.
func (st *StreamTree) setstates() map[pickle.ID]pickle.ID {
	if st.extra != nil {
		return st.extra
	}
	s := st.Store
	st.extra = map[pickle.ID]pickle.ID{}
	for _, e := range s.Events() {
		if e.Kind != pickle.EvCall {
			continue
		}
		switch callee(s, e.Node) {
		case "cloudpickle._function_setstate", "cloudpickle._class_setstate":
			if t, x := arg(s, e.Node, 0), arg(s, e.Node, 1); t != pickle.NoID && x != pickle.NoID {
				if _, ok := st.extra[t]; !ok {
					st.extra[t] = x
				}
			}
		}
	}
	return st.extra
}

// setstate returns the setstate state of n (NoID: none).
func (st *StreamTree) setstate(n pickle.ID) pickle.ID {
	if x, ok := st.setstates()[n]; ok {
		return x
	}
	return pickle.NoID
}

// qualname finds __qualname__ in a state: a dict, or a (dict, slotstate) tuple.
func qualname(s *pickle.Store, x pickle.ID) string {
	if x == pickle.NoID {
		return ""
	}
	if s.Kind(x) == pickle.KindTuple {
		for _, c := range s.Items(x) {
			if q := strOf(s, dictGet(s, c, "__qualname__")); q != "" {
				return q
			}
		}
		return ""
	}
	return strOf(s, dictGet(s, x, "__qualname__"))
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

// codeLabel is Code and Label of an item, a node described once (a line
// of the whole tree asks for both: describing each node twice was a tenth
// of pk trace --lines 0 on a million nested calls).
func (t *Tree) codeLabel(it Item) (string, string) {
	if it.sunk != nil {
		return it.sunk.code, it.sunk.label
	}
	switch it.Kind {
	case ItemFile, ItemStream, ItemTrailing, ItemPart, ItemElided, ItemRef:
		return t.Code(it), t.Label(it)
	}
	return it.Stream.describe(it.Node)
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
		return t.File.Name + " (" + itoa(int64(t.streamCount())) + " streams)"
	case ItemPart:
		return it.part.label
	case ItemStream:
		s := it.Stream.Store
		l := "stream " + itoa(int64(it.Index)) + ", protocol " + itoa(int64(s.Proto)) + ", offset " + itoa(s.Begin)
		if o := it.Stream.outside; o > 0 {
			l += ": " + itoa(s.Length()) + " bytes + " + itoa(o) + " bytes of storages"
		}
		return l
	case ItemTrailing:
		return "trailing bytes: " + t.File.Trailing.Reason
	case ItemElided:
		return ""
	case ItemRef:
		c, l := it.Stream.describe(it.Node)
		return "#" + itoa(it.Stream.numOf(it.Node)) + " " + c + " " + l
	}
	_, l := it.Stream.describe(it.Node)
	return l
}

// describe returns the code and label of a node.
func (st *StreamTree) describe(n pickle.ID) (string, string) {
	s := st.Store
	switch s.Kind(n) {
	case pickle.KindNone:
		return CodeNone, "None"
	case pickle.KindBool:
		if s.Int(n) != 0 {
			return CodeBool, "True"
		}
		return CodeBool, "False"
	case pickle.KindInt:
		if s.IsBig(n) {
			return CodeInt, bigLabel(s.Big(n))
		}
		return CodeInt, itoa(s.Int(n))
	case pickle.KindFloat:
		return CodeFloat, strconv.FormatFloat(s.Float(n), 'g', -1, 64)
	case pickle.KindStr:
		return CodeStr, "str " + quote(s.Str(n), s.PayloadLen(n))
	case pickle.KindBytes:
		return CodeBytes, "bytes[" + itoa(s.PayloadLen(n)) + "]"
	case pickle.KindByteArray:
		return CodeBArr, "bytearray[" + itoa(s.PayloadLen(n)) + "]"
	case pickle.KindList, pickle.KindTuple, pickle.KindDict, pickle.KindSet, pickle.KindFrozenSet, pickle.KindGlobal:
		// (the labels codeAppend writes into a line: one place for them)
		if code, b, ok := st.codeAppend(nil, n); ok {
			return code, string(b)
		}
		return CodeGlobal, "global (computed name)"
	case pickle.KindPersID:
		return persid(s, n)
	case pickle.KindExt:
		return CodeExt, "extension " + itoa(s.Int(n))
	case pickle.KindBuffer:
		return CodeBuf, "out-of-band buffer " + itoa(s.Int(n))
	case pickle.KindCall:
		return st.call(n)
	case pickle.KindFolded:
		if f, ok := st.argFoldOf(n); ok {
			return CodeTuple, "tuple[" + itoa(int64(f.nItems)) + "]"
		}
	}
	return "?", s.Kind(n).String()
}

// nItems is the number of items of node n: Store.NItems, or for the whole
// view's scratch store its count (StreamTree.counts).
func (st *StreamTree) nItems(n pickle.ID) int64 {
	if st.counts != nil && int(n) < len(st.counts) {
		return st.counts[n]
	}
	return int64(st.Store.ItemCount(n)) // (a list the top sink folded: with its runs' items)
}

func mutCount(s *pickle.Store, n pickle.ID) int {
	if s.NMuts(n) == 0 {
		return 0
	}
	c := 0
	for mi := s.MutIter(n); ; {
		m, ok := mi.Next()
		if !ok {
			break
		}
		if m.Op == pickle.APPEND || m.Op == pickle.APPENDS {
			c += len(m.Args)
		}
	}
	return c
}

// globalCode1 is the code of a global whose name is not computed.
func globalCode1(s *pickle.Store, n pickle.ID) string {
	mod := s.Str(n)
	name := s.Name(n)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case (mod == "builtins" || mod == "__builtin__") && name == "__main__":
		return CodeD1
	case name == "__dict__":
		return CodeD4
	case mod == "builtins" && isBuiltinType(name):
		return CodeT4
	case name != "" && name[0] >= 'A' && name[0] <= 'Z':
		return CodeT4
	}
	return CodeF2
}

// codeAppend is describe for the commonest kinds of nodes (containers,
// globals), its label appended to b rather than made: ok false, it is
// none of them (b as it was). A tree's lines are mostly these.
func (st *StreamTree) codeAppend(b []byte, n pickle.ID) (code string, _ []byte, ok bool) {
	s := st.Store
	var c int64
	switch s.Kind(n) {
	case pickle.KindList:
		code, b, c = CodeList, append(b, "list["...), st.nItems(n)+int64(mutCount(s, n))
	case pickle.KindTuple:
		code, b, c = CodeTuple, append(b, "tuple["...), st.nItems(n)
	case pickle.KindDict:
		code, b, c = CodeD2, append(b, "dict["...), st.nItems(n)/2
	case pickle.KindSet:
		code, b, c = CodeSet, append(b, "set["...), st.nItems(n)
	case pickle.KindFrozenSet:
		code, b, c = CodeFSet, append(b, "frozenset["...), st.nItems(n)
	case pickle.KindGlobal:
		if s.Has(n, pickle.FlagDynamic) {
			return "", b, false
		}
		b = append(append(append(b, s.Str(n)...), '.'), s.Name(n)...)
		return globalCode1(s, n), b, true
	case pickle.KindCall:
		return st.callAppend(b, n)
	default:
		return "", b, false
	}
	return code, append(strconv.AppendInt(b, c, 10), ']'), true
}

func isBuiltinType(s string) bool {
	switch s {
	case "object", "type", "int", "float", "complex", "str", "bytes", "bytearray", "list", "tuple", "dict", "set", "frozenset", "bool", "slice", "range", "property", "classmethod", "staticmethod", "super", "memoryview", "NoneType", "ellipsis":
		return true
	}
	return false
}

func persid(s *pickle.Store, n pickle.ID) (string, string) {
	if s.NItems(n) == 1 {
		p := s.Items(n)[0]
		if s.Kind(p) == pickle.KindTuple && s.NItems(p) >= 5 && strOf(s, s.Items(p)[0]) == "storage" {
			it := s.Items(p)
			typ := "storage"
			if g := it[1]; s.Kind(g) == pickle.KindGlobal {
				typ = s.Name(g)
			} else if s.Kind(g) == pickle.KindStr {
				typ = s.Str(g)
			}
			l := "torch " + typ + " key " + quote(strOf(s, it[2]), -1) + " on " + strOf(s, it[3])
			if c := it[4]; s.Kind(c) == pickle.KindInt {
				l += ", " + itoa(s.Int(c)) + " elements"
			}
			return CodeStore, l
		}
		return CodePers, "persistent id"
	}
	return CodePers, "persistent id " + quote(s.Str(n), -1)
}

func (st *StreamTree) call(n pickle.ID) (string, string) {
	s := st.Store
	if l := st.joblibLabel(n); l != "" {
		return CodeArray, l
	}
	// an object or REDUCE of a global that nothing below names otherwise:
	// callAppend's label (the one a line of the whole tree writes)
	if !noCallAppend {
		if code, b, ok := st.callAppend(nil, n); ok {
			return code, string(b)
		}
	}
	name := callee(s, n)
	switch name {
	case "types.MethodType":
		l := "method"
		if f := arg(s, n, 0); f != pickle.NoID {
			if _, fl := st.describe1(f); fl != "" {
				l = "method " + fl
			}
		}
		return CodeMe1, l
	case "types.CodeType", "dill._create_code":
		return CodeCo, "code " + st.codeNameOf(n)
	case "types.FunctionType", "types.LambdaType", "cloudpickle._make_function", "dill._create_function":
		fn := strOf(s, arg(s, n, 2))
		if q := qualname(s, st.setstate(n)); q != "" {
			fn = q
		} else if q := qualname(s, state(s, n)); q != "" {
			fn = q
		} else if c := arg(s, n, 0); fn == "" && c != pickle.NoID {
			fn = st.codeNameOf(c)
		}
		return CodeF1, "function " + fn
	case "cloudpickle._make_skeleton_class", "cloudpickle._make_skeleton_enum":
		i := 1
		if name == "cloudpickle._make_skeleton_enum" {
			i = 1
		}
		cn := strOf(s, arg(s, n, i))
		if name == "cloudpickle._make_skeleton_enum" {
			if q := strOf(s, arg(s, n, 2)); q != "" {
				cn = q
			}
		}
		if q := qualname(s, st.setstate(n)); q != "" {
			cn = q
		}
		return CodeT2, "class " + cn + " (by value)"
	case "dill._create_type":
		cn := strOf(s, arg(s, n, 1))
		if q := qualname(s, arg(s, n, 3)); q != "" {
			cn = q
		}
		return CodeT2, "class " + cn + " (by value)"
	case "dill._create_namedtuple":
		return CodeT6, "namedtuple " + strOf(s, arg(s, n, 0))
	case "cloudpickle._function_setstate", "cloudpickle._class_setstate":
		l := name[len("cloudpickle."):]
		if tg := arg(s, n, 0); tg != pickle.NoID {
			c, tl := st.describe1(tg)
			l += " of #" + itoa(st.numOf(tg)) + " " + c + " " + tl
		}
		return CodeReduce, l
	case "cloudpickle._make_cell", "dill._create_cell":
		return CodeCe1, "cell"
	case "cloudpickle._make_empty_cell":
		return CodeCe2, "empty cell"
	case "dill._import_module", "cloudpickle.subimport", "cloudpickle.dynamic_subimport":
		if state(s, n) != pickle.NoID || name == "cloudpickle.dynamic_subimport" {
			return CodeM1, "module " + strOf(s, arg(s, n, 0))
		}
		return CodeM2, "module " + strOf(s, arg(s, n, 0))
	case "dill._load_type", "cloudpickle._builtin_type":
		return CodeT1, "type " + strOf(s, arg(s, n, 0))
	case "builtins.type":
		if a := arg(s, n, 0); a != pickle.NoID && (s.Kind(a) == pickle.KindNone || s.Kind(a) == pickle.KindGlobal) {
			return CodeT7, "type of " + func() string { _, l := st.describe1(a); return l }()
		}
	case "_codecs.encode":
		if a := arg(s, n, 0); a != pickle.NoID && s.Kind(a) == pickle.KindStr {
			return CodeBytes, "bytes[" + itoa(s.PayloadLen(a)) + "] (_codecs.encode)"
		}
	case "numpy.core.multiarray._reconstruct", "numpy.core.numeric._frombuffer":
		return CodeArray, st.ndarray(n)
	case "numpy.dtype", "numpy.core.multiarray.dtype":
		return CodeDtype, "numpy.dtype " + st.dtypeName(n)
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		return CodeTensor, st.tensorLabel(n)
	case "torch._utils._rebuild_parameter":
		return CodeTensor, tensor(s, n)
	case "torch.storage._load_from_bytes":
		if l, ok := st.fromBytesLabel(n); ok {
			return CodeStore, l
		}
	}
	if l, ok := st.frame(n); ok {
		return CodeObj, l
	}
	if name == "" {
		name = "(computed callable)"
		if f := s.Func(n); f != pickle.NoID && s.Kind(f) == pickle.KindCall {
			_, fl := st.describe1(f)
			name = "call of " + fl
		}
	}
	code := CodeReduce
	if s.Op(n) != pickle.REDUCE {
		code = CodeObj
		if g := s.Func(n); g != pickle.NoID && s.Kind(g) == pickle.KindGlobal {
			name = s.Str(g) + "." + s.Name(g)
		}
		return code, name
	}
	if name == "copyreg.__newobj__" || name == "copy_reg.__newobj__" {
		if c := arg(s, n, 0); c != pickle.NoID && s.Kind(c) == pickle.KindGlobal {
			return CodeObj, s.Str(c) + "." + s.Name(c)
		}
	}
	if name == "copyreg._reconstructor" {
		if c := arg(s, n, 0); c != pickle.NoID && s.Kind(c) == pickle.KindGlobal {
			return CodeObj, s.Str(c) + "." + s.Name(c)
		}
	}
	return code, name + "(…)"
}

// noCallAppend makes call take its own way to every label (a test
// compares callAppend's answers with it).
var noCallAppend bool

// callAppend is call for the commonest calls, an object (NEWOBJ, OBJ,
// INST) or a REDUCE of a global that call has no special label for: the
// label "module.name" or "module.name(…)" appended to b. Any other call
// (a joblib array, a callee that canonical renames or that call names,
// maybe a frame): ok false, b as it was.
func (st *StreamTree) callAppend(b []byte, n pickle.ID) (string, []byte, bool) {
	s := st.Store
	f := s.Func(n)
	if len(st.attach[n]) > 0 || f == pickle.NoID || s.Kind(f) != pickle.KindGlobal || s.Has(f, pickle.FlagDynamic) {
		return "", b, false
	}
	mod, name := s.Str(f), s.Name(f)
	// the module of every name call switches on or canonical renames
	// (a special name "m.n" has no other split: its modules have no dot)
	switch mod {
	case "copyreg", "copy_reg":
		return "", b, false
	case "types":
		switch name {
		case "MethodType", "CodeType", "FunctionType", "LambdaType":
			return "", b, false
		}
	case "builtins":
		if name == "type" {
			return "", b, false
		}
	case "_codecs":
		if name == "encode" {
			return "", b, false
		}
	}
	if strings.HasPrefix(mod, "dill") || strings.HasPrefix(mod, "numpy") || strings.HasPrefix(mod, "torch") || strings.Contains(mod, "cloudpickle") {
		return "", b, false
	}
	// a frame (array.Reader.FrameAt) is a NEWOBJ of one of these classes
	// or a copyreg._reconstructor call
	if array.IsFrameClass(mod, name) || array.IsSeriesClass(mod, name) {
		return "", b, false
	}
	b = append(append(append(b, mod...), '.'), name...)
	if s.Op(n) != pickle.REDUCE {
		return CodeObj, b, true
	}
	return CodeReduce, append(b, "(…)"...), true
}

// describe1 describes a node without recursing into calls of calls more
// than once (labels stay bounded).
func (st *StreamTree) describe1(n pickle.ID) (string, string) {
	s := st.Store
	if s.Kind(n) == pickle.KindCall {
		name := callee(s, n)
		switch name {
		case "cloudpickle._make_function", "dill._create_function", "types.FunctionType":
			fn := strOf(s, arg(s, n, 2))
			if q := qualname(s, st.setstate(n)); q != "" {
				fn = q
			}
			return CodeF1, "function " + fn
		case "cloudpickle._make_skeleton_class", "dill._create_type":
			return CodeT2, "class " + strOf(s, arg(s, n, 1))
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
func codeName(s *pickle.Store, n pickle.ID) string {
	a := s.Args(n)
	if a == pickle.NoID || s.Kind(a) != pickle.KindTuple {
		return ""
	}
	items := s.Items(a)
	// co_name and co_qualname follow co_filename: find the first run of
	// two or three strings after the bytecode (a bytes item).
	seenCode := false
	for i, c := range items {
		if s.Kind(c) == pickle.KindBytes {
			seenCode = true
			continue
		}
		if !seenCode || s.Kind(c) != pickle.KindStr || i+1 >= len(items) {
			continue
		}
		// items: ..., filename(str), name(str), [qualname(str)], firstlineno(int)
		if s.Kind(items[i+1]) == pickle.KindStr {
			if i+2 < len(items) && s.Kind(items[i+2]) == pickle.KindStr {
				return s.Str(items[i+2]) // qualname
			}
			return s.Str(items[i+1])
		}
	}
	return ""
}

// arrays is the stream's array recognizer (pkg/array, the one canon uses).
func (st *StreamTree) arrays() *array.Reader {
	if st.arr == nil {
		st.arr = array.NewReader(foreignGraph{array.StoreGraph{S: st.Store}, st})
	}
	return st.arr
}

// foreignGraph is a stream's store as the array recognizer reads it, the
// result of a nested pickle attached to a node (a joblib object array's)
// standing for that node: a joblib frame's object Index and object blocks
// are read from their nested pickles, as pk diff reads them.
type foreignGraph struct {
	array.StoreGraph
	st *StreamTree
}

func (g foreignGraph) Foreign(n pickle.ID) (array.Graph, pickle.ID, bool) {
	if g.st.tree == nil || g.st.attach == nil {
		return nil, pickle.NoID, false
	}
	ns := g.st.tree.nested(g.st, n)
	if ns == nil || ns.Store.Root < 0 {
		return nil, pickle.NoID, false
	}
	return array.StoreGraph{S: ns.Store}, ns.Store.Root, true
}

// header reads the dtype, shape and order of a numpy array's call node
// (_reconstruct + BUILD or _frombuffer), or false.
func (st *StreamTree) header(n pickle.ID) (*array.Header, bool) {
	r := st.arrays()
	if h, ok := r.Reconstruct(n); ok {
		return h, true
	}
	return r.Frombuffer(n)
}

// frame labels a pandas DataFrame (pkg/array's frame recognizer, the one
// pk diff names cells with): "pandas.core.frame.DataFrame 3 columns × 100
// rows"; a Series "pandas.core.series.Series 100 rows".
func (st *StreamTree) frame(n pickle.ID) (string, bool) {
	f, ok := st.arrays().FrameAt(n)
	if !ok {
		return "", false
	}
	if f.Series {
		row := " rows"
		if f.Rows == 1 {
			row = " row"
		}
		return "pandas.core.series.Series " + commas(f.Rows) + row, true
	}
	col := " columns"
	if f.NCols == 1 {
		col = " column"
	}
	row := " rows"
	if f.Rows == 1 {
		row = " row"
	}
	return "pandas.core.frame.DataFrame " + commas(f.NCols) + col + " × " + commas(f.Rows) + row, true
}

// dtypeName names a numpy.dtype node: float64, <U5, ... (its type string
// when the recognizer does not read it).
func (st *StreamTree) dtypeName(n pickle.ID) string {
	if d, ok := st.arrays().DTypeOf(n, 0); ok {
		return array.Name(d.Descr)
	}
	return strOf(st.Store, arg(st.Store, n, 0))
}

// ndarray labels a numpy array in every pickle form: "numpy.ndarray
// float64 (3, 4)", " Fortran order" when its data is.
func (st *StreamTree) ndarray(n pickle.ID) string {
	h, ok := st.header(n)
	if !ok {
		return "numpy.ndarray"
	}
	l := "numpy.ndarray " + array.Name(h.Descr.Descr) + " " + array.ShapeText(h.Shape)
	if h.Order == 'F' {
		l += " Fortran order"
	}
	return l
}

func shapeStr(s *pickle.Store, t pickle.ID) string {
	if t == pickle.NoID || s.Kind(t) != pickle.KindTuple {
		return "(?)"
	}
	var b strings.Builder
	b.WriteByte('(')
	items := s.Items(t)
	for i, c := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		if s.Kind(c) == pickle.KindInt {
			b.WriteString(itoa(s.Int(c)))
		} else {
			b.WriteByte('?')
		}
	}
	if len(items) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

func tensor(s *pickle.Store, n pickle.ID) string {
	l := "torch.Tensor"
	if x := arg(s, n, 2); x != pickle.NoID {
		l += " " + shapeStr(s, x)
	}
	if p := arg(s, n, 0); p != pickle.NoID && s.Kind(p) == pickle.KindPersID {
		if _, pl := persid(s, p); strings.HasPrefix(pl, "torch ") {
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

// arrayInfo is the dtype and shape of a numpy array or torch tensor node,
// as its label shows them, for the JSON records (ok false for other nodes).
// shape is nil when some dimension is not a plain int.
func (st *StreamTree) arrayInfo(n pickle.ID) (dtype string, shape []int64, ok bool) {
	s := st.Store
	ints := func(t pickle.ID) []int64 {
		if t == pickle.NoID || s.Kind(t) != pickle.KindTuple {
			return nil
		}
		out := make([]int64, 0, s.NItems(t))
		for _, c := range s.Items(t) {
			if s.Kind(c) != pickle.KindInt {
				return nil
			}
			out = append(out, s.Int(c))
		}
		return out
	}
	switch callee(s, n) {
	case "numpy.core.multiarray._reconstruct", "numpy.core.numeric._frombuffer":
		h, ok := st.header(n)
		if !ok {
			return "", nil, true
		}
		return array.Name(h.Descr.Descr), h.Shape, true
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		if d := st.doc; d != nil {
			if tr, ok := d.TensorAt(s, n); ok {
				return tr.Storage.DType, tr.Shape, true
			}
		}
		return "", ints(arg(s, n, 2)), true
	case "torch._utils._rebuild_parameter":
		return "", ints(arg(s, n, 2)), true
	}
	return "", nil, false
}

// fromBytesLabel labels the storage pickle.dump writes, _load_from_bytes(b)
// of a nested torch.save file: "torch FloatStorage key '94…' on cpu, 6
// elements (pickled torch.save bytes)", as a persistent id's label.
func (st *StreamTree) fromBytesLabel(n pickle.ID) (string, bool) {
	d := st.doc
	if d == nil {
		d = &input.Doc{}
	}
	r, ok := d.FromBytesAt(st.Store, n)
	if !ok {
		return "", false
	}
	typ := r.Type
	if i := strings.LastIndexByte(typ, '.'); i >= 0 {
		typ = typ[i+1:]
	}
	return "torch " + typ + " key " + quote(r.Key, -1) + " on " + r.Location + ", " + itoa(r.Numel) + " elements (pickled torch.save bytes)", true
}
