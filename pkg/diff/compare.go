// Package diff owns pk diff: whether two pickles are the same thing under
// the canonical form of pkg/canon (the verdict is exactly "their digests are
// equal"), and, when they are not, where they differ, as entries with
// Python-style paths. It also owns the opcode-level --raw listing diff.
package diff

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pk-tools/pk/pkg/array"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/dis"
	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/zeebo/xxh3"
)

// Options tune a diff.
type Options struct {
	Canon canon.Options
	// Ignore leaves out the subtrees at these paths and below them
	// (pkg/path's grammar, e.g. "root['timestamp']"; ParseIgnore checks
	// them).
	Ignore []string
	// Input tunes how containers are opened.
	Input input.Options
	// Detail, when above 0, is how many entries are kept whole: the ones
	// after it keep their kind and the head of their path (its first
	// edges, enough for TopPath and --stat) and are marked Elided. pk diff
	// sets it to --max, so that the differences it only counts cost their
	// path's head, not its depth: a nesting that differs at every level
	// made a path string of every depth, n²/2 bytes (40,000 levels: 3 GB).
	// Without effect with Ignore, which matches whole paths.
	Detail int
}

// InputError is a failure to read one side; Side is 'a' or 'b'.
type InputError struct {
	Side byte
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Files compares the inputs at paths a and b.
func Files(a, b string, opt Options) (*Result, error) {
	if r, ok := spooledFiles(a, b, opt); ok {
		return r, nil
	}
	return files(a, b, opt)
}

// spooledFiles compares a and b when one of them or both are a bare pickle
// under one layer of compression: each such side is decompressed once into
// a temporary file (input.SpoolDecompressed), which the paths for bare
// files read as they read a bare file (the fast path, the stream-by-stream
// path: input.Open kept a store for each stream of a compressed side, and
// the whole store of its one stream). The result is the one the inputs
// give read through input.Open (the same digests, entries and offsets: the
// decompressed stream's), with the user's names and whether the files
// themselves are byte for byte equal. ok is false when no side spools, or
// on any error: Files then reads the inputs as it did, and reports the
// error in input's words.
func spooledFiles(a, b string, opt Options) (*Result, bool) {
	sa, oka := input.SpoolDecompressed(a, opt.Input)
	defer sa.Close()
	sb, okb := sa, oka
	if b != a {
		sb, okb = input.SpoolDecompressed(b, opt.Input)
		defer sb.Close()
	}
	if !oka && !okb {
		return nil, false
	}
	pa, pb := a, b
	if oka {
		pa = sa.Path()
	}
	if okb {
		pb = sb.Path()
	}
	r, err := files(pa, pb, opt)
	if err != nil {
		return nil, false
	}
	r.A, r.B = a, b
	if r.Same {
		r.BytesEqual, r.bytesKnown = sameBytes(a, b)
	}
	return r, true
}

// files is Files without the spools.
func files(a, b string, opt Options) (*Result, error) {
	if r, ok := fastFiles(a, b, opt); ok {
		return r, nil
	}
	if fastTried(a, b, opt) {
		collect() // (what the fast path's passes made is garbage)
	}
	if r, ok := eachFiles(a, b, opt); ok {
		return release(r), nil
	}
	// One input at a time while the digests decide: A is hashed and, when
	// it can be opened again (not stdin or a pipe: input.ReadOnce),
	// dropped before B is opened, so that two equal inputs never hold both
	// stores. Only when they differ is A opened again for the comparison.
	ropt := canon.ReadOptions(opt.Canon)
	da, err := input.OpenWith(a, ropt, opt.Input)
	if err != nil {
		return nil, &InputError{'a', err}
	}
	ha, err := canon.HashDoc(da, opt.Canon)
	if err != nil {
		return nil, &InputError{'a', err}
	}
	ca := censusOf(da)
	if !input.ReadOnce(a) {
		da = nil
	}
	db, err := input.OpenWith(b, ropt, opt.Input)
	if err != nil {
		return nil, &InputError{'b', err}
	}
	hb, err := canon.HashDoc(db, opt.Canon)
	if err != nil {
		return nil, &InputError{'b', err}
	}
	if da == nil && ha.Digest != hb.Digest {
		if da, err = input.OpenWith(a, ropt, opt.Input); err != nil {
			return nil, &InputError{'a', err}
		}
	}
	r := compareDocs(a, db, da, ha, hb, ca, censusOf(db), opt)
	if r.Same {
		r.BytesEqual, r.bytesKnown = sameBytes(a, b)
	}
	return release(r), nil
}

// release is r, once the garbage of a walk of views of bigWalk nodes or
// more is collected and its memory returned: what the walk held (the two
// stores, their fingerprint tables, its paths) is all garbage when Files
// returns, and the report of r would otherwise grow the heap on top of
// it, at cmd's pace (nest_reduce diff changed: 340 MB live at the walk's
// end, then 57 MB for the report of a path a million levels long).
func release(r *Result) *Result {
	if r.big {
		collect()
	}
	return r
}

// sameBytes reports whether the files a and b hold the same bytes, and
// whether that can be told: only of two regular files. A pipe or a device
// (/dev/fd/N, <(...)) was read to its end by the comparison, and stdin too:
// opened again it reads as empty, and two of them would pass for
// identical. It reads the files in pieces of sameChunk.
func sameBytes(a, b string) (same, known bool) {
	if !regular(a) || !regular(b) {
		return false, false
	}
	fa, err := os.Open(a)
	if err != nil {
		return false, true
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, true
	}
	defer fb.Close()
	sa, _ := fa.Stat()
	sb, _ := fb.Stat()
	if sa == nil || sb == nil || sa.Size() != sb.Size() {
		return false, true
	}
	ba, bb := make([]byte, sameChunk), make([]byte, sameChunk)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, _ := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, true
		}
		if ea != nil {
			return true, true
		}
	}
}

// sameChunk is what sameBytes reads of each file at a time. pk diff
// compares the bytes right after it hashed A, whose store is garbage not
// yet collected: two buffers of 1 MB were fresh pages on top of it, the
// peak of pk diff of two cloudpickle states (1.3 MB over the hashing of
// either; collected first, the buffers landed in pages the store's record
// array had had backed by huge pages, which the kernel gave them whole,
// 2 MB a touch). At 64 KB a 5 MB file is 80 reads.
const sameChunk = 64 << 10

// Docs compares two opened inputs.
func Docs(da, db *input.Doc, opt Options) (*Result, error) {
	ha, err := canon.HashDoc(da, opt.Canon)
	if err != nil {
		return nil, &InputError{'a', err}
	}
	hb, err := canon.HashDoc(db, opt.Canon)
	if err != nil {
		return nil, &InputError{'b', err}
	}
	return compareDocs(da.Path, db, da, ha, hb, censusOf(da), censusOf(db), opt), nil
}

// compareDocs gives the result of two hashed inputs: the reasons when their
// digests are equal (da may then be nil), else the entries.
func compareDocs(pathA string, db, da *input.Doc, ha, hb *canon.Result, ca, cb census, opt Options) *Result {
	opt.Ignore = CanonicalIgnores(opt.Ignore)
	r := &Result{A: pathA, B: db.Path, DigestA: ha.Digest, DigestB: hb.Digest}
	if ha.Digest == hb.Digest {
		r.Same = true
		r.Reasons = reasons(ca, cb, ha, hb, opt.Canon.KeepDictOrder)
		r.Unmatched = unmatched(opt, make([]bool, len(opt.Ignore)), db)
		return r
	}
	c := locate(opt, hasArrays(ha) || hasArrays(hb), func(c *cmp) { c.docs(da, db) })
	r.Entries, r.big = c.entries, c.big
	r.Unmatched = unmatched(opt, c.hit, da, db)
	if len(r.Entries) == 0 && c.ignored == 0 {
		r.Entries = append(r.Entries, unplaced(ha.Digest, hb.Digest))
	}
	if len(opt.Ignore) > 0 && len(r.Entries) == 0 {
		r.Same = true
		r.Reasons = append(r.Reasons, Reason{Rule: "ignored paths", Count: c.ignored})
	}
	return r
}

// unplaced is the entry of two inputs whose digests differ where no entry
// located it (an object-sharing pattern inside equal subtrees, say): pk
// diff never reports "0 differences".
func unplaced(digestA, digestB string) Entry {
	return Entry{NoOffset: true, Path: ppath.Root, Kind: Changed, A: digestA, B: digestB, Note: "the canonical forms differ (object sharing or an order pk diff could not place)"}
}

// locate runs walk, the comparison of two inputs whose digests differ,
// and returns what it found. The digests (pk hash's form, pk-canon/2 by
// default) decide whether the inputs are the same. The differences are
// located on pk-canon/1's view, whose parts, tensors and arrays pk diff
// names in its users' terms (element counts of storages and arrays), unless
// pk-canon/2's view locates them in at most half as many entries: a
// difference only it sees (the order of enum members), or one array
// changed between two forms of writing arrays, which pk-canon/1 lists as
// the forms' differences.
//
// arrays says pk-canon/2 read numpy arrays in an input (hasArrays): its view
// then names their elements (root['w'][3, 7]) where pk-canon/1's sees the
// bytes of their state, and is taken when it gives no more entries.
func locate(opt Options, arrays bool, walk func(c *cmp)) *cmp {
	detail := opt
	detail.Canon.Form = canon.Form1
	c := &cmp{opt: detail, hit: make([]bool, len(opt.Ignore)), alike: true}
	walk(c)
	withArrays := opt.Canon.Form != canon.Form1 && arrays && !hasElems(c.entries)
	// (views of every pair alike in both forms: the second walk would
	// give what the first gave; decided only when it would be made)
	again := c.err == nil && (len(c.entries) != 1 || withArrays || c.ignored > 0) && opt.Canon.Form != canon.Form1
	if again {
		c.settleAlike()
	}
	c.alikeA, c.alikeB = nil, nil
	alike := c.alike && c.formA.Form == opt.Canon.Form && c.formB.Form == opt.Canon.Form && !arrays
	if again && !alike {
		c2 := &cmp{opt: opt, hit: make([]bool, len(opt.Ignore))}
		walk(c2)
		// (with --ignore, the form that decides "the same" decides what is
		// left: a pk-canon/2 walk whose differences are all ignored leaves
		// none, whatever pk-canon/1's view of two forms of one checkpoint
		// lists)
		if c2.err == nil && (len(c.entries) == 0 || len(c2.entries) > 0 && 2*len(c2.entries) <= len(c.entries) ||
			c2.ignored > 0 && len(c2.entries) < len(c.entries) ||
			withArrays && len(c2.entries)+c2.ignored > 0 && len(c2.entries)+c2.ignored <= len(c.entries)) {
			// (entries that --ignore covers count: an element or cell
			// path ignored leaves no difference, not pk-canon/1's bytes)
			c = c2
		}
	}
	return c
}

// hasArrays reports whether pk-canon/2 read numpy arrays in an input (torch
// storages are named at their tensors on pk-canon/1's view: heldPath).
func hasArrays(r *canon.Result) bool {
	for _, a := range r.Applied {
		switch a.Rule {
		case canon.RuleNumpyReconstruct, canon.RuleNumpyFrombuffer, canon.RuleJoblibArray, canon.RuleTorchFromBytes:
			return true
		}
	}
	return false
}

// hasElems reports whether an entry names an element of an array.
func hasElems(es []Entry) bool {
	for i := range es {
		if es[i].Elem != nil {
			return true
		}
	}
	return false
}

// census is what the reasons of an equal pair need of each input: its sets
// of more than one item and dicts of more than one entry, its protocols.
type census struct {
	sets, dicts int
	protos      map[int]bool
	folded      bool // a store held folded runs or a shared None (it cannot be walked)
	nodes       int  // the nodes counted (released ones too)
}

func censusOf(d *input.Doc) census {
	c := census{protos: map[int]bool{}}
	for _, p := range d.Parts {
		if p.Pickle == nil {
			continue
		}
		for _, s := range p.Pickle.Streams {
			c.add(s)
		}
	}
	return c
}

