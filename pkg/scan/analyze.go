package scan

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// maxDepth bounds how far a callable is followed back through calls
// (getattr of getattr of ...): beyond it the name counts as unresolvable.
const maxDepth = 64

type extEntry struct {
	name   Name
	offset int64 // of the call that registered it
}

type outFinding struct {
	part int
	f    Finding
}

// scanner walks the streams of one input.
type scanner struct {
	pol *Policy
	doc *input.Doc
	// ext holds the EXT codes registered by copyreg.add_extension calls
	// seen so far (the registry is the loading process's, shared by the
	// streams a load-until-EOF loop reads).
	ext       map[int64]extEntry
	out       []outFinding
	same      map[sameKey]int
	omit      map[sameKey]*omitted
	omitOrder []sameKey

	// the stream being scanned
	st        *pickle.Stream
	part      *input.Part
	partIdx   int
	explained nodeSet // globals and EXT codes a finding or an allowed operation accounts for
	flagged   nodeSet // calls reported as findings
	popped    nodeSet
	leftover  nodeSet
	refs      map[*pickle.Node]ref // resolve's answers for calls: each is resolved once
}

// MaxSame is how many findings of the same severity, role, global and
// opcode are listed in one part; the rest are counted in one more finding.
const MaxSame = 10

type sameKey struct {
	part            int
	sev, global, op string
	role            Role
}

type omitted struct {
	n           int
	first, last Finding
}

func (s *scanner) add(f Finding) {
	f.Part = s.part.Name
	f.Stream = s.st.Index
	k := sameKey{s.partIdx, f.Severity, f.Global, f.Opcode, f.Role}
	if s.same[k] >= MaxSame {
		o := s.omit[k]
		if o == nil {
			o = &omitted{first: f}
			s.omit[k] = o
			s.omitOrder = append(s.omitOrder, k)
		}
		o.n++
		o.last = f
		return
	}
	s.same[k]++
	s.out = append(s.out, outFinding{part: s.partIdx, f: f})
}

// summarize adds one finding for each run of findings left out.
func (s *scanner) summarize() {
	for _, k := range s.omitOrder {
		o := s.omit[k]
		f := o.first
		g := f.Global
		if g == "" {
			g = "(no name)"
		}
		f.Reason = fmt.Sprintf("and %d more %s %s findings on %s by %s like those above, from offset %d (stream %d) to offset %d (stream %d): not listed", o.n, f.Severity, f.Role, g, f.Opcode, o.first.Offset, o.first.Stream, o.last.Offset, o.last.Stream)
		s.out = append(s.out, outFinding{part: k.part, f: f})
	}
}

func (s *scanner) stream(st *pickle.Stream, p *input.Part) {
	s.st, s.part = st, p
	for i := range s.doc.Parts {
		if &s.doc.Parts[i] == p {
			s.partIdx = i
		}
	}
	s.explained = newNodeSet(st)
	s.flagged = newNodeSet(st)
	s.popped = newNodeSet(st)
	s.leftover = newNodeSet(st)
	s.refs = map[*pickle.Node]ref{}
	for _, n := range st.Popped {
		s.popped.add(n)
	}
	for _, n := range st.Leftover {
		s.leftover.add(n)
	}
	for _, ev := range st.Log {
		switch ev.Kind {
		case pickle.EvCall:
			s.call(ev)
		case pickle.EvMut:
			s.mutation(ev)
		case pickle.EvPersID:
			s.persid(ev)
		case pickle.EvBuffer:
			s.add(Finding{Role: RoleBuffer, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevNote,
				Reason: fmt.Sprintf("out-of-band buffer %d: supplied by the caller's buffers= argument (pickle.load without it refuses the file)", ev.Node.Int)})
		}
	}
	// globals and EXT codes that no call, construction or mutation
	// explained: looked up and kept as values
	for _, ev := range st.Log {
		if (ev.Kind != pickle.EvGlobal && ev.Kind != pickle.EvExt) || s.explained.has(ev.Node) {
			continue
		}
		s.resolveOnly(ev)
	}
}

// ref is what a node that is called, instantiated or mutated stands for.
type ref struct {
	ok   bool
	name Name
	via  string // how the name was reached, for reasons ("STACK_GLOBAL at 58, ...")
	sev  string // when !ok: the severity of not knowing
	why  string // when !ok: what the object is
	// maker is set (and ok false) for a function or class the file itself
	// defines (cloudpickle, dill, type(), FunctionType): calling it runs
	// the file's code; the policy trusts it when it allows the maker.
	maker Name
	made  bool
	g     *pickle.Node // the global, when via is to be worded from it (viaOf)
}

// viaOf says how a name was reached (worded only when a finding needs it).
func (s *scanner) viaOf(r ref) string {
	if r.via == "" && r.g != nil {
		return s.globalVia(r.g)
	}
	return r.via
}

