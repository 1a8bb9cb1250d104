// Package write owns pk canon: it writes the canonical pickle of a
// normalised view.
//
// The bytes written are a function of the view (docs/canonical-form.md) and
// of Options only: two inputs with the same pk hash give the same output.
// docs/pk-canon.md specifies the opcode choices, the memo, framing, class
// tracker ids and what is refused. Nothing in the input is executed.
package write

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// DefaultProtocol is the protocol written unless Options say otherwise:
// CPython 3.8's default, which every Python 3.4+ loads.
const DefaultProtocol = 4

// MinProtocol and MaxProtocol bound Options.Protocol.
const (
	MinProtocol = 2
	MaxProtocol = 5
)

// Options are the output options; the output is a function of the
// canonical form and of these.
type Options struct {
	Protocol      int  // MinProtocol..MaxProtocol; 0 means DefaultProtocol
	KeepDictOrder bool // plain dicts keep their insertion order (pk hash --keep-dict-order)
}

func (o Options) proto() int {
	if o.Protocol == 0 {
		return DefaultProtocol
	}
	return o.Protocol
}

// CanonOptions are the canon options the view is normalised with (NoPaths:
// the writer lists no normalisation, and the digest is the same).
func (o Options) CanonOptions() canon.Options {
	return canon.Options{Form: canon.Current, KeepDictOrder: o.KeepDictOrder, NoPaths: true}
}

// asPickle checks that pk-canon/2 reads doc (a joblib file) as the bare
// pickle of its one stream: every raw part is an array's data, every nested
// pickle an object array's, so that the canonical pickle of that stream has
// the file's pk hash.
func asPickle(doc *input.Doc, path string, copt canon.Options) error {
	pk := doc.Parts[0]
	if pk.Pickle == nil || len(pk.Pickle.Streams) != 1 || pk.Pickle.Trailing != nil {
		return &Error{File: path, Offset: -1, Reason: "a joblib file that is not one pickle stream with its arrays: pk canon does not write it"}
	}
	for _, ref := range canon.Parts(doc, canon.DocOptions(doc, copt)) {
		if ref.Index != 0 || ref.Name != "" {
			p := doc.Parts[ref.Index]
			off := int64(-1)
			if p.Raw != nil {
				off = p.Raw.Offset
			}
			return &Error{File: path, Offset: off, Reason: fmt.Sprintf("joblib part %q is not read as an array's data by pk-canon/2 (docs/canonical-form-2.md §2.2): pk canon writes a joblib file only as the pickle of its arrays", p.Name)}
		}
	}
	return nil
}

// Stream writes the canonical pickle of one normalised view (one stream)
// to buf, and checks it: the written stream, read back, must have the
// view's canonical digest. On error nothing is written to buf.
//
// The writer has two ways of writing a nested qualified name (a.B.c) at
// protocol 4 and above: STACK_GLOBAL, or getattr(a.B, 'c') as below
// protocol 4. Which global resolutions count as effects (not reachable from
// the result, docs/canonical-form.md §4.4) depends on it, so the plain form
// is tried first and the getattr form when the plain one's digest differs.
// Both attempts depend on the view only, so the choice is canonical too.
func Stream(v *canon.View, opt Options, buf *bytes.Buffer) error {
	p := opt.proto()
	if p < MinProtocol || p > MaxProtocol {
		return fmt.Errorf("protocol %d: pk canon writes protocols %d to %d", p, MinProtocol, MaxProtocol)
	}
	w, err := newStreamWriter(v, p)
	if err != nil {
		return err
	}
	w.fingerprints = true // (checked below)
	out, err := w.write(false, nil)
	if err != nil {
		return err
	}
	if verr := verify(out, w.want, v.Opt); verr != nil && !noVerify {
		if out, err = w.retry(verr); err != nil {
			return err
		}
	}
	buf.Write(out)
	return nil
}

// streamWriter writes one view.
type streamWriter struct {
	v       *canon.View
	proto   int
	effects []canon.Ref
	want    []byte // the view's digest
	storage bool   // legacy torch: storage key placeholders written as their ordinal
	raw     func(*input.Raw) ([]byte, error)
	torch   *torchStorages
	// fingerprints tells values apart by fingerprint (intern.go): only
	// for an output checked against want, which retry writes again
	// without them
	fingerprints bool
	// once, with fingerprints, says which values the stream holds once
	// (once.go: the writer sink's streams)
	once *onceSketch
	// kept, when set, holds the tape and tables of the file's previous
	// stream, written over by this one (a million streams of `N.`: 0.5 KB
	// of garbage a stream, a collection every megabyte at the writer's
	// pace, less)
	kept *writerKept
}

// writerKept is the memory a stream's traversal starts from, kept from
// one stream of a file to the next (streamWriter.kept): cleared, so every
// stream starts as from new ones.
type writerKept struct {
	t    tape
	sh   shared
	keys keyCache
}

