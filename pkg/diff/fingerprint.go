package diff

import (
	"encoding/binary"
	"slices"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/internal/spill"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/zeebo/xxh3"
)

// Fingerprints: which subtrees are equal, in time linear in the graph.
//
// The walk asks, for every pair it meets, whether the two subtrees are
// equal (their canonical forms are), and it aligns sequences by that
// equality. canon's Node.Digest answers exactly, but it encodes the whole
// subtree below the node each time it is asked for a node it has not
// seen, so along a chain of n nested objects it costs n²/2 (a million
// nested lists: hours). An fpTable answers from one pass over the view,
// bottom up (no recursion): every node gets a fingerprint, a hash of its
// kind, its counts and its children's fingerprints in canonical order (the
// order canon encodes them in), so equal subtrees of a tree have equal
// fingerprints and the fingerprint of a node costs its own children only.
//
// A fingerprint is the canonical form's equality exactly when the
// canonical encoding has no back-reference: when no object is reached
// twice from the node (the encoding writes a second visit as a reference
// to the first, which a hash of the children's hashes cannot tell from a
// copy). The pass marks a node clean when it can tell that: every object
// below it was first reached from it and is referenced once in the whole
// view, and it is on no cycle. Two clean nodes are equal exactly when
// their fingerprints are. For nodes that are not clean, different
// fingerprints still prove a difference (the fingerprint is a function of
// the tree the subgraph unfolds to, and equal canonical forms unfold to
// equal trees) except on or above a cycle (marked cyclic: their
// fingerprints depend on where the pass entered the cycle); equal
// fingerprints there, and anything cyclic, are decided by a walk of both
// nodes in step (lockstep.go), which keeps what it finds for the next
// question.
//
// Nodes that are no container (a bytearray, a buffer, a tracker, a
// persistent id by string, a scalar that operations were applied to) take
// canon's Digest as their fingerprint: it encodes that node and its
// operations only.

const (
	fpClean  = 1 << iota // no object reached twice below it: the fingerprint is exact
	fpCyclic             // on or above a cycle: the fingerprint proves nothing
	fpDone               // the fingerprint is computed
	fpOnce               // referenced once (a root counting one): the walk meets it once
	fpPure               // a pure node (its fingerprint its embedding's)
	fpRef2               // referenced twice or more (from the view's nodes, a root counting one)
	fpHas                // the node has its entry (the pass reached it)
	// fpTuple: fps holds the fingerprint of this pure tuple (tupleFP),
	// with or without an entry (a pure node is a leaf of the passes: its
	// items get no entry)
	fpTuple
)

// fpTable holds the fingerprints of one view's nodes reachable from the
// roots it was built from: by node ID, each node's fingerprint, flags
// and the node it was first reached from (13 bytes a node of the view;
// an index by ID and a record of 24 bytes a node reached took 28, and
// 128-bit fingerprints 21).
//
// A fingerprint is 64 bits: two different subtrees that a walk compares
// share one with a chance of 2^-64 (XXH3 is no cryptographic hash with
// either width: what a collision can do is said at sum); 128 bits held
// 8 bytes more a node a side, 30-45 MB on the deep cost shapes.
type fpTable struct {
	algo  canon.Algo
	fps   []uint64
	flags []uint8
	// parent is the node's first parent, by ID (-1: a root), while
	// reuseFPTable's passes run; the passes of get after them keep theirs
	// in later, for the pass only (what a pass's end reads: its nodes and
	// their parents up to its root). 4 bytes a node a side less through
	// the walk.
	parent []int32
	later  map[int32]int32
	// order is the IDs the pass under way gave entries, in order (a
	// node after the one it was first reached from), for its end (but
	// reuseFPTable's first pass's: unordered); empty between passes
	order []pickle.ID
	// unordered is set while the first of reuseFPTable's passes runs: it
	// gives its nodes no place in order (reuseFPTable)
	unordered bool
	buf       []byte
	hdrs      []byte // headers of the nodes on the pass's stack
	// stack is the pass's stack, kept between passes: get builds from
	// every node the first pass did not reach (a million effects are a
	// million passes of one node each); kids the children of its frames
	stack frameStack
	kids  []pickle.ID
	// kept holds, for each frame of a dict of two entries or more on the
	// pass's stack (frameStack: kept), in stack order, where its children and
	// header as visit found them start in keptKids and keptHdrs: its
	// entries are then not deduplicated and sorted again (canon's
	// dictEntries) when it is done. x = {'a': x, 'b': (x,)} 400,000 times
	// sorted every dict twice a side in this pass, a third of the pass.
	// Up to keptMax children at a time (a nesting of such dicts keeps
	// about 20 bytes a level; past that its frames read them again).
	kept     []keptAt
	keptKids []pickle.ID
	keptHdrs []byte
	// tupleFP's stack, items and what it hashes
	tstack, titems []pickle.ID
	tbuf           []byte
	// lock is this side's part in lockstep walks (lockstep.go)
	lock lockState
}

