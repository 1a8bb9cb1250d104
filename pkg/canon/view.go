package canon

import (
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Extra node kinds of the normalised view, beyond pickle's.
const (
	// KindPlaceholder stands for a value a profile replaced (co_filename,
	// a function's __file__, a line number); Node.Str() names it.
	KindPlaceholder pickle.Kind = 100 + iota
	// KindTracker stands for one cloudpickle class tracker id: every
	// occurrence of the same id in a stream is the same tracker node.
	KindTracker
)

// KindName names a kind of the view.
func KindName(k pickle.Kind) string {
	switch k {
	case KindPlaceholder:
		return "placeholder"
	case KindTracker:
		return "tracker"
	}
	return k.String()
}

// Rule names, as they appear in Normalization.Rule and in --explain.
const (
	RuleGetattrGlobal = "getattr-global"   // getattr(G, 'x') REDUCE ≡ global G.x (proto < 4 qualnames)
	RuleCodecsBytes   = "codecs-bytes"     // _codecs.encode(s, 'latin1') ≡ bytes (proto ≤ 2)
	RuleBytesReduce   = "bytes-reduce"     // builtins.bytes() ≡ b''
	RuleByteArray     = "bytearray-reduce" // builtins.bytearray(b) ≡ BYTEARRAY8
	RuleSetReduce     = "set-reduce"       // builtins.set([..]) ≡ EMPTY_SET ADDITEMS
	RuleFrozenReduce  = "frozenset-reduce" // builtins.frozenset([..]) ≡ FROZENSET
	RuleNewobj        = "newobj-reduce"    // copyreg.__newobj__ ≡ NEWOBJ
	RuleNewobjEx      = "newobj-ex-reduce" // copyreg.__newobj_ex__ ≡ NEWOBJ_EX
	RuleReconstructor = "reconstructor"    // copyreg._reconstructor(cls, object, None) ≡ cls() NEWOBJ
	RuleTrackerID     = "tracker-id"       // N1
	RuleCoFilename    = "co_filename"      // N2
	RuleGlobalsFile   = "globals-__file__" // N3
	RuleLineno        = "lineno"           // N4 (--strip lineno)
	RuleSetstate      = "setstate-fold"    // cloudpickle _function_setstate/_class_setstate REDUCE+POP
	RuleSetattr       = "setattr-fold"     // dill/builtins setattr(obj, name, v) REDUCE+POP
	RuleDillMain      = "dill-main"        // dill's GLOBAL __builtin__ __main__ at protocol < 3
)

// Normalization is one rule applied at one place; Count says how often it
// applied at that path (the same shared node counts once).
type Normalization struct {
	Rule   string
	Path   string
	Offset int64
	Count  int
	node   *pickle.Node
}

// op is one operation applied to an object after its creation, in the
// canonical form: BUILD, append (APPEND/APPENDS merged), setitems
// (SETITEM/SETITEMS merged), add (ADDITEMS), or a folded call.
type op struct {
	tag    byte   // 'b' build, 'a' append, 's' setitems, 'd' add, 'S' folded setstate, 'A' folded setattr
	name   string // folded: the callable's name without module
	offset int64
	args   []*pickle.Node
	folded *pickle.Node // the folded call node
}

// View is the normalised view of one pickle stream. It does not modify the
// graph: rewritten nodes are replaced by synthetic nodes through a map.
type View struct {
	Stream *pickle.Stream
	Opt    Options

	// The few nodes rules touch are found through maps, each guarded by a
	// bitset by node ID so that the many other nodes cost one bit test.
	repl     map[*pickle.Node]*pickle.Node // rewritten node -> its canonical replacement
	replSet  nodeSet
	extraOps map[*pickle.Node][]op // folded calls, by target
	extraSet nodeSet
	folded   map[*pickle.Node]bool // call nodes folded into their target
	special  map[*pickle.Node]byte // synthetic placeholder ('P') and tracker ('t') nodes
	specSet  nodeSet
	trackers map[string]*pickle.Node
	nsyn     int32
	syn      []*pickle.Node // the synthetic nodes, by ID - len(Stream.All)

	applied []Normalization
	noteIdx map[noteKey]int

	enc   *encState   // lazily built encoding state
	scr   *docScratch // buffers shared by the streams of one input (HashDoc), or nil
	pool  []*scratch
	vn    []*Node  // by node ID: the view's node (see wrap)
	dperm dictPerm // the last dict ordering computed (see dictEntries)
}

type noteKey struct {
	rule string
	n    *pickle.Node
}

// Normalize builds the normalised view of one stream. It never fails: a
// rule whose preconditions do not hold exactly leaves the node as it is.
func Normalize(s *pickle.Stream, opt Options) *View {
	return normalize(s, opt, nil)
}

func normalize(s *pickle.Stream, opt Options, scr *docScratch) *View {
	var v *View
	if scr != nil {
		// the input's previous stream is done with its view
		scr.view = View{Stream: s, Opt: opt, scr: scr}
		v = &scr.view
	} else {
		v = &View{Stream: s, Opt: opt}
	}
	v.nsyn = int32(len(s.All))
	// Creation order: the parts of a call (callable, arguments) are created
	// before it, so inner rewrites are seen by outer ones.
	for _, n := range s.All {
		switch n.Kind {
		case pickle.KindCall:
			v.call(n)
		case pickle.KindGlobal:
			v.dillMain(n)
		case pickle.KindPersID:
			if opt.storageKeys != nil {
				v.storageKey(n)
			}
		}
	}
	if opt.storageKeys != nil {
		v.storageKeyList()
	}
	v.copyKwargs()
	if !opt.Strict {
		for _, n := range s.Popped {
			if n.Kind == pickle.KindCall {
				v.fold(n)
			}
		}
	}
	return v
}

// nodeSet is a bitset of node IDs.
type nodeSet []uint64

func (s nodeSet) has(id int32) bool {
	w := int(id) >> 6
	return id >= 0 && w < len(s) && s[w]&(1<<(uint(id)&63)) != 0
}

func (s *nodeSet) add(id int32) {
	w := int(id) >> 6
	for len(*s) <= w {
		*s = append(*s, 0)
	}
	(*s)[w] |= 1 << (uint(id) & 63)
}

// res returns the canonical replacement of n.
func (v *View) res(n *pickle.Node) *pickle.Node {
	if n == nil || !v.replSet.has(n.ID) {
		return n
	}
	if r, ok := v.repl[n]; ok {
		return r
	}
	return n
}

// setRepl makes with the canonical replacement of n.
func (v *View) setRepl(n, with *pickle.Node) {
	if v.repl == nil {
		v.repl = map[*pickle.Node]*pickle.Node{}
	}
	v.repl[n] = with
	v.replSet.add(n.ID)
}

// specialOf returns 'P' for a placeholder, 't' for a tracker node, else 0.
func (v *View) specialOf(n *pickle.Node) byte {
	if !v.specSet.has(n.ID) {
		return 0
	}
	return v.special[n]
}

// extra returns the folded calls applied to n.
func (v *View) extra(n *pickle.Node) []op {
	if !v.extraSet.has(n.ID) {
		return nil
	}
	return v.extraOps[n]
}

func (v *View) note(rule string, n *pickle.Node) {
	k := noteKey{rule, n}
	if i, ok := v.noteIdx[k]; ok {
		v.applied[i].Count++
		return
	}
	if v.noteIdx == nil {
		v.noteIdx = map[noteKey]int{}
	}
	v.noteIdx[k] = len(v.applied)
	v.applied = append(v.applied, Normalization{Rule: rule, Offset: n.Offset, Count: 1, node: n})
}

func (v *View) synth(k pickle.Kind, like *pickle.Node) *pickle.Node {
	n := &pickle.Node{Kind: k, ID: v.nsyn, Offset: like.Offset, Op: like.Op}
	v.nsyn++
	v.syn = append(v.syn, n)
	return n
}

// byID returns the node (of the stream or synthetic) with this ID.
func (v *View) byID(id int32) *pickle.Node {
	if n := int32(len(v.Stream.All)); id >= n {
		return v.syn[id-n]
	}
	return v.Stream.All[id]
}

// global returns (module, name) of a node that is a plain resolved global.
func (v *View) global(n *pickle.Node) (string, string, bool) {
	n = v.res(n)
	if n == nil || n.Kind != pickle.KindGlobal || n.Flags&(pickle.FlagDynamic|pickle.FlagDotted) != 0 || len(n.Muts()) > 0 {
		return "", "", false
	}
	return n.Str, n.Name(), true
}

// tuple returns the items of n when it is a plain tuple.
func (v *View) tuple(n *pickle.Node) ([]*pickle.Node, bool) {
	n = v.res(n)
	if n == nil || n.Kind != pickle.KindTuple || len(n.Muts()) > 0 {
		return nil, false
	}
	return n.Items, true
}

// str returns the value of n when it is an inline str.
func (v *View) str(n *pickle.Node) (string, bool) {
	n = v.res(n)
	if n == nil || n.Kind != pickle.KindStr || n.Blob() != nil || len(n.Muts()) > 0 || v.specialOf(n) != 0 {
		return "", false
	}
	return n.Str, true
}

func (v *View) isNone(n *pickle.Node) bool {
	n = v.res(n)
	return n != nil && n.Kind == pickle.KindNone
}

var cpPrefixes = []string{"cloudpickle", "joblib.externals.cloudpickle", "ray.cloudpickle", "pyspark.cloudpickle", "apache_beam.internal.cloudpickle", "srsly.cloudpickle"}

// cloudpickleName returns the name of a cloudpickle function (any version,
// any vendored copy), or "".
func cloudpickleName(mod, name string) string {
	for _, p := range cpPrefixes {
		if mod == p || mod == p+".cloudpickle" || mod == p+".cloudpickle_fast" {
			return name
		}
	}
	return ""
}

func dillName(mod, name string) string {
	if mod == "dill._dill" || mod == "dill.dill" || mod == "dill" {
		return name
	}
	return ""
}

// callable classifies the callable of a call node: "std:<module.name>",
// "cp:<name>", "dill:<name>", or "" when it is not a plain global.
func (v *View) callable(fn *pickle.Node) string { return v.callableAt(fn, false) }

// callableAt is callable; inner is set for the callable of a
// _builtin_type/_load_type call, which must be a global: one level only, so
// a chain f()()()... costs one step per call, not the chain's length.
func (v *View) callableAt(fn *pickle.Node, inner bool) string {
	mod, name, ok := v.global(fn)
	if !ok {
		if inner {
			return ""
		}
		// cloudpickle _builtin_type('X') / dill _load_type('X') stand for types.X.
		c := v.res(fn)
		if c == nil || c.Kind != pickle.KindCall || c.Op != pickle.REDUCE || len(c.Muts()) > 0 {
			return ""
		}
		in := v.callableAt(c.Func(), true)
		args, ok := v.tuple(c.Args())
		if !ok || len(args) != 1 || (in != "cp:_builtin_type" && in != "dill:_load_type") {
			return ""
		}
		s, ok := v.str(args[0])
		if !ok {
			return ""
		}
		if in == "dill:_load_type" && !strings.HasSuffix(s, "Type") {
			// dill's _reverse_typemap: builtin type names ('bytes', 'list') and
			// the types module's *Type names.
			return "std:builtins." + s
		}
		return "std:types." + s
	}
	if cp := cloudpickleName(mod, name); cp != "" {
		return "cp:" + cp
	}
	if d := dillName(mod, name); d != "" {
		return "dill:" + d
	}
	return "std:" + mod + "." + name
}

// call applies the rules whose trigger is the callable of call node n.
func (v *View) call(n *pickle.Node) {
	if n.Op != pickle.REDUCE || n.Kwargs() != nil {
		return
	}
	args, ok := v.tuple(n.Args())
	if !ok {
		return
	}
	noMuts := len(n.Muts()) == 0
	who := v.callable(n.Func())
	if who == "" && len(args) == 0 {
		v.partialNewobjEx(n, args)
	}
	switch who {
	case "std:builtins.getattr":
		if !noMuts || len(args) != 2 {
			return
		}
		mod, name, ok1 := v.global(args[0])
		attr, ok2 := v.str(args[1])
		if !ok1 || !ok2 || attr == "" {
			return
		}
		g := v.synth(pickle.KindGlobal, n)
		g.Str = mod
		g.X = &pickle.Extra{Name: name + "." + attr}
		v.replace(n, g, RuleGetattrGlobal)
	case "std:_codecs.encode":
		if !noMuts || len(args) != 2 {
			return
		}
		s, ok1 := v.str(args[0])
		enc, ok2 := v.str(args[1])
		if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1") {
			return
		}
		b, ok := latin1(s)
		if !ok {
			return
		}
		y := v.synth(pickle.KindBytes, n)
		y.Str = b
		v.replace(n, y, RuleCodecsBytes)
	case "std:builtins.bytes":
		if noMuts && len(args) == 0 {
			v.replace(n, v.synth(pickle.KindBytes, n), RuleBytesReduce)
		}
	case "std:builtins.bytearray":
		if !noMuts || len(args) > 1 {
			return
		}
		y := v.synth(pickle.KindByteArray, n)
		if len(args) == 1 {
			b := v.res(args[0])
			if b.Kind != pickle.KindBytes || len(b.Muts()) > 0 {
				return
			}
			y.Str = b.Str
			if b.Blob() != nil {
				y.X = &pickle.Extra{Blob: b.Blob()}
			}
		}
		v.replace(n, y, RuleByteArray)
	case "std:builtins.set", "std:builtins.frozenset":
		if !noMuts || len(args) > 1 {
			return
		}
		k, rule := pickle.KindSet, RuleSetReduce
		if who == "std:builtins.frozenset" {
			k, rule = pickle.KindFrozenSet, RuleFrozenReduce
		}
		y := v.synth(k, n)
		if len(args) == 1 {
			l := v.res(args[0])
			if l.Kind != pickle.KindList || len(l.Muts()) > 0 {
				return
			}
			for _, it := range l.Items {
				// An item created after the call was appended after it: the
				// set does not hold it. (An older item appended later through
				// the memo is not detectable here; see the spec.)
				if it.ID > n.ID {
					return
				}
			}
			y.Items = l.Items
		}
		v.replace(n, y, rule)
	case "std:copyreg.__newobj__":
		if len(args) < 1 {
			return
		}
		c := v.copyCall(n, pickle.NEWOBJ)
		c.X.Func = args[0]
		t := v.synth(pickle.KindTuple, n)
		t.Items = args[1:]
		c.X.Args = t
		v.replace(n, c, RuleNewobj)
	case "std:copyreg.__newobj_ex__":
		if len(args) != 3 {
			return
		}
		c := v.copyCall(n, pickle.NEWOBJ_EX)
		c.X.Func, c.X.Args, c.X.Kwargs = args[0], args[1], args[2]
		v.replace(n, c, RuleNewobjEx)
	case "std:copyreg._reconstructor":
		if len(args) != 3 || !v.isNone(args[2]) {
			return
		}
		if mod, name, ok := v.global(args[1]); !ok || mod != "builtins" || name != "object" {
			return
		}
		c := v.copyCall(n, pickle.NEWOBJ)
		c.X.Func = args[0]
		c.X.Args = v.synth(pickle.KindTuple, n)
		v.replace(n, c, RuleReconstructor)
	}
	if v.Opt.Strict {
		return
	}
	switch who {
	case "cp:_make_skeleton_class":
		v.tracker(n, args, 4)
	case "cp:_make_skeleton_enum", "cp:_make_typevar":
		v.tracker(n, args, 5)
	case "std:types.CodeType", "dill:_create_code":
		v.code(n, args, who == "dill:_create_code")
	case "cp:_make_function", "std:types.LambdaType", "std:types.FunctionType":
		if who != "cp:_make_function" && !v.isCloudpickleLambda(n.Func()) {
			return
		}
		if len(args) >= 2 {
			v.globalsFile(args[1])
		}
	}
}