// resolve says which global n is, when that can be known without loading:
// a global, an attribute of one fetched by getattr and its kin, a module
// imported by name, a type named by cloudpickle or dill, an EXT code
// registered earlier in the load, or a functools.partial of one (calling
// it calls its target).
func (s *scanner) resolve(n *pickle.Node, depth int) ref {
	if n.Kind != pickle.KindCall {
		return s.resolve1(n, depth)
	}
	if r, ok := s.refs[n]; ok {
		return r
	}
	r := s.resolve1(n, depth)
	s.refs[n] = r
	return r
}

func (s *scanner) resolve1(n *pickle.Node, depth int) ref {
	if depth > maxDepth {
		return ref{sev: SevDangerous, why: fmt.Sprintf("an object at offset %d reached through more than %d calls", n.Offset, maxDepth)}
	}
	switch n.Kind {
	case pickle.KindGlobal:
		s.explained.add(n)
		if n.Flags&pickle.FlagDynamic != 0 {
			return ref{sev: SevDangerous, why: fmt.Sprintf("a global whose names are computed at load time (STACK_GLOBAL at %d, %s)", n.Offset, s.operands(n))}
		}
		return ref{ok: true, name: Name{n.Str, n.Name()}, g: n}
	case pickle.KindExt:
		s.explained.add(n)
		if e, ok := s.ext[n.Int]; ok {
			return ref{ok: true, name: e.name, via: fmt.Sprintf("%s at %d: code %d, registered by copyreg.add_extension at %d", n.Op, n.Offset, n.Int, e.offset)}
		}
		return ref{sev: SevDangerous, why: extWhy(n)}
	case pickle.KindPersID:
		return ref{sev: SevUnknown, why: fmt.Sprintf("the object the loader's persistent_load returns for the persistent id at %d", n.Offset)}
	case pickle.KindCall:
		fn := s.resolve(n.Func(), depth+1)
		args := argItems(n)
		at := fmt.Sprintf("%s at %d", n.Op, n.Offset)
		if fn.made {
			// an instance, attribute or result of what the file defines
			return ref{made: true, maker: fn.maker, sev: SevCode, why: fmt.Sprintf("the result of %s%s (%s), an object of the file's own code", fn.why, s.argsText(n), at)}
		}
		if !fn.ok {
			return ref{sev: SevDangerous, why: fmt.Sprintf("the result of calling %s (%s at %d)", fn.why, n.Op, n.Offset)}
		}
		if makers[fn.name] {
			return ref{made: true, maker: fn.name, sev: SevCode, why: fmt.Sprintf("the function or class made by %s%s (%s)", fn.name, s.argsText(n), at)}
		}
		switch fetchers[fn.name] {
		case fetchGetattr:
			if len(args) >= 2 && isStr(args[1]) {
				base := s.resolve(args[0], depth+1)
				if base.ok {
					return ref{ok: true, name: base.name.attr(args[1].Str), via: fmt.Sprintf("fetched by %s(%s, %s) at %d", fn.name, base.name, pyStr(args[1].Str), n.Offset)}
				}
				if base.made {
					return ref{made: true, maker: base.maker, sev: SevCode, why: fmt.Sprintf("the attribute %s of %s (fetched by %s at %d)", pyStr(args[1].Str), base.why, fn.name, n.Offset)}
				}
			}
		case fetchImport:
			if len(args) >= 1 && isStr(args[0]) {
				return ref{ok: true, name: Name{Module: args[0].Str}, via: fmt.Sprintf("module imported by %s(%s) at %d", fn.name, pyStr(args[0].Str), n.Offset)}
			}
		case fetchImportTop:
			if len(args) >= 1 && isStr(args[0]) {
				m := args[0].Str
				if len(args) < 4 || isEmpty(args[3]) {
					m, _, _ = strings.Cut(m, ".")
				}
				return ref{ok: true, name: Name{Module: m}, via: fmt.Sprintf("module imported by %s(%s) at %d", fn.name, pyStr(args[0].Str), n.Offset)}
			}
		case fetchDillImport:
			if len(args) >= 1 && isStr(args[0]) {
				m := args[0].Str
				nm := Name{Module: m}
				if i := strings.LastIndexByte(m, '.'); i > 0 {
					nm = Name{m[:i], m[i+1:]}
				}
				return ref{ok: true, name: nm, via: fmt.Sprintf("imported by %s(%s) at %d", fn.name, pyStr(m), n.Offset)}
			}
		case fetchResolveName:
			if len(args) >= 1 && isStr(args[0]) {
				nm, err := ParseName(args[0].Str)
				if err != nil {
					nm = Name{Module: args[0].Str}
				}
				return ref{ok: true, name: nm, via: fmt.Sprintf("named by %s(%s) at %d", fn.name, pyStr(args[0].Str), n.Offset)}
			}
		case fetchCPType:
			if len(args) == 1 && isStr(args[0]) {
				return ref{ok: true, name: Name{"types", args[0].Str}, via: fmt.Sprintf("named by %s(%s) at %d", fn.name, pyStr(args[0].Str), n.Offset)}
			}
		case fetchDillType:
			if len(args) == 1 && isStr(args[0]) {
				mod := "builtins"
				if strings.HasSuffix(args[0].Str, "Type") {
					mod = "types"
				}
				return ref{ok: true, name: Name{mod, args[0].Str}, via: fmt.Sprintf("named by %s(%s) at %d", fn.name, pyStr(args[0].Str), n.Offset)}
			}
		case fetchGetitem:
			if len(args) == 2 && isStr(args[1]) {
				base := s.resolve(args[0], depth+1)
				if base.ok && base.name == (Name{"sys", "modules"}) {
					return ref{ok: true, name: Name{Module: args[1].Str}, via: fmt.Sprintf("sys.modules[%s] at %d", pyStr(args[1].Str), n.Offset)}
				}
			}
		case fetchPartial:
			if len(args) >= 1 {
				t := s.resolve(args[0], depth+1)
				if t.ok {
					return ref{ok: true, name: t.name, via: fmt.Sprintf("through functools.partial at %d", n.Offset)}
				}
				return ref{sev: t.sev, why: t.why + fmt.Sprintf(" through functools.partial at %d", n.Offset)}
			}
		}
		// operator.attrgetter('a.b')(obj): an attribute of obj
		if inner := n.Func(); inner.Kind == pickle.KindCall && len(args) == 1 {
			if g := s.resolve(inner.Func(), depth+1); g.ok && g.name == (Name{"operator", "attrgetter"}) {
				if ia := argItems(inner); len(ia) == 1 && isStr(ia[0]) {
					if base := s.resolve(args[0], depth+1); base.ok {
						return ref{ok: true, name: base.name.attr(ia[0].Str), via: fmt.Sprintf("fetched by operator.attrgetter(%s) at %d", pyStr(ia[0].Str), inner.Offset)}
					}
				}
			}
		}
		return ref{sev: SevDangerous, why: fmt.Sprintf("the result of %s%s (%s)", fn.name, s.argsText(n), at)}
	}
	return ref{sev: SevUnknown, why: fmt.Sprintf("a %s at %d (not callable: CPython fails here)", n.Kind, n.Offset)}
}

