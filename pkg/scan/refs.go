package scan

import (
	"fmt"
	"strconv"

	"github.com/pk-tools/pk/pkg/pickle"
)

// ref is what a node that is called, instantiated or mutated stands for.
// It holds no text: why and via are worded from w, n and the inner refs
// (whyOf, viaOf) only when a listed finding needs them. A call-heavy
// input resolves a call per node, and the worded texts (the arguments'
// rendering) were most of what resolving one held.
type ref struct {
	ok   bool
	made bool
	// memo is set on what resolve answered for a call from or into the
	// table: refTable.put then names it by its node
	memo bool
	w    wording // how why (when !ok) or via (when ok) is worded
	sev  string  // when !ok: the severity of not knowing
	name Name
	// maker is set (and ok false) for a function or class the file itself
	// defines (cloudpickle, dill, type(), FunctionType): calling it runs
	// the file's code; the policy trusts it when it allows the maker.
	maker Name
	n     pickle.ID // the node the text is of
	// in names the refs the text is worded from (refTable.put): the
	// callable's (in[0]) and the object's an attribute is fetched from
	// (in[1])
	in [2]int32
	x  int64 // wExtVia: the offset of the copyreg.add_extension call
}

// wording says which text a ref's why or via is, and what of w, n and in
// it reads.
type wording uint8

const (
	wNone wording = iota
	// why (not ok)
	wDeep        // an object reached through more than maxDepth calls
	wDynGlobal   // a STACK_GLOBAL with computed names
	wExtUnknown  // an EXT code not registered
	wPersID      // a persistent id's object
	wMadeResult  // the result of calling in[0], made by the file
	wCallUnknown // the result of calling in[0], not known
	wMadeBy      // a function or class made by maker
	wAttrOfMade  // an attribute of in[1] (made by the file) fetched by in[0]
	wPartialWhy  // in[0] through functools.partial
	wResult      // the result of calling in[0] (known)
	wNotCallable // a node that is not callable
	// via (ok)
	wGlobal     // a global, worded by globalVia
	wExtVia     // an EXT code registered at x
	wGetattr    // getattr by in[0] of in[1]
	wImport     // imported by in[0]
	wDillImport // imported by in[0] (dill)
	wNamedBy    // named by in[0]
	wSysModules // sys.modules[...]
	wPartialVia // through functools.partial
	wAttrgetter // operator.attrgetter(...)(obj)
)

// whyOf says what an object that cannot be named is (worded only when
// needed).
func (s *scanner) whyOf(r ref) string {
	ps, n := s.ps, r.n
	switch r.w {
	case wDeep:
		return fmt.Sprintf("an object at offset %d reached through more than %d calls", ps.Offset(n), maxDepth)
	case wDynGlobal:
		return fmt.Sprintf("a global whose names are computed at load time (STACK_GLOBAL at %d, %s)", ps.Offset(n), s.operands(n))
	case wExtUnknown:
		return s.extWhy(n)
	case wPersID:
		return fmt.Sprintf("the object the loader's persistent_load returns for the persistent id at %d", ps.Offset(n))
	case wMadeResult:
		return fmt.Sprintf("the result of %s%s (%s at %d), an object of the file's own code", s.whyOf(s.refs.get(r.in[0])), s.argsText(n), ps.Op(n), ps.Offset(n))
	case wCallUnknown:
		return fmt.Sprintf("the result of calling %s (%s at %d)", s.whyOf(s.refs.get(r.in[0])), ps.Op(n), ps.Offset(n))
	case wMadeBy:
		return fmt.Sprintf("the function or class made by %s%s (%s at %d)", r.maker, s.argsText(n), ps.Op(n), ps.Offset(n))
	case wAttrOfMade:
		a := ps.Str(s.argItems(n)[1])
		return fmt.Sprintf("the attribute %s of %s (fetched by %s at %d)", pyStr(a), s.whyOf(s.refs.get(r.in[1])), s.refs.get(r.in[0]).name, ps.Offset(n))
	case wPartialWhy:
		return s.whyOf(s.refs.get(r.in[0])) + fmt.Sprintf(" through functools.partial at %d", ps.Offset(n))
	case wResult:
		return fmt.Sprintf("the result of %s%s (%s at %d)", s.refs.get(r.in[0]).name, s.argsText(n), ps.Op(n), ps.Offset(n))
	case wNotCallable:
		return fmt.Sprintf("a %s at %d (not callable: CPython fails here)", ps.Kind(n), ps.Offset(n))
	}
	return ""
}