// add counts stream s.
func (c *census) add(s *pickle.Stream) {
	c.protos[s.Proto] = true
	ss := s.Store()
	for i := 0; i < ss.Len(); i++ {
		c.node(ss, pickle.ID(i))
	}
}

// entries is the number of entries of dict id: its key-value pairs and
// the entries of its folded runs.
func entries(s *pickle.Store, id pickle.ID) int {
	if !s.Has(id, pickle.FlagHasFolded) {
		return s.NItems(id) / 2
	}
	n, items := 0, s.Items(id)
	for i := 0; i < len(items); {
		if c := items[i]; c >= 0 && s.Kind(c) == pickle.KindFolded && s.Has(c, pickle.FlagFoldEntries) {
			_, _, k, _ := s.FoldedRun(c)
			n, i = n+k, i+1
			continue
		}
		n, i = n+1, i+2
	}
	return n
}

// node counts node id of store s. A store read through the canon sink
// (canon.EachStreamFolded) gives it, besides what is left at STOP, each
// node it released.
func (c *census) node(s *pickle.Store, id pickle.ID) {
	c.nodes++
	switch s.Kind(id) {
	case pickle.KindSet, pickle.KindFrozenSet:
		if s.NItems(id) > 1 {
			c.sets++
		}
	case pickle.KindDict:
		if entries(s, id) > 1 {
			c.dicts++
		}
	case pickle.KindFolded:
		c.folded = true
	case pickle.KindNone:
		// one None named for all (pickle.Keep.OneNone), or one a GET
		// named again: the walk reads the stream again, as it was written
		c.folded = c.folded || s.Has(id, pickle.FlagShared)
	}
}

// reasons says which normalisations made two byte-different inputs equal.
func reasons(ca, cb census, ha, hb *canon.Result, keepDictOrder bool) []Reason {
	count := map[string]int{}
	for _, res := range []*canon.Result{ha, hb} {
		for _, a := range res.Applied {
			count[a.Rule] += a.Count
		}
	}
	protos := map[int]bool{}
	for p := range ca.protos {
		protos[p] = true
	}
	for p := range cb.protos {
		protos[p] = true
	}
	var out []Reason
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, Reason{Rule: k, Count: count[k]})
	}
	return formReasons(out, ca.sets+cb.sets, ca.dicts+cb.dicts, len(protos), keepDictOrder)
}

// formReasons appends the reasons every pair of equal pickles shares: sets
// (of more than one item) and dicts (of more than one entry) sorted,
// protocols (the number of distinct ones), memo numbering and framing.
func formReasons(out []Reason, sets, dicts, protos int, keepDictOrder bool) []Reason {
	if sets > 0 {
		out = append(out, Reason{Rule: "sets sorted", Count: sets})
	}
	if dicts > 0 && !keepDictOrder {
		out = append(out, Reason{Rule: "dicts sorted", Count: dicts})
	}
	if protos > 1 {
		out = append(out, Reason{Rule: "protocol forms", Count: protos})
	}
	return append(out, Reason{Rule: "memo numbering and framing", Count: 1})
}

type cmp struct {
	opt     Options
	entries []Entry
	ignored int
	hit     []bool // which of opt.Ignore matched something
	// first paths of identity nodes, per side
	seenA, seenB   *seenPaths // by the node's ID in its view
	pairs          *pairSet   // the pairs compared
	paths          pathTable
	ta, tb         *fpTable // the fingerprints of the walk's two views
	docA, docB     *input.Doc
	cross          bool              // a torch zip against a legacy torch file (crossStorage)
	bareA, bareB   bool              // a torch file that hashes as a bare pickle (asPickle)
	storeA, storeB *pickle.Store     // the stores of the two streams walked
	optA, optB     canon.Options     // with what each whole input tells (canon.DocOptions)
	tensorsA       map[string]string // tensorPaths of each side, made when first needed
	tensorsB       map[string]string
	tensorRefA     map[string]*input.TensorRef // the tensor at each of those paths, by storage key
	tensorRefB     map[string]*input.TensorRef
	err            error                // a stream that could not be read again (eachFiles)
	skip           map[pickle.ID]bool   // side A's frame blocks whose cells frames named
	framesA        map[string]frameCell // joblib frames' blocks by path (rawCell)
	framesB        map[string]frameCell
	extDone        map[string]bool // joblib frames' extension columns named (rawExt)
	// formA and formB, when their Form is not the walk's (locate's
	// pk-canon/1 walk of bare pickles, eachFiles), are the options of the
	// form the digests are in: each pair walked is normalised in that form
	// too, and alike stays true while the two forms' views of every pair
	// are the same (formsAlike), so that a walk in that form would give the
	// same entries and locate need not make it.
	formA, formB canon.Options
	alike        bool
	// alikeA and alikeB are the last pair walked, whose forms' views are
	// compared (formsAlike) only when locate asks (settleAlike): that
	// normalises both streams twice more, and locate reads alike only when
	// it would walk again, not for one entry (a million levels of calls a
	// side: 0.34 of 6.0 s of CPU)
	alikeA, alikeB *pickle.Stream
	inForeign      bool              // walking below a joblib object array against a pickled one (foreignArrays)
	steps          map[string]string // the named steps met, by path (steps.go)
	// looseA and looseB are nodes of the stream's two views of loose
	// nodes (stream), through which the walk's stack holds their nodes
	// by ID (pending)
	looseA, looseB *canon.Node
	big            bool // a stream's views had bigWalk nodes or more (Result.big)
	// deferPaths is set while a stream of views of bigWalk nodes or more
	// is walked; later holds the entries whose paths are rendered when
	// it is done (addAt)
	deferPaths bool
	later      []laterPath
	// sizesLater are the nodes whose sizes the walk's entries wait for,
	// of stores whose sides are out (size): an entry's SizeA or SizeB of
	// -1-i is sizesLater[i]'s, made when the walk is done (sizeEntries)
	sizesLater []laterSize
	idsA, idsB []pickle.ID // the items of the lists or tuples compare compares (seq)
	// spare is the walk's task slice for compare's result (spareKids);
	// lent is the first element of the array on loan to a helper (nil:
	// none on loan)
	spare []task
	lent  *task
	// spills says the walk may hold what it reads only at its start or
	// end in temporary files (eachFiles, which compares the inputs whole
	// when they cannot be read back: err), when it would hold more than
	// spillAt bytes (stream)
	spills bool
}

// spillAt is the bytes the walk of a stream holds at its peak (walkBytes:
// the two stores, their fingerprint tables and views) from which what it
// reads only at its start or end is put in temporary files while it runs
// (cmp.spills): the stores' sides (each node's Self and owner, 8 bytes a
// node, read for the entries' sizes only, when the walk is done: size,
// sizeEntries), and A's fingerprint table while B's is made. Under it
// nothing is written: a spill costs CPU (the runs of the cost shapes
// within the bounds stay as they were), and it is only needed where the
// walk would be over the bound of docs/cost.md (256 MiB: nest_reduce diff
// changed, 290 MiB with everything in). A variable for the tests, which
// spill every walk's.
var spillAt int64 = 200 << 20

// spillUpTo is the estimate from which spilling no longer brings the walk
// under the bound (nest_newobj_build diff changed: 343 MiB estimated, 347-369
// MB with its sides out against 406-415 MB in, and 1-1.5 s more CPU): such a
// walk keeps what it reads and its CPU.
var spillUpTo int64 = 300 << 20

// walkBytes estimates what the walk of two streams' stores holds at its
// peak: the stores (their sides counted when they are out), and 12 bytes
// a node for the views and the fingerprint tables (9 a node a side, 13
// while a side's passes run).
func walkBytes(sa, sb *pickle.Store) int64 {
	n := int64(0)
	for _, s := range [2]*pickle.Store{sa, sb} {
		n += s.Footprint() + 12*int64(s.Len())
		if s.SidesAreOut() {
			n += 8 * int64(s.Len())
		}
		if sb == sa {
			break
		}
	}
	return n
}

// laterSize is a node whose size an entry waits for (cmp.size): its ID in
// its stream's store.
type laterSize struct {
	s  *pickle.Store
	id pickle.ID
}

// pathsLaterAt is the nodes of a stream's two views from which the walk's
// entries get their paths when it is done (addAt): bigWalk (a variable
// for the tests, which render every walk's paths later).
var pathsLaterAt = bigWalk

// laterPath is the path of entry i (c.entries), rendered later: at and
// one more edge.
type laterPath struct {
	i    int
	at   pathRef
	edge string
}

// add adds an entry unless an --ignore path covers it.
func (c *cmp) add(e Entry) {
	for i, ig := range c.opt.Ignore {
		if ppath.Under(e.Path, ig) {
			c.hit[i] = true
			c.ignored++
			return
		}
	}
	if c.elide() {
		// (counted, not shown: what it would show is dropped)
		e = Entry{Path: e.Path, Kind: e.Kind, Count: e.Count, Elided: true}
	} else {
		e.Note = c.stepNote(e.Path, e.Note)
	}
	c.entries = append(c.entries, e)
}

func (c *cmp) docs(da, db *input.Doc) {
	c.docA, c.docB = da, db
	c.optA, c.optB = docOptions(da, c.opt.Canon), docOptions(db, c.opt.Canon)
	ra, rb := canon.Parts(da, c.optA), canon.Parts(db, c.optB)
	mainA, mainB := da.MainPart(), db.MainPart()
	c.cross = torchCross(da, db)
	// parts aligned by name (order kept); the pickle parts whose result
	// loading returns are paired whatever their members are called; a torch
	// zip against a legacy file pairs storages through the tensors that use
	// them (crossStorage), not by name
	names := func(d *input.Doc, refs []canon.PartRef, main int) ([]canon.PartRef, []string) {
		var keep []canon.PartRef
		var out []string
		for _, r := range refs {
			p := &d.Parts[r.Index]
			switch {
			case r.Index == main:
				out = append(out, "\x00root")
			case c.cross && p.Role == input.RoleStorage:
				continue
			default:
				out = append(out, r.Name)
			}
			keep = append(keep, r)
		}
		return keep, out
	}
	// a torch file that hashes as a bare pickle is compared as one
	if c.bareA, c.bareB = asPickle(da, c.optA, ra), asPickle(db, c.optB, rb); c.bareA || c.bareB {
		if c.bareA {
			ra = pickleParts(da, ra)
		}
		if c.bareB {
			rb = pickleParts(db, rb)
		}
	}
	ra, na := names(da, ra, mainA)
	rb, nb := names(db, rb, mainB)
	pp := func(r canon.PartRef, main int) string { return partPath(r, r.Index == main) }
	for _, o := range Align(na, nb) {
		switch o.Kind {
		case '=':
			c.part(&da.Parts[ra[o.A].Index], &db.Parts[rb[o.B].Index], pp(ra[o.A], mainA), ra[o.A].Index == mainA)
		case '-':
			p := &da.Parts[ra[o.A].Index]
			at := pp(ra[o.A], mainA)
			if h := c.heldPath('a', p); h != "" {
				at = h
			}
			c.addPart(Entry{NoOffset: true, Path: at, Kind: Removed, A: partShort(p), ArrA: partArray(p), SizeA: partSize(p), Note: c.crossNote(da, p, -1)})
		case '+':
			p := &db.Parts[rb[o.B].Index]
			at := pp(rb[o.B], mainB)
			if h := c.heldPath('b', p); h != "" {
				at = h
			}
			c.addPart(Entry{NoOffset: true, Path: at, Kind: Added, B: partShort(p), ArrB: partArray(p), SizeB: partSize(p), Note: c.crossNote(db, p, -1)})
		case '~':
			pa, pb := &da.Parts[ra[o.A].Index], &db.Parts[rb[o.B].Index]
			c.addPart(Entry{NoOffset: true, Path: pp(ra[o.A], mainA), Kind: Changed, A: partShort(pa), ArrA: partArray(pa), B: partShort(pb), ArrB: partArray(pb), Note: partsNote(pa, pb)})
		}
	}
}

