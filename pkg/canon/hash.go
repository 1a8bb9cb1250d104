package canon

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// ReadOptions returns the pickle options an input must be opened with to be
// hashed with opt: blobs and trailing bytes digested with opt's algorithm,
// and stores only (canon reads no graph).
func ReadOptions(opt Options) pickle.Options {
	return pickle.Options{NewHash: opt.Algo.New, NoGraph: true}
}

// cover marks n and everything reachable from it (through the stream's
// nodes, the canonical replacements and folded calls) as covered, but for
// what is reachable only through plain pure values (encState.plain), which
// the call log cannot name.
func (v *View) cover(n pickle.ID) {
	st := v.state()
	if st.covered == nil {
		st.covered = make([]uint64, (int(v.nsyn)+63)/64)
	}
	stack := st.takeStack()
	push := func(c pickle.ID) {
		if c < 0 || int(c) >= int(v.nsyn) {
			return
		}
		w, b := uint32(c)/64, uint32(c)%64
		if st.covered[w]&(1<<b) != 0 {
			return
		}
		st.covered[w] |= 1 << b
		if v.plainLeaf(c) || st.plain.has(c) && !v.replSet.has(c) {
			// (most nodes: nothing to walk from them, or nothing the call
			// log can name: their marks would not be read)
			return
		}
		stack = append(stack, c)
	}
	push(n)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r := v.res(x); r != x {
			push(r)
		}
		if v.kind(x) == pickle.KindCall {
			push(v.fn(x))
			push(v.argsOf(x))
			push(v.kwargsOf(x))
		} else {
			for _, c := range v.items(x) {
				push(c)
			}
		}
		if v.nmuts(x) > 0 {
			s, i := v.mutsAt(x)
			it := s.MutIter(i)
			for m, ok := it.Next(); ok; m, ok = it.Next() {
				for _, c := range m.Args {
					push(c)
				}
			}
		}
		if !v.extraSet.has(x) {
			continue // (extra's own test, without the call: most nodes)
		}
		for _, f := range v.extra(x) {
			o := v.foldOp(f)
			push(o.folded)
			for _, c := range o.args {
				push(c)
			}
		}
	}
	if cap(stack) > 1<<16 {
		// (a walk of the whole graph: the small walks after it need no
		// stack of its size, which the state held beside the view; a ring
		// of 500,000 objects, 2 MB a view)
		stack = nil
	}
	st.putStack(stack)
}

func (v *View) isCovered(n pickle.ID) bool {
	st := v.state()
	if st.covered != nil && st.covered[n/64]&(1<<uint(n%64)) != 0 {
		return true
	}
	// a global a folded run refers to (encodeStream made sure the result
	// covers every such run)
	return v.Opt.fold != nil && n >= 0 && n < v.base && v.s.Kind(n) == pickle.KindGlobal && v.Opt.fold.coveredGlobal(v.s, v.s.Offset(n))
}

// Effects returns the call-log entries not covered by the result: calls,
// global resolutions and mutations whose node is not reachable from the
// root (discarded by POP, left on the stack, kept only in the memo), in
// stream order, each once. Their Node is an ID of the view's Store.
func (v *View) Effects() []pickle.SEvent {
	idx := v.effectIndexes()
	if idx == nil {
		return nil
	}
	out := make([]pickle.SEvent, len(idx))
	for k, i := range idx {
		out[k] = v.s.Event(i)
	}
	return out
}

// effectIndexes returns the index in the stream's call log (Store.Event) of
// each of Effects: the number <effect i> paths give an effect, the same in
// every form and every command (pk trace finds it in the log alone).
func (v *View) effectIndexes() []int {
	if v.s.NEvents() == 0 {
		return nil // nothing to cover: skip walking the graph
	}
	st := v.state()
	if st.effectsKnown {
		// an encoding found them (encodeStream, the same walk as below);
		// clipped: a caller appending to it gets its own array
		if len(st.effects) == 0 {
			return nil
		}
		return slices.Clip(st.effects)
	}
	// from the result alone (an encoding leaves its coverage behind, which
	// covers the effects too)
	st.covered = nil
	v.cover(v.s.Root)
	var out []int
	if v.Opt.v2() {
		out = v.topEffects()
		st.covered = nil
		return out
	}
	for i, ev := range v.s.Events() {
		if v.isCovered(ev.Node) {
			continue
		}
		out = append(grow.Room(out, 1), i)
		v.cover(ev.Node)
	}
	// Effects may be computed before an encoding: reset so the encoder
	// recomputes the same list.
	st.covered = nil
	return out
}