// dillMain: dill writes a raw GLOBAL "__builtin__ __main__" for the main
// module's dict, which dill's Unpickler.find_class recognises before the
// Python 2 name mapping; at protocol < 3 the machine has mapped it to
// builtins.__main__. The profile undoes the mapping for this one name.
func (v *View) dillMain(n *pickle.Node) {
	if v.Opt.Strict || n.Flags&pickle.FlagMapped == 0 || n.Str != "builtins" || n.Name() != "__main__" || len(n.Muts()) > 0 {
		return
	}
	g := v.synth(pickle.KindGlobal, n)
	g.Str = "__builtin__"
	g.X = &pickle.Extra{Name: "__main__"}
	v.replace(n, g, RuleDillMain)
}

// isCloudpickleLambda: cloudpickle < 2.1 wrote _builtin_type('LambdaType').
func (v *View) isCloudpickleLambda(fn *pickle.Node) bool {
	c := v.res(fn)
	if c == nil || c.Kind != pickle.KindCall {
		return false
	}
	return v.callable(c.Func()) == "cp:_builtin_type"
}

func latin1(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return "", false
		}
		b = append(b, byte(r))
	}
	if len(b) == 0 {
		return "", true
	}
	return string(b), true
}

func (v *View) replace(n, with *pickle.Node, rule string) {
	v.setRepl(n, with)
	v.note(rule, n)
}