// partPath is the path of a part: root for the pickle whose result
// loading returns, part['name'] (its canonical name) for the others.
func partPath(r canon.PartRef, main bool) string {
	if main {
		return ppath.Root
	}
	return ppath.Part(r.Name)
}

// addPart adds an entry made outside the walk (a part, a stream, a
// storage at its tensor's path).
func (c *cmp) addPart(e Entry) { c.add(e) }

// heldPath is the path of the tensor or joblib array that holds raw part
// p of doc d (side 'a' or 'b'), or "" (tensorPaths).
func (c *cmp) heldPath(side byte, p *input.Part) string {
	if p.Raw == nil || !(p.Role == input.RoleStorage || p.Role == input.RoleArray || p.Role == input.RoleObjects) {
		return ""
	}
	m := &c.tensorsA
	d, opt := c.docA, c.optA
	if side == 'b' {
		m, d, opt = &c.tensorsB, c.docB, c.optB
	}
	if *m == nil {
		refs := &c.tensorRefA
		if side == 'b' {
			refs = &c.tensorRefB
		}
		c.tensorPaths(side, m, refs, d, opt)
	}
	key := p.Key
	if p.Role != input.RoleStorage {
		key = "array:" + p.Name
	}
	return (*m)[key]
}

// npyRoot is the path of a raw part: root for the array of a .npy file
// (what numpy.load returns), at otherwise.
func npyRoot(d *input.Doc, p *input.Part, at string) string {
	if d != nil && d.Format == "npy" && p.Role == input.RoleArray {
		return ppath.Root
	}
	return at
}

// tensorOf is the tensor whose path heldPath gives for storage part p.
func (c *cmp) tensorOf(side byte, p *input.Part) *input.TensorRef {
	if side == 'b' {
		return c.tensorRefB[p.Key]
	}
	return c.tensorRefA[p.Key]
}

// partLabel names a part in a note: its name, or, for a bare pickle or
// the main pickle of a legacy torch file (no name), what it is; never "".
func partLabel(p *input.Part) string {
	if p.Name != "" {
		return p.Name
	}
	if p.Pickle != nil {
		return "the file's pickle"
	}
	if p.Role != "" {
		return "the file's " + string(p.Role)
	}
	return "the file"
}

// partsNote names the two parts a changed part entry pairs: "part X", or
// "part X against Y" when their names differ.
func partsNote(pa, pb *input.Part) string {
	la, lb := partLabel(pa), partLabel(pb)
	if la == lb {
		return "part " + la
	}
	return "part " + la + " against " + lb
}

func partShort(p *input.Part) string {
	if p.Raw != nil {
		s := fmt.Sprintf("%s of %d bytes", p.Role, p.Raw.Len)
		if p.Raw.DType != "" {
			s += fmt.Sprintf(" (%s %v)", p.Raw.DType, p.Raw.Shape)
		}
		return s
	}
	if p.Pickle != nil {
		return fmt.Sprintf("pickle with %d stream(s)", len(p.Pickle.Streams))
	}
	return string(p.Role)
}

func partSize(p *input.Part) int64 {
	if p.Raw != nil {
		return p.Raw.Len
	}
	if p.Pickle != nil {
		return p.Pickle.Size
	}
	return 0
}

func (c *cmp) part(pa, pb *input.Part, at string, main bool) {
	switch {
	case pa.Raw != nil && pb.Raw != nil:
		if !bytes.Equal(pa.Raw.Digest, pb.Raw.Digest) {
			e := Entry{NoOffset: true, Path: at, Kind: Changed, A: partShort(pa), ArrA: partArray(pa), B: partShort(pb), ArrB: partArray(pb), SizeA: pa.Raw.Len, SizeB: pb.Raw.Len}
			tp := c.heldPath('a', pa)
			if tp != "" && c.rawExt(tp) {
				return // a joblib frame's extension column, by cell (frames.go)
			}
			if tp != "" {
				var t *input.TensorRef
				if pa.Role == input.RoleStorage {
					t = c.tensorOf('a', pa)
				}
				if ee, ok := rawElements(tp, c.docA, c.docB, pa.Raw, pb.Raw, t); ok {
					if t == nil {
						ee = c.rawCell(ee, tp)
					}
					c.addPart(ee)
					if ee.Elem != nil && ee.Elem.At != "" {
						c.dedupe(0) // (a Series' two copies in joblib)
					}
					return
				}
			} else if ee, ok := rawElements(npyRoot(c.docA, pa, at), c.docA, c.docB, pa.Raw, pb.Raw, nil); ok {
				c.addPart(ee)
				return
			}
			if n, ok := changedElements(pa.Raw, pb.Raw); ok {
				e.Note = fmt.Sprintf("%d element(s) differ", n)
			}
			if tp != "" {
				e.Path = tp
				note := string(pa.Role) + " " + partLabel(pa)
				if e.Note != "" {
					note = e.Note + " in " + note
				}
				e.Note = note
			}
			c.addPart(e)
		}
	case pa.Pickle != nil && pb.Pickle != nil:
		from := len(c.entries)
		c.file(pa, pb, at, main)
		c.heldObjects(pa, pb, at, from)
	default:
		c.addPart(Entry{NoOffset: true, Path: at, Kind: TypeChanged, A: partShort(pa), ArrA: partArray(pa), B: partShort(pb), ArrB: partArray(pb)})
	}
}

// changedElements counts differing elements of two raw arrays of the same
// dtype and length by reading both again (only when that is possible).
func changedElements(a, b *input.Raw) (int64, bool) {
	if a.Len != b.Len || a.DType != b.DType || a.Len > 1<<31 {
		return 0, false
	}
	size := array.ItemSize(a.DType)
	if a.DType == "" {
		size = 1
	}
	if size <= 0 {
		return 0, false
	}
	ra, err := a.Open()
	if err != nil {
		return 0, false
	}
	defer ra.Close()
	rb, err := b.Open()
	if err != nil {
		return 0, false
	}
	defer rb.Close()
	ba, bb := make([]byte, 1<<16-(1<<16)%size), make([]byte, 1<<16-(1<<16)%size)
	var n int64
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, _ := io.ReadFull(rb, bb)
		if na != nb {
			return 0, false
		}
		for i := int64(0); i+size <= int64(na); i += size {
			if !bytes.Equal(ba[i:i+size], bb[i:i+size]) {
				n++
			}
		}
		if ea != nil {
			return n, true
		}
	}
}

// streamHeads names the streams of pickle part p of d (Doc.StreamHead).
func streamHeads(d *input.Doc, p *input.Part) []string {
	pi := 0
	for i := range d.Parts {
		if &d.Parts[i] == p {
			pi = i
		}
	}
	out := make([]string, len(p.Pickle.Streams))
	for i := range out {
		out[i] = ppath.StreamHead(pi == d.MainPart(), d.Key(pi), i, d.MainStream(pi))
	}
	return out
}

// file compares two pickle parts of the opened inputs (c.streams).
func (c *cmp) file(pa, pb *input.Part, at string, main bool) {
	c.streams(sideStreams(c.docA, pa, c.bareA), sideStreams(c.docB, pb, c.bareB), at, main)
}

// streamSet is one side's streams as c.streams compares them: held in an
// opened input (docStreams), or read one at a time (eachFiles).
type streamSet struct {
	n        int                                 // how many
	head     func(i int) string                  // the head of stream i's paths (streamHeads)
	offset   func(i int) int64                   // where stream i starts
	length   func(i int) int64                   // its length in bytes
	load     func(i int) (*pickle.Stream, error) // stream i, held until the next call
	digest   func(i int) []byte                  // its canonical digest; nil when not known
	trailing *pickle.Trailing
}

// docStreams is the streamSet of pickle part p of d.
func docStreams(d *input.Doc, p *input.Part) streamSet {
	f := p.Pickle
	heads := streamHeads(d, p)
	return streamSet{
		n:        len(heads),
		head:     func(i int) string { return heads[i] },
		offset:   func(i int) int64 { return f.Streams[i].Offset },
		length:   func(i int) int64 { return f.Streams[i].Len() },
		load:     func(i int) (*pickle.Stream, error) { return f.Streams[i], nil },
		digest:   func(int) []byte { return nil },
		trailing: f.Trailing,
	}
}

// streams compares two pickles' streams, paired by what their paths call
// them (root, stream[i]; in a part that is not the main one, part['name']
// and part['name']<stream i>), then their trailing bytes. A pair whose
// digests are known and equal is not read.
func (c *cmp) streams(xa, xb streamSet, at string, main bool) {
	removed := func(i int) {
		n := xa.length(i)
		c.addPart(Entry{Path: xa.head(i), Kind: Removed, A: fmt.Sprintf("pickle stream of %d bytes", n), SizeA: n, OffA: xa.offset(i), Note: c.crossNote(c.docA, nil, i)})
	}
	added := func(i int) {
		n := xb.length(i)
		c.addPart(Entry{Path: xb.head(i), Kind: Added, B: fmt.Sprintf("pickle stream of %d bytes", n), SizeB: n, OffB: xb.offset(i), Note: c.crossNote(c.docB, nil, i)})
	}
	alignEachKeyed(xa.n, xb.n, func(i, j int) bool { return xa.head(i) == xb.head(j) }, nil, true, func(o EditOp) {
		if c.err != nil {
			return
		}
		switch o.Kind {
		case '=':
			if da, db := xa.digest(o.A), xb.digest(o.B); da != nil && bytes.Equal(da, db) {
				return
			}
			c.settleAlike() // (before the next pair is read: the last one is let go)
			sa, err := xa.load(o.A)
			if err != nil {
				c.err = err
				return
			}
			sb, err := xb.load(o.B)
			if err != nil {
				c.err = err
				return
			}
			c.stream(sa, sb, xa.head(o.A))
		case '-':
			removed(o.A)
		case '+':
			added(o.B)
		case '~':
			removed(o.A)
			added(o.B)
		}
	})
	tr := ppath.Trailing
	if !main {
		tr = at + ppath.Pseudo("trailing", -1)
	}
	ta, tb := xa.trailing, xb.trailing
	switch {
	case ta == nil && tb == nil:
	case ta == nil:
		c.addPart(Entry{Path: tr, Kind: Added, B: fmt.Sprintf("%d bytes after the last STOP", tb.Len), SizeB: tb.Len, OffB: tb.Offset})
	case tb == nil:
		c.addPart(Entry{Path: tr, Kind: Removed, A: fmt.Sprintf("%d bytes after the last STOP", ta.Len), SizeA: ta.Len, OffA: ta.Offset})
	case !bytes.Equal(ta.Digest, tb.Digest):
		c.addPart(Entry{Path: tr, Kind: Changed, A: fmt.Sprintf("%d bytes", ta.Len), B: fmt.Sprintf("%d bytes", tb.Len), SizeA: ta.Len, SizeB: tb.Len, OffA: ta.Offset, OffB: tb.Offset})
	}
}