// encodeStream writes the canonical encoding of the stream: the result,
// then each effect, then an end marker.
func (v *View) encodeStream(e *encoder) {
	st := v.state()
	st.covered = nil
	st.effects, st.effectsKnown = st.effects[:0], false
	e.write('r')
	e.node(v.s.Root)
	e.run()
	if v.s.NEvents() == 0 && v.foldEff == nil {
		// No call-like operation: no effect to find, and covering the
		// graph would only walk it again.
		e.write('.')
		st.effectsKnown = true
		return
	}
	v.cover(v.s.Root)
	for _, n := range v.foldEff {
		if !v.isCovered(n) {
			// calls folded in a container the result does not hold: they
			// are effects, which the sink cannot place (fold.go)
			if st.err == nil {
				st.err = errRefold
			}
			return
		}
	}
	if v.Opt.v2() {
		st.effects = v.topEffects()
		for _, i := range st.effects {
			e.write('E')
			e.node(v.s.Event(i).Node)
			e.run()
		}
		e.write('.')
		st.effectsKnown = st.err == nil
		return
	}
	for i, ev := range v.s.Events() {
		if v.isCovered(ev.Node) {
			continue
		}
		st.effects = append(grow.Room(st.effects, 1), i)
		e.write('E')
		e.node(ev.Node)
		e.run()
		v.cover(ev.Node)
	}
	e.write('.')
	st.effectsKnown = st.err == nil
}

// topEffects (pk-canon/2) returns the call-log entries not covered by the
// result nor by a later such entry, in stream order, each node once: what
// loading does outside the result, each effect whole. A global resolved,
// or a call made, only as part of a discarded call (dill's _create_type(...)
// POP holding getattr(enum.Enum, '_generate_next_value_'), which protocol 4
// writes as one global) is part of that call's encoding, not an effect of
// its own, so its place in the stream does not count. The result must be
// covered already. It returns their indexes in the log.
func (v *View) topEffects() []int {
	var out []int
	for i := v.s.NEvents() - 1; i >= 0; i-- {
		ev := v.s.Event(i)
		if v.isCovered(ev.Node) {
			continue
		}
		out = append(grow.Room(out, 1), i)
		v.cover(ev.Node)
	}
	slices.Reverse(out)
	return out
}

// Digest returns the digest of this stream's canonical form (the bytes of
// the form header and the stream encoding).
func (v *View) Digest() ([]byte, error) {
	if v.refold {
		return nil, errRefold
	}
	if v.rerr != nil {
		return nil, v.rerr
	}
	st := v.state()
	budget, written := st.budget, st.written
	e := newEncoder(v, false)
	for {
		if v.scr != nil {
			if v.scr.header == "" {
				v.scr.header = v.Opt.header()
			}
			e.buf = append(e.buf, v.scr.header...)
		} else {
			e.buf = append(e.buf, v.Opt.header()...)
		}
		v.encodeStream(e)
		if !e.ordMiss || st.err != nil {
			break
		}
		// a node sparseOrds did not foresee was reached twice: its
		// back-reference's ordinal was not kept. The walk was the one
		// pslot gives (a node reached before is a back-reference either
		// way), so it met no error and the encoding made again with pslot
		// meets none: it starts from the same bounds.
		ordMisses.Add(1)
		v.denseOrds = true
		st.budget, st.written = budget, written
		e = newEncoder(v, false)
	}
	d := e.sum()
	if v.scr != nil {
		v.scr.buf = e.buf[:0]
		// the scratch's encoder lives on with the view, but the next
		// encoder does not reuse its work stacks (newEncoder): dropped now,
		// not held while the consumer works (pk canon's writer, pk diff's
		// walk; a 700,000-BUILD object's operations are 45 MB, the frames
		// of a million nested calls 24 MB), and so are its ordinals, which
		// no later encoding reads (a second main encoding makes its own:
		// newEncoder; 2.6 MB of sparseOrds on a cloudpickle state, held to
		// the end of pk canon's writer, where its peak is)
		e.stack, e.chbuf, e.opsBuf = nil, nil, nil
		e.ordS, e.ordBits, e.ordTab, e.ordM = nil, nil, nil, nil
	}
	if err := v.state().err; err != nil {
		return nil, err
	}
	return d, nil
}

