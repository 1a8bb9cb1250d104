package write

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/big"
	"unsafe"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The writer sink. A bare pickle file is read through the canon sink
// (canon.EachStreamWrite: pkg/canon/fold.go), which, as the machine
// compacts, encodes each final subtree of plain data hanging off a kept
// list or dict (a row of a table; a dict's entry with a str or bytes key,
// whole) into its canonical encoding and keeps only those bytes, spooled to
// a temporary file; the store keeps one KindFolded node per run. The
// view's digest reads them back, as pk hash's does. The writer takes only
// subtrees it can write back from that encoding alone (foldable: None,
// bools, ints, floats, str and bytes of up to 64 bytes, globals, lists,
// dicts and tuples of those, and calls of a global with a tuple of them
// whose only operations are BUILDs of one of them (an object made by
// NEWOBJ or REDUCE and its state), no other operations, at most foldDepth
// levels; an entry's key a str or bytes of up to 64 bytes). A global is
// keyed by its module and name, as the writer keys the node, so that the
// rows' class is written once and fetched, as before; a global folded
// runs refer to is not an effect (the canon sink places them as pk
// hash's does). A tuple's embedding is its digest, so
// the canon sink follows it with the tuple's items for the writer (side
// items, which the digest leaves out: pkg/canon/fold.go); the writer keys
// it by that embedding, as it keys the node. At STOP, where the traversal
// meets a run, it decodes the items and writes each exactly as it writes
// the node it stands for: the same opcodes, the same keys for the memo (a
// str by its text, a tuple by its embedding, so a value seen again
// anywhere in the stream is fetched, and one seen twice memoized, as
// before), the same framing events, a dict's
// entries in the order the view gives them (its canonical order, folded
// entries by their keys' embeddings). An identity node in such a subtree
// (an object made by a call too) has one parent and is never fetched
// again, so its build is not recorded (unrecorded, it would not be
// memoized either). What the sink cannot write (a run met while an object
// is in construction, whose blocking is counted by node) gives errNoSink,
// and any error the file is written
// again without the sink, which gives that error or the same output: the
// output is the same either way.

// foldDepth is the deepest subtree the writer sink takes.
const foldDepth = 64

// errNoSink: the stream cannot be written from its folded runs.
var errNoSink = errors.New("write: the sink cannot write this stream")

// noSink turns the writer sink off (tests compare both ways); sinkRuns
// counts the folded runs the sink wrote, sinkTuples the tuples it wrote
// from their side items, sinkCalls the calls, sinkWhole the files it
// wrote whole (tests).
var (
	noSink     bool
	sinkRuns   int
	sinkTuples int
	sinkCalls  int
	sinkWhole  int
)

// foldable reports whether enc, the encoding of one subtree as the canon
// sink folds it for the writer (its tuples with their side items; dsize:
// the digests' size), is one embedding the writer can write back (see
// above).
func foldable(enc []byte, dsize int) bool { return canon.PlainEmbedding(enc, foldDepth, dsize) }

