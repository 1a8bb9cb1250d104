package scan

import (
	"fmt"
	"iter"
	"slices"
	"sort"
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
	part    int
	f       Finding
	seq     seqKey
	dropped bool // listed, then displaced by one earlier in order (add)
}

// seqKey orders findings as a scan of a whole stream at once produces
// them: streams in order, each stream's calls, mutations and persistent
// ids in log order (phase 0), then its globals looked up and kept (phase
// 1), then the findings of one event in the order it adds them. Which
// findings of a kind are listed (the first MaxSame) is decided by it, not
// by when an event was analysed, so a scan that analyses events as they
// become final (scanEach with pickle.Keep.Final) lists the same ones.
type seqKey struct {
	part, stream, phase int
	off                 int64
	kind                pickle.EventKind
	sub                 int
}

func (a seqKey) less(b seqKey) bool {
	switch {
	case a.part != b.part:
		return a.part < b.part
	case a.stream != b.stream:
		return a.stream < b.stream
	case a.phase != b.phase:
		return a.phase < b.phase
	case a.off != b.off:
		return a.off < b.off
	case a.kind != b.kind:
		return a.kind < b.kind
	}
	return a.sub < b.sub
}

// scanner walks the streams of one input.
type scanner struct {
	pol *Policy
	doc *input.Doc
	// ext holds the EXT codes registered by copyreg.add_extension calls
	// seen so far (the registry is the loading process's, shared by the
	// streams a load-until-EOF loop reads).
	ext   map[int64]extEntry
	out   []outFinding
	kinds map[sameKey]*kindState
	took  int    // batches of final events analysed (scanOpened)
	cur   seqKey // of the event being analysed; sub counts its findings

	// the stream being scanned, as a store (docs/engine.md): every node
	// is a pickle.ID into it
	ps      *pickle.Store
	part    *input.Part
	partIdx int
	// globals and EXT codes a finding or an allowed operation accounts for
	// carry flagExplained, calls reported as findings flagFlagged (flags
	// of the store: they stay with their nodes when the machine compacts)
	popped   idSet
	leftover idSet
	refs     refTable // resolve's answers for calls: each is resolved once
	// muts holds Store.Muts of the targets mutated more than once whose
	// later operations the call log has still to reach (Store.Muts makes a
	// new slice, and an event reads one operation of it)
	muts map[pickle.ID][]pickle.SMut
	// names holds each name's text and classification, made once; texts
	// the scanner's own copy of each finding's global (see add)
	names map[Name]nameInfo
	texts map[string]string
}

// nameInfo is what a finding needs of a name: its text and classify's
// verdict, both functions of the name alone.
type nameInfo struct{ text, sev, why string }

// maxNames bounds the names and texts kept: past it, a name's text and
// verdict are made again at each use, as they would be without the table.
// A million calls of one class otherwise allocated the class's name, its
// copy and its split module at every call (97 MB of garbage on the cost
// shape nest_newobj_build, most of pk scan's peak above pk hash's).
const maxNames = 1 << 14

// info returns n's text and verdict. The table's keys and texts are the
// scanner's own strings, never the store's bytes, which the next stream
// may reuse (scanEach).
func (s *scanner) info(n Name) nameInfo {
	if in, ok := s.names[n]; ok {
		return in
	}
	own := Name{strings.Clone(n.Module), strings.Clone(n.Qual)}
	sev, why := classify(own)
	in := nameInfo{text: own.String(), sev: sev, why: why}
	if len(s.names) < maxNames {
		if s.names == nil {
			s.names = map[Name]nameInfo{}
		}
		s.names[own] = in
	}
	return in
}

// text is n.String(), made once per name.
func (s *scanner) text(n Name) string { return s.info(n).text }

// classify is classify(n), decided once per name.
func (s *scanner) classify(n Name) (sev, why string) {
	in := s.info(n)
	return in.sev, in.why
}

// own returns the scanner's copy of t (a finding's global), made once per
// text within maxNames.
func (s *scanner) own(t string) string {
	if o, ok := s.texts[t]; ok {
		return o
	}
	o := strings.Clone(t)
	if len(s.texts) < maxNames {
		if s.texts == nil {
			s.texts = map[string]string{}
		}
		s.texts[o] = o
	}
	return o
}

// MaxSame is how many findings of the same severity, role, global and
// opcode are listed in one part; the rest are counted in one more finding.
const MaxSame = 10

type sameKey struct {
	part            int
	sev, global, op string
	role            Role
}

// kindState is what is kept of one kind of finding: the indices in out of
// the MaxSame listed (first in seqKey order), and of the rest their count
// and the first and last.
type kindState struct {
	listed            []int
	n                 int
	first, last       Finding
	firstSeq, lastSeq seqKey
}

// event starts the findings of one event (see seqKey).
func (s *scanner) event(phase int, ev pickle.SEvent) {
	s.cur = seqKey{part: s.partIdx, stream: s.ps.Index, phase: phase, off: ev.Offset, kind: ev.Kind}
}

// lists reports whether a finding of kind k at seq q is listed now.
func (s *scanner) lists(k sameKey, q seqKey) bool {
	ks := s.kinds[k]
	if ks == nil || len(ks.listed) < MaxSame {
		return true
	}
	for _, j := range ks.listed {
		if q.less(s.out[j].seq) {
			return true
		}
	}
	return false
}