func newStreamWriter(v *canon.View, proto int) (*streamWriter, error) {
	// the writer keys what it keeps by node ID: the view need not keep a
	// Node for every node it hands out
	v.FreshNodes()
	// the digest first: its encoding finds the effects, which EffectRefs
	// then gives without covering the graph a second time
	w := &streamWriter{v: v, proto: proto}
	var err error
	if w.want, err = v.Digest(); err != nil {
		return nil, err
	}
	w.effects = v.EffectRefs()
	return w, nil
}

// write traverses the view once onto a tape and replays it (tape.go),
// appending the stream to out (nil: a buffer of its own) and returning its
// bytes. On error out is as it was.
func (w *streamWriter) write(getattrForm bool, out *bytes.Buffer) ([]byte, error) {
	t, err := w.traverse(getattrForm)
	defer t.close() // (its spool)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = &bytes.Buffer{}
	}
	return t.replay(w.proto, out)
}

// writeOut is write into an outBuf (spill.go). On error out is as it was.
func (w *streamWriter) writeOut(getattrForm bool, out *outBuf) error {
	t, err := w.traverse(getattrForm)
	defer t.close()
	if err != nil {
		return err
	}
	if hint, ok := w.followHint(t, out); ok {
		out.fl = startFollow(hint, out.copt)
	}
	if t.longest >= pickle.DefaultBlobThreshold {
		out.long = true
	}
	return t.replayOut(w.proto, out)
}

// traverse writes the view onto a tape (to be closed by the caller). A
// traversal in which two values had one fingerprint, one of them inside
// the other (emitter.collided: what is memoized changes, not the value, so
// the check would not tell), is made again without fingerprints.
func (w *streamWriter) traverse(getattrForm bool) (*tape, error) {
	var t *tape
	var sh *shared
	if k := w.kept; k != nil {
		k.t, k.keys = tape{}, keyCache{}
		k.sh = shared{keys: &k.keys}
		t, sh = &k.t, &k.sh
	} else {
		t, sh = &tape{}, newShared()
	}
	if sh.keys.vals.fingerprints = w.usesFP(); sh.keys.vals.fingerprints {
		st := w.v.Stream
		sh.keys.vals.once = w.once
		sh.keys.vals.sizeHint(st.End - st.Offset)
	}
	e := newEmitter(w.v, w.proto, sh, t)
	e.effects, e.getattrForm, e.storageKeys, e.raw, e.torch = w.effects, getattrForm, w.storage, w.raw, w.torch
	err := e.stream()
	if e.dec != nil {
		e.dec.stopAhead() // (the last run's read ahead)
	}
	lastBuilds, lastValues = len(t.builds), int(sh.keys.vals.n)
	if e.collided && w.fingerprints { // (once: without them nothing collides)
		t.close()
		w.fingerprints = false
		fpNested++
		return w.traverse(getattrForm)
	}
	return t, err
}

// lastBuilds and lastValues are the builds the last traversal recorded on
// its tape and the values it numbered (tests).
var lastBuilds, lastValues int

// usesFP reports whether the writer tells values apart by fingerprint:
// asked to, and the stream is of fpMin bytes or more (intern.go).
func (w *streamWriter) usesFP() bool {
	st := w.v.Stream
	return w.fingerprints && st != nil && st.End-st.Offset >= fpMin
}

// retry writes the stream with the getattr form after the plain form
// failed its check with verr.
func (w *streamWriter) retry(verr error) ([]byte, error) {
	if w.usesFP() {
		// two values with one fingerprint would give this: the plain
		// form again, values told apart by their texts
		w.fingerprints = false
		out, err := w.write(false, nil)
		if err != nil {
			return nil, err
		}
		if verify(out, w.want, w.v.Opt) == nil {
			fpRetries++
			return out, nil
		}
	}
	if w.proto >= 4 {
		out, err := w.write(true, nil)
		if err != nil {
			return nil, err
		}
		if verify(out, w.want, w.v.Opt) == nil {
			return out, nil
		}
	}
	return nil, &refusal{off: w.v.Stream.Offset, reason: "pk cannot reproduce this stream faithfully: " + verr.Error()}
}

// Error is a refusal: the input cannot be written canonically and
// faithfully. It reads "FILE: offset N: REASON" (Offset < 0: no offset).
type Error struct {
	File   string
	Offset int64
	Reason string

	differs bool // the output was read back with another digest
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Reason)
}

// Result is the canonical output of one input.
type Result struct {
	// Data is the output file: the canonical pickle, compressed as the
	// input was. It is nil when the output was spooled to a temporary
	// file (a .npy file's output of more than SpoolAbove bytes, whose
	// array data is copied there from the input; a bare pickle file's
	// output past spillAt bytes, spill.go; a compressed pickle file's
	// compressed output past spillAt bytes, compressOut): WriteTo and
	// Size read either, and Close removes the file.
	Data   []byte
	Input  []byte // the input file's bytes as read (for Canonical), nil when not kept
	Format string // the input's format (pkg/input)

	spool string // the temporary file holding the output (Data nil)
	size  int64  // its size

	inPath  string // the input file, compared by Canonical (Input nil: list.go)
	verdict int8   // 1: the input is known to be its own output
}