func (n Name) attr(a string) Name {
	if n.Qual == "" {
		return Name{n.Module, a}
	}
	return Name{n.Module, n.Qual + "." + a}
}

func extWhy(n *pickle.Node) string {
	return fmt.Sprintf("EXT code %d (%s at %d), looked up in copyreg's extension registry of the loading process: nothing registers codes by default, and a registered code can name any global, so what it names cannot be known statically", n.Int, n.Op, n.Offset)
}

// globalVia says how a global was spelled and found.
func (s *scanner) globalVia(n *pickle.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %d", n.Op, n.Offset)
	if n.Op == pickle.STACK_GLOBAL && len(n.Items) == 2 {
		var memo []string
		for _, it := range n.Items {
			if it.Owner != n {
				memo = append(memo, strconv.FormatInt(it.Offset, 10))
			}
		}
		switch len(memo) {
		case 1:
			fmt.Fprintf(&b, ", a name from the memo (the string at %s)", memo[0])
		case 2:
			fmt.Fprintf(&b, ", names from the memo (the strings at %s and %s)", memo[0], memo[1])
		}
	}
	if n.Flags&pickle.FlagMapped != 0 {
		b.WriteString(", a Python 2 name mapped by the loader")
	}
	if strings.Contains(n.Name(), ".") {
		if n.Flags&pickle.FlagDotted != 0 {
			b.WriteString(", a dotted name below protocol 4: CPython refuses it and stops loading there")
		} else {
			b.WriteString(", a dotted name: each attribute is fetched in turn")
		}
	}
	return b.String()
}

// operands describes the operands of a dynamic STACK_GLOBAL.
func (s *scanner) operands(n *pickle.Node) string {
	if len(n.Items) != 2 {
		return "operands unknown"
	}
	return "module " + s.brief(n.Items[0], 2) + ", name " + s.brief(n.Items[1], 2)
}

func argItems(n *pickle.Node) []*pickle.Node {
	a := n.Args()
	if a == nil || a.Kind != pickle.KindTuple {
		return nil
	}
	return a.Items
}

func isStr(n *pickle.Node) bool { return n != nil && n.Kind == pickle.KindStr && n.Blob() == nil }

