package write

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unsafe"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/huge"
	"github.com/pk-tools/pk/pkg/pickle"
)

// Placeholder is the text written where the view has a placeholder
// (co_filename, a cloudpickle function's __file__).
const Placeholder = "<pk-canon>"

// MaxDepth bounds the nesting of the output (objects inside objects): the
// writer recurses, and Go cannot recover from running out of stack.
const MaxDepth = 20000

// deepReason is the refusal of a stream nested past MaxDepth.
var deepReason = fmt.Sprintf("nested more than %d levels deep: pk canon does not write it", MaxDepth)

// tooDeep reports whether a stream's store holds a node that no path from
// its result, the calls its result does not reach (the effects, which the
// writer writes first) and what it popped or left reaches in fewer than
// 2 x MaxDepth steps (a breadth-first walk), and the offset of the first
// node it found past MaxDepth:
// the writer, whose nesting on the way to a node is at least the length of
// a path to it, would refuse it after the view and its digest were made
// (a million nested lists: that is most of what pk canon spends on them).
// Deeper than MaxDepth but within twice it is left to the writer's own
// count, which the view's rewritten nodes may make a little shorter.
func tooDeep(s *pickle.Store) (int64, bool) {
	if !mayBeTooDeep(s) {
		return 0, false
	}
	n := s.Len()
	// each node is queued once at most: room for all of them at once (grown
	// by append, the queue of a 5 MB cloudpickle state allocated 17 MB);
	// a bit a node says it was queued
	w := depthWalk{s: s, n: n, seen: make([]uint64, (n+63)/64), queue: make([]pickle.ID, 0, n)}
	// what the result reaches first: a call it reaches is written where it
	// is reached, at its depth there, not as an effect (a million levels of
	// objects, each a call, were each at depth 1 when every call started
	// the walk, and the writer refused them after the digest)
	w.add(s.Root)
	if _, _, settled := w.run(false); settled {
		return 0, false
	}
	var calls []pickle.ID // the calls the result does not reach
	for _, ev := range s.Events() {
		if id := ev.Node; id >= 0 && int(id) < n && !w.has(id) {
			calls = append(calls, id)
		}
	}
	clear(w.seen)
	w.queue = w.queue[:0]
	w.add(s.Root)
	for _, id := range calls {
		w.add(id)
	}
	for _, l := range [][]pickle.ID{s.Popped, s.Leftover, s.Tops} {
		for _, id := range l {
			w.add(id)
		}
	}
	first, deep, _ := w.run(true)
	return first, deep
}

// mayBeTooDeep reports whether s has the nodes a path past 2 x MaxDepth
// needs: if not, tooDeep answers at once.
func mayBeTooDeep(s *pickle.Store) bool { return s.Len() > 2*MaxDepth }

// tooDeepBeside starts tooDeep(s) on a goroutine of its own and returns
// what waits for its answer, so that work that only reads s runs beside
// the walk (the writer sink's view of a stream, wsink.go: about 0.03 s of
// each on a 5 MB cloudpickle state). A store too small to be deep gets its
// answer at once, without a goroutine (a file of a million small streams).
func tooDeepBeside(s *pickle.Store) func() (int64, bool) {
	if !mayBeTooDeep(s) {
		return func() (int64, bool) { return 0, false }
	}
	type answer struct {
		off  int64
		deep bool
	}
	c := make(chan answer, 1)
	go func() {
		off, deep := tooDeep(s)
		c <- answer{off, deep}
	}()
	return func() (int64, bool) {
		a := <-c
		return a.off, a.deep
	}
}

// depthWalk is tooDeep's breadth-first walk: the nodes queued, in order,
// and a bit a node saying it was.
type depthWalk struct {
	s     *pickle.Store
	n     int // s.Len()
	seen  []uint64
	queue []pickle.ID
	kids  []pickle.ID // children's buffer
}

// children is s.Children(id): the store's own items of id when they are
// all its children (no call parts, no operations' arguments), not a copy
// (the copies were a fifth of the walk of a cloudpickle state).
func (w *depthWalk) children(id pickle.ID) []pickle.ID {
	s := w.s
	if s.Kind(id) == pickle.KindCall || s.NMuts(id) > 0 {
		w.kids = s.Children(id, w.kids[:0])
		return w.kids
	}
	return s.Items(id)
}

func (w *depthWalk) has(id pickle.ID) bool { return w.seen[uint(id)/64]&(1<<(uint(id)%64)) != 0 }

func (w *depthWalk) add(id pickle.ID) {
	if id >= 0 && int(id) < w.n && !w.has(id) {
		w.seen[uint(id)/64] |= 1 << (uint(id) % 64)
		w.queue = append(w.queue, id)
	}
}

// run walks from the nodes queued, level by level (the queued ones are
// level 1), and returns the offset of the first node past MaxDepth and
// whether a node lies past 2 x MaxDepth; with stop it returns at that
// node, else it walks on to every node reachable. settled: no node of the
// store, reachable or not, can lie past 2 x MaxDepth (the walk stopped
// early, see below).
func (w *depthWalk) run(stop bool) (first int64, deep, settled bool) {
	s, n := w.s, w.n
	first = -1                // the first node past MaxDepth: the one the refusal names
	d, end := 1, len(w.queue) // the depth of queue[i]; where that level ends
	for i := 0; i < len(w.queue); i++ {
		if i == end {
			d, end = d+1, len(w.queue)
		}
		// a node queued later is deeper than the deepest queued (d, or d+1
		// past end) by at most the nodes not queued yet, one a level: when
		// that cannot pass 2 x MaxDepth, no node will (the walk of a 5 MB
		// cloudpickle state stops with a fifth of its queue left)
		last := d
		if end < len(w.queue) {
			last = d + 1
		}
		if !deep && last+n-len(w.queue) <= 2*MaxDepth {
			return 0, false, true
		}
		id := w.queue[i]
		if d > MaxDepth && first < 0 {
			first = s.Offset(id)
		}
		if d > 2*MaxDepth && !deep {
			if deep = true; stop {
				return first, true, false
			}
		}
		for _, c := range w.children(id) {
			w.add(c)
		}
	}
	return first, deep, false
}

// batch is the number of items per APPENDS / SETITEMS / ADDITEMS, as
// CPython's picklers batch them.
const batch = 1000

// refusal is a reason pk cannot write a faithful canonical pickle, at the
// offset of the input node concerned.
type refusal struct {
	off    int64
	reason string
}

func (r *refusal) Error() string { return fmt.Sprintf("offset %d: %s", r.off, r.reason) }

func refuse(n canon.Ref, format string, args ...any) error {
	var off int64
	if !n.IsNil() {
		off = n.Offset()
	}
	return &refusal{off: off, reason: fmt.Sprintf(format, args...)}
}

// task is work postponed until a node in construction is built: the rest
// of a container's items, or the rest of an object's operations, from
// index from.
type task struct {
	target canon.Ref
	what   byte // 'l' list items, 'd' dict entries, 's' set items, 'o' operations
	from   int
}