func (c *cmp) stream(sa, sb *pickle.Stream, root string) {
	wb := walkBytes(sa.Store(), sb.Store())
	spill := c.spills && wb >= spillAt && wb < spillUpTo
	if spill {
		// (on an error they stay in)
		sa.Store().SidesOut("")
		sb.Store().SidesOut("")
	}
	va, vb := canon.Normalize(sa, c.optA), canon.Normalize(sb, c.optB)
	c.storeA, c.storeB = va.Store(), vb.Store()
	if va.NodeCount()+vb.NodeCount() >= bigWalk {
		c.big = true
		defer debug.SetGCPercent(debug.SetGCPercent(bigWalkGCPercent))
	}
	if va.NodeCount()+vb.NodeCount() >= pathsLaterAt {
		c.deferPaths = true
	}
	defer c.walkDone(len(c.entries))
	c.reset()
	c.seenA.reserve(va.NodeCount())
	c.seenB.reserve(vb.NodeCount())
	c.pairs.reserve(va.NodeCount())
	// The views keep no node: the pass over each whole view keys what it
	// keeps by ID, and the walk's nodes are made as it reaches them and
	// dropped when it is done with them (it keys what it keeps by ID and
	// its paths are its own); the effects' nodes are the walk's too (a
	// million discarded calls kept a table of a pointer a node beside
	// them)
	va.SetLooseNodes(true)
	vb.SetLooseNodes(true)
	ra, rb := va.Root(), vb.Root()
	c.looseA, c.looseB = ra, rb
	defer func() { c.looseA, c.looseB = nil, nil }()
	ea, eb := effectsOf(va), effectsOf(vb)
	c.settleAlike()
	if c.alike {
		c.alike = c.formA.Form != c.optA.Form && c.formB.Form != c.optB.Form
		c.alikeA, c.alikeB = sa, sb
	}
	c.ta = reuseFPTable(c.ta, c.optA.Algo, ra, ea)
	var outA *fpOut
	if spill {
		outA = c.ta.out()
	}
	c.tb = reuseFPTable(c.tb, c.optB.Algo, rb, eb)
	if err := c.ta.in(outA); err != nil {
		c.err = err
		return
	}
	c.walk(ra, rb, c.paths.root(root), true)
	if ea.len() == 0 && eb.len() == 0 {
		return
	}
	// an effect's number is its place in the stream's call log
	// (canon.Node.EffectIndex), the same in A's and B's forms and in pk
	// trace; a run names the places of its first and last effects
	formA, formB := ea.form(), eb.form()
	effect := func(i int) pathRef { return c.paths.root(root + formB.item(i)) }
	// (without the '=' steps, which give no entry: a million equal effects
	// were a million runs)
	sameAt := func(i, j int) bool {
		eq, known := sameRef(c.ta, ea.ref(i), c.tb, eb.ref(j))
		return eq || !known
	}
	for _, r := range AlignRuns(ea.len(), eb.len(), sameAt, false) {
		if r.N > 1 {
			if r.Kind == '~' {
				c.walk(ea.node(r.A), eb.node(r.B), effect(r.B), true)
				r = restRun(r)
			}
			form := formB
			if r.Kind == '-' {
				form = formA
			}
			e := c.runEntryOf(root, form, r, func(side byte, i int) *canon.Node {
				if side == 'a' {
					return ea.node(i)
				}
				return eb.node(i)
			})
			e.Note = "calls or global resolutions not reachable from the result"
			c.add(e)
			continue
		}
		o := EditOp{Kind: r.Kind, A: r.A, B: r.B}
		switch o.Kind {
		case '-':
			n := ea.node(o.A)
			c.add(Entry{Path: root + formA.item(o.A), Kind: Removed, A: c.short(n), ValA: typed(n), OffA: n.Offset(), Note: "a call or global resolution not reachable from the result"})
		case '+':
			n := eb.node(o.B)
			c.add(Entry{Path: root + formB.item(o.B), Kind: Added, B: c.short(n), ValB: typed(n), OffB: n.Offset(), Note: "a call or global resolution not reachable from the result"})
		case '~':
			c.walk(ea.node(o.A), eb.node(o.B), effect(o.B), true)
		}
	}
}

// effects are the effects of a view (canon.View.EffectPlaces) by their
// places in the call log, whose nodes are made when the walk asks for
// them: a table of a node each took about 100 bytes an effect a side. The
// places are held as uint32 (a log entry is a node or an operation, each
// numbered by an int32, so a log has fewer than 2^32 entries), copied
// once: EffectPlaces' []int, grown by doubling, is 8-16 bytes an effect,
// which the walk held beside the fingerprint tables (a million discarded
// calls: 16 MB a side).
type effects struct {
	v  *canon.View
	at []uint32
}

func effectsOf(v *canon.View) effects {
	places := v.EffectPlaces()
	at := make([]uint32, len(places))
	for i, p := range places {
		at[i] = uint32(p)
	}
	return effects{v: v, at: at}
}

func (e effects) len() int               { return len(e.at) }
func (e effects) node(i int) *canon.Node { return e.v.EffectNode(int(e.at[i])) }
func (e effects) ref(i int) canon.Ref    { return e.v.EffectRef(int(e.at[i])) }

// form names the effects by their places in the call log: <effect i>, and
// <effect i:j> for the run of effects a to b-1 (i the place of effect a,
// j one past that of effect b-1).
func (e effects) form() seqForm {
	return seqForm{
		func(i int) string { return ppath.Pseudo("effect", int(e.at[i])) },
		func(a, b int) string { return ppath.PseudoSpan("effect", int(e.at[a]), int(e.at[b-1])+1) },
	}
}

// formsAlikeRuns counts formsAlike's runs (TestAlikeLater).
var formsAlikeRuns int

// settleAlike decides alike for the pair stream left undecided (alikeA,
// alikeB), and lets it go.
func (c *cmp) settleAlike() {
	sa, sb := c.alikeA, c.alikeB
	if sa == nil {
		return
	}
	c.alikeA, c.alikeB = nil, nil
	if c.alike {
		c.alike = formsAlike(sa, effects{}, c.optA, c.formA) && formsAlike(sb, effects{}, c.optB, c.formB)
	}
}

// formsAlike reports whether stream s has the same normalised view under
// options x and y, which differ in their Form only: the same rules applied
// as many times, no array (whose nodes only pk-canon/2 makes), and the
// same effects (pk-canon/2 takes them whole, §2.4 of its spec). Every rule
// that pk-canon/2 changes is noted when it applies (an array, a torch
// storage, enum members, dill's _setattr and globals file, latin-1 bytes
// read again), so views with the same rules and effects are the same view,
// and a walk gives the same entries over either.
//
// ex are s's effects under x (made again when x has paths: Applied would
// find every node's, or when there are none).
func formsAlike(s *pickle.Stream, ex effects, x, y canon.Options) bool {
	formsAlikeRuns++
	vx := ex.v
	if !x.NoPaths || vx == nil {
		x.NoPaths = true
		vx = canon.Normalize(s, x)
		ex = effectsOf(vx)
	}
	y.NoPaths = true
	vy := canon.Normalize(s, y)
	ax, ay := vx.Applied(), vy.Applied()
	if len(ax) != len(ay) {
		return false
	}
	for i := range ax {
		if ax[i].Rule != ay[i].Rule || ax[i].Count != ay[i].Count {
			return false
		}
		switch ax[i].Rule {
		case canon.RuleGetattrGlobal, canon.RuleBytesReduce, canon.RuleByteArray, canon.RuleSetReduce,
			canon.RuleFrozenReduce, canon.RuleNewobj, canon.RuleNewobjEx, canon.RuleReconstructor,
			canon.RuleTrackerID, canon.RuleCoFilename, canon.RuleGlobalsFile, canon.RuleSetstate,
			canon.RuleDillMain, canon.RulePartialNewobjEx, canon.RuleCodecsBytes, canon.RuleSetattr, canon.RuleLineno:
		default:
			return false // (arrays, torch, and what only pk-canon/2 does)
		}
	}
	// (y's effects by their places, each log entry read where it is
	// compared: Effects made them all first, 24 MB for a million
	// discarded calls, beside the places; no node kept for the root
	// EffectPlaces makes, as the table of a view's nodes would be)
	vy.FreshNodes()
	py, sx, sy := vy.EffectPlaces(), vx.Store(), vy.Store()
	if ex.len() != len(py) {
		return false
	}
	for i, at := range ex.at {
		if sx.Event(int(at)) != sy.Event(py[i]) {
			return false
		}
	}
	return true
}

type task struct {
	a, b *canon.Node
	path pathRef
	// differ is set when the pair is already known to differ (the stream
	// digests differ), so its subtree digests need not be computed.
	differ bool
	depth  int
	// entry, when set, is an entry to add at this point of the walk
	// (after the tasks before it and what they gave)
	entry *Entry
}

// walk compares two subtrees iteratively (no recursion), skipping pairs
// whose canonical forms are equal (same: fingerprints, or canon's digests
// where sharing makes fingerprints unsure) and pairs already compared;
// differ says the first pair is already known to differ. Its cost is
// linear in the pairs it visits, at any depth: paths are held as a tree
// (pathTable) and equality comes from one pass over each view (fpTable).
func (c *cmp) walk(a, b *canon.Node, path pathRef, differ bool) {
	c.walkFrom(task{a: a, b: b, path: path, differ: differ})
}

// walkFrom is walk from a task at any depth.
func (c *cmp) walkFrom(first task) {
	stack := []pending{c.pend(first)}
	for len(stack) > 0 {
		t := c.unpend(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		kids := c.compare(t)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, c.pend(kids[i]))
		}
		c.takeBack(kids)
	}
}

// spareKids is an empty task slice for the tasks compare returns, lent to
// the first helper that asks (seq, call): down a million nested calls a
// new slice a level was 135 MB of allocation a side. The helper appends to
// it and returns it; walkFrom takes it back (takeBack) when it has pended
// the tasks. A helper asking while it is lent gets nil (append allocates).
func (c *cmp) spareKids() []task {
	k := c.spare
	if k == nil {
		if c.lent != nil {
			return nil
		}
		k = make([]task, 0, 8)
	}
	c.spare, c.lent = nil, unsafe.SliceData(k[:1])
	return k[:0]
}

// takeBack ends the loan of spareKids when kids, compare's result, is the
// slice lent (grown by append, it is a new array: the next loan makes
// another). Its array is cleared: tasks hold nodes.
func (c *cmp) takeBack(kids []task) {
	if c.lent == nil {
		return
	}
	if cap(kids) > 0 && unsafe.SliceData(kids[:1]) == c.lent && cap(kids) <= maxSpare {
		clear(kids[:cap(kids)]) // (what a helper cut off too)
		c.spare = kids[:0]
	}
	c.lent = nil
}

// maxSpare is the largest task slice walkFrom keeps for the next compare.
const maxSpare = 1 << 10

// pending is a task on the walk's stack. A node of one of the stream's
// two views of loose nodes is held by its ID, and made again when the task
// is taken (as the views make loose nodes: by ID only); other nodes (of
// a fast path's or a nested pickle's view) as they are. Down a nesting
// whose every level leaves a task for later (the second item of x = (x,
// x), the 'b' of x = {'a': x, 'b': (x,)}), a task and its two nodes took
// about 140 bytes a level, which every collection scanned (400,000
// levels: 60 MB); a pending one takes 40.
type pending struct {
	na, nb *canon.Node // nodes not held by ID
	ia, ib pickle.ID   // by ID (pickle.NoID: none, or in na/nb)
	path   pathRef
	differ bool
	entry  *Entry
}

// pend is t as it waits on the stack.
func (c *cmp) pend(t task) pending {
	p := pending{ia: pickle.NoID, ib: pickle.NoID, path: t.path, differ: t.differ, entry: t.entry}
	if t.a != nil && c.looseA != nil && t.a.View() == c.looseA.View() {
		p.ia = t.a.ID()
	} else {
		p.na = t.a
	}
	if t.b != nil && c.looseB != nil && t.b.View() == c.looseB.View() {
		p.ib = t.b.ID()
	} else {
		p.nb = t.b
	}
	return p
}

// unpend is the task p holds.
func (c *cmp) unpend(p pending) task {
	t := task{a: p.na, b: p.nb, path: p.path, differ: p.differ, entry: p.entry}
	if p.ia != pickle.NoID {
		t.a = c.looseA.Under(p.ia)
	}
	if p.ib != pickle.NoID {
		t.b = c.looseB.Under(p.ib)
	}
	return t
}

// reset starts the walk of a stream: no object seen, no pair compared,
// no path.
func (c *cmp) reset() {
	if c.pairs == nil {
		c.seenA, c.seenB, c.pairs = &seenPaths{}, &seenPaths{}, &pairSet{}
	}
	c.seenA.reset()
	c.seenB.reset()
	c.pairs.reset()
	c.paths.reset(c.opt.Ignore)
}

// same reports whether a and b (of the walk's two views) are equal.
// Where same cannot say (its known), alignments take the pair as
// equal and the walk goes into it (entries come from what differs below).
func (c *cmp) same(a, b *canon.Node) bool {
	eq, known := same(c.ta, a, c.tb, b)
	return eq || !known
}

// differs reports whether a and b may differ: not known to be equal.
func (c *cmp) differs(a, b *canon.Node) bool {
	eq, known := same(c.ta, a, c.tb, b)
	return !eq || !known
}