// addf adds a finding whose reason is worded by reason, called only when
// the finding is listed: beyond MaxSame of a kind, only the count, first
// and last offsets are kept, and wording the reason (the arguments'
// rendering) was most of what scanning a code-carrying state allocated.
func (s *scanner) addf(f Finding, reason func() string) {
	k := sameKey{s.partIdx, f.Severity, f.Global, f.Opcode, f.Role}
	if s.lists(k, s.cur) {
		f.Reason = reason()
	}
	s.add(f)
}

func (s *scanner) add(f Finding) {
	// a finding outlives its stream's store, whose memory the next
	// stream may reuse (scanEach): no string of it may point there
	f.Global, f.Reason = s.own(f.Global), strings.Clone(f.Reason)
	f.Part = s.part.Name
	f.Stream = s.ps.Index
	q := s.cur
	s.cur.sub++
	k := sameKey{s.partIdx, f.Severity, f.Global, f.Opcode, f.Role}
	ks := s.kinds[k]
	if ks == nil {
		ks = &kindState{}
		s.kinds[k] = ks
	}
	if len(ks.listed) < MaxSame {
		ks.listed = append(ks.listed, len(s.out))
		s.out = append(s.out, outFinding{part: s.partIdx, f: f, seq: q})
		return
	}
	// the listed one last in order gives way to an earlier one
	mi := 0
	for i, j := range ks.listed {
		if s.out[ks.listed[mi]].seq.less(s.out[j].seq) {
			mi = i
		}
	}
	if at := ks.listed[mi]; q.less(s.out[at].seq) {
		s.out[at].dropped = true
		ks.omit(s.out[at].f, s.out[at].seq)
		ks.listed[mi] = len(s.out)
		s.out = append(s.out, outFinding{part: s.partIdx, f: f, seq: q})
		return
	}
	ks.omit(f, q)
}

func (ks *kindState) omit(f Finding, q seqKey) {
	if ks.n == 0 || q.less(ks.firstSeq) {
		ks.first, ks.firstSeq = f, q
	}
	if ks.n == 0 || ks.lastSeq.less(q) {
		ks.last, ks.lastSeq = f, q
	}
	ks.n++
}

// summarize adds one finding for each run of findings left out, in the
// order of their first.
func (s *scanner) summarize() {
	var keys []sameKey
	for k, ks := range s.kinds {
		if ks.n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return s.kinds[keys[i]].firstSeq.less(s.kinds[keys[j]].firstSeq) })
	for _, k := range keys {
		o := s.kinds[k]
		f := o.first
		g := f.Global
		if g == "" {
			g = "(no name)"
		}
		f.Reason = fmt.Sprintf("and %d more %s %s findings on %s by %s like those above, from offset %d (stream %d) to offset %d (stream %d): not listed", o.n, f.Severity, f.Role, g, f.Opcode, o.first.Offset, o.first.Stream, o.last.Offset, o.last.Stream)
		s.out = append(s.out, outFinding{part: k.part, f: f, seq: o.firstSeq})
	}
}

func (s *scanner) stream(st *pickle.Stream, p *input.Part) {
	s.begin(st.Store(), p)
	s.events(s.ps.Events())
	// globals and EXT codes that no call, construction or mutation
	// explained: looked up and kept as values
	for _, ev := range s.ps.Events() {
		if (ev.Kind != pickle.EvGlobal && ev.Kind != pickle.EvExt) || s.ps.Has(ev.Node, flagExplained) {
			continue
		}
		s.event(1, ev)
		s.resolveOnly(ev)
	}
}

// flagExplained and flagFlagged are the scanner's marks on the store.
const (
	flagExplained = pickle.FlagUser1
	flagFlagged   = pickle.FlagUser2
)

// begin makes ps (a stream's store, complete or as compacted so far) the
// one analysed: the sets over its IDs are made anew (the machine renumbers
// nodes when it compacts).
func (s *scanner) begin(ps *pickle.Store, p *input.Part) {
	s.ps, s.part = ps, p
	for i := range s.doc.Parts {
		if &s.doc.Parts[i] == p {
			s.partIdx = i
		}
	}
	s.popped = newIDSet(ps)
	s.leftover = newIDSet(ps)
	s.refs.reset()
	s.muts = map[pickle.ID][]pickle.SMut{}
	for _, n := range ps.Popped {
		s.popped.add(n)
	}
	for _, n := range ps.Leftover {
		s.leftover.add(n)
	}
}

// events analyses calls, mutations, persistent ids and buffers.
func (s *scanner) events(log iter.Seq2[int, pickle.SEvent]) {
	ps := s.ps
	for _, ev := range log {
		switch ev.Kind {
		case pickle.EvCall:
			s.event(0, ev)
			s.call(ev)
		case pickle.EvMut:
			s.event(0, ev)
			s.mutation(ev)
		case pickle.EvPersID:
			s.event(0, ev)
			s.persid(ev)
		case pickle.EvBuffer:
			s.event(0, ev)
			s.addf(Finding{Role: RoleBuffer, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevNote}, func() string {
				return fmt.Sprintf("out-of-band buffer %d: supplied by the caller's buffers= argument (pickle.load without it refuses the file)", ps.Int(ev.Node))
			})
		}
	}
}