// sinkStreams writes the streams of the bare pickle file at path (plain,
// or compressed as a whole: compression names it) through the writer
// sink, appending each to out (uncompressed), its digest to wants and its
// end to ends; read is the file as the reader left it (its Trailing and
// Longest). ok false: the sink does not apply, or a stream could not be
// written with it (out, wants and ends are then to be discarded).
//
// refused is the file's refusal when the first stream is refused for what
// the read without the sink would refuse it for, at the same offset: a
// stream in which the sink folded nothing is the store that read makes
// (less what nothing reaches; IDs renumbered in creation order), so its
// view, its digest and the writer's walk are those the read without the
// sink makes, up to the same refusal. Reading it again cost the deep cost
// shapes half their time and most of their memory (nest_newobj_build: the
// digest and the writer's walk twice). A later stream is left to that read:
// it writes the streams before it again, which then decide.
func sinkStreams(path string, p int, copt canon.Options, out *outBuf, wants *[]byte, ends *[]int) (read *pickle.File, compression string, ok bool, refused error) {
	if noSink {
		return nil, "", false, nil
	}
	dsize := copt.Algo.Size()
	// the strs and bytes of the folded runs, counted as they are folded
	// (once.go), in every stream of the file
	var once *onceSketch
	accept := func(enc []byte) bool { return foldable(enc, dsize) }
	if _, size := input.PeekFile(path); size >= fpMin && !noOnce {
		once = newOnceSketch(size/64, dsize) // (decompressed: a compressed file's guessed)
		accept = func(enc []byte) bool {
			if !foldable(enc, dsize) {
				return false
			}
			once.count(enc)
			return true
		}
	}
	var kept writerKept // (each stream's traversal done before the next)
	file, compression, ok := canon.EachStreamWrite(path, copt, accept, func(st *pickle.Stream, view func() *canon.View) error {
		// the depth walk reads the store only: on the second CPU while the
		// view is made
		depth := tooDeepBeside(st.Store())
		v := view()
		// (only the first stream's refusal is taken: see above)
		first := v.Stream != nil && v.Stream.Index == 0 && len(*ends) == 0
		if off, deep := depth(); deep {
			if first && !hasFolded(v.Store()) {
				refused = &Error{File: path, Offset: off, Reason: deepReason}
			}
			return errNoSink
		}
		w, err := newStreamWriter(v, p)
		if err != nil {
			return err
		}
		w.fingerprints = true // (File checks the output)
		w.kept = &kept
		if once != nil && hasFolded(v.Store()) && v.NodeCount() == v.Store().Len() {
			// every str the writer meets is in a run or the store
			once.countStore(v)
			w.once = once
		}
		if err = w.writeOut(false, out); err != nil {
			var r *refusal
			if first && errors.As(err, &r) && !hasFolded(v.Store()) {
				refused = &Error{File: path, Offset: r.off, Reason: r.reason}
			}
			return err
		}
		if len(w.want) != dsize {
			return errNoSink
		}
		addStream(wants, ends, w.want, out.Len())
		return nil
	})
	if refused != nil {
		return nil, "", false, refused
	}
	if !ok {
		return nil, "", false, nil
	}
	sinkWhole++
	return file, compression, true, nil
}

// hasFolded reports whether the sink folded a run in s.
func hasFolded(s *pickle.Store) bool {
	for id := range pickle.ID(s.Len()) {
		if s.Kind(id) == pickle.KindFolded {
			return true
		}
	}
	return false
}

// folded writes the items of folded run n (the dict value it stands for).
func (e *emitter) folded(n canon.Ref) error {
	items, rd, ok := n.FoldedItems()
	if !ok {
		return errNoSink
	}
	sinkRuns++
	d := e.runDecoder(rd, items)
	for range items {
		if err := d.item(e); err != nil {
			return err
		}
	}
	return nil
}

// listLen is the number of items list n is written with: a folded run
// counts its items.
func listLen(n canon.Ref) (int, bool) {
	if n.Kind() != pickle.KindList {
		return 0, false
	}
	kids := n.NItems()
	if n.Flags()&pickle.FlagHasFolded == 0 {
		return kids, true
	}
	total := 0
	for i := range kids {
		if c := n.Item(i); c.Kind() == pickle.KindFolded {
			k, _, ok := c.FoldedItems()
			if !ok {
				return 0, false
			}
			total += k
		} else {
			total++
		}
	}
	return total, true
}

// fillFolded writes the items of list n, some of them folded runs, from
// index from (0: fill does not postpone a list with runs).
func (e *emitter) fillFolded(n canon.Ref) error {
	if e.ninprog > 0 {
		return errNoSink // (the items' blocking is counted by node)
	}
	kids := n.NItems()
	total, ok := listLen(n)
	if !ok {
		return errNoSink
	}
	kid, left := 0, 0 // the next kid; items left in the run being read
	var d *decoder
	return e.batches(total, pickle.APPEND, pickle.APPENDS, func(int) error {
		if left == 0 {
			if kid >= kids {
				return errNoSink
			}
			c := n.Item(kid)
			kid++
			if c.Kind() != pickle.KindFolded {
				return e.emit(c)
			}
			k, rd, _ := c.FoldedItems()
			if k == 0 {
				return errNoSink
			}
			sinkRuns++
			d, left = e.runDecoder(rd, k), k
		}
		left--
		return d.item(e)
	})
}

