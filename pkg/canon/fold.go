package canon

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The canon sink (docs/engine.md §2.1, item 5): while the machine reads a
// stream, every final subtree of plain data hanging off a kept list or
// dict (pickle.Keep.Fold) is encoded at once, by the encoder that encodes
// the stream at STOP, and only its encoding bytes are kept; the machine
// replaces runs of such subtrees by one KindFolded node, which the encoder
// at STOP writes as those bytes. The digest is the one the whole store
// gives, because:
//
//   - a folded subtree is a tree of plain nodes that nothing else refers to
//     (every identity node in it has one parent): its encoding holds no
//     back-reference ('R'), so it is the same wherever the traversal meets
//     it, and the ordinals it uses are its Word, added to the encoder's
//     count when it is written;
//   - no producer rule looks at plain data unless a call of a global some
//     rule reads (ruleGlobal), a persistent id, an EXT code or a buffer
//     is in the stream: the sink folds nothing in a stream once one of them
//     is in its log, and a stream where one turns up after something was
//     folded is hashed again without folding (errRefold);
//   - keys of dicts and items of sets, whose order is computed from them,
//     are never folded, nor are items of tuples (whose purity depends on
//     theirs).
//
// In a stream where rules apply, the sink still folds the argument tuple
// of each code object at its REDUCE (foldArgs), the bulk of a cloudpickle
// or dill state: the tuple is pure (scalars and tuples of them), so its
// embedding is 'H' + its digest wherever it is met, and the one rule that
// reads it (code: co_filename, lineno) is applied by the view's own code
// when it is folded; normalize notes that rule where it would have
// applied it (View.foldedCode). What the bytes were read from and stays
// in the store is marked (flagFoldDep): should a later rule replace one
// of those nodes, or an operation change one, or a GET read the tuple
// again, or the call no longer be a code object's at STOP, the stream is
// hashed again without folding (errRefold).
//
// The bytes live in one arena per input; a stream's folded nodes point
// into it until the stream is encoded.
type foldSink struct {
	opt Options
	sp  spool // the bytes of the folded runs
	// oneNone: only the digest reads the stores (Keep.OneNone)
	oneNone bool
	// the stream being read, whether the sink has stopped folding in it,
	// how much of its log it has looked at, and the arena's length when it
	// began
	cur     streamKey
	stopped bool
	seen    int
	base    int64
	v       View
	e       *encoder
	// the globals folded runs refer to, by stream and offset: covered by
	// the result when their runs are (View.isCovered)
	globals map[streamKey]map[int64]bool
	walked  []uint64 // pure nodes already searched for globals, by ID (one compaction)
	scr     *docScratch
	br      *bufio.Reader // entries' readers of runs
	mr      byteDiscarder
	tmp     []byte // an entry's value, its key (fold)
	key     []byte
	gen     []uint32 // the fold encoders' ordinal tables (encState.ordGen, ordVal)
	ord     []int32
	stack   []pickle.ID
	// accept, when set (pk canon's writer, EachStreamWrite), says whether
	// the writer can write a root (or an entry's key) back from its
	// encoding: the sink folds only those
	accept func(enc []byte) bool
	// side: the sink folds for pk canon's writer (EachStreamWrite), each
	// pure tuple followed by its items (appendItems); sideRuns are the
	// spool's spans of the roots folded with such items, in order, adjacent
	// ones merged (reset with the spool); sideMade the bytes of items
	// appendItems made in the stream, kept or not, bounded as the encoding
	// is (MaxExpansion)
	side      bool
	sideRuns  []span
	sideMade  int64
	sideLimit int64 // the bound on sideMade, for what was read so far
	sideStack []sideFrame
	strip     []byte // emitRange's window of a span with side items
	// foldArgs': the view that classifies calls in the stream being read
	// (cv, its stream cvKey; codeDill: the call foldCall answered for is
	// dill's), the store an argument tuple is copied into (at) and the
	// view that encodes it (av, with its scratch ascr)
	cv       View
	cvKey    streamKey
	codeDill bool
	at       pickle.Store
	cp       pickle.Copier
	av       View
	ast      encState
	astKey   streamKey
}

// span is the spool's bytes [start, end).
type span struct{ start, end int64 }

// streamKey names one stream of an input: a machine reads each pickle part
// into a store of its own, and the streams of one part at their offsets.
type streamKey struct {
	s     *pickle.Store
	begin int64
}

// errRefold: a stream had subtrees folded before a call some rule reads
// turned up; it is hashed again without folding.
var errRefold = errors.New("canon: stream folded before a rule's call; hash it again without folding")

// keep returns the machine's options for hashing with the sink.
func (k *foldSink) keep() *pickle.Keep {
	kp := &pickle.Keep{Depth: math.MaxInt32, Fold: k.fold, Active: k.active, OneNone: k.oneNone, OneEmpty: k.oneNone} // everything named is kept whole
	if k.accept == nil && k.opt.NoPaths && !k.opt.WholeCodeArgs {
		// (for a digest only: pk canon's writer writes a pickle back from
		// what it reads, and --explain's paths are found in the whole view)
		kp.FoldArgs, kp.FoldCall, kp.FoldArgsMin = k.foldArgs, k.foldCall, codeArgsMin
	}
	return kp
}