func newFPTable(algo canon.Algo, root *canon.Node) *fpTable {
	return reuseFPTable(nil, algo, root, effects{})
}

// reuseFPTable is newFPTable in t's memory when t is not nil and small (a
// stream of a file of many), over root and the effects eff.
func reuseFPTable(t *fpTable, algo canon.Algo, root *canon.Node, eff effects) *fpTable {
	if t == nil || t.algo != algo || t.n() > 1<<16 {
		t = &fpTable{algo: algo}
	} else {
		clear(t.flags)
		t.hdrs = t.hdrs[:0]
		t.lock.peer = nil // (its answers were about the last views)
	}
	// sized once for the view's IDs: the passes reach most of its nodes
	// (doubling from 64 allocated and cleared twice the table again, and
	// copied it)
	v := eff.v
	if root != nil {
		v = root.Ref().View()
	}
	nc := 0
	if v != nil {
		if nc = v.NodeCount(); t.n() < nc {
			t.resize(nc)
		}
	}
	if len(t.parent) < t.n() || t.n() == 0 {
		t.parent = widened[int32](nil, t.n()) // (dropped by the last use of t)
	}
	t.later = nil
	// The first pass gives its nodes no place in order: they are the
	// nodes with an entry when it ends (the table was empty), found by a
	// scan of the flags, where order took 4 bytes a node of the view
	// beside the table while this side's passes ran (the peak of some
	// deep cost shapes: cycle_objects diff changed, building B's table)
	t.order, t.unordered = nil, true
	if root != nil {
		t.build(root.Ref())
	}
	t.unordered = false
	// (each pass's order is let go at its end: held for every pass, it
	// was 4 bytes a node the effects reach, a million discarded calls 8
	// MB a side at this pass's peak)
	for i := range eff.len() {
		t.build(eff.ref(i))
	}
	// met once by the walk: referenced once. Its one referrer is expanded
	// at most once: a node the walk can meet twice is recorded, and met
	// again it is not expanded (compare: the pair is known, or an alias,
	// or the path it was first met at), and a node met once is expanded
	// once; a pure node, which may be met twice, has no object below it
	// (and its items have no entry of these passes). Not "from a node
	// reached once" too: below a ring's first node (referenced by the root
	// and by the ring's last) every node of the ring was recorded, 12
	// bytes a node (cycle_dict: 23 MB).
	// (the nodes of every pass here: all with an entry)
	for id, f := range t.flags {
		if f&(fpHas|fpRef2) == fpHas {
			t.flags[id] |= fpOnce
		}
	}
	t.order, t.parent = nil, nil
	return t
}

// fpOut is a table's fingerprints and flags while they are in temporary
// files (out).
type fpOut struct{ fps, flags *spill.File }

// out puts the table's fingerprints and flags in temporary files while
// the other side's table is made (cmp.stream), which reads nothing of this
// one: 9 bytes a node that B's pass held beside its own at its peak. nil
// when they could not be written (they stay in).
func (t *fpTable) out() *fpOut {
	fps, err := spill.Out(t.fps, "")
	if err != nil {
		return nil
	}
	flags, err := spill.Out(t.flags, "")
	if err != nil {
		fps.Close()
		return nil
	}
	t.fps, t.flags = nil, nil
	return &fpOut{fps, flags}
}

