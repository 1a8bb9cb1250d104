package diff

// The fast path of Files for two pickles of plain data and objects.
//
// When both inputs are bare pickle files, plain or compressed, that the
// streaming hasher takes (plain data; globals, also read back from the
// memo; calls: REDUCE of a global no canonical-form rule rewrites, NEWOBJ,
// then BUILD, APPEND(S), SETITEM(S), ADDITEMS on the call result; no POP,
// DUP or GET of a mutable object, one stream, nothing but the result left
// on the stack, no trailing bytes), Files does not build the graphs:
//
//   - canon.ScanItems and ItemScan.Items hash each file in the streaming
//     hasher's two passes (the two files at once when both results are
//     lists, else one after the other: other results are held whole) and,
//     when the result is a list or a dict, or an object (a call) whose one
//     operation is a BUILD with a dict state, record each item (entry,
//     attribute) with a fingerprint of its canonical encoding and the byte
//     range that builds it;
//   - equal digests: the Result the graph path gives for plain data (the
//     reasons counted by the passes);
//   - otherwise level compares the items as compare does: a list's by
//     fingerprint exactly as seq aligns them by digest, a dict's entries
//     matched by key as entries2 matches them, an object's attributes as
//     call and opsDiff compare them when the callable and arguments are
//     the same on both sides and every key is a str (else the graph path). The items that differ (at
//     most maxFastItems in all) are parsed with the machine's range mode
//     (pickle.ParseSpans: their ranges, after the ranges that set the memo
//     entries they read) and walked by the graph path's walk from the same
//     paths and depths; additions and removals are rendered from their
//     parsed nodes. A differing item that is a list or dict of
//     canon.BigItemMin bytes or more on both sides is not parsed: another
//     pass over both files records its items, and level compares them.
//
// Anything else (--ignore, stdin, containers, a result that is not a list,
// dict or such an object, results of different kinds, more than maxFastItems differing items,
// any error) goes to the graph path, so the Result is the same either way
// (TestFastDiffCorpus, TestFastDiffFixtures, TestFastDiffGenerated,
// TestFastDiffObjects, TestFastDiffNested, FuzzFastDiff).

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// maxFastDepth bounds how deep the fast path descends into large items:
// each level is one more streaming pass over both files (a million nested
// lists, each level over 1 MiB, would cost a pass per level); deeper, the
// graph path does the diff, in time linear in the depth.
const maxFastDepth = 4

// maxFastItems bounds the differing items the fast path parses or
// descends into; past it the graph path does the diff.
const maxFastItems = 10000

// fastMaxStack: a file whose stack pass 1 saw this deep (values and
// MARKs at once) is left to the other paths. Pass 2 holds a record for
// each open value, and a nesting that deep is descended maxFastDepth
// levels at most before the graph path does the diff anyway; the sink
// path (eachFiles) reads it in about half the memory (a million nested
// lists against themselves: 276 -> 146 MB, a ring of a million dicts
// 508 -> 239 MB, a tuple of a million ints 284 -> 135 MB).
const fastMaxStack = 1 << 16

// noFast turns the fast path and eachFiles off, noLockstep the lockstep
// of two large lists' passes (tests compare both ways).
var noFast, noLockstep bool

// fastDescents counts the passes over a large item (tests).
var fastDescents int

// fastFiles is Files for two pickles the streaming hasher takes; ok is
// false when the graph path must do it.
func fastFiles(a, b string, opt Options) (*Result, bool) {
	if noFast || len(opt.Ignore) > 0 || input.ReadOnce(a) || input.ReadOnce(b) {
		return nil, false
	}
	fa, fb, ok := fastItems(a, b, opt)
	if !ok {
		return nil, false
	}
	r := &Result{A: a, B: b, DigestA: fa.Result.Digest, DigestB: fb.Result.Digest}
	if r.DigestA == r.DigestB {
		r.Same = true
		r.Reasons = fastReasons(fa, fb, opt.Canon.KeepDictOrder)
		r.BytesEqual, r.bytesKnown = sameBytes(a, b)
		return r, true
	}
	x := &fastCmp{c: &cmp{opt: opt}}
	x.c.reset()
	if err := x.level(fa, fb, ppath.Root, 0); err != nil {
		return nil, false
	}
	r.Entries = x.c.entries
	if len(r.Entries) == 0 {
		r.Entries = append(r.Entries, unplaced(r.DigestA, r.DigestB))
	}
	return r, true
}

// fastTried reports whether fastFiles read the files (and was refused).
func fastTried(a, b string, opt Options) bool {
	return !noFast && len(opt.Ignore) == 0 && !input.ReadOnce(a) && !input.ReadOnce(b)
}

