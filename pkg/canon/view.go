package canon

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/internal/grow"
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
	case KindArray:
		return "array"
	case KindStorage:
		return "storage"
	}
	return k.String()
}

// Rule names, as they appear in Normalization.Rule and in --explain.
const (
	RuleGetattrGlobal = "getattr-global"    // getattr(G, 'x') REDUCE ≡ global G.x (proto < 4 qualnames)
	RuleCodecsBytes   = "codecs-bytes"      // _codecs.encode(s, 'latin1') ≡ bytes (proto ≤ 2)
	RuleBytesReduce   = "bytes-reduce"      // builtins.bytes() ≡ b''
	RuleByteArray     = "bytearray-reduce"  // builtins.bytearray(b) ≡ BYTEARRAY8
	RuleSetReduce     = "set-reduce"        // builtins.set([..]) ≡ EMPTY_SET ADDITEMS
	RuleFrozenReduce  = "frozenset-reduce"  // builtins.frozenset([..]) ≡ FROZENSET
	RuleNewobj        = "newobj-reduce"     // copyreg.__newobj__ ≡ NEWOBJ
	RuleNewobjEx      = "newobj-ex-reduce"  // copyreg.__newobj_ex__ ≡ NEWOBJ_EX
	RuleReconstructor = "reconstructor"     // copyreg._reconstructor(cls, object, None) ≡ cls() NEWOBJ
	RuleTrackerID     = "tracker-id"        // N1
	RuleCoFilename    = "co_filename"       // N2
	RuleGlobalsFile   = "globals-__file__"  // N3
	RuleLineno        = "lineno"            // N4 (--strip lineno)
	RuleSetstate      = "setstate-fold"     // cloudpickle _function_setstate/_class_setstate REDUCE+POP
	RuleSetattr       = "setattr-fold"      // dill/builtins setattr(obj, name, v) REDUCE+POP
	RuleDillMain      = "dill-main"         // dill's GLOBAL __builtin__ __main__ at protocol < 3
	RuleEnumOrder     = "enum-members"      // pk-canon/2: _make_skeleton_enum's members keep their order
	RuleDillFile      = "dill-globals-file" // pk-canon/2: __file__/__cached__ of the globals dill writes by value
)

// Normalization is one rule applied at one place; Count says how often it
// applied at that path (the same shared node counts once).
type Normalization struct {
	Rule   string
	Path   string
	Offset int64
	Count  int
	node   pickle.ID
}

// op is one operation applied to an object after its creation, in the
// canonical form: BUILD, append (APPEND/APPENDS merged), setitems
// (SETITEM/SETITEMS merged), add (ADDITEMS), or a folded call.
type op struct {
	// (in this order 56 bytes, not 64: an object of 700,000 BUILDs has as
	// many operations)
	name   string // folded: the callable's name without module
	offset int64
	args   []pickle.ID
	folded pickle.ID // the folded call node
	tag    byte      // 'b' build, 'a' append, 's' setitems, 'd' add, 'S' folded setstate, 'A' folded setattr
}