// in brings back what out put out (nothing for nil).
func (t *fpTable) in(o *fpOut) error {
	if o == nil {
		return nil
	}
	fps, err := spill.In[uint64](o.fps)
	if err != nil {
		o.flags.Close()
		return err
	}
	flags, err := spill.In[uint8](o.flags)
	if err != nil {
		return err
	}
	t.fps, t.flags = fps, flags
	return nil
}

// room gives the table room for ID i (true, for use in conditions).
func (t *fpTable) room(i pickle.ID) bool {
	if int(i) >= t.n() {
		t.resize(max(int(i)+1, 2*t.n()))
	}
	return true
}

// parentOf is the node i was first reached from (-1: a root), in the
// pass under way.
func (t *fpTable) parentOf(i int32) int32 {
	if t.parent != nil {
		return t.parent[i]
	}
	return t.later[i]
}

// n is the number of IDs the table has room for.
func (t *fpTable) n() int { return len(t.flags) }

// resize gives the table room for n IDs (more than it has).
func (t *fpTable) resize(n int) {
	if t.n() == 0 {
		t.fps, t.flags, t.parent = widened(t.fps, n), widened(t.flags, n), widened(t.parent, n)
		return
	}
	t.fps = widened(t.fps, n)
	t.flags = widened(t.flags, n)
	if t.parent != nil {
		t.parent = widened(t.parent, n)
	}
}

// widened returns a copy of s of length n (n >= len(s)), zero past s, in
// huge pages when it is large (huge.AdviseLarge: a pass reaches most of a
// view's nodes, in no order the table's pages follow).
func widened[T any](s []T, n int) []T { return grow.To(s, n)[:n] }

// once reports whether the walk can meet n only once (its pairs need no
// record against cycles and sharing). Nodes the pass reached later, from
// get, are not.
func (t *fpTable) once(n *canon.Node) bool { return t.flags[t.get(n)]&fpOnce != 0 }

// has reports whether node n has its entry.
func (t *fpTable) has(n pickle.ID) bool {
	return int(n) < t.n() && t.flags[n]&fpHas != 0
}

// add gives n its entry, first reached from parent (-1: a root).
func (t *fpTable) add(n canon.Ref, parent int32) int32 {
	id := int(n.ID())
	if id >= t.n() {
		t.resize(max(id+1, 2*t.n()))
	}
	t.flags[id] = fpHas | t.flags[id]&fpTuple
	if t.parent != nil {
		t.parent[id] = parent
	} else {
		if t.later == nil {
			t.later = map[int32]int32{}
		}
		t.later[int32(id)] = parent
	}
	if !t.unordered {
		t.order = append(grow.Room(t.order, 1), pickle.ID(id))
	}
	return int32(id)
}

// ref counts one more reference to node i (up to two).
func (t *fpTable) ref(i pickle.ID) {
	t.flags[i] |= fpRef2
}

// sum is the fingerprint of a container: XXH3-64 of its header and its
// children's fingerprints (fast: the pass hashes every node of both views;
// a collision, which adversarial input could make, can only hide where two
// inputs whose digests differ differ: the verdict is the digests').
func (t *fpTable) sum(b []byte) uint64 { return xxh3.Hash(b) }

// fpKey is a fingerprint as the alignments' keys hold it.
func fpKey(fp uint64) (k [16]byte) {
	binary.LittleEndian.PutUint64(k[:], fp)
	return k
}

// growLarge is grow for a slice of 256 items or more, else s (append's
// own growth: a list made for each of a million nodes stays small).
func growLarge[T any](s []T) []T {
	if len(s) < 256 {
		return s
	}
	return grow.Room(s, 1)
}

// reserveLarge is grow.Room(s, n) once s holds 256 items or more, else s.
func reserveLarge[T any](s []T, n int) []T {
	if len(s) < 256 {
		return s
	}
	return grow.Room(s, n)
}