func isEmpty(n *pickle.Node) bool {
	switch n.Kind {
	case pickle.KindNone:
		return true
	case pickle.KindList, pickle.KindTuple:
		return len(n.Items) == 0 && len(n.Muts()) == 0
	}
	return false
}

// fate says what becomes of a call's result when that is not the plain case.
func (s *scanner) fate(n *pickle.Node) string {
	switch {
	case s.popped.has(n) && n.Flags&pickle.FlagMemo != 0:
		return "; its result is discarded by POP (it stays in the memo)"
	case s.popped.has(n):
		return "; its result is discarded by POP"
	case s.leftover.has(n) && s.st.LeftoverMarks > 0:
		return fmt.Sprintf("; its result is left on the stack at STOP (%d MARK(s) still open), where loading ignores it", s.st.LeftoverMarks)
	case s.leftover.has(n):
		return "; its result is left on the stack under the returned object, where loading ignores it"
	case n.Owner == nil && n != s.st.Root && n.Flags&pickle.FlagMemo != 0:
		return "; its result is kept only in the memo"
	}
	return ""
}

func (s *scanner) call(ev pickle.Event) {
	n := ev.Node
	role := RoleCall
	if ev.Op == pickle.NEWOBJ || ev.Op == pickle.NEWOBJ_EX {
		role = RoleConstruct
	}
	fn := s.resolve(n.Func(), 0)
	at := fmt.Sprintf("%s at %d", ev.Op, ev.Offset)
	if fn.made {
		if s.pol.Allowed(RoleCall, fn.maker) {
			return
		}
		s.flagged.add(n)
		s.add(Finding{Global: fn.maker.String(), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevCode,
			Reason: fmt.Sprintf("loading calls %s%s (%s): this runs code the file carries%s", fn.why, s.argsText(n), at, s.fate(n))})
		return
	}
	if !fn.ok {
		s.flagged.add(n)
		verb := "calls"
		if role == RoleConstruct {
			verb = "instantiates"
		}
		s.add(Finding{Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: fn.sev,
			Reason: fmt.Sprintf("loading %s %s%s (%s): what it is cannot be known without running the pickle%s", verb, fn.why, s.argsText(n), at, s.fate(n))})
		return
	}
	name := fn.name
	args := argItems(n)
	// the arguments that are classes to instantiate, or callables to call
	for _, i := range classArgs[name] {
		if i < len(args) && !s.classArg(n, args[i], name, i) {
			s.flagged.add(n)
		}
	}
	// C.__new__ fetched by getattr and called through functools.partial:
	// how protocols 2-3 write __getnewargs_ex__ (a construction of C)
	if cls, ok := newOf(name); ok {
		s.newCall(ev, n, name, cls, fn)
		return
	}
	if i, ok := callsArg[name]; ok && i < len(args) {
		s.calledArg(n, args[i], name)
	}
	// dill writes getattr(dill._dill, '_setattr', setattr): its _setattr
	// is setattr, the default only stands in for it
	if fetchers[name] == fetchGetattr && len(args) == 3 && isStr(args[1]) && args[1].Str == "_setattr" &&
		args[2].Kind == pickle.KindGlobal && args[2].Qualified() == "builtins.setattr" {
		if base := s.resolve(args[0], 0); base.ok && isDill(base.name) {
			s.explained.add(args[2])
		}
	}
	if fetchers[name] != 0 && !s.pol.Allowed(RoleCall, name) {
		// getattr and its kin: harmless when what they fetch is allowed
		r := s.resolve(n, 0)
		if r.ok && s.pol.Allowed(RoleResolve, r.name) {
			return
		}
		if r.made {
			if s.pol.Allowed(RoleCall, r.maker) {
				return
			}
			s.flagged.add(n)
			s.add(Finding{Global: r.maker.String(), Role: RoleCall, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevCode,
				Reason: fmt.Sprintf("loading calls %s%s (%s) to get %s: code the file carries%s", name, s.argsText(n), at, r.why, s.fate(n))})
			return
		}
		if r.ok {
			if cls, ok := newOf(r.name); ok {
				// C.__new__ for a construction of C: judged where it is called
				if s.pol.Allowed(RoleConstruct, cls) {
					return
				}
				if sev, _ := classify(cls); sev != SevDangerous {
					return
				}
			}
		}
		s.flagged.add(n)
		sev, why := classify(name)
		what := "something that cannot be named statically"
		if r.ok {
			// the name is known: it is judged for what it is
			what = r.name.String()
			sev, why = classify(r.name)
			if sev == SevUnknown {
				why = r.name.String() + " is not on the allowlist"
			}
		} else {
			sev = SevDangerous
		}
		s.add(Finding{Global: name.String(), Role: RoleCall, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev,
			Reason: fmt.Sprintf("loading calls %s%s to get %s (%s; %s)%s%s", name, s.argsText(n), what, at, s.viaOf(fn), because(why), s.fate(n))})
		return
	}
	if s.pol.Allowed(role, name) {
		if msg := s.guard(n, name, args); msg != "" {
			s.flagged.add(n)
			s.add(Finding{Global: name.String(), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevUnknown,
				Reason: fmt.Sprintf("loading calls %s%s (%s): allowed only %s", name, s.argsText(n), at, msg)})
		}
		return
	}
	s.flagged.add(n)
	sev, why := classify(name)
	var reason string
	if role == RoleConstruct {
		reason = fmt.Sprintf("loading creates a %s object with %s.__new__%s (%s; %s)", name, name, s.argsText(n), at, s.viaOf(fn))
	} else {
		reason = fmt.Sprintf("loading calls %s%s (%s; %s)", name, s.argsText(n), at, s.viaOf(fn))
	}
	s.add(Finding{Global: name.String(), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev,
		Reason: reason + because(why) + s.fate(n)})
	if name == (Name{"copyreg", "add_extension"}) && len(args) == 3 && isStr(args[0]) && isStr(args[1]) && args[2].Kind == pickle.KindInt {
		s.ext[args[2].Int] = extEntry{Name{args[0].Str, args[1].Str}, ev.Offset}
	}
}