// copyCall returns a synthetic copy of call n with opcode form o.
func (v *View) copyCall(n *pickle.Node, o pickle.Opcode) *pickle.Node {
	c := v.synth(pickle.KindCall, n)
	c.Op = o
	c.Flags = n.Flags
	c.X = &pickle.Extra{Func: n.Func(), Args: n.Args(), Kwargs: n.Kwargs(), Muts: n.Muts()}
	return c
}

// withArgs replaces call n (or its current replacement) by a copy whose
// argument tuple is args.
func (v *View) withArgs(n *pickle.Node, args []*pickle.Node) {
	cur := v.res(n)
	c := v.synth(pickle.KindCall, n)
	c.Op = cur.Op
	c.Flags = cur.Flags
	t := v.synth(pickle.KindTuple, cur.Args())
	t.Items = args
	c.X = &pickle.Extra{Func: cur.Func(), Args: t, Kwargs: cur.Kwargs(), Muts: cur.Muts()}
	v.setRepl(n, c)
}

// tracker applies N1: the class tracker id at args[i] becomes the tracker
// node of that id (one per distinct id in the stream).
func (v *View) tracker(n *pickle.Node, args []*pickle.Node, i int) {
	if len(args) <= i {
		return
	}
	id, ok := v.str(args[i])
	if !ok {
		return
	}
	if v.trackers == nil {
		v.trackers = map[string]*pickle.Node{}
	}
	t := v.trackers[id]
	if t == nil {
		t = v.synth(KindTracker, args[i])
		t.Int = int64(len(v.trackers))
		v.mark(t, 't')
		v.trackers[id] = t
	}
	na := append([]*pickle.Node(nil), args...)
	na[i] = t
	v.withArgs(n, na)
	v.note(RuleTrackerID, n)
}