// viaOf says how a name was reached (worded only when a finding needs it).
func (s *scanner) viaOf(r ref) string {
	ps, n := s.ps, r.n
	switch r.w {
	case wGlobal:
		return s.globalVia(n)
	case wExtVia:
		return fmt.Sprintf("%s at %d: code %d, registered by copyreg.add_extension at %d", ps.Op(n), ps.Offset(n), ps.Int(n), r.x)
	case wGetattr:
		a := ps.Str(s.argItems(n)[1])
		return fmt.Sprintf("fetched by %s(%s, %s) at %d", s.refs.get(r.in[0]).name, s.refs.get(r.in[1]).name, pyStr(a), ps.Offset(n))
	case wImport:
		return fmt.Sprintf("module imported by %s(%s) at %d", s.refs.get(r.in[0]).name, pyStr(ps.Str(s.argItems(n)[0])), ps.Offset(n))
	case wDillImport:
		return fmt.Sprintf("imported by %s(%s) at %d", s.refs.get(r.in[0]).name, pyStr(ps.Str(s.argItems(n)[0])), ps.Offset(n))
	case wNamedBy:
		return fmt.Sprintf("named by %s(%s) at %d", s.refs.get(r.in[0]).name, pyStr(ps.Str(s.argItems(n)[0])), ps.Offset(n))
	case wSysModules:
		return fmt.Sprintf("sys.modules[%s] at %d", pyStr(ps.Str(s.argItems(n)[1])), ps.Offset(n))
	case wPartialVia:
		return fmt.Sprintf("through functools.partial at %d", ps.Offset(n))
	case wAttrgetter:
		inner := ps.Func(n)
		return fmt.Sprintf("fetched by operator.attrgetter(%s) at %d", pyStr(ps.Str(s.argItems(inner)[0])), ps.Offset(inner))
	}
	return ""
}

// resolve says which global n is, when that can be known without loading:
// a global, an attribute of one fetched by getattr and its kin, a module
// imported by name, a type named by cloudpickle or dill, an EXT code
// registered earlier in the load, or a functools.partial of one (calling
// it calls its target).
func (s *scanner) resolve(n pickle.ID, depth int) ref {
	if s.ps.Kind(n) != pickle.KindCall {
		return s.resolve1(n, depth)
	}
	if r, ok := s.refs.memoOf(n); ok {
		return r
	}
	r := s.resolve1(n, depth)
	return s.refs.memoize(s.ps, n, r)
}

// refTable holds resolve's answers for the calls of the store being
// analysed, and the refs their texts are worded from, compactly: a call's
// answer is a packed ref (24 bytes, names and severities as indices),
// interned, with its node left implicit, so the calls that stand for the
// same kind of thing (a million instances of one class) share one; a
// call's slot in memo is 4 bytes. It is made anew for each store (the
// machine renumbers nodes when it compacts).
type refTable struct {
	memo   []int32 // by call ID: 1 + the index in packs of its answer; 0: none yet
	packs  []packed
	intern map[packed]int32
	names  []Name // names[0] is Name{}
	nameIx map[Name]int32
	last   Name // the name interned last, and its index (most repeat it)
	lastIx int32
}

// packed is a ref in the table. A call's answer leaves n implicit (its
// node is the memo slot's); a ref put as an inner one has n.
type packed struct {
	ok, made    bool
	w           wording
	sev         uint8
	n           pickle.ID // selfNode for a call's answer
	name, maker int32     // indices in names
	in          [2]int32  // wExtVia: x's low and high halves
}

const selfNode = pickle.ID(-2)

var sevs = [...]string{"", SevNote, SevUnknown, SevCode, SevDangerous}

func sevIndex(sev string) uint8 {
	for i, v := range sevs {
		if v == sev {
			return uint8(i)
		}
	}
	panic("scan: severity " + sev + " not in sevs")
}