// emitter writes one stream: it traverses it once, onto a tape (tape.go)
// that records every object built and every memo fetch; replaying the tape
// memoizes exactly the objects used more than once, so the memo is
// canonical.
type emitter struct {
	v     *canon.View
	proto int
	out   *tape

	memo *table // built objects: provisional memo index (tape.go)
	// ninprog counts the objects in construction (marked in the memo
	// table: table.setInprog)
	ninprog int
	pending map[int32][]task // by the ID of the object waited for
	// incomplete are the objects whose contents or operations wait for
	// the object in construction they map to
	incomplete map[int32]canon.Ref // by node ID
	depth      int
	work       int64
	// blockedBy's walks: a node is seen by the current walk when its
	// seenAt is stamp (16 bits: every 65535 walks the stamps are cleared)
	seenAt []uint16
	stamp  uint16
	bstack []canon.Ref
	kbuf   []byte      // pureKey's
	ibuf   []pickle.ID // assignTrackers'
	budget int64

	trackers map[int32]string // tracker node ID -> its content id
	seenIDs  map[string]int   // content digest -> trackers with it so far
	nbuf     int64            // out-of-band buffers written
	keys     *keyCache        // pure nodes: their value key
	sh       *shared
	effects  []canon.Ref // v.EffectRefs(), computed once for both runs
	// getattrForm writes nested qualified names as getattr(parent, 'x')
	// at every protocol (see Stream)
	getattrForm bool
	plainTop    bool // the global being written is an effect: one STACK_GLOBAL
	// storageKeys writes the legacy torch storage key placeholders
	storageKeys bool
	// raw reads the bytes of a raw part of the input (a joblib array's)
	raw func(*input.Raw) ([]byte, error)
	// torch numbers a torch.save file's storages (torchFromView)
	torch *torchStorages
	dec   *decoder // reads folded runs (wsink.go)
	// collided: a value was built while its own items were written
	// (itemsBuilt)
	collided bool
	dsize    int // the view's digests' size (a folded tuple's embedding)
}

// shared is what the writer keeps over one stream: tracker ids and caches
// of keys.
type shared struct {
	trackers map[int32]string
	keys     *keyCache
	gkeys    map[gkey]key
	globOK   map[[2]string]bool
	// ents are the entries of the dicts whose entries were asked for and
	// that are not filled yet (by node ID): fill and blockedBy share them
	ents map[int32][]canon.RefEntry
}

// entries returns n.Entries(), computed once per stream: kept until the
// dict is filled (doneEntries).
func (e *emitter) entries(n canon.Ref) []canon.RefEntry {
	id := nodeID(n)
	if ents, ok := e.sh.ents[id]; ok {
		return ents
	}
	ents := n.Entries()
	if e.sh.ents == nil {
		e.sh.ents = map[int32][]canon.RefEntry{}
	}
	e.sh.ents[id] = ents
	return ents
}

// fillEntries is entries for fill: the entries blockedBy kept, else
// n.Entries() not kept (most dicts are filled once, as they are built:
// keepEntries keeps those whose filling is postponed).
func (e *emitter) fillEntries(n canon.Ref) []canon.RefEntry {
	if len(e.sh.ents) > 0 {
		if ents, ok := e.sh.ents[nodeID(n)]; ok {
			return ents
		}
	}
	return n.Entries()
}

// keepEntries keeps the entries of a dict whose filling is postponed.
func (e *emitter) keepEntries(n canon.Ref, ents []canon.RefEntry) {
	if e.sh.ents == nil {
		e.sh.ents = map[int32][]canon.RefEntry{}
	}
	e.sh.ents[nodeID(n)] = ents
}

// doneEntries drops the entries of a dict that is filled: nothing asks for
// them again (blockedBy looks only into dicts not built yet).
func (e *emitter) doneEntries(n canon.Ref) {
	if len(e.sh.ents) > 0 {
		delete(e.sh.ents, nodeID(n))
	}
}

func newShared() *shared {
	// maps are made on first write: a stream of a few values (one of
	// many in a file) costs little
	return &shared{keys: &keyCache{}}
}

// key identifies an object of the output: an identity node (id >= 0), a
// pure value (id == valueID, v), or nothing (noKey: never memoized).
type key struct {
	id int32
	v  int32 // the value's index (shared.vals)
}

const (
	valueID = -1
	noID    = -2
)

var noKey = key{id: noID}

func (k key) none() bool { return k.id == noID }

// table maps keys to int32 values: identity nodes by ID, values by their
// index, in slices. The identity nodes' slots are in the keyCache's array
// by node ID (ids.k), whose pure nodes' slots hold their keys: a node is
// pure or not for the whole view, so no slot is used both ways, and one
// array by node ID is 4 bytes a node less (3.5 MB on a 5 MB cloudpickle
// state) than two, and touches half the cache lines. An identity node's
// slot says too whether it is in construction (slotInprog: absent, for
// get), which was a third array (a byte a node).
type table struct {
	ids   *keyCache // identity nodes: value + 2 in ids.k; 0: absent; slotInprog
	byVal []int32   // value + 2; 0: absent
}

// slotInprog is an identity node's slot while it is in construction.
const slotInprog = 1

// inprog reports whether identity node id is in construction.
func (t *table) inprog(id int32) bool {
	byID := t.ids.k
	return int(id) < len(byID) && byID[id] == slotInprog
}

// setInprog marks identity node id, not built, as in construction, and
// reports whether it was not.
func (t *table) setInprog(id int32) bool {
	c := t.ids
	if int(id) >= len(c.k) {
		c.k = grownTo(c.k, id, c.nodes)
	}
	if c.k[id] != 0 {
		return false
	}
	c.k[id] = slotInprog
	return true
}

// newTable returns a table whose identity nodes' slots are in ids.
func newTable(ids *keyCache) *table { return &table{ids: ids} }

func (t *table) get(k key) (int32, bool) {
	if k.id >= 0 {
		byID := t.ids.k
		if int(k.id) < len(byID) && byID[k.id] > slotInprog {
			return byID[k.id] - 2, true
		}
		return 0, false
	}
	if int(k.v) < len(t.byVal) && t.byVal[k.v] != 0 {
		return t.byVal[k.v] - 2, true
	}
	return 0, false
}

func (t *table) set(k key, v int32) {
	if k.id >= 0 {
		c := t.ids
		if int(k.id) >= len(c.k) {
			c.k = grownTo(c.k, k.id, c.nodes)
		}
		c.k[k.id] = v + 2
		return
	}
	if int(k.v) >= len(t.byVal) {
		t.byVal = append(t.byVal, make([]int32, int(k.v)+1-len(t.byVal)+len(t.byVal)/2)...)
	}
	t.byVal[k.v] = v + 2
}

func (t *table) inc(k key) {
	v, _ := t.get(k)
	t.set(k, v+1)
}

// keyCache holds the keys of pure nodes, by node ID, and the index of
// every distinct value; its array by node ID holds the memo's slots of
// the identity nodes too (table).
type keyCache struct {
	k     []int32 // pure nodes: value index + 2; 1: noKey; 0: not computed (identity nodes: table's)
	vals  values
	nodes int // the view's NodeCount: k's length once it grows
}