func because(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}

// newOf returns C for a name C.__new__.
func newOf(n Name) (Name, bool) {
	if q, ok := strings.CutSuffix(n.Qual, ".__new__"); ok && q != "" {
		return Name{n.Module, q}, true
	}
	return Name{}, false
}

// newCall reports a call of C.__new__ (a construction of C).
func (s *scanner) newCall(ev pickle.Event, n *pickle.Node, name, cls Name, fn ref) {
	if s.pol.Allowed(RoleConstruct, cls) {
		return
	}
	s.flagged.add(n)
	sev, why := classify(cls)
	s.add(Finding{Global: cls.String(), Role: RoleConstruct, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev,
		Reason: fmt.Sprintf("loading creates a %s object with %s%s (%s at %d; %s)%s%s", cls, name, s.argsText(n), ev.Op, ev.Offset, s.viaOf(fn), because(why), s.fate(n))})
}

// classArg checks the class a constructor-like call instantiates; false
// when it is not allowed (a finding is made).
func (s *scanner) classArg(call, cls *pickle.Node, by Name, i int) bool {
	r := s.resolve(cls, 0)
	at := fmt.Sprintf("%s at %d", call.Op, call.Offset)
	if r.made {
		if s.pol.Allowed(RoleCall, r.maker) {
			return true
		}
		s.add(Finding{Global: r.maker.String(), Role: RoleConstruct, Offset: call.Offset, Opcode: call.Op.String(), Severity: SevCode,
			Reason: fmt.Sprintf("loading instantiates %s through %s (%s): a class the file carries", r.why, by, at)})
		return false
	}
	if !r.ok {
		s.add(Finding{Role: RoleConstruct, Offset: call.Offset, Opcode: call.Op.String(), Severity: r.sev,
			Reason: fmt.Sprintf("loading instantiates %s through %s (%s): the class cannot be known without running the pickle", r.why, by, at)})
		return false
	}
	if s.pol.Allowed(RoleConstruct, r.name) {
		return true
	}
	sev, why := classify(r.name)
	what := "creates a " + r.name.String() + " object"
	if i == 1 && by == (Name{"copyreg", "_reconstructor"}) {
		what = "creates an object through " + r.name.String() + ".__new__ and __init__ (the base class)"
	}
	s.add(Finding{Global: r.name.String(), Role: RoleConstruct, Offset: call.Offset, Opcode: call.Op.String(), Severity: sev,
		Reason: fmt.Sprintf("loading %s with %s (%s; %s)%s", what, by, at, s.viaOf(r), because(why))})
	return false
}

// calledArg checks a callable that a call passes on to be called.
func (s *scanner) calledArg(call, fn *pickle.Node, by Name) {
	if fn.Kind == pickle.KindNone {
		return
	}
	r := s.resolve(fn, 0)
	at := fmt.Sprintf("%s at %d", call.Op, call.Offset)
	when := "calls it"
	if by == (Name{"collections", "defaultdict"}) {
		when = "keeps it and calls it for every missing key"
	}
	if r.made {
		if !s.pol.Allowed(RoleCall, r.maker) {
			s.add(Finding{Global: r.maker.String(), Role: RoleCall, Offset: call.Offset, Opcode: call.Op.String(), Severity: SevCode,
				Reason: fmt.Sprintf("%s gets %s and %s (%s): code the file carries", by, r.why, when, at)})
		}
		return
	}
	if !r.ok {
		s.add(Finding{Role: RoleCall, Offset: call.Offset, Opcode: call.Op.String(), Severity: r.sev,
			Reason: fmt.Sprintf("%s gets %s and %s (%s)", by, r.why, when, at)})
		return
	}
	if s.pol.Allowed(RoleCall, r.name) || s.pol.Allowed(RoleConstruct, r.name) || safeFactories[r.name] {
		return
	}
	sev, why := classify(r.name)
	s.add(Finding{Global: r.name.String(), Role: RoleCall, Offset: call.Offset, Opcode: call.Op.String(), Severity: sev,
		Reason: fmt.Sprintf("%s gets %s and %s (%s; %s)%s", by, r.name, when, at, s.viaOf(r), because(why))})
}