// fastItems runs canon's streaming passes over both files: pass 1 at the
// same time; pass 2 at the same time only for list results of many items
// (parallelItems), else one file after the other.
func fastItems(a, b string, opt Options) (fa, fb *canon.FastItems, ok bool) {
	var sa, sb *canon.ItemScan
	okA, okB := both(func() (ok bool) {
		sa, ok = canon.ScanItems(a, opt.Canon)
		return ok
	}, func() (ok bool) {
		sb, ok = canon.ScanItems(b, opt.Canon)
		return ok
	}, true)
	if !okA || !okB || sa.Depth() >= fastMaxStack || sb.Depth() >= fastMaxStack {
		return nil, nil, false
	}
	parallel := parallelItems(sa) && parallelItems(sb)
	var l *canon.Lockstep // (nil: each pass alone)
	if parallel && !noLockstep {
		l = canon.NewLockstep()
	}
	okA, okB = both(func() (ok bool) {
		fa, ok = sa.ItemsLockstep(l, 0)
		return ok
	}, func() (ok bool) {
		fb, ok = sb.ItemsLockstep(l, 1)
		return ok
	}, parallel)
	return fa, fb, okA && okB
}

// parallelItems reports whether pass 2 over s may run beside the other
// file's: a list result of many items, hashed as they come, so that the
// two passes hold little. Any other result, or a list of a few items that
// hold the file (a million nested lists), holds what it reads until its
// item ends: the files are then read one after the other, and the second
// not at all when the first is not taken (a million-level list against
// itself: 525 -> 339 MB).
func parallelItems(s *canon.ItemScan) bool {
	return s.ListResult() && s.ListLen() >= parallelMinItems
}

// parallelMinItems is the item count from which a list result's pass 2
// runs beside the other file's.
const parallelMinItems = 1024

// both runs f and g, at the same time when parallel, and returns their
// results (g is not run when f fails and they run in turn).
func both(f, g func() bool, parallel bool) (bool, bool) {
	if !parallel {
		if !f() {
			return false, false
		}
		collect()
		return true, g()
	}
	var okG bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		okG = g()
	}()
	okF := f()
	wg.Wait()
	return okF, okG
}

// fastReasons is reasons for two pickles the streaming hasher takes: no
// rule of the canonical form applies to them (it refuses the calls rules
// rewrite); sets and dicts (also BUILD states) as counted by the passes.
func fastReasons(fa, fb *canon.FastItems, keepDictOrder bool) []Reason {
	protos := 1
	if fa.Proto != fb.Proto {
		protos = 2
	}
	return formReasons(nil, fa.Sets+fb.Sets, fa.Dicts+fb.Dicts, protos, keepDictOrder)
}

type fastCmp struct {
	c     *cmp
	items int // items parsed or descended into so far (maxFastItems)
}

var errFast = fmt.Errorf("not for the fast path")

// kid is a pair of differing items to compare after the level's own
// entries: parsed nodes (task), or two large containers to descend into
// (another pass over both files records their items).
type kid struct {
	t          task
	ta, tb     *fpTable // the fingerprints of the views t's nodes are of
	descend    bool
	bigA, bigB canon.BigItem // descend: the containers
	kind       byte
	path       string
	depth      int
}

// level compares the items of two lists or dicts (fa and fb, at path,
// depth as the walk counts it) as compare does with seq or entries2.
func (x *fastCmp) level(fa, fb *canon.FastItems, path string, depth int) error {
	if fa.Root == 0 || fa.Root != fb.Root || !fa.Spans || !fb.Spans || depth+1 >= maxFastDepth {
		return errFast
	}
	var kids []kid
	var err error
	switch fa.Root {
	case 'l':
		kids, err = x.list(fa, fb, path, depth)
	case 'd':
		kids, err = x.dict(fa, fb, path, depth, keyEdge)
	case 'o':
		// an object: the same callable and arguments, one BUILD of a dict
		// of str keys on each side, compared attribute by attribute as
		// call and opsDiff compare them
		if fa.Head != fb.Head || !strKeys(fa) || !strKeys(fb) {
			return errFast
		}
		kids, err = x.dict(fa, fb, path, depth, attrEdge)
	default:
		return errFast
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if !k.descend {
			x.c.ta, x.c.tb = k.ta, k.tb
			x.c.walkFrom(k.t)
			continue
		}
		var ga, gb *canon.FastItems
		var l *canon.Lockstep
		if k.kind == 'l' && !noLockstep {
			l = canon.NewLockstep() // (the two passes run at once: both)
		}
		okA, okB := both(func() bool {
			var ok bool
			ga, ok = fa.Scan.BigItemsLockstep(k.bigA, l, 0)
			return ok
		}, func() bool {
			var ok bool
			gb, ok = fb.Scan.BigItemsLockstep(k.bigB, l, 1)
			return ok
		}, true)
		if !okA || !okB || ga.Root != k.kind || gb.Root != k.kind {
			return errFast
		}
		fastDescents++
		if err := x.level(ga, gb, k.path, k.depth); err != nil {
			return err
		}
	}
	return nil
}