// addAt adds entry e at path and one more edge (pathOf). While a stream of
// views of bigWalk nodes or more is walked, its path is rendered when the
// walk is done (walkDone), once the fingerprint tables are let go: a
// path a million levels down is 20 MB, which the walk's end held beside
// the two stores and tables (nest_reduce diff changed: its peak). Not with
// --ignore or a named step met, which read the path as the entry is
// added, nor for an entry cut to its path's head (add).
func (c *cmp) addAt(path pathRef, edge string, e Entry) {
	if c.deferPaths && len(c.opt.Ignore) == 0 && len(c.steps) == 0 && !c.elide() {
		c.later = append(c.later, laterPath{len(c.entries), path, edge})
		c.entries = append(c.entries, e)
		return
	}
	e.Path = c.pathOf(path, edge)
	c.add(e)
}

// walkDone completes the entries of a stream's walk, from entry from on:
// their sizes the walk left for later (size), then their paths (addAt).
// The fingerprint tables are let go and collected first, and their memory
// given back, so that what they need takes their room (the stores stay:
// the caller holds them).
func (c *cmp) walkDone(from int) {
	c.deferPaths = false
	if len(c.later) == 0 && len(c.sizesLater) == 0 {
		return
	}
	c.ta, c.tb = nil, nil
	runtime.GC()
	c.sizeEntries(from)
	for _, l := range c.later {
		c.entries[l.i].Path = c.paths.With(l.at, l.edge)
	}
	c.later = nil
}

// sizeEntries gives the entries from entry from on the sizes the walk left
// for later (size): each store's sides are brought in, read and put out
// again, one store at a time. A store whose sides cannot be read again
// leaves the walk an error (eachFiles then compares the inputs whole).
func (c *cmp) sizeEntries(from int) {
	later := c.sizesLater
	c.sizesLater = nil
	if len(later) == 0 {
		return
	}
	sizes := make([]int64, len(later))
	done := make([]bool, len(later))
	for i := range later {
		if done[i] {
			continue
		}
		s := later[i].s
		// (only the nodes whose entries were kept: an entry cut to its path
		// or ignored waits for nothing)
		var want []int
		for k := from; k < len(c.entries); k++ {
			e := &c.entries[k]
			for _, z := range [2]int64{e.SizeA, e.SizeB} {
				if j := -1 - z; z < 0 && later[j].s == s && !done[j] {
					want = append(want, int(j))
					done[j] = true
				}
			}
		}
		for j := i; j < len(later); j++ {
			if later[j].s == s {
				done[j] = true
			}
		}
		if len(want) == 0 {
			continue
		}
		if err := s.SidesIn(); err != nil {
			c.err = err
			return
		}
		for _, j := range want {
			sizes[j] = s.Owned(later[j].id)
		}
		s.SidesOut("") // (held for locate's other walk: on an error they stay in)
	}
	for k := from; k < len(c.entries); k++ {
		e := &c.entries[k]
		if e.SizeA < 0 {
			e.SizeA = sizes[-1-e.SizeA]
		}
		if e.SizeB < 0 {
			e.SizeB = sizes[-1-e.SizeB]
		}
	}
}

// pathOf renders path and one more edge.
func (c *cmp) pathOf(path pathRef, edge string) string {
	if c.elide() {
		if h, whole := c.paths.Head(path); !whole {
			return h
		}
	}
	return c.paths.With(path, edge)
}

// entryPath is the path of an entry: its head once the entries kept whole
// are there (Options.Detail).
func (c *cmp) entryPath(path pathRef) string {
	if c.elide() {
		h, _ := c.paths.Head(path)
		return h
	}
	return c.paths.String(path)
}

// elide reports whether the next entry keeps only the head of its path.
func (c *cmp) elide() bool {
	return c.opt.Detail > 0 && len(c.entries) >= c.opt.Detail && len(c.opt.Ignore) == 0
}

// seqForm names the items of a sequence and its runs: [i] and [i:j] for
// the items of a list or tuple, <effect i> and <effect i:j> for effects
// (effects.form).
type seqForm struct {
	item func(int) string
	span func(i, j int) string
}

var (
	itemsForm = seqForm{ppath.Index, ppath.Slice}
	partsForm = seqForm{func(i int) string { return ppath.Parts + ppath.Index(i) }, func(i, j int) string { return ppath.Parts + ppath.Slice(i, j) }}
)

// edgeOf is the edge of item i in a sequence whose items format names.
func edgeOf(format seqForm, i int) string { return format.item(i) }

func (c *cmp) compare(t task) []task {
	if t.entry != nil {
		c.add(*t.entry)
		return nil
	}
	a, b, path := t.a, t.b, t.path
	if a == nil || b == nil {
		if a != b {
			switch {
			case a == nil:
				c.addAt(path, "", Entry{Kind: Added, B: c.short(b), ValB: typed(b), OffB: b.Offset()})
			default:
				c.addAt(path, "", Entry{Kind: Removed, A: c.short(a), ValA: typed(a), OffA: a.Offset()})
			}
		}
		return nil
	}
	if c.paths.ignored(path, c.hit) {
		c.ignored++
		return nil
	}
	// a pair of nodes each reached once is met once: no record of it
	onceA, onceB := c.ta.once(a), c.tb.once(b)
	if !onceA || !onceB {
		if c.pairs.add(a.ID(), b.ID()) {
			return nil
		}
	}
	// aliasing of identity objects (one reached once is never met again)
	if !a.Pure() && !onceA || !b.Pure() && !onceB {
		pa, okA := c.seenA.get(a.ID())
		pb, okB := c.seenB.get(b.ID())
		if okA || okB {
			if okA && okB && c.paths.Same(pa, pb) {
				return nil
			}
			e := Entry{Path: c.entryPath(path), Kind: AliasChanged, OffA: a.Offset(), OffB: b.Offset()}
			if okA {
				e.A = "the same object as " + c.entryPath(pa)
			} else {
				e.A = "a new object: " + c.short(a)
			}
			if okB {
				e.B = "the same object as " + c.entryPath(pb)
			} else {
				e.B = "a new object: " + c.short(b)
			}
			c.add(e)
			return nil
		}
		if !a.Pure() && !onceA {
			c.seenA.set(a.ID(), path)
			c.paths.pin(path)
		}
		if !b.Pure() && !onceB {
			c.seenB.set(b.ID(), path)
			c.paths.pin(path)
		}
	}
	// (pure values' digests are cheap: check them even when told they differ)
	if (!t.differ || a.Pure() && b.Pure()) && !c.differs(a, b) {
		return nil
	}
	if c.cross && a.Kind() == pickle.KindPersID && b.Kind() == pickle.KindPersID {
		if done := c.crossStorage(a, b, path); done {
			return nil
		}
	}
	if a.Kind() == pickle.KindCall && b.Kind() == pickle.KindCall {
		if c.skip[a.ID()] {
			return nil // a frame's extension column, named by frames
		}
		c.frames(a, b, path)
		if c.tensors(a, b, path) {
			return nil
		}
	}
	if a.Kind() != b.Kind() {
		c.addAt(path, "", Entry{Kind: TypeChanged, A: c.short(a), ValA: typed(a), B: c.short(b), ValB: typed(b), SizeA: c.size(a, true), SizeB: c.size(b, false), OffA: a.Offset(), OffB: b.Offset()})
		return nil
	}
	switch a.Kind() {
	case canon.KindArray, canon.KindStorage:
		if c.skip[a.ID()] {
			return nil // named by frames or tensors
		}
		if a.Kind() != canon.KindArray {
			break
		}
		if c.foreignArrays(a, b, path) {
			return nil
		}
		if kids, ok := c.arrays(a, b, path); ok {
			return kids
		}
	case pickle.KindList, pickle.KindTuple:
		c.noteStep(a, b, path)
		// (the items' IDs in the walk's buffers: seq is done with them when
		// it returns)
		c.idsA, c.idsB = a.ItemIDs(c.idsA[:0]), b.ItemIDs(c.idsB[:0])
		return c.seq(seqItems{of: a, ids: c.idsA}, seqItems{of: b, ids: c.idsB}, path, itemsForm, a, b)
	case pickle.KindSet, pickle.KindFrozenSet:
		return c.set(a, b, path)
	case pickle.KindDict:
		return c.dict(a, b, path)
	case pickle.KindCall:
		return c.call(a, b, path)
	case pickle.KindGlobal:
		if a.Flags()&pickle.FlagDynamic != 0 && b.Flags()&pickle.FlagDynamic != 0 {
			return c.seq(itemsOf(a), itemsOf(b), path, partsForm, a, b)
		}
	}
	ra, rb, note := c.changedShort(a, b)
	c.addAt(path, "", Entry{Kind: Changed, A: ra, ValA: typed(a), B: rb, ValB: typed(b), SizeA: c.size(a, true), SizeB: c.size(b, false), OffA: a.Offset(), OffB: b.Offset(), Note: note})
	return c.opsDiff(a, b, path)
}

// shared reports whether an identity object is referenced more than once
// in its stream (so its sharing pattern can differ between two sides).
func shared(n *canon.Node) bool {
	return !n.Pure() && n.Flags()&pickle.FlagShared != 0
}

// seqItems is one side of a sequence the walk aligns: the items of the
// sequence of, by ID, a node made for an item only when an entry or a task
// needs one (a tuple of a million items made a million nodes a side, 56
// bytes each, to align them by their fingerprints); or, with of nil, the
// items' nodes as a caller has them.
type seqItems struct {
	of    *canon.Node
	ids   []pickle.ID
	nodes []*canon.Node
}

// itemsOf is the items of n (Items) by ID.
func itemsOf(n *canon.Node) seqItems { return seqItems{of: n, ids: n.ItemIDs(nil)} }

// nodesOf is items given as nodes.
func nodesOf(ns []*canon.Node) seqItems { return seqItems{nodes: ns} }

func (s seqItems) len() int {
	if s.of == nil {
		return len(s.nodes)
	}
	return len(s.ids)
}

// node is item i's node (nil for none, as Items gives it).
func (s seqItems) node(i int) *canon.Node {
	if s.of == nil {
		return s.nodes[i]
	}
	return s.of.Under(s.ids[i]) // (pickle.NoID: nil)
}

// ref is item i as a Ref (the zero Ref for none).
func (s seqItems) ref(i int) canon.Ref {
	if s.of == nil {
		return s.nodes[i].Ref()
	}
	if s.ids[i] < 0 {
		return canon.Ref{}
	}
	return s.of.Ref().Under(s.ids[i])
}

// sameItem is cmp.same of item i of ia and item j of ib.
func (c *cmp) sameItem(ia seqItems, i int, ib seqItems, j int) bool {
	x, y := ia.ref(i), ib.ref(j)
	if x.IsNil() || y.IsNil() {
		return x.IsNil() == y.IsNil()
	}
	eq, known := sameRef(c.ta, x, c.tb, y)
	return eq || !known
}

// sharedRef is shared of a Ref (false for none).
func sharedRef(r canon.Ref) bool {
	return !r.IsNil() && !r.Pure() && r.Flags()&pickle.FlagShared != 0
}