// fillFoldedDict writes the entries of dict n, some of them folded runs
// (of values, or of whole entries), in canonical order.
func (e *emitter) fillFoldedDict(n canon.Ref) error {
	if e.ninprog > 0 {
		return errNoSink
	}
	ents, ok := n.FoldedEntries()
	if !ok {
		return errNoSink
	}
	return e.batches(len(ents), pickle.SETITEM, pickle.SETITEMS, func(i int) error {
		en := ents[i]
		if en.Key.ID() < 0 {
			rd, ok := en.Key.FoldedEntry()
			if !ok {
				return errNoSink
			}
			sinkRuns++
			d := e.decoder(rd)
			if err := d.item(e); err != nil {
				return err
			}
			return d.item(e)
		}
		if err := e.emit(en.Key); err != nil {
			return err
		}
		return e.emit(en.Value)
	})
}

// decoder reads the embeddings of a folded run (canon.EmbReader's forms:
// pkg/canon/embed.go) straight from a buffer of its own, a window of the
// run: a table's rows are a few bytes each, and a reader's call a byte cost
// about a third of the writer's time on them.
type decoder struct {
	rd    io.Reader
	dsize int    // the digests' size (a tuple's embedding)
	buf   []byte // buf[p:n] are read and not yet taken
	p, n  int
	eof   bool // rd has no more
	x     big.Int
	off   int64 // the run's offset of buf[0]
	// the lookahead (touchAhead): where it stopped in buf (an embedding's
	// start, or n), and the fingerprints of the strs and bytes it read
	// that item has not yet taken, in order, with their offsets in the run
	ahead     int
	queue     [fpQueue]queuedFP
	qhead, qn int
	// the last global's form globalName read, its module and name
	gform       []byte
	gmod, gname string
	// ah reads the run ahead on a goroutine (ahead.go): nil, touchAhead
	ah    *ahead
	apool aheadPool
}

// queuedFP is a fingerprint touchAhead computed, of the value whose tag is
// at offset at of the run.
type queuedFP struct {
	at int64
	fp uint64
}

// fpQueue is the most fingerprints the decoder holds for item.
const fpQueue = 256

// decBuf is the decoder's window: an embedding longer than it (an int of
// more than 64 KiB) grows it.
const decBuf = 64 << 10

func (e *emitter) decoder(rd io.Reader) *decoder {
	if e.dec == nil {
		e.dec = &decoder{buf: make([]byte, decBuf)}
	}
	d := e.dec
	d.stopAhead()
	d.rd, d.p, d.n, d.eof, d.off, d.dsize = rd, 0, 0, false, 0, e.dsize
	d.ahead, d.qhead, d.qn = 0, 0, 0
	return d
}

// runDecoder is decoder for a run of items items: read ahead on a
// goroutine (ahead.go) when it is long and its values are looked up in a
// table that touchAhead would read ahead for.
func (e *emitter) runDecoder(rd io.Reader, items int) *decoder {
	d := e.decoder(rd)
	t := &e.keys.vals
	if noAhead || items < aheadMin || !t.fingerprints || t.nfp < touchMin && t.once == nil {
		return d
	}
	if t.slots == nil {
		t.init() // (as runKey would: the seed is the fingerprints')
	}
	if t.fslots != nil {
		d.ah = startAhead(rd, t.fseed, d.dsize, &d.apool)
		d.rd = d.ah
		aheadRuns++
	}
	return d
}

// stopAhead stops the read ahead of the run being read, if any.
func (d *decoder) stopAhead() {
	if d.ah != nil {
		d.ah.close()
		d.ah = nil
	}
}

// fill makes k bytes available from d.p, reading more of the run, and
// reports whether there are k: a text taken from the window before is no
// longer valid.
func (d *decoder) fill(k int) bool {
	if d.n-d.p >= k {
		return true
	}
	if k > len(d.buf) {
		b := make([]byte, k)
		d.n = copy(b, d.buf[d.p:d.n])
		d.moved()
		d.buf = b
	} else if d.p > 0 {
		d.n = copy(d.buf, d.buf[d.p:d.n])
		d.moved()
	}
	for zero := 0; d.n < k && !d.eof; {
		m, err := d.rd.Read(d.buf[d.n:])
		d.n += m
		if err != nil {
			d.eof = true // (the end of the run, or an error: the bytes stop)
		} else if m == 0 {
			if zero++; zero > 100 {
				d.eof = true
			}
		}
	}
	return d.n-d.p >= k
}

// moved notes that buf[p:n] was moved to the window's start.
func (d *decoder) moved() {
	d.off += int64(d.p)
	d.ahead = max(d.ahead-d.p, 0)
	d.p = 0
}