// descend reports whether items i of fa and j of fb (at depth) are large
// containers of one kind, compared by another pass rather than parsed.
// Below the result, a container of one item is not descended through: its
// item is nearly all of it, so another pass would read the same bytes
// again for every level of a nesting (a million nested lists); the item
// is parsed instead. (The result's only item, {'rows': [...]}, is.)
func descend(fa, fb *canon.FastItems, i, j, depth int) (canon.BigItem, canon.BigItem, bool) {
	if depth > 0 && fa.Len() < 2 && fb.Len() < 2 {
		return canon.BigItem{}, canon.BigItem{}, false
	}
	ba, okA := fa.Big[i]
	bb, okB := fb.Big[j]
	return ba, bb, okA && okB && ba.Kind == bb.Kind
}

// list compares two lists as seq does: entries for items added and
// removed, then the kids for items changed in place.
func (x *fastCmp) list(fa, fb *canon.FastItems, path string, depth int) ([]kid, error) {
	na, nb := fa.Len(), fb.Len()
	// Align's common prefix and suffix, on the fingerprints in place (the
	// prefix from the items both passes kept: those before are the same,
	// canon.Lockstep)
	p := max(fa.Base(), fb.Base())
	for p < na && p < nb && fa.Sum(p) == fb.Sum(p) {
		p++
	}
	s := 0
	for s < na-p && s < nb-p && fa.Sum(na-1-s) == fb.Sum(nb-1-s) {
		s++
	}
	if na-p-s+nb-p-s > 1<<22 {
		return nil, errFast
	}
	// runs as seq reports them (AlignRuns on the fingerprints in place):
	// a run needs its first and last items only
	ma, mb := fa.SumsIn(p, na-s), fb.SumsIn(p, nb-s)
	runs := AlignRunsKeyed(len(ma), len(mb), func(i, j int) bool { return ma[i] == mb[j] }, func(side byte, i int) ([16]byte, bool) {
		if side == 'a' {
			return ma[i], true
		}
		return mb[i], true
	}, false)
	for k := range runs {
		if runs[k].A >= 0 {
			runs[k].A += p
		}
		if runs[k].B >= 0 {
			runs[k].B += p
		}
	}
	var needA, needB []int
	for _, r := range runs {
		if r.N > 1 {
			// a run's first and last items; of a run changed in place,
			// the first pair (compared, unless large: then descended
			// into) and the rest's first
			if r.Kind == '~' {
				if _, _, big := descend(fa, fb, r.A, r.B, depth); !big {
					needA, needB = append(needA, r.A), append(needB, r.B)
				}
				needA, needB = append(needA, r.A+1), append(needB, r.B+1)
			}
			if r.A >= 0 {
				needA = append(needA, r.A, r.A+r.N-1)
			}
			if r.B >= 0 {
				needB = append(needB, r.B, r.B+r.N-1)
			}
		} else if _, _, big := descend(fa, fb, r.A, r.B, depth); !(r.Kind == '~' && big) {
			if r.A >= 0 {
				needA = append(needA, r.A)
			}
			if r.B >= 0 {
				needB = append(needB, r.B)
			}
		}
		if x.items += 1; x.items > maxFastItems {
			return nil, errFast
		}
	}
	slices.Sort(needA)
	slices.Sort(needB)
	nodesA, tabA, err := parseItems(fa, needA, 1, x.c.opt.Canon)
	if err != nil {
		return nil, err
	}
	nodesB, tabB, err := parseItems(fb, needB, 1, x.c.opt.Canon)
	if err != nil {
		return nil, err
	}
	c := x.c
	var kids []kid
	for _, r := range runs {
		if r.N > 1 {
			item := func(side byte, i int) *canon.Node {
				if side == 'a' {
					return nodesA[i][0]
				}
				return nodesB[i][0]
			}
			if r.Kind != '~' {
				c.add(c.runEntryOf(path, itemsForm, r, item))
				continue
			}
			// as seq: the first pair compared, then the rest as one entry
			kp := path + index(r.B)
			if ba, bb, big := descend(fa, fb, r.A, r.B, depth); big {
				kids = append(kids, kid{descend: true, bigA: ba, bigB: bb, kind: ba.Kind, path: kp, depth: depth + 1})
			} else {
				kids = append(kids, kid{t: task{a: nodesA[r.A][0], b: nodesB[r.B][0], path: x.c.paths.root(kp), differ: true, depth: depth + 1}, ta: tabA, tb: tabB})
			}
			e := c.runEntryOf(path, itemsForm, restRun(r), item)
			kids = append(kids, kid{t: task{entry: &e}})
			continue
		}
		o := EditOp{Kind: r.Kind, A: r.A, B: r.B}
		switch o.Kind {
		case '-':
			n := nodesA[o.A][0]
			c.add(Entry{Path: path + index(o.A), Kind: Removed, A: c.short(n), ValA: typed(n), SizeA: c.size(n, true), OffA: n.Offset()})
		case '+':
			n := nodesB[o.B][0]
			c.add(Entry{Path: path + index(o.B), Kind: Added, B: c.short(n), ValB: typed(n), SizeB: c.size(n, false), OffB: n.Offset()})
		case '~':
			kp := path + index(o.B)
			if ba, bb, big := descend(fa, fb, o.A, o.B, depth); big {
				kids = append(kids, kid{descend: true, bigA: ba, bigB: bb, kind: ba.Kind, path: kp, depth: depth + 1})
				continue
			}
			kids = append(kids, kid{t: task{a: nodesA[o.A][0], b: nodesB[o.B][0], path: x.c.paths.root(kp), differ: true, depth: depth + 1}, ta: tabA, tb: tabB})
		}
	}
	return kids, nil
}