func (c *cmp) seq(ia, ib seqItems, path pathRef, format seqForm, a, b *canon.Node) []task {
	kids := c.spareKids()
	var runs []Run
	var one [1]Run
	if ia.len() == 1 && ib.len() == 1 {
		// (alignRunsKeeping of one item a side, without its closures: a
		// million levels of one-item tuples)
		switch {
		case !c.sameItem(ia, 0, ib, 0):
			one[0] = Run{Kind: '~', N: 1}
			runs = one[:]
		case sharedRef(ia.ref(0)) || sharedRef(ib.ref(0)):
			one[0] = Run{Kind: '=', N: 1}
			runs = one[:]
		}
	} else {
		key := func(side byte, i int) ([16]byte, bool) {
			if side == 'a' {
				return c.ta.keyRef(ia.ref(i))
			}
			return c.tb.keyRef(ib.ref(i))
		}
		keepEq := func(i, j int) bool { return sharedRef(ia.ref(i)) || sharedRef(ib.ref(j)) }
		runs = alignRunsKeeping(ia.len(), ib.len(), func(i, j int) bool { return c.sameItem(ia, i, ib, j) }, key, keepEq)
	}
	for _, r := range runs {
		if r.N > 1 {
			if r.Kind != '~' {
				c.add(c.runEntry(c.entryPath(path), format, r, ia, ib))
				continue
			}
			// changed in place: the first pair is compared, the rest is
			// one entry after what that gives
			rest := restRun(r)
			kids = append(kids, task{a: ia.node(r.A), b: ib.node(r.B), path: c.paths.child(path, edgeOf(format, r.B)), differ: true})
			e := c.runEntry(c.entryPath(path), format, rest, ia, ib)
			kids = append(kids, task{entry: &e})
			continue
		}
		o := EditOp{Kind: r.Kind, A: r.A, B: r.B}
		switch o.Kind {
		case '-':
			n := ia.node(o.A)
			c.addAt(path, edgeOf(format, o.A), Entry{Kind: Removed, A: c.short(n), ValA: typed(n), SizeA: c.size(n, true), OffA: n.Offset()})
		case '+':
			n := ib.node(o.B)
			c.addAt(path, edgeOf(format, o.B), Entry{Kind: Added, B: c.short(n), ValB: typed(n), SizeB: c.size(n, false), OffB: n.Offset()})
		case '~':
			kids = append(kids, task{a: ia.node(o.A), b: ib.node(o.B), path: c.paths.child(path, edgeOf(format, o.B)), differ: true})
		case '=':
			// equal content; still visited one level when either side is
			// referenced from elsewhere too, to compare object sharing
			// (alignRunsKeeping keeps only these)
			kids = append(kids, task{a: ia.node(o.A), b: ib.node(o.B), path: c.paths.child(path, edgeOf(format, o.B))})
		}
	}
	if a != nil {
		kids = append(kids, c.opsDiff(a, b, path)...)
	}
	return kids
}

// restRun is a run of items changed in place without its first pair
// (which is compared: its entries come first).
func restRun(r Run) Run {
	return Run{Kind: r.Kind, A: r.A + 1, B: r.B + 1, N: r.N - 1}
}

// runEntry is the one entry of a run of r.N items added, removed or
// changed in place (Runs) in the sequences ia and ib at path (format names
// one item: "[%d]" gives root[200000:600000]): the first and the last item
// of each side it has, shown short, at the first one's offset. Both paths
// build run entries here, from nodes of the run's first and last items
// only (the fast path parses no other).
func (c *cmp) runEntry(path string, format seqForm, r Run, ia, ib seqItems) Entry {
	return c.runEntryOf(path, format, r, func(side byte, i int) *canon.Node {
		if side == 'a' {
			return ia.node(i)
		}
		return ib.node(i)
	})
}

// runEntryOf is runEntry with the items given by item (side 'a' or 'b',
// index): only the first and last of the run on each side it has are
// asked for.
func (c *cmp) runEntryOf(path string, format seqForm, r Run, item func(side byte, i int) *canon.Node) Entry {
	span := func(i int) string { return path + format.span(i, i+r.N) }
	ends := func(side byte, i int) (string, int64) {
		first := item(side, i)
		return c.short(first) + " ... " + c.short(item(side, i+r.N-1)), first.Offset()
	}
	e := Entry{Count: r.N}
	switch r.Kind {
	case '-':
		e.Path, e.Kind = span(r.A), Removed
		e.A, e.OffA = ends('a', r.A)
	case '+':
		e.Path, e.Kind = span(r.B), Added
		e.B, e.OffB = ends('b', r.B)
	default:
		e.Path, e.Kind = span(r.B), Changed
		e.A, e.OffA = ends('a', r.A)
		e.B, e.OffB = ends('b', r.B)
	}
	return e
}

func (c *cmp) set(a, b *canon.Node, path pathRef) []task {
	ia, pa := a.Elements()
	ib, pb := b.Elements()
	inA := map[exKey]bool{}
	for _, n := range ia {
		inA[exactKey(c.ta, n)] = true
	}
	inB := map[exKey]bool{}
	for _, n := range ib {
		inB[exactKey(c.tb, n)] = true
	}
	for i, n := range ia {
		if !inB[exactKey(c.ta, n)] {
			c.addAt(path, setEdge(pa[i], n), Entry{Kind: Removed, A: c.short(n), ValA: typed(n), OffA: n.Offset()})
		}
	}
	for i, n := range ib {
		if !inA[exactKey(c.tb, n)] {
			c.addAt(path, setEdge(pb[i], n), Entry{Kind: Added, B: c.short(n), ValB: typed(n), OffB: n.Offset()})
		}
	}
	return c.opsDiff(a, b, path)
}

func (c *cmp) dict(a, b *canon.Node, path pathRef) []task {
	return c.entries2(a.Entries(), b.Entries(), path, keyEdge, c.dictOrder(), a, b)
}

// dictOrder is entries2's order note for a plain dict's entries (and the
// attributes of a state): "" (their order does not count) unless dicts
// keep their insertion order (--keep-dict-order).
func (c *cmp) dictOrder() string {
	if c.opt.Canon.KeepDictOrder {
		return "the same keys in another order, which --keep-dict-order counts"
	}
	return ""
}

// setitemsOrder is entries2's order note for the items set on an object
// (OrderedDict and the like), whose order the canonical form keeps.
const setitemsOrder = "the same keys set in another order, which counts for anything but a plain dict"

// entries2 compares two lists of entries by key: an entry of A whose key B
// lacks is removed, one of B's that A lacks added, the values of a key both
// have compared. When their order counts (order names why, for the note)
// and the keys both have come in another order, an entry at path says so
// (orderEntry): the values alone would show no difference.
func (c *cmp) entries2(ea, eb []canon.Entry, path pathRef, edge func(int, *canon.Node) string, order string, a, b *canon.Node) []task {
	var kids []task
	// B's keys: in a map, or, for a few, a list searched in order (a
	// nesting of 400,000 dicts of two keys made a map and a slice a level)
	var ib map[exKey]int
	var few [8]exKey
	var fewMatched [8]bool
	var matched []bool
	if len(eb) <= len(few) {
		for i, e := range eb {
			few[i] = exactKey(c.tb, e.Key)
		}
		matched = fewMatched[:len(eb)]
	} else {
		ib = make(map[exKey]int, len(eb))
		for i, e := range eb {
			ib[exactKey(c.tb, e.Key)] = i
		}
		matched = make([]bool, len(eb))
	}
	find := func(k exKey) (int, bool) {
		if ib != nil {
			j, ok := ib[k]
			return j, ok
		}
		// (the last of equal keys, as the map keeps: a dict's keys are
		// distinct, a __setitem__'s pairs need not be)
		for j := len(eb) - 1; j >= 0; j-- {
			if few[j] == k {
				return j, true
			}
		}
		return 0, false
	}
	reordered, last := false, -1 // (order: B's keys met out of B's order)
	for _, e := range ea {
		j, ok := find(exactKey(c.ta, e.Key))
		if !ok {
			c.addAt(path, edge(e.Pos, e.Key), Entry{Kind: Removed, A: c.short(e.Value), ValA: typed(e.Value), SizeA: c.size(e.Value, true), OffA: e.Value.Offset()})
			continue
		}
		matched[j] = true
		if order != "" {
			reordered = reordered || j < last
			last = j
		}
		kids = append(kids, task{a: e.Value, b: eb[j].Value, path: c.paths.child(path, edge(eb[j].Pos, e.Key))})
	}
	if reordered {
		var inB []int // B's index of each key both have, in A's order
		for _, e := range ea {
			if j, ok := find(exactKey(c.ta, e.Key)); ok {
				inB = append(inB, j)
			}
		}
		c.orderEntry(eb, inB, matched, path, order)
	}
	for j, e := range eb {
		if !matched[j] {
			c.addAt(path, edge(e.Pos, e.Key), Entry{Kind: Added, B: c.short(e.Value), ValB: typed(e.Value), SizeB: c.size(e.Value, false), OffB: e.Value.Offset()})
		}
	}
	if a != nil {
		kids = append(kids, c.opsDiff(a, b, path)...)
	}
	return kids
}

// orderEntry adds the entry for keys that A and B both have in another
// order: each side's order of those keys from the first place where they
// differ (a few, then how many more), at the container's path. inB is B's
// index of each such key in A's order, matched B's keys that A has.
func (c *cmp) orderEntry(eb []canon.Entry, inB []int, matched []bool, path pathRef, note string) {
	var orderB []int // B's indices of the common keys, in B's order
	for j := range eb {
		if matched[j] {
			orderB = append(orderB, j)
		}
	}
	first := 0
	for first < len(inB) && first < len(orderB) && inB[first] == orderB[first] {
		first++
	}
	render := func(n int, key func(int) *canon.Node) string {
		parts := renderSome(n-first, 6, 60, func(i int) string { return leafValue(key(first + i)) })
		if first > 0 {
			parts = append([]string{"..."}, parts...)
		}
		return "keys in order: " + strings.Join(parts, ", ")
	}
	// A's common keys in A's order: B's keys at inB (the same keys)
	ra := render(len(inB), func(i int) *canon.Node { return eb[inB[i]].Key })
	rb := render(len(orderB), func(i int) *canon.Node { return eb[orderB[i]].Key })
	c.addAt(path, "", Entry{Kind: Changed, A: ra, B: rb, Note: note})
}

// call compares two calls or objects: the callable, the arguments (named
// for the producers' well-known constructors) and the state.
func (c *cmp) call(a, b *canon.Node, path pathRef) []task {
	if ra, ok := stdlibRepr(a); ok {
		// a datetime, a Decimal, ... (stdlibRepr): one entry with both
		// values as Python shows them, not their state's bytes
		if rb, ok := stdlibRepr(b); ok && ra != rb {
			c.addAt(path, "", Entry{Kind: Changed, A: ra, B: rb, OffA: a.Offset(), OffB: b.Offset()})
			return nil
		}
	}
	kids := c.spareKids()
	fa, fb := a.Func(), b.Func()
	if fa != nil && fb != nil && c.differs(fa, fb) {
		edge := callEdges(a.CallForm()).callable
		kids = append(kids, task{a: fa, b: fb, path: c.paths.child(path, edge), differ: true})
	}
	aa, ab := a.Args(), b.Args()
	if aa != nil && ab != nil && c.differs(aa, ab) {
		names := argNames(fa, aa)
		if names != nil && aa.Kind() == pickle.KindTuple && ab.Kind() == pickle.KindTuple && len(aa.Items()) == len(ab.Items()) {
			xa, xb := aa.Items(), ab.Items()
			for i := range xa {
				kids = append(kids, task{a: xa[i], b: xb[i], path: c.paths.child(path, names(i))})
			}
		} else {
			edge := callEdges(a.CallForm()).args
			kids = append(kids, task{a: aa, b: ab, path: c.paths.child(path, edge), differ: true})
		}
	}
	ka, kb := a.Kwargs(), b.Kwargs()
	if ka != nil || kb != nil {
		kids = append(kids, task{a: ka, b: kb, path: c.paths.child(path, ppath.Kwargs)})
	}
	return append(kids, c.opsDiff(a, b, path)...)
}