// leafFP gives a pure node, or an object that is no container, its
// fingerprint. A pure tuple's is tupleFP's; another pure node's is its
// embedding in its parent's encoding (canon.Node.AppendPure: an inline
// scalar, or 'H' and the digest of a pure frozenset or dynamic global),
// when shorter than 8 bytes its length and bytes, else XXH3-64 of it; an
// object's is canon's Digest, cut to 8 bytes. (Apart from the Merkle ones
// by what was hashed: an embedding, an object's starting 'N', the Merkle
// and pure tuple inputs a prefix of their own.)
func (t *fpTable) leafFP(n canon.Ref) uint64 {
	if n.Pure() {
		if n.PureTuple() {
			return t.tupleFP(n)
		}
		return t.scalarFP(n)
	}
	var out [8]byte
	copy(out[:], n.Digest())
	return binary.LittleEndian.Uint64(out[:])
}

// scalarFP is leafFP of a pure node that is no pure tuple: its embedding,
// or XXH3-64 of it.
func (t *fpTable) scalarFP(n canon.Ref) uint64 {
	b := n.AppendPure(t.buf[:0])
	t.buf = b
	if len(b) < 8 {
		var out [8]byte
		out[0] = byte(len(b))
		copy(out[1:], b)
		return binary.LittleEndian.Uint64(out[:])
	}
	return xxh3.Hash(b)
}

// pureTag starts what a pure tuple's fingerprint hashes.
const pureTag = "\xff\xfdpkdiff-tuple"

// tupleFP is the fingerprint of pure tuple n (canon.Ref.PureTuple):
// XXH3-64 of its length and its items' fingerprints (a pure tuple's own,
// else scalarFP), computed once a node, with an explicit stack (no
// recursion) as canon's pureDigest does. Its canonical embedding is a
// function of the same (canon's pureBody: 'T', the length, the items'
// embeddings), so equal embeddings give equal fingerprints; pure values
// have no identity, so no back-reference can hide below it. AppendPure
// computed the digest of every pure tuple below n and the view kept each
// (36 bytes a tuple a side, 55 MB on a nesting of a million).
func (t *fpTable) tupleFP(n canon.Ref) uint64 {
	if i := n.ID(); int(i) < t.n() && t.flags[i]&fpTuple != 0 {
		return t.fps[i]
	}
	stack := append(t.tstack[:0], n.ID())
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		t.room(x)
		if t.flags[x]&fpTuple != 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		r := n.Under(x)
		items := r.ItemIDs(t.titems[:0])
		t.titems = items
		ready := true
		for _, c := range items {
			if c >= 0 && t.room(c) && t.flags[c]&fpTuple == 0 {
				if cr := n.Under(c); cr.PureTuple() {
					stack = append(stack, c)
					ready = false
				}
			}
		}
		if !ready {
			continue
		}
		b := append(t.tbuf[:0], pureTag...)
		b = binary.AppendUvarint(b, uint64(len(items)))
		for _, c := range items {
			switch {
			case c < 0:
				b = append(b, nilFP[:]...)
			case t.flags[c]&fpTuple != 0:
				b = binary.LittleEndian.AppendUint64(b, t.fps[c])
			default:
				b = binary.LittleEndian.AppendUint64(b, t.scalarFP(n.Under(c)))
			}
		}
		t.tbuf = b
		t.fps[x] = xxh3.Hash(b)
		t.flags[x] |= fpTuple
		stack = stack[:len(stack)-1]
	}
	t.tstack = stack[:0]
	if cap(t.tstack)+cap(t.titems)+cap(t.tbuf) > 1<<14 {
		t.tstack, t.titems, t.tbuf = nil, nil, nil
	}
	return t.fps[n.ID()]
}