// strKeys reports whether every key of f's entries is a str (its
// canonical encoding starts 's' or 'S'), as attrDict wants them.
func strKeys(f *canon.FastItems) bool {
	for i := range f.Len() {
		if k := f.Key(i); len(k) == 0 || k[0] != 's' && k[0] != 'S' {
			return false
		}
	}
	return true
}

// dict compares two dicts as entries2 does: A's entries in canonical
// order (removed, or compared when the values differ), then B's entries A
// does not have; edge names an entry by its key (keyEdge, or attrEdge for
// the attributes of an object).
func (x *fastCmp) dict(fa, fb *canon.FastItems, path string, depth int, edge func(int, *canon.Node) string) ([]kid, error) {
	keep := x.c.opt.Canon.KeepDictOrder
	byKey := func(f *canon.FastItems) []int32 {
		out := make([]int32, f.Len())
		for i := range out {
			out[i] = int32(i)
		}
		slices.SortStableFunc(out, func(i, j int32) int { return bytes.Compare(f.Key(int(i)), f.Key(int(j))) })
		return out
	}
	sa, sb := byKey(fa), byKey(fb)
	matchA := make([]int32, fa.Len())
	matchedB := make([]bool, fb.Len())
	for i, j := 0, 0; i < len(sa); i++ {
		ka := fa.Key(int(sa[i]))
		for j < len(sb) && bytes.Compare(fb.Key(int(sb[j])), ka) < 0 {
			j++
		}
		matchA[sa[i]] = -1
		if j < len(sb) && bytes.Equal(fb.Key(int(sb[j])), ka) {
			matchA[sa[i]] = sb[j]
			matchedB[sb[j]] = true
		}
	}
	orderA, orderB := sa, sb
	if keep {
		orderA, orderB = nil, nil
		last := int32(-1)
		for i := range fa.Len() {
			orderA = append(orderA, int32(i))
			if j := matchA[i]; j >= 0 {
				if j < last {
					// the keys both have in another order: the graph
					// path's entries2 says so (orderEntry)
					return nil, errFast
				}
				last = j
			}
		}
		for j := range fb.Len() {
			orderB = append(orderB, int32(j))
		}
	}
	var needA, needB, bigA []int
	for _, i := range orderA {
		j := matchA[i]
		switch {
		case j < 0:
			needA = append(needA, int(i))
		case fa.Sum(int(i)) == fb.Sum(int(j)):
			continue
		default:
			if _, _, big := descend(fa, fb, int(i), int(j), depth); big {
				bigA = append(bigA, int(i)) // its key alone gives the path
			} else {
				needA = append(needA, int(i))
				needB = append(needB, int(j))
			}
		}
		if x.items += 1; x.items > maxFastItems {
			return nil, errFast
		}
	}
	for _, j := range orderB {
		if !matchedB[j] {
			needB = append(needB, int(j))
			if x.items += 1; x.items > maxFastItems {
				return nil, errFast
			}
		}
	}
	slices.Sort(needA)
	slices.Sort(needB)
	slices.Sort(bigA)
	nodesA, tabA, err := parseItems(fa, needA, 2, x.c.opt.Canon)
	if err != nil {
		return nil, err
	}
	nodesB, tabB, err := parseItems(fb, needB, 2, x.c.opt.Canon)
	if err != nil {
		return nil, err
	}
	var keySpans []pickle.Span
	for _, i := range bigA {
		sp := fa.Span(i)
		sp.End = fa.Big[i].Start // (the key's range: up to the value's)
		keySpans = append(keySpans, sp)
	}
	keys, _, err := parseSpans(fa, keySpans, 1, x.c.opt.Canon)
	if err != nil {
		return nil, err
	}
	keysA := map[int]*canon.Node{}
	for k, i := range bigA {
		keysA[i] = keys[k][0]
	}
	// an entry whose key is no literal is numbered by its place in the
	// pickle (canon.Entry.Pos), i and j here
	c := x.c
	var kids []kid
	for _, i := range orderA {
		j := matchA[i]
		switch {
		case j < 0:
			e := nodesA[int(i)]
			c.add(Entry{Path: path + edge(int(i), e[0]), Kind: Removed, A: c.short(e[1]), ValA: typed(e[1]), SizeA: c.size(e[1], true), OffA: e[1].Offset()})
		case fa.Sum(int(i)) != fb.Sum(int(j)):
			if ba, bb, big := descend(fa, fb, int(i), int(j), depth); big {
				kids = append(kids, kid{descend: true, bigA: ba, bigB: bb, kind: ba.Kind, path: path + edge(int(j), keysA[int(i)]), depth: depth + 1})
				continue
			}
			e := nodesA[int(i)]
			kids = append(kids, kid{t: task{a: e[1], b: nodesB[int(j)][1], path: x.c.paths.root(path + edge(int(j), e[0])), depth: depth + 1}, ta: tabA, tb: tabB})
		}
	}
	for _, j := range orderB {
		if !matchedB[j] {
			e := nodesB[int(j)]
			c.add(Entry{Path: path + edge(int(j), e[0]), Kind: Added, B: c.short(e[1]), ValB: typed(e[1]), SizeB: c.size(e[1], false), OffB: e[1].Offset()})
		}
	}
	return kids, nil
}