// opsDiff compares what was applied to two objects after creation (BUILD
// states, folded setstate calls, appends, setitems). A state that is a
// dict of attribute names, or cloudpickle's (dict, slotstate) pair, is
// compared attribute by attribute (path.attr).
//
// The operations are read as IDs (opList), a node made for an argument
// only where an entry or a task needs it (a million APPENDs on one list
// made a million nodes a side).
func (c *cmp) opsDiff(a, b *canon.Node, path pathRef) []task {
	oa, ob := opsOf(a), opsOf(b)
	if len(oa.ops) == 0 && len(ob.ops) == 0 {
		return nil
	}
	var kids []task
	attrsA, itemsA, appA, restA := splitOps(&oa)
	attrsB, itemsB, appB, restB := splitOps(&ob)
	if len(attrsA) > 0 || len(attrsB) > 0 {
		kids = append(kids, c.entries2(attrsA, attrsB, path, attrEdge, c.dictOrder(), nil, nil)...)
	}
	if len(itemsA) > 0 || len(itemsB) > 0 {
		// __setitem__ on an object (OrderedDict, defaultdict, ...): by key,
		// or, when a key is set twice, as a sequence of pairs
		if repeatsKey(c.ta, a, itemsA) || repeatsKey(c.tb, b, itemsB) {
			kids = append(kids, c.pairSeq(a, itemsA, b, itemsB, path)...)
		} else {
			kids = append(kids, c.entries2(opEntries(a, itemsA), opEntries(b, itemsB), path, keyEdge, setitemsOrder, nil, nil)...)
		}
	}
	if appA.len() > 0 || appB.len() > 0 {
		kids = append(kids, c.seq(appA, appB, path, itemsForm, nil, nil)...)
	}
	sameOp := func(i, j int) bool {
		x, y := restA[i], restB[j]
		if oa.name(x) != ob.name(y) || x.n != y.n {
			return false
		}
		ax, ay := oa.argsOf(x), ob.argsOf(y)
		for k := range ax {
			if !c.sameRefs(idRef(a, ax[k]), idRef(b, ay[k])) {
				return false
			}
		}
		return true
	}
	var offs []int64 // of B's BUILDs, made when first needed
	buildAt := func(off int64) int {
		if offs == nil {
			offs = buildOffsets(&ob)
		}
		k, _ := slices.BinarySearch(offs, off)
		return k
	}
	var ops []EditOp
	// (without the '=' steps, which give no entry: 700,000 equal BUILDs)
	alignEach(len(restA), len(restB), sameOp, false, func(o EditOp) { ops = append(ops, o) })
	for _, o := range ops {
		switch o.Kind {
		case '-':
			c.addAt(path, opEdge(oa.name(restA[o.A]), o.A), Entry{Kind: Removed, A: opShort(c, &oa, restA[o.A]), OffA: restA[o.A].offset()})
		case '+':
			c.addAt(path, opEdge(ob.name(restB[o.B]), o.B), Entry{Kind: Added, B: opShort(c, &ob, restB[o.B]), OffB: restB[o.B].offset()})
		case '~':
			xa, xb := restA[o.A], restB[o.B]
			if oa.name(xa) == ob.name(xb) && xa.n == xb.n {
				argsA, argsB := oa.argsOf(xa), ob.argsOf(xb)
				for i := range argsA {
					edge := opEdge(oa.name(xa), o.B) + ppath.Index(i)
					if oa.name(xa) == "build" && len(argsA) == 1 {
						// the first BUILD's state, then <build 1>, ... as pk trace names them
						edge = ppath.State
						if k := buildAt(xb.offset()); k > 0 {
							edge = ppath.Pseudo("build", k)
						}
					}
					kids = append(kids, task{a: idNode(a, argsA[i]), b: idNode(b, argsB[i]), path: c.paths.child(path, edge)})
				}
			} else {
				c.addAt(path, opEdge(ob.name(xb), o.B), Entry{Kind: Changed, A: opShort(c, &oa, xa), B: opShort(c, &ob, xb), OffA: xa.offset(), OffB: xb.offset()})
			}
		}
	}
	return kids
}

// sameRefs is cmp.same of two Refs (the zero Ref for none).
func (c *cmp) sameRefs(x, y canon.Ref) bool {
	if x.IsNil() || y.IsNil() {
		return x.IsNil() == y.IsNil()
	}
	eq, known := sameRef(c.ta, x, c.tb, y)
	return eq || !known
}

// opEntry is a __setitem__ pair of an object's operations, as IDs of its
// view (pickle.NoID for none): 12 bytes, where two Refs and an int took 40
// (700,000 SETITEMs: 28 MB a side, and the room of their doubling).
type opEntry struct {
	key, val pickle.ID
	pos      int32
}

// opEntries are es as entries of nodes of at's view.
func opEntries(at *canon.Node, es []opEntry) []canon.Entry {
	if len(es) == 0 {
		return nil
	}
	out := make([]canon.Entry, len(es))
	for i, e := range es {
		out[i] = canon.Entry{Key: idNode(at, e.key), Value: idNode(at, e.val), Pos: int(e.pos)}
	}
	return out
}

// repeatsKey reports whether two of the __setitem__ pairs es set equal
// keys. Keys of different fingerprints (not on or above a cycle) are
// different: only when two fingerprints are equal, or one cannot tell, are
// the exact keys compared (a million distinct keys made a string each).
func repeatsKey(t *fpTable, at *canon.Node, es []opEntry) bool {
	if len(es) < 2 {
		return false
	}
	fps := make(map[[16]byte]struct{}, min(len(es), 1024))
	for _, e := range es {
		fp, ok := t.keyRef(idRef(at, e.key))
		if _, twice := fps[fp]; twice || !ok {
			return repeatsExactKey(t, at, es)
		}
		fps[fp] = struct{}{}
	}
	return false
}