// children appends to kids the IDs of what canon encodes below n, in its
// order (pickle.NoID for none), and returns them with a header that with
// the children's fingerprints determines n's encoding (kind, counts, call
// form, operation names); ok is false for an object that is no container
// (its Digest is its fingerprint). It makes no node for the children.
func children(n canon.Ref, hdr []byte, kids []pickle.ID) (_ []pickle.ID, _ []byte, ok bool) {
	at := len(kids)
	hdr = append(hdr, byte(n.Kind()))
	switch n.Kind() {
	case pickle.KindList, pickle.KindTuple, pickle.KindSet, pickle.KindFrozenSet:
		kids = n.ItemIDs(kids)
	case pickle.KindPersID:
		if n.NItems() == 0 {
			return kids, hdr, false
		}
		kids = n.ItemIDs(kids)
	case pickle.KindGlobal:
		if n.Flags()&pickle.FlagDynamic == 0 {
			return kids, hdr, false
		}
		kids = n.ItemIDs(kids)
	case pickle.KindDict:
		kids = n.EntryIDs(kids)
	case pickle.KindCall:
		hdr = append(hdr, n.CallForm()...)
		kids = append(kids, n.FuncID(), n.ArgsID())
		if kw := n.KwargsID(); kw != pickle.NoID {
			hdr = append(hdr, 'k')
			kids = append(kids, kw)
		}
	default:
		return kids, hdr, false
	}
	hdr = binary.AppendUvarint(hdr, uint64(len(kids)-at))
	if n.EachOp(func(i, nops int, name string, _ int64, args []pickle.ID) {
		if i == 0 {
			hdr = binary.AppendUvarint(hdr, uint64(nops))
		}
		hdr = binary.AppendUvarint(hdr, uint64(len(name)))
		hdr = append(hdr, name...)
		hdr = binary.AppendUvarint(hdr, uint64(len(args)))
		kids = append(kids, args...)
	}) == 0 {
		hdr = binary.AppendUvarint(hdr, 0)
	}
	return kids, hdr, true
}

// idOf is n's ID, pickle.NoID for nil.
func idOf(n *canon.Node) pickle.ID {
	if n == nil {
		return pickle.NoID
	}
	return n.ID()
}

// frameStack is the pass's stack of nodes whose children are not all
// done. A frame's children not yet visited are the end of the kids arena
// while it is on top, the next one last (the frames above it took theirs
// when popped): fpTable.kids[kb:]; when they are done, its children and
// header are read again for its fingerprint (children is cheap, and linear
// in them), so that a frame down a deep nesting holds no header and no
// child already visited. What a frame found so far (clean: every object
// child was first reached from it and is clean; cyc: a child is on the
// stack or cyclic) is in its node's fpClean and fpCyclic flags, which no
// one reads before the node is done.
//
// A frame is its node, and the frames below it are the nodes it was first
// reached from (fpTable.parentOf: a frame is pushed when its node is
// visited from the frame on top), so the stack holds only its top and
// depth: down a nesting of 3 million levels (nest_reduce) the pass held
// their IDs beside the parents, 12 MB at B's pass, the diff's peak with
// its stores. A frame is kept when it is fpTable.kept's last (keptAt.id:
// its children and header are there). Its kb is held run by run: down a
// nesting through last children (a ring of objects, o.a = next: 1.5
// million frames deep for 500,000 objects) every frame has the kb of the
// one below it, where a frame of 12 bytes (its ID, kb and flags) took
// 18 MB at the pass's peak.
type frameStack struct {
	top  int32 // the frame on top (when n > 0)
	n    int
	runs chunks[kbRun]
}

// kbRun is n frames in a row with the same kb.
type kbRun struct{ kb, n int32 }

func (s *frameStack) len() int { return s.n }

func (s *frameStack) push(i, kb int32) {
	s.top = i
	s.n++
	if r := s.runs.top(); s.runs.n > 0 && r.kb == kb {
		r.n++
		return
	}
	s.runs.push(kbRun{kb: kb, n: 1})
}

// peek is the frame on top (there is one): its node and kb.
func (s *frameStack) peek() (i, kb int32) { return s.top, s.runs.top().kb }