// SpoolAbove is the size above which a .npy file's output is written to a
// temporary file rather than held in memory (Result.Data nil).
var SpoolAbove int64 = 64 << 20

// Size is the output's size in bytes.
func (r *Result) Size() int64 {
	if r.spool != "" {
		return r.size
	}
	return int64(len(r.Data))
}

// WriteTo writes the output to w.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	if r.spool == "" {
		n, err := w.Write(r.Data)
		return int64(n), err
	}
	f, err := os.Open(r.spool)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err == nil && n != r.size {
		err = fmt.Errorf("%s: the spooled output holds %d bytes, not %d", r.spool, n, r.size)
	}
	return n, err
}

// RenameTo moves a spooled output to path, with mode perm, replacing
// path at once, and reports whether it did: false when the output is in
// memory or the spool cannot be renamed there (another file system), and
// the caller then writes it (WriteTo). So a large output is not copied
// once more.
func (r *Result) RenameTo(path string, perm os.FileMode) bool {
	if r == nil || r.spool == "" {
		return false
	}
	if os.Chmod(r.spool, perm) != nil || os.Rename(r.spool, path) != nil {
		return false
	}
	r.spool = ""
	return true
}

// Close removes the temporary file of a spooled output.
func (r *Result) Close() error {
	if r == nil || r.spool == "" {
		return nil
	}
	err := os.Remove(r.spool)
	r.spool = ""
	return err
}

// Canonical reports whether the input's bytes are already the output.
func (r *Result) Canonical() bool {
	if r.verdict != 0 {
		return r.verdict > 0
	}
	if r.Input == nil {
		return r.sameAsInput() // list.go: compared with the file as written
	}
	if r.spool == "" {
		return bytes.Equal(r.Input, r.Data)
	}
	if int64(len(r.Input)) != r.size {
		return false
	}
	eq := &compareWriter{want: r.Input, same: true}
	if _, err := r.WriteTo(eq); err != nil {
		return false
	}
	return eq.same && eq.n == len(r.Input)
}

// compareWriter compares what is written to it with want.
type compareWriter struct {
	want []byte
	n    int
	same bool
}

func (c *compareWriter) Write(p []byte) (int, error) {
	if len(p) > len(c.want)-c.n || !bytes.Equal(p, c.want[c.n:c.n+len(p)]) {
		c.same = false
	}
	c.n += len(p)
	return len(p), nil
}

// noVerify skips the read-back check (tests look at what would be written).
var noVerify bool

// writable are the whole-file compressions written back, each with fixed
// settings (docs/pk-canon.md).
var writable = map[string]bool{"": true, "gzip": true, "zlib": true, "bz2": true, "xz": true, "lzma": true, "zstd": true, "lz4": true}

// addStream records a written stream's digest and where it ends, which the
// check of the output reads (they double as they grow: a million streams).
func addStream(wants *[]byte, ends *[]int, want []byte, end int) {
	*wants = append(grow.Room(*wants, len(want)), want...)
	*ends = append(grow.Room(*ends, 1), end)
}

// writeGCPercent is the collector's pace while a file is written (the
// parse of each stream runs at pickle.QuietGC's): what is live then is
// mostly the stream's store and the writer's tables by node ID and by
// value, which hold no pointers, so a collection costs little, and the
// heap grows a quarter past what is live, not half (cmd's gcPercent), as
// pk diff's walk (walkGCPercent there).
const writeGCPercent = 25

// File canonicalises the input at path ("-": stdin). keep says that
// Result.Canonical will be asked (pk canon -l): the bytes of stdin are kept
// in Result.Input; a file's are not, its output is compared with the file
// as it is written (list.go).
func File(path string, opt Options, keep bool) (*Result, error) {
	res, err := file(path, opt, keep)
	if err == nil && keep && res.Input == nil && path != "-" {
		res.inPath = path
	}
	return res, err
}