// parseItems parses items idx (ascending) of f with the machine's range
// mode and returns their view nodes (per item: the value, or key and
// value), as the graph path's view would show them, and the fingerprints
// of that view.
func parseItems(f *canon.FastItems, idx []int, per int, copt canon.Options) (map[int][]*canon.Node, *fpTable, error) {
	out := map[int][]*canon.Node{}
	if len(idx) == 0 {
		return out, nil, nil
	}
	idx = slices.Compact(idx)
	var spans []pickle.Span
	for _, i := range idx {
		spans = append(spans, f.Span(i))
	}
	nodes, tab, err := parseSpans(f, spans, per, copt)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range idx {
		out[i] = nodes[k]
	}
	return out, tab, nil
}

// parseSpans parses spans (Keep, in file order, each leaving per values)
// of f with the machine's range mode, after the ranges that set the memo
// entries they read, and returns their view nodes, as the graph path's
// view would show them, and the fingerprints of that view.
func parseSpans(f *canon.FastItems, want []pickle.Span, per int, copt canon.Options) ([][]*canon.Node, *fpTable, error) {
	if len(want) == 0 {
		return nil, nil, nil
	}
	st, vals, err := f.Parse(want, canon.ReadOptions(copt))
	if err != nil {
		return nil, nil, err
	}
	if len(vals) != len(want) {
		return nil, nil, errFast
	}
	items := make([]pickle.ID, 0, per*len(want))
	for _, v := range vals {
		if len(v) != per {
			return nil, nil, errFast
		}
		items = append(items, v...)
	}
	// one list added to the stream's store holds them all, so one view
	// wraps them
	s := st.Store()
	root := s.Add(pickle.KindList, 0, 0)
	s.SetItems(root, items)
	s.Root = root
	view := canon.Normalize(st, copt)
	vroot := view.Root()
	nodes := vroot.Items()
	out := make([][]*canon.Node, len(want))
	for k := range want {
		out[k] = nodes[per*k : per*k+per]
	}
	return out, newFPTable(copt.Algo, vroot), nil
}