// pop pops the frame on top; below is the frame under it, the node it
// was first reached from (-1 for the pass's root).
func (s *frameStack) pop(below int32) {
	s.n--
	s.top = below
	if r := s.runs.top(); r.n > 1 {
		r.n--
		return
	}
	s.runs.pop()
}

// drop lets every block go while the stack is empty (a pass down a deep
// nesting leaves tens of MB that the walk would hold), else keeps them for
// the next pass.
func (s *frameStack) drop() { s.runs.drop() }

// keptAt is where kept frame id's children and header start in
// fpTable.keptKids and keptHdrs.
type keptAt struct{ id, kids, hdr int32 }

// keptMax bounds fpTable.keptKids (4 MB).
const keptMax = 1 << 20

// chunks is a stack in blocks of chunkLen: as one slice doubling as it
// grew it held up to twice its items, and the old copy beside the new
// while it grew.
type chunks[T any] struct {
	blocks [][]T // full but the last; a block past it kept, empty
	n      int
}

const chunkLen = 1 << 14

func (s *chunks[T]) push(x T) {
	k := s.n / chunkLen
	switch {
	case k == len(s.blocks) && k == 0:
		s.blocks = append(s.blocks, nil)
	case k == len(s.blocks):
		s.blocks = append(s.blocks, make([]T, 0, chunkLen))
	}
	if k == 0 {
		s.blocks[0] = grow.Room(s.blocks[0], 1) // (the first grown to a block: most passes are shallow)
	}
	s.blocks[k] = append(s.blocks[k], x)
	s.n++
}

// top is the last item (there is one).
func (s *chunks[T]) top() *T {
	if s.n == 0 {
		return nil
	}
	b := s.blocks[(s.n-1)/chunkLen]
	return &b[len(b)-1]
}

func (s *chunks[T]) pop() {
	s.n--
	k := s.n / chunkLen
	s.blocks[k] = s.blocks[k][:len(s.blocks[k])-1]
	if len(s.blocks) > k+2 {
		s.keep(k + 2) // (one empty block kept for the next push)
	}
}

// keep keeps the first k blocks and lets the others go.
func (s *chunks[T]) keep(k int) {
	clear(s.blocks[k:]) // (a block past the slice's length is still held)
	s.blocks = s.blocks[:k]
}

// drop lets the blocks go when they are large: more than one, or one
// grown to a whole block (the stack is empty).
func (s *chunks[T]) drop() {
	if len(s.blocks) > 1 || len(s.blocks) == 1 && cap(s.blocks[0]) == chunkLen {
		s.keep(0)
	}
}

var nilFP = [8]byte{'n', 'i', 'l'}

// merkleTag starts what a container's fingerprint hashes (before its
// header).
const merkleTag = "\xff\xfepkdiff-merkle"

