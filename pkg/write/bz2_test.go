package write

import (
	"bytes"
	"compress/bzip2"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// bz2Files lists every bz2-compressed input under testdata (by content,
// as pkg/input recognises bz2: "BZh", a block size digit, then the block or
// end-of-stream magic).
func bz2Files(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("../../testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		head := make([]byte, 10)
		if n, _ := io.ReadFull(f, head); n == 10 && string(head[:3]) == "BZh" && head[3] >= '1' && head[3] <= '9' &&
			(string(head[4:]) == "\x31\x41\x59\x26\x53\x59" || string(head[4:]) == "\x17\x72\x45\x38\x50\x90") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	if len(out) < 9 {
		t.Fatalf("only %d bz2 fixtures: %v", len(out), out)
	}
	return out
}

// TestBz2Written: every bz2 fixture of testdata (plain pickles, joblib
// files, a .npy file of plain data, the protocol 2 array and tensor
// pickles of testdata/reread), refused while pk canon had no bz2 writer, is
// written at every protocol and with --keep-dict-order, in bz2 with block
// size 9 ("BZh9"): its output has its input's pk hash and is its own
// canonical output (roundTrip, which also checks one output per digest),
// writing it twice gives the same bytes, and Go's compress/bzip2 reads the
// canonical pickle back from it.
func TestBz2Written(t *testing.T) {
	files := bz2Files(t)
	for _, opt := range testfile.Sample([]Options{{Protocol: 4}, {Protocol: 2}, {Protocol: 3}, {Protocol: 5}, {Protocol: 4, KeepDictOrder: true}}, 5) {
		outs, refused := roundTrip(t, files, opt)
		for p, why := range refused {
			t.Errorf("%+v: %s refused: %s", opt, p, why)
		}
		for _, p := range files {
			a, err := File(p, opt, false)
			if err != nil {
				continue // refused: above
			}
			b, err := File(p, opt, false)
			if err != nil || !bytes.Equal(a.Data, b.Data) {
				t.Errorf("%+v: %s: written twice, two outputs (%v)", opt, p, err)
			}
			if !bytes.HasPrefix(a.Data, []byte("BZh9")) {
				t.Errorf("%+v: %s: not bz2 with block size 9: %q", opt, p, a.Data[:min(len(a.Data), 4)])
				continue
			}
			plain, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(a.Data)))
			if err != nil || !bytes.Equal(plain, outs[p]) {
				t.Errorf("%+v: %s: compress/bzip2 does not read the canonical pickle back (%v)", opt, p, err)
			}
		}
	}
}

// TestPythonBz2: the bz2 outputs load with Python's bz2 (Debian's
// /usr/bin/python3; skipped with a message when it has no bz2 module):
// bz2.decompress gives the canonical pickle (or .npy file) Go wrote, and
// the output loads as the original does (testdata/write/bz2_compare.py:
// pickle.load of the decompressed pickle, joblib.load of a joblib file,
// np.load of a .npy file; equal data, arrays and tensors by dtype, shape
// and values), at protocols 2, 4 and 5. A pair whose original this Python
// cannot load (a module missing: numpy, joblib, torch) is skipped with a
// message.
func TestPythonBz2(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import bz2").Run(); err != nil {
		t.Skipf("%s cannot import bz2 (%v): the bz2 load test needs it", python, err)
	}
	dir := t.TempDir()
	args := []string{"../../testdata/write/bz2_compare.py"}
	for _, proto := range []int{4, 2, 5} {
		for i, p := range bz2Files(t) {
			res, err := File(p, Options{Protocol: proto}, false)
			if err != nil {
				continue // refusals: TestBz2Written
			}
			// the name keeps what tells a joblib file (joblib_compare's way)
			out := filepath.Join(dir, strconv.Itoa(proto)+"_"+strconv.Itoa(i)+"_"+filepath.Base(p))
			plain, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(res.Data)))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if err := os.WriteFile(out, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out+".plain", plain, 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, p, out)
		}
	}
	cmd := exec.Command(python, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("bz2_compare.py: %v\n%s", err, stderr.String())
	}
	same, skipped, n := 0, 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r struct{ File, Error, Skip string }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("bz2_compare.py: %v: %s", err, line)
		}
		n++
		switch {
		case r.Error != "":
			t.Errorf("%s: %s", r.File, r.Error)
		case r.Skip != "":
			t.Logf("%s: decompressed by Python's bz2, not loaded: %s", r.File, r.Skip)
			skipped++
		default:
			same++
		}
	}
	if n != (len(args)-1)/2 {
		t.Errorf("bz2_compare.py answered for %d of %d files", n, (len(args)-1)/2)
	}
	t.Logf("%d bz2 outputs decompress with Python's bz2 to the canonical pickle and load as their originals (%d only decompressed)", same, skipped)
	if same == 0 {
		t.Error("nothing was loaded")
	}
	if strings.TrimSpace(stderr.String()) != "" {
		t.Logf("bz2_compare.py: %s", stderr.String())
	}
}