// final analyses the events the machine says are final (pickle.Keep.Final,
// scanEach): the stream's part is the file's only one. With an EXT code in
// the log it declines: which code names what depends on the
// copyreg.add_extension calls before it, analysed in log order at STOP.
func (s *scanner) final(ps *pickle.Store, evs []pickle.SEvent) bool {
	for _, ev := range ps.Events() {
		if ev.Kind == pickle.EvExt {
			return false
		}
	}
	s.begin(ps, &s.doc.Parts[0])
	s.events(slices.All(evs))
	return true
}

func (s *scanner) resolve1(n pickle.ID, depth int) ref {
	ps := s.ps
	if depth > maxDepth {
		return ref{sev: SevDangerous, w: wDeep, n: n}
	}
	switch ps.Kind(n) {
	case pickle.KindGlobal:
		s.mark(flagExplained, n)
		if ps.Has(n, pickle.FlagDynamic) {
			return ref{sev: SevDangerous, w: wDynGlobal, n: n}
		}
		return ref{ok: true, name: Name{ps.Str(n), ps.Name(n)}, w: wGlobal, n: n}
	case pickle.KindExt:
		s.mark(flagExplained, n)
		if e, ok := s.ext[ps.Int(n)]; ok {
			return ref{ok: true, name: e.name, w: wExtVia, n: n, x: e.offset}
		}
		return ref{sev: SevDangerous, w: wExtUnknown, n: n}
	case pickle.KindPersID:
		return ref{sev: SevUnknown, w: wPersID, n: n}
	case pickle.KindCall:
		fn := s.resolve(ps.Func(n), depth+1)
		args := s.argItems(n)
		if fn.made {
			// an instance, attribute or result of what the file defines
			return ref{made: true, maker: fn.maker, sev: SevCode, w: wMadeResult, n: n, in: [2]int32{s.refs.put(fn)}}
		}
		if !fn.ok {
			return ref{sev: SevDangerous, w: wCallUnknown, n: n, in: [2]int32{s.refs.put(fn)}}
		}
		if makers[fn.name] {
			return ref{made: true, maker: fn.name, sev: SevCode, w: wMadeBy, n: n}
		}
		switch fetchers[fn.name] {
		case fetchGetattr:
			if len(args) >= 2 && s.isStr(args[1]) {
				base := s.resolve(args[0], depth+1)
				a := ps.Str(args[1])
				if base.ok {
					return ref{ok: true, name: base.name.attr(a), w: wGetattr, n: n, in: [2]int32{s.refs.put(fn), s.refs.put(base)}}
				}
				if base.made {
					return ref{made: true, maker: base.maker, sev: SevCode, w: wAttrOfMade, n: n, in: [2]int32{s.refs.put(fn), s.refs.put(base)}}
				}
			}
		case fetchImport:
			if len(args) >= 1 && s.isStr(args[0]) {
				return ref{ok: true, name: Name{Module: ps.Str(args[0])}, w: wImport, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchImportTop:
			if len(args) >= 1 && s.isStr(args[0]) {
				m := ps.Str(args[0])
				if len(args) < 4 || s.isEmpty(args[3]) {
					m, _, _ = strings.Cut(m, ".")
				}
				return ref{ok: true, name: Name{Module: m}, w: wImport, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchDillImport:
			if len(args) >= 1 && s.isStr(args[0]) {
				m := ps.Str(args[0])
				nm := Name{Module: m}
				if i := strings.LastIndexByte(m, '.'); i > 0 {
					nm = Name{m[:i], m[i+1:]}
				}
				return ref{ok: true, name: nm, w: wDillImport, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchResolveName:
			if len(args) >= 1 && s.isStr(args[0]) {
				a := ps.Str(args[0])
				nm, err := ParseName(a)
				if err != nil {
					nm = Name{Module: a}
				}
				return ref{ok: true, name: nm, w: wNamedBy, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchCPType:
			if len(args) == 1 && s.isStr(args[0]) {
				a := ps.Str(args[0])
				return ref{ok: true, name: Name{"types", a}, w: wNamedBy, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchDillType:
			if len(args) == 1 && s.isStr(args[0]) {
				a := ps.Str(args[0])
				mod := "builtins"
				if strings.HasSuffix(a, "Type") {
					mod = "types"
				}
				return ref{ok: true, name: Name{mod, a}, w: wNamedBy, n: n, in: [2]int32{s.refs.put(fn)}}
			}
		case fetchGetitem:
			if len(args) == 2 && s.isStr(args[1]) {
				base := s.resolve(args[0], depth+1)
				if base.ok && base.name == (Name{"sys", "modules"}) {
					return ref{ok: true, name: Name{Module: ps.Str(args[1])}, w: wSysModules, n: n}
				}
			}
		case fetchPartial:
			if len(args) >= 1 {
				t := s.resolve(args[0], depth+1)
				if t.ok {
					return ref{ok: true, name: t.name, w: wPartialVia, n: n}
				}
				return ref{sev: t.sev, w: wPartialWhy, n: n, in: [2]int32{s.refs.put(t)}}
			}
		}
		// operator.attrgetter('a.b')(obj): an attribute of obj
		if inner := ps.Func(n); ps.Kind(inner) == pickle.KindCall && len(args) == 1 {
			if g := s.resolve(ps.Func(inner), depth+1); g.ok && g.name == (Name{"operator", "attrgetter"}) {
				if ia := s.argItems(inner); len(ia) == 1 && s.isStr(ia[0]) {
					if base := s.resolve(args[0], depth+1); base.ok {
						return ref{ok: true, name: base.name.attr(ps.Str(ia[0])), w: wAttrgetter, n: n}
					}
				}
			}
		}
		return ref{sev: SevDangerous, w: wResult, n: n, in: [2]int32{s.refs.put(fn)}}
	}
	return ref{sev: SevUnknown, w: wNotCallable, n: n}
}

func (n Name) attr(a string) Name {
	if n.Qual == "" {
		return Name{n.Module, a}
	}
	return Name{n.Module, n.Qual + "." + a}
}

func (s *scanner) extWhy(n pickle.ID) string {
	return fmt.Sprintf("EXT code %d (%s at %d), looked up in copyreg's extension registry of the loading process: nothing registers codes by default, and a registered code can name any global, so what it names cannot be known statically", s.ps.Int(n), s.ps.Op(n), s.ps.Offset(n))
}

// globalVia says how a global was spelled and found.
func (s *scanner) globalVia(n pickle.ID) string {
	ps := s.ps
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %d", ps.Op(n), ps.Offset(n))
	if items := ps.Items(n); ps.Op(n) == pickle.STACK_GLOBAL && len(items) == 2 {
		var memo []string
		for _, it := range items {
			if ps.Owner(it) != n {
				memo = append(memo, strconv.FormatInt(ps.Offset(it), 10))
			}
		}
		switch len(memo) {
		case 1:
			fmt.Fprintf(&b, ", a name from the memo (the string at %s)", memo[0])
		case 2:
			fmt.Fprintf(&b, ", names from the memo (the strings at %s and %s)", memo[0], memo[1])
		}
	}
	if ps.Has(n, pickle.FlagMapped) {
		b.WriteString(", a Python 2 name mapped by the loader")
	}
	if strings.Contains(ps.Name(n), ".") {
		if ps.Has(n, pickle.FlagDotted) {
			b.WriteString(", a dotted name below protocol 4: CPython refuses it and stops loading there")
		} else {
			b.WriteString(", a dotted name: each attribute is fetched in turn")
		}
	}
	return b.String()
}

// operands describes the operands of a dynamic STACK_GLOBAL.
func (s *scanner) operands(n pickle.ID) string {
	items := s.ps.Items(n)
	if len(items) != 2 {
		return "operands unknown"
	}
	return "module " + s.brief(items[0], 2) + ", name " + s.brief(items[1], 2)
}

// argItems returns the items of a call's argument tuple (nil when the
// arguments are not a tuple); the slice shares the store's memory.
func (s *scanner) argItems(n pickle.ID) []pickle.ID {
	a := s.ps.Args(n)
	if a == pickle.NoID || s.ps.Kind(a) != pickle.KindTuple {
		return nil
	}
	return s.ps.Items(a)
}

func (s *scanner) isStr(n pickle.ID) bool {
	return n != pickle.NoID && s.ps.Kind(n) == pickle.KindStr && s.ps.Blob(n) == nil
}

func (s *scanner) isEmpty(n pickle.ID) bool {
	switch s.ps.Kind(n) {
	case pickle.KindNone:
		return true
	case pickle.KindList, pickle.KindTuple:
		return s.ps.NItems(n) == 0 && s.ps.NMuts(n) == 0
	}
	return false
}

// fate says what becomes of a call's result when that is not the plain case.
func (s *scanner) fate(n pickle.ID) string {
	ps := s.ps
	switch {
	case s.popped.has(n) && ps.Has(n, pickle.FlagMemo):
		return "; its result is discarded by POP (it stays in the memo)"
	case s.popped.has(n):
		return "; its result is discarded by POP"
	case s.leftover.has(n) && ps.LeftoverMarks > 0:
		return fmt.Sprintf("; its result is left on the stack at STOP (%d MARK(s) still open), where loading ignores it", ps.LeftoverMarks)
	case s.leftover.has(n):
		return "; its result is left on the stack under the returned object, where loading ignores it"
	case ps.Owner(n) == pickle.NoID && n != ps.Root && ps.Has(n, pickle.FlagMemo):
		return "; its result is kept only in the memo"
	}
	return ""
}

func (s *scanner) call(ev pickle.SEvent) {
	ps := s.ps
	n := ev.Node
	role := RoleCall
	if ev.Op == pickle.NEWOBJ || ev.Op == pickle.NEWOBJ_EX {
		role = RoleConstruct
	}
	fn := s.resolve(ps.Func(n), 0)
	at := opAt{ev.Op, ev.Offset}
	if fn.made {
		if s.pol.Allowed(RoleCall, fn.maker) {
			return
		}
		s.mark(flagFlagged, n)
		s.addf(Finding{Global: s.text(fn.maker), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevCode}, func() string {
			return fmt.Sprintf("loading calls %s%s (%s): this runs code the file carries%s", s.whyOf(fn), s.argsText(n), at, s.fate(n))
		})
		return
	}
	if !fn.ok {
		s.mark(flagFlagged, n)
		verb := "calls"
		if role == RoleConstruct {
			verb = "instantiates"
		}
		s.addf(Finding{Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: fn.sev}, func() string {
			return fmt.Sprintf("loading %s %s%s (%s): what it is cannot be known without running the pickle%s", verb, s.whyOf(fn), s.argsText(n), at, s.fate(n))
		})
		return
	}
	name := fn.name
	args := s.argItems(n)
	// the arguments that are classes to instantiate, or callables to call
	for _, i := range classArgs[name] {
		if i < len(args) && !s.classArg(n, args[i], name, i) {
			s.mark(flagFlagged, n)
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
	if fetchers[name] == fetchGetattr && len(args) == 3 && s.isStr(args[1]) && ps.Str(args[1]) == "_setattr" &&
		ps.Kind(args[2]) == pickle.KindGlobal && ps.Qualified(args[2]) == "builtins.setattr" {
		if base := s.resolve(args[0], 0); base.ok && isDill(base.name) {
			s.mark(flagExplained, args[2])
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
			s.mark(flagFlagged, n)
			s.addf(Finding{Global: s.text(r.maker), Role: RoleCall, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevCode}, func() string {
				return fmt.Sprintf("loading calls %s%s (%s) to get %s: code the file carries%s", name, s.argsText(n), at, s.whyOf(r), s.fate(n))
			})
			return
		}
		if r.ok {
			if cls, ok := newOf(r.name); ok {
				// C.__new__ for a construction of C: judged where it is called
				if s.pol.Allowed(RoleConstruct, cls) {
					return
				}
				if sev, _ := s.classify(cls); sev != SevDangerous {
					return
				}
			}
		}
		s.mark(flagFlagged, n)
		sev, why := s.classify(name)
		what := "something that cannot be named statically"
		if r.ok {
			// the name is known: it is judged for what it is
			what = s.text(r.name)
			sev, why = s.classify(r.name)
			if sev == SevUnknown {
				why = what + " is not on the allowlist"
			}
		} else {
			sev = SevDangerous
		}
		s.addf(Finding{Global: s.text(name), Role: RoleCall, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev}, func() string {
			return fmt.Sprintf("loading calls %s%s to get %s (%s; %s)%s%s", name, s.argsText(n), what, at, s.viaOf(fn), because(why), s.fate(n))
		})
		return
	}
	if s.pol.Allowed(role, name) {
		if msg := s.guard(n, name, args); msg != "" {
			s.mark(flagFlagged, n)
			s.addf(Finding{Global: s.text(name), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevUnknown}, func() string {
				return fmt.Sprintf("loading calls %s%s (%s): allowed only %s", name, s.argsText(n), at, msg)
			})
		}
		return
	}
	s.mark(flagFlagged, n)
	sev, why := s.classify(name)
	s.addf(Finding{Global: s.text(name), Role: role, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev}, func() string {
		var reason string
		if role == RoleConstruct {
			reason = fmt.Sprintf("loading creates a %s object with %s.__new__%s (%s; %s)", name, name, s.argsText(n), at, s.viaOf(fn))
		} else {
			reason = fmt.Sprintf("loading calls %s%s (%s; %s)", name, s.argsText(n), at, s.viaOf(fn))
		}
		return reason + because(why) + s.fate(n)
	})
	if name == (Name{"copyreg", "add_extension"}) && len(args) == 3 && s.isStr(args[0]) && s.isStr(args[1]) && ps.Kind(args[2]) == pickle.KindInt {
		s.ext[ps.Int(args[2])] = extEntry{Name{strings.Clone(ps.Str(args[0])), strings.Clone(ps.Str(args[1]))}, ev.Offset}
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
func (s *scanner) newCall(ev pickle.SEvent, n pickle.ID, name, cls Name, fn ref) {
	if s.pol.Allowed(RoleConstruct, cls) {
		return
	}
	s.mark(flagFlagged, n)
	sev, why := s.classify(cls)
	s.addf(Finding{Global: s.text(cls), Role: RoleConstruct, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev}, func() string {
		return fmt.Sprintf("loading creates a %s object with %s%s (%s at %d; %s)%s%s", cls, name, s.argsText(n), ev.Op, ev.Offset, s.viaOf(fn), because(why), s.fate(n))
	})
}

// classArg checks the class a constructor-like call instantiates; false
// when it is not allowed (a finding is made).
func (s *scanner) classArg(call, cls pickle.ID, by Name, i int) bool {
	r := s.resolve(cls, 0)
	op, off := s.ps.Op(call), s.ps.Offset(call)
	at := opAt{op, off}
	if r.made {
		if s.pol.Allowed(RoleCall, r.maker) {
			return true
		}
		s.addf(Finding{Global: s.text(r.maker), Role: RoleConstruct, Offset: off, Opcode: op.String(), Severity: SevCode}, func() string {
			return fmt.Sprintf("loading instantiates %s through %s (%s): a class the file carries", s.whyOf(r), by, at)
		})
		return false
	}
	if !r.ok {
		s.addf(Finding{Role: RoleConstruct, Offset: off, Opcode: op.String(), Severity: r.sev}, func() string {
			return fmt.Sprintf("loading instantiates %s through %s (%s): the class cannot be known without running the pickle", s.whyOf(r), by, at)
		})
		return false
	}
	if s.pol.Allowed(RoleConstruct, r.name) {
		return true
	}
	sev, why := s.classify(r.name)
	s.addf(Finding{Global: s.text(r.name), Role: RoleConstruct, Offset: off, Opcode: op.String(), Severity: sev}, func() string {
		what := "creates a " + r.name.String() + " object"
		if i == 1 && by == (Name{"copyreg", "_reconstructor"}) {
			what = "creates an object through " + r.name.String() + ".__new__ and __init__ (the base class)"
		}
		return fmt.Sprintf("loading %s with %s (%s; %s)%s", what, by, at, s.viaOf(r), because(why))
	})
	return false
}

// calledArg checks a callable that a call passes on to be called.
func (s *scanner) calledArg(call, fn pickle.ID, by Name) {
	if s.ps.Kind(fn) == pickle.KindNone {
		return
	}
	r := s.resolve(fn, 0)
	op, off := s.ps.Op(call), s.ps.Offset(call)
	at := opAt{op, off}
	when := "calls it"
	if by == (Name{"collections", "defaultdict"}) {
		when = "keeps it and calls it for every missing key"
	}
	if r.made {
		if !s.pol.Allowed(RoleCall, r.maker) {
			s.addf(Finding{Global: s.text(r.maker), Role: RoleCall, Offset: off, Opcode: op.String(), Severity: SevCode}, func() string {
				return fmt.Sprintf("%s gets %s and %s (%s): code the file carries", by, s.whyOf(r), when, at)
			})
		}
		return
	}
	if !r.ok {
		s.addf(Finding{Role: RoleCall, Offset: off, Opcode: op.String(), Severity: r.sev}, func() string {
			return fmt.Sprintf("%s gets %s and %s (%s)", by, s.whyOf(r), when, at)
		})
		return
	}
	if s.pol.Allowed(RoleCall, r.name) || s.pol.Allowed(RoleConstruct, r.name) || safeFactories[r.name] {
		return
	}
	sev, why := s.classify(r.name)
	s.addf(Finding{Global: s.text(r.name), Role: RoleCall, Offset: off, Opcode: op.String(), Severity: sev}, func() string {
		return fmt.Sprintf("%s gets %s and %s (%s; %s)%s", by, r.name, when, at, s.viaOf(r), because(why))
	})
}

// instClass is the class of an object a call created: the class argument
// of a constructor-like call, else the callable itself.
func (s *scanner) instClass(n pickle.ID) ref {
	fn := s.resolve(s.ps.Func(n), 0)
	if fn.ok {
		if idx := classArgs[fn.name]; len(idx) > 0 {
			if args := s.argItems(n); idx[0] < len(args) {
				return s.resolve(args[idx[0]], 0)
			}
		}
	}
	return fn
}

// mutOf returns the operation a mutation event names: Muts(t)[i], read
// once per target (the map keeps a target's operations only while the log
// has more of them to reach).
func (s *scanner) mutOf(t pickle.ID, i int) (pickle.SMut, bool) {
	k := s.ps.NMuts(t)
	if i < 0 || i >= k {
		return pickle.SMut{}, false
	}
	if k == 1 {
		// (through the iterator: Muts makes a slice, a million levels of
		// built objects made 47 MB of them)
		it := s.ps.MutIter(t)
		return it.Next()
	}
	muts, ok := s.muts[t]
	if !ok {
		muts = s.ps.Muts(t)
		s.muts[t] = muts
	}
	if i == k-1 {
		delete(s.muts, t)
	}
	return muts[i], true
}

func (s *scanner) mutation(ev pickle.SEvent) {
	ps := s.ps
	t := ev.Node
	m, ok := s.mutOf(t, int(ev.Mut))
	if !ok {
		return
	}
	at := opAt{m.Op, m.Offset}
	what := func() string { return mutText(s, m) }
	var reason func() string // worded only when the finding is listed (addf)
	f := Finding{Role: RoleMutate, Offset: m.Offset, Opcode: m.Op.String()}
	switch ps.Kind(t) {
	case pickle.KindCall:
		if fn := s.resolve(ps.Func(t), 0); fn.ok && fetchers[fn.name] == fetchPartial {
			// a new partial object: BUILD sets (func, args, kwds, dict),
			// and may replace the function it calls
			if m.Op == pickle.BUILD && len(m.Args) == 1 && ps.Kind(m.Args[0]) == pickle.KindTuple && ps.NItems(m.Args[0]) >= 1 {
				a := s.argItems(t)
				if len(a) >= 1 {
					f0 := ps.Items(m.Args[0])[0]
					old, nw := s.resolve(a[0], 0), s.resolve(f0, 0)
					if f0 == a[0] || (old.ok && nw.ok && old.name == nw.name) {
						return
					}
				}
			}
			f.Role, f.Global, f.Severity = RoleBuild, s.text(fn.name), SevDangerous
			reason = func() string {
				return fmt.Sprintf("loading %s the functools.partial made at %d (%s): the state can replace the function it calls", what(), ps.Offset(t), at)
			}
			break
		}
		r := s.resolve(t, 0)
		if r.made {
			if s.pol.Allowed(RoleCall, r.maker) || s.ps.Has(t, flagFlagged) {
				return
			}
			f.Role, f.Global, f.Severity = RoleBuild, s.text(r.maker), SevCode
			reason = func() string { return fmt.Sprintf("loading %s %s (%s): code the file carries", what(), s.whyOf(r), at) }
			break
		}
		if r.ok {
			// an existing object fetched by getattr and its kin
			if s.pol.Allowed(RoleMutate, r.name) {
				return
			}
			f.Global, f.Severity = s.text(r.name), SevDangerous
			reason = func() string {
				return fmt.Sprintf("loading %s %s (%s; %s), an object loading did not create: it changes the running process", what(), r.name, at, s.viaOf(r))
			}
			break
		}
		if s.ps.Has(t, flagFlagged) {
			return // the call that made it is reported already
		}
		cls := s.instClass(t)
		f.Role = RoleBuild
		if cls.made {
			if s.pol.Allowed(RoleCall, cls.maker) {
				return
			}
			f.Global, f.Severity = s.text(cls.maker), SevCode
			reason = func() string {
				return fmt.Sprintf("loading %s the object made at %d, an instance of %s (%s): code the file carries", what(), ps.Offset(t), s.whyOf(cls), at)
			}
			break
		}
		if !cls.ok {
			f.Severity = cls.sev
			reason = func() string {
				return fmt.Sprintf("loading %s the object made at %d, an instance of %s (%s)", what(), ps.Offset(t), s.whyOf(cls), at)
			}
			break
		}
		if s.pol.Allowed(RoleBuild, cls.name) {
			return
		}
		sev, why := s.classify(cls.name)
		f.Global, f.Severity = s.text(cls.name), sev
		reason = func() string {
			return fmt.Sprintf("loading %s a %s object made at %d (%s; %s.__setstate__ or its item methods run)%s", what(), cls.name, ps.Offset(t), at, cls.name, because(why))
		}
	case pickle.KindGlobal:
		r := s.resolve(t, 0)
		if r.ok && s.pol.Allowed(RoleMutate, r.name) {
			return
		}
		f.Global, f.Severity = s.text(r.name), SevDangerous
		if !r.ok {
			f.Severity = r.sev
			reason = func() string { return fmt.Sprintf("loading %s %s (%s)", what(), s.whyOf(r), at) }
			break
		}
		reason = func() string {
			return fmt.Sprintf("loading %s %s itself (%s; %s), a class or module the pickle did not create: it is patched for the whole process", what(), r.name, at, s.viaOf(r))
		}
	default:
		r := s.resolve(t, 0)
		f.Severity = r.sev
		if f.Severity == "" {
			f.Severity = SevUnknown
		}
		reason = func() string { return fmt.Sprintf("loading %s %s (%s)", what(), s.whyOf(r), at) }
	}
	s.addf(f, reason)
	if f.Global == "copyreg._extension_registry" && (m.Op == pickle.SETITEM || m.Op == pickle.SETITEMS) {
		for i := 0; i+1 < len(m.Args); i += 2 {
			k, v := m.Args[i], m.Args[i+1]
			if ki := ps.Items(k); ps.Kind(k) == pickle.KindTuple && len(ki) == 2 && s.isStr(ki[0]) && s.isStr(ki[1]) && ps.Kind(v) == pickle.KindInt {
				s.ext[ps.Int(v)] = extEntry{Name{strings.Clone(ps.Str(ki[0])), strings.Clone(ps.Str(ki[1]))}, m.Offset}
			}
		}
	}
}

// mutText says what a mutation does: "sets the state of", "sets 'len' in".
func mutText(s *scanner, m pickle.SMut) string {
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

func (s *scanner) persid(ev pickle.SEvent) {
	ps := s.ps
	n := ev.Node
	items := ps.Items(n)
	if s.pol.torchStorage && strings.Contains(s.doc.Format, "torch") && ps.Op(n) == pickle.BINPERSID && len(items) == 1 {
		if t := items[0]; ps.Kind(t) == pickle.KindTuple && ps.NItems(t) >= 5 {
			if ti := ps.Items(t); s.isStr(ti[0]) && ps.Str(ti[0]) == "storage" {
				if r := s.resolve(ti[1], 0); r.ok && s.pol.Allowed(RoleResolve, r.name) {
					return // torch's own storage record
				}
			}
		}
	}
	id := ps.Str(n)
	if ps.Op(n) == pickle.BINPERSID && len(items) == 1 {
		id = s.brief(items[0], 2)
	} else {
		id = pyStr(id)
	}
	s.addf(Finding{Role: RolePersID, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevNote}, func() string {
		return fmt.Sprintf("persistent id %s: resolved by the loader's persistent_load (pickle.load without one refuses the file); what it returns is up to that loader", id)
	})
}

// resolveOnly reports a global or EXT code looked up and kept as a value.
func (s *scanner) resolveOnly(ev pickle.SEvent) {
	n := ev.Node
	if ev.Kind == pickle.EvExt {
		r := s.resolve(n, 0)
		if !r.ok {
			s.addf(Finding{Role: RoleExt, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: SevDangerous}, func() string {
				return "loading fetches " + s.whyOf(r)
			})
			return
		}
		if s.pol.Allowed(RoleResolve, r.name) {
			return
		}
		sev, why := s.classify(r.name)
		s.addf(Finding{Global: s.text(r.name), Role: RoleExt, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev}, func() string {
			return fmt.Sprintf("loading fetches %s (%s)%s", r.name, s.viaOf(r), because(why))
		})
		return
	}
	r := s.resolve(n, 0)
	if !r.ok {
		s.addf(Finding{Role: RoleResolve, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: r.sev}, func() string {
			return "loading looks up " + s.whyOf(r)
		})
		return
	}
	if s.pol.Allowed(RoleResolve, r.name) {
		return
	}
	sev, why := s.classify(r.name)
	s.addf(Finding{Global: s.text(r.name), Role: RoleResolve, Offset: ev.Offset, Opcode: ev.Op.String(), Severity: sev}, func() string {
		return fmt.Sprintf("loading imports %s and fetches %s (%s); it is kept as a value, not called here%s", r.name.Module, r.name, s.viaOf(r), because(why))
	})
}

// argsText renders a call's arguments briefly: "('echo hi',)".
func (s *scanner) argsText(n pickle.ID) string {
	ps := s.ps
	a := ps.Args(n)
	if a == pickle.NoID {
		return "(...)"
	}
	if ps.Kind(a) != pickle.KindTuple {
		return "(*" + s.brief(a, 2) + ")"
	}
	items := ps.Items(a)
	parts := make([]string, 0, len(items))
	total := 0
	for i, it := range items {
		if total > 80 || i >= 6 {
			parts = append(parts, "...")
			break
		}
		t := s.brief(it, 2)
		total += len(t)
		parts = append(parts, t)
	}
	out := "(" + strings.Join(parts, ", ")
	if kw := ps.Kwargs(n); kw != pickle.NoID && ps.Kind(kw) == pickle.KindDict && ps.NItems(kw) > 0 {
		out += ", **" + s.brief(kw, 1)
	}
	return out + ")"
}

// brief renders a node as a short Python-like expression (depth bounds
// the nesting it shows, and so its recursion).
func (s *scanner) brief(n pickle.ID, depth int) string {
	if n == pickle.NoID {
		return "?"
	}
	ps := s.ps
	k := ps.Kind(n)
	switch k {
	case pickle.KindNone:
		return "None"
	case pickle.KindBool:
		if ps.Int(n) != 0 {
			return "True"
		}
		return "False"
	case pickle.KindInt:
		if ps.IsBig(n) {
			t := ps.Big(n).String()
			if len(t) > 24 {
				return t[:10] + "..." + t[len(t)-6:]
			}
			return t
		}
		return strconv.FormatInt(ps.Int(n), 10)
	case pickle.KindFloat:
		return strconv.FormatFloat(ps.Float(n), 'g', -1, 64)
	case pickle.KindStr:
		if ps.Blob(n) != nil {
			return fmt.Sprintf("<str of %d bytes>", ps.PayloadLen(n))
		}
		return pyStr(ps.Str(n))
	case pickle.KindBytes, pickle.KindByteArray:
		if ps.Blob(n) != nil || len(ps.Str(n)) > 32 {
			return fmt.Sprintf("<%s of %d bytes>", k, ps.PayloadLen(n))
		}
		return "b" + pyStr(ps.Str(n))
	case pickle.KindGlobal:
		if ps.Has(n, pickle.FlagDynamic) {
			return fmt.Sprintf("<global computed at %d>", ps.Offset(n))
		}
		return ps.Qualified(n)
	case pickle.KindCall:
		if depth <= 0 {
			return fmt.Sprintf("<result of the %s at %d>", ps.Op(n), ps.Offset(n))
		}
		f := s.brief(ps.Func(n), depth-1)
		return f + s.argsTextDepth(n, depth-1)
	case pickle.KindPersID:
		return fmt.Sprintf("<persistent id at %d>", ps.Offset(n))
	case pickle.KindExt:
		return fmt.Sprintf("<EXT code %d>", ps.Int(n))
	case pickle.KindBuffer:
		return fmt.Sprintf("<buffer %d>", ps.Int(n))
	}
	open, close := "[", "]"
	switch k {
	case pickle.KindTuple:
		open, close = "(", ")"
	case pickle.KindDict, pickle.KindSet:
		open, close = "{", "}"
	case pickle.KindFrozenSet:
		open, close = "frozenset({", "})"
	}
	items := ps.Items(n)
	if len(items) == 0 {
		if k == pickle.KindSet {
			return "set()"
		}
		return open + close
	}
	if depth <= 0 {
		return open + "..." + close
	}
	var parts []string
	step := 1
	if k == pickle.KindDict {
		step = 2
	}
	for i := 0; i < len(items); i += step {
		if len(parts) >= 3 {
			parts = append(parts, "...")
			break
		}
		if step == 2 && i+1 < len(items) {
			parts = append(parts, s.brief(items[i], depth-1)+": "+s.brief(items[i+1], depth-1))
		} else {
			parts = append(parts, s.brief(items[i], depth-1))
		}
	}
	if k == pickle.KindTuple && len(items) == 1 {
		return "(" + parts[0] + ",)"
	}
	return open + strings.Join(parts, ", ") + close
}

func (s *scanner) argsTextDepth(n pickle.ID, depth int) string {
	ps := s.ps
	a := ps.Args(n)
	if a == pickle.NoID || ps.Kind(a) != pickle.KindTuple {
		return "(...)"
	}
	items := ps.Items(a)
	if depth <= 0 {
		if len(items) == 0 {
			return "()"
		}
		return "(...)"
	}
	var parts []string
	for i, it := range items {
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

// idSet is a set of the nodes of one store, a bit per pickle.ID.
type idSet []uint64

func newIDSet(ps *pickle.Store) idSet { return make(idSet, (ps.Len()+63)/64) }

func (ns idSet) add(n pickle.ID) {
	if n >= 0 && int(n>>6) < len(ns) {
		ns[n>>6] |= 1 << (n & 63)
	}
}

func (ns idSet) has(n pickle.ID) bool {
	return n >= 0 && int(n>>6) < len(ns) && ns[n>>6]&(1<<(n&63)) != 0
}

// mark sets a scanner flag on a node.
func (s *scanner) mark(f pickle.Flags, n pickle.ID) {
	if n >= 0 {
		s.ps.SetFlags(n, f)
	}
}
