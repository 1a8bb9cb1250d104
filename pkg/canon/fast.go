package canon

// The streaming path of HashFile for plain-data pickles.
//
// The canonical form of a pickle that holds only plain data (None, bools,
// numbers, str, bytes, bytearray, lists, dicts, tuples, sets, frozensets,
// globals, calls: REDUCE of a global that no rule of the form rewrites,
// NEWOBJ, and BUILD / APPEND(S) / SETITEM(S) / ADDITEMS on call results;
// memo references to immutable values) does not need the graph: every
// value's encoding is final when the value is consumed by its container,
// since nothing can reach a consumed container again without a GET, and a
// GET of a mutable object makes the fast path give up. With no POP and
// nothing but the result left at STOP, every call and global is reachable
// from the result, so there is no effect to encode. So two passes over the
// file replace the graph:
//
//   - pass 1 (fast_scan.go) reads the opcodes with a stack of small handles
//     and learns the item count of the result when it is a list (its header
//     comes before its items in the encoding), which memo indices are ever
//     read (only those are kept in pass 2), and which lists are values of a
//     dict result or of an object result's dict state (on two CPUs, a
//     bare framed file of 4 MiB or more is read in two halves at once,
//     the second from a place near the middle whose state pass 1 guesses
//     and the first half checks: fast_scan_split.go);
//   - pass 2 (fast_encode.go) builds every value's encoding in an arena, in
//     stack order (pk hash's decodes the opcodes in the reader's window, as
//     pass 1 does, with a table's common ones inline: fast_hot.go); a container consumed by another is sealed then
//     (fast_seal.go: header, dict entries and set items sorted, recorded
//     without moving its bytes, so that nesting costs a record per level);
//     a small pure tuple's digest is read from a table of the last ones
//     made when its body is the same (fast_sums.go); the items
//     of a list result go straight into the hash as they are appended, and
//     the lists noted by pass 1 are dropped as they are built and read
//     again from the file when the result is written (fast_result.go);
//     pk hash's pass 2 of a long list result splits its items among
//     workers at places pass 1 notes, their outputs hashed in order
//     (fast_par.go).
//
// Memory is the arena (the encoding of what is on the stack, plus the whole
// result when it is neither a list nor a dict nor an object with a dict
// state), the live memo entries and the counts of lists built at the bottom
// of the stack; the arena is bounded (arenaExpansion) and so is the whole
// encoding (MaxExpansion, as on the graph path). Anything else - a call of a
// callable some rule reads (ruleGlobal in fold.go, the one list the canon
// sink also stops at: the standard-library callables of ruleStd, numpy's,
// torch's and joblib's for pk-canon/2, cloudpickle's and dill's), NEWOBJ_EX, INST, OBJ, POP, DUP, persistent ids, EXT,
// buffers, Py2 STRING, a GET of a mutable object, BUILD or a foreign
// operation on a plain container, a dict key or set item that is a bool, a
// float or a mutable object, duplicate keys, leftovers on the stack once a
// call or global was met, several streams, trailing bytes, any error - makes
// fastHashFile report !ok, and HashFile builds the graph as before. When it
// does not give up, the digest is the graph path's, byte for byte
// (TestFastMatchesGraph, TestFastBigValues, FuzzFastHash).

import (
	"errors"
	"io"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/grow"
)

// errSlow means: this input is not for the fast path.
var errSlow = errors.New("not a plain-data pickle")

// noFast turns the fast path off (tests compare both ways).
var noFast bool

// fastHashFile hashes path in two streaming passes when it is a bare
// plain-data pickle; ok is false when the graph path must do it.
func fastHashFile(path string, opt Options) (res *Result, ok bool) {
	if noFast || path == "-" || opt.storageKeys != nil {
		return nil, false
	}
	scan, size, err := fastScan(path)
	if err != nil {
		return nil, false
	}
	mark := grow.Mark()
	sum, err := fastEncode(path, size, opt, scan, nil)
	if err != nil {
		grow.Discard(mark) // (the graph path parses next)
		return nil, false
	}
	return docResult(opt, sum), true
}

// docResult is HashDoc's digest of an input with one part, named "", of one
// pickle stream whose digest is sum, and no trailing bytes.
func docResult(opt Options, sum []byte) *Result {
	h := opt.Algo.New()
	h.Write([]byte(opt.header()))
	buf := append([]byte{'P'}, appendStr(nil, "")...)
	buf = append(buf, 'K')
	buf = appendUvarint(buf, 1)
	h.Write(buf)
	h.Write(sum)
	h.Write([]byte{'z'})
	s := h.Sum(nil)
	return &Result{Digest: opt.Tag() + ":" + hexString(s), Sum: s}
}

// openBare opens path when it holds one bare pickle, plain or compressed
// (size -1 then); done must be called and reports a decompression error.
func openBare(path string) (r io.Reader, size int64, done func() error, err error) {
	return input.OpenBare(path, input.Options{})
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}
