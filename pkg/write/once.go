package write

import (
	"math/bits"
	"math/rand/v2"
	"sync"
	"unsafe"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/huge"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The values a stream holds once. The writer numbers every str and bytes
// value so that one seen again is fetched from the memo (intern.go), and a
// table of millions of distinct values (the names and e-mail addresses of a
// table of a million rows) held a slot and a fingerprint for each, about
// 40 MB for dicts.pkl, though most are seen once and never looked up
// again. The writer sink (wsink.go) sees every str and bytes value of a
// folded run before the writer runs: the canon sink hands it each run's
// encoding to accept. It counts their fingerprints here, in 2-bit
// counters that stop at two, and then the stream's other strs and bytes,
// its store's. A value whose counter is one at writing time is held once
// by the stream: nothing else counted there, so no other occurrence of it
// (nor of any value sharing its counter) is ever looked up. The table
// keeps nothing of it: a node's value is numbered as before (the writer
// keys the node by ID, and a node reached twice is fetched), a folded
// run's is not numbered at all (values.runKey: no memo slot and no build
// on the tape, as nothing fetches it). A value whose counter is
// two (held twice, or sharing its counter with another) goes to the table
// as before. So the numbering, and with it the output, is the one the
// table alone gives, whatever the seed; the sketch costs 2 bits a counter,
// eight counters a value the hint expects (about one value in eight then
// shares its counter and goes to the table).
//
// What makes it exact is that every occurrence the writer looks up was
// counted: the sketch is used only for a stream whose view made no nodes
// of its own (no producer rule wrote a str: tracker ids, placeholders),
// so that every str and bytes value the writer meets is in a folded run
// (counted by accept) or a node of the store (counted by countStore). So
// are the pure tuples, frozensets and computed globals, which the writer
// keys by their embeddings ('H' and the digest: intern.go), in a folded
// run with their side items or in the store.

// onceSketch counts fingerprints (values.fingerprint with seed) in 2-bit
// counters: 0, 1, 2 (two or more).
type onceSketch struct {
	seed  uint64
	dsize int      // the digests' size (a tuple's embedding: canon.PlainForm)
	words []uint64 // 32 counters a word
	shift uint     // a fingerprint's counter: fp >> shift
	// the fingerprints not yet counted: add counts them a batch at a
	// time, so that the cache misses of their counters (a table's
	// millions of distinct values: nearly every one) wait for memory side
	// by side
	batch [onceBatch]uint64
	nb    int
	acc   uint64 // what flush's loads read (kept, so that they are made)
	multi int    // the counters at two
	// recent holds the last strs counted at each of 64 places (by length
	// and last byte): the keys every row of a table repeats are counted
	// twice, then passed over without a fingerprint
	recent [64]recentText
	// the embeddings accepted and not yet counted (count), and the
	// counting of the ones before on a goroutine of its own (busy): the
	// read through the sink leaves the machine's other processor idle
	buf, idle []byte
	busy      sync.WaitGroup
}

// onceChunk is how many bytes of embeddings count hands to a goroutine at
// a time (tests lower it).
var onceChunk = 256 << 10

// recentText is a str or bytes counted, and whether it was counted twice.
type recentText struct {
	tag   byte
	twice bool
	n     uint8
	text  [64]byte
}

// onceSeen, when set (tests), is called with each fingerprint the table
// numbers as held once; noOnce turns the sketch off (tests compare both
// ways).
var (
	onceSeen func(fp uint64)
	noOnce   bool
)

// onceBatch is how many fingerprints add gathers before it counts them.
const onceBatch = 64

// newOnceSketch makes a sketch for about hint distinct values: eight
// counters a value, a power of two from 2^16 to 2^28 (64 MiB).
func newOnceSketch(hint int64, dsize int) *onceSketch {
	n := max(bits.Len64(uint64(max(8*hint, 1))-1), 16)
	n = min(n, 28)
	s := &onceSketch{seed: rand.Uint64(), words: make([]uint64, 1<<n/32), shift: uint(64 - n), dsize: dsize}
	huge.Advise(s.words) // (counted and read at random, as the table's slots)
	return s
}

func (s *onceSketch) at(fp uint64) (w *uint64, sh uint) {
	i := fp >> s.shift
	return &s.words[i/32], uint(i%32) * 2
}

// add counts fingerprint fp (once flushed).
func (s *onceSketch) add(fp uint64) {
	s.batch[s.nb] = fp
	if s.nb++; s.nb == onceBatch {
		s.flush()
	}
}

// flush counts the fingerprints add gathered: their counters loaded first,
// in a loop of a few instructions each, then counted.
func (s *onceSketch) flush() {
	b := s.batch[:s.nb]
	acc := s.acc
	for _, fp := range b {
		w, _ := s.at(fp)
		acc ^= *w
	}
	s.acc = acc
	for _, fp := range b {
		w, sh := s.at(fp)
		if c := (*w >> sh) & 3; c < 2 {
			*w += 1 << sh
			if c == 1 {
				s.multi++
			}
		}
	}
	s.nb = 0
}

// single reports whether fp's counter is one (every add flushed).
func (s *onceSketch) single(fp uint64) bool {
	w, sh := s.at(fp)
	return (*w>>sh)&3 == 1
}

// load reads fp's counter (values.touch: a hint only).
func (s *onceSketch) load(fp uint64) uint64 {
	w, _ := s.at(fp)
	return *w
}

// fingerprint is values.fingerprint with the sketch's seed.
func (s *onceSketch) fingerprint(tag byte, text []byte) uint64 {
	return fingerprint(s.seed, tag, unsafe.String(unsafe.SliceData(text), len(text)))
}

// count counts the strs and bytes of enc, one embedding the writer can
// write back (foldable), on a goroutine beside the caller's: a copy of
// enc is kept until its chunk is handed over. sync waits for the counts.
func (s *onceSketch) count(enc []byte) {
	s.buf = append(s.buf, enc...)
	if len(s.buf) >= onceChunk {
		s.busy.Wait()
		full := s.buf
		s.buf, s.idle = s.idle[:0], nil
		s.busy.Add(1)
		go func() {
			s.countEmbedding(full)
			s.idle = full
			s.busy.Done()
		}()
	}
}

// sync counts what count has not yet counted, and waits for the rest.
func (s *onceSketch) sync() {
	s.busy.Wait()
	s.countEmbedding(s.buf)
	s.buf = s.buf[:0]
	s.flush()
}

// countEmbedding counts the strs and bytes of enc, embeddings the writer
// can write back one after the other (foldable: their forms are plain,
// and whole).
func (s *onceSketch) countEmbedding(enc []byte) {
	for i := 0; i < len(enc); {
		size, _, text := canon.PlainForm(enc[i:], s.dsize)
		if size == 0 {
			return
		}
		if tag := enc[i]; fingerprinted(tag) {
			s.addText(tag, text)
		}
		i += size
	}
}

// addText counts the str or bytes text (of at most 64 bytes, as
// PlainForm's are): a text met at its place in recent just before is
// counted once more and then no more (its counter is two).
func (s *onceSketch) addText(tag byte, text []byte) {
	r := &s.recent[len(text)&31|int(tag>>3&1)<<5]
	if len(text) > 0 {
		r = &s.recent[(len(text)+int(text[len(text)-1]))&31|int(tag>>3&1)<<5]
	}
	if r.tag == tag && int(r.n) == len(text) && string(r.text[:r.n]) == string(text) {
		if !r.twice {
			r.twice = true
			s.add(s.fingerprint(tag, text))
		}
		return
	}
	s.add(s.fingerprint(tag, text))
	r.tag, r.twice, r.n = tag, false, uint8(copy(r.text[:], text))
}

// countStore counts the values of v's store that the writer keys by their
// text (emitter.key: strs and bytes of at most 64 bytes) or embedding (pure
// tuples, frozensets and computed globals), once count's are counted. v is
// a view that made no node of its own: every key the writer asks for
// outside the folded runs is a node of the store's.
func (s *onceSketch) countStore(v *canon.View) {
	s.sync()
	st := v.Store()
	root := v.RootRef()
	var buf []byte
	for id := range pickle.ID(st.Len()) {
		tag := byte('s')
		switch st.Kind(id) {
		case pickle.KindBytes:
			tag = 'y'
		case pickle.KindStr:
		case pickle.KindTuple, pickle.KindFrozenSet, pickle.KindGlobal:
			if n := root.Under(id); n.Pure() && (n.Kind() != pickle.KindGlobal || n.Flags()&pickle.FlagDynamic != 0) {
				buf = n.AppendPure(buf[:0])
				s.add(s.fingerprint('H', buf))
			}
			continue
		default:
			continue
		}
		if text := st.Str(id); len(text) <= 64 {
			s.add(s.fingerprint(tag, unsafe.Slice(unsafe.StringData(text), len(text))))
		}
	}
	s.flush()
}