func (t *refTable) reset() {
	t.memo = t.memo[:0]
	t.packs = t.packs[:0]
	if len(t.intern) > 0 || t.intern == nil {
		t.intern = map[packed]int32{}
	}
	if len(t.names) != 1 {
		t.names = append(t.names[:0], Name{})
		t.nameIx = map[Name]int32{}
	}
	t.last, t.lastIx = Name{}, 0
}

func (t *refTable) nameIndex(n Name) int32 {
	if n == (Name{}) {
		return 0
	}
	if n == t.last {
		return t.lastIx
	}
	i, ok := t.nameIx[n]
	if !ok {
		i = int32(len(t.names))
		t.names = append(t.names, n)
		t.nameIx[n] = i
	}
	t.last, t.lastIx = n, i
	return i
}

func (t *refTable) pack(r ref) packed {
	p := packed{ok: r.ok, made: r.made, w: r.w, sev: sevIndex(r.sev), n: r.n, name: t.nameIndex(r.name), maker: t.nameIndex(r.maker), in: r.in}
	if r.w == wExtVia {
		p.in = [2]int32{int32(uint32(r.x)), int32(uint32(uint64(r.x) >> 32))}
	}
	return p
}

func (t *refTable) unpack(p packed, n pickle.ID) ref {
	r := ref{ok: p.ok, made: p.made, w: p.w, sev: sevs[p.sev], name: t.names[p.name], maker: t.names[p.maker], n: n, in: p.in}
	if p.w == wExtVia {
		r.in = [2]int32{}
		r.x = int64(uint64(uint32(p.in[0])) | uint64(uint32(p.in[1]))<<32)
	}
	return r
}

// add interns p and returns its index in packs.
func (t *refTable) add(p packed) int32 {
	i, ok := t.intern[p]
	if !ok {
		i = int32(len(t.packs))
		t.packs = append(t.packs, p)
		t.intern[p] = i
	}
	return i
}

// memoOf returns the answer resolve gave for call n, if any.
func (t *refTable) memoOf(n pickle.ID) (ref, bool) {
	if n < 0 || int(n) >= len(t.memo) || t.memo[n] == 0 {
		return ref{}, false
	}
	r := t.unpack(t.packs[t.memo[n]-1], n)
	r.memo = true
	return r, true
}

// memoize keeps r as the answer for call n of ps, and returns it as
// memoOf will.
func (t *refTable) memoize(ps *pickle.Store, n pickle.ID, r ref) ref {
	if r.n != n || n < 0 {
		panic("scan: a call's ref is not of its node")
	}
	if len(t.memo) == 0 {
		if cap(t.memo) >= ps.Len() {
			t.memo = t.memo[:ps.Len()]
			clear(t.memo)
		} else {
			t.memo = make([]int32, ps.Len())
		}
	}
	if int(n) >= len(t.memo) {
		// (a store that grew since the table was sized: not in a batch
		// of final events, but never an index out of range)
		t.memo = append(t.memo, make([]int32, int(n)+1-len(t.memo))...)
	}
	p := t.pack(r)
	p.n = selfNode
	t.memo[n] = 1 + t.add(p)
	r.memo = true
	return r
}

// put returns a code naming r for ref.in: -(1 + its node) for a call's
// memoised answer, else 1 + its index in packs.
func (t *refTable) put(r ref) int32 {
	if r.memo {
		return -(1 + int32(r.n))
	}
	return 1 + t.add(t.pack(r))
}

// get returns the ref a code from put names.
func (t *refTable) get(c int32) ref {
	if c < 0 {
		r, ok := t.memoOf(pickle.ID(-c - 1))
		if !ok {
			panic("scan: an inner ref's call has no answer")
		}
		return r
	}
	if c == 0 {
		return ref{}
	}
	p := t.packs[c-1]
	return t.unpack(p, p.n)
}

// opAt words "REDUCE at 58" when a listed finding prints it (%s), not for
// every call analysed.
type opAt struct {
	op  pickle.Opcode
	off int64
}

func (a opAt) String() string { return a.op.String() + " at " + strconv.FormatInt(a.off, 10) }
