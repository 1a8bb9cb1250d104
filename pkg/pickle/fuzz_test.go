package pickle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// fuzzSeeds adds the hostile table, the machine behaviour cases and the
// small committed fixtures of the shared corpus to a fuzz target.
func fuzzSeeds(f *testing.F) {
	for _, c := range hostileCases() {
		if len(c.in) <= 4096 {
			f.Add(c.in)
		}
	}
	for _, c := range validSamples {
		f.Add([]byte(c))
	}
	for _, p := range fixtureFiles(32 << 10) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParse: Parse must never panic; an error is a *Error inside the input;
// a success satisfies checkFile. Parsing the same bytes as a stream of
// unknown size and with tiny blobs must give the same shape.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		f1, err1 := parseBytes(b)
		if err1 != nil {
			if _, err := checkError(err1, len(b)); err != nil {
				t.Fatal(err)
			}
		} else if err := checkFile(f1, int64(len(b))); err != nil {
			t.Fatal(err)
		}

		// One stream at a time in reused memory (ParseEach): the same
		// streams, field for field.
		var sigs []string
		if err1 == nil {
			for _, st := range f1.Streams {
				sigs = append(sigs, streamSig(st))
			}
		}
		k := 0
		fe, erre := ParseEach(NewReader(bytes.NewReader(b), int64(len(b)), "t.pkl"), Options{}, func(st *Stream) error {
			if k >= len(sigs) || streamSig(st) != sigs[k] {
				t.Fatalf("ParseEach stream %d differs from Parse's", k)
			}
			k++
			return nil
		})
		if (err1 == nil) != (erre == nil) || (err1 == nil && (k != len(sigs) || fe.Size != f1.Size || (fe.Trailing == nil) != (f1.Trailing == nil))) {
			t.Fatalf("Parse: %v; ParseEach: %v after %d streams", err1, erre, k)
		}

		// Opcodes decoded in batches from the first one, and read one at
		// a time throughout, with a BUILD hook (a batch then ends with a
		// BUILD): the same streams, field for field, or the same error.
		if err := sameBatched(b); err != nil {
			t.Fatal(err)
		}

		// Unknown size (stdin): same outcome.
		f2, err2 := Parse(onlyReader{bytes.NewReader(b)}, -1, "-", Options{})
		if err2 != nil {
			if _, err := checkError(err2, len(b)); err != nil {
				t.Fatal(err)
			}
		} else if err := checkFile(f2, int64(len(b))); err != nil {
			t.Fatal(err)
		}
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("known size: %v; unknown size: %v", err1, err2)
		}
		if err1 == nil && !sameShape(f1, f2) {
			t.Fatalf("known and unknown size give different graphs")
		}

		// Tiny blob threshold with digests: same shape, blob lengths add up.
		f3, err3 := Parse(bytes.NewReader(b), int64(len(b)), "t", Options{BlobThreshold: 3, NewHash: sha256.New})
		if (err1 == nil) != (err3 == nil) {
			t.Fatalf("default blobs: %v; tiny blobs: %v", err1, err3)
		}
		if err3 != nil {
			if _, err := checkError(err3, len(b)); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := checkFile(f3, int64(len(b))); err != nil {
			t.Fatal(err)
		}
		if !sameShape(f1, f3) {
			t.Fatalf("default and tiny blob thresholds give different graphs")
		}
	})
}

// sameShape compares two parses of the same bytes: streams, node kinds,
// attribution and log.
func sameShape(a, b *File) bool {
	if len(a.Streams) != len(b.Streams) || (a.Trailing == nil) != (b.Trailing == nil) {
		return false
	}
	for i := range a.Streams {
		sa, sb := a.Streams[i], b.Streams[i]
		if sa.End != sb.End || len(sa.All) != len(sb.All) || len(sa.Log) != len(sb.Log) || sa.Self != sb.Self {
			return false
		}
		for j := range sa.All {
			x, y := sa.All[j], sb.All[j]
			if x.Kind != y.Kind || x.Self != y.Self || x.Offset != y.Offset || len(x.Items) != len(y.Items) {
				return false
			}
			// Payload lengths agree, except for Python 2 str (a blob keeps
			// the raw Latin-1 length, a small one its UTF-8 form); globals
			// read from blob names become dynamic.
			switch x.Kind {
			case KindStr, KindBytes, KindByteArray:
				if x.Flags&FlagPy2Str == 0 && x.Len() != y.Len() {
					return false
				}
			}
		}
	}
	return true
}

