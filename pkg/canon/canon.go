// Package canon owns pk's canonical form of a pickle, in two versions:
// "pk-canon/1" (docs/canonical-form.md) and "pk-canon/2" (docs/canonical-form-2.md:
// arrays as values, enum member order, dill's indirections); Options.Form
// selects one, and every rule that differs between them is gated on it:
//
//   - Layer 1, the normalised view: Normalize applies the opcode-form
//     equivalences and the producer profiles (cloudpickle, its vendored
//     copies, dill) to one stream's graph and records every normalisation it
//     applied (rule, path, count). View and Node expose the result node by
//     node, for pk diff.
//   - Layer 2, the encoding: a Merkle-style byte encoding of a whole input
//     (every part, every stream, the effects not reachable from the result)
//     and its digest, printed as "pk1-sha256:<hex>" (HashDoc, Digest).
//
// Nothing here executes or imports anything from the input.
package canon

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"strings"

	"github.com/zeebo/xxh3"
)

// Form is a version of the canonical form. The zero value is Form1, so
// that every caller that does not choose (pk diff, pk canon, the golden
// tests of pk-canon/1) keeps the first form; pk hash chooses Current.
// Every digest string starts with the form's Tag, so that a digest stored
// for one form never verifies against another: pk hash --check computes
// the form its stored digest names.
type Form uint8

const (
	Form1 Form = iota // "pk-canon/1", digests "pk1-..."
	Form2             // "pk-canon/2", digests "pk2-...": arrays as values (docs/canonical-form-2.md)

	// Current is the form pk hash writes by default.
	Current = Form2
)

// Version is the form's name in the encoding's header ("pk-canon/1").
func (f Form) Version() string {
	if f == Form2 {
		return "pk-canon/2"
	}
	return "pk-canon/1"
}

// Tag is the form's name in digest strings ("pk1").
func (f Form) Tag() string {
	if f == Form2 {
		return "pk2"
	}
	return "pk1"
}

// parseForm reads a digest's form tag.
func parseForm(tag string) (Form, bool) {
	switch tag {
	case "pk1":
		return Form1, true
	case "pk2":
		return Form2, true
	}
	return 0, false
}

// FormVersion and FormTag name the first form (kept for callers that
// print them; Options.Form.Version() and .Tag() name the one in use).
const (
	FormVersion = "pk-canon/1"
	FormTag     = "pk1"
)

// MaxIsolationDepth bounds how deeply the computation of sort keys for
// mutable set elements / dict keys may nest (a set of objects whose state
// holds a set of objects ...). Deeper input is refused with an error rather
// than risking Go's stack.
const MaxIsolationDepth = 10000

// MaxExpansion bounds the canonical encoding of a stream: at most
// MaxExpansion times the stream's length plus MaxExpansionSlack bytes. Only
// many references to one large number come near it (a number is encoded by
// value at every reference, as the form requires; a shared 4 MiB int read
// back 2000 times is 8 GB of encoding from a 4 MB file); such input is
// refused with an error rather than hashed for minutes. Ordinary data stays
// far below: a memo reference of a few bytes encodes in at most 70 or so.
const (
	MaxExpansion      = 64
	MaxExpansionSlack = 64 << 20
)

// InlineMax is the longest str/bytes payload encoded by value; longer ones
// are encoded by length and digest of their content.
const InlineMax = 64

// Algo is the hash function of a digest.
type Algo uint8

const (
	SHA256 Algo = iota // default; cryptographic end to end
	XXH3               // zeebo/xxh3 128-bit; fast, for trusted input only
)

// ParseAlgo accepts "sha256" and "xxh3".
func ParseAlgo(s string) (Algo, error) {
	switch strings.ToLower(s) {
	case "sha256", "":
		return SHA256, nil
	case "xxh3", "xxh3-128":
		return XXH3, nil
	}
	return 0, fmt.Errorf("unknown --algo %q: use sha256 or xxh3", s)
}

func (a Algo) String() string {
	if a == XXH3 {
		return "xxh3"
	}
	return "sha256"
}

// New returns a fresh hash of the algorithm.
func (a Algo) New() hash.Hash {
	if a == XXH3 {
		return &xxh128{xxh3.New()}
	}
	return sha256.New()
}

// sumChunk is how many bytes sum digests at a time.
const sumChunk = 256 << 10

// sum appends the digest of data to dst: H(data) exactly as New, Write and
// Sum give it, without a hasher per call for SHA-256.
func (a Algo) sum(dst, data []byte) []byte {
	if a == SHA256 && len(data) <= sumChunk {
		s := sha256.Sum256(data)
		return append(dst, s[:]...)
	}
	h := a.New()
	for len(data) > sumChunk {
		// (a chunk at a time: one Write of it all is one call to the
		// assembly, which the collector cannot stop: grow.Copy)
		h.Write(data[:sumChunk])
		data = data[sumChunk:]
	}
	h.Write(data)
	return h.Sum(dst)
}

// Size is the digest size in bytes.
func (a Algo) Size() int {
	if a == XXH3 {
		return 16
	}
	return 32
}

type xxh128 struct{ *xxh3.Hasher }

func (x *xxh128) Size() int { return 16 }
func (x *xxh128) Sum(b []byte) []byte {
	s := x.Sum128().Bytes()
	return append(b, s[:]...)
}