// instClass is the class of an object a call created: the class argument
// of a constructor-like call, else the callable itself.
func (s *scanner) instClass(n *pickle.Node) ref {
	fn := s.resolve(n.Func(), 0)
	if fn.ok {
		if idx := classArgs[fn.name]; len(idx) > 0 {
			if args := argItems(n); idx[0] < len(args) {
				return s.resolve(args[idx[0]], 0)
			}
		}
	}
	return fn
}

func (s *scanner) mutation(ev pickle.Event) {
	t := ev.Node
	muts := t.Muts()
	if ev.Mut < 0 || ev.Mut >= len(muts) {
		return
	}
	m := muts[ev.Mut]
	at := fmt.Sprintf("%s at %d", m.Op, m.Offset)
	what := mutText(s, m)
	f := Finding{Role: RoleMutate, Offset: m.Offset, Opcode: m.Op.String()}
	switch t.Kind {
	case pickle.KindCall:
		if fn := s.resolve(t.Func(), 0); fn.ok && fetchers[fn.name] == fetchPartial {
			// a new partial object: BUILD sets (func, args, kwds, dict),
			// and may replace the function it calls
			if m.Op == pickle.BUILD && len(m.Args) == 1 && m.Args[0].Kind == pickle.KindTuple && len(m.Args[0].Items) >= 1 {
				a := argItems(t)
				if len(a) >= 1 {
					old, nw := s.resolve(a[0], 0), s.resolve(m.Args[0].Items[0], 0)
					if m.Args[0].Items[0] == a[0] || (old.ok && nw.ok && old.name == nw.name) {
						return
					}
				}
			}
			f.Role, f.Global, f.Severity = RoleBuild, fn.name.String(), SevDangerous
			f.Reason = fmt.Sprintf("loading %s the functools.partial made at %d (%s): the state can replace the function it calls", what, t.Offset, at)
			break
		}
		r := s.resolve(t, 0)
		if r.made {
			if s.pol.Allowed(RoleCall, r.maker) || s.flagged.has(t) {
				return
			}
			f.Role, f.Global, f.Severity = RoleBuild, r.maker.String(), SevCode
			f.Reason = fmt.Sprintf("loading %s %s (%s): code the file carries", what, r.why, at)
			break
		}
		if r.ok {
			// an existing object fetched by getattr and its kin
			if s.pol.Allowed(RoleMutate, r.name) {
				return
			}
			f.Global, f.Severity = r.name.String(), SevDangerous
			f.Reason = fmt.Sprintf("loading %s %s (%s; %s), an object loading did not create: it changes the running process", what, r.name, at, s.viaOf(r))
			break
		}
		if s.flagged.has(t) {
			return // the call that made it is reported already
		}
		cls := s.instClass(t)
		f.Role = RoleBuild
		if cls.made {
			if s.pol.Allowed(RoleCall, cls.maker) {
				return
			}
			f.Global, f.Severity = cls.maker.String(), SevCode
			f.Reason = fmt.Sprintf("loading %s the object made at %d, an instance of %s (%s): code the file carries", what, t.Offset, cls.why, at)
			break
		}
		if !cls.ok {
			f.Severity = cls.sev
			f.Reason = fmt.Sprintf("loading %s the object made at %d, an instance of %s (%s)", what, t.Offset, cls.why, at)
			break
		}
		if s.pol.Allowed(RoleBuild, cls.name) {
			return
		}
		sev, why := classify(cls.name)
		f.Global, f.Severity = cls.name.String(), sev
		f.Reason = fmt.Sprintf("loading %s a %s object made at %d (%s; %s.__setstate__ or its item methods run)%s", what, cls.name, t.Offset, at, cls.name, because(why))
	case pickle.KindGlobal:
		r := s.resolve(t, 0)
		if r.ok && s.pol.Allowed(RoleMutate, r.name) {
			return
		}
		f.Global, f.Severity = r.name.String(), SevDangerous
		if !r.ok {
			f.Severity = r.sev
			f.Reason = fmt.Sprintf("loading %s %s (%s)", what, r.why, at)
			break
		}
		f.Reason = fmt.Sprintf("loading %s %s itself (%s; %s), a class or module the pickle did not create: it is patched for the whole process", what, r.name, at, s.viaOf(r))
	default:
		r := s.resolve(t, 0)
		f.Severity = r.sev
		if f.Severity == "" {
			f.Severity = SevUnknown
		}
		f.Reason = fmt.Sprintf("loading %s %s (%s)", what, r.why, at)
	}
	s.add(f)
	if f.Global == "copyreg._extension_registry" && (m.Op == pickle.SETITEM || m.Op == pickle.SETITEMS) {
		for i := 0; i+1 < len(m.Args); i += 2 {
			k, v := m.Args[i], m.Args[i+1]
			if k.Kind == pickle.KindTuple && len(k.Items) == 2 && isStr(k.Items[0]) && isStr(k.Items[1]) && v.Kind == pickle.KindInt {
				s.ext[v.Int] = extEntry{Name{k.Items[0].Str, k.Items[1].Str}, m.Offset}
			}
		}
	}
}