func file(path string, opt Options, keep bool) (*Result, error) {
	p := opt.proto()
	if p < MinProtocol || p > MaxProtocol {
		return nil, fmt.Errorf("protocol %d: pk canon writes protocols %d to %d", p, MinProtocol, MaxProtocol)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(writeGCPercent))
	copt := opt.CanonOptions()
	ropt := canon.ReadOptions(copt)
	// every payload in memory: the writer copies them to the output
	ropt.BlobThreshold = math.MaxInt64
	var data []byte // the input's bytes (stdin, a pipe)
	var err error
	src := path // the file read a stream at a time (stdin: a copy of its bytes)
	// stdin, or a pipe named by its path (input.ReadOnce), is read once,
	// into memory, and read again from a copy; errors name it
	once := input.ReadOnce(path)
	if once {
		in := os.Stdin
		if path != "-" {
			if in, err = os.Open(path); err != nil {
				return nil, err
			}
		}
		var buf bytes.Buffer
		c := input.CopyOnce(&buf, in, -1)
		data = buf.Bytes()
		if c.Fails && c.ReadErr == nil {
			// its first bytes fail as a bare pickle's: the opener reads on,
			// as it reads stdin, and what it reads is kept. An endless pipe
			// is refused at its error; a joblib file (its arrays' bytes
			// inside the stream) is read whole, the rest copied after it.
			if _, err = input.OpenReader(io.MultiReader(bytes.NewReader(data), io.TeeReader(in, &buf)), path, ropt, input.Options{}); err == nil {
				_, err = io.Copy(&buf, in)
				data = buf.Bytes()
			}
		}
		if in != os.Stdin {
			in.Close()
		}
		if c.ReadErr != nil {
			return nil, c.ReadErr
		}
		if err != nil {
			return nil, err
		}
		src = "-" // (no file to read again, unless the copy is made)
		if tmp, err := tempWith(data); err == nil {
			defer os.Remove(tmp)
			src = tmp
		}
	}
	open := func() (*input.Doc, error) {
		if once { // a zip needs the file
			return input.OpenReader(bytes.NewReader(data), path, ropt, input.Options{})
		}
		return input.Open(path, ropt)
	}
	refusedAt := func(err error, off int64) error {
		var r *refusal
		if errors.As(err, &r) {
			return &Error{File: path, Offset: r.off, Reason: r.reason}
		}
		return &Error{File: path, Offset: off, Reason: err.Error()}
	}
	// the streams written one after the other into out (ends[i]: where
	// stream i ends), wants their digests (dsize bytes each); a bare pickle
	// file's output goes to a temporary file once it is large (spill.go),
	// except for -l, which compares it with the file
	var out outBuf
	defer out.remove() // (unless handed to the Result)
	var wants []byte
	var ends []int
	dsize := copt.Algo.Size()
	var scr canon.Scratch // each stream's view is done with before the next
	var raw func(*input.Raw) ([]byte, error)
	viewOpt := func(doc *input.Doc) canon.Options { return copt }
	writeStream := func(s *pickle.Stream, vopt canon.Options) error {
		if off, ok := tooDeep(s.Store()); ok {
			// refused before the view and its digest are made
			return &Error{File: path, Offset: off, Reason: deepReason}
		}
		w, err := newStreamWriter(canon.NormalizeScratch(s, vopt, &scr), p)
		if err != nil {
			return pickle.WithFile(err, path)
		}
		w.raw, w.fingerprints = raw, true // (checked below)
		if err = w.writeOut(false, &out); err != nil {
			return refusedAt(err, s.Offset)
		}
		if len(w.want) != dsize {
			return &Error{File: path, Offset: s.Offset, Reason: "internal: a stream digest of another size"}
		}
		addStream(&wants, &ends, w.want, out.Len())
		return nil
	}
	var trail *pickle.Trailing
	format, compression, base := "pickle", "", "pickle"
	// a bare pickle file, plain or compressed as a whole, is read a stream
	// at a time (input.EachStreamDecompressed, as pk hash reads a plain
	// one): each stream written, then its store reused
	var werr error
	var file *pickle.File
	each := false
	if src != "-" {
		// (-l too: its comparison reads the output where it is, list.go;
		// the check beside the writing and the compressor beside it are
		// for an output that is written, -l's is compared first)
		out.spill = true
		out.follows, out.copt = !keep && !noFollow, copt
		if kind, _ := input.PeekFile(src); kind != "" && writable[kind] && !keep && !noZFollow {
			// a compressed file: its compressor follows the output's file
			// (zfollow.go), used when the file is read as a bare pickle's
			out.zkind = kind
		}
		// through the writer sink (wsink.go) when it holds, else as below;
		// a compressed bare pickle through its decompressed copy
		// (input.SpoolDecompressed), read as a bare file of those bytes: the
		// machine sizes its arrays from the file's length, where reading
		// as it decompresses it grows them a step at a time (the cost
		// shape stack_globals_discarded.pkl.gz: 0.3-0.8 s of copies). Its
		// offsets are the decompressed stream's, as before; anything the
		// sink does not take reads the user's file as before.
		sinkSrc, spooled := src, ""
		if kind, _ := input.PeekFile(src); kind != "" && writable[kind] {
			if sp, ok := input.SpoolDecompressed(src, input.Options{}); ok {
				defer sp.Close()
				sinkSrc, spooled = sp.Path(), sp.Compression
			}
		}
		var refused error
		var read *pickle.File
		if read, compression, each, refused = sinkStreams(sinkSrc, p, copt, &out, &wants, &ends); each && spooled != "" {
			compression = spooled
		}
		if each {
			file = read
		}
		if refused != nil {
			if e, ok := refused.(*Error); ok {
				e.File = path // (stdin's copy: named "-")
			}
			return nil, refused
		} else if !each {
			out.Reset()
			wants, ends = wants[:0], ends[:0]
			// what the sink's read made is garbage: give it back before the
			// second read, whose peak then is its own (cost shape
			// cycle_dict, refused for its depth on both reads: 267 -> 195 MB)
			debug.FreeOSMemory()
			file, compression, each = input.EachStreamDecompressed(src, ropt, input.Options{}, func(st *pickle.Stream) error {
				werr = writeStream(st, copt)
				return werr
			})
		}
		if !each && werr != nil {
			return nil, werr
		}
	}
	// longIn: the input may hold a payload pk hash streams (unknown off the
	// paths that read it a stream at a time)
	longIn := true
	if each {
		if file != nil {
			trail = file.Trailing
			longIn = file.Longest >= pickle.DefaultBlobThreshold
		}
		if compression != "" {
			format = input.Layered(compression, "pickle")
		}
		// the last stream's store and view are no longer needed: collect
		// them before the output is read back
		file, scr = nil, canon.Scratch{}
		runtime.GC()
	} else {
		out.Reset()
		out.spill, out.zkind = false, ""
		wants, ends = wants[:0], ends[:0]
		doc, err := open()
		if err != nil {
			return nil, err
		}
		base = strings.TrimPrefix(doc.Format, doc.Compression+"+")
		if base == "torch-legacy" || doc.Format == "torch-zip" {
			// read by pk-canon/2 as the pickle of its data pickle: the
			// canonical torch.save zip of it
			out, ok, err := torchFromView(path, data, doc, opt, copt)
			if err != nil {
				return nil, err
			}
			if ok {
				return &Result{Data: out, Input: data, Format: "torch-zip"}, nil
			}
		}
		if base == "torch-legacy" && writable[doc.Compression] {
			out, err := torchLegacy(path, doc, opt, copt)
			if err != nil {
				return nil, err
			}
			return &Result{Data: out, Input: data, Format: doc.Format}, nil
		}
		if doc.Format == "torch-zip" {
			out, err := torchZip(path, doc, opt, copt)
			if err != nil {
				return nil, err
			}
			return &Result{Data: out, Input: data, Format: doc.Format}, nil
		}
		// joblib files and .npy object arrays are read by pk-canon/2 as the
		// bare pickle of their stream (their arrays as values): they are
		// written as that pickle (docs/pk-canon.md, Containers)
		npyObjects := base == "npy" && len(doc.Parts) == 1 &&
			doc.Parts[0].Role == input.RoleObjects && doc.Parts[0].Pickle != nil && len(doc.Parts[0].Pickle.Streams) > 0
		switch {
		case !writable[doc.Compression]:
			if err := supported(doc, path); err != nil {
				return nil, err
			}
		case base == "joblib":
			if err := asPickle(doc, path, copt); err != nil {
				return nil, err
			}
			viewOpt = func(doc *input.Doc) canon.Options { return canon.DocOptions(doc, copt) }
			raw = rawReader(path, data)
		case npyObjects:
		case npyPlain(doc):
			// the canonical .npy file of its array
			res, err := npyFile(path, data, doc, copt)
			if err != nil {
				return nil, err
			}
			res.Input, res.Format = data, doc.Format
			return res, nil
		default:
			if err := supported(doc, path); err != nil {
				return nil, err
			}
		}
		f := doc.Parts[0].Pickle
		format, compression, trail = doc.Format, doc.Compression, f.Trailing
		vopt := viewOpt(doc)
		for i, s := range f.Streams {
			if err := writeStream(s, vopt); err != nil {
				return nil, err
			}
			f.Streams[i] = nil // its store is no longer needed
		}
		// the input's stores are no longer needed (a retry opens the input
		// again): collect them before the output is read back, whose store
		// takes their place
		doc, f, vopt = nil, nil, canon.Options{}
		runtime.GC()
	}
	if keep && !once && (trail == nil || base == "pickle") {
		// pk canon -l: a file that is its own output needs no check
		if res := listSame(path, format, compression, &out, trail); res != nil {
			return res, nil
		}
	}
	n := len(ends)
	want := func(i int) []byte { return wants[i*dsize : (i+1)*dsize] }
	// the output read back: one pk hash of the file (its fast path for plain
	// data), against the digest its streams' digests give; when it differs,
	// stream by stream to find the streams to write again
	var bad map[int]error
	ok := false
	if fastCheckOut(&out, canon.BareSum(copt, n, wants), copt) {
		bad, ok = map[int]error{}, true
	}
	var all []byte // the output in memory, when it is looked at stream by stream
	if !ok {
		if all, err = out.Bytes(); err != nil {
			return nil, err
		}
		bad, ok = readBack(all, n, want, copt)
	}
	span := func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return all[start:ends[i]]
	}
	if !ok {
		// check stream by stream
		for i := range n {
			if verr := verify(span(i), want(i), copt); verr != nil {
				bad[i] = verr
			}
		}
	}
	if len(bad) > 0 && !noVerify {
		if all == nil {
			if all, err = out.Bytes(); err != nil {
				return nil, err
			}
		}
		var fixed bytes.Buffer
		var f *pickle.File
		var vopt canon.Options
		for i := 0; i < n; i++ {
			b := span(i)
			if verr, ok := bad[i]; ok {
				if f == nil {
					doc, err := open()
					if err != nil {
						return nil, err
					}
					if len(doc.Parts) == 0 || doc.Parts[0].Pickle == nil || len(doc.Parts[0].Pickle.Streams) != n {
						return nil, &Error{File: path, Offset: -1, Reason: "internal: the input reads otherwise the second time"}
					}
					f = doc.Parts[0].Pickle
					vopt = viewOpt(doc)
				}
				s := f.Streams[i]
				w, err := newStreamWriter(canon.Normalize(s, vopt), p)
				if err != nil {
					return nil, pickle.WithFile(err, path)
				}
				// written with fingerprints: retry writes it again without
				// them, then in the getattr form
				w.raw, w.fingerprints = raw, true
				if b, err = w.retry(verr); err != nil {
					return nil, refusedAt(err, s.Offset)
				}
			}
			fixed.Write(b)
		}
		out.Reset()
		out.spill = false
		out.Write(fixed.Bytes())
	}
	if trail != nil && base != "pickle" {
		return nil, &Error{File: path, Offset: trail.Offset, Reason: fmt.Sprintf("bytes after the pickle of a %s file: pk canon does not write them", format)}
	}
	if trail != nil {
		if err := trailing(path, data, compression, trail, &out); err != nil {
			return nil, err
		}
	}
	res := &Result{Format: format, Input: data}
	if out.spilled() && compression == "" && base == "pickle" {
		// the file the check read is the output
		if res.spool, res.size, err = out.file(); err != nil {
			return nil, err
		}
		return res, nil // (base "pickle", not compressed: checked above)
	}
	if compression != "" && (data == nil || src != path && src != "-") {
		// a compressed file's output, compressed into a file of its own
		// (Result.spool) as the output is read, never whole in memory.
		// Read a stream at a time, with no payload pk hash streams in the
		// input or the output, no stream written again and no bytes after
		// the pickle, the check above settled it: pk hash reads the
		// compressed file as the bare pickle it holds, whose digest is
		// that of the streams' digests (wants) it was checked against,
		// and reads nothing again from a file without such a payload.
		settled := each && !longIn && !out.long && trail == nil && len(bad) == 0
		if err := compressOut(src, path, compression, &out, res, copt, settled); err != nil {
			return nil, err
		}
		return res, nil
	}
	b, err := out.Bytes()
	if err != nil {
		return nil, err
	}
	if res.Data, err = compress(compression, b); err != nil {
		return nil, err
	}
	if (compression != "" || base != "pickle") && !noVerify {
		// the checks above read the input with every payload in memory; pk
		// hash streams a payload of 1 MiB or more and reads it again from
		// the file where a rule needs it, except where it cannot
		// (canonical-form-2.md §5): the file written must have the pk hash
		// of the input as pk hash reads both
		if err := samePkHash(path, data, res.Data, copt); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// compressOut compresses the output in out (in memory or spilled) in the
// input's compression kind into res: in memory within spillAt bytes, else
// into a temporary file (res.spool), never whole in memory; and checks
// (unless noVerify, or settled: the caller's check of the bare output
// settled it) that the file written has the pk hash of the input (the file
// src, named path: stdin's copy is named "-") as pk hash reads both
// (samePkHash), the input's computed meanwhile on a goroutine of its own
// (the other processor).
func compressOut(src, path, kind string, out *outBuf, res *Result, copt canon.Options, settled bool) error {
	var in *canon.Result
	var inErr error
	hashed := make(chan struct{})
	verify := !noVerify && !(settled && !noSettle)
	if verify {
		compressChecks.Add(1)
	}
	if !verify {
		close(hashed)
	} else {
		go func() {
			defer close(hashed)
			in, inErr = canon.HashFile(src, copt)
		}()
	}
	var err error
	z := out.endZ(kind != out.zkind) // (compressed as it was written)
	if z == nil {
		z = &outBuf{spill: true}
		err = compressTo(kind, out, z)
	}
	if err == nil {
		err = z.result(res)
	}
	z.remove()
	<-hashed
	if err != nil {
		return err
	}
	if !verify {
		return nil
	}
	if inErr == nil {
		if res.spool != "" {
			inErr = samePkHashFile(path, in.Digest, res.spool, copt)
		} else {
			inErr = samePkHashAs(path, in.Digest, res.Data, copt)
		}
	}
	if inErr != nil {
		res.Close()
		return inErr
	}
	return nil
}

// noZFollow turns the compressor that follows the output off (tests compare
// both ways).
var noZFollow bool

// noSettle makes compressOut check every output as pk hash reads it, and
// compressChecks counts the outputs it checked so (tests).
var (
	noSettle       bool
	compressChecks atomic.Int64
)

// compressChunk is the size of the Writes compressTo makes (the compressed
// bytes do not depend on it: TestCompressorChunks).
const compressChunk = 1 << 20

// compressTo compresses the output in out into z.
func compressTo(kind string, out, z *outBuf) error {
	if err := compressInto(kind, out, z); err != nil {
		return err
	}
	return z.flush()
}

// compressInto writes the output in out to w through a compressor of
// kind, closed at the end.
func compressInto(kind string, out *outBuf, w io.Writer) error {
	cw, err := newCompressor(kind, w)
	if err != nil {
		return err
	}
	if err := out.writeTo(cw); err != nil {
		return err
	}
	return cw.Close()
}

// samePkHash checks that out (a whole output file) has the pk hash of the
// input at path (data: its bytes, stdin) as pk hash computes both.
func samePkHash(path string, data, out []byte, copt canon.Options) error {
	in := path
	if data != nil { // (stdin, a pipe: its bytes)
		p, err := tempWith(data)
		if err != nil {
			return err
		}
		defer os.Remove(p)
		in = p
	}
	r, err := canon.HashFile(in, copt)
	if err != nil {
		return err
	}
	return samePkHashAs(path, r.Digest, out, copt)
}

// samePkHashAs checks that out (a whole output file, written to a temporary
// file and hashed as pk hash hashes a file) has the pk hash want.
func samePkHashAs(path, want string, out []byte, copt canon.Options) error {
	p, err := tempWith(out)
	if err != nil {
		return err
	}
	defer os.Remove(p)
	return samePkHashFile(path, want, p, copt)
}

// samePkHashFile checks that the output file at p has the pk hash want.
func samePkHashFile(path, want, p string, copt canon.Options) error {
	r, err := canon.HashFile(p, copt)
	if err != nil {
		return &Error{File: path, Offset: -1, Reason: fmt.Sprintf("pk cannot reproduce this file faithfully: the output does not read back (%v)", err)}
	}
	if r.Digest != want {
		return &Error{File: path, Offset: -1, Reason: "pk cannot write this file with its pk hash: written canonically it hashes otherwise as pk hash reads the two files"}
	}
	return nil
}

// tempWith writes b to a new temporary file and returns its name.
func tempWith(b []byte) (string, error) {
	tmp, err := os.CreateTemp("", "pk-canon-*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", errors.Join(werr, cerr)
	}
	return tmp.Name(), nil
}

// supported refuses what pk canon does not write, in one line.
func supported(doc *input.Doc, path string) error {
	why := ""
	base := strings.TrimPrefix(doc.Format, doc.Compression+"+")
	switch {
	case !writable[doc.Compression]:
		why = fmt.Sprintf("%s-compressed: pk canon has no %s writer (it writes back plain, gzip, zlib, bz2, xz, lzma, zstd and lz4 files)", doc.Compression, doc.Compression)
	case strings.Contains(doc.Format, "npy"):
		why = fmt.Sprintf("a NumPy .npy file (%s) pk canon does not write: neither an array of plain data nor the pickle of an object array", doc.Format)
	case strings.Contains(doc.Format, "joblib"):
		why = fmt.Sprintf("a joblib file (%s) pk canon does not write (docs/pk-canon.md)", doc.Format)
	case base != "pickle" || len(doc.Parts) != 1 || doc.Parts[0].Pickle == nil:
		why = fmt.Sprintf("a %s input: pk canon writes bare pickle files only", doc.Format)
	}
	if why != "" {
		return &Error{File: path, Offset: -1, Reason: why}
	}
	return nil
}

// readBack reads the written streams b back one at a time
// (pickle.ParseEach, one stream's store held at a time) and returns the
// streams whose canonical digest is not wants' (by index), with the reason.
// ok is false when b does not read back as len(wants) streams (the caller
// then reads each back on its own).
func readBack(b []byte, n int, want func(i int) []byte, copt canon.Options) (bad map[int]error, ok bool) {
	bad = map[int]error{}
	ropt := canon.ReadOptions(copt)
	rd := pickle.NewReader(bytes.NewReader(b), int64(len(b)), "")
	rd.NewHash = ropt.NewHash
	i := 0
	var scr canon.Scratch // one view at a time, as pk hash reads stream by stream
	file, err := pickle.ParseEach(rd, ropt, func(st *pickle.Stream) error {
		if i >= n {
			return errors.New("more streams than written")
		}
		got, err := canon.NormalizeScratch(st, copt, &scr).Digest()
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want(i)) {
			bad[i] = errors.New("the output's canonical form differs from the input's")
		}
		i++
		return nil
	})
	if err == nil && file.Trailing == nil && i == n {
		return bad, true
	}
	return map[int]error{}, false
}