// build runs the pass from root: depth first with an explicit stack,
// fingerprints computed when a node's children are done; then the nodes
// referenced more than once make the nodes they were first reached from,
// and those above, not clean. The children of the nodes on the stack that
// are still to be visited are held as IDs in one arena (t.kids), a node
// made for each only while it is visited.
func (t *fpTable) build(root canon.Ref) {
	if i := root.ID(); t.has(i) {
		t.ref(i)
		return
	}
	stack := &t.stack
	defer func() {
		stack.drop()
		t.kids, t.hdrs, t.buf = t.kids[:0], t.hdrs[:0], t.buf[:0]
		if cap(t.kids)+cap(t.hdrs)+cap(t.buf) > 1<<14 {
			t.kids, t.hdrs, t.buf = nil, nil, nil
		}
		t.kept, t.keptKids, t.keptHdrs = t.kept[:0], t.keptKids[:0], t.keptHdrs[:0]
		if cap(t.kept)+cap(t.keptKids)+cap(t.keptHdrs) > 1<<14 {
			t.kept, t.keptKids, t.keptHdrs = nil, nil, nil
		}
	}()
	// visit gives n a slot, and a frame when it is an object with children
	visit := func(n canon.Ref, parent int32) {
		i := t.add(n, parent)
		if n.Pure() {
			t.fps[i] = t.leafFP(n)
			t.flags[i] |= fpClean | fpDone | fpPure
			return
		}
		kat := len(t.kids)
		// (the arena grows by doubling: append's growth of a large slice,
		// 1.25x, copies it many times down a deep nesting)
		t.kids = grow.Room(t.kids, 16)
		kids, hdrs, ok := children(n, t.hdrs[:0], t.kids)
		t.hdrs = hdrs[:0] // (scratch: read again when the node is done)
		if !ok {
			t.kids = kids[:kat]
			t.fps[i] = t.leafFP(n)
			t.flags[i] |= fpDone
			if !n.HasOps() {
				t.flags[i] |= fpClean
			}
			return
		}
		kept := n.Kind() == pickle.KindDict && len(kids)-kat >= 4 && len(t.keptKids)+len(kids)-kat <= keptMax
		if kept {
			t.kept = append(t.kept, keptAt{i, int32(len(t.keptKids)), int32(len(t.keptHdrs))})
			t.keptKids = append(t.keptKids, kids[kat:]...)
			t.keptHdrs = append(t.keptHdrs, hdrs...)
		}
		slices.Reverse(kids[kat:])
		t.kids = kids
		t.flags[i] |= fpClean // (what the frame found so far: frameStack)
		stack.push(i, int32(kat))
	}
	visit(root, -1)
	for stack.len() > 0 {
		fi, kb := stack.peek()
		fkept := len(t.kept) > 0 && t.kept[len(t.kept)-1].id == fi
		if len(t.kids) > int(kb) {
			c := t.kids[len(t.kids)-1]
			t.kids = t.kids[:len(t.kids)-1]
			if c < 0 {
				continue
			}
			if t.has(c) {
				t.ref(c)
				if fl := t.flags[c]; fl&fpPure != 0 {
					continue
				} else if fl&fpDone == 0 || fl&fpCyclic != 0 {
					t.flags[fi] |= fpCyclic // on the stack: a cycle
				}
				t.flags[fi] &^= fpClean // reached before: maybe shared below here
				continue
			}
			visit(root.Under(c), fi)
			continue
		}
		// all children done (or on the stack: cyclic); its children and
		// header again, in the arenas' room past the frames' (the kids of
		// the frames below it are t.kids[:kb], untouched)
		var all, kids []pickle.ID
		var hdr []byte
		var at keptAt
		if fkept {
			at = t.kept[len(t.kept)-1]
			t.kept = t.kept[:len(t.kept)-1]
			all, kids, hdr = t.kids, t.keptKids[at.kids:], t.keptHdrs[at.hdr:]
		} else {
			all, hdr, _ = children(root.Under(pickle.ID(fi)), t.hdrs[:0], t.kids)
			kids = all[kb:]
		}
		// (sized at once: the object of a million operations has a
		// million children)
		b := slices.Grow(t.buf[:0], len(merkleTag)+len(hdr)+len(nilFP)*len(kids))
		b = append(b, merkleTag...)
		b = append(b, hdr...)
		cyc, clean := t.flags[fi]&fpCyclic != 0, t.flags[fi]&fpClean != 0
		for _, c := range kids {
			if c < 0 {
				b = append(b, nilFP[:]...)
				continue
			}
			fl := t.flags[c]
			if fl&fpDone == 0 {
				b = append(b, "cycle"...)
				cyc = true
				continue
			}
			b = binary.LittleEndian.AppendUint64(b, t.fps[c])
			cyc = cyc || fl&fpCyclic != 0
			clean = clean && fl&fpClean != 0
		}
		if fkept {
			t.buf, t.kids = b, all[:kb]
			t.keptKids, t.keptHdrs = t.keptKids[:at.kids], t.keptHdrs[:at.hdr]
		} else {
			t.buf, t.hdrs, t.kids = b, hdr[:0], all[:kb]
		}
		t.fps[fi] = t.sum(b)
		t.flags[fi] = t.flags[fi]&^(fpCyclic|fpClean) | fpDone
		if cyc {
			t.flags[fi] |= fpCyclic
		} else if clean {
			t.flags[fi] |= fpClean
		}
		stack.pop(t.parentOf(fi))
	}
	// an object referenced twice: what it was first reached from, and
	// everything above that, may reach it twice
	unclean := func(i pickle.ID) {
		for p := t.parentOf(int32(i)); p >= 0 && t.flags[p]&fpClean != 0; p = t.parentOf(p) {
			t.flags[p] &^= fpClean
		}
	}
	if t.unordered {
		// (the first pass: its nodes are those with an entry; the order in
		// which the chains are cleared changes nothing, as a node not clean
		// has no clean node above it)
		for i, f := range t.flags {
			if f&(fpHas|fpRef2) == fpHas|fpRef2 {
				unclean(pickle.ID(i))
			}
		}
		return
	}
	for _, i := range t.order {
		if t.flags[i]&fpRef2 != 0 {
			unclean(i)
		}
	}
	t.order = t.order[:0]
}