// flagFoldDep marks, in a store the sink reads, the nodes a folded
// argument tuple was read from that stay in the store (foldArgs).
const flagFoldDep = pickle.FlagUser1

// foldArgsMax is the most places a code object's argument tuple folded by
// foldArgs may have (its own nodes and those it names again).
const foldArgsMax = 1 << 13

// foldCall is Keep.FoldCall: the arguments of a code object's call (a
// REDUCE the view classifies as types.CodeType or dill's _create_code)
// are what foldArgs folds; which of the two it is stays for foldArgs.
func (k *foldSink) foldCall(s *pickle.Store, c pickle.ID) bool {
	if k.active(s) {
		return false // (no rule's global yet: no code object)
	}
	if k.cvKey != k.cur {
		k.cv, k.cvKey = View{Opt: k.opt, s: s}, k.cur
	}
	cv := &k.cv
	cv.base, cv.nsyn = pickle.ID(s.Len()), int32(s.Len())
	who := cv.callable(cv.fn(c))
	k.codeDill = who == "dill:_create_code"
	return who == "std:types.CodeType" || k.codeDill
}

// foldArgs is Keep.FoldArgs: a code object's call (foldCall) gets its
// argument tuple folded to its embedding ('H' + the digest of the tuple
// as code's rules rewrite it, as the encoder at STOP embeds it), Word the
// set of rules applied (codeFile, codeLine). The tuple is copied into a
// store of the sink's own and encoded by a view of that; what it was
// copied from gets flagFoldDep.
func (k *foldSink) foldArgs(s *pickle.Store, c, lo pickle.ID) pickle.Folded {
	dill := k.codeDill
	t := &k.at
	t.Reset()
	a, ok := k.cp.Owned(t, s, lo, k.cv.argsOf(c), foldArgsMax, flagFoldDep)
	if !ok {
		return pickle.Folded{}
	}
	v := &k.av
	// (what one tuple's view allocates is kept for the next: 22,400 tuples
	// in a cloudpickle state)
	x, xspec, argBuf, pnames := v.x, v.xspec[:0], v.argBuf, v.pnames[:0]
	*v = View{Opt: k.opt, s: t, base: pickle.ID(t.Len()), nsyn: int32(t.Len()), x: x, xspec: xspec, argBuf: argBuf, pnames: pnames}
	v.x.Reset()
	items, rules := t.Items(a), int32(0)
	if !v.Opt.Strict {
		items, rules = v.codeArgs(items, dill)
	}
	tup := v.synth(pickle.KindTuple, a)
	v.setKids(tup, items)
	p := &k.sp
	if p.mem == nil {
		p.mem = make([]byte, 0, spoolMem+spoolMem/4)
	}
	start := len(p.mem)
	st := k.argState(v)
	if v.pureCopy(st, tup) {
		pureCopies.Add(1)
		p.mem = v.appendPure(p.mem, tup)
	} else if v.isPureDigest(tup) {
		p.mem = v.appendPure(p.mem, tup)
	}
	limit := k.base + MaxExpansion*(s.Offset(c)-s.Begin+1) + MaxExpansionSlack
	if len(p.mem) == start || st.err != nil || p.size() > limit {
		p.mem = p.mem[:start]
		return pickle.Folded{}
	}
	argFolds.Add(1)
	out := pickle.Folded{Off: p.flushed + int64(start), Len: int32(len(p.mem) - start), Word: rules, OK: true}
	p.maybeFlush()
	return out
}

// pureCopy sets the purity of every node of v, foldArgs' view of an
// argument tuple, as decide finds it, without its walk: what
// pickle.Copier.Owned copies is None, bool, int, float, str or bytes (pure
// leaves: 1) and tuples and frozensets of them (pure composites: 4), with
// nothing in a side record, and the view's own nodes are codeArgs'
// placeholders (pure leaves) and the tuple tup. The digests are computed
// by the encoding (appendPure, pureDigest), as decide computes them: the
// same bodies. False, with the table cleared, for a node of any other kind
// (decide's walk then runs). (decide's walk and leaf were about a sixth of
// pk hash's instructions on a cloudpickle state, most of them here.)
func (v *View) pureCopy(st *encState, tup pickle.ID) bool {
	for id := pickle.ID(0); id < v.base; id++ {
		switch v.s.Kind(id) {
		case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindStr, pickle.KindBytes:
			st.pure[id] = 1
		case pickle.KindTuple, pickle.KindFrozenSet:
			st.pure[id] = 4
		default:
			clear(st.pure)
			return false
		}
		if v.s.NMuts(id) > 0 || v.s.Flags(id)&pickle.FlagDynamic != 0 {
			clear(st.pure)
			return false
		}
	}
	for id := v.base; id < pickle.ID(v.nsyn); id++ {
		switch {
		case id == tup:
			st.pure[id] = 4
		case v.specialOf(id) == 'P':
			st.pure[id] = 1
		default:
			clear(st.pure)
			return false
		}
	}
	return true
}

