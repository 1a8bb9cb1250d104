package canon

import (
	"errors"
	"math"

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
//     rule reads (ruleCallable), a persistent id, an EXT code or a buffer
//     is in the stream: the sink folds nothing in a stream once one of them
//     is in its log, and a stream where one turns up after something was
//     folded is hashed again without folding (errRefold);
//   - keys of dicts and items of sets, whose order is computed from them,
//     are never folded, nor are items of tuples (whose purity depends on
//     theirs).
//
// The bytes live in one arena per input; a stream's folded nodes point
// into it until the stream is encoded.
type foldSink struct {
	opt   Options
	arena []byte
	// the stream being read (by its first byte), whether the sink has
	// stopped folding in it, how much of its log it has looked at, and
	// the arena's length when it began
	begin   int64
	started bool
	stopped bool
	seen    int
	base    int64
	v       View
	e       *encoder
}

// errRefold: a stream had subtrees folded before a call some rule reads
// turned up; it is hashed again without folding.
var errRefold = errors.New("canon: stream folded before a rule's call; hash it again without folding")

// keep returns the machine's options for hashing with the sink.
func (k *foldSink) keep() *pickle.Keep {
	return &pickle.Keep{Depth: math.MaxInt32, Fold: k.fold} // everything named is kept whole
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
	return &foldSink{opt: opt}
}

// noFold turns the sink off (tests compare both ways); foldSeen counts the
// folded runs normalize met (tests).
var (
	noFold   bool
	foldSeen int
)

// ruleEvent reports whether a log event makes a stream's plain data
// something a rule may read.
func ruleEvent(s *pickle.Store, ev pickle.SEvent) bool {
	switch ev.Kind {
	case pickle.EvGlobal:
		if ev.Node < 0 {
			return true
		}
		return s.Flags(ev.Node)&pickle.FlagDynamic != 0 || ruleCallable(s.Str(ev.Node), s.Name(ev.Node))
	case pickle.EvCall, pickle.EvMut:
		return false
	}
	return true // persistent ids, EXT codes, buffers
}

func (k *foldSink) fold(s *pickle.Store, roots []pickle.ID, shared []uint8, out []pickle.Folded) {
	if s.Begin != k.begin || !k.started {
		k.begin, k.stopped, k.seen, k.started = s.Begin, false, 0, true
		k.base = int64(len(k.arena))
	}
	for ; k.seen < len(s.Log) && !k.stopped; k.seen++ {
		if ruleEvent(s, s.Log[k.seen]) {
			k.stopped = true
		}
	}
	if k.stopped || s.Len() == 0 {
		return
	}
	// the bound of the canonical encoding (MaxExpansion), for what was
	// read so far
	limit := k.base + MaxExpansion*(s.Offset(pickle.ID(s.Len()-1))-s.Begin+1) + MaxExpansionSlack
	k.v = View{Opt: k.opt, s: s, base: pickle.ID(s.Len()), nsyn: int32(s.Len())}
	v := &k.v
	if k.e == nil {
		k.e = &encoder{}
	}
	e := k.e
	st := v.state()
	st.ordGen, st.ordVal = make([]uint32, v.nsyn), make([]int32, v.nsyn)
	st.genBusy = true // isolated encoders inside (sort keys) use maps
	for i, r := range roots {
		start := len(k.arena)
		if v.isPure(r) {
			k.arena = v.appendPure(k.arena, r)
		} else {
			st.gen++
			*e = encoder{v: v, buf: k.arena, iso: true, keep: true, shared: shared, gen: st.gen,
				stack: e.stack[:0], chbuf: e.chbuf[:0], opsBuf: e.opsBuf[:0]}
			e.node(r)
			e.run()
			k.arena = e.buf
		}
		if e.refused || st.err != nil || int64(len(k.arena)) > limit || len(k.arena)-start >= 1<<30 {
			k.arena = k.arena[:start]
			st.err, e.refused = nil, false
			continue
		}
		out[i] = pickle.Folded{Off: int64(start), Len: int32(len(k.arena) - start), Word: e.next, OK: true}
		e.next = 0
	}
	e.v, e.shared = nil, nil
	k.v = View{}
}

// payload returns the bytes of a folded run and the ordinals they use.
func (k *foldSink) payload(s *pickle.Store, n pickle.ID) ([]byte, int32) {
	off, ln, _, word := s.FoldedRun(n)
	return k.arena[off : off+int64(ln)], int32(word)
}

// spoiled reports whether a stream that has folded runs has a rule's
// global, a persistent id, an EXT code or a buffer in its log: then a rule
// may have read what was folded, and the digest is not to be trusted
// (errRefold).
func spoiled(s *pickle.Store) bool {
	for _, ev := range s.Log {
		if ruleEvent(s, ev) {
			return true
		}
	}
	return false
}