// View is the normalised view of one pickle stream. It does not modify the
// stream's store: rewritten nodes are replaced by synthetic nodes (in a
// store of the view's own, see nodes.go) through a map.
type View struct {
	Stream *pickle.Stream
	Opt    Options

	s    *pickle.Store // the stream's nodes
	base pickle.ID     // s.Len(): the first synthetic ID
	// cls, by stream node ID: its kind and whether it has operations
	// (nodeClass), a byte where the store's record is 40: the encoding
	// classifies and walks most nodes without reading their records. Set
	// once normalize has walked the stream (nil before, and in the canon
	// sink's views of a store still being read: then the store answers).
	cls    []nodeClass
	x      pickle.Store            // the synthetic nodes, by ID - base
	xstr   map[pickle.ID]string    // their texts (placeholder names, rewritten globals and bytes)
	xspec  []byte                  // their role: 'P' placeholder, 't' tracker, by ID - base
	pnames []string                // placeholder names
	xmut   map[pickle.ID]pickle.ID // a synthetic call -> the stream's node whose operations it has

	// The few nodes rules touch are found through maps, each guarded by a
	// bitset by node ID so that the many other nodes cost one bit test.
	repl    map[pickle.ID]pickle.ID // rewritten node -> its canonical replacement (while normalize runs)
	replSet nodeSet
	// the replacements once normalize is done (freezeRepl): replVal in the
	// order of the nodes' IDs, a node's found by the rank of its bit in
	// replSet (replRank: the bits set in the words before). res runs at
	// every child of every walk, and a cloudpickle state's 25,000
	// replacements (each function's tracker, placeholders) are read
	// through it about 30 times each: a map lookup was 3 % of pk hash
	replRank  []int32
	replVal   []pickle.ID
	folds     []fold // folded calls, sorted by target once normalize is done (each target's in the order they were folded)
	extraSet  nodeSet
	folded    nodeSet // call nodes folded into their target
	trackers  map[string]pickle.ID
	names     map[string]string // callable names (intern)
	whoOf     *whoCache         // the callables of the globals callable classified last, by ID modulo 64
	argBuf    []pickle.ID       // the items of a rewritten tuple or dict, before setKids copies them
	nameBuf   []byte
	nsyn      int32                      // base + the synthetic nodes: the size of the tables by ID
	walked    pickle.ID                  // while normalize walks the stream's nodes, how many it has: the synthetic store grows to the count projected from it (Store.Reserve)
	arrCand   []pickle.ID                // calls of numpy callables (Form2, array.go)
	arr       map[pickle.ID]*Array       // the array nodes (Form2)
	pidCand   []pickle.ID                // persistent ids (Form2, tensor.go)
	storByKey map[string]pickle.ID       // the storage node of each torch storage key
	stor      map[pickle.ID]*Storage     // the storage nodes (Form2)
	latin1Src map[pickle.ID]*pickle.Blob // codecsBlob's bytes -> the str blob they were read from
	latin1Of  map[pickle.ID]*pickle.Blob // a streamed str -> its latin-1 blob (nil: not latin-1)
	nested    map[pickle.ID]*Storage     // _load_from_bytes: a bytes node -> its storage (nil: not one)
	dataDig   map[pickle.ID][]byte       // an array's data node -> the digest of its bytes
	arrR      *array.Reader              // the array recognizer (arrayReader)
	foreigns  map[pickle.ID]*View        // joblib object arrays: the view of the nested pickle
	ordered   nodeSet                    // plain dicts encoded in insertion order (Form2: enum members)
	rr        *docReread                 // where streamed payloads are read again (reread.go), or nil
	rrPart    int                        // the part of the input rr reads this stream's payloads from
	rerr      error                      // a payload read again failed or differed (Digest reports it)

	applied []Normalization // without NoPaths: per (rule, node)
	noteIdx map[noteKey]int
	tally   ruleTally // with NoPaths: per rule

	enc         *encState   // lazily built encoding state
	scr         *docScratch // buffers shared by the streams of one input (HashDoc), or nil
	pool        []*scratch
	vn          []*Node    // by node ID: the view's node (see wrap)
	fresh       bool       // wrap keeps no node (FreshNodes)
	loose       bool       // and gives it no parent (SetLooseNodes)
	looseRecent []*Node    // the loose nodes made last, by ID modulo its length
	looseSlab   []Node     // where the next loose nodes are made (looseNode)
	dperm       *dictPerms // the last dict orderings computed (see dictEntries)
	// refold: the canon sink folded runs of this stream that a rule may
	// read (fold.go): Digest reports errRefold
	refold bool
	// denseOrds: the main encoder keeps its ordinals in pslot (Digest met
	// a node reached twice that sparseOrds did not foresee)
	denseOrds bool
	// ents: the entries of folded runs of dicts read while encoding
	// (fold.go's entries), their keys' bytes in entKeys
	ents    []foldEnt
	entKeys []byte
	// foldEff: the folded runs that hold calls, operations or globals;
	// the result must cover them (encodeStream)
	foldEff []pickle.ID
}

// fold is a folded call and the object it applies to; its op is built
// when the encoding reads it (foldOp), so a state of 50,000 functions
// holds 12 bytes a fold.
type fold struct {
	target, call pickle.ID
	fn           uint8 // foldFunctionSetstate, foldClassSetstate, foldSetattr
}

const (
	foldFunctionSetstate = iota
	foldClassSetstate
	foldSetattr
)

// foldOp returns the operation of a folded call.
func (v *View) foldOp(f fold) op {
	n := f.call
	args, _ := v.tuple(v.argsOf(n))
	o := op{offset: v.offset(n), folded: n}
	switch f.fn {
	case foldFunctionSetstate, foldClassSetstate:
		o.tag, o.args = 'S', v.argsSlice(n, args[1:2])
		o.name = "_function_setstate"
		if f.fn == foldClassSetstate {
			o.name = "_class_setstate"
		}
	default:
		o.tag, o.name, o.args = 'A', "setattr", v.argsSlice(n, args[1:3])
	}
	return o
}

type noteKey struct {
	rule string
	n    pickle.ID
}

// Normalize builds the normalised view of one stream. It never fails: a
// rule whose preconditions do not hold exactly leaves the node as it is.
func Normalize(s *pickle.Stream, opt Options) *View {
	return normalize(s, opt, nil)
}