func (v *View) mark(n *pickle.Node, b byte) {
	if v.special == nil {
		v.special = map[*pickle.Node]byte{}
	}
	v.special[n] = b
	v.specSet.add(n.ID)
}

func (v *View) placeholder(like *pickle.Node, name string) *pickle.Node {
	p := v.synth(KindPlaceholder, like)
	p.Str = name
	v.mark(p, 'P')
	return p
}

// code applies N2 (co_filename) and N4 (co_firstlineno, opt-in) to a code
// object built by types.CodeType (possibly reached through cloudpickle's
// _builtin_type or dill's _load_type) or dill's _create_code. The argument
// positions depend on the Python version, told by the number of arguments.
func (v *View) code(n *pickle.Node, args []*pickle.Node, dill bool) {
	var file, line int
	switch {
	case !dill && len(args) == 15: // 3.7 and older 3.x: no posonlyargcount
		file, line = 9, 11
	case !dill && len(args) == 16: // 3.8-3.10
		file, line = 10, 12
	case !dill && len(args) == 18: // 3.11+
		file, line = 10, 13
	case dill && len(args) == 16: // 3.8/3.9
		file, line = 10, 12
	case dill && len(args) == 17: // 3.10: co_lnotab first
		file, line = 11, 13
	case dill && (len(args) == 19 || len(args) == 20): // 3.11+
		file, line = 11, 14
	default:
		return
	}
	na := append([]*pickle.Node(nil), args...)
	changed := false
	if _, ok := v.str(na[file]); ok {
		na[file] = v.placeholder(na[file], "co_filename")
		v.note(RuleCoFilename, n)
		changed = true
	}
	if v.Opt.StripLineno {
		if l := v.res(na[line]); l.Kind == pickle.KindInt && len(l.Muts()) == 0 {
			na[line] = v.placeholder(na[line], "lineno")
			v.note(RuleLineno, n)
			changed = true
		}
	}
	if changed {
		v.withArgs(n, na)
	}
}