// repeatsExactKey is repeatsKey by the exact keys.
func repeatsExactKey(t *fpTable, at *canon.Node, es []opEntry) bool {
	seen := make(map[exKey]bool, min(len(es), 1024))
	for _, e := range es {
		k := exactKeyRef(t, idRef(at, e.key))
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// pairSeq compares the __setitem__ pairs of two objects that set a key
// more than once (700,000 SETITEMs of one key on an OrderedDict) as a
// sequence of (key, value) pairs, aligned as seq aligns items: matched by
// key they would pair the wrong values (the later pair replaces the
// earlier), an entry each (1,399,299 entries for one changed value; now
// one). A pair is named by its key as entries2 names it (root['k']); a run
// by its first pair's, with its count. a and b are the objects (their
// pairs' nodes are made of their views).
func (c *cmp) pairSeq(a *canon.Node, ia []opEntry, b *canon.Node, ib []opEntry, path pathRef) []task {
	var kids []task
	side := func(s byte) []opEntry {
		if s == 'a' {
			return ia
		}
		return ib
	}
	at := func(s byte) *canon.Node {
		if s == 'a' {
			return a
		}
		return b
	}
	t := func(s byte) *fpTable {
		if s == 'a' {
			return c.ta
		}
		return c.tb
	}
	eq := func(i, j int) bool {
		return c.sameRefs(idRef(a, ia[i].key), idRef(b, ib[j].key)) && c.sameRefs(idRef(a, ia[i].val), idRef(b, ib[j].val))
	}
	key := func(s byte, i int) ([16]byte, bool) {
		e := side(s)[i]
		k, ok1 := t(s).keyRef(idRef(at(s), e.key))
		v, ok2 := t(s).keyRef(idRef(at(s), e.val))
		return xxh3.Hash128(append(k[:], v[:]...)).Bytes(), ok1 && ok2
	}
	form := func(s byte) seqForm {
		es, n := side(s), at(s)
		return seqForm{
			item: func(i int) string { return keyEdge(int(es[i].pos), idNode(n, es[i].key)) },
			span: func(i, _ int) string { return keyEdge(int(es[i].pos), idNode(n, es[i].key)) },
		}
	}
	value := func(s byte, i int) *canon.Node { return idNode(at(s), side(s)[i].val) }
	keepEq := func(i, j int) bool { return sharedRef(idRef(a, ia[i].val)) || sharedRef(idRef(b, ib[j].val)) }
	for _, r := range alignRunsKeeping(len(ia), len(ib), eq, key, keepEq) {
		if r.N > 1 {
			f := form('b')
			if r.Kind == '-' {
				f = form('a')
			}
			if r.Kind != '~' {
				c.add(c.runEntryOf(c.entryPath(path), f, r, value))
				continue
			}
			rest := restRun(r)
			kids = append(kids, c.pairTask(a, ia[r.A], b, ib[r.B], path)...)
			e := c.runEntryOf(c.entryPath(path), f, rest, value)
			kids = append(kids, task{entry: &e})
			continue
		}
		switch r.Kind {
		case '-':
			e := ia[r.A]
			v := idNode(a, e.val)
			c.addAt(path, keyEdge(int(e.pos), idNode(a, e.key)), Entry{Kind: Removed, A: c.short(v), ValA: typed(v), SizeA: c.size(v, true), OffA: v.Offset()})
		case '+':
			e := ib[r.B]
			v := idNode(b, e.val)
			c.addAt(path, keyEdge(int(e.pos), idNode(b, e.key)), Entry{Kind: Added, B: c.short(v), ValB: typed(v), SizeB: c.size(v, false), OffB: v.Offset()})
		case '~':
			kids = append(kids, c.pairTask(a, ia[r.A], b, ib[r.B], path)...)
		case '=':
			// (alignRunsKeeping keeps only these)
			kids = append(kids, task{a: idNode(a, ia[r.A].val), b: idNode(b, ib[r.B].val), path: c.paths.child(path, keyEdge(int(ib[r.B].pos), idNode(b, ib[r.B].key)))})
		}
	}
	return kids
}

// pairTask compares two __setitem__ pairs aligned in place: their values
// under the key, when the keys are equal; else the pair of A removed and
// the pair of B added.
func (c *cmp) pairTask(a *canon.Node, ea opEntry, b *canon.Node, eb opEntry, path pathRef) []task {
	if c.sameRefs(idRef(a, ea.key), idRef(b, eb.key)) {
		return []task{{a: idNode(a, ea.val), b: idNode(b, eb.val), path: c.paths.child(path, keyEdge(int(eb.pos), idNode(b, eb.key))), differ: true}}
	}
	va, vb := idNode(a, ea.val), idNode(b, eb.val)
	ra := Entry{Path: c.pathOf(path, keyEdge(int(ea.pos), idNode(a, ea.key))), Kind: Removed, A: c.short(va), ValA: typed(va), SizeA: c.size(va, true), OffA: va.Offset()}
	rb := Entry{Path: c.pathOf(path, keyEdge(int(eb.pos), idNode(b, eb.key))), Kind: Added, B: c.short(vb), ValB: typed(vb), SizeB: c.size(vb, false), OffB: vb.Offset()}
	return []task{{entry: &ra}, {entry: &rb}}
}

// buildOffsets lists the offsets of the BUILDs among ops, in order.
func buildOffsets(l *opList) []int64 {
	n := 0
	for _, o := range l.ops {
		if l.name(o) == "build" {
			n++
		}
	}
	out := make([]int64, 0, n) // (sized: 700,000 BUILDs)
	for _, o := range l.ops {
		if l.name(o) == "build" {
			out = append(out, o.offset())
		}
	}
	slices.Sort(out)
	return out
}

// opShort renders operation o of l briefly.
func opShort(c *cmp, l *opList, o dop) string {
	var parts []string
	for _, a := range l.argsOf(o) {
		parts = append(parts, c.short(idNode(l.of, a)))
	}
	return l.name(o) + "(" + strings.Join(parts, ", ") + ")"
}

// splitOps pulls attribute-style states out of the operations ops of at: a
// BUILD or folded setstate whose state is a dict with str keys, or a pair
// (dict, dict) as cloudpickle and __slots__ objects write it. When two
// such states set one attribute (700,000 BUILDs of {'a': k}), the states
// stay operations, compared as a sequence: as attributes they would pair
// the wrong values (the later state replaces the earlier), an entry each.
func splitOps(l *opList) (attrs []canon.Entry, items []opEntry, appended seqItems, rest []dop) {
	attrs, items, appended, rest, twice := splitOpsAll(l, false)
	if twice {
		attrs, items, appended, rest, _ = splitOpsAll(l, true)
	}
	return attrs, items, appended, rest
}

// splitOpsAll is splitOps; with noAttrs, states stay operations. Without,
// it stops at the first attribute set twice (twice: the states must stay
// operations; 700,000 BUILDs of {'a': k} made the entries of every state
// first). rest is ops itself while every operation is one of rest (it is
// only read: 700,000 BUILDs were copied into it).
func splitOpsAll(l *opList, noAttrs bool) (attrs []canon.Entry, items []opEntry, appended seqItems, rest []dop, twice bool) {
	var seen map[string]bool
	at, ops := l.of, l.ops
	appended.of = at
	n, whole := 0, true // whole: rest is ops[:n]
	for i, o := range ops {
		args := l.argsOf(o)
		switch l.name(o) {
		case "setitems":
			if len(args)%2 == 0 {
				// numbered across the setitems, in pickle order (as pk trace)
				for i := 0; i+1 < len(args); i += 2 {
					// (the lists double past 256: 700,000 operations on one
					// object, which append's quarter steps copied five times)
					items = append(growLarge(items), opEntry{key: args[i], val: args[i+1], pos: int32(len(items))})
				}
				rest, whole = restSplit(rest, ops, n, whole)
				continue
			}
		case "append":
			if len(args) > 0 {
				appended.ids = append(reserveLarge(appended.ids, len(args)), args...)
				rest, whole = restSplit(rest, ops, n, whole)
				continue
			}
		}
		if name := l.name(o); (name == "build" || strings.HasSuffix(name, "setstate")) && len(args) == 1 && !noAttrs {
			st := idNode(at, args[0])
			es, ok := attrDict(st)
			if !ok && st.Kind() == pickle.KindTuple {
				items := st.Items()
				var all []canon.Entry
				ok = len(items) == 2
				for _, it := range items {
					if it.Kind() == pickle.KindNone {
						continue
					}
					es, good := attrDict(it)
					if !good {
						ok = false
						break
					}
					all = append(all, es...)
				}
				es = all
			}
			if ok {
				if seen == nil {
					seen = map[string]bool{}
				}
				for _, e := range es {
					k := e.Key.Str()
					if seen[k] {
						return nil, nil, seqItems{}, nil, true
					}
					seen[k] = true
				}
				if len(es) > 0 {
					attrs = append(reserveLarge(attrs, len(es)), es...)
				}
				rest, whole = restSplit(rest, ops, n, whole)
				continue
			}
		}
		if whole {
			n = i + 1
			continue
		}
		rest = append(growLarge(rest), o)
	}
	if whole && n > 0 {
		rest = ops[:n:n]
	}
	return attrs, items, appended, rest, false
}

// restSplit is splitOpsAll's rest when an operation that is not one of
// it is met: a copy of ops[:n] the first time.
func restSplit(rest, ops []dop, n int, whole bool) ([]dop, bool) {
	if whole && n > 0 {
		rest = append([]dop(nil), ops[:n]...)
	}
	return rest, false
}

func attrDict(n *canon.Node) ([]canon.Entry, bool) {
	if n.Kind() != pickle.KindDict {
		return nil, false
	}
	es := n.Entries()
	for _, e := range es {
		if e.Key.Kind() != pickle.KindStr {
			return nil, false
		}
	}
	return es, true
}

// short renders a node briefly, as a Python user would read it.
func (c *cmp) short(n *canon.Node) string { return shortValue(n, 80) }

// renderSome renders the first of n items (at most count, about max
// characters) and says how many were left out.
func renderSome(n, count, max int, render func(int) string) []string {
	var parts []string
	total := 0
	for i := 0; i < n; i++ {
		if total > max || i >= count {
			return append(parts, fmt.Sprintf("... %d more", n-i))
		}
		v := render(i)
		total += len(v) + 2
		parts = append(parts, v)
	}
	return parts
}

func shortValue(n *canon.Node, max int) string {
	if n == nil {
		return "<nothing>"
	}
	var s string
	switch n.Kind() {
	case pickle.KindList, pickle.KindTuple, pickle.KindSet, pickle.KindFrozenSet:
		items := n.Items()
		open, close := "[", "]"
		switch n.Kind() {
		case pickle.KindTuple:
			open, close = "(", ")"
		case pickle.KindSet:
			open, close = "{", "}"
		case pickle.KindFrozenSet:
			open, close = "frozenset({", "})"
		}
		parts := renderSome(len(items), 8, max, func(i int) string { return leafValue(items[i]) })
		if n.Kind() == pickle.KindTuple && len(items) == 1 {
			parts[0] += ","
		}
		s = open + strings.Join(parts, ", ") + close
	case pickle.KindDict:
		es := n.Entries()
		parts := renderSome(len(es), 6, max, func(i int) string { return leafValue(es[i].Key) + ": " + leafValue(es[i].Value) })
		s = "{" + strings.Join(parts, ", ") + "}"
	default:
		s = leafValue(n)
	}
	if len(s) > max+20 {
		s = s[:runeCut(s, max)] + "..."
	}
	return s
}

// runeCut returns the largest length of at most n at which s can be cut
// without splitting a UTF-8 sequence (a long str's rendering cut in the
// middle of a character printed bytes that are no UTF-8).
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func leafValue(n *canon.Node) string {
	switch n.Kind() {
	case pickle.KindList:
		return fmt.Sprintf("[...%d items]", n.NItems())
	case pickle.KindTuple:
		if n.NItems() == 0 {
			return "()"
		}
		return fmt.Sprintf("(...%d items)", n.NItems())
	case pickle.KindDict:
		return fmt.Sprintf("{...%d items}", n.NItems()/2)
	case pickle.KindSet, pickle.KindFrozenSet:
		return fmt.Sprintf("%s of %d", canon.KindName(n.Kind()), n.NItems())
	case pickle.KindCall:
		if r, ok := stdlibRepr(n); ok {
			return r
		}
		// f()()...: walk down the callables without recursion
		calls := 0
		f := n
		for f != nil && f.Kind() == pickle.KindCall && calls < 1000 {
			f = f.Func()
			calls++
		}
		name := "?"
		if f != nil && f.Kind() != pickle.KindCall {
			name = leafValue(f)
		}
		return name + strings.Repeat("(...)", min(calls, 3)) + map[bool]string{true: "...", false: ""}[calls > 3]
	case pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
		return payloadValue(n, 0)
	case pickle.KindFloat:
		return dis.FloatRepr(n.Float())
	case pickle.KindInt:
		// an int of millions of digits: its decimal form costs seconds
		// and shows nothing short
		if hugeInt(n) {
			x := n.Int()
			sign := ""
			if x.Sign() < 0 {
				sign = "-"
			}
			return fmt.Sprintf("<%sint of %s bits, 0x...%s>", sign, Thousands(int64(x.BitLen())), fmt.Sprintf("%08x", new(big.Int).And(new(big.Int).Abs(x), big.NewInt(0xffffffff)).Uint64()))
		}
	}
	return n.Value()
}

// hugeIntBits is the size from which an int is shown by its bit length
// and last hex digits, not in decimal (about 1,200 digits).
const hugeIntBits = 4096

// hugeInt reports whether n is an int shown so.
func hugeInt(n *canon.Node) bool {
	return n.Kind() == pickle.KindInt && n.IsBig() && n.Int().BitLen() > hugeIntBits
}

// payloadValue renders a str, bytes or bytearray node from byte offset
// from of its kept bytes (0: its start; past it, "..." stands for what is
// left out), cut at about 60 characters with its length when long.
func payloadValue(n *canon.Node, from int) string {
	v := payloadRepr(n.Kind(), n.Str()[from:])
	long := len(v) > 70 || n.Len() > int64(len(n.Str()))
	if long {
		v = v[:runeCut(v, 60)] + "..."
	}
	if long || from > 0 {
		v += fmt.Sprintf(" (%d bytes)", n.Len())
	}
	if from > 0 {
		v = "..." + v
	}
	return v
}

// payloadRepr is Python's repr of p as a str, bytes or bytearray (k).
func payloadRepr(k pickle.Kind, p string) string {
	switch k {
	case pickle.KindStr:
		return dis.StrRepr(p)
	case pickle.KindByteArray:
		return "bytearray(" + dis.BytesRepr(p) + ")"
	}
	return dis.BytesRepr(p)
}

// changedShort returns the short renderings of a changed pair (as
// cmp.short) and the note of where two str or bytes values first differ
// (firstDiff). When that place lies past what the renderings from the
// start show (a long value changed near its end: both showed the same
// first 60 characters), both are shown from a little before it, alike:
// "...'xxxxAyyyy...' (251 bytes)".
func (c *cmp) changedShort(a, b *canon.Node) (ra, rb, note string) {
	ra, rb, note = c.short(a), c.short(b), firstDiff(a, b)
	switch {
	case note == "" || a.Kind() != b.Kind():
		return
	case a.Kind() != pickle.KindStr && a.Kind() != pickle.KindBytes && a.Kind() != pickle.KindByteArray:
		return // (a huge int's note)
	}
	sa, sb := a.Str(), b.Str()
	off := commonPrefix(sa, sb)
	if off == len(sa) && off == len(sb) {
		return // (past the kept bytes of both: nothing to show there)
	}
	render := func(p string) string { return payloadRepr(a.Kind(), p) }
	if len(render(sa[:min(off+1, len(sa))])) <= 60 {
		return // (the first differing byte is shown)
	}
	// up to diffContext bytes before it, rendered in about twice as
	// many characters (escapes)
	from := off
	for from > 0 && off-from < diffContext && len(render(sa[from-1:off])) <= 2*diffContext {
		from--
	}
	if a.Kind() == pickle.KindStr {
		from = runeCut(sa, from)
	}
	return payloadValue(a, from), payloadValue(b, from), note
}

// commonPrefix is the length of the bytes a and b start with alike: where
// two payloads first differ (firstDiff's note, changedShort's window).
func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// diffContext is at most how many bytes before the first difference a
// long changed str or bytes value is shown from (changedShort).
const diffContext = 16

// firstDiff says where two str/bytes values first differ, or, of two huge
// ints shown alike (their sign, bit length and last 32 bits), their
// highest differing bit.
func firstDiff(a, b *canon.Node) string {
	switch a.Kind() {
	case pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
	case pickle.KindInt:
		if hugeInt(a) && hugeInt(b) && leafValue(a) == leafValue(b) {
			x := new(big.Int).Xor(new(big.Int).Abs(a.Int()), new(big.Int).Abs(b.Int()))
			return fmt.Sprintf("the highest bit that differs is bit %s, bit 0 the lowest", Thousands(int64(x.BitLen()-1)))
		}
		return ""
	default:
		return ""
	}
	sa, sb := a.Str(), b.Str()
	i := commonPrefix(sa, sb)
	if a.Len() != int64(len(sa)) || b.Len() != int64(len(sb)) {
		// a streamed payload: only its first bytes are kept
		if i < len(sa) && i < len(sb) {
			return bytesNote(int64(i), a.Len(), b.Len())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("lengths %s and %s bytes", Thousands(a.Len()), Thousands(b.Len()))
		}
		return fmt.Sprintf("bytes differ past offset %s of %s", Thousands(int64(i)), Thousands(a.Len()))
	}
	return bytesNote(int64(i), int64(len(sa)), int64(len(sb)))
}

// bytesNote is the one wording of where two payloads first differ: "bytes
// differ from offset 2,097,152 of 3,145,728" (of one length), "... of 22
// and 23" (of two).
func bytesNote(off, la, lb int64) string {
	of := Thousands(la)
	if la != lb {
		of += " and " + Thousands(lb)
	}
	if off == min(la, lb) && la != lb {
		return fmt.Sprintf("bytes differ from offset %s, where the shorter ends, of %s", Thousands(off), of)
	}
	return fmt.Sprintf("bytes differ from offset %s of %s", Thousands(off), of)
}

// size returns the stream bytes of a node's subtree in the ownership tree
// (what building it took; shared objects count where they were built), or
// the payload length of a str/bytes value.
func (c *cmp) size(n *canon.Node, sideA bool) int64 {
	switch n.Kind() {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat:
		return 0
	case pickle.KindStr, pickle.KindBytes, pickle.KindByteArray:
		return n.Len()
	}
	// (a store whose sides are out, held through the walk without them:
	// the size is made when the walk is done, sizeEntries)
	if id, ok := n.StreamID(); ok {
		if s := n.View().Store(); s.SidesAreOut() {
			c.sizesLater = append(c.sizesLater, laterSize{s, id})
			return int64(-len(c.sizesLater))
		}
	}
	return n.Owned()
}