func normalize(st *pickle.Stream, opt Options, scr *docScratch) *View {
	var v *View
	if scr != nil {
		// the input's previous stream is done with its view
		xstr := scr.view.xstr
		if len(xstr) > 256 {
			xstr = nil // clearing a large map costs its size at every stream
		}
		clear(xstr)
		// its scratches and dict orderings are kept for this one (a file
		// of 200,000 small pickles made them 200,000 times over, a
		// third of what pk canon allocated): the orderings forgotten, as
		// they name the other store's nodes, and a scratch that grew
		// large let go
		pool, dperm := keptScratch(scr.view.pool), scr.view.dperm
		if dperm != nil {
			dperm.forget()
		}
		scr.view = View{Stream: st, Opt: opt, scr: scr, xstr: xstr, xspec: scr.view.xspec[:0], pool: pool, dperm: dperm}
		v = &scr.view
	} else {
		v = &View{Stream: st, Opt: opt}
	}
	switch d := opt.arrays; {
	case d != nil && opt.src == "":
		v.rr, v.rrPart = d.rr, d.part
	case opt.nestedRR != nil:
		v.rr, v.rrPart = opt.nestedRR.d, opt.nestedRR.part
	}
	s := st.Store()
	v.s = s
	v.base = pickle.ID(s.Len())
	v.nsyn = int32(v.base)
	var cls []nodeClass
	if scr != nil {
		cls = grow.Reuse(scr.cls, int(v.base))
		scr.cls = cls
	} else {
		cls = make([]nodeClass, v.base)
	}
	// Creation order: the parts of a call (callable, arguments) are created
	// before it, so inner rewrites are seen by outer ones.
	argsBad := false // (foldArgs)
	for id := pickle.ID(0); id < v.base; id++ {
		v.walked = id
		k := s.Kind(id)
		nm := s.NMuts(id)
		cls[id] = classOf(k, nm)
		argsBad = argsBad || nm > 0 && opt.fold != nil && s.Flags(id)&flagFoldDep != 0
		switch k {
		case pickle.KindCall:
			v.call(id)
			v.arrayCandidate(id)
		case pickle.KindGlobal:
			v.dillMain(id)
		case pickle.KindPersID:
			if opt.storageKeys != nil {
				v.storageKey(id)
			}
			v.storageCandidate(id)
		case pickle.KindFolded:
			if s.Flags(id)&pickle.FlagFoldArgs != 0 {
				// a code object's arguments (fold.go, foldArgs): read
				// again after they were folded, the stream is hashed again
				argsBad = argsBad || s.Flags(id)&pickle.FlagShared != 0
				break
			}
			v.refold = true
			foldSeen.Add(1)
			if s.Flags(id)&pickle.FlagFoldEffects != 0 {
				v.foldEff = append(v.foldEff, id)
			}
		}
	}
	v.walked = 0 // (from here the synthetic store doubles)
	v.cls = cls
	v.refold = v.refold && spoiled(s) || argsBad
	if opt.storageKeys != nil {
		v.storageKeyList()
	}
	if opt.v2() {
		v.arrays()
	}
	v.copyKwargs()
	if !opt.Strict {
		// (folds sized once for the calls that may fold: appended to one at
		// a time, a cloudpickle state's 25,600 were copied through a series
		// of doublings, each a fresh array, 6 ms of page faults and copies)
		calls := 0
		for _, id := range s.Popped {
			if s.Kind(id) == pickle.KindCall {
				calls++
			}
		}
		v.folds = grow.Room(v.folds, calls)
		for _, id := range s.Popped {
			if s.Kind(id) == pickle.KindCall {
				v.fold(id)
			}
		}
		v.sortFolds()
	}
	v.refold = v.refold || opt.fold != nil && v.replacedDep()
	v.freezeRepl()
	return v
}

// nodeSet is a bitset of node IDs.
type nodeSet []uint64

func (s nodeSet) has(id pickle.ID) bool {
	w := int(id) >> 6
	return id >= 0 && w < len(s) && s[w]&(1<<(uint(id)&63)) != 0
}

func (s *nodeSet) add(id pickle.ID) {
	w := int(id) >> 6
	if len(*s) <= w {
		*s = append(*s, make([]uint64, max(w+1-len(*s), len(*s)))...) // doubling
	}
	(*s)[w] |= 1 << (uint(id) & 63)
}

// res returns the canonical replacement of n.
func (v *View) res(n pickle.ID) pickle.ID {
	// (replSet.has written out, and the frozen table read here, so that
	// res, at every child of every walk, is inlined; a negative n is a
	// huge uint)
	if w := uint(n) >> 6; w < uint(len(v.replSet)) {
		if b := v.replSet[w]; b&(1<<(uint(n)&63)) != 0 {
			if v.replRank == nil {
				return v.repl[n]
			}
			return v.replVal[int(v.replRank[w])+bits.OnesCount64(b<<(63-uint(n)&63)<<1)]
		}
	}
	return n
}

// setRepl makes with the canonical replacement of n.
func (v *View) setRepl(n, with pickle.ID) {
	if v.replRank != nil {
		v.thawRepl() // (every rule runs in normalize: not reached)
	}
	if v.repl == nil {
		v.repl = map[pickle.ID]pickle.ID{}
	}
	v.repl[n] = with
	v.replSet.add(n)
}

// freezeRepl moves the replacements from the map to replRank and replVal
// (see View.repl), once no rule adds any.
func (v *View) freezeRepl() {
	if len(v.repl) == 0 {
		return
	}
	v.replRank = make([]int32, len(v.replSet))
	v.replVal = make([]pickle.ID, 0, len(v.repl))
	for w, b := range v.replSet {
		v.replRank[w] = int32(len(v.replVal))
		for ; b != 0; b &= b - 1 {
			n := pickle.ID(w<<6 | bits.TrailingZeros64(b))
			v.replVal = append(v.replVal, v.repl[n])
		}
	}
	v.repl = nil
}

// thawRepl is the reverse of freezeRepl.
func (v *View) thawRepl() {
	v.repl = make(map[pickle.ID]pickle.ID, len(v.replVal))
	for w, b := range v.replSet {
		for ; b != 0; b &= b - 1 {
			n := pickle.ID(w<<6 | bits.TrailingZeros64(b))
			v.repl[n] = v.res(n)
		}
	}
	v.replRank, v.replVal = nil, nil
}