// argState gives v, foldArgs' view of one argument tuple, the encoding
// state of those folded before it in the stream: its tables by node ID
// are v's own, but the digests computed and the short bodies met last
// (pureSlot) carry over, so that equal small tuples ((None,), a name or
// two) are digested once in a while, not once a code object. The digests
// are let go past a few chunks (stale slots with them).
func (k *foldSink) argState(v *View) *encState {
	st := &k.ast
	n := int(v.nsyn)
	if st.pdig.n >= 4*digChunk || k.cvKey != k.astKey {
		st.pdig, st.npd, k.astKey = st.pdig.reset(), 0, k.cvKey
		if st.smallPD != nil {
			*st.smallPD = smallBodies{}
		}
	}
	clear(st.plain)
	*st = encState{pure: grow.Reuse(st.pure, n), pslot: grow.Reuse(st.pslot, n), budget: 32*int64(n) + 1<<20,
		pdig: st.pdig, npd: st.npd, smallPD: st.smallPD, stk: st.stk[:0], body: st.body[:0], plain: st.plain}
	v.enc = st
	return st
}

// foldedCode applies, to call n whose argument tuple the sink folded
// (foldArgs), what call does to a code object: it notes the rules the
// sink applied; a call that is no code object's at STOP (a rule replaced
// what it calls) makes the stream be hashed again without folding.
func (v *View) foldedCode(n pickle.ID) {
	a := v.argsOf(n)
	if a < 0 || a >= v.base || v.kind(a) != pickle.KindFolded || v.flags(a)&pickle.FlagFoldArgs == 0 {
		return
	}
	if who := v.callable(v.fn(n)); who != "std:types.CodeType" && who != "dill:_create_code" {
		v.refold = true
		return
	}
	if !v.Opt.Strict {
		_, _, _, rules := v.s.FoldedRun(a)
		v.codeNotes(n, int32(rules))
	}
}

// replacedDep reports whether a rule replaced a node that a folded
// argument tuple was read from (flagFoldDep): its bytes may not be what
// the encoder at STOP would write.
func (v *View) replacedDep() bool {
	for w, b := range v.replSet {
		for ; b != 0; b &= b - 1 {
			if n := pickle.ID(w<<6 | bits.TrailingZeros64(b)); n < v.base && v.s.Flags(n)&flagFoldDep != 0 {
				return true
			}
		}
	}
	return false
}

// readOptions are ReadOptions with the sink's Keep.
func (k *foldSink) readOptions() pickle.Options {
	o := ReadOptions(k.opt)
	o.Keep = k.keep()
	return o
}

// newFoldSink returns a sink for hashing one input with opt, or nil when
// folding does not apply (torch legacy storage keys are read at STOP).
func newFoldSink(opt Options) *foldSink {
	if noFold || opt.storageKeys != nil {
		return nil
	}
	return &foldSink{opt: opt, cur: streamKey{begin: -1}}
}

// noFold turns the sink off (tests compare both ways); foldSeen counts the
// folded runs normalize met (tests).
var (
	noFold     bool
	foldSeen   atomic.Int64
	refolds    atomic.Int64 // inputs hashed again without folding (tests)
	argFolds   atomic.Int64 // argument tuples folded at their REDUCE (foldArgs; tests)
	pureCopies atomic.Int64 // argument tuples whose purity pureCopy set (tests)
	ordMisses  atomic.Int64 // streams Digest encoded again with pslot (sparseOrds; tests)
)

// ruleStd are the globals of the standard library that a rule of the form
// reads (view.go, partial.go: the "std:" callables their switches name, and
// dill's GLOBAL builtins.__main__); TestRuleStdComplete keeps the list
// whole. Any other global of builtins, copyreg, types or functools (a
// types.SimpleNamespace, a builtins.complex) is a plain callable.
var ruleStd = map[string]bool{
	"builtins.getattr": true, "builtins.setattr": true, "builtins.set": true, "builtins.frozenset": true,
	"builtins.bytes": true, "builtins.bytearray": true, "builtins.__main__": true,
	"types.CodeType": true, "types.FunctionType": true, "types.LambdaType": true,
	"functools.partial": true, "_codecs.encode": true,
	"copyreg._reconstructor": true, "copyreg.__newobj__": true, "copyreg.__newobj_ex__": true,
}

// ruleGlobal reports whether a rule of the form may read what a global
// module.name is applied to: ruleStd, numpy's, torch's and joblib's
// callables (pk-canon/2's arrays and tensors), cloudpickle's and dill's.
func ruleGlobal(module, name string) bool {
	if ruleStd[module+"."+name] {
		return true
	}
	for _, p := range []string{"numpy", "torch", "joblib"} {
		if strings.HasPrefix(module, p) {
			return true
		}
	}
	return cloudpickleName(module, name) != "" || dillName(module, name) != ""
}

// ruleEvent reports whether a log event makes a stream's plain data
// something a rule may read.
func ruleEvent(s *pickle.Store, ev pickle.SEvent) bool {
	switch ev.Kind {
	case pickle.EvGlobal:
		if ev.Node < 0 {
			return true
		}
		return s.Flags(ev.Node)&pickle.FlagDynamic != 0 || ruleGlobal(s.Str(ev.Node), s.Name(ev.Node))
	case pickle.EvCall, pickle.EvMut:
		return false
	}
	return true // persistent ids, EXT codes, buffers
}