// grownTo returns s long enough for index id: a table by node ID of a view
// of n nodes (NodeCount) grows to n at once, as the writer reaches almost
// every node of the view (no copies of it as it grows, no room past n);
// past n (another view's IDs) by half its length. Its pages are resident
// only once touched (huge.Advise): a writer that refuses a nesting past
// MaxDepth has reached a few levels of it (cost shape nest_newobj_build: 15
// of its three tables' 26 MB were resident, cleared by the allocator).
func grownTo[T any](s []T, id int32, n int) []T {
	size := int(id) + 1 + len(s)/2
	if int(id) < n {
		size = n
	}
	out := make([]T, size)
	huge.Advise(out)
	copy(out, s)
	return out
}

func (c *keyCache) get(id int32) (key, bool) {
	if int(id) < len(c.k) && c.k[id] != 0 {
		if c.k[id] == 1 {
			return noKey, true
		}
		return key{id: valueID, v: c.k[id] - 2}, true
	}
	return key{}, false
}

func (c *keyCache) set(id int32, k key) {
	if int(id) >= len(c.k) {
		c.k = grownTo(c.k, id, c.nodes)
	}
	if k.none() {
		c.k[id] = 1
	} else {
		c.k[id] = k.v + 2
	}
}

// intern returns the key of a value.
func (c *keyCache) intern(v vkey) key {
	return key{id: valueID, v: c.vals.indexOf(v)}
}

func nodeID(n canon.Ref) int32 { return int32(n.ID()) }

// isInprog reports whether identity node n is in construction.
func (e *emitter) isInprog(n canon.Ref) bool { return e.memo.inprog(nodeID(n)) }

// setInprog marks identity node n, not built yet, as in construction
// (built clears it).
func (e *emitter) setInprog(n canon.Ref) {
	if e.memo.setInprog(nodeID(n)) {
		e.ninprog++
	}
}

// vkey is the key of a pure value: a tag and the value's bytes (or its
// digest).
type vkey struct {
	tag byte
	s   string
}

type gkey struct {
	mod, name string
	dotted    bool
}

func newEmitter(v *canon.View, proto int, sh *shared, out *tape) *emitter {
	e := &emitter{v: v, proto: proto, out: out,
		memo: newTable(sh.keys), sh: sh, trackers: sh.trackers, keys: sh.keys, dsize: v.Opt.Algo.Size()}
	if e.keys.nodes == 0 {
		e.keys.nodes = v.NodeCount()
	}
	e.budget = 64*int64(v.Store().Len()) + 1<<22
	return e
}

// stream writes the whole stream: PROTO, each effect then POP, the root,
// STOP.
func (e *emitter) stream() error {
	e.out.raw([]byte{byte(pickle.PROTO), byte(e.proto)})
	if e.proto >= 4 {
		e.out.start()
	}
	for _, n := range e.effects {
		if err := e.effect(n); err != nil {
			return err
		}
		e.op(pickle.POP)
	}
	if err := e.emit(e.v.RootRef()); err != nil {
		return err
	}
	e.op(pickle.STOP)
	e.out.end()
	if len(e.pending) > 0 {
		return refuse(e.v.RootRef(), "internal: postponed work left at STOP")
	}
	return nil
}

// effect writes an effect. A pure one (a global resolved and dropped, or
// resolved before the call that uses it) is written afresh, never fetched
// from the memo, so that it is resolved again; later references to its
// value fetch this instance, as they referred to the input's.
func (e *emitter) effect(n canon.Ref) error {
	if n.Pure() && n.Kind() != canon.KindTracker {
		k := e.key(n)
		switch n.Kind() {
		case pickle.KindFrozenSet, pickle.KindBytes:
			// a call the canonical form reads as a value (frozenset-reduce,
			// codecs-bytes, bytes-reduce): write the call, which loading
			// performs, not the value
			if err := e.enter(n); err != nil {
				return err
			}
			var err error
			if n.Kind() == pickle.KindFrozenSet {
				err = e.reduceSet(n, noKey, "frozenset")
			} else {
				err = e.codecsBytes(n, n.Str())
			}
			e.depth--
			if err != nil {
				return err
			}
			return e.built(k)
		}
		// a global resolved as an effect stays one resolution
		e.plainTop = true
		defer func() { e.plainTop = false }()
		return e.create(n, k)
	}
	return e.emit(n)
}

// key is what identifies an object of the output: the node itself for
// objects with an identity, the value for pure values (equal values are
// written once and shared), nil for small scalars that are never memoized.
func (e *emitter) key(n canon.Ref) key {
	if !n.Pure() || n.Kind() == canon.KindTracker {
		return key{id: nodeID(n)}
	}
	switch n.Kind() {
	case pickle.KindNone, pickle.KindBool, pickle.KindInt, pickle.KindFloat, pickle.KindExt:
		return noKey
	}
	id := nodeID(n)
	if k, ok := e.keys.get(id); ok {
		return k
	}
	var k vkey
	temp := false // k.s is pureKey's buffer
	switch n.Kind() {
	case pickle.KindTuple:
		if n.NItems() != 0 {
			k, temp = vkey{'H', e.pureKey(n)}, true
		}
	case pickle.KindStr, pickle.KindBytes:
		tag := byte('s')
		if n.Kind() == pickle.KindBytes {
			tag = 'y'
		}
		if n.Len() > 64 {
			k = vkey{tag - 32, string(n.Digest())}
		} else {
			k = vkey{tag, n.Str()}
		}
	case pickle.KindGlobal:
		if n.Flags()&pickle.FlagDynamic != 0 {
			k, temp = vkey{'H', e.pureKey(n)}, true
		} else {
			gk := e.globalKey(n.Str(), n.Name(), n.Flags()&pickle.FlagDotted != 0)
			e.keys.set(id, gk)
			return gk
		}
	case canon.KindPlaceholder:
		k = vkey{'P', n.Str()}
	case pickle.KindFrozenSet:
		k, temp = vkey{'H', e.pureKey(n)}, true
	default:
		k = vkey{'h', string(n.Digest())}
	}
	if k.tag == 0 {
		e.keys.set(id, noKey)
		return noKey
	}
	if temp {
		kk := key{id: valueID, v: e.keys.vals.indexTemp(k)}
		e.keys.set(id, kk)
		return kk
	}
	kk := e.keys.intern(k)
	e.keys.set(id, kk)
	return kk
}

// pureKey is the value key of a pure container (a tuple, a frozenset, a
// dynamic global): its embedding in a parent's encoding, 'H' and the digest
// the view's encoding computed already (Node.AppendPure). Its Digest is
// the hash of that embedding, so two containers have equal keys exactly
// when they have equal Digests, without hashing again. The text is in a
// buffer of the emitter's, valid until the next call (intern copies it).
func (e *emitter) pureKey(n canon.Ref) string {
	e.kbuf = n.AppendPure(e.kbuf[:0])
	return unsafe.String(unsafe.SliceData(e.kbuf), len(e.kbuf))
}

func (e *emitter) globalKey(mod, name string, dotted bool) key {
	g := gkey{mod, name, dotted}
	if k, ok := e.sh.gkeys[g]; ok {
		return k
	}
	tag := byte('g')
	if dotted {
		tag = 'G'
	}
	k := e.keys.intern(vkey{tag, mod + "\x00" + name})
	if e.sh.gkeys == nil {
		e.sh.gkeys = map[gkey]key{}
	}
	e.sh.gkeys[g] = k
	return k
}

