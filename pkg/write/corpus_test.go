package write

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// corpusFiles lists the pickle inputs of the committed corpus: every file
// under testdata/fixtures, testdata/equiv, testdata/differ and
// testdata/canon that is not a generated listing or an extracted stream.
func corpusFiles(t *testing.T) []string {
	var out []string
	for _, root := range []string{"../../testdata/fixtures", "../../testdata/equiv", "../../testdata/differ", "../../testdata/canon"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch {
			case strings.HasSuffix(p, ".txt"), strings.HasSuffix(p, ".jsonl"), strings.HasSuffix(p, ".json"),
				strings.HasSuffix(p, ".py"), strings.HasSuffix(p, ".md"), strings.HasSuffix(p, ".stream.pkl"):
				return nil
			}
			out = append(out, p)
			return nil
		})
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Skip("no corpus")
	}
	return out
}

// canonFile canonicalises path to a temporary file and returns its name
// (the extension is kept so that a compression is recognised by content
// and a reader can tell it).
func canonFile(t *testing.T, path string, opt Options) (string, *Result, error) {
	t.Helper()
	res, err := File(path, opt, false)
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out, res, nil
}

func digest(t *testing.T, path string, opt Options) string {
	t.Helper()
	r, err := canon.HashFile(path, opt.CanonOptions())
	if err != nil {
		t.Fatalf("hash %s: %v", path, err)
	}
	return r.Digest
}

// TestCorpusRoundTrip: for every corpus input pk canon accepts, the output
// hashes as the input does, and canonicalising the output gives it back
// byte for byte. Refusals are counted and must name the file.
func TestCorpusRoundTrip(t *testing.T) {
	for _, opt := range testfile.Sample([]Options{{Protocol: 4}, {Protocol: 2}, {Protocol: 3}, {Protocol: 5}, {Protocol: 4, KeepDictOrder: true}}, 5) {
		roundTrip(t, corpusFiles(t), opt)
	}
}

// roundTrip checks, for every input of files pk canon accepts with opt,
// that the output hashes as the input does and that canonicalising the
// output gives it back byte for byte; across files, inputs with equal
// digests give one output (compressed outputs compared decompressed) and
// inputs with different digests different outputs. It returns the outputs
// by input (decompressed) and the refusals by input.
func roundTrip(t *testing.T, files []string, opt Options) (outputs map[string][]byte, refusals map[string]string) {
	t.Helper()
	proto := opt.Protocol
	ok := 0
	reasons := map[string]int{}
	outputs, refusals = map[string][]byte{}, map[string]string{}
	byDigest := map[string][]byte{} // input digest -> output
	outs := map[string]string{}     // output -> input digest
	fast := fastChecks
	for _, p := range files {
		out, res, err := canonFile(t, p, opt)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) || !strings.HasPrefix(err.Error(), p+": ") || strings.Contains(err.Error(), "\n") {
				// not a refusal of pk canon: must be an input pk hash rejects too
				if _, herr := canon.HashFile(p, canon.Options{}); herr == nil {
					t.Errorf("proto %d: %s: %v", proto, p, err)
				}
			}
			refusals[p] = err.Error()
			reasons[short(err.Error(), p)]++
			continue
		}
		d := digest(t, p, opt)
		if b := digest(t, out, opt); d != b {
			t.Errorf("proto %d: %s: output hashes %s, input %s", proto, p, b, d)
			continue
		}
		again, err := File(out, opt, true)
		if err != nil {
			t.Errorf("proto %d: %s: canon of the output: %v", proto, p, err)
			continue
		}
		if !again.Canonical() || !bytes.Equal(again.Data, res.Data) {
			t.Errorf("proto %d: %s: not idempotent", proto, p)
			continue
		}
		raw := string(plainBytes(t, out, again))
		outputs[p] = []byte(raw)
		// a torch.save file stays one (zip or legacy), anything else is
		// written as a pickle: one output per digest and output kind
		dk := d + " " + strings.TrimPrefix(again.Format, compressionOf(again.Format))
		if prev, seen := byDigest[dk]; seen && string(prev) != raw {
			t.Errorf("proto %d: %s: output differs from another input's with the same digest", proto, p)
		}
		byDigest[dk] = []byte(raw)
		if pd, seen := outs[raw]; seen && pd != d {
			t.Errorf("proto %d: %s: same output as an input of another digest", proto, p)
		}
		outs[raw] = d
		ok++
	}
	t.Logf("protocol %d (keep dict order %v): %d inputs round-trip (%d distinct digests, as many distinct outputs), %d refused; %d outputs checked by one pk hash of the file", proto, opt.KeepDictOrder, ok, len(byDigest), len(refusals), fastChecks-fast)
	if ok > 0 && fastChecks == fast {
		t.Error("no output was checked by one pk hash of the file (fastCheck)")
	}
	for r, c := range reasons {
		t.Logf("  %3d× %s", c, r)
	}
	return outputs, refusals
}

// compressionOf is the "gzip+" of a format "gzip+pickle" ("" when none).
func compressionOf(format string) string {
	if i := strings.IndexByte(format, '+'); i >= 0 {
		return format[:i+1]
	}
	return ""
}

func short(msg, path string) string {
	msg = strings.TrimPrefix(msg, path+": ")
	if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "offset ") && i > 0 {
		msg = msg[i+2:]
	}
	if len(msg) > 110 {
		msg = msg[:110]
	}
	return msg
}

// TestEquivGroups: the variants of one equivalence group give one output.
func TestEquivGroups(t *testing.T) {
	agree, groups := 0, 0
	for _, root := range []string{"../../testdata/equiv", "../../testdata/canon/equiv"} {
		dirs, _ := filepath.Glob(filepath.Join(root, "*"))
		for _, dir := range dirs {
			files, _ := filepath.Glob(filepath.Join(dir, "*.pkl"))
			if len(files) < 2 {
				continue
			}
			groups++
			var first []byte
			good := true
			for _, f := range files {
				res, err := File(f, Options{}, false)
				if err != nil {
					t.Errorf("%s: %v", f, err)
					good = false
					break
				}
				if first == nil {
					first = res.Data
				} else if !bytes.Equal(first, res.Data) {
					t.Errorf("%s: output differs from %s's", f, files[0])
					good = false
				}
			}
			if good {
				agree++
			}
		}
	}
	t.Logf("%d of %d equivalence groups give one output", agree, groups)
}

// TestDifferPairs: the two inputs of every differ case give different
// outputs.
func TestDifferPairs(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/differ/*")
	n := 0
	for _, dir := range dirs {
		a, b := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
		ra, err1 := File(a, Options{}, false)
		rb, err2 := File(b, Options{}, false)
		if err1 != nil || err2 != nil {
			continue
		}
		n++
		if bytes.Equal(ra.Data, rb.Data) {
			t.Errorf("%s: a and b give the same output", dir)
		}
	}
	t.Logf("%d differ pairs give different outputs", n)
}

// plainBytes returns the canonical pickle (or .npy file) inside an output
// (decompressed).
func plainBytes(t *testing.T, path string, res *Result) []byte {
	t.Helper()
	if !strings.Contains(res.Format, "+") { // not compressed (a pickle, a torch zip)
		return res.Data
	}
	r, _, finish, err := input.OpenDecompressed(path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer finish()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