// stageHook, when set (tests), is called after each stream is normalised
// and after it is encoded, while its view is live.
var stageHook func(stage string)

// noScratch makes every stream's view allocate its own tables (tests
// compare both ways).
var noScratch bool

// Result is the digest of one input and what was normalised.
type Result struct {
	Digest  string // "pk1-sha256:<hex>"
	Sum     []byte
	Applied []Normalization // Path starts with its stream's head (root, stream[i], part['name']; pkg/path)
}

// HashDoc computes the canonical digest of an opened input: every part in
// order, every stream of a pickle part, its trailing bytes, raw parts.
func HashDoc(doc *input.Doc, opt Options) (*Result, error) {
	h := opt.Algo.New()
	h.Write([]byte(opt.header()))
	var buf []byte
	res := &Result{}
	opt = DocOptions(doc, opt)
	if opt.v2() {
		opt.src = srcOf(doc, opt.src)
	}
	if opt.arrays != nil {
		defer opt.arrays.rr.close()
	}
	var scr *docScratch
	if !noScratch {
		scr = &docScratch{}
	}
	if pi, si, ok := torchAsPickle(doc, opt); ok {
		// Form2: a torch file whose storages are all values hashes as a
		// bare pickle of its data pickle
		p := doc.Parts[pi]
		s := p.Pickle.Streams[si]
		opt.arrays.part = pi
		v := normalize(s, opt, scr)
		d, err := v.Digest()
		if err != nil {
			return nil, pickle.WithFile(fmt.Errorf("stream %d at offset %d: %w", s.Index, s.Offset, err), doc.Path)
		}
		h.Write(appendStreamCount(appendStr([]byte{'P'}, ""), 1))
		h.Write(d)
		tr := p.Pickle.Trailing
		if si != 0 {
			tr = nil // (legacy: torchAsPickle saw none)
		}
		if err := writeTrailing(h, tr, opt, doc.Path); err != nil {
			return nil, err
		}
		if opt.NoPaths {
			res.Applied = v.tally.merge(res.Applied)
		} else {
			for _, a := range v.Applied() {
				a.node = 0
				res.Applied = append(res.Applied, a)
			}
		}
		res.Sum = h.Sum(nil)
		res.Digest = opt.Tag() + ":" + hex.EncodeToString(res.Sum)
		return res, nil
	}
	for _, ref := range Parts(doc, opt) {
		p := doc.Parts[ref.Index]
		buf = append(buf[:0], 'P')
		if a, ok := npyPart(doc, p, opt); ok {
			// Form2: a .npy file hashes as a pickle whose root is its array
			buf = appendStr(buf, "")
			h.Write(appendStreamCount(buf, 1))
			d, err := npyStreamDigest(a, opt)
			if err != nil {
				return nil, pickle.WithFile(err, doc.Path)
			}
			h.Write(d)
			h.Write([]byte{'z'})
			continue
		}
		if opt.v2() && p.Role == input.RoleObjects && p.Of < 0 && strings.HasSuffix(doc.Format, "npy") {
			// Form2: the pickle of a .npy object array is what np.load
			// loads: it hashes as that pickle, a bare file
			buf = appendStr(buf, "")
		} else {
			buf = appendStr(buf, ref.Name)
		}
		switch {
		case p.Pickle != nil:
			f := p.Pickle
			h.Write(appendStreamCount(buf, len(f.Streams)))
			if opt.arrays != nil {
				opt.arrays.part = ref.Index
			}
			for _, s := range f.Streams {
				v := normalize(s, opt, scr)
				if stageHook != nil {
					stageHook("normalized")
				}
				d, err := v.Digest()
				if stageHook != nil {
					stageHook("encoded")
				}
				if err != nil {
					return nil, pickle.WithFile(fmt.Errorf("stream %d at offset %d: %w", s.Index, s.Offset, err), doc.Path)
				}
				h.Write(d)
				if opt.NoPaths {
					res.Applied = v.tally.merge(res.Applied)
					continue
				}
				for _, a := range v.Applied() {
					a.node = 0
					a.Path = streamPath(doc, ref.Index, s.Index, a.Path)
					res.Applied = append(res.Applied, a)
				}
			}
			if err := writeTrailing(h, f.Trailing, opt, doc.Path); err != nil {
				return nil, err
			}
		case p.Raw != nil:
			buf = append(buf, 'W')
			buf = appendUvarint(buf, uint64(p.Raw.Len))
			h.Write(buf)
			if err := writeDigest(h, p.Raw.Digest, opt, doc.Path, -1); err != nil {
				return nil, err
			}
		default:
			buf = append(buf, '0')
			h.Write(buf)
		}
	}
	res.Sum = h.Sum(nil)
	res.Digest = opt.Tag() + ":" + hex.EncodeToString(res.Sum)
	return res, nil
}