// emit pushes n: a memo fetch when it was built already, else its
// construction.
func (e *emitter) emit(n canon.Ref) error {
	if n.Kind() == pickle.KindFolded {
		return e.folded(n) // (the writer sink: a dict's value)
	}
	k := e.key(n)
	if !k.none() {
		if idx, ok := e.memo.get(k); ok {
			return e.fetch(n, k, int(idx))
		}
		if k.id >= 0 && e.isInprog(n) {
			return refuse(n, "the object refers to itself through an immutable container or a call's arguments: no pickle can build it")
		}
	}
	// create, written out: a frame less on each level of the writer's
	// recursion (see build)
	if err := e.enter(n); err != nil {
		return err
	}
	err := e.build(n, k)
	e.depth--
	return err
}

// fetch pushes a built object again from the memo (idx: its provisional
// index).
func (e *emitter) fetch(n canon.Ref, k key, idx int) error {
	if idx < 0 {
		return refuse(n, "internal: object used again but not memoized")
	}
	e.out.boundary()
	e.out.fetch(int32(idx))
	return nil
}

// built records that the object of key k is on the stack (the tape
// memoizes it when it is used more than once), and runs the work waiting
// for it.
func (e *emitter) built(k key) error {
	if k.none() {
		return nil
	}
	prev, ok := e.memo.get(k)
	if !ok {
		prev = -1
	}
	if e.ninprog > 0 && k.id >= 0 && e.memo.inprog(k.id) {
		e.ninprog-- // (set below: no longer in construction)
	}
	e.memo.set(k, e.out.built(prev))
	if k.id >= 0 {
		if len(e.pending) > 0 {
			if ts := e.pending[k.id]; len(ts) > 0 {
				delete(e.pending, k.id)
				for _, t := range ts {
					if err := e.resume(t); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// resume runs postponed work: fetch the target, continue, pop it.
func (e *emitter) resume(t task) error {
	k := e.key(t.target)
	idx, _ := e.memo.get(k)
	if err := e.fetch(t.target, k, int(idx)); err != nil {
		return err
	}
	delete(e.incomplete, nodeID(t.target)) // postponed again if still blocked
	var err error
	switch t.what {
	case 'o':
		err = e.ops(t.target, t.from)
	default:
		err = e.fill(t.target, t.what, t.from)
	}
	if err != nil {
		return err
	}
	e.op(pickle.POP)
	return nil
}

func (e *emitter) op(o pickle.Opcode) { e.out.write(byte(o)) }

func (e *emitter) enter(n canon.Ref) error {
	e.depth++
	if e.depth > MaxDepth {
		return refuse(n, "%s", deepReason)
	}
	e.out.boundary()
	return nil
}

// create builds n (k is its key, nil for one never memoized) and applies
// its contents and operations.
func (e *emitter) create(n canon.Ref, k key) error {
	if err := e.enter(n); err != nil {
		return err
	}
	err := e.build(n, k)
	e.depth--
	return err
}

// build writes n (k is its key, nil for one never memoized): n itself,
// its contents and its operations.
//
// The writer recurses once a level of the input's nesting, up to MaxDepth
// levels, through build and what it calls: the cases that write n's
// parts (and so recurse) are functions of their own, and the scalars one
// function, so that build's own frame stays small (its switch took 1 KB
// of stack a level: the stack of the deep cost shapes grew to 64 MB).
func (e *emitter) build(n canon.Ref, k key) error {
	kind := n.Kind()
	var err error
	switch kind {
	case canon.KindArray:
		// built (memoized) inside: an object array's items may refer to it
		return e.arrayNode(n, k)
	case canon.KindStorage:
		return e.storageNode(n, k)
	case pickle.KindGlobal:
		err = e.globalNode(n, k)
	case pickle.KindTuple:
		err = e.tuple(n, k)
	case pickle.KindSet:
		if e.proto >= 4 {
			e.op(pickle.EMPTY_SET)
		} else {
			err = e.reduceSet(n, k, "set")
		}
	case pickle.KindFrozenSet:
		err = e.frozenSet(n, k)
	case pickle.KindCall:
		err = e.call(n, k)
	case pickle.KindPersID:
		err = e.persID(n, k)
	default:
		err = e.scalar(n, kind)
	}
	if err != nil {
		return err
	}
	if err := e.built(k); err != nil {
		return err
	}
	switch kind {
	case pickle.KindList:
		if err := e.fillList(n, 0); err != nil {
			return err
		}
	case pickle.KindDict:
		if err := e.fillDict(n, 0); err != nil {
			return err
		}
	case pickle.KindSet:
		if e.proto >= 4 {
			if err := e.fillSet(n, 0); err != nil {
				return err
			}
		}
	}
	if err := e.ops(n, 0); err != nil {
		return err
	}
	return nil
}

// scalar writes the n of kind whose building writes no other node (a
// list or a dict: empty, filled by build).
func (e *emitter) scalar(n canon.Ref, kind pickle.Kind) error {
	switch kind {
	case pickle.KindNone:
		e.op(pickle.NONE)
	case pickle.KindBool:
		if i, ok := n.Small(); ok && i != 0 || !ok && n.Int().Sign() != 0 {
			e.op(pickle.NEWTRUE)
		} else {
			e.op(pickle.NEWFALSE)
		}
	case pickle.KindInt:
		if i, ok := n.Small(); !ok || !e.int32(i) {
			e.int(n.Int())
		}
	case pickle.KindFloat:
		var b [9]byte
		b[0] = byte(pickle.BINFLOAT)
		binary.BigEndian.PutUint64(b[1:], math.Float64bits(n.Float()))
		e.out.write(b[:]...)
	case pickle.KindStr:
		if err := e.checkPayload(n); err != nil {
			return err
		}
		if n.Flags()&pickle.FlagPy2Str != 0 && n.Len() >= pickle.DefaultBlobThreshold {
			return refuse(n, "a Python 2 STRING of %d bytes: pk hash digests its raw bytes (docs/canonical-form.md §8), a str written back would hash differently", n.Len())
		}
		if err := e.str(n, n.Str()); err != nil {
			return err
		}
	case pickle.KindBytes:
		if err := e.checkPayload(n); err != nil {
			return err
		}
		if err := e.bytes(n, n.Str()); err != nil {
			return err
		}
	case pickle.KindByteArray:
		if err := e.checkPayload(n); err != nil {
			return err
		}
		if e.proto >= 5 {
			e.payload(n, pickle.BYTEARRAY8, 8, n.Str())
		} else {
			// builtins.bytearray(b'...') REDUCE, as CPython writes it below 5
			if err := e.global(n, "builtins", "bytearray", false); err != nil {
				return err
			}
			if err := e.bytes(n, n.Str()); err != nil {
				return err
			}
			e.op(pickle.TUPLE1)
			e.op(pickle.REDUCE)
		}
	case canon.KindPlaceholder:
		text := Placeholder
		switch name := n.Str(); {
		case name == "co_filename" || name == "__file__" || name == "__cached__":
		case e.storageKeys && strings.HasPrefix(name, "storage #"):
			// a legacy torch storage key: its ordinal (docs/pk-canon.md)
			text = strings.TrimPrefix(name, "storage #")
		default:
			return refuse(n, "placeholder %q: no value to write back", n.Str())
		}
		if err := e.str(n, text); err != nil {
			return err
		}
	case canon.KindTracker:
		id, ok := e.trackers[nodeID(n)]
		if !ok {
			return refuse(n, "a cloudpickle class tracker id outside a class constructor's arguments")
		}
		if err := e.str(n, id); err != nil {
			return err
		}
	case pickle.KindExt:
		c := n.Int().Int64()
		switch {
		case c < 0 || c > 0x7fffffff:
			return refuse(n, "extension code %d out of range", c)
		case c < 256:
			e.out.write(byte(pickle.EXT1), byte(c))
		case c < 65536:
			e.out.write(byte(pickle.EXT2), byte(c), byte(c>>8))
		default:
			var b [5]byte
			b[0] = byte(pickle.EXT4)
			binary.LittleEndian.PutUint32(b[1:], uint32(c))
			e.out.write(b[:]...)
		}
	case pickle.KindList:
		e.op(pickle.EMPTY_LIST)
	case pickle.KindDict:
		e.op(pickle.EMPTY_DICT)
	case pickle.KindBuffer:
		if e.proto < 5 {
			return refuse(n, "an out-of-band buffer (NEXT_BUFFER) needs protocol 5")
		}
		if n.Int().Int64() != e.nbuf {
			return refuse(n, "out-of-band buffer %d would be written as buffer %d", n.Int().Int64(), e.nbuf)
		}
		e.nbuf++
		e.op(pickle.NEXT_BUFFER)
		if n.Flags()&pickle.FlagReadOnly != 0 {
			e.op(pickle.READONLY_BUFFER)
		}
	default:
		return refuse(n, "unknown node kind %s", canon.KindName(kind))
	}
	return nil
}

// globalNode writes the global n: STACK_GLOBAL of its parts when they
// are computed.
func (e *emitter) globalNode(n canon.Ref, k key) error {
	if n.Flags()&pickle.FlagDynamic != 0 {
		if e.proto < 4 {
			return refuse(n, "a STACK_GLOBAL of computed names cannot be written below protocol 4")
		}
		if err := e.inProgress(n, k, func() error {
			for i := range n.NItems() {
				if err := e.emit(n.Item(i)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		e.op(pickle.STACK_GLOBAL)
	} else if err := e.globalBody(n, n.Str(), n.Name(), n.Flags()&pickle.FlagDotted != 0); err != nil {
		return err
	}
	return nil
}

// tuple writes the tuple n.
func (e *emitter) tuple(n canon.Ref, k key) error {
	ni := n.NItems()
	if ni == 0 {
		e.op(pickle.EMPTY_TUPLE)
		return nil
	}
	if err := e.inProgress(n, k, func() error {
		if ni > 3 {
			e.op(pickle.MARK)
		}
		for i := range ni {
			if err := e.emit(n.Item(i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	closeTuple(e, ni)
	return nil
}

// frozenSet writes the frozenset n.
func (e *emitter) frozenSet(n canon.Ref, k key) error {
	if e.proto >= 4 {
		if err := e.inProgress(n, k, func() error {
			e.op(pickle.MARK)
			for _, c := range n.Items() {
				if err := e.emit(c); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		e.op(pickle.FROZENSET)
	} else if err := e.reduceSet(n, k, "frozenset"); err != nil {
		return err
	}
	return nil
}

// persID writes the persistent id n.
func (e *emitter) persID(n canon.Ref, k key) error {
	if items := n.Items(); len(items) == 1 {
		if err := e.inProgress(n, k, func() error { return e.emit(items[0]) }); err != nil {
			return err
		}
		e.op(pickle.BINPERSID)
	} else {
		pid := n.Str()
		if strings.ContainsAny(pid, "\n") || n.Len() > int64(len(pid)) {
			return refuse(n, "a PERSID whose text holds a newline")
		}
		e.out.write(byte(pickle.PERSID))
		e.out.write([]byte(pid + "\n")...)
	}
	return nil
}

// inProgress runs body (which writes the parts of n) with n marked as in
// construction.
func (e *emitter) inProgress(n canon.Ref, k key, body func() error) error {
	if k.id >= 0 {
		e.setInprog(n)
	}
	err := body()
	e.itemsBuilt(k)
	return err
}

// itemsBuilt notes, once the items of a pure container of key k are
// written, whether k was built while they were: a pure value holds none
// equal to it, so one of them had its fingerprint (intern.go). Without
// fingerprints values are told apart by text, and nothing is looked up.
func (e *emitter) itemsBuilt(k key) {
	if k.id == valueID && e.keys.vals.fingerprints {
		if _, ok := e.memo.get(k); ok {
			e.collided = true
		}
	}
}

func (e *emitter) checkPayload(n canon.Ref) error {
	if n.Len() != int64(len(n.Str())) {
		return refuse(n, "internal: payload of %d bytes not held in memory", n.Len())
	}
	return nil
}

// int32 writes i when BININT1, BININT2 or BININT holds it, and reports
// whether it did.
func (e *emitter) int32(i int64) bool {
	switch {
	case i >= 0 && i < 256:
		e.out.write(byte(pickle.BININT1), byte(i))
	case i >= 0 && i < 65536:
		e.out.write(byte(pickle.BININT2), byte(i), byte(i>>8))
	case i >= -1<<31 && i < 1<<31:
		var b [5]byte
		b[0] = byte(pickle.BININT)
		binary.LittleEndian.PutUint32(b[1:], uint32(int32(i)))
		e.out.write(b[:]...)
	default:
		return false
	}
	return true
}

func (e *emitter) int(x *big.Int) {
	if x.IsInt64() && e.int32(x.Int64()) {
		return
	}
	enc := encodeLong(x)
	if len(enc) < 256 {
		e.out.header([]byte{byte(pickle.LONG1), byte(len(enc))}, int64(len(enc)))
	} else {
		var b [5]byte
		b[0] = byte(pickle.LONG4)
		binary.LittleEndian.PutUint32(b[1:], uint32(len(enc)))
		e.out.header(b[:], int64(len(enc)))
	}
	e.out.payload(enc)
}

// encodeLong is pickle's encode_long: little-endian two's complement, the
// fewest bytes that keep the sign.
func encodeLong(x *big.Int) []byte {
	if x.Sign() == 0 {
		return nil
	}
	n := (x.BitLen() + 8) / 8 // room for the sign bit
	var v big.Int
	if x.Sign() < 0 {
		v.Lsh(big.NewInt(1), uint(8*n))
		v.Add(&v, x)
	} else {
		v.Set(x)
	}
	be := v.FillBytes(make([]byte, n))
	le := make([]byte, n)
	for i := range be {
		le[n-1-i] = be[i]
	}
	// drop a redundant sign byte (CPython's minimal form)
	for len(le) > 1 {
		last, prev := le[len(le)-1], le[len(le)-2]
		if (last == 0 && prev&0x80 == 0) || (last == 0xff && prev&0x80 != 0) {
			le = le[:len(le)-1]
			continue
		}
		break
	}
	return le
}

// payload writes opcode o with a little-endian length of size bytes, then s.
func (e *emitter) payload(n canon.Ref, o pickle.Opcode, size int, s string) {
	var b [9]byte
	b[0] = byte(o)
	switch size {
	case 1:
		b[1] = byte(len(s))
	case 4:
		binary.LittleEndian.PutUint32(b[1:], uint32(len(s)))
	case 8:
		binary.LittleEndian.PutUint64(b[1:], uint64(len(s)))
	}
	e.out.header(b[:1+size], int64(len(s)))
	e.out.payloadString(s)
}

func (e *emitter) str(n canon.Ref, s string) error {
	switch {
	case e.proto >= 4 && len(s) < 256:
		e.payload(n, pickle.SHORT_BINUNICODE, 1, s)
	case len(s) <= 0xffffffff:
		e.payload(n, pickle.BINUNICODE, 4, s)
	case e.proto >= 4:
		e.payload(n, pickle.BINUNICODE8, 8, s)
	default:
		return refuse(n, "a str of %d bytes needs protocol 4", len(s))
	}
	return nil
}

func (e *emitter) bytes(n canon.Ref, s string) error {
	switch {
	case e.proto < 3:
		return e.codecsBytes(n, s)
	case len(s) < 256:
		e.payload(n, pickle.SHORT_BINBYTES, 1, s)
	case len(s) <= 0xffffffff:
		e.payload(n, pickle.BINBYTES, 4, s)
	case e.proto >= 4:
		e.payload(n, pickle.BINBYTES8, 8, s)
	default:
		return refuse(n, "bytes of %d bytes need protocol 4", len(s))
	}
	return nil
}

// codecsBytes writes bytes as CPython does below protocol 3:
// _codecs.encode(str, 'latin1') REDUCE, or bytes() when empty.
func (e *emitter) codecsBytes(n canon.Ref, s string) error {
	{
		if s == "" {
			if err := e.global(n, "builtins", "bytes", false); err != nil {
				return err
			}
			e.op(pickle.EMPTY_TUPLE)
			e.op(pickle.REDUCE)
			return nil
		}
		if err := e.global(n, "_codecs", "encode", false); err != nil {
			return err
		}
		r := make([]rune, len(s))
		for i := 0; i < len(s); i++ {
			r[i] = rune(s[i])
		}
		if err := e.str(n, string(r)); err != nil {
			return err
		}
		if err := e.str(n, "latin1"); err != nil {
			return err
		}
		e.op(pickle.TUPLE2)
		e.op(pickle.REDUCE)
	}
	return nil
}

// global pushes a global the writer needs (builtins.getattr, set, ...),
// shared through the memo like the input's globals.
func (e *emitter) global(n canon.Ref, mod, name string, dotted bool) error {
	k := e.globalKey(mod, name, dotted)
	if idx, ok := e.memo.get(k); ok {
		return e.fetch(n, k, int(idx))
	}
	if err := e.globalBody(n, mod, name, dotted); err != nil {
		return err
	}
	return e.built(k)
}

// globalBody writes the opcodes of a global (not its memo write).
func (e *emitter) globalBody(n canon.Ref, mod, name string, dotted bool) error {
	plain := e.plainTop
	e.plainTop = false
	if plain && e.proto < 4 && !dotted && strings.Contains(name, ".") {
		return refuse(n, "the nested name %s.%s is resolved as an effect: below protocol 4 it takes a getattr call, which the canonical form counts apart (write it at protocol 4 or 5)", mod, name)
	}
	if e.proto >= 4 && (dotted || plain || !e.getattrForm || !strings.Contains(name, ".")) {
		if dotted {
			return refuse(n, "a dotted global name %s.%s read below protocol 4 (which CPython does not resolve) cannot be written at protocol %d", mod, name, e.proto)
		}
		if err := e.str(n, mod); err != nil {
			return err
		}
		if err := e.str(n, name); err != nil {
			return err
		}
		e.op(pickle.STACK_GLOBAL)
		return nil
	}
	parts := []string{name}
	if !dotted {
		parts = strings.Split(name, ".")
	}
	for _, p := range append([]string{mod}, parts...) {
		if p == "" || strings.ContainsAny(p, "\n") {
			return refuse(n, "global name %q.%q cannot be written as a GLOBAL line", mod, name)
		}
	}
	if len(parts) > 1 {
		// getattr(getattr(G, 'b'), 'c'): CPython's form of a nested
		// qualified name below protocol 4
		if err := e.global(n, "builtins", "getattr", false); err != nil {
			return err
		}
		if err := e.globalBody(n, mod, strings.Join(parts[:len(parts)-1], "."), false); err != nil {
			return err
		}
		if err := e.str(n, parts[len(parts)-1]); err != nil {
			return err
		}
		e.op(pickle.TUPLE2)
		e.op(pickle.REDUCE)
		return nil
	}
	wm, wn := mod, name
	if e.proto < 3 {
		var err error
		if wm, wn, err = e.py2Name(n, mod, name); err != nil {
			return err
		}
	}
	e.out.write(byte(pickle.GLOBAL))
	e.out.write([]byte(wm + "\n" + wn + "\n")...)
	return nil
}

// py2Name returns the name to write at protocol 2 for mod.name: the
// builtins under CPython's Python 2 name, as its pickler writes them, and
// any name only when the reader's Python 2 mapping reads it back unchanged.
func (e *emitter) py2Name(n canon.Ref, mod, name string) (string, string, error) {
	wm := mod
	if mod == "__builtin__" && name == "__main__" {
		// dill's raw GLOBAL: read back as builtins.__main__, which the
		// dill-main rule turns into this name again
		return mod, name, nil
	}
	if mod == "builtins" {
		wm = "__builtin__"
	}
	key := [2]string{wm, name}
	ok, seen := e.sh.globOK[key]
	if !seen {
		ok = readsBack(wm, name, mod, name)
		if e.sh.globOK == nil {
			e.sh.globOK = map[[2]string]bool{}
		}
		e.sh.globOK[key] = ok
	}
	if !ok {
		return "", "", refuse(n, "global %s.%s: no GLOBAL line reads back as this name at protocol 2 (the Python 2 name mapping changes it)", mod, name)
	}
	return wm, name, nil
}

// readsBack reports whether GLOBAL wm.wn at protocol 2 reads as mod.name
// (the machine's own name mapping, pickle.MapGlobal).
func readsBack(wm, wn, mod, name string) bool {
	if strings.ContainsAny(wm+wn, "\n") {
		return false
	}
	m, q, _, _ := pickle.MapGlobal(2, wm, wn)
	return m == mod && q == name
}

// reduceSet writes a set or frozenset below protocol 4: builtins.set([items])
// REDUCE, as CPython does.
func (e *emitter) reduceSet(n canon.Ref, k key, which string) error {
	return e.inProgress(n, k, func() error {
		if err := e.global(n, "builtins", which, false); err != nil {
			return err
		}
		e.op(pickle.EMPTY_LIST)
		items := n.Items()
		if err := e.batches(len(items), pickle.APPEND, pickle.APPENDS, func(i int) error { return e.emit(items[i]) }); err != nil {
			return err
		}
		e.op(pickle.TUPLE1)
		e.op(pickle.REDUCE)
		return nil
	})
}

// batches writes n items in batches of 1000: one item with single, more
// between MARK and multi (single 0: always MARK ... multi).
func (e *emitter) batches(n int, single, multi pickle.Opcode, item func(i int) error) error {
	for i := 0; i < n; i += batch {
		j := min(i+batch, n)
		if j-i == 1 && single != 0 {
			if err := item(i); err != nil {
				return err
			}
			e.op(single)
			continue
		}
		e.op(pickle.MARK)
		for x := i; x < j; x++ {
			if err := item(x); err != nil {
				return err
			}
		}
		e.op(multi)
	}
	return nil
}

// call writes a call: callable, arguments, REDUCE / NEWOBJ / NEWOBJ_EX /
// OBJ.
func (e *emitter) call(n canon.Ref, k key) error {
	form := n.CallForm()
	fn := n.Func()
	if fn.IsNil() {
		return refuse(n, "a call without a callable")
	}
	var args canon.Ref
	if form != "inst" {
		args = n.Args()
		if args.IsNil() || args.Kind() != pickle.KindTuple {
			return refuse(n, "call arguments that are not a tuple")
		}
		if err := e.assignTrackers(n, args); err != nil {
			return err
		}
	}
	kw := n.Kwargs()
	return e.inProgress(n, k, func() error {
		switch form {
		case "inst":
			e.op(pickle.MARK)
			if err := e.emit(fn); err != nil {
				return err
			}
			e.op(pickle.OBJ)
			return nil
		case "new":
			if !kw.IsNil() && e.proto < 4 {
				return e.newobjExReduce(n, fn, args, kw)
			}
		}
		if err := e.emit(fn); err != nil {
			return err
		}
		if err := e.emit(args); err != nil {
			return err
		}
		switch {
		case form == "call":
			e.op(pickle.REDUCE)
		case !kw.IsNil():
			if err := e.emit(kw); err != nil {
				return err
			}
			e.op(pickle.NEWOBJ_EX)
		default:
			e.op(pickle.NEWOBJ)
		}
		return nil
	})
}

// newobjExReduce writes the parts of call n, a NEWOBJ_EX below protocol
// 4: copyreg.__newobj_ex__(cls, args, kwargs) REDUCE, which the
// newobj-ex-reduce rule reads as NEWOBJ_EX. (A function of its own: the
// writer recurses through call's body, whose frame then stays small, see
// build.)
func (e *emitter) newobjExReduce(n, fn, args, kw canon.Ref) error {
	if err := e.global(n, "copyreg", "__newobj_ex__", false); err != nil {
		return err
	}
	if err := e.emit(fn); err != nil {
		return err
	}
	if err := e.emit(args); err != nil {
		return err
	}
	if err := e.emit(kw); err != nil {
		return err
	}
	e.op(pickle.TUPLE3)
	e.op(pickle.REDUCE)
	return nil
}

// assignTrackers gives each tracker among the arguments of call n (the
// class it constructs) its id: 32 hex digits of a digest of the class's
// canonical content, so that the same class canonicalised anywhere gets the
// same id. Distinct trackers of one stream whose classes have equal content
// are told apart by their rank in canonical order.
func (e *emitter) assignTrackers(n, args canon.Ref) error {
	// a tracker is a node the view made (canon's tracker rule), of an ID
	// past the stream's: the kinds of the others (most calls' arguments,
	// read from all over the store) need not be looked at
	base := pickle.ID(args.View().Store().Len())
	e.ibuf = args.ItemIDs(e.ibuf[:0])
	has := false
	for i, id := range e.ibuf {
		if id >= base && args.ItemKind(i) == canon.KindTracker {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	for _, a := range args.Items() {
		if a.Kind() != canon.KindTracker {
			continue
		}
		if _, ok := e.trackers[nodeID(a)]; ok {
			continue
		}
		d := n.Digest()
		if e.seenIDs == nil {
			e.seenIDs = map[string]int{}
		}
		rank := e.seenIDs[string(d)]
		e.seenIDs[string(d)] = rank + 1
		h := sha256.New()
		h.Write([]byte("pk-canon tracker id\x00"))
		h.Write(d)
		if rank > 0 {
			h.Write(binary.AppendUvarint(nil, uint64(rank)))
		}
		if e.sh.trackers == nil {
			e.sh.trackers = map[int32]string{}
			e.trackers = e.sh.trackers
		}
		e.trackers[nodeID(a)] = hex.EncodeToString(h.Sum(nil)[:16])
	}
	return nil
}

// fill writes the items of a plain list ('l'), dict ('d') or set ('s')
// from index from; the container is on top of the stack. An item that
// needs an object still in construction (a cycle through a call's
// arguments) postpones the rest until that object is built.
func (e *emitter) fill(n canon.Ref, what byte, from int) error {
	// (a function a kind, which build calls directly: the writer recurses
	// through them, and each frame holds only what its kind needs)
	switch what {
	case 'l':
		return e.fillList(n, from)
	case 'd':
		return e.fillDict(n, from)
	case 's':
		return e.fillSet(n, from)
	}
	return nil
}

func (e *emitter) fillList(n canon.Ref, from int) error {
	if n.Flags()&pickle.FlagHasFolded != 0 {
		return e.fillFolded(n)
	}
	end, blocker := e.firstBlocked(n.NItems(), from, func(i int) (canon.Ref, canon.Ref) { return n.Item(i), canon.Ref{} })
	if err := e.batches(end-from, pickle.APPEND, pickle.APPENDS, func(i int) error { return e.emit(n.Item(from + i)) }); err != nil {
		return err
	}
	e.postpone(blocker, n, 'l', end)
	return nil
}

func (e *emitter) fillDict(n canon.Ref, from int) error {
	if n.Flags()&pickle.FlagHasFolded != 0 {
		return e.fillFoldedDict(n)
	}
	ents := e.fillEntries(n)
	end, blocker := e.firstBlocked(len(ents), from, func(i int) (canon.Ref, canon.Ref) { return ents[i].Key, ents[i].Value })
	if err := e.batches(end-from, pickle.SETITEM, pickle.SETITEMS, func(i int) error {
		if err := e.emit(ents[from+i].Key); err != nil {
			return err
		}
		return e.emit(ents[from+i].Value)
	}); err != nil {
		return err
	}
	if blocker.IsNil() {
		e.doneEntries(n)
	} else {
		e.keepEntries(n, ents) // (resumed from end)
	}
	e.postpone(blocker, n, 'd', end)
	return nil
}

func (e *emitter) fillSet(n canon.Ref, from int) error {
	items := n.Items()
	end, blocker := e.firstBlocked(len(items), from, func(i int) (canon.Ref, canon.Ref) { return items[i], canon.Ref{} })
	if err := e.batches(end-from, 0, pickle.ADDITEMS, func(i int) error { return e.emit(items[from+i]) }); err != nil {
		return err
	}
	e.postpone(blocker, n, 's', end)
	return nil
}

func (e *emitter) postpone(blocker, target canon.Ref, what byte, from int) {
	if !blocker.IsNil() {
		if e.pending == nil {
			e.pending = map[int32][]task{}
			e.incomplete = map[int32]canon.Ref{}
		}
		e.incomplete[nodeID(target)] = blocker
		b := nodeID(blocker)
		e.pending[b] = append(e.pending[b], task{target: target, what: what, from: from})
	}
}

// firstBlocked returns the first index from from whose nodes cannot be
// built now, and the object in construction they wait for (nil: none).
// nodes gives the nodes of index i: an item (and no node), or an entry's
// key and value.
func (e *emitter) firstBlocked(n, from int, nodes func(i int) (canon.Ref, canon.Ref)) (int, canon.Ref) {
	if e.ninprog == 0 {
		return n, canon.Ref{}
	}
	for i := from; i < n; i++ {
		a, c := nodes(i)
		if b := e.blocked(a); !b.IsNil() {
			return i, b
		}
		if c.IsNil() {
			continue
		}
		if b := e.blocked(c); !b.IsNil() {
			return i, b
		}
	}
	return n, canon.Ref{}
}

// blocked returns an object in construction that building n needs (its
// construction, not its contents or operations), or nil.
func (e *emitter) blocked(n canon.Ref) canon.Ref { return e.blockedBy(n, false) }

// blockedBy is blocked; deep also counts the contents of the containers
// reached (not yet written, or written with their contents postponed): an
// operation (BUILD copies its state's items) must see them complete.
func (e *emitter) blockedBy(n canon.Ref, deep bool) canon.Ref {
	if e.ninprog == 0 {
		return canon.Ref{}
	}
	// seen: the nodes whose seenAt is this walk's stamp
	e.stamp++
	if e.stamp == 0 { // wrapped: forget every stamp
		clear(e.seenAt)
		e.stamp = 1
	}
	stack := append(e.bstack[:0], n)
	defer func() { e.bstack = stack[:0] }()
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e.work++
		if x.IsNil() {
			continue
		}
		id := nodeID(x)
		if int(id) < len(e.seenAt) && e.seenAt[id] == e.stamp || (x.Pure() && x.Kind() != canon.KindTracker) {
			continue
		}
		if int(id) >= len(e.seenAt) {
			e.seenAt = grownTo(e.seenAt, id, e.v.NodeCount())
		}
		e.seenAt[id] = e.stamp
		if e.isInprog(x) {
			return x
		}
		if deep {
			if b, ok := e.incomplete[id]; ok {
				return b
			}
		}
		if _, done := e.memo.get(key{id: nodeID(x)}); done {
			continue
		}
		switch x.Kind() {
		case pickle.KindList, pickle.KindSet:
			if deep || (x.Kind() == pickle.KindSet && e.proto < 4) {
				stack = x.AppendItems(stack)
			}
			continue
		case pickle.KindDict:
			if deep && x.Flags()&pickle.FlagHasFolded == 0 { // (folded runs hold no node: wsink.go)
				for _, en := range e.entries(x) {
					stack = append(stack, en.Key, en.Value)
				}
			}
			continue
		case pickle.KindCall:
			stack = append(stack, x.Func(), x.Args(), x.Kwargs())
			continue
		}
		stack = x.AppendItems(stack)
	}
	return canon.Ref{}
}

// ops writes the operations of n from index from (n on top of the stack).
func (e *emitter) ops(n canon.Ref, from int) error {
	ops := n.OpList() // (a RefOp at a time: 700,000 BUILDs on one object)
	for i := from; i < ops.Len(); i++ {
		o := ops.Op(i)
		if e.ninprog > 0 {
			for _, a := range o.Args {
				if b := e.blockedBy(a, true); !b.IsNil() {
					e.postpone(b, n, 'o', i)
					return nil
				}
			}
		}
		if err := e.applyOp(n, o); err != nil {
			return err
		}
		if e.work > e.budget {
			return refuse(n, "too much work ordering a cyclic structure")
		}
	}
	return nil
}

func (e *emitter) applyOp(n canon.Ref, o canon.RefOp) error {
	// a BUILD here, the rest in applyOther: the writer recurses through
	// applyOp, whose frame then holds only this (see build)
	if o.Name != "build" || len(o.Args) != 1 {
		return e.applyOther(n, o)
	}
	if err := e.emit(o.Args[0]); err != nil {
		return err
	}
	e.op(pickle.BUILD)
	return nil
}

// applyOther writes an operation other than a BUILD of one state.
func (e *emitter) applyOther(n canon.Ref, o canon.RefOp) error {
	args := o.Args
	switch o.Name {
	case "build":
		return refuse(n, "BUILD with %d states", len(args))
	case "append":
		return e.batches(len(args), pickle.APPEND, pickle.APPENDS, func(i int) error { return e.emit(args[i]) })
	case "setitems":
		if len(args)%2 != 0 {
			return refuse(n, "SETITEMS with an odd number of arguments")
		}
		return e.batches(len(args)/2, pickle.SETITEM, pickle.SETITEMS, func(i int) error {
			if err := e.emit(args[2*i]); err != nil {
				return err
			}
			return e.emit(args[2*i+1])
		})
	case "add":
		if e.proto < 4 {
			return refuse(n, "ADDITEMS on an object that is not a set is written only at protocol 4 and above")
		}
		return e.batches(len(args), 0, pickle.ADDITEMS, func(i int) error { return e.emit(args[i]) })
	case "_function_setstate", "_class_setstate", "setattr":
		// the folded producer call, written back as the producer writes
		// it: f(obj, ...) REDUCE POP
		mod, name := "builtins", "setattr"
		if o.Name != "setattr" {
			mod, name = cloudpickleModule(n)+".cloudpickle_fast", o.Name
		}
		if err := e.global(n, mod, name, false); err != nil {
			return err
		}
		k := e.key(n)
		idx, ok := e.memo.get(k)
		if !ok {
			return refuse(n, "internal: operation target not built")
		}
		if len(args)+1 > 3 {
			e.op(pickle.MARK)
		}
		if err := e.fetch(n, k, int(idx)); err != nil {
			return err
		}
		for _, a := range args {
			if err := e.emit(a); err != nil {
				return err
			}
		}
		closeTuple(e, len(args)+1)
		e.op(pickle.REDUCE)
		e.op(pickle.POP)
	default:
		return refuse(n, "operation %q cannot be written back", o.Name)
	}
	return nil
}

// cloudpickleModule returns the cloudpickle package (cloudpickle, or a
// vendored copy such as joblib.externals.cloudpickle) that built the call
// n, found from its callable's module; "cloudpickle" when none is seen.
// cloudpickle_fast under it has the setstate helpers in every cloudpickle
// release that folds them (≤ 2.2 defines them there, 3.x forwards).
func cloudpickleModule(n canon.Ref) string {
	x := n
	for i := 0; !x.IsNil() && i < 8 && x.Kind() == pickle.KindCall; i++ {
		x = x.Func()
	}
	if x.IsNil() || x.Kind() != pickle.KindGlobal || x.Flags()&pickle.FlagDynamic != 0 {
		return "cloudpickle"
	}
	m := x.Str()
	for _, suf := range []string{".cloudpickle_fast", ".cloudpickle", ""} {
		if p, ok := strings.CutSuffix(m, suf); ok && cloudpicklePackages[p] {
			return p
		}
	}
	return "cloudpickle"
}

// cloudpicklePackages are the cloudpickle packages the canonical form
// recognises (canonical-form.md §6).
var cloudpicklePackages = map[string]bool{
	"cloudpickle": true, "joblib.externals.cloudpickle": true, "ray.cloudpickle": true, "pyspark.cloudpickle": true,
	"apache_beam.internal.cloudpickle": true, "srsly.cloudpickle": true,
}