// specialOf returns 'P' for a placeholder, 't' for a tracker node, else 0.
func (v *View) specialOf(n pickle.ID) byte {
	if n < v.base {
		return 0
	}
	return v.xspec[n-v.base]
}

// extra returns the calls folded into n (see foldOp).
func (v *View) extra(n pickle.ID) []fold {
	if !v.extraSet.has(n) {
		return nil
	}
	// (the first fold of n, by binary search written out: BinarySearchFunc
	// called its comparison, about 500 instructions a search)
	i, hi := 0, len(v.folds)
	for i < hi {
		if m := int(uint(i+hi) >> 1); v.folds[m].target < n {
			i = m + 1
		} else {
			hi = m
		}
	}
	j := i
	for j < len(v.folds) && v.folds[j].target == n {
		j++
	}
	return v.folds[i:j:j]
}

// sortFolds orders the folded calls by target, each target's in the order
// they were folded.
func (v *View) sortFolds() {
	slices.SortStableFunc(v.folds, func(a, b fold) int { return cmp.Compare(a.target, b.target) })
}

// ruleTally counts the normalisations of a view with NoPaths, per rule:
// nothing per node (a state of 50,000 functions applies 100,000 of them).
// The rules are few: a linear search finds one.
type ruleTally []Normalization // Rule, Offset of the first application, Count

func (t *ruleTally) add(rule string, off func() int64) {
	for i := range *t {
		if (*t)[i].Rule == rule {
			(*t)[i].Count++
			return
		}
	}
	*t = append(*t, Normalization{Rule: rule, Offset: off(), Count: 1})
}

// list returns one Normalization per rule (Count the total, Offset the
// first application's, no Path), in order of first application.
func (t ruleTally) list() []Normalization {
	if len(t) == 0 {
		return nil
	}
	return slices.Clone([]Normalization(t))
}

// merge adds the tally to a list of per-rule totals (Result.Applied with
// NoPaths: one entry per rule over all streams).
func (t ruleTally) merge(out []Normalization) []Normalization {
	for _, a := range t {
		j := 0
		for j < len(out) && out[j].Rule != a.Rule {
			j++
		}
		if j == len(out) {
			out = append(out, Normalization{Rule: a.Rule, Offset: a.Offset})
		}
		out[j].Count += a.Count
	}
	return out
}

func (v *View) note(rule string, n pickle.ID) {
	if v.Opt.NoPaths {
		v.tally.add(rule, func() int64 { return v.offset(n) })
		return
	}
	k := noteKey{rule, n}
	if i, ok := v.noteIdx[k]; ok {
		v.applied[i].Count++
		return
	}
	if v.noteIdx == nil {
		v.noteIdx = map[noteKey]int{}
	}
	v.noteIdx[k] = len(v.applied)
	v.applied = append(v.applied, Normalization{Rule: rule, Offset: v.offset(n), Count: 1, node: n})
}

// global returns (module, name) of a node that is a plain resolved global.
func (v *View) global(n pickle.ID) (string, string, bool) {
	n = v.res(n)
	if n < 0 || v.kind(n) != pickle.KindGlobal || v.flags(n)&(pickle.FlagDynamic|pickle.FlagDotted) != 0 || v.nmuts(n) > 0 {
		return "", "", false
	}
	return v.text(n), v.name(n), true
}

// tuple returns the items of n when it is a plain tuple.
func (v *View) tuple(n pickle.ID) ([]pickle.ID, bool) {
	n = v.res(n)
	if n < 0 || v.kind(n) != pickle.KindTuple || v.nmuts(n) > 0 {
		return nil, false
	}
	return v.items(n), true
}

// str returns the value of n when it is an inline str.
func (v *View) str(n pickle.ID) (string, bool) {
	n = v.res(n)
	if n < 0 || v.kind(n) != pickle.KindStr || v.blob(n) != nil || v.nmuts(n) > 0 || v.specialOf(n) != 0 {
		return "", false
	}
	return v.text(n), true
}

func (v *View) isNone(n pickle.ID) bool {
	n = v.res(n)
	return n >= 0 && v.kind(n) == pickle.KindNone
}

var cpPrefixes = []string{"cloudpickle", "joblib.externals.cloudpickle", "ray.cloudpickle", "pyspark.cloudpickle", "apache_beam.internal.cloudpickle", "srsly.cloudpickle"}