// active reports whether the sink still folds in stream s: until a rule's
// global, a persistent id, an EXT code or a buffer is in its log.
func (k *foldSink) active(s *pickle.Store) bool {
	if key := (streamKey{s, s.Begin}); key != k.cur {
		k.cur, k.stopped, k.seen = key, false, 0
		k.base = k.sp.size()
		k.sideMade = 0
	}
	for ; k.seen < s.NEvents() && !k.stopped; k.seen++ {
		if ruleEvent(s, s.Event(k.seen)) {
			k.stopped = true
		}
	}
	return !k.stopped
}

func (k *foldSink) fold(s *pickle.Store, roots, keys []pickle.ID, shared []uint8, out []pickle.Folded) {
	if !k.active(s) || s.Len() == 0 {
		return
	}
	// the bound of the canonical encoding (MaxExpansion), for what was
	// read so far
	limit := k.base + MaxExpansion*(s.Offset(pickle.ID(s.Len()-1))-s.Begin+1) + MaxExpansionSlack
	// one view of the store for the whole compaction, its tables reused
	// from one compaction to the next
	if k.scr == nil {
		k.scr = &docScratch{}
	}
	k.v = View{Opt: k.opt, s: s, base: pickle.ID(s.Len()), nsyn: int32(s.Len()), scr: k.scr}
	k.v.Opt.fold = k
	v := &k.v
	if k.e == nil {
		k.e = &encoder{}
	}
	e := k.e
	st := v.state()
	k.gen, k.ord = grow.Reuse(k.gen, int(v.nsyn)), grow.Reuse(k.ord, int(v.nsyn))
	st.ordGen, st.ordVal, st.gen = k.gen, k.ord, 0
	st.genBusy = true // isolated encoders inside (sort keys) use maps
	k.walked = grownSet(k.walked, int(v.nsyn))
	*e = encoder{v: v, iso: true, keep: true, side: k.side, shared: shared, stack: e.stack[:0], chbuf: e.chbuf[:0], opsBuf: e.opsBuf[:0], globs: e.globs[:0]}
	k.sideLimit = limit - k.base
	p := &k.sp
	if p.mem == nil {
		p.mem = make([]byte, 0, spoolMem+spoolMem/4)
	}
	for i, r := range roots {
		start := len(p.mem)
		made := k.sideMade
		e.globs, e.next, e.effects, e.refused = e.globs[:0], 0, false, false
		switch l := v.leaf(r); {
		case l == 1 && v.kind(r) != pickle.KindGlobal:
			p.mem = v.appendScalar(p.mem, r) // (a scalar: most items of a list of numbers or str)
		case v.isPure(r):
			p.mem = v.appendPure(p.mem, r)
			if k.side {
				var ok bool
				p.mem, ok = k.appendItems(v, p.mem, r)
				e.refused = !ok
			}
			e.globs = k.pureGlobals(v, r, e.globs)
			e.effects = len(e.globs) > 0
		default:
			st.gen++
			e.gen, e.buf = st.gen, p.mem
			e.node(r)
			e.run()
			p.mem = e.buf
			e.stack, e.chbuf = e.stack[:0], e.chbuf[:0]
		}
		if k.accept != nil && !e.refused && !k.accept(p.mem[start:]) {
			// the writer cannot write it back from its bytes (a call or a
			// global it can is among PlainEmbedding's forms: its effects
			// are placed as pk hash's are, below)
			e.refused = true
		}
		if key := keys[i]; key != pickle.NoID && !e.refused {
			// a dict's entry: uvarint lengths of the key's embedding and
			// of the value's encoding, the value's ordinals, then both
			// (foldEnt)
			if v.leaf(key) != 1 || v.kind(key) != pickle.KindStr && v.kind(key) != pickle.KindBytes {
				e.refused = true
			} else {
				k.tmp = append(k.tmp[:0], p.mem[start:]...)
				k.key = v.appendPure(k.key[:0], key)
				if k.accept != nil && !k.accept(k.key) {
					e.refused = true
				}
				p.mem = appendUvarint(p.mem[:start], uint64(len(k.key)))
				p.mem = appendUvarint(p.mem, uint64(len(k.tmp)))
				p.mem = appendUvarint(p.mem, uint64(e.next))
				p.mem = append(append(p.mem, k.key...), k.tmp...)
			}
		}
		globs := e.globs
		size := len(p.mem) - start
		if e.refused || st.err != nil || p.size() > limit || size >= 1<<30 {
			p.mem = p.mem[:start]
			st.err = nil
			continue
		}
		if len(globs) > 0 {
			if k.globals == nil {
				k.globals = map[streamKey]map[int64]bool{}
			}
			m := k.globals[k.cur]
			if m == nil {
				m = map[int64]bool{}
				k.globals[k.cur] = m
			}
			for _, off := range globs {
				m[off] = true
			}
		}
		out[i] = pickle.Folded{Off: p.flushed + int64(start), Len: int32(size), Word: e.next, OK: true, Effects: e.effects}
		if k.sideMade > made {
			k.addSideRun(out[i].Off, out[i].Off+int64(size))
		}
		p.maybeFlush()
	}
	e.v, e.shared, e.buf = nil, nil, nil
	k.v = View{}
}