// fastChecks counts the outputs fastCheck found right, followChecks those
// of them the check beside the writing found (tests); noFollow turns that
// check off (tests compare both ways).
var (
	fastChecks   int
	followChecks int
	noFollow     bool
)

// fastCheckOut is fastCheck of the streams in out: a spilled output's
// file is hashed where it is. Code objects' argument tuples are read whole
// (canon.Options.WholeCodeArgs): the check reads the output after the
// input's store, view and writer tables are gone, and holds less than
// they did even so, so folding them would only cost time (4 % of pk canon
// of a 5 MB cloudpickle state).
func fastCheckOut(out *outBuf, sum []byte, copt canon.Options) bool {
	if followedSum(out, sum) {
		fastChecks++
		followChecks++
		return true
	}
	copt.WholeCodeArgs = true
	if !out.spilled() {
		return fastCheck(out.mem.Bytes(), sum, copt)
	}
	if out.Len() == 0 || out.flush() != nil {
		return false
	}
	res, err := canon.HashFile(out.f.Name(), copt)
	if err != nil || !bytes.Equal(res.Sum, sum) {
		return false
	}
	fastChecks++
	return true
}

// fastCheck reports whether the pk hash of b (bare pickle streams, written
// to a temporary file and hashed as pk hash hashes a file) is sum.
func fastCheck(b []byte, sum []byte, copt canon.Options) bool {
	if len(b) == 0 {
		return false
	}
	tmp, err := os.CreateTemp("", "pk-canon-*.pkl")
	if err != nil {
		return false
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return false
	}
	res, err := canon.HashFile(tmp.Name(), copt)
	if err != nil || !bytes.Equal(res.Sum, sum) {
		return false
	}
	fastChecks++
	return true
}