// npyPart reports whether p is the array of a .npy file read as a value
// (Form2).
func npyPart(doc *input.Doc, p input.Part, opt Options) (*Array, bool) {
	if !opt.v2() || p.Role != input.RoleArray || p.Of >= 0 || p.Raw == nil || !strings.HasSuffix(doc.Format, "npy") {
		return nil, false
	}
	return NpyArray(p.Raw)
}

// appendStreamCount appends, after a pickle part's 'P' and name, the count
// of its streams.
func appendStreamCount(buf []byte, n int) []byte {
	buf = append(buf, 'K')
	return appendUvarint(buf, uint64(n))
}

// writeTrailing writes what follows a pickle part's streams: 'Z', the length
// and digest of its trailing bytes, or 'z' when there are none.
func writeTrailing(h hash.Hash, t *pickle.Trailing, opt Options, path string) error {
	if t == nil {
		h.Write([]byte{'z'})
		return nil
	}
	buf := appendUvarint([]byte{'Z'}, uint64(t.Len))
	h.Write(buf)
	return writeDigest(h, t.Digest, opt, path, t.Offset)
}

// hashEach hashes a bare pickle file stream by stream (EachStream),
// holding one stream at a time instead of all of them: the digest HashDoc
// gives the same file. It leaves to the caller (ok false) what Open reads
// otherwise or reports itself: a container, joblib content (a wrapper's
// BUILD), legacy torch (its magic number as the first stream), any error,
// and --explain (paths).
//
// The file may also be a bare pickle under one layer of whole-file
// compression (input.EachStreamDecompressed): its streams are read as it is
// decompressed, one at a time (a million back-to-back pickles in 2 KB of
// gzip held a store each through Open: 580 MB). A streamed payload that a
// rule of pk-canon/2 needs again (reread.go) cannot be read from the file
// at the stream's offsets: such a file is left to Open (Options.noReread).
func hashEach(path string, opt Options) (res *Result, ok bool) {
	if !opt.NoPaths {
		return nil, false
	}
	res, _, ok = eachStreamIn(path, opt, true, true, nil, nil)
	return res, ok
}

// EachStream hashes a bare pickle file stream by stream, holding one
// stream at a time, and gives fn each stream with its digest (the digest
// is fn's only until it returns; the stream as pickle.ParseEach says). The
// Result is the one HashDoc gives the same file, which is a single pickle
// part named "" (the stream digests are kept, one digest's size each, as
// the count comes before them in the form); file has the input's Trailing.
// ok is false for what hashEach leaves to Open, and when fn returns an
// error.
func EachStream(path string, opt Options, fn func(st *pickle.Stream, digest []byte) error) (res *Result, file *pickle.File, ok bool) {
	// (fn reads the streams' stores: they are held whole for it)
	return eachStreamIn(path, opt, false, fn == nil, nil, fn)
}