// uvarint reads a uvarint of at most max.
func (d *decoder) uvarint(max uint64) (int, bool) {
	d.fill(binary.MaxVarintLen64) // (fewer at the run's end)
	v, w := binary.Uvarint(d.buf[d.p:d.n])
	if w <= 0 || v > max {
		return 0, false
	}
	d.p += w
	return int(v), true
}

// text reads a length and that many bytes: a view of the window, valid
// until the next read.
func (d *decoder) text() (string, bool) {
	l, ok := d.uvarint(math.MaxInt32)
	if !ok || !d.fill(l) {
		return "", false
	}
	s := unsafe.String(unsafe.SliceData(d.buf[d.p:]), l)
	d.p += l
	return s, true
}

// touchLead is how far past the embedding being read touchAhead looks
// ahead: a table's row is about a hundred bytes, and a few rows' values
// waiting for memory together are about as many as a processor waits for
// at once.
const touchLead = 512

// touchMin is the fewest fingerprinted values for which touchAhead reads
// ahead: the slots their probes load (a cache line each) then no longer fit
// in a processor's own cache (1 MiB or 2 here), and a table whose values
// are few (a cost shape's 600,000 rows of 506 distinct strs) would pay the
// lookahead's reading for nothing (tests lower it).
var touchMin = 1 << 16

// touchAhead reads the embeddings in the window from where it stopped to
// touchLead bytes past d.p, computes the fingerprints of the strs, bytes
// and tuples among them (fingerprinted), queued for item and tuple, and
// touches the table's slots of those not in its hot cache (values.touch),
// so that their lookups find them in the processor's cache. It reads the
// forms as a flat sequence (canon.PlainForm: a list's, dict's or tuple's
// header is one more form before its items) and stops, for the next call,
// at the first form not whole in the window (or not plain: item then
// refuses it), or when the queue or touch's batch is full. Only a table of
// fingerprinted values (t.fslots) is read ahead, by item once it holds
// touchMin of them. A run of aheadMin items or more is read ahead on a
// goroutine instead (ahead.go: the same forms' fingerprints, computed on
// the other processor; item then only touches the slots, ahead.touchTo).
func (d *decoder) touchAhead(t *values) {
	if t.fslots == nil {
		return
	}
	var fps [touchMax]uint64
	nfp := 0
	b := d.buf[:d.n]
	i, end := max(d.p, d.ahead), min(d.n, d.p+touchLead)
	for i < end && d.qn < fpQueue && nfp < touchMax {
		size, _, text := canon.PlainForm(b[i:], d.dsize)
		if size == 0 {
			break // not whole in the window (or not plain: item refuses it)
		}
		if tag := b[i]; fingerprinted(tag) {
			fp := t.fingerprint(tag, unsafe.String(unsafe.SliceData(text), len(text)))
			d.queue[(d.qhead+d.qn)%fpQueue] = queuedFP{d.off + int64(i), fp}
			d.qn++
			if !t.hotFP(fp) {
				fps[nfp] = fp
				nfp++
			}
		}
		i += size
	}
	d.ahead = i
	t.touch(fps[:nfp])
}

// queued returns the fingerprint touchAhead queued for the value whose
// tag is at offset at of the run, if it did.
func (d *decoder) queued(at int64) (uint64, bool) {
	if d.ah != nil {
		return d.ah.queued(at)
	}
	for d.qn > 0 {
		q := d.queue[d.qhead]
		if q.at > at {
			break
		}
		d.qhead, d.qn = (d.qhead+1)%fpQueue, d.qn-1
		if q.at == at {
			return q.fp, true
		}
	}
	return 0, false
}