// cloudpickleName returns the name of a cloudpickle function (any version,
// any vendored copy), or "".
func cloudpickleName(mod, name string) string {
	for _, p := range cpPrefixes {
		if rest, ok := strings.CutPrefix(mod, p); ok && (rest == "" || rest == ".cloudpickle" || rest == ".cloudpickle_fast") {
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
func (v *View) callable(fn pickle.ID) string { return v.callableAt(fn, false) }

// callableAt is callable; inner is set for the callable of a
// _builtin_type/_load_type call, which must be a global: one level only, so
// a chain f()()()... costs one step per call, not the chain's length.
func (v *View) callableAt(fn pickle.ID, inner bool) string {
	g := v.res(fn)
	if v.whoOf == nil {
		v.whoOf = new(whoCache)
	}
	w := &v.whoOf[uint32(g)%uint32(len(v.whoOf))]
	if g >= 0 && w.id == g+1 {
		return w.who // (a global's name, classified before)
	}
	mod, name, ok := v.global(fn)
	if !ok {
		if inner {
			return ""
		}
		// cloudpickle _builtin_type('X') / dill _load_type('X') stand for types.X.
		c := g
		if c < 0 || v.kind(c) != pickle.KindCall || v.opOf(c) != pickle.REDUCE || v.nmuts(c) > 0 {
			return ""
		}
		in := v.callableAt(v.fn(c), true)
		args, ok := v.tuple(v.argsOf(c))
		if ok && in == "std:builtins.getattr" && v.dillSetattr(args) {
			return "dill:_setattr"
		}
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
			return v.intern("std:builtins.", s, "", "")
		}
		return v.intern("std:types.", s, "", "")
	}
	var who string
	if cp := cloudpickleName(mod, name); cp != "" {
		who = v.intern("cp:", cp, "", "")
	} else if d := dillName(mod, name); d != "" {
		who = v.intern("dill:", d, "", "")
	} else {
		who = v.intern("std:", mod, ".", name)
	}
	*w = whoEntry{id: g + 1, who: who}
	return who
}

// whoEntry is a global node (1 + its ID) and how callable classified it.
// A global's texts do not change once it is made, nor its replacement once
// a call can name it (rules run in creation order), so the answer for a
// global is kept: a state makes tens of thousands of calls of a few
// globals, each classified again before (3 % of pk hash's instructions on
// a cloudpickle state).
type whoEntry struct {
	id  pickle.ID
	who string
}

// whoCache is View.whoOf: made at the first call a view classifies (not a
// part of every View: a file of a million pickles zeroes a View a stream).
type whoCache [64]whoEntry

// intern returns a+b+c+d, allocated once per view for each distinct value
// (a state calls a few callables tens of thousands of times each).
func (v *View) intern(a, b, c, d string) string {
	k := append(append(append(append(v.nameBuf[:0], a...), b...), c...), d...)
	v.nameBuf = k
	if s, ok := v.names[string(k)]; ok {
		return s
	}
	if v.names == nil {
		v.names = map[string]string{}
	}
	s := string(k)
	v.names[s] = s
	return s
}

// call applies the rules whose trigger is the callable of call node n.
func (v *View) call(n pickle.ID) {
	if v.opOf(n) != pickle.REDUCE || v.kwargsOf(n) != pickle.NoID {
		return
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok {
		v.foldedCode(n)
		return
	}
	noMuts := v.nmuts(n) == 0
	who := v.callable(v.fn(n))
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
		v.setText(g, mod)
		v.setName(g, name+"."+attr)
		v.replace(n, g, RuleGetattrGlobal)
	case "std:_codecs.encode":
		if !noMuts || len(args) != 2 {
			return
		}
		s, ok1 := v.str(args[0])
		enc, ok2 := v.str(args[1])
		if !ok1 && ok2 && (enc == "latin1" || enc == "latin-1") && v.Opt.v2() {
			v.codecsBlob(n, args[0])
			return
		}
		if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1") {
			return
		}
		b, ok := latin1(s)
		if !ok {
			return
		}
		y := v.synth(pickle.KindBytes, n)
		v.setText(y, b)
		v.replace(n, y, RuleCodecsBytes)
	case "std:builtins.bytes":
		if noMuts && len(args) == 0 {
			v.replace(n, v.synth(pickle.KindBytes, n), RuleBytesReduce)
		}
	case "std:builtins.bytearray":
		if !noMuts || len(args) > 1 {
			return
		}
		// (the node is made before the checks, as the synthetic count sizes
		// the bounds)
		y := v.synth(pickle.KindByteArray, n)
		if len(args) == 1 {
			b := v.res(args[0])
			if v.kind(b) != pickle.KindBytes || v.nmuts(b) > 0 {
				return
			}
			v.setText(y, v.text(b))
			if bl := v.blob(b); bl != nil {
				v.setBlob(y, bl)
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
			if v.kind(l) != pickle.KindList || v.nmuts(l) > 0 {
				return
			}
			items := v.items(l)
			for _, it := range items {
				// An item created after the call was appended after it: the
				// set does not hold it. (An older item appended later through
				// the memo is not detectable here; see the spec.)
				if it > n {
					return
				}
			}
			v.setKids(y, items)
		}
		v.replace(n, y, rule)
	case "std:copyreg.__newobj__":
		if len(args) < 1 {
			return
		}
		t := v.synth(pickle.KindTuple, n)
		v.setKids(t, args[1:])
		c := v.copyCall(n, pickle.NEWOBJ, args[0], t, v.kwargsOf(n))
		v.replace(n, c, RuleNewobj)
	case "std:copyreg.__newobj_ex__":
		if len(args) != 3 {
			return
		}
		c := v.copyCall(n, pickle.NEWOBJ_EX, args[0], args[1], args[2])
		v.replace(n, c, RuleNewobjEx)
	case "std:copyreg._reconstructor":
		if len(args) != 3 || !v.isNone(args[2]) {
			return
		}
		if mod, name, ok := v.global(args[1]); !ok || mod != "builtins" || name != "object" {
			return
		}
		t := v.synth(pickle.KindTuple, n)
		c := v.copyCall(n, pickle.NEWOBJ, args[0], t, v.kwargsOf(n))
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
		if who == "cp:_make_skeleton_enum" && v.Opt.v2() && len(args) >= 4 {
			v.enumMembers(n, args[3])
		}
	case "std:types.CodeType", "dill:_create_code":
		v.code(n, args, who == "dill:_create_code")
	case "dill:_create_function":
		if v.Opt.v2() && len(args) >= 2 {
			v.dillGlobalsFile(args[1])
		}
	case "dill:_create_type":
		if v.Opt.v2() && v.Opt.StripLineno && len(args) == 4 {
			if d := args[3]; v.res(d) == d && v.kind(d) == pickle.KindDict && v.nmuts(d) == 0 {
				v.dictPlaceholder(d, "__firstlineno__", "lineno", RuleLineno)
			}
		}
	case "cp:_make_function", "std:types.LambdaType", "std:types.FunctionType":
		if who != "cp:_make_function" && !v.isCloudpickleLambda(v.fn(n)) {
			return
		}
		if len(args) >= 2 {
			v.globalsFile(args[1])
		}
	}
}

// enumMembers (pk-canon/2): the members dict of cloudpickle's
// _make_skeleton_enum (argument 3) keeps its order, which is the order of
// list(EnumClass).
func (v *View) enumMembers(call, d pickle.ID) {
	d = v.res(d)
	if d < 0 || v.kind(d) != pickle.KindDict || v.nmuts(d) > 0 || v.ordered.has(d) {
		return
	}
	v.ordered.add(d)
	v.note(RuleEnumOrder, call)
}

// dillSetattr (pk-canon/2) reports whether the arguments of a
// builtins.getattr call are dill's (dill._dill, '_setattr',
// builtins.setattr): dill >= 0.3.8 fills closure cells through
// getattr(dill._dill, '_setattr', setattr)(cell, 'cell_contents', v), which
// is folded as dill's _setattr.
func (v *View) dillSetattr(args []pickle.ID) bool {
	if !v.Opt.v2() || len(args) != 3 {
		return false
	}
	// dill._dill is written as the global "dill _dill" (the submodule as an
	// attribute of its package); dill.dill is its older name
	mod, name, ok := v.global(args[0])
	if !ok || mod != "dill" || (name != "_dill" && name != "dill") {
		return false
	}
	if a, ok := v.str(args[1]); !ok || a != "_setattr" {
		return false
	}
	m, n, ok := v.global(args[2])
	return ok && m == "builtins" && n == "setattr"
}

// dillGlobalsFile (pk-canon/2) applies N3 to dill: the globals dict that
// dill writes by value for a function of another module (argument 1 of
// _create_function; the standard library's reprlib for a dataclass's
// __repr__) holds the module's __file__ and __cached__ paths, which name
// the install prefix. Those str objects become the placeholders __file__
// and __cached__ wherever they are referenced (the module's spec and
// loader share them through the memo).
func (v *View) dillGlobalsFile(d pickle.ID) {
	d = v.res(d)
	if d < 0 || v.kind(d) != pickle.KindDict {
		return
	}
	items := v.items(d)
	for i := 0; i+1 < len(items); i += 2 {
		k, ok := v.str(items[i])
		if !ok || (k != "__file__" && k != "__cached__") {
			continue
		}
		val := items[i+1]
		if _, ok := v.str(val); !ok || v.res(val) != val {
			continue
		}
		v.setRepl(val, v.placeholder(val, k))
		v.note(RuleDillFile, d)
	}
}

// codecsBlob is codecs-bytes for a str streamed as a blob (pk-canon/2):
// its latin-1 bytes are read again from the file (reread.go).
func (v *View) codecsBlob(n, s pickle.ID) {
	s = v.res(s)
	bl := v.blob(s)
	if bl == nil || v.kind(s) != pickle.KindStr || v.nmuts(s) > 0 || v.specialOf(s) != 0 || v.flags(s)&pickle.FlagPy2Str != 0 {
		return
	}
	// read once per str node (the memo may share it between calls)
	lb, seen := v.latin1Of[s]
	if !seen {
		lb = v.latin1Blob(bl)
		if v.latin1Of == nil {
			v.latin1Of = map[pickle.ID]*pickle.Blob{}
		}
		v.latin1Of[s] = lb
	}
	if lb == nil {
		return
	}
	y := v.synth(pickle.KindBytes, n)
	v.setText(y, lb.Prefix)
	v.setBlob(y, lb)
	if v.latin1Src == nil {
		v.latin1Src = map[pickle.ID]*pickle.Blob{}
	}
	v.latin1Src[y] = bl
	v.replace(n, y, RuleCodecsBytes)
}

// dillMain: dill writes a raw GLOBAL "__builtin__ __main__" for the main
// module's dict, which dill's Unpickler.find_class recognises before the
// Python 2 name mapping; at protocol < 3 the machine has mapped it to
// builtins.__main__. The profile undoes the mapping for this one name.
func (v *View) dillMain(n pickle.ID) {
	if v.Opt.Strict || v.flags(n)&pickle.FlagMapped == 0 || v.text(n) != "builtins" || v.name(n) != "__main__" || v.nmuts(n) > 0 {
		return
	}
	g := v.synth(pickle.KindGlobal, n)
	v.setText(g, "__builtin__")
	v.setName(g, "__main__")
	v.replace(n, g, RuleDillMain)
}

// isCloudpickleLambda: cloudpickle < 2.1 wrote _builtin_type('LambdaType').
func (v *View) isCloudpickleLambda(fn pickle.ID) bool {
	c := v.res(fn)
	if c < 0 || v.kind(c) != pickle.KindCall {
		return false
	}
	return v.callable(v.fn(c)) == "cp:_builtin_type"
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

func (v *View) replace(n, with pickle.ID, rule string) {
	v.setRepl(n, with)
	v.note(rule, n)
}

// copyCall returns a synthetic copy of call n (its offset, flags and
// operations) with opcode form o and parts f, a, kw (kw NoID: none).
func (v *View) copyCall(n pickle.ID, o pickle.Opcode, f, a, kw pickle.ID) pickle.ID {
	return v.copyCallAt(n, n, o, f, a, kw)
}

// copyCallAt is copyCall with the offset of node at.
func (v *View) copyCallAt(at, n pickle.ID, o pickle.Opcode, f, a, kw pickle.ID) pickle.ID {
	c := v.synthOp(pickle.KindCall, o, v.offset(at))
	v.setFlags(c, v.flags(n))
	v.setCall(c, f, a, kw, n)
	return c
}

// withArgs replaces call n (or its current replacement) by a copy whose
// argument tuple is args.
func (v *View) withArgs(n pickle.ID, args []pickle.ID) {
	cur := v.res(n)
	t := v.synth(pickle.KindTuple, v.argsOf(cur))
	v.setKids(t, args)
	c := v.copyCallAt(n, cur, v.opOf(cur), v.fn(cur), t, v.kwargsOf(cur))
	v.setRepl(n, c)
}

// tracker applies N1: the class tracker id at args[i] becomes the tracker
// node of that id (one per distinct id in the stream).
func (v *View) tracker(n pickle.ID, args []pickle.ID, i int) {
	if len(args) <= i {
		return
	}
	id, ok := v.str(args[i])
	if !ok {
		return
	}
	if v.trackers == nil {
		v.trackers = map[string]pickle.ID{}
	}
	t, ok := v.trackers[id]
	if !ok {
		t = v.synth(KindTracker, args[i])
		v.setInt(t, int64(len(v.trackers)))
		v.mark(t, 't')
		v.trackers[id] = t
	}
	na := append(v.argBuf[:0], args...) // setKids copies it
	v.argBuf = na
	na[i] = t
	v.withArgs(n, na)
	v.note(RuleTrackerID, n)
}

func (v *View) mark(n pickle.ID, b byte) { v.xspec[n-v.base] = b }

// placeholder adds a placeholder standing where like stands. Its name is
// an index in View.pnames, kept as its scalar (a state has one placeholder
// per code object and a handful of names).
func (v *View) placeholder(like pickle.ID, name string) pickle.ID {
	p := v.synth(KindPlaceholder, like)
	i := slices.Index(v.pnames, name)
	if i < 0 || len(v.pnames) > 16 {
		// (many names: torch storage keys, one each; not searched)
		i = len(v.pnames)
		v.pnames = append(v.pnames, name)
	}
	v.setInt(p, int64(i))
	v.mark(p, 'P')
	return p
}

// code applies N2 (co_filename) and N4 (co_firstlineno, opt-in) to a code
// object built by types.CodeType (possibly reached through cloudpickle's
// _builtin_type or dill's _load_type) or dill's _create_code.
func (v *View) code(n pickle.ID, args []pickle.ID, dill bool) {
	na, rules := v.codeArgs(args, dill)
	v.codeNotes(n, rules)
	if rules != 0 {
		v.withArgs(n, na)
	}
}

// The rules codeArgs applies, as a set (the canon sink keeps it with a
// code object's folded arguments: fold.go).
const (
	codeFile = 1 << iota // N2, co_filename
	codeLine             // N4, co_firstlineno
)

// codeArgsMin is the fewest arguments of a code object that codeArgs
// knows.
const codeArgsMin = 15

// codeArgs returns the arguments of a code object with N2 and N4 applied,
// and which of them applied. The argument positions depend on the Python
// version, told by the number of arguments.
func (v *View) codeArgs(args []pickle.ID, dill bool) ([]pickle.ID, int32) {
	var file, line int
	switch {
	case !dill && len(args) == codeArgsMin: // 3.7 and older 3.x: no posonlyargcount
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
		return args, 0
	}
	na := append(v.argBuf[:0], args...) // setKids copies it
	v.argBuf = na
	var rules int32
	if _, ok := v.str(na[file]); ok {
		na[file] = v.placeholder(na[file], "co_filename")
		rules |= codeFile
	}
	if v.Opt.StripLineno {
		if l := v.res(na[line]); v.kind(l) == pickle.KindInt && v.nmuts(l) == 0 {
			na[line] = v.placeholder(na[line], "lineno")
			rules |= codeLine
		}
	}
	return na, rules
}

// codeNotes notes the rules codeArgs applied to code object n.
func (v *View) codeNotes(n pickle.ID, rules int32) {
	if rules&codeFile != 0 {
		v.note(RuleCoFilename, n)
	}
	if rules&codeLine != 0 {
		v.note(RuleLineno, n)
	}
}

// globalsFile applies N3: the __file__ entry of the base globals dict of a
// cloudpickle function becomes a placeholder. The dict is replaced
// everywhere it is referenced (cloudpickle shares it between the functions
// of one module).
func (v *View) globalsFile(d pickle.ID) {
	if r := v.res(d); r != d {
		return // already rewritten through another function
	}
	if v.kind(d) != pickle.KindDict || v.nmuts(d) > 0 {
		return
	}
	v.dictPlaceholder(d, "__file__", "__file__", RuleGlobalsFile)
}

// dictPlaceholder replaces the value of str key `key` of plain dict d.
func (v *View) dictPlaceholder(d pickle.ID, key, name, rule string) bool {
	items := v.items(d)
	idx := -1
	for i := 0; i+1 < len(items); i += 2 {
		if s, ok := v.str(items[i]); ok && s == key {
			idx = i + 1
		}
	}
	if idx < 0 {
		return false
	}
	c := v.synth(pickle.KindDict, d)
	v.setFlags(c, v.flags(d))
	ci := append(v.argBuf[:0], items...) // setKids copies it
	v.argBuf = ci
	ci[idx] = v.placeholder(items[idx], name)
	v.setKids(c, ci)
	v.setRepl(d, c)
	v.note(rule, d)
	return true
}

// fold turns the calls producers emit only for their side effect on an
// object (REDUCE then POP) into an operation on that object.
func (v *View) fold(n pickle.ID) {
	if v.opOf(n) != pickle.REDUCE || v.flags(n)&pickle.FlagMemo != 0 || v.nmuts(n) > 0 || v.res(n) != n {
		return
	}
	args, ok := v.tuple(v.argsOf(n))
	if !ok {
		return
	}
	who := v.callable(v.fn(n))
	var fn uint8
	switch who {
	case "cp:_function_setstate", "cp:_class_setstate":
		if len(args) != 2 {
			return
		}
		fn = foldFunctionSetstate
		if who == "cp:_class_setstate" {
			fn = foldClassSetstate
			if v.Opt.StripLineno {
				v.classLineno(args[1])
			}
		}
	case "std:builtins.setattr", "dill:_setattr":
		if len(args) != 3 {
			return
		}
		if _, ok := v.str(args[1]); !ok {
			return
		}
		fn = foldSetattr
	default:
		return
	}
	target := v.res(args[0])
	if v.kind(target) != pickle.KindCall {
		return
	}
	v.folds = append(v.folds, fold{target, n, fn})
	v.extraSet.add(target)
	v.folded.add(n)
	if fn != foldSetattr {
		v.note(RuleSetstate, n)
	} else {
		v.note(RuleSetattr, n)
	}
}

// argsSlice returns part of the argument tuple of call n: the stream's
// store's items, which never change (no copy), or a copy when the tuple is
// one of the view's (a slice of its item arena would keep an outgrown
// array alive).
func (v *View) argsSlice(n pickle.ID, part []pickle.ID) []pickle.ID {
	if v.res(v.argsOf(n)) < v.base {
		return part[:len(part):len(part)]
	}
	return append([]pickle.ID(nil), part...)
}

// classLineno applies N4 to the class dict of a _class_setstate state
// (clsdict, slotstate): Python 3.13 stores __firstlineno__ there.
func (v *View) classLineno(state pickle.ID) {
	st, ok := v.tuple(state)
	if !ok || len(st) < 1 {
		return
	}
	d := st[0]
	if v.res(d) != d || v.kind(d) != pickle.KindDict || v.nmuts(d) > 0 {
		return
	}
	v.dictPlaceholder(d, "__firstlineno__", "lineno", RuleLineno)
}

// ops returns the canonical operations applied to n after its creation:
// consecutive APPEND/APPENDS, SETITEM/SETITEMS and ADDITEMS merged, folded
// calls merged in by stream offset. Its cost is linear in the operations
// and their arguments (a run of 200,000 SETITEMs is one operation, its
// arguments gathered in one slice).
func (v *View) ops(n pickle.ID) []op { return v.appendOps(nil, n) }

// appendOps is ops, appended to out (nil when there is none). The
// operations are opIter's (fresh.go: the one place of the merging rule),
// counted first so that out is sized once (700,000 BUILDs on one object);
// a merged run's arguments are copied out of the iterator's scratch.
func (v *View) appendOps(out []op, n pickle.ID) []op {
	extra := v.extra(n)
	if v.nmuts(n) == 0 && len(extra) == 0 {
		return nil
	}
	count := 0
	for x := v.opIter(n, extra, false); x.next(); {
		count++
	}
	out = slices.Grow(out[:0], count)
	for x := v.opIter(n, extra, true); x.next(); {
		o := x.o
		if x.merged {
			o.args = slices.Clone(o.args)
		}
		out = append(out, o)
	}
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
//
// With Options.NoPaths there is one entry per rule, in order of first
// application: Count is the rule's total, Offset its first application's,
// Path empty.
func (v *View) Applied() []Normalization {
	if v.Opt.NoPaths {
		return v.tally.list()
	}
	if len(v.applied) == 0 {
		return nil
	}
	paths := v.pathsOf()
	out := make([]Normalization, len(v.applied))
	for i, a := range v.applied {
		a.Path = paths[a.node]
		if a.Path == "" {
			a.Path = unreachablePath
		}
		out[i] = a
	}
	return out
}