// get returns n's ID once it has its entry, building from n when the
// pass has not reached it.
func (t *fpTable) get(n *canon.Node) pickle.ID { return t.getRef(n.Ref()) }

// getRef is get of a Ref.
func (t *fpTable) getRef(n canon.Ref) pickle.ID {
	i := n.ID()
	if !t.has(i) {
		t.build(n)
		// (the order and parents of a pass after reuseFPTable's serve only it)
		if cap(t.order) > 1<<14 {
			t.order = nil
		}
		if len(t.later) > 1<<10 {
			t.later = nil
		} else {
			clear(t.later)
		}
	}
	return i
}

// same reports whether the subtrees at a (of the view of ta) and b (of
// tb) are equal, as their canonical digests would say: from their
// fingerprints where those decide, else from lockstep; known is false
// when the lockstep walks have spent their budget (lockBudget: then the
// walk goes into the pair, and alignments take it as equal).
func same(ta *fpTable, a *canon.Node, tb *fpTable, b *canon.Node) (eq, known bool) {
	if a == nil || b == nil {
		return a == b, true
	}
	return sameRef(ta, a.Ref(), tb, b.Ref())
}

// sameRef is same of two Refs, neither of them none.
func sameRef(ta *fpTable, a canon.Ref, tb *fpTable, b canon.Ref) (eq, known bool) {
	ia, ib := ta.getRef(a), tb.getRef(b)
	fa, fb := ta.flags[ia], tb.flags[ib]
	cyc := (fa|fb)&fpCyclic != 0
	if ta.fps[ia] != tb.fps[ib] {
		if !cyc {
			return false, true
		}
	} else if !cyc && fa&fb&fpClean != 0 {
		return true, true
	}
	return lockstep(ta, a, tb, b)
}

// key is n's fingerprint when a different one proves a different subtree
// (not on or above a cycle), for AlignRunsKeyed.
func (t *fpTable) key(n *canon.Node) ([16]byte, bool) {
	if n == nil {
		return [16]byte{}, false
	}
	return t.keyRef(n.Ref())
}

// keyRef is key of a Ref (none: no key).
func (t *fpTable) keyRef(n canon.Ref) ([16]byte, bool) {
	if n.IsNil() {
		return [16]byte{}, false
	}
	i := t.getRef(n)
	return fpKey(t.fps[i]), t.flags[i]&fpCyclic == 0
}

// exKey is a key equal for two nodes exactly when their canonical forms
// are (set elements, dict keys): the fingerprint of a pure value, canon's
// Digest of an object (obj, after a 'D'). A pure value's key makes no
// string (a dict of a million keys made one of 16 bytes for each).
type exKey struct {
	fp  uint64
	obj string
}

// exactKey is n's exKey.
func exactKey(t *fpTable, n *canon.Node) exKey { return exactKeyRef(t, n.Ref()) }

// exactKeyRef is exactKey of a Ref.
func exactKeyRef(t *fpTable, n canon.Ref) exKey {
	if n.Pure() {
		return exKey{fp: t.fps[t.getRef(n)]}
	}
	return exKey{obj: "D" + string(n.Digest())}
}