// FuzzReader: the opcode iterator must never panic, must yield opcodes back
// to back, and end with io.EOF or a *Error inside the input.
func FuzzReader(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, size := range []int64{int64(len(b)), -1} {
			var src io.Reader = bytes.NewReader(b)
			if size < 0 {
				src = onlyReader{src}
			}
			rd := NewReader(src, size, "t")
			rd.BlobThreshold = 5
			pos := int64(0)
			for n := 0; ; n++ {
				if n > len(b) {
					t.Fatalf("more opcodes than bytes")
				}
				o, err := rd.Next()
				if errors.Is(err, io.EOF) {
					if pos != int64(len(b)) {
						t.Fatalf("EOF at %d of %d", pos, len(b))
					}
					break
				}
				if err != nil {
					pe, cerr := checkError(err, len(b))
					if cerr != nil {
						t.Fatal(cerr)
					}
					if pe.Offset < pos {
						t.Fatalf("error offset %d before the failing opcode at %d: %v", pe.Offset, pos, err)
					}
					break
				}
				if o.Offset != pos || o.Len < 1 || o.Offset+o.Len != rd.Offset() {
					t.Fatalf("opcode %v at %d len %d, expected at %d, reader at %d", o.Code, o.Offset, o.Len, pos, rd.Offset())
				}
				if Lookup(byte(o.Code)) == nil {
					t.Fatalf("unknown opcode %v returned without error", o.Code)
				}
				if o.Blob != nil && (o.Blob.Len < 5 || o.Blob.Offset <= o.Offset || o.Blob.Offset+o.Blob.Len != rd.Offset()) {
					t.Fatalf("blob %+v of opcode at %d ending at %d", o.Blob, o.Offset, rd.Offset())
				}
				pos = rd.Offset()
			}
		}
	})
}

// sameBatched parses b with the machine decoding opcodes in batches from
// the first one and reading them one at a time throughout, each with a
// BUILD hook that reads nothing and without one, and reports the first
// difference.
func sameBatched(b []byte) error {
	defer func(v int) { batchAfter = v }(batchAfter)
	parse := func(after int, hook bool) ([]string, string) {
		batchAfter = after
		opt := Options{}
		if hook {
			opt.AfterBuild = func(*Reader, *Store, ID) error { return nil }
		}
		f, err := Parse(bytes.NewReader(b), int64(len(b)), "t.pkl", opt)
		if err != nil {
			return nil, err.Error()
		}
		var sigs []string
		for _, st := range f.Streams {
			sigs = append(sigs, streamSig(st))
		}
		if f.Trailing != nil {
			sigs = append(sigs, fmt.Sprintf("trailing %+v", *f.Trailing))
		}
		return sigs, ""
	}
	for _, hook := range []bool{false, true} {
		one, err1 := parse(math.MaxInt, hook)
		batched, err2 := parse(0, hook)
		if err1 != err2 {
			return fmt.Errorf("hook %v: one at a time: %q; batched: %q", hook, err1, err2)
		}
		if !slices.Equal(one, batched) {
			return fmt.Errorf("hook %v: batched streams differ:\n%s\n---\n%s", hook, strings.Join(one, "\n"), strings.Join(batched, "\n"))
		}
	}
	return nil
}

// TestBatchedSameOnFixtures: sameBatched on every committed plain pickle of
// the shared corpus (FuzzParse's seeds stop at 32 KiB).
func TestBatchedSameOnFixtures(t *testing.T) {
	files := fixtureFiles(0)
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameBatched(b); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