// Options select the variant of the form. Every option that changes the
// digest is named in the digest string (see Options.Tag).
type Options struct {
	// Form is the version of the form (zero: Form1).
	Form Form
	Algo Algo
	// Strict applies no producer profile (cloudpickle, dill): only the
	// opcode-form equivalences of the standard library remain.
	Strict bool
	// KeepDictOrder keeps plain dicts in insertion order instead of sorting.
	KeepDictOrder bool
	// StripLineno replaces line numbers of code objects (co_firstlineno) and
	// Python 3.13 class __firstlineno__ by a placeholder (profiles only).
	StripLineno bool
	// NoPaths gives only per-rule totals in Result.Applied (and
	// View.Applied): one entry per rule, Count its total over the input,
	// Offset its first application's, Path empty. Finding the paths walks
	// the whole graph again and listing every application costs memory
	// per node, which only a listing of the normalisations (pk hash
	// --explain) needs; pk diff needs the totals. Not part of the form:
	// the digest is the same.
	NoPaths bool
	// WholeCodeArgs reads code objects' argument tuples into the store
	// whole, not folded at their REDUCE (fold.go, foldArgs), which saves
	// the fold's work where the memory it saves is not the process's peak
	// (pk canon's check of its output: the writer's read of the input
	// holds more). Not part of the form: the digest is the same.
	WholeCodeArgs bool

	// storageKeys maps legacy torch storage keys to ordinals (DocOptions).
	storageKeys map[string]int
	// arrays is, with Form2, what the input tells about the arrays of its
	// streams (joblib's raw array parts, by wrapper node); HashDoc sets it
	// per pickle part.
	arrays *docArrays
	// src is, with Form2, the path of the input when it is a plain
	// uncompressed pickle file whose offsets are the reader's: streamed
	// payloads can be read again from it (reread.go).
	src string
	// fold is the canon sink the input was read with (fold.go), or nil.
	fold *foldSink
	// nestedRR is, for the nested pickle of a joblib object array (read
	// by the outer stream's reader: its offsets are the outer part's),
	// where its payloads are read again.
	nestedRR *rrAt
	// noReread is set when the streams are read as a compressed file is
	// decompressed (hashEach): a streamed payload that a rule needs again
	// fails the view (errRereadOpen), and the file is hashed through
	// input.Open, which reads it again through its decompression.
	noReread bool
	// spooled is set when the bare file read stream by stream is the
	// decompressed copy of a compressed file (hashSpooled): it is read as
	// that compressed file is (noReread), so a payload a rule needs again
	// sends the file to input.Open as before, with its bound on reading a
	// compressed part again.
	spooled bool
}

// v2 reports whether the form is pk-canon/2 (or later): the gate of every
// rule that differs between the versions.
func (o Options) v2() bool { return o.Form >= Form2 }

// Tag returns the prefix of a digest string: the form ("pk1", "pk2") plus
// the options that change the form, plus the algorithm, e.g. "pk2-sha256",
// "pk1+strict-xxh3".
func (o Options) Tag() string {
	var b strings.Builder
	b.WriteString(o.Form.Tag())
	if o.Strict {
		b.WriteString("+strict")
	}
	if o.KeepDictOrder {
		b.WriteString("+dictorder")
	}
	if o.StripLineno && !o.Strict {
		b.WriteString("+nolineno")
	}
	b.WriteString("-")
	b.WriteString(o.Algo.String())
	return b.String()
}

// header is what the encoding starts with: the form and its options.
func (o Options) header() string {
	t := o.Tag()
	return o.Form.Version() + " " + t[:strings.LastIndexByte(t, '-')] + "\n"
}

// ParseDigest splits a digest string into its options and hex digest. A
// digest of another form version returns an error of type *VersionError.
func ParseDigest(s string) (Options, string, error) {
	var o Options
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return o, "", fmt.Errorf("not a pk digest: %q", clip(s))
	}
	tag, hexd := s[:i], s[i+1:]
	j := strings.LastIndexByte(tag, '-')
	if j < 0 {
		return o, "", fmt.Errorf("not a pk digest: %q", clip(s))
	}
	parts := strings.Split(tag[:j], "+")
	f, ok := parseForm(parts[0])
	if !ok {
		return o, "", &VersionError{Got: parts[0]}
	}
	o.Form = f
	for _, p := range parts[1:] {
		switch p {
		case "strict":
			o.Strict = true
		case "dictorder":
			o.KeepDictOrder = true
		case "nolineno":
			o.StripLineno = true
		default:
			return o, "", fmt.Errorf("unknown option %q in digest %q", p, clip(s))
		}
	}
	a, err := ParseAlgo(tag[j+1:])
	if err != nil {
		return o, "", err
	}
	o.Algo = a
	if len(hexd) != 2*a.Size() {
		return o, "", fmt.Errorf("digest %q has %d hex digits, want %d", clip(s), len(hexd), 2*a.Size())
	}
	return o, strings.ToLower(hexd), nil
}

// VersionError reports a digest of a form this pk does not implement.
type VersionError struct{ Got string }

func (e *VersionError) Error() string {
	return fmt.Sprintf("digest form %q is not pk1 (pk-canon/1) or pk2 (pk-canon/2): computed by another version of pk", e.Got)
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