// item writes the next embedding as emit writes the node it stands for.
func (d *decoder) item(e *emitter) error {
	vals := &e.keys.vals
	if d.p+touchLead/2 >= d.ahead {
		if d.ah != nil {
			d.ahead = d.p + touchLead
			d.ah.touchTo(vals, d.off+int64(d.ahead))
		} else if vals.nfp >= touchMin || vals.once != nil {
			d.touchAhead(vals)
		}
	}
	if !d.fill(1) {
		return errNoSink
	}
	at, tag := d.off+int64(d.p), d.buf[d.p]
	switch tag {
	case 'H':
		return d.tuple(e)
	case 'g', 'G':
		size, _, text := d.form()
		mod, name, dotted, ok := d.globalName(text)
		if size == 0 || !ok {
			return errNoSink
		}
		d.p += size
		return d.global(e, mod, name, dotted)
	case 'N':
		if d.fill(2) && d.buf[d.p+1] == 'C' {
			return d.call(e)
		}
	}
	d.p++
	switch tag {
	case 's', 'y':
		text, ok := d.text()
		if !ok {
			return errNoSink
		}
		fp, queued := d.queued(at)
		k := vals.runKey(vkey{tag, text}, fp, queued)
		if idx, ok := e.memo.get(k); !k.none() && ok {
			return e.fetch(canon.Ref{}, k, int(idx))
		}
		if err := e.enter(canon.Ref{}); err != nil {
			return err
		}
		var err error
		if tag == 's' {
			err = e.str(canon.Ref{}, text)
		} else {
			err = e.bytes(canon.Ref{}, text)
		}
		e.depth--
		if err != nil {
			return err
		}
		return e.built(k)
	}
	if err := e.enter(canon.Ref{}); err != nil {
		return err
	}
	err := d.body(e, tag)
	e.depth--
	return err
}

// form returns the form at d.p (canon.PlainForm's), whole in the window:
// size 0 when the run has no whole form there.
func (d *decoder) form() (size int, items uint64, text []byte) {
	for want := 64; ; want *= 2 {
		d.fill(want) // (fewer at the run's end)
		if size, items, text = canon.PlainForm(d.buf[d.p:d.n], d.dsize); size > 0 || d.n-d.p < want {
			return size, items, text
		}
	}
}

// tuple writes the tuple at d.p, its embedding and side items
// (canon.PlainForm's), as emit writes the node it stands for: fetched
// when an equal tuple was built before (its items then passed over), else
// its items and the TUPLE opcode that takes them; the empty tuple is never
// memoized (emitter.key).
func (d *decoder) tuple(e *emitter) error {
	at := d.off + int64(d.p)
	size, cnt, text := d.form()
	if size == 0 || cnt > math.MaxInt32 {
		return errNoSink
	}
	k := noKey
	if cnt > 0 {
		fp, queued := d.queued(at)
		k = e.keys.vals.runKey(vkey{'H', unsafe.String(unsafe.SliceData(text), len(text))}, fp, queued)
	}
	d.p += size
	if idx, ok := e.memo.get(k); !k.none() && ok {
		if err := d.passOver(cnt); err != nil {
			return err
		}
		return e.fetch(canon.Ref{}, k, int(idx))
	}
	if err := e.enter(canon.Ref{}); err != nil {
		return err
	}
	sinkTuples++
	if cnt > 3 {
		e.op(pickle.MARK)
	}
	for range cnt {
		if err := d.item(e); err != nil {
			return err
		}
	}
	e.itemsBuilt(k)
	closeTuple(e, int(cnt))
	e.depth--
	return e.built(k)
}

// passOver passes over the next n embeddings and what they hold.
func (d *decoder) passOver(n uint64) error {
	for left := n; left > 0; left-- {
		size, items, _ := d.form()
		if size == 0 {
			return errNoSink
		}
		d.p += size
		left += items
	}
	return nil
}

// globalName returns the module and name of a global's form (as
// canon.PlainForm gives it for a global or a call), strings of their own
// (the writer keeps them in its tables): those of the last one read when
// the form is the same (a table's rows call one class), and whether the
// name was read dotted.
func (d *decoder) globalName(form []byte) (mod, name string, dotted, ok bool) {
	if len(form) == 0 {
		return "", "", false, false
	}
	if !bytes.Equal(form, d.gform) {
		m, n, _, ok := canon.PlainGlobal(form)
		if !ok {
			return "", "", false, false
		}
		d.gform = append(d.gform[:0], form...)
		d.gmod, d.gname = string(m), string(n)
	}
	return d.gmod, d.gname, form[0] == 'G', true
}

// global writes a global of a folded run (a call's callable, or an item)
// as emit writes the node it stands for: fetched when it was built
// before, else entered and written as the writer writes the globals it
// needs itself (emitter.global: keyed by module and name).
func (d *decoder) global(e *emitter, mod, name string, dotted bool) error {
	k := e.globalKey(mod, name, dotted)
	if idx, ok := e.memo.get(k); ok {
		return e.fetch(canon.Ref{}, k, int(idx))
	}
	if err := e.enter(canon.Ref{}); err != nil {
		return err
	}
	err := e.global(canon.Ref{}, mod, name, dotted)
	e.depth--
	return err
}