// verify reads the written stream back and checks that its canonical
// digest is the input stream's.
func verify(b []byte, want []byte, copt canon.Options) error {
	ropt := canon.ReadOptions(copt)
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "", ropt)
	if err != nil {
		return fmt.Errorf("the output does not read back (%v)", err)
	}
	if len(f.Streams) != 1 || f.Trailing != nil {
		return fmt.Errorf("the output reads back as %d streams", len(f.Streams))
	}
	got, err := canon.Normalize(f.Streams[0], copt).Digest()
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("the output's canonical form differs from the input's")
	}
	return nil
}

// copyDecompressed copies bytes [off, off+n) of the decompressed input
// (data, when kept, else the file at path) to out.
func copyDecompressed(path string, data []byte, off, n int64, out io.Writer) error {
	p := path
	if data != nil {
		tmp, err := os.CreateTemp("", "pk-canon-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		tmp.Write(data)
		tmp.Close()
		p = tmp.Name()
	}
	r, _, finish, err := input.OpenDecompressed(p, input.Options{})
	if err != nil {
		return err
	}
	defer finish()
	if _, err := io.CopyN(io.Discard, r, off); err != nil {
		return err
	}
	_, err = io.CopyN(out, r, n)
	return err
}

// trailing copies the bytes after the last stream verbatim (pk hash covers
// them by length and content).
func trailing(path string, data []byte, compression string, t *pickle.Trailing, out io.Writer) error {
	if data != nil && compression == "" {
		if t.Offset+t.Len > int64(len(data)) {
			return &Error{File: path, Offset: t.Offset, Reason: "trailing bytes past the end of the input"}
		}
		out.Write(data[t.Offset : t.Offset+t.Len])
		return nil
	}
	var r io.Reader
	var finish func() error
	var err error
	if data != nil {
		// stdin or -l of a compressed file: decompress the kept bytes again
		tmp, terr := os.CreateTemp("", "pk-canon-*")
		if terr != nil {
			return terr
		}
		defer os.Remove(tmp.Name())
		tmp.Write(data)
		tmp.Close()
		r, _, finish, err = input.OpenBare(tmp.Name(), input.Options{})
	} else {
		r, _, finish, err = input.OpenBare(path, input.Options{})
	}
	if err != nil {
		return &Error{File: path, Offset: t.Offset, Reason: fmt.Sprintf("trailing bytes cannot be re-read: %v", err)}
	}
	defer finish()
	if _, err := io.CopyN(io.Discard, r, t.Offset); err != nil {
		return &Error{File: path, Offset: t.Offset, Reason: fmt.Sprintf("trailing bytes cannot be re-read: %v", err)}
	}
	if _, err := io.CopyN(out, r, t.Len); err != nil {
		return &Error{File: path, Offset: t.Offset, Reason: fmt.Sprintf("trailing bytes cannot be re-read: %v", err)}
	}
	return nil
}

// compress writes b back in the input's compression, with fixed settings:
// gzip and zlib at level 9 (no file name, no time stamp), bz2 with block
// size 9 (github.com/dsnet/compress, bz2.go), xz and lzma
// ("alone") with the defaults of github.com/ulikunitz/xz, zstd with
// github.com/klauspost/compress's default level on one thread, lz4 with
// github.com/pierrec/lz4's defaults.
func compress(kind string, b []byte) ([]byte, error) {
	if kind == "" {
		return b, nil
	}
	var buf bytes.Buffer
	w, err := newCompressor(kind, &buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newCompressor is the writer of compress: what is written to it is
// written to buf compressed, once it is closed.
func newCompressor(kind string, buf io.Writer) (io.WriteCloser, error) {
	var w io.WriteCloser
	var err error
	switch kind {
	case "gzip":
		w, err = gzip.NewWriterLevel(buf, gzip.BestCompression)
	case "zlib":
		w, err = zlib.NewWriterLevel(buf, zlib.BestCompression)
	case "bz2":
		w, err = newBz2Writer(buf) // bz2.go: block size 9
	case "xz":
		w, err = xz.NewWriter(buf)
	case "lzma":
		w, err = lzma.NewWriter(buf)
	case "zstd":
		w, err = zstd.NewWriter(buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
	case "lz4":
		w = lz4.NewWriter(buf)
	default:
		return nil, fmt.Errorf("%s: compression not written", kind)
	}
	return w, err
}