// globalsFile applies N3: the __file__ entry of the base globals dict of a
// cloudpickle function becomes a placeholder. The dict is replaced
// everywhere it is referenced (cloudpickle shares it between the functions
// of one module).
func (v *View) globalsFile(d *pickle.Node) {
	if r := v.res(d); r != d {
		return // already rewritten through another function
	}
	if d.Kind != pickle.KindDict || len(d.Muts()) > 0 {
		return
	}
	v.dictPlaceholder(d, "__file__", "__file__", RuleGlobalsFile)
}

// dictPlaceholder replaces the value of str key `key` of plain dict d.
func (v *View) dictPlaceholder(d *pickle.Node, key, name, rule string) bool {
	idx := -1
	for i := 0; i+1 < len(d.Items); i += 2 {
		if s, ok := v.str(d.Items[i]); ok && s == key {
			idx = i + 1
		}
	}
	if idx < 0 {
		return false
	}
	c := v.synth(pickle.KindDict, d)
	c.Flags = d.Flags
	c.Items = append([]*pickle.Node(nil), d.Items...)
	c.Items[idx] = v.placeholder(d.Items[idx], name)
	v.setRepl(d, c)
	v.note(rule, d)
	return true
}

// fold turns the calls producers emit only for their side effect on an
// object (REDUCE then POP) into an operation on that object.
func (v *View) fold(n *pickle.Node) {
	if n.Op != pickle.REDUCE || n.Flags&pickle.FlagMemo != 0 || len(n.Muts()) > 0 || v.res(n) != n {
		return
	}
	args, ok := v.tuple(n.Args())
	if !ok {
		return
	}
	who := v.callable(n.Func())
	var o op
	switch who {
	case "cp:_function_setstate", "cp:_class_setstate":
		if len(args) != 2 {
			return
		}
		o = op{tag: 'S', name: who[3:], args: []*pickle.Node{args[1]}}
		if who == "cp:_class_setstate" && v.Opt.StripLineno {
			v.classLineno(args[1])
		}
	case "std:builtins.setattr", "dill:_setattr":
		if len(args) != 3 {
			return
		}
		if _, ok := v.str(args[1]); !ok {
			return
		}
		o = op{tag: 'A', name: "setattr", args: []*pickle.Node{args[1], args[2]}}
	default:
		return
	}
	target := v.res(args[0])
	if target.Kind != pickle.KindCall {
		return
	}
	o.offset, o.folded = n.Offset, n
	if v.extraOps == nil {
		v.extraOps = map[*pickle.Node][]op{}
		v.folded = map[*pickle.Node]bool{}
	}
	v.extraOps[target] = append(v.extraOps[target], o)
	v.extraSet.add(target.ID)
	v.folded[n] = true
	if o.tag == 'S' {
		v.note(RuleSetstate, n)
	} else {
		v.note(RuleSetattr, n)
	}
}