// The writer's side items. pk canon's writer writes a folded root back from
// its bytes (pkg/write/wsink.go), but a pure tuple's embedding is its digest
// ('H' + H(body)), which does not say what the tuple holds. So the sink that
// folds for the writer (side) follows every pure tuple's embedding in a root
// with 'T', its item count and each item's embedding, each tuple among them
// followed by its own items in turn (canon.PlainForm reads that form): what
// the writer needs to write the tuple as it writes the node. A composite
// that is not a tuple (a frozenset, a computed global) gets none, and a
// root holding one does not fold; nor does a root whose items would pass
// the bound on them. The items are the writer's only: emitRange leaves them
// out of the canonical encoding (the spans in sideRuns), so that the digest
// and what any other encoding reads are those of the canonical bytes.

// sideFrame is a tuple appendItems is writing the items of, and the next
// one.
type sideFrame struct {
	n    pickle.ID
	next int
}

// appendItems appends to b, which ends with the embedding of pure node n,
// n's side items when n is a tuple embedded by its digest (none for a
// scalar), and counts them in sideMade. ok is false when the writer cannot
// have them: n is another composite, or holds one, or they would take
// sideMade past sideLimit (a tuple held by many rows is written out in
// each: the bound is the encoding's own, MaxExpansion).
func (k *foldSink) appendItems(v *View, b []byte, n pickle.ID) (out []byte, ok bool) {
	st := v.state()
	if !v.composite(st, n) {
		return b, true
	}
	start := len(b)
	defer func() { k.sideMade += int64(len(out) - start) }()
	if v.kind(n) != pickle.KindTuple {
		return b, false
	}
	stack := append(k.sideStack[:0], sideFrame{n: n})
	defer func() { k.sideStack = stack[:0] }()
	b = appendUvarint(append(b, 'T'), uint64(len(v.items(n))))
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		items := v.items(f.n)
		if f.next == len(items) {
			stack = stack[:len(stack)-1]
			continue
		}
		c := v.res(items[f.next])
		f.next++
		b = v.appendPure(b, c)
		if v.composite(st, c) {
			if v.kind(c) != pickle.KindTuple {
				return b, false
			}
			b = appendUvarint(append(b, 'T'), uint64(len(v.items(c))))
			stack = append(stack, sideFrame{n: c})
		}
		if k.sideMade+int64(len(b)-start) > k.sideLimit {
			return b, false
		}
	}
	return b, true
}

// addSideRun notes that the spool's bytes [start, end) are a root folded
// with side items.
func (k *foldSink) addSideRun(start, end int64) {
	if r := len(k.sideRuns) - 1; r >= 0 && k.sideRuns[r].end == start {
		k.sideRuns[r].end = end
		return
	}
	k.sideRuns = append(k.sideRuns, span{start, end})
}

// grownSet returns a cleared bitset of n bits, reusing b.
func grownSet(b []uint64, n int) []uint64 {
	w := (n + 63) / 64
	if cap(b) < w {
		return make([]uint64, w)
	}
	b = b[:w]
	clear(b)
	return b
}

// pureGlobals appends the offsets of the globals in pure node n (a global,
// or a tuple or frozenset holding some), each pure node searched once per
// compaction.
func (k *foldSink) pureGlobals(v *View, n pickle.ID, out []int64) []int64 {
	if v.kind(n) != pickle.KindGlobal && v.leaf(n) != 3 {
		return out
	}
	stack := append(k.stack[:0], n)
	defer func() { k.stack = stack[:0] }()
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x < 0 || int(x) >= int(v.nsyn) || k.walked[x/64]&(1<<uint(x%64)) != 0 {
			continue
		}
		k.walked[x/64] |= 1 << uint(x%64)
		switch v.kind(x) {
		case pickle.KindGlobal:
			out = append(out, v.offset(x))
			stack = append(stack, v.items(x)...) // a dynamic one's operands
		case pickle.KindTuple, pickle.KindFrozenSet:
			stack = append(stack, v.items(x)...)
		}
	}
	return out
}

// coveredGlobal reports whether global n of stream st is referred to by a
// folded run (covered when the runs are: encodeStream checks they are).
func (k *foldSink) coveredGlobal(st *pickle.Store, off int64) bool {
	if k == nil || k.globals == nil {
		return false
	}
	return k.globals[streamKey{st, st.Begin}][off]
}

// emit appends to e's encoding the bytes of folded run n and counts its
// ordinals.
func (k *foldSink) emit(e *encoder, s *pickle.Store, n pickle.ID) {
	off, ln, _, word := s.FoldedRun(n)
	if s.Flags(n)&pickle.FlagFoldArgs == 0 {
		e.next += int32(word) // (an argument tuple's word is its rules: it is pure)
	}
	k.emitRange(e, off, int64(ln))
}

