package diff

import (
	"os"
	"runtime/debug"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/internal/huge"
	"github.com/pk-tools/pk/pkg/internal/procs"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// eachFiles compares two bare pickle files of several streams (a log of
// pickles written one after the other, a million `N.`) one stream at a
// time: each file is hashed stream by stream (canon.EachStream), keeping
// of each stream its offset, length and digest; then only the pairs whose
// digests differ are read again, one pair at a time, and walked as Docs
// walks them. Memory is then that of the largest stream and the digests,
// not of every stream of both files (a Stream and its Store are about
// 1 KB even for `N.`); two files of one stream each are hashed one after
// the other, as pk hash hashes them, and two equal ones are never read
// again; two files of the same bytes are hashed once (a diff of a file
// with itself costs one pk hash run). ok is false
// for what it leaves to Docs: stdin, --ignore, anything but a bare pickle,
// an error (Docs reports it).
func eachFiles(a, b string, opt Options) (*Result, bool) {
	if noFast || len(opt.Ignore) > 0 || input.ReadOnce(a) || input.ReadOnce(b) {
		return nil, false
	}
	// (what follows is one goroutine: procs; the path for containers,
	// stdin and --ignore keeps both CPUs for its decompression and
	// hashing goroutines)
	defer procs.Serial()()
	// (the hashing, as the walk, at walkGCPercent: what a pass holds at
	// its peak is mostly the store of a stream and the sink's spool; a ring
	// of a million dicts against itself: 240 -> 216 MB)
	defer debug.SetGCPercent(debug.SetGCPercent(walkGCPercent))
	sa, ok := sumStreams(a, opt, false)
	if !ok {
		return nil, false
	}
	// Two files of the same bytes are the same input (what is read depends
	// on the bytes only): B is not read, and its sums are A's (a diff of a
	// file with itself costs one pk hash). Both must be regular files: A,
	// a pipe already read, compares as empty, and so would be "the same" as
	// an empty B that was never checked (sameBytes).
	same, known := sameBytes(a, b)
	if same {
		sa.last = nil
		r := &Result{A: a, B: b, DigestA: sa.res.Digest, DigestB: sa.res.Digest, Same: true, BytesEqual: true, bytesKnown: true}
		r.Reasons = reasons(sa.census, sa.census, sa.res, sa.res, opt.Canon.KeepDictOrder)
		return r, true
	}
	// (A's stream is not held while B is read, B's is kept for the walk:
	// what B's read holds at its peak beside A's store was more than the
	// walk holds on some inputs, a million APPENDs 338 -> 377 MB)
	sa.last = nil
	collect()
	sb, ok := sumStreams(b, opt, readWhole(sa, b))
	if !ok {
		return nil, false
	}
	r := &Result{A: a, B: b, DigestA: sa.res.Digest, DigestB: sb.res.Digest, bytesKnown: known}
	if r.DigestA == r.DigestB {
		r.Same = true
		r.Reasons = reasons(sa.census, sb.census, sa.res, sb.res, opt.Canon.KeepDictOrder)
		return r, true // (BytesEqual false: the bytes were compared above)
	}
	collect()
	fa, err := os.Open(a)
	if err != nil {
		return nil, false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return nil, false
	}
	defer fb.Close()
	c := locate(opt, hasArrays(sa.res) || hasArrays(sb.res), func(c *cmp) {
		c.optA, c.optB = canon.BareOptions(a, c.opt.Canon), canon.BareOptions(b, c.opt.Canon)
		// what the walk asks of the inputs (an array's large payload is read
		// again from its file)
		c.docA, c.docB = &input.Doc{Path: a, Format: "pickle"}, &input.Doc{Path: b, Format: "pickle"}
		c.formA, c.formB = canon.BareOptions(a, opt.Canon), canon.BareOptions(b, opt.Canon)
		c.reset()
		c.spills = true
		c.streams(sa.set(fa, c.opt), sb.set(fb, c.opt), ppath.Root, true)
	})
	if c.err != nil {
		return nil, false
	}
	r.Entries, r.big = c.entries, c.big
	if len(r.Entries) == 0 {
		r.Entries = append(r.Entries, unplaced(r.DigestA, r.DigestB))
	}
	return r, true
}

// collect runs the collector between two reads of an input, when what
// the first one made is garbage, and returns the freed memory to the
// system: the second read's heap then grows from what is live (at the
// collector's pace of cmd's gcPercent, the next collection would come only
// at half as much again as the first read's peak, so its garbage and the
// second read's store would be held at once). What is live then is small
// or pointer-free (a store), so it costs little (a 10^6-level dict
// nesting against itself: 316 -> 220 MB). The huge-page advice on the
// first read's arrays is taken back (huge.Forget): the second read's
// smaller arrays land in their addresses, which were faulted in 2 MiB at
// a time.
func collect() {
	debug.FreeOSMemory()
	huge.Forget()
}

// regular reports whether path is a regular file (whose bytes can be
// compared without consuming them).
func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// walkGCPercent is the collector's pace while two streams are compared:
// what is live is mostly their stores, which hold no pointers, so a
// collection costs little, and the heap grows a tenth past it, not half.
// (25 before session 21: the deep cost shapes' peak is about 1.1-1.25x
// what is live at the fingerprint pass, so 10 took 15-30 MB off them,
// e.g. nest_tuple2 diff changed 258 -> 228 MB, setitem_same_key 264 ->
// 243; pk diff of the cloudpickle states 5.203 -> 5.212 G instructions.)
const walkGCPercent = 10

// bigWalkGCPercent is the collector's pace while two views of bigWalk
// nodes or more are compared (cmp.stream): what is live there is mostly
// their stores, and the heap at the fingerprint passes is the deep cost
// shapes' peak, so it grows a twentieth past it (cycle_objects diff
// changed 258-260 -> 246-248 MB, the same CPU within the noise). Smaller
// views keep walkGCPercent (a collection costs about the same, for less
// memory saved: pk diff of the cloudpickle states, at 5 throughout,
// +0.9 % instructions).
const (
	bigWalkGCPercent = 5
	bigWalk          = 1 << 21
)

// streamSums is what eachFiles keeps of one file's streams.
type streamSums struct {
	path     string
	res      *canon.Result
	off      []int64    // where each stream starts; the next starts where it ends
	end      int64      // where the last ends
	fps      [][16]byte // of each stream, its digest (of opt's form) cut to 16 bytes
	census   census
	trailing *pickle.Trailing
	// the stream load read last, kept for the next walk (locate's walks
	// read the same pairs: of a file of one stream, the one pair)
	last     *pickle.Stream
	lastAt   int
	lastAlgo canon.Algo
	// kept is the nodes the last stream's store held at its end (the
	// sink's: what it did not release, fold or share)
	kept int
}

// readWhole reports whether eachFiles reads B whole (no canon sink: a
// store as the walk reads it, kept for it), given A's sums: when A is one
// stream of wholeFrom nodes or more of which the sink kept nearly all in
// its store (folding and sharing saved less than a sixteenth), and
// neither file is larger than wholeUpTo bytes. The sink's store of such a
// stream is about as large as the whole one, and when the two differ the
// walk reads B whole anyway: read so once, B costs one read instead of
// two (it is what the cost shapes' deep and wide graphs are, 250,000 to 3
// million nodes of which the sink keeps all but two). Where the sink
// folds (the cloudpickle state: 655,000 nodes, 319,000 kept), a whole
// store holds much more than the sink's when the two are the same.
func readWhole(sa *streamSums, b string) bool {
	n := sa.census.nodes
	if len(sa.off) != 1 || sa.trailing != nil || n < wholeFrom || sa.kept < n-n/16 {
		return false
	}
	for _, p := range []string{sa.path, b} {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > wholeUpTo {
			return false
		}
	}
	return true
}

// wholeFrom and wholeUpTo bound readWhole: from 2^18 nodes (smaller
// streams cost little either way; tests lower it), up to 16 MiB a file
// (B's whole store is held beside nothing of A's, as the sink's was, but
// a larger file is more likely one whose pair is the same, which the sink
// reads in less).
var wholeFrom = 1 << 18

const wholeUpTo int64 = 16 << 20

func sumStreams(path string, opt Options, whole bool) (*streamSums, bool) {
	s := &streamSums{path: path, census: census{protos: map[int]bool{}}}
	// read through the canon sink: a stream it folded is read again, whole,
	// only when its pair differs (load); or whole (readWhole)
	each := func(fn func(st *pickle.Stream, d []byte) error) (*canon.Result, *pickle.File, bool) {
		if whole {
			return canon.EachStream(path, opt.Canon, fn)
		}
		return canon.EachStreamFolded(path, opt.Canon, s.census.node, fn)
	}
	res, file, ok := each(func(st *pickle.Stream, d []byte) error {
		s.off, s.fps = grow.Room(s.off, 1), grow.Room(s.fps, 1)
		s.off = append(s.off, st.Offset)
		s.fps = append(s.fps, [16]byte(d[:16]))
		s.end = st.Offset + st.Len()
		s.census.folded = false
		s.census.add(st)
		s.kept = st.Store().Len()
		s.last = st
		if s.census.folded || st.Store().Lean() {
			s.last = nil // (a walk reads sizes and owners: the stream is read again)
		}
		return nil
	})
	if !ok {
		return nil, false
	}
	s.res, s.trailing = res, file.Trailing
	// the stream of a file of one stream is kept, as load would read it
	// again (ParseEach reuses its store for a next stream: only when there
	// was none, not even trailing bytes it tried)
	s.lastAt, s.lastAlgo = 0, opt.Canon.Algo
	if len(s.off) != 1 || file.Trailing != nil {
		s.last = nil
	}
	return s, true
}

// set is the streamSet of s, read again from f. The digests are known only
// for the form they were computed in: a walk in another form (locate's
// pk-canon/1 pass) reads every pair whose pk-canon/2 digests differ.
func (s *streamSums) set(f *os.File, walk Options) streamSet {
	fi, _ := f.Stat()
	size := fi.Size()
	ropt := canon.ReadOptions(walk.Canon)
	return streamSet{
		n:      len(s.off),
		head:   func(i int) string { return ppath.StreamHead(true, "", i, 0) },
		offset: func(i int) int64 { return s.off[i] },
		length: func(i int) int64 {
			if i+1 < len(s.off) {
				return s.off[i+1] - s.off[i]
			}
			return s.end - s.off[i]
		},
		load: func(i int) (*pickle.Stream, error) {
			if s.last != nil && s.lastAt == i && s.lastAlgo == walk.Canon.Algo {
				return s.last, nil // locate's second walk of the same pair
			}
			s.last = nil
			rd := pickle.NewReaderAt(f, size, s.path, s.off[i])
			rd.BlobThreshold, rd.NewHash = ropt.BlobThreshold, ropt.NewHash
			// (its length known: the tables sized from it)
			var length int64
			if i+1 < len(s.off) {
				length = s.off[i+1] - s.off[i]
			} else {
				length = s.end - s.off[i]
			}
			st, err := pickle.RunStreamLen(rd, i, length)
			if err == nil {
				s.last, s.lastAt, s.lastAlgo = st, i, walk.Canon.Algo
			}
			return st, err
		},
		digest:   func(i int) []byte { return s.fps[i][:] },
		trailing: s.trailing,
	}
}