// EachStreamFolded is EachStream read through the canon sink (fold.go)
// whatever fn does: the stores fn is given may hold folded runs
// (pickle.KindFolded), which stand for what the sink encoded and released,
// and name one None for all (pickle.Keep.OneNone),
// and released (when not nil) is called with every node a compaction
// releases (folded or not), so that a count of what the stream held sees
// each node once: there, or in the store at STOP.
func EachStreamFolded(path string, opt Options, released func(*pickle.Store, pickle.ID), fn func(st *pickle.Stream, digest []byte) error) (res *Result, file *pickle.File, ok bool) {
	return eachStreamIn(path, opt, false, true, released, fn)
}

// eachStreamIn is EachStream; decompress also takes a bare pickle under
// one layer of compression (hashEach).
func eachStreamIn(path string, opt Options, decompress, fold bool, released func(*pickle.Store, pickle.ID), fn func(st *pickle.Stream, digest []byte) error) (res *Result, file *pickle.File, ok bool) {
	compressed := false
	if decompress {
		c, _ := input.PeekFile(path)
		compressed = c != ""
	}
	if compressed || opt.spooled {
		opt.noReread = true // (its offsets are not the file's: BareOptions' source does not apply)
	} else {
		opt = BareOptions(path, opt)
	}
	opt.NoPaths = true
	res = &Result{}
	n := 0
	var sums digests // (their count comes first in the form: they wait for it)
	scr := &docScratch{}
	ropt := ReadOptions(opt)
	if k := newFoldSink(opt); k != nil && fold {
		k.oneNone = true // (nothing but the digest and fn, which takes folded stores, reads them)
		opt.fold, ropt.Keep = k, k.keep()
		ropt.Keep.Released = released
		defer k.close()
	}
	each := func(st *pickle.Stream) error {
		st.Store().CollectRead() // (the view and the digest take its pages)
		v := normalize(st, opt, scr)
		// and again before the digest: the rules leave tables they outgrew
		// (2.3 MB on the cloudpickle state), which the encoder's tables by
		// node then take instead of new pages
		st.Store().CollectRead()
		d, err := v.Digest()
		if opt.fold != nil {
			opt.fold.sp.reset() // the stream is encoded
		}
		if err != nil {
			return err
		}
		sums.keep(d)
		n++
		res.Applied = v.tally.merge(res.Applied)
		if fn != nil {
			return fn(st, d)
		}
		return nil
	}
	if compressed {
		file, _, ok = input.EachStreamDecompressed(path, ropt, input.Options{}, each)
	} else {
		file, ok = input.EachStream(path, ropt, each)
	}
	if !ok || file.Trailing != nil && n == 0 {
		return nil, nil, false
	}
	h := opt.Algo.New()
	h.Write([]byte(opt.header()))
	buf := appendStr([]byte{'P'}, "")
	h.Write(appendStreamCount(buf, n))
	for _, c := range sums.chunks {
		h.Write(c)
	}
	if err := writeTrailing(h, file.Trailing, opt, path); err != nil {
		return nil, nil, false
	}
	res.Sum = h.Sum(nil)
	res.Digest = opt.Tag() + ":" + hex.EncodeToString(res.Sum)
	return res, file, true
}

func writeDigest(h hash.Hash, d []byte, opt Options, file string, off int64) error {
	if len(d) != opt.Algo.Size() {
		return &pickle.Error{File: file, Offset: off, Reason: fmt.Sprintf("bytes were read without a %s digest (open the input with canon.ReadOptions)", opt.Algo)}
	}
	h.Write(d)
	return nil
}

// HashFile opens path through pkg/input and hashes it.
func HashFile(path string, opt Options) (*Result, error) {
	if path == "-" {
		return hashStdin(opt)
	}
	if input.ReadOnce(path) {
		// a pipe or a socket: read once, from its start, as stdin is by
		// the store path (no path here opens it to look first)
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return hashOpened(path, f, opt)
	}
	if res, ok := fastHashFile(path, opt); ok {
		return res, nil
	}
	if res, ok := hashSpooled(path, opt); ok {
		return res, nil
	}
	if res, ok := hashEach(path, opt); ok {
		return res, nil
	}
	return hashOpened(path, nil, opt)
}