// mutText says what a mutation does: "sets the state of", "sets 'len' in".
func mutText(s *scanner, m pickle.Mut) string {
	switch m.Op {
	case pickle.BUILD:
		if len(m.Args) == 1 {
			return "sets the state " + s.brief(m.Args[0], 2) + " of"
		}
		return "sets the state of"
	case pickle.SETITEM, pickle.SETITEMS:
		var keys []string
		for i := 0; i < len(m.Args) && len(keys) < 3; i += 2 {
			keys = append(keys, s.brief(m.Args[i], 1))
		}
		more := ""
		if len(m.Args) > 6 {
			more = fmt.Sprintf(" and %d more", len(m.Args)/2-3)
		}
		return "sets " + strings.Join(keys, ", ") + more + " in"
	case pickle.ADDITEMS:
		return "adds items to"
	}
	return "appends items to"
}

func (s *scanner) persid(ev pickle.Event) {
	n := ev.Node
	if s.pol.torchStorage && strings.Contains(s.doc.Format, "torch") && n.Op == pickle.BINPERSID && len(n.Items) == 1 {
		if t := n.Items[0]; t.Kind == pickle.KindTuple && len(t.Items) >= 5 && isStr(t.Items[0]) && t.Items[0].Str == "storage" {
			if r := s.resolve(t.Items[1], 0); r.ok && s.pol.Allowed(RoleResolve, r.name) {
				return // torch's own storage record
			}
		}
	}
	id := n.Str
	if n.Op == pickle.BINPERSID && len(n.Items) == 1 {
		id = s.brief(n.Items[0], 2)
	} else {
		id = pyStr(id)
	}
	s.add(Finding{Role: RolePersID, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevNote,
		Reason: fmt.Sprintf("persistent id %s: resolved by the loader's persistent_load (pickle.load without one refuses the file); what it returns is up to that loader", id)})
}

// resolveOnly reports a global or EXT code looked up and kept as a value.
func (s *scanner) resolveOnly(ev pickle.Event) {
	n := ev.Node
	if ev.Kind == pickle.EvExt {
		r := s.resolve(n, 0)
		if !r.ok {
			s.add(Finding{Role: RoleExt, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevDangerous, Reason: "loading fetches " + r.why})
			return
		}
		if s.pol.Allowed(RoleResolve, r.name) {
			return
		}
		sev, why := classify(r.name)
		s.add(Finding{Global: r.name.String(), Role: RoleExt, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev,
			Reason: fmt.Sprintf("loading fetches %s (%s)%s", r.name, s.viaOf(r), because(why))})
		return
	}
	r := s.resolve(n, 0)
	if !r.ok {
		s.add(Finding{Role: RoleResolve, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: r.sev,
			Reason: "loading looks up " + r.why})
		return
	}
	if s.pol.Allowed(RoleResolve, r.name) {
		return
	}
	sev, why := classify(r.name)
	s.add(Finding{Global: r.name.String(), Role: RoleResolve, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev,
		Reason: fmt.Sprintf("loading imports %s and fetches %s (%s); it is kept as a value, not called here%s", r.name.Module, r.name, s.viaOf(r), because(why))})
}

// argsText renders a call's arguments briefly: "('echo hi',)".
func (s *scanner) argsText(n *pickle.Node) string {
	a := n.Args()
	if a == nil {
		return "(...)"
	}
	if a.Kind != pickle.KindTuple {
		return "(*" + s.brief(a, 2) + ")"
	}
	parts := make([]string, 0, len(a.Items))
	total := 0
	for i, it := range a.Items {
		if total > 80 || i >= 6 {
			parts = append(parts, "...")
			break
		}
		t := s.brief(it, 2)
		total += len(t)
		parts = append(parts, t)
	}
	out := "(" + strings.Join(parts, ", ")
	if kw := n.Kwargs(); kw != nil && kw.Kind == pickle.KindDict && len(kw.Items) > 0 {
		out += ", **" + s.brief(kw, 1)
	}
	return out + ")"
}