// emitRange appends to e's encoding the spool's bytes [off, off+ln), the
// side items of the roots folded with them left out (sideRuns).
func (k *foldSink) emitRange(e *encoder, off, ln int64) {
	end := off + ln
	runs := k.sideRuns
	i, _ := slices.BinarySearchFunc(runs, off, func(r span, off int64) int { return cmp.Compare(r.end, off+1) })
	for ; off < end && i < len(runs) && runs[i].start < end; i++ {
		r := runs[i]
		if off < r.start {
			k.emitBytes(e, off, r.start)
			off = r.start
		}
		stop := min(end, r.end)
		k.emitCanonical(e, off, stop)
		off = stop
	}
	if off < end {
		k.emitBytes(e, off, end)
	}
}

// emitBytes appends to e's encoding the spool's bytes [off, end).
func (k *foldSink) emitBytes(e *encoder, off, end int64) {
	p := &k.sp
	for off < end {
		c := end - off
		if off < p.flushed {
			c = min(c, p.flushed-off, 1<<20)
		}
		b, ok := k.bytesAt(e, off, c)
		if !ok {
			return
		}
		k.put(e, b)
		off += c
	}
}

// emitCanonical appends to e's encoding the spool's bytes [off, end),
// embeddings with side items (from a root's or an entry's key's start):
// each tuple's embedding without its items.
func (k *foldSink) emitCanonical(e *encoder, off, end int64) {
	dsize := k.opt.Algo.Size()
	var skip uint64 // the items still to leave out
	window := int64(1 << 20)
	for off < end {
		c := min(end-off, window)
		src, ok := k.bytesAt(e, off, c)
		if !ok {
			return
		}
		out := k.strip[:0]
		i := 0
		for i < len(src) {
			size, items, text := PlainForm(src[i:], dsize)
			if size == 0 {
				break // (not whole in the window)
			}
			switch {
			case skip > 0:
				skip += items - 1
			case src[i] == 'H':
				out, skip = append(out, text...), items
			default:
				out = append(out, src[i:i+size]...)
			}
			i += size
		}
		k.strip = out
		if i == 0 {
			if c == end-off {
				break
			}
			window *= 2 // (a form longer than the window)
			continue
		}
		k.put(e, out)
		off += int64(i)
	}
	if (off < end || skip > 0) && e.v.state().err == nil {
		e.v.state().err = fmt.Errorf("reading back what pk spooled: a damaged run at %d", off)
	}
}

// bytesAt returns the spool's bytes [off, off+n): a view of its memory, or
// read from its file into its buffer (valid until the next call). ok false:
// the file could not be read (the encoding's error is set).
func (k *foldSink) bytesAt(e *encoder, off, n int64) (b []byte, ok bool) {
	p := &k.sp
	if off >= p.flushed {
		i := off - p.flushed
		return p.mem[i : i+n], true
	}
	if int64(cap(p.rbuf)) < n {
		p.rbuf = make([]byte, n)
	}
	b = p.rbuf[:n]
	f := min(n, p.flushed-off) // (the rest is in memory)
	if _, err := p.f.ReadAt(b[:f], off); err != nil {
		if st := e.v.state(); st.err == nil {
			st.err = fmt.Errorf("reading back what pk spooled (%s): %v", p.f.Name(), err)
		}
		return nil, false
	}
	copy(b[f:], p.mem)
	return b, true
}

// put appends b to e's encoding: a main encoder's large pieces straight to
// its hash.
func (k *foldSink) put(e *encoder, b []byte) {
	if e.keep || len(b) < 4<<10 {
		e.buf = append(e.buf, b...)
		return
	}
	e.flush()
	e.out(b)
}

// close removes the sink's temporary file.
func (k *foldSink) close() {
	if k != nil {
		k.sp.close()
	}
}

// spool holds the canon sink's bytes: the last ones in memory, the others,
// once there are more than spoolMem of them, in a temporary file (deleted
// when the sink is closed, or at once where the system allows), so that a
// table's encoding does not stay in memory until STOP. Offsets are the
// bytes' place in the whole.
type spool struct {
	mem     []byte // the bytes from offset flushed on
	flushed int64
	f       *os.File
	stay    bool // the file cannot be written: the bytes stay in memory
	rbuf    []byte
	removed bool // the file's name is gone already
}

// spoolMem is how many bytes the spool keeps in memory (tests lower it).
var spoolMem = 4 << 20

func (p *spool) size() int64 { return p.flushed + int64(len(p.mem)) }

// maybeFlush writes the bytes in memory to the file when they are more
// than spoolMem.
func (p *spool) maybeFlush() {
	if len(p.mem) <= spoolMem || p.stay {
		return
	}
	if p.f == nil {
		f, err := os.CreateTemp("", "pk-canon-*.spool")
		if err != nil {
			p.stay = true
			return
		}
		p.f = f
		if os.Remove(f.Name()) == nil {
			p.removed = true
		}
	}
	if _, err := p.f.WriteAt(p.mem, p.flushed); err != nil {
		p.stay = true // (a disk full: the bytes are still in memory)
		return
	}
	p.flushed += int64(len(p.mem))
	p.mem = p.mem[:0]
}

// reset empties the spool for the next stream (the file is written over).
func (p *spool) reset() { p.mem, p.flushed = p.mem[:0], 0 }