// hashSpooled hashes a compressed bare pickle through a decompressed copy
// (input.SpoolDecompressed), which the paths for bare files read as they
// read a bare file of the same bytes: stream by stream, with the store
// sized from the file's length (HashFile tried the fast path, which reads
// a compressed file as it reads the copy, before). Read as it
// is decompressed, the store path cannot size its arrays and grows them a
// step at a time (pk canon of the cost shape stack_globals_discarded.pkl.gz
// read the input three times so). The copy is read as the compressed file
// is (Options.spooled): no payload is read again from it, so a file whose
// payload a rule needs again goes to input.Open as before, with its bound.
// ok is false when path is not such a file, or when neither path takes the
// copy: the caller then reads path as before, so every error is worded as
// before.
func hashSpooled(path string, opt Options) (*Result, bool) {
	if !opt.NoPaths {
		return nil, false // (as hashEach)
	}
	sp, ok := input.SpoolDecompressed(path, input.Options{})
	if !ok {
		return nil, false
	}
	defer sp.Close()
	// (the fast path read the compressed file already: it reads the copy
	// as it reads the file, so it is not tried again)
	opt.spooled = true
	return hashEach(sp.Path(), opt)
}

// MaxSpool is how much of standard input HashFile copies to a temporary
// file for the streaming path (which reads its input twice); a longer input
// is hashed on the store path, from the copy and then the rest of stdin.
const MaxSpool = 4 << 30

// hashStdin spools standard input to a temporary file so that the
// streaming path can take it; the store path, when it must, reads the
// spooled bytes and whatever stdin still holds as it reads stdin, so errors
// name "-" and give stdin's offsets.
func hashStdin(opt Options) (*Result, error) {
	tmp, err := os.CreateTemp("", "pk-stdin-*.pkl")
	if err != nil {
		return hashOpened("-", os.Stdin, opt)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	// (a read error ends the copy: the store path reads stdin again and
	// reports it; an input whose first bytes fail ends it too: the store
	// path reads the copy and stdin on to that error, input.CopyOnce)
	c := input.CopyOnce(tmp, os.Stdin, MaxSpool)
	written, pending, complete := c.N, c.Pending, c.Complete
	if complete {
		if res, ok := fastHashFile(tmp.Name(), opt); ok {
			return res, nil
		}
	}
	r := io.MultiReader(io.NewSectionReader(tmp, 0, written), bytes.NewReader(pending), os.Stdin)
	if complete {
		opt.src = tmp.Name() // all of stdin is in the spool: payloads can be read again from it
	}
	return hashOpened("-", r, opt)
}

// hashOpened hashes on the store path: the file at path, or r (stdin's
// bytes) when it is not nil. The stores hold no pointers, so it does not
// change the collector's pace (the graph path it replaced ran at
// pickle.GCPercentWhileParsing).
func hashOpened(path string, r io.Reader, opt Options) (*Result, error) {
	var doc *input.Doc
	var err error
	if r != nil {
		doc, err = input.OpenReader(r, path, ReadOptions(opt), input.Options{})
		if err != nil {
			return nil, err
		}
		if opt.src != "" {
			// all of stdin is in the spool: its parts can be read again
			doc.Spooled(opt.src, input.Options{})
		}
		return HashDoc(doc, opt)
	}
	ropt := ReadOptions(opt)
	fopt := opt
	if k := newFoldSink(opt); k != nil {
		fopt.fold, ropt.Keep = k, k.keep()
		defer k.close()
	}
	doc, err = input.Open(path, ropt)
	if err != nil {
		return nil, err
	}
	res, err := HashDoc(doc, fopt)
	if errors.Is(err, errRefold) {
		// a rule's call came after plain data was folded, or calls were
		// folded that the result does not hold: read it whole
		refolds.Add(1)
		doc, err = input.Open(path, ReadOptions(opt))
		if err != nil {
			return nil, err
		}
		return HashDoc(doc, opt)
	}
	return res, err
}