// brief renders a node as a short Python-like expression.
func (s *scanner) brief(n *pickle.Node, depth int) string {
	if n == nil {
		return "?"
	}
	switch n.Kind {
	case pickle.KindNone:
		return "None"
	case pickle.KindBool:
		if n.Int != 0 {
			return "True"
		}
		return "False"
	case pickle.KindInt:
		if n.IsBig() {
			t := n.Big().String()
			if len(t) > 24 {
				return t[:10] + "..." + t[len(t)-6:]
			}
			return t
		}
		return strconv.FormatInt(n.Int, 10)
	case pickle.KindFloat:
		return strconv.FormatFloat(n.Float(), 'g', -1, 64)
	case pickle.KindStr:
		if n.Blob() != nil {
			return fmt.Sprintf("<str of %d bytes>", n.Len())
		}
		return pyStr(n.Str)
	case pickle.KindBytes, pickle.KindByteArray:
		if n.Blob() != nil || len(n.Str) > 32 {
			return fmt.Sprintf("<%s of %d bytes>", n.Kind, n.Len())
		}
		return "b" + pyStr(n.Str)
	case pickle.KindGlobal:
		if n.Flags&pickle.FlagDynamic != 0 {
			return fmt.Sprintf("<global computed at %d>", n.Offset)
		}
		return n.Qualified()
	case pickle.KindCall:
		if depth <= 0 {
			return fmt.Sprintf("<result of the %s at %d>", n.Op, n.Offset)
		}
		f := s.brief(n.Func(), depth-1)
		return f + s.argsTextDepth(n, depth-1)
	case pickle.KindPersID:
		return fmt.Sprintf("<persistent id at %d>", n.Offset)
	case pickle.KindExt:
		return fmt.Sprintf("<EXT code %d>", n.Int)
	case pickle.KindBuffer:
		return fmt.Sprintf("<buffer %d>", n.Int)
	}
	open, close := "[", "]"
	switch n.Kind {
	case pickle.KindTuple:
		open, close = "(", ")"
	case pickle.KindDict, pickle.KindSet:
		open, close = "{", "}"
	case pickle.KindFrozenSet:
		open, close = "frozenset({", "})"
	}
	if len(n.Items) == 0 {
		if n.Kind == pickle.KindSet {
			return "set()"
		}
		return open + close
	}
	if depth <= 0 {
		return open + "..." + close
	}
	var parts []string
	step := 1
	if n.Kind == pickle.KindDict {
		step = 2
	}
	for i := 0; i < len(n.Items); i += step {
		if len(parts) >= 3 {
			parts = append(parts, "...")
			break
		}
		if step == 2 && i+1 < len(n.Items) {
			parts = append(parts, s.brief(n.Items[i], depth-1)+": "+s.brief(n.Items[i+1], depth-1))
		} else {
			parts = append(parts, s.brief(n.Items[i], depth-1))
		}
	}
	if n.Kind == pickle.KindTuple && len(n.Items) == 1 {
		return "(" + parts[0] + ",)"
	}
	return open + strings.Join(parts, ", ") + close
}

func (s *scanner) argsTextDepth(n *pickle.Node, depth int) string {
	a := n.Args()
	if a == nil || a.Kind != pickle.KindTuple {
		return "(...)"
	}
	if depth <= 0 {
		if len(a.Items) == 0 {
			return "()"
		}
		return "(...)"
	}
	var parts []string
	for i, it := range a.Items {
		if i >= 3 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, s.brief(it, depth))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pyStr quotes s as Python's repr does (roughly), cut to 48 characters.
func pyStr(s string) string {
	cut := false
	if utf8.RuneCountInString(s) > 48 {
		r := []rune(s)
		s = string(r[:48])
		cut = true
	}
	q := strconv.Quote(s)
	q = "'" + strings.ReplaceAll(strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`), `'`, `\'`) + "'"
	if cut {
		q += "..."
	}
	return q
}

func isDill(n Name) bool {
	full := n.String()
	for _, m := range dillModules {
		if full == m {
			return true
		}
	}
	return false
}

// nodeSet is a set of the nodes of one stream, by Node.ID.
type nodeSet []bool

func newNodeSet(st *pickle.Stream) nodeSet { return make(nodeSet, len(st.All)) }

func (ns nodeSet) add(n *pickle.Node) {
	if n != nil && int(n.ID) < len(ns) && n.ID >= 0 {
		ns[n.ID] = true
	}
}

func (ns nodeSet) has(n *pickle.Node) bool {
	return n != nil && int(n.ID) < len(ns) && n.ID >= 0 && ns[n.ID]
}