// release writes the bytes in memory to the file, when the spool has one
// (the stream's runs passed spoolMem), and lets their buffer go: what reads
// the runs back reads them from the file (pk canon's writer, which holds
// its tables meanwhile: 5 MB less on a 100 MB table). The next stream's
// fold makes a buffer again.
func (p *spool) release() {
	if p.f == nil || p.stay || p.mem == nil {
		return
	}
	if len(p.mem) > 0 {
		if _, err := p.f.WriteAt(p.mem, p.flushed); err != nil {
			p.stay = true // (a disk full: the bytes stay in memory)
			return
		}
		p.flushed += int64(len(p.mem))
	}
	p.mem = nil
}

func (p *spool) close() {
	if p.f != nil {
		p.f.Close()
		if !p.removed {
			os.Remove(p.f.Name())
		}
		p.f = nil
	}
}

// spoiled reports whether a stream that has folded runs has a rule's
// global, a persistent id, an EXT code or a buffer in its log: then a rule
// may have read what was folded, and the digest is not to be trusted
// (errRefold).
func spoiled(s *pickle.Store) bool {
	for _, ev := range s.Events() {
		if ruleEvent(s, ev) {
			return true
		}
	}
	return false
}

// Entries of a folded run of a dict's entries (FlagFoldEntries) are named,
// while the dict is encoded, by IDs below entFirst: entFirst - i is the
// view's ents[i]. noEnt is the value paired with such an entry (its bytes
// are in the entry's): it encodes as nothing.
const (
	noEnt    pickle.ID = -15
	entFirst pickle.ID = -16
)

// foldEnt is one entry of a folded run: where its key's embedding and its
// value's encoding are (one after the other), the key's length, and the
// value's ordinals; its key's bytes are in View.entKeys from key.
type foldEnt struct {
	off        int64
	klen, vlen int32
	word       int32
	key        int32
}

// isEnt reports whether n names an entry of a folded run.
func isEnt(n pickle.ID) bool { return n <= entFirst }

// entries appends to ks the entries of run n (numbered from *pos, in stream
// order), each keyed by an entry ID.
func (k *foldSink) entries(v *View, n pickle.ID, ks []keyed, pos *int) []keyed {
	off, ln, _, _ := v.s.FoldedRun(n)
	var r entReader
	if p := &k.sp; off >= p.flushed {
		// in memory (most runs: the rows of a table are folded whole
		// before their entries' runs are written out)
		k.mr.Reset(p.mem[off-p.flushed : off-p.flushed+int64(ln)])
		r = &k.mr
	} else {
		if k.br == nil {
			k.br = bufio.NewReaderSize(nil, 64<<10)
		}
		k.br.Reset(&spoolReader{p: p, off: off, end: off + int64(ln)})
		r = k.br
	}
	at := off
	for at < off+int64(ln) {
		kl, e1 := binary.ReadUvarint(r)
		vl, e2 := binary.ReadUvarint(r)
		w, e3 := binary.ReadUvarint(r)
		if e1 != nil || e2 != nil || e3 != nil || kl > 1<<30 || vl > 1<<30 {
			v.state().err = fmt.Errorf("reading back what pk spooled: a damaged entry at %d", at)
			return ks
		}
		at += int64(uvarintLen(kl) + uvarintLen(vl) + uvarintLen(w))
		start := len(v.entKeys)
		v.entKeys = slices.Grow(v.entKeys, int(kl))[:start+int(kl)]
		if _, err := io.ReadFull(r, v.entKeys[start:]); err != nil {
			v.state().err = fmt.Errorf("reading back what pk spooled: %v", err)
			return ks
		}
		if _, err := r.Discard(int(vl)); err != nil {
			v.state().err = fmt.Errorf("reading back what pk spooled: %v", err)
			return ks
		}
		v.ents = append(v.ents, foldEnt{off: at, klen: int32(kl), vlen: int32(vl), word: int32(w), key: int32(start)})
		ks = append(ks, keyed{node: entFirst - pickle.ID(len(v.ents)-1), val: noEnt, pos: *pos, vpos: *pos})
		*pos++
		at += int64(kl + vl)
	}
	return ks
}

// entReader is what entries reads a run with.
type entReader interface {
	io.ByteReader
	io.Reader
	Discard(n int) (int, error)
}

// byteDiscarder is a bytes.Reader that can skip.
type byteDiscarder struct{ bytes.Reader }

func (b *byteDiscarder) Discard(n int) (int, error) {
	if int64(n) > int64(b.Len()) {
		return 0, io.ErrUnexpectedEOF
	}
	_, err := b.Seek(int64(n), io.SeekCurrent)
	return n, err
}

// entKey returns the key's embedding of entry n (its sort key and its
// equality key: the key is a str or bytes).
func (v *View) entKey(n pickle.ID) []byte {
	f := &v.ents[entFirst-n]
	return v.entKeys[f.key : f.key+f.klen]
}

// emitEnt appends entry n's key and value to e's encoding.
func (k *foldSink) emitEnt(e *encoder, n pickle.ID) {
	f := &e.v.ents[entFirst-n]
	e.next += f.word
	k.emitRange(e, f.off, int64(f.klen)+int64(f.vlen))
}

