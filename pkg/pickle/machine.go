package pickle

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
)

// Options tune Parse.
type Options struct {
	// BlobThreshold: see Reader.BlobThreshold.
	BlobThreshold int64
	// NewHash digests blobs and trailing bytes; nil skips digests.
	NewHash func() hash.Hash
	// MaxStreams stops after this many streams (0: no limit).
	MaxStreams int
	// AfterBuild, when set, is given to the reader (see Reader.AfterBuild).
	AfterBuild func(rd *Reader, s *Store, target ID) error
	// NoGraph leaves out the *Node graph: the streams hold their Store
	// only (Stream.Store), and Root, All, Tops, Log ... are empty.
	NoGraph bool
	// Keep lets the machine release what the consumer will never read
	// (see Keep); nil holds every node until the stream's STOP. It takes
	// effect only with Replay.
	Keep *Keep
	// Replay is the input again, for pass 1 (PlanStream) of a stream whose
	// store grows past MinCompact records: offsets are the reader's.
	Replay io.ReaderAt
}

// ParseFile reads the named file ("-" is stdin).
func ParseFile(path string, opt Options) (*File, error) {
	if path == "-" {
		return Parse(os.Stdin, -1, "-", opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return Parse(f, size, path, opt)
}

// Parse reads every pickle stream in r (size bytes, -1 if unknown) into
// graphs. The first stream must be a complete pickle; bytes after the last
// complete stream that do not form one are reported in File.Trailing.
// The garbage collector runs at a slower pace while Parse builds the graph
// (see QuietGC).
func Parse(r io.Reader, size int64, name string, opt Options) (*File, error) {
	rd := NewReader(r, size, name)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	return ParseReader(rd, opt)
}

// GCPercentWhileParsing is the garbage collector's percent (GOGC) while
// Parse runs (see QuietGC).
const GCPercentWhileParsing = 1000

var gcQuiet struct {
	sync.Mutex
	users int
	prev  int
}

// QuietGC raises the garbage collector's percent to GCPercentWhileParsing
// (it never lowers it: GOGC=off or a higher value stays) until the returned
// function is called. Nearly everything a parse allocates stays live until
// the graph is dropped, so collecting at the default pace scans a heap that
// only grows and frees next to nothing; memory stays bounded by what is
// live. Calls nest and may overlap between goroutines: the setting before
// the first is restored after the last. Parse uses it; a caller that goes
// on working on the graph (hashing it) may hold it longer, so that the
// collector does not scan the graph once more as soon as Parse returns.
//
// restore reports whether other holders remain. While holds overlap (pk
// hash --jobs over many inputs) the collector stays at the quiet pace, so a
// caller that has just dropped a large graph should then run runtime.GC
// itself, or dead graphs pile up to GCPercentWhileParsing/100 times what is
// live.
func QuietGC() (restore func() (others bool)) {
	gcQuiet.Lock()
	if gcQuiet.users == 0 {
		gcQuiet.prev = debug.SetGCPercent(GCPercentWhileParsing)
		if gcQuiet.prev < 0 || gcQuiet.prev > GCPercentWhileParsing {
			debug.SetGCPercent(gcQuiet.prev)
		}
	}
	gcQuiet.users++
	gcQuiet.Unlock()
	var once sync.Once
	return func() (others bool) {
		once.Do(func() {
			gcQuiet.Lock()
			gcQuiet.users--
			if gcQuiet.users == 0 {
				debug.SetGCPercent(gcQuiet.prev)
			}
			others = gcQuiet.users > 0
			gcQuiet.Unlock()
		})
		return others
	}
}

// ParseReader is Parse over an existing Reader. Like Parse, it holds
// QuietGC while it runs: the process's GC percent is raised for that time.
//
// All the streams of the input run on one machine: its node slab, item
// chunk, stack, marks and memo are reused from stream to stream, and
// Stream.All of each stream is a window of one buffer reserved for the
// whole input, so a stream costs its Stream, its nodes and their items,
// not a fresh set of reservations (see docs/reader.md, Memory).
func ParseReader(rd *Reader, opt Options) (*File, error) {
	if !opt.NoGraph {
		defer QuietGC()() // stores hold no pointers: only the graph needs it
	}
	return parseStreams(rd, opt, nil)
}

// ParseEach runs the streams of rd one at a time and calls fn with each as
// soon as its STOP is read, in order, on one machine that reuses the memory
// of a stream for the next one: the Stream, its nodes, their items and its
// lists are valid only until fn returns (copy what must outlive it). The
// cost of an input of many streams is then that of its largest stream, not
// of all of them. The File returned has Name, Size and Trailing as Parse
// would give them and no Streams. An error from fn stops the loop and is
// returned as it is. Unlike Parse, ParseEach does not hold QuietGC: what it
// allocates does not stay live.
//
// One guarantee beyond that: the stream whose STOP ends the input (nothing
// follows it) stays valid after ParseEach returns, since the machine reads
// and writes nothing more once the input is at its end. pk trace relies on
// it (pkg/trace/each.go: the only stream of most files is sized in place,
// after the machine's own memory has gone); TestEachSame would catch a
// change.
func ParseEach(rd *Reader, opt Options, fn func(st *Stream) error) (*File, error) {
	if fn == nil {
		fn = func(*Stream) error { return nil }
	}
	return parseStreams(rd, opt, fn)
}

// parseStreams is ParseReader (each nil: the streams are kept in File) and
// ParseEach (each is given every stream and the machine reuses its memory).
func parseStreams(rd *Reader, opt Options, each func(*Stream) error) (*File, error) {
	f := &File{Name: rd.Name()}
	if opt.AfterBuild != nil {
		rd.AfterBuild = opt.AfterBuild
	}
	m := newMachine(rd, each != nil, !opt.NoGraph)
	if opt.Keep != nil && opt.Replay != nil {
		m.keep, m.replay, m.project = opt.Keep, opt.Replay, false
	}
	var tee prefixTee
	count := 0
	for {
		if rd.AtEOF() {
			break
		}
		if opt.MaxStreams > 0 && count >= opt.MaxStreams {
			break
		}
		start := rd.Offset()
		if count > 0 {
			// the bytes of a later stream are kept aside in case it
			// fails (File.Trailing); one tee serves every stream
			tee.prefix = tee.prefix[:0]
			if opt.NewHash != nil {
				if tee.h == nil {
					tee.h = opt.NewHash()
				} else {
					tee.h.Reset()
				}
			}
			rd.Tee = &tee
		}
		st, err := m.run(count)
		if err != nil {
			if pe, ok := AsError(err); count == 0 || ok && pe.Released {
				return nil, err
			}
			reason := err.Error()
			if pe, ok := AsError(err); ok {
				c := *pe
				c.File = ""
				reason = c.Error()
			}
			rd.Discard(math.MaxInt64)
			rd.Tee = nil
			f.Trailing = &Trailing{Offset: start, Len: rd.Offset() - start, Reason: reason, Prefix: append([]byte(nil), tee.prefix...)}
			if tee.h != nil {
				f.Trailing.Digest = tee.h.Sum(nil)
			}
			break
		}
		rd.Tee = nil
		count++
		if each != nil {
			if err := each(st); err != nil {
				f.Size, f.Longest = rd.Offset(), rd.Longest
				return f, err
			}
			continue
		}
		if len(f.Streams) == cap(f.Streams) && len(f.Streams) >= 1024 && rd.Size() > 0 {
			// as growAll: one copy to the count projected from the bytes read
			n := int64(len(f.Streams))
			proj := n*(rd.Size()-m.start)/max(rd.Offset()-m.start, 1) + n/16 + 1024
			all := make([]*Stream, len(f.Streams), max(proj, n+n/4))
			copy(all, f.Streams)
			f.Streams = all
		}
		f.Streams = append(f.Streams, st)
	}
	f.Size, f.Longest = rd.Offset(), rd.Longest
	if count == 0 {
		return nil, &Error{File: rd.Name(), Offset: 0, Reason: "empty input: not a pickle"}
	}
	return f, nil
}

type prefixTee struct {
	h      hash.Hash
	prefix []byte
}

func (t *prefixTee) Write(p []byte) (int, error) {
	if len(t.prefix) < BlobPrefix {
		k := BlobPrefix - len(t.prefix)
		if k > len(p) {
			k = len(p)
		}
		t.prefix = append(t.prefix, p[:k]...)
	}
	if t.h != nil {
		t.h.Write(p)
	}
	return len(p), nil
}

// slot is one stack entry as the machine consumes it: the node and the
// bytes of the opcode that put the reference there. The stack holds it in
// 5 bytes (machine.stack and machine.pend: a million levels of objects
// keep 3 million slots open, 42 MB in 8-byte slots, 26 MB in these).
type slot struct {
	n ID
	// pending is the bytes of the opcode that put this reference here
	// (GET, DUP: at most MaxLine and its opcode byte), or originSlot for
	// the slot where n was built
	pending int32
}

// originSlot is slot.pending of the slot where its node was built.
const originSlot = -1

// origin reports whether n was built in this slot.
func (s slot) origin() bool { return s.pending == originSlot }

// bytes is what the opcode that put this reference here read (0 where
// the node was built: its opcode's bytes are the node's own).
func (s slot) bytes() int64 { return int64(max(s.pending, 0)) }

// A stack slot's pending in machine.pend: pendOrigin where its node was
// built, the bytes of the GET or DUP that put it there up to pendFar, and
// pendFar for more (a text GET's long argument, in machine.farPend).
const (
	pendOrigin = 0
	pendFar    = 255
)

// farPend is the pending of a slot whose pend is pendFar: its position on
// the stack and its bytes. machine.farPend holds them by increasing
// position (pushSlot drops those at or above a new one's), so that the
// entry of a slot still on the stack is the last one with its position.
type farPend struct {
	pos     int
	pending int32
}

// at returns stack slot i.
func (m *machine) at(i int) slot {
	switch p := m.pend[i]; p {
	case pendOrigin:
		return slot{n: m.stack[i], pending: originSlot}
	case pendFar:
		for j := len(m.farPend) - 1; ; j-- {
			if f := m.farPend[j]; f.pos == i {
				return slot{n: m.stack[i], pending: f.pending}
			}
		}
	default:
		return slot{n: m.stack[i], pending: int32(p)}
	}
}

// pushSlot pushes node id with pending (originSlot or the bytes of the
// GET or DUP that read it).
func (m *machine) pushSlot(id ID, pending int32) {
	i := len(m.stack)
	if i == cap(m.stack) || i >= len(m.pend) {
		m.growStack()
	}
	m.stack = m.stack[:i+1]
	m.stack[i] = id
	switch {
	case pending == originSlot:
		m.pend[i] = pendOrigin
	case pending < pendFar:
		m.pend[i] = uint8(pending)
	default:
		m.pend[i] = pendFar
		k := len(m.farPend)
		for k > 0 && m.farPend[k-1].pos >= i {
			k--
		}
		m.farPend = append(m.farPend[:k], farPend{pos: i, pending: pending})
	}
}

// growStack makes room for one more slot: the IDs as room grows them
// (doubling a large stack), pend to the same capacity.
func (m *machine) growStack() {
	if len(m.stack) == cap(m.stack) {
		m.outgrown += 4 * cap(m.stack) // (4-byte IDs)
		if cap(m.stack) < 1024 {
			m.stack = slices.Grow(m.stack, 1) // (as append grows it)
		} else {
			m.stack = room(m.stack, 1)
		}
	}
	if len(m.pend) < cap(m.stack) {
		m.outgrown += len(m.pend)
		pend := make([]uint8, cap(m.stack))
		grow.Copy(pend, m.pend[:len(m.stack)])
		m.pend = pend
	}
}

// releaseAt is how many bytes of outgrown arrays the machine lets pile up
// before it hands them back to the system (releaseOutgrown; a variable for
// the tests).
var releaseAt = 8 << 20

// releaseOutgrown collects the heap and returns its free pages to the
// system (debug.FreeOSMemory; a variable for the tests). The machine grows
// its stack, records and arenas by copying them into larger arrays, and
// the arrays it outgrows were filled to the brim: collected, their pages
// stay resident for the runtime to reuse, but what the machine allocates
// after them is larger than those holes. A million levels of objects (cost
// shape nest_newobj_build) kept 50 MB of them resident at its peak (old
// stacks 27, items and call log 22). run calls it between batches of
// opcodes once machine.outgrown reaches releaseAt: about once per doubling
// of an array of 8 MB or more (five times on that shape); the states never
// outgrow 1 MB.
var releaseOutgrown = debug.FreeOSMemory

type mark struct {
	pos   int
	bytes int64
}

// machine runs streams into stores: CPython's unpickler, symbolically (see
// docs/reader.md). All the streams of an input share its buffers: each
// stream's store is a window of them (Parse), or every stream reuses them
// from the start (ParseEach), so a stream costs its nodes, not a fresh set
// of reservations.
type machine struct {
	rd      *Reader
	s       *Store
	stack   []ID    // the nodes on the stack
	pend    []uint8 // by stack position, the slot's pending (pendOrigin, ...; as long as stack's capacity)
	farPend []farPend
	marks   []mark
	memo    memoTable
	op      *Op
	cur     Op
	ops     *[opBatch]Op // opcodes decoded from the read buffer (Reader.NextBuffered)
	slow    int          // opcodes read one at a time before ops was made
	nbuf    int64
	buf     []ID // scratch for item lists

	// the rest of the buffers the stores are windows of
	recs    []rec
	sides   []side
	ring    []ID // a lean store's owners (Store.ring), one for every stream
	kids    []ID
	text    []byte
	exts    []ext
	fars    []far
	muts    []smut
	evs     []sev
	lists   []ID     // chunk the first Tops entry of each stream is carved from
	stores  []Store  // chunk the stores are carved from
	streams []Stream // chunk the Streams of NoGraph are carved from

	start    int64       // offset of the first stream
	before   int64       // nodes of the streams before this one
	reuse    bool        // ParseEach: every stream runs in the memory of the one before
	graph    bool        // build the *Node graph of each stream
	project  bool        // may project record counts from the input's size (not for RunStream)
	projN    int64       // records when growRecs last projected (0: not yet in this stream)
	projDone int64       // bytes read then
	end      int64       // RunStreamLen: where the stream ends (0: the input's size)
	grow     arenaGrowth // the current stream's (Store.grow)
	one      *reused     // with reuse, the Store and Stream every stream is built in

	// release (Options.Keep, release.go)
	keep *Keep
	// oneNone is 1 + the ID of the stream's shared None (Keep.OneNone;
	// none), 0 until its first NONE and after each compaction or cut of
	// the store (which renumber or release it)
	oneNone ID
	// emptyOn: Keep.OneEmpty, and the store is held whole (wholeNow);
	// pinned: the last empty container a memo write a later opcode may
	// read named (0 and below: none; what precedes it is not shared)
	emptyOn     bool
	pinned      ID
	replay      io.ReaderAt
	planTried   bool       // plan was asked for in this stream
	ahead       *aheadPlan // pass 1 begun beside the machine (planAhead)
	nextCompact int        // store size (records) at which to compact next
	liveRuns    int        // compactions in a row that kept most of the store
	lvl         []int32    // scratch of compact
	taint       []uint8
	namedSet    []bool
	frames      []walkFrame
	walkKids    []ID
	work        []ID
	ids         []ID
	mutAt       []int32
	spare       spareSet
	fs          *foldScratch // foldFinal's (Keep.Fold), made when first needed

	// Keep.FoldArgs (foldargs.go): the memo indices written since the last
	// node logged (nil without FoldArgs), the store's length at the last
	// opcode that may have made an older node name newer ones, and
	// foldArgs' scratch
	memoTail []int64
	effectAt int
	fa       *foldArgScratch

	outgrown int // bytes of the arrays outgrown since run last released them (releaseOutgrown)
}

// reused is the Store every stream of ParseEach is built in, and, without
// the graph, the Stream it is handed out in (apart from the machine, which
// RunStream makes for each of a joblib file's object arrays without them).
type reused struct {
	s  Store
	st Stream
}

// collectAt is the size of a stack dropped at STOP from which the
// machine runs the collector (dropScratch).
const collectAt = 16 << 20

// opBatch is how many opcodes the machine decodes from the read buffer at
// a time.
const opBatch = 128

// batchAfter is how many opcodes a machine reads one at a time before it
// decodes them in batches (a variable for the tests, which compare both
// ways on every input).
var batchAfter = opBatch

// newMachine returns a machine for the streams read from rd.
func newMachine(rd *Reader, reuse, graph bool) *machine {
	rd.Borrow = true // every text is copied into the store at once
	m := &machine{rd: rd, start: rd.Offset(), reuse: reuse, graph: graph, project: true}
	if reuse {
		m.one = &reused{}
	}
	return m
}

// RunStream runs one pickle stream from the reader's position to its STOP,
// into a Store (Stream.Store; no graph). At the end of input before any
// opcode it returns io.EOF.
// The machine is the stream's own and reserves nothing from the bytes left
// (a joblib file runs one for each object array, followed by array data).
func RunStream(rd *Reader, index int) (*Stream, error) {
	m := &machine{rd: rd, start: rd.Offset()}
	return m.run(index)
}

// RunStreamLen is RunStream for a stream known to end n bytes from the
// reader's position (pk diff reads again a stream it has hashed): the
// machine sizes its tables from the share of those bytes read so far, as
// Parse does from the file's size, instead of growing them by append's
// quarter steps (a million discarded calls: 1.5 GB allocated and copied).
func RunStreamLen(rd *Reader, index int, n int64) (*Stream, error) {
	m := &machine{rd: rd, start: rd.Offset(), project: n > 0, end: rd.Offset() + n}
	return m.run(index)
}

// window returns a zero-length slice over the unused capacity of buf.
func window[T any](buf []T) []T { return buf[len(buf):len(buf):cap(buf)] }

// run runs the next stream on m.
func (m *machine) run(index int) (*Stream, error) {
	var s *Store
	if m.reuse {
		s = &m.one.s
		*s = Store{Index: index, Begin: m.rd.Offset(), Root: NoID,
			recs: s.recs[:0], sides: s.sides[:0], kids: s.kids[:0], text: s.text[:0], ext: s.ext[:0], far: s.far[:0], muts: s.muts[:0], log: s.log[:0],
			Tops: s.Tops[:0], Popped: s.Popped[:0], Leftover: s.Leftover[:0]}
	} else {
		if len(m.stores) == 0 {
			m.stores = make([]Store, min(64, 1+int(m.before/64)))
		}
		s = &m.stores[0]
		m.stores = m.stores[1:]
		*s = Store{Index: index, Begin: m.rd.Offset(), Root: NoID,
			recs: window(m.recs), sides: window(m.sides), kids: window(m.kids), text: window(m.text), ext: window(m.exts), far: window(m.fars), muts: window(m.muts), log: window(m.evs)}
	}
	if m.keep != nil && (m.keep.OneNone || m.keep.Lean) {
		// (nothing reads a Self or an owner but foldArgs, within ownWin)
		if m.ring == nil {
			m.ring = make([]ID, ownWin)
		}
		s.sides, s.ring = nil, m.ring
	}
	m.grow = arenaGrowth{m: m}
	s.grow = &m.grow
	m.s = s
	m.projN, m.projDone = 0, 0
	m.stack = m.stack[:0]
	m.marks = m.marks[:0]
	m.memo.reset()
	m.planTried = false
	m.planAhead()
	m.nbuf = 0
	m.nextCompact, m.liveRuns = MinCompact, 0
	m.spare = spareSet{} // the last stream's store owns what it was compacted into
	m.effectAt = 0
	m.oneNone = 0
	m.emptyOn, m.pinned = false, -1
	if m.keep != nil && m.keep.FoldArgs != nil {
		if m.memoTail == nil {
			m.memoTail = make([]int64, 0, 64)
		}
		m.memoTail = m.memoTail[:0]
	}
	rd := m.rd
	for {
		if m.outgrown >= releaseAt {
			m.outgrown = 0
			releaseOutgrown()
		}
		if m.ops != nil {
			// the opcodes whole in the read buffer, decoded in one pass
			// (none with Tee set: the streams after an input's first);
			// never STOP, so the stream goes on after them. AfterBuild
			// reads the input right after a BUILD: a batch then ends
			// with the first BUILD.
			stop := noStop
			if rd.AfterBuild != nil {
				stop = int(BUILD)
			}
			n := rd.nextBuffered(m.ops[:], stop, true) // (m.ops: written there only)
			for i := range n {
				m.op = &m.ops[i]
				if _, err := m.step(m.op); err != nil {
					m.endStream()
					return nil, err
				}
				if m.keep != nil && len(s.recs) >= m.nextCompact {
					m.maybeCompact()
					s = m.s
				}
			}
		}
		err := rd.next(&m.cur)
		if m.ops == nil {
			// a machine's first opcodes are read one at a time: a small
			// stream (RunStream's, run once per joblib object array)
			// does without the batch's memory
			if m.slow++; m.slow >= batchAfter {
				m.ops = new([opBatch]Op)
			}
		}
		if err != nil {
			m.endStream()
			if errors.Is(err, io.EOF) {
				if rd.Offset() == s.Begin {
					return nil, &Error{File: rd.Name(), Offset: rd.Offset(), Reason: "empty input: not a pickle"}
				}
				return nil, &Error{File: rd.Name(), Offset: rd.Offset(), Reason: "pickle data was truncated: input ends before STOP"}
			}
			return nil, err
		}
		m.op = &m.cur
		done, err := m.step(m.op)
		if err != nil {
			m.endStream()
			return nil, err
		}
		if m.keep != nil && !done && len(s.recs) >= m.nextCompact {
			m.maybeCompact()
			s = m.s
		}
		if done {
			s.End = rd.Offset()
			m.endStream()
			m.dropScratch()
			if m.graph {
				// the graph is built in one go from the store, which is
				// then dropped (Stream.Store builds it again from the graph
				// when asked)
				st := s.Graph()
				if !m.reuse {
					m.dropStore(s)
				}
				return st, nil
			}
			var st *Stream
			if m.reuse {
				st = &m.one.st
			} else {
				if len(m.streams) == 0 {
					m.streams = make([]Stream, min(64, 1+int(m.before/64)))
				}
				st = &m.streams[0]
				m.streams = m.streams[1:]
			}
			*st = Stream{Index: s.Index, Offset: s.Begin, End: s.End, Proto: s.Proto, LeftoverMarks: s.LeftoverMarks, Self: s.StreamSelf, store: s}
			return st, nil
		}
	}
}

// dropScratch lets the collector take the machine's large scratch arrays
// at a stream's STOP, where they are empty or done with (the stack, the
// memo, compaction's tables), before the consumer works on the stream: a
// million levels of objects left a stack of 5 million slots (42 MB) held
// while pk hash encoded them. A later stream that needs as much grows them
// again; small ones are kept for the next of many small streams.
func (m *machine) dropScratch() {
	const keep = 1 << 12
	big := func(n int) bool { return n >= keep }
	dropped := 0 // bytes of the stack let go
	if big(cap(m.stack)) {
		dropped = cap(m.stack)*5 + cap(m.farPend)*16
		m.stack, m.pend, m.farPend = nil, nil, nil
	}
	if dropped >= collectAt || m.s.bytes() >= collectAt {
		// the collector's goal may have been set by a cycle that counted
		// the stack as live: collected now, the goal becomes one and a
		// half times the store, not the store and a million-level stack,
		// before the consumer allocates its own tables (a million levels
		// of objects: peak RSS of pk scan 309 -> 265 MB, of pk trace
		// --top 20 240 -> 227 MB, of pk hash 323 -> 288 MB; one cycle of
		// a heap without pointers, a few milliseconds). So it may with a
		// large store and a small stack: the cycle that set the goal ran
		// while the machine grew the store, counting its scratch (the
		// memo) and what growth left behind (a cloudpickle state: a goal
		// of 55 MB for a store of 33, 49 after this cycle; peak RSS of pk
		// hash 65 -> 61 MB, of the dill state 57 -> 54 MB). A store of
		// collectAt bytes or more took some 50 ms to build: one cycle
		// for each costs under 2 % of that.
		defer runtime.GC()
	}
	if big(cap(m.marks)) {
		m.marks = nil
	}
	if big(cap(m.memo.dense)) || big(len(m.memo.sparse)) || big(cap(m.memo.seen)) || m.memo.plan != nil {
		m.memo = memoTable{}
	}
	if big(cap(m.lvl)) || big(cap(m.taint)) || big(cap(m.namedSet)) || big(cap(m.ids)) || big(cap(m.mutAt)) || big(cap(m.work)) || big(cap(m.walkKids)) || big(cap(m.frames)) {
		m.lvl, m.taint, m.namedSet, m.ids, m.mutAt, m.work, m.walkKids, m.frames = nil, nil, nil, nil, nil, nil, nil, nil
	}
	m.fs = nil
	m.spare = spareSet{}
}

// endStream closes the stream's windows of the machine's buffers (a later
// append to the store reallocates, never writes into the next stream's
// window) and hands the rest of the buffers to the next stream.
func (m *machine) endStream() {
	if m.ahead != nil {
		// (no goroutine reads the input after its stream; a plan never
		// asked for is dropped)
		<-m.ahead.done
		m.ahead = nil
	}
	s := m.s
	s.grow = nil // (a consumer's appends to a finished store double)
	if m.reuse {
		return // the next stream starts again at the buffers' beginning
	}
	m.before += int64(len(s.recs))
	m.recs, s.recs = s.recs[len(s.recs):len(s.recs):cap(s.recs)], s.recs[:len(s.recs):len(s.recs)]
	if !s.Lean() {
		m.sides, s.sides = s.sides[len(s.sides):len(s.sides):cap(s.sides)], s.sides[:len(s.sides):len(s.sides)]
	}
	m.kids, s.kids = s.kids[len(s.kids):len(s.kids):cap(s.kids)], s.kids[:len(s.kids):len(s.kids)]
	m.text, s.text = s.text[len(s.text):len(s.text):cap(s.text)], s.text[:len(s.text):len(s.text)]
	m.exts, s.ext = s.ext[len(s.ext):len(s.ext):cap(s.ext)], s.ext[:len(s.ext):len(s.ext)]
	m.fars, s.far = s.far[len(s.far):len(s.far):cap(s.far)], s.far[:len(s.far):len(s.far)]
	m.muts, s.muts = s.muts[len(s.muts):len(s.muts):cap(s.muts)], s.muts[:len(s.muts):len(s.muts)]
	m.evs, s.log = s.log[len(s.log):len(s.log):cap(s.log)], s.log[:len(s.log):len(s.log)]
	// an empty window is nil: one pointer less per slice for the collector
	// to follow in each kept stream (a million `N.` streams hold no items,
	// texts, extras, operations or events)
	s.kids, s.text, s.ext, s.far, s.muts, s.log = nilIfEmpty(s.kids), nilIfEmpty(s.text), nilIfEmpty(s.ext), nilIfEmpty(s.far), nilIfEmpty(s.muts), nilIfEmpty(s.log)
	s.sides = nilIfEmpty(s.sides)
}

func nilIfEmpty[T any](b []T) []T {
	if len(b) == 0 {
		return nil
	}
	return b
}

// dropStore lets the collector take a store whose graph was built: the
// machine's buffers start afresh, as the store was a window of them.
func (m *machine) dropStore(s *Store) {
	*s = Store{}
	m.recs, m.sides, m.kids, m.text, m.exts, m.fars, m.muts, m.evs = nil, nil, nil, nil, nil, nil, nil, nil
}

func (m *machine) fail(format string, args ...any) error {
	return &Error{File: m.rd.Name(), Offset: m.op.Offset, Op: m.op.Code.String(), Reason: fmt.Sprintf(format, args...)}
}

func (m *machine) fence() int {
	if len(m.marks) == 0 {
		return 0
	}
	return m.marks[len(m.marks)-1].pos
}

func (m *machine) underflow() error {
	if len(m.marks) > 0 {
		return m.fail("unexpected MARK found (stack underflow)")
	}
	return m.fail("unpickling stack underflow")
}

// newNode adds a node created by the current opcode.
func (m *machine) newNode(k Kind) ID {
	s := m.s
	if len(s.recs) == cap(s.recs) {
		m.growRecs()
	}
	id := ID(len(s.recs))
	s.recs = s.recs[:id+1]
	r := &s.recs[id] // (written in place: a literal assigned to s.recs[id] is built aside and copied)
	*r = rec{kind: k, op: m.op.Code, off: uint32(m.op.Offset)}
	if uint32(uint64(m.op.Offset)>>32) != s.hiLast {
		noteOff(&s.hi, &s.hiLast, id, m.op.Offset)
	}
	s.sideNew(id)
	return id
}

// growRecs makes room for one record at least: with the input size known, for the count
// projected from the bytes read so far by every stream of the input (one
// copy instead of a series of doublings).
func (m *machine) growRecs() {
	s := m.s
	n := int64(len(s.recs))
	size := m.rd.Size()
	if m.end > 0 {
		size = m.end
	}
	start, before := m.start, m.before
	if m.graph || m.reuse {
		// the buffers are not windows for the streams after this one
		// (a store dropped once its graph is built, or ParseEach's one
		// store used again): project this stream's count alone
		start, before = s.Begin, 0
	}
	// (the end of the current opcode: the reader may have decoded more)
	done := m.op.Offset + m.op.Len - start
	total := before + n
	if size < 0 || done <= 0 || total < 1024 || !m.project {
		if n >= 256 && n < int64(MinCompact) {
			// doubled up to the size of a first compaction: past 256
			// entries append grows by a quarter at a time (the records
			// below 16K were allocated and copied five times over);
			// below, append doubles and a small stream stays small
			s.recs = grownTo(s.recs, 2*int(n))
			s.growSides(2*int(n), &m.outgrown)
		} else {
			s.recs = slices.Grow(s.recs, 1) // as append grows it
		}
		return
	}
	proj := total * (size - start) / done
	if m.projN > 0 && n > m.projN && done > m.projDone {
		// the last projection fell short: the input changed its pace (a
		// million GETs that make no record, then a million levels of calls
		// that make three each): project from the pace since then, or
		// double (within a record a byte left), whichever is more, within
		// four times the whole input's pace (cost shape nest_reduce: six
		// projections of 443 MB in all -> two of 141 MB; nest_dict_mark,
		// whose last quarter makes three times the records of the rest:
		// three of 200 MB -> two of 133 MB)
		left := size - start - done
		recent := total + (n-m.projN)*left/(done-m.projDone)
		double := total + min(total, left)
		proj = max(proj, min(max(recent, double), 4*proj))
	}
	m.projN, m.projDone = n, done
	proj += proj/16 + 1024
	proj -= before
	if floor := n + n/4 + 16; proj < floor {
		proj = floor
	}
	recs := make([]rec, n, proj)
	adviseHuge(recs) // (filled front to back from here: see adviseHuge)
	grow.Copy(recs, s.recs)
	m.outgrown += int(n) * int(unsafe.Sizeof(rec{}))
	s.recs = recs
	s.growSides(int(proj), &m.outgrown)
	// the item and text arenas grow with the records: to the share
	// projected from what this stream has put in them so far (one copy
	// instead of a series of doublings, each of which holds the old array
	// and the new at once)
	s.kids = projected(s.kids, n, proj, &m.outgrown)
	s.text = projected(s.text, n, proj, &m.outgrown)
	// and so do the side tables, the log and the lists, which append would
	// grow by a quarter at a time past a few hundred entries (a million
	// levels of NEWOBJ and BUILD: 2 million events, whose growth allocated
	// 5 times their size)
	s.ext = projected(s.ext, n, proj, &m.outgrown)
	s.muts = projected(s.muts, n, proj, &m.outgrown)
	s.log = projected(s.log, n, proj, &m.outgrown)
	s.Tops = projected(s.Tops, n, proj, &m.outgrown)
	s.Popped = projected(s.Popped, n, proj, &m.outgrown)
	// the memo's dense part too (a cloudpickle state memoises every other
	// node: 400,000 entries, which append's quarter steps allocated 5
	// times over)
	// (with a plan it keeps its length: adopt)
	if m.memo.plan == nil {
		m.memo.dense = projected(m.memo.dense, n, proj, &m.outgrown)
	}
}

// The arenas a store fills after its records: items, side records,
// operations and the call log (arenaGrowth).
const (
	arenaKids = iota
	arenaExt
	arenaMuts
	arenaLog
	nArenas
)

// arenaGrowth projects the growth of a store's arenas while the machine
// writes it (Store.grow; set by run, cleared by endStream). growRecs sizes
// them with the records, but an input may fill them later at a pace of its
// own: the second half of a million levels of objects (cost shape
// nest_newobj_build, `SETITEM BUILD` a level after every level was opened)
// makes no record and an operation, a side record, a log entry and three
// items a level. Doubled from there, the side records and operations
// allocated 120 MB for their 44 MB, the old arrays held beside the new
// (pk hash's peak: 356 MB; projected, 322 MB).
type arenaGrowth struct {
	m    *machine
	pace [nArenas]struct{ n, at int64 } // each arena's length and the input's offset when it last grew
}

// arenaRoom returns buf, arena a of s, with room for n more entries. A
// full arena of the machine's store that is large grows to the length
// projected from its pace since it last grew over the bytes the input has
// left, or doubles, whichever is more, within 16 times its length (one
// copy where doubling made several); a consumer's store doubles (room).
func arenaRoom[T any](s *Store, buf []T, n int, a int) []T {
	if n <= cap(buf)-len(buf) {
		return buf
	}
	return arenaGrown(s, buf, n, a)
}

// arenaGrown is arenaRoom's growth.
func arenaGrown[T any](s *Store, buf []T, n int, a int) []T {
	g := s.grow
	if g == nil || len(buf) < 1024 || g.m.op == nil {
		return room(buf, n)
	}
	m := g.m
	size := m.rd.Size()
	if m.end > 0 {
		size = m.end
	}
	at := m.op.Offset + m.op.Len
	l := int64(len(buf))
	want := 2 * l
	p := &g.pace[a]
	if m.project && size > at && p.n > 0 && l > p.n && at > p.at {
		// (in floating point: entries times bytes may pass int64)
		recent := float64(l-p.n) * float64(size-at) / float64(at-p.at)
		want = max(want, l+int64(min(recent+recent/16, float64(max(15*l, 1<<20)))))
	}
	p.n, p.at = l, at
	out := make([]T, l, max(want, l+int64(n)))
	adviseHuge(out) // (filled front to back, as the records: see adviseHuge)
	grow.Copy(out, buf)
	m.outgrown += int(l) * int(unsafe.Sizeof(buf[0]))
	return out
}

// projected returns buf with room for the length it would have at proj
// records, from its length at n records, when that is more than it has,
// adding the bytes of an outgrown buf to *outgrown.
func projected[T any](buf []T, n, proj int64, outgrown *int) []T {
	want := int64(len(buf))*proj/max(n, 1) + int64(len(buf))/16
	if want <= int64(cap(buf)) {
		return buf
	}
	out := make([]T, len(buf), want)
	grow.Copy(out, buf)
	*outgrown += len(buf) * int(unsafe.Sizeof(buf[0]))
	return out
}

func (m *machine) r(id ID) *rec { return &m.s.recs[id] }

// push puts a freshly built node on the stack, with the opcode's bytes.
func (m *machine) push(id ID) {
	m.s.AddSelf(id, m.op.Len)
	m.pushSlot(id, originSlot)
}

func (m *machine) pop() (slot, error) {
	if len(m.stack) <= m.fence() {
		return slot{}, m.underflow()
	}
	s := m.at(len(m.stack) - 1)
	m.stack = m.stack[:len(m.stack)-1]
	return s, nil
}

// take attributes a consumed slot to its consumer.
func (m *machine) take(s slot, by ID) ID {
	if s.pending > 0 {
		m.s.AddSelf(by, int64(s.pending))
	}
	m.own(s, by)
	return s.n
}

// own makes by the owner of the node in a consumed slot where that node
// was built, unless it has one.
func (m *machine) own(s slot, by ID) {
	if s.origin() {
		m.claim(s.n, by)
	}
}

// claim makes by the owner of the node id built where its slot was, unless
// it has one or is by itself.
func (m *machine) claim(id, by ID) {
	if id != by && m.s.recs[id].flags&flagOwned == 0 {
		m.s.own(id, by)
	}
}

// drop records a slot discarded by POP/POP_MARK or left at STOP.
func (m *machine) drop(sl slot, popped bool) {
	s := m.s
	s.StreamSelf += sl.bytes()
	if sl.origin() && s.recs[sl.n].flags&flagOwned == 0 {
		s.Tops = append(s.Tops, sl.n)
		if popped {
			s.Popped = append(s.Popped, sl.n)
		} else {
			s.Leftover = append(s.Leftover, sl.n)
		}
	}
}

func (m *machine) marker() (mark, error) {
	if len(m.marks) == 0 {
		return mark{}, m.fail("could not find MARK")
	}
	mk := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	return mk, nil
}

// log appends to the call log the event of node id, made by the current
// opcode (its kind is the node's: see Store.Event).
func (m *machine) log(id ID) {
	m.s.log = append(arenaRoom(m.s, m.s.log, 1, arenaLog), sev{node: id, at: -1})
	if m.memoTail != nil {
		m.memoTail = m.memoTail[:0] // (foldArgs: a tuple holding id is never cut)
	}
}

// takeAll pops stack[from:] as items consumed by by, into m.buf.
func (m *machine) takeAll(from int, by ID) []ID {
	m.buf = append(m.buf[:0], make([]ID, len(m.stack)-from)...)
	m.takeInto(m.buf, from, by)
	if m.emptyOn {
		m.shareEmpties(m.buf, by, false)
	}
	return m.buf
}

// takeInto pops stack[from:] as items consumed by by, into dst (take of
// each, their bytes added to by's at once).
func (m *machine) takeInto(dst []ID, from int, by ID) {
	// (take of each slot, read from the stack's two arrays in one loop
	// rather than a slot at a time through at: 1.2 million items of a
	// cloudpickle state)
	var bytes int64
	pend := m.pend[from:len(m.stack)]
	for i, id := range m.stack[from:] {
		switch p := pend[i]; p {
		case pendOrigin:
			m.claim(id, by)
		case pendFar:
			bytes += m.at(from + i).bytes()
		default:
			bytes += int64(p)
		}
		dst[i] = id
	}
	if bytes > 0 {
		m.s.AddSelf(by, bytes)
	}
	m.stack = m.stack[:from]
}

// itemsFrom pops stack[from:] as the items of by, a node of this opcode
// that has none yet (SetItems with takeAll's items, written straight into
// the item arena), and returns by's ID: with move, by, the store's last
// record and named by nothing yet, may take a lower one (shareEmpties).
func (m *machine) itemsFrom(from int, by ID, move bool) ID {
	s := m.s
	n := len(m.stack) - from
	kids := slices.Grow(arenaRoom(s, s.kids, n, arenaKids), n) // (as append(kids, items...) grows it)
	at := len(kids)
	s.kids = kids[:at+n]
	m.takeInto(s.kids[at:], from, by)
	if m.emptyOn {
		by = m.shareEmpties(s.kids[at:], by, move)
	}
	r := &s.recs[by]
	r.setKids(int32(at), int32(n))
	return by
}

// scalar is newNode then push, in one: the most common opcodes make a
// node and push it.
func (m *machine) scalar(k Kind) ID {
	s := m.s
	if len(s.recs) == cap(s.recs) {
		m.growRecs()
	}
	o := m.op
	id := ID(len(s.recs))
	s.recs = s.recs[:id+1]
	r := &s.recs[id]
	*r = rec{kind: k, op: o.Code, off: uint32(o.Offset)}
	if uint32(uint64(o.Offset)>>32) != s.hiLast {
		noteOff(&s.hi, &s.hiLast, id, o.Offset)
	}
	s.sideNew(id)
	s.AddSelf(id, o.Len)
	m.pushSlot(id, originSlot)
	return id
}

// none pushes a None: a node of its own, or with Keep.OneNone the
// stream's shared None (m.oneNone) once there is one, pushed as a GET
// pushes what it reads (the opcode's byte pending for its consumer, the
// node FlagShared).
func (m *machine) none() {
	if m.oneNone != 0 {
		id := m.oneNone - 1
		m.s.recs[id].flags |= FlagShared
		m.pushSlot(id, int32(m.op.Len))
		if m.keep.SharedNone != nil {
			m.keep.SharedNone(m.s, id)
		}
		return
	}
	id := m.scalar(KindNone)
	if m.keep != nil && (m.keep.OneNone || m.keep.SharedNone != nil) {
		m.oneNone = id + 1
	}
}

// sharing reports whether the Nones are shared with Keep.SharedNone.
func (m *machine) sharing() bool { return m.keep != nil && m.keep.SharedNone != nil }

// noneAlone refuses, with Keep.SharedNone, what would make a None differ
// from a None of its own (see there): sl is a slot about to be memoized,
// duplicated, popped, left or returned (any None for the first two, a
// shared one for the others).
func (m *machine) noneAlone(sl slot, any bool) error {
	if !m.sharing() || m.s.recs[sl.n].kind != KindNone {
		return nil
	}
	if !any && sl.pending != 1 { // (a shared None's NONE: one byte)
		return nil
	}
	err := m.fail("%s of a None whose record this read shares between its Nones", m.op.Code)
	err.(*Error).Released = true
	return err
}

func (m *machine) step(o *Op) (bool, error) {
	s := m.s
	switch o.Code {
	case PROTO:
		if o.Int > HighestProtocol {
			return false, m.fail("unsupported pickle protocol: %d", o.Int)
		}
		s.Proto = int(o.Int)
		s.StreamSelf += o.Len
	case FRAME:
		s.StreamSelf += o.Len
	case STOP:
		s.StreamSelf += o.Len
		sl, err := m.pop()
		if err != nil {
			return false, err
		}
		if err := m.noneAlone(sl, false); err != nil {
			return false, err
		}
		s.Root = sl.n
		s.StreamSelf += sl.bytes()
		if sl.origin() && s.recs[sl.n].flags&flagOwned == 0 {
			if cap(s.Tops) == 0 && !m.reuse {
				// carved from a shared chunk: a stream whose only top is
				// its root allocates nothing for it
				if len(m.lists) == 0 {
					m.lists = make([]ID, 1024)
				}
				s.Tops = m.lists[:0:1]
				m.lists = m.lists[1:]
			}
			s.Tops = append(s.Tops, sl.n)
		}
		for i := range m.stack {
			if err := m.noneAlone(m.at(i), false); err != nil {
				return false, err
			}
			m.drop(m.at(i), false)
		}
		for _, mk := range m.marks {
			s.StreamSelf += mk.bytes
		}
		s.LeftoverMarks = len(m.marks)
		return true, nil
	case MARK:
		m.marks = grow.Push(m.marks, mark{pos: len(m.stack), bytes: o.Len})
	case POP:
		n := len(m.stack)
		if len(m.marks) > 0 && m.marks[len(m.marks)-1].pos == n {
			mk := m.marks[len(m.marks)-1]
			m.marks = m.marks[:len(m.marks)-1]
			s.StreamSelf += mk.bytes + o.Len
			return false, nil
		}
		sl, err := m.pop()
		if err != nil {
			return false, err
		}
		if err := m.noneAlone(sl, false); err != nil {
			return false, err
		}
		s.StreamSelf += o.Len
		m.drop(sl, true)
	case POP_MARK:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		s.StreamSelf += mk.bytes + o.Len
		for i := mk.pos; i < len(m.stack); i++ {
			if err := m.noneAlone(m.at(i), false); err != nil {
				return false, err
			}
			m.drop(m.at(i), true)
		}
		m.stack = m.stack[:mk.pos]
	case DUP:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		if m.sharing() {
			if err := m.noneAlone(m.at(len(m.stack)-1), true); err != nil {
				return false, err
			}
		}
		top := m.stack[len(m.stack)-1]
		s.recs[top].flags |= FlagShared
		m.pushSlot(top, int32(o.Len))

	// scalars
	case NONE:
		m.none()
	case NEWTRUE, NEWFALSE:
		id := m.scalar(KindBool)
		if o.Code == NEWTRUE {
			s.recs[id].v = 1
		}
	case INT:
		if o.IsBool {
			s.recs[m.scalar(KindBool)].v = o.Int
			break
		}
		m.intNode(o)
	case BININT, BININT1, BININT2, LONG, LONG1, LONG4:
		m.intNode(o)
	case FLOAT, BINFLOAT:
		s.recs[m.scalar(KindFloat)].v = o.Int
	case STRING, BINSTRING, SHORT_BINSTRING:
		id := m.scalar(KindStr)
		s.recs[id].flags |= FlagPy2Str
		if o.Blob != nil {
			s.SetBlob(id, o.Blob)
		} else {
			s.SetStr(id, Latin1ToUTF8(o.Str))
		}
	case UNICODE, BINUNICODE, SHORT_BINUNICODE, BINUNICODE8:
		m.payload(m.scalar(KindStr), o)
	case BINBYTES, SHORT_BINBYTES, BINBYTES8:
		m.payload(m.scalar(KindBytes), o)
	case BYTEARRAY8:
		m.payload(m.scalar(KindByteArray), o)
	case EMPTY_LIST:
		m.scalar(KindList)
	case EMPTY_DICT:
		m.scalar(KindDict)
	case EMPTY_TUPLE:
		m.scalar(KindTuple)
	case EMPTY_SET:
		m.scalar(KindSet)

	// containers from a MARK
	case LIST, TUPLE, FROZENSET, DICT:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		k := KindList
		switch o.Code {
		case TUPLE:
			k = KindTuple
		case FROZENSET:
			k = KindFrozenSet
		case DICT:
			k = KindDict
		}
		if k == KindDict && (len(m.stack)-mk.pos)%2 != 0 {
			return false, m.fail("odd number of items for DICT")
		}
		id := m.newNode(k)
		s.AddSelf(id, mk.bytes)
		id = m.itemsFrom(mk.pos, id, true)
		m.push(id)
	case TUPLE1, TUPLE2, TUPLE3:
		c := int(o.Code-TUPLE1) + 1
		if len(m.stack)-c < m.fence() {
			return false, m.underflow()
		}
		id := m.newNode(KindTuple)
		id = m.itemsFrom(len(m.stack)-c, id, true)
		m.push(id)

	// container operations
	case APPEND:
		x := len(m.stack) - 1
		if x <= m.fence() {
			return false, m.underflow()
		}
		if err := m.appendTo(x, o.Len, KindList); err != nil {
			return false, err
		}
	case APPENDS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		if err := m.appendTo(mk.pos, o.Len+mk.bytes, KindList); err != nil {
			return false, err
		}
	case SETITEM:
		x := len(m.stack) - 2
		if x <= m.fence() {
			return false, m.underflow()
		}
		if err := m.appendTo(x, o.Len, KindDict); err != nil {
			return false, err
		}
	case SETITEMS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		if (len(m.stack)-mk.pos)%2 != 0 {
			return false, m.fail("odd number of items for SETITEMS")
		}
		if err := m.appendTo(mk.pos, o.Len+mk.bytes, KindDict); err != nil {
			return false, err
		}
	case ADDITEMS:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if mk.pos > len(m.stack) || mk.pos <= m.fence() {
			return false, m.underflow()
		}
		if err := m.appendTo(mk.pos, o.Len+mk.bytes, KindSet); err != nil {
			return false, err
		}
	case BUILD:
		if len(m.stack)-2 < m.fence() {
			return false, m.underflow()
		}
		st := m.at(len(m.stack) - 1)
		m.stack = m.stack[:len(m.stack)-1]
		target := m.stack[len(m.stack)-1]
		if err := m.mutable(target); err != nil {
			return false, err
		}
		s.AddSelf(target, o.Len)
		m.buf = append(m.buf[:0], m.take(st, target))
		m.mutate(target, m.buf)
		if m.rd.AfterBuild != nil {
			start := m.rd.Offset()
			err := m.rd.AfterBuild(m.rd, s, target)
			s.AddSelf(target, m.rd.Offset()-start)
			if err != nil {
				return false, err
			}
		}

	// memo
	case PUT, BINPUT, LONG_BINPUT, MEMOIZE:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		idx := o.Int
		if o.Code == MEMOIZE {
			idx = int64(m.memo.count)
		} else if idx < 0 {
			return false, m.fail("negative %s argument", o.Code)
		}
		if m.sharing() {
			if err := m.noneAlone(m.at(len(m.stack)-1), true); err != nil {
				return false, err
			}
		}
		top := m.stack[len(m.stack)-1]
		s.AddSelf(top, o.Len)
		s.recs[top].flags |= FlagMemo
		m.memo.put(idx, top, o.Offset)
		if top > m.pinned && m.keep != nil && m.keep.OneEmpty && emptyOp(s.recs[top].op) && (m.memo.plan == nil || m.memo.plan.ReadAfter(idx, o.Offset)) {
			m.pinned = top // (read again later: not shared)
		}
		if m.memoTail != nil {
			m.noteMemo(idx)
		}
	case GET, BINGET, LONG_BINGET:
		id, ok := m.memo.get(o.Int)
		if !ok && m.memo.released(o.Int) {
			err := m.fail("memo value at index %d was released, as the first pass found no later read of it (the input changed while it was read, or holds bytes that are not opcodes)", o.Int)
			err.(*Error).Released = true
			return false, err
		}
		if !ok {
			return false, m.fail("memo value not found at index %d", o.Int)
		}
		s.recs[id].flags |= FlagShared
		m.pushSlot(id, int32(o.Len))

	// globals and calls
	case GLOBAL:
		id := m.global(o.Str, o.Name)
		m.push(id)
		m.log(id)
	case STACK_GLOBAL:
		name, err := m.pop()
		if err != nil {
			return false, err
		}
		mod, err := m.pop()
		if err != nil {
			return false, err
		}
		id := m.newNode(KindGlobal)
		if s.Kind(mod.n) == KindStr && s.Kind(name.n) == KindStr && s.Blob(mod.n) == nil && s.Blob(name.n) == nil {
			m.buf = append(m.buf[:0], m.take(mod, id), m.take(name, id))
			m.names(id, s.Str(mod.n), s.Str(name.n), m.buf)
		} else {
			s.recs[id].flags |= FlagDynamic
			if !maybeStr(s.Kind(mod.n)) || !maybeStr(s.Kind(name.n)) {
				return false, m.fail("STACK_GLOBAL requires str")
			}
			m.buf = append(m.buf[:0], m.take(mod, id), m.take(name, id))
			s.SetItems(id, m.buf)
		}
		m.push(id)
		m.log(id)
	case REDUCE, NEWOBJ:
		args, err := m.pop()
		if err != nil {
			return false, err
		}
		fn, err := m.pop()
		if err != nil {
			return false, err
		}
		id := m.newNode(KindCall)
		m.buf = append(m.buf[:0], m.take(fn, id), m.take(args, id))
		s.SetItems(id, m.buf)
		m.push(id)
		if o.Code == REDUCE && m.memoTail != nil && args.n == id-1 && s.recs[args.n].kind == KindTuple && s.recs[args.n].nkid() >= m.keep.FoldArgsMin {
			id = m.foldArgs(id) // (the cheapest tests here, inline: most calls fail them)
		}
		m.log(id)
	case NEWOBJ_EX:
		kw, err := m.pop()
		if err != nil {
			return false, err
		}
		args, err := m.pop()
		if err != nil {
			return false, err
		}
		cls, err := m.pop()
		if err != nil {
			return false, err
		}
		id := m.newNode(KindCall)
		m.buf = append(m.buf[:0], m.take(cls, id), m.take(args, id), m.take(kw, id))
		s.SetItems(id, m.buf)
		m.push(id)
		m.log(id)
	case INST:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		id := m.newNode(KindCall)
		s.AddSelf(id, mk.bytes)
		cls := m.global(o.Str, o.Name)
		s.SetOwner(cls, id)
		m.log(cls)
		args := m.newNode(KindTuple)
		s.SetOwner(args, id)
		m.itemsFrom(mk.pos, args, false)
		s.SetItems(id, []ID{cls, args})
		m.push(id)
		m.log(id)
	case OBJ:
		mk, err := m.marker()
		if err != nil {
			return false, err
		}
		if len(m.stack)-mk.pos < 1 {
			return false, m.underflow()
		}
		id := m.newNode(KindCall)
		s.AddSelf(id, mk.bytes)
		cls := m.take(m.at(mk.pos), id)
		args := m.newNode(KindTuple)
		s.SetOwner(args, id)
		s.SetItems(args, m.takeAll(mk.pos+1, args))
		m.stack = m.stack[:mk.pos]
		s.SetItems(id, []ID{cls, args})
		m.push(id)
		m.log(id)
	case EXT1, EXT2, EXT4:
		if o.Int <= 0 {
			return false, m.fail("EXT specifies code <= 0")
		}
		id := m.scalar(KindExt)
		s.recs[id].v = o.Int
		m.log(id)
	case PERSID:
		id := m.scalar(KindPersID)
		s.SetStr(id, o.Str)
		m.log(id)
	case BINPERSID:
		pid, err := m.pop()
		if err != nil {
			return false, err
		}
		id := m.newNode(KindPersID)
		m.buf = append(m.buf[:0], m.take(pid, id))
		s.SetItems(id, m.buf)
		m.push(id)
		m.log(id)
	case NEXT_BUFFER:
		id := m.scalar(KindBuffer)
		s.recs[id].v = m.nbuf
		m.nbuf++
		m.log(id)
	case READONLY_BUFFER:
		if len(m.stack) <= m.fence() {
			return false, m.underflow()
		}
		top := m.stack[len(m.stack)-1]
		s.recs[top].flags |= FlagReadOnly
		s.AddSelf(top, o.Len)
	default:
		return false, m.fail("opcode not handled")
	}
	return false, nil
}

func (m *machine) intNode(o *Op) {
	id := m.scalar(KindInt)
	m.s.recs[id].v = o.Int
	if o.Big != nil {
		m.s.fw(id).big = o.Big
	}
}

func (m *machine) payload(id ID, o *Op) {
	if o.Blob != nil {
		m.s.SetBlob(id, o.Blob)
		return
	}
	m.s.SetStr(id, o.Str)
}

// global adds a KindGlobal node as CPython's find_class sees the names.
func (m *machine) global(module, name string) ID {
	id := m.newNode(KindGlobal)
	m.names(id, module, name, nil)
	return id
}

// names gives global id the names CPython's find_class looks up, and its
// items (a STACK_GLOBAL's module and name), in one write.
func (m *machine) names(id ID, module, name string, items []ID) {
	module, name, mapped, dotted := MapGlobal(m.s.Proto, module, name)
	r := m.r(id)
	if mapped {
		r.flags |= FlagMapped
	}
	if dotted {
		r.flags |= FlagDotted
	}
	m.s.setGlobal(id, module, name, items)
}

// MapGlobal returns the module and name CPython's find_class looks up for a
// GLOBAL or STACK_GLOBAL read at protocol proto: below protocol 3, the
// Python 2 names mapped as _compat_pickle does (mapped reports it); dotted
// reports a dotted name below protocol 4, which CPython does not resolve
// as a nested attribute.
func MapGlobal(proto int, module, name string) (mod, qual string, mapped, dotted bool) {
	if proto < 3 {
		if v, ok := nameMapping2to3[[2]string{module, name}]; ok {
			module, name, mapped = v[0], v[1], true
		} else if v, ok := importMapping2to3[module]; ok {
			module, mapped = v, true
		}
	}
	return module, name, mapped, proto < 4 && strings.Contains(name, ".")
}

// appendTo handles APPEND(S), SETITEM(S) and ADDITEMS: the items are
// stack[x:], the target is stack[x-1]; a target of kind k (a list, dict or
// set) gets them as items, any other a mutation.
func (m *machine) appendTo(x int, bytes int64, k Kind) error {
	target := m.stack[x-1]
	s := m.s
	if err := m.mutable(target); err != nil {
		return err
	}
	s.AddSelf(target, bytes)
	m.effect()
	if r := &s.recs[target]; r.kind == k && r.nkid() == 0 && len(m.stack) > x && s.kcap(r) == 0 {
		// its first items (an empty dict's SETITEMS): straight into the
		// item arena, where AppendItems would copy them
		m.itemsFrom(x, target, false)
		return nil
	}
	items := m.takeAll(x, target)
	if m.s.recs[target].kind == k {
		m.s.AppendItems(target, items)
		return nil
	}
	if len(items) > 0 {
		m.mutate(target, items)
	}
	return nil
}

// mutable refuses, with Keep.OneNone, an operation on a None that may be
// the stream's shared one (None.append(...), a BUILD of None: loading
// fails there): its operation would become every None's. The error is
// Error.Released, on which the stream is read again without Keep, where
// each None is a node of its own.
func (m *machine) mutable(target ID) error {
	if m.keep == nil || !m.keep.OneNone && m.keep.SharedNone == nil {
		return nil
	}
	if r := &m.s.recs[target]; r.kind != KindNone || r.flags&FlagShared == 0 {
		return nil
	}
	err := m.fail("%s of None, whose record this read shares between its Nones", m.op.Code)
	err.(*Error).Released = true
	return err
}

func (m *machine) mutate(target ID, args []ID) {
	m.effect()
	m.s.AddMut(target, m.op.Code, m.op.Offset, args)
	m.s.log = append(arenaRoom(m.s, m.s.log, 1, arenaLog), sev{node: target, at: int32(len(m.s.muts) - 1)})
}

// maybeStr reports whether a node of kind k is a str or an object whose
// type is only known when loading (a call result, a global, a persistent or
// extension object).
func maybeStr(k Kind) bool {
	switch k {
	case KindStr, KindCall, KindGlobal, KindPersID, KindExt:
		return true
	}
	return false
}

// memoTable is the memo: dense for the indices picklers write (0, 1, 2, ...),
// a map for the rest, so a huge LONG_BINPUT index costs one map entry. The
// dense part holds 1 + the node's ID (0: unset; memoDead: set, and released
// because the plan says no later opcode reads it).
//
// With a plan (Options.Keep, see release.go), only the indices the plan says
// are read keep a dense slot (slot): the plan's dense indices, or, when the
// plan is sealed, its read indices by rank, so that the memo of a state that
// reads one index in seven costs 4 bytes a read index, not a written one. A
// write of any other index below planDense is a bit in seen, from seenBase
// (CPython's len(memo), which MEMOIZE uses, still counts it), so the memo
// of a table whose every string is memoised costs a bit per write, not four
// bytes.
type memoTable struct {
	dense    []int32
	sparse   map[int64]ID
	count    int // entries set, as len(memo) in CPython (MEMOIZE stores there)
	plan     *Plan
	seen     []uint64 // with a plan: indices from seenBase to planDense without a slot that were set
	seenBase int64
}

// memoDead marks a dense entry released as never read again.
const memoDead = -1

// deadID marks a sparse entry released as never read again.
const deadID ID = -2

// reset empties the memo for the next stream, keeping the dense part's
// capacity.
func (t *memoTable) reset() {
	t.dense = t.dense[:0]
	t.sparse = nil
	t.count = 0
	t.plan = nil
	t.seen = t.seen[:0]
	t.seenBase = 0
}

// slot returns where index i is in dense, and whether it is there.
func (t *memoTable) slot(i int64) (int, bool) {
	if t.plan != nil && t.plan.sealed() {
		return t.plan.slot(i)
	}
	if i >= 0 && i < int64(len(t.dense)) {
		return int(i), true
	}
	return 0, false
}

// put stores id at index i; now is the offset of the writing opcode (for
// the plan: a write nothing reads after now is dead at once).
func (t *memoTable) put(i int64, id ID, now int64) {
	if t.plan == nil && i == int64(len(t.dense)) && len(t.dense) < cap(t.dense) && len(t.sparse) == 0 {
		// the next index with room for it (MEMOIZE's, and the PUTs
		// picklers write): as the general case below takes it
		t.dense = append(t.dense, int32(id)+1)
		t.count++
		return
	}
	r, slotted := t.slot(i)
	if t.plan != nil && !slotted && i >= 0 && i < planDense {
		j := i - t.seenBase
		w, bit := j>>6, uint64(1)<<(j&63)
		if !t.plan.ReadAfter(i, now) {
			for int64(len(t.seen)) <= w {
				t.seen = append(t.seen, 0)
			}
			if t.seen[w]&bit == 0 {
				t.seen[w] |= bit
				t.count++
			}
			if _, ok := t.sparse[i]; ok {
				delete(t.sparse, i) // overwritten by a write nothing reads
				t.count--
			}
			return
		}
		if w < int64(len(t.seen)) && t.seen[w]&bit != 0 {
			// set before by a write nothing read: the map entry below
			// counts it
			t.seen[w] &^= bit
			t.count--
		}
	}
	v := int32(id) + 1
	if t.plan != nil && !t.plan.ReadAfter(i, now) {
		v, id = memoDead, deadID
	}
	switch {
	case slotted:
		if t.dense[r] == 0 {
			t.count++
		}
		t.dense[r] = v
	case i == int64(len(t.dense)) && t.plan == nil:
		// (with a plan the dense part keeps its length: the bits of seen
		// are counted from seenBase)
		if len(t.sparse) > 0 {
			if _, ok := t.sparse[i]; ok {
				delete(t.sparse, i)
				t.count--
			}
		}
		if len(t.dense) == cap(t.dense) {
			// doubling, not append's quarter steps (each index is one
			// opcode: the table stays within a few times the input)
			t.dense = grownTo(t.dense, 2*len(t.dense)+64)
		}
		t.dense = append(t.dense, v)
		t.count++
	default:
		if t.sparse == nil {
			t.sparse = map[int64]ID{}
		}
		if _, ok := t.sparse[i]; !ok {
			t.count++
		}
		t.sparse[i] = id
	}
}

// set points index i, which get finds, at id (foldArgs renumbers).
func (t *memoTable) set(i int64, id ID) {
	if r, ok := t.slot(i); ok {
		t.dense[r] = int32(id) + 1
		return
	}
	t.sparse[i] = id
}

// release marks index i, set, as read by no later opcode (the plan says
// so): get no longer finds it, and released reports it, so that a GET of
// it is the plan's error, not a missing entry's.
func (t *memoTable) release(i int64) {
	if r, ok := t.slot(i); ok {
		t.dense[r] = memoDead
		return
	}
	if t.plan != nil && i >= 0 && i < planDense {
		// (counted by the bit now, as put counts a write nothing reads)
		j := i - t.seenBase
		for int64(len(t.seen)) <= j>>6 {
			t.seen = append(t.seen, 0)
		}
		t.seen[j>>6] |= 1 << (j & 63)
		delete(t.sparse, i)
		return
	}
	t.sparse[i] = deadID
}

// get returns the node stored at index i.
func (t *memoTable) get(i int64) (ID, bool) {
	if r, ok := t.slot(i); ok {
		id := t.dense[r]
		if id <= 0 {
			return NoID, false
		}
		return ID(id - 1), true
	}
	id, ok := t.sparse[i]
	if id == deadID {
		return NoID, false
	}
	return id, ok
}

// released reports whether index i was set and released as never read
// again: a GET of it means the plan was wrong (the input changed between
// the two passes).
func (t *memoTable) released(i int64) bool {
	if r, ok := t.slot(i); ok {
		return t.dense[r] == memoDead
	}
	if t.plan != nil && i >= 0 && i < planDense {
		j := i - t.seenBase
		w := j >> 6
		return w < int64(len(t.seen)) && t.seen[w]&(uint64(1)<<(j&63)) != 0
	}
	return t.sparse[i] == deadID
}