// classLineno applies N4 to the class dict of a _class_setstate state
// (clsdict, slotstate): Python 3.13 stores __firstlineno__ there.
func (v *View) classLineno(state *pickle.Node) {
	st, ok := v.tuple(state)
	if !ok || len(st) < 1 {
		return
	}
	d := st[0]
	if v.res(d) != d || d.Kind != pickle.KindDict || len(d.Muts()) > 0 {
		return
	}
	v.dictPlaceholder(d, "__firstlineno__", "lineno", RuleLineno)
}

// ops returns the canonical operations applied to n after its creation:
// consecutive APPEND/APPENDS, SETITEM/SETITEMS and ADDITEMS merged, folded
// calls merged in by stream offset. Its cost is linear in the operations
// and their arguments (a run of 200,000 SETITEMs is one operation, its
// arguments gathered in one slice).
func (v *View) ops(n *pickle.Node) []op {
	muts := n.Muts()
	extra := v.extra(n)
	if len(muts) == 0 && len(extra) == 0 {
		return nil
	}
	out := make([]op, 0, len(muts)+len(extra))
	j := 0
	for i := 0; i < len(muts); {
		m := muts[i]
		for j < len(extra) && extra[j].offset < m.Offset {
			out = append(out, extra[j])
			j++
		}
		tag := mutTag(m.Op)
		// the run of operations merged with this one: same tag, no folded
		// call in between
		k := i + 1
		if tag != 'b' {
			for k < len(muts) && mutTag(muts[k].Op) == tag && (j >= len(extra) || extra[j].offset >= muts[k].Offset) {
				k++
			}
		}
		if k == i+1 {
			out = append(out, op{tag: tag, offset: m.Offset, args: m.Args})
		} else {
			total := 0
			for _, r := range muts[i:k] {
				total += len(r.Args)
			}
			args := make([]*pickle.Node, 0, total)
			for _, r := range muts[i:k] {
				args = append(args, r.Args...)
			}
			out = append(out, op{tag: tag, offset: m.Offset, args: args})
		}
		i = k
	}
	out = append(out, extra[j:]...)
	return out
}

func mutTag(o pickle.Opcode) byte {
	switch o {
	case pickle.BUILD:
		return 'b'
	case pickle.APPEND, pickle.APPENDS:
		return 'a'
	case pickle.SETITEM, pickle.SETITEMS:
		return 's'
	case pickle.ADDITEMS:
		return 'd'
	}
	return '?'
}

// Applied returns every normalisation applied, in stream order of the node
// it applied to, with its path from the root.
func (v *View) Applied() []Normalization {
	if len(v.applied) == 0 {
		return nil
	}
	paths := v.pathsOf()
	out := make([]Normalization, len(v.applied))
	for i, a := range v.applied {
		a.Path = paths[a.node]
		if a.Path == "" {
			a.Path = "<not reachable from the result>"
		}
		out[i] = a
	}
	return out
}