func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

// spoolReader reads the spool's bytes [off, end).
type spoolReader struct {
	p        *spool
	off, end int64
}

func (r *spoolReader) Read(b []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.end-r.off)]
	p := r.p
	var n int
	if r.off >= p.flushed {
		n = copy(b, p.mem[r.off-p.flushed:])
	} else {
		var err error
		n, err = p.f.ReadAt(b[:min(int64(len(b)), p.flushed-r.off)], r.off)
		if n == 0 && err != nil {
			return 0, err
		}
	}
	r.off += int64(n)
	return n, nil
}

// EachStreamWrite reads a bare pickle file stream by stream through the
// canon sink for pk canon's writer (pkg/write), with every payload in
// memory, and gives fn each stream and its view before its digest is
// computed (fn computes it: View.Digest, then View.EffectRefs). fn makes
// the view by calling view, once: what only reads the stream's store may
// run beside that (the store is not written once the stream is read). The sink folds only
// the roots accept says the writer can write back from their encoding
// (Ref.FoldedItems and Ref.FoldedEntries read them at STOP), each pure
// tuple in them followed by its side items (appendItems): accept is to take
// only PlainEmbedding's forms with the digest's size, which the canonical
// encoding of a run reads them by (emitCanonical). ok
// is false where EachStream's would be, when the sink does not apply, and
// when fn returns an error (the caller then reads the file without it).
// The file may be compressed as a whole (input.EachStreamDecompressed:
// compression names it, "" for none): it is read as it is decompressed.
// No payload is read again from the file (every one is in memory), so the
// view has no file to read them from (BareOptions' source), whose offsets
// would not be a compressed file's.
func EachStreamWrite(path string, opt Options, accept func(enc []byte) bool, fn func(st *pickle.Stream, view func() *View) error) (file *pickle.File, compression string, ok bool) {
	opt.NoPaths = true
	k := newFoldSink(opt)
	if k == nil {
		return nil, "", false
	}
	k.accept, k.side = accept, true
	defer k.close()
	opt.fold = k
	ropt := ReadOptions(opt)
	ropt.Keep = k.keep()
	// the writer reads no node's Self nor owner (the view, its digest and
	// the writer's walk: NoPaths): the stores keep neither (8 bytes a node)
	ropt.Keep.Lean = true
	ropt.BlobThreshold = math.MaxInt64
	scr := &docScratch{}
	file, compression, ok = input.EachStreamDecompressed(path, ropt, input.Options{}, func(st *pickle.Stream) error {
		k.sp.release() // (the stream is read: its runs are read back only)
		err := fn(st, func() *View { return normalize(st, opt, scr) })
		k.sp.reset() // the stream is written
		k.sideRuns = k.sideRuns[:0]
		return err
	})
	return file, compression, ok
}

// FoldedItems returns, for a folded run (pickle.KindFolded) of a view
// EachStreamWrite gave, the number of items it stands for and a reader of
// their encodings (one embedding each, one after the other; valid until the
// view's fn returns). ok is false for any other node.
func (r Ref) FoldedItems() (items int, rd io.Reader, ok bool) {
	v := r.v
	if v == nil || r.id < 0 || r.id >= v.base || v.s.Kind(r.id) != pickle.KindFolded || v.Opt.fold == nil ||
		v.s.Flags(r.id)&pickle.FlagFoldEntries != 0 {
		return 0, nil, false
	}
	off, ln, items, _ := v.s.FoldedRun(r.id)
	return items, &spoolReader{p: &v.Opt.fold.sp, off: off, end: off + int64(ln)}, true
}

// FoldedEntries is Entries for a dict with folded runs of whole entries
// (pickle.FlagFoldEntries) in a view EachStreamWrite gave: the entries in
// canonical order, a folded entry as a Key that FoldedEntry reads and a
// nil Value. ok is false for a dict without such runs.
func (r Ref) FoldedEntries() (ents []RefEntry, ok bool) {
	v := r.v
	if v == nil || v.kind(r.id) != pickle.KindDict || v.flags(r.id)&pickle.FlagHasFolded == 0 || v.Opt.fold == nil {
		return nil, false
	}
	sc := v.getScratch()
	defer v.putScratch(sc)
	ks := v.dictEntries(r.id, sc)
	ents = make([]RefEntry, len(ks))
	for i, k := range ks {
		if isEnt(k.node) {
			ents[i] = RefEntry{Key: Ref{v: v, id: k.node}}
			continue
		}
		ents[i] = RefEntry{Key: v.ref(k.node), Value: v.ref(k.val)}
	}
	return ents, true
}

// FoldedEntry returns, for a Key FoldedEntries gave for a folded entry, a
// reader of the entry's key embedding followed by its value's encoding.
func (r Ref) FoldedEntry() (rd io.Reader, ok bool) {
	v := r.v
	if v == nil || !isEnt(r.id) || v.Opt.fold == nil || int(entFirst-r.id) >= len(v.ents) {
		return nil, false
	}
	f := &v.ents[entFirst-r.id]
	return &spoolReader{p: &v.Opt.fold.sp, off: f.off, end: f.off + int64(f.klen) + int64(f.vlen)}, true
}