// call writes the call at d.p (canon.PlainForm's: its header and its
// callable, a global, then its argument tuple and the state of each of
// its BUILDs) as emit writes the node it stands for (emitter.call, then
// emitter.ops): the callable and the arguments, then REDUCE or NEWOBJ (or
// MARK, the callable, OBJ: an INST or OBJ without arguments), then each
// state and BUILD. The call has one parent (see above): its build is not
// recorded. It is not written here (errNoSink, and the file is written
// again without the sink) while an object is in construction, where the
// writer would look for what its operations wait for, nor once the work
// of ordering a cycle is past its budget, which emitter.ops refuses after
// each operation (the budget counts the store's nodes, which differ with
// the sink).
func (d *decoder) call(e *emitter) error {
	if e.ninprog > 0 {
		return errNoSink
	}
	size, items, text := d.form()
	if size == 0 {
		return errNoSink
	}
	form := d.buf[d.p+2]
	mod, name, dotted, ok := d.globalName(text)
	if !ok {
		return errNoSink
	}
	d.p += size
	if err := e.enter(canon.Ref{}); err != nil {
		return err
	}
	sinkCalls++
	if form == 'o' {
		e.op(pickle.MARK)
	}
	if err := d.global(e, mod, name, dotted); err != nil {
		return err
	}
	if !d.fill(1) || d.buf[d.p] != 'H' {
		return errNoSink // (arguments that are not a tuple: refused)
	}
	switch form {
	case 'o':
		if err := d.passOver(1); err != nil { // (no arguments)
			return err
		}
		e.op(pickle.OBJ)
	default:
		if err := d.tuple(e); err != nil {
			return err
		}
		if form == 'w' {
			e.op(pickle.NEWOBJ)
		} else {
			e.op(pickle.REDUCE)
		}
	}
	for range items - 1 {
		if err := d.item(e); err != nil {
			return err
		}
		e.op(pickle.BUILD)
		if e.work > e.budget {
			return errNoSink
		}
	}
	e.depth--
	return nil
}

// body writes the embedding of tag (not a str or bytes) once entered.
func (d *decoder) body(e *emitter, tag byte) error {
	switch tag {
	case 'n':
		e.op(pickle.NONE)
	case 'b':
		if !d.fill(1) {
			return errNoSink
		}
		if d.buf[d.p] != 0 {
			e.op(pickle.NEWTRUE)
		} else {
			e.op(pickle.NEWFALSE)
		}
		d.p++
	case 'f':
		if !d.fill(8) {
			return errNoSink
		}
		var b [9]byte
		b[0] = byte(pickle.BINFLOAT)
		copy(b[1:], d.buf[d.p:d.p+8])
		d.p += 8
		e.out.write(b[:]...)
	case 'i':
		if !d.fill(1) {
			return errNoSink
		}
		neg := d.buf[d.p] == '-'
		d.p++
		mag, ok := d.text()
		if !ok {
			return errNoSink
		}
		if len(mag) <= 4 {
			var u int64
			for i := 0; i < len(mag); i++ {
				u = u<<8 | int64(mag[i])
			}
			if neg {
				u = -u
			}
			if e.int32(u) {
				break
			}
		}
		d.x.SetBytes([]byte(mag))
		if neg {
			d.x.Neg(&d.x)
		}
		e.int(&d.x)
	case 'N':
		if !d.fill(1) {
			return errNoSink
		}
		kind := d.buf[d.p]
		d.p++
		cnt, ok := d.uvarint(math.MaxInt32)
		if !ok || kind != 'l' && kind != 'd' || !d.fill(1) || d.buf[d.p] != 0 { // (no operations)
			return errNoSink
		}
		d.p++
		if kind == 'l' {
			e.op(pickle.EMPTY_LIST)
			return e.batches(cnt, pickle.APPEND, pickle.APPENDS, func(int) error { return d.item(e) })
		}
		e.op(pickle.EMPTY_DICT)
		return e.batches(cnt, pickle.SETITEM, pickle.SETITEMS, func(int) error {
			if err := d.item(e); err != nil {
				return err
			}
			return d.item(e)
		})
	default:
		return errNoSink
	}
	return nil
}
