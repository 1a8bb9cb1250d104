package write

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// npyFiles lists the .npy files of plain data of the fixtures: those of
// testdata/write/npy (gen_npy.py; refused_* are refused), the arrays of
// testdata/arrays (gen_arrays.py), testdata/inputs' and the corpus's, and
// zstd and lz4 copies of f8.npy made here (Python's standard library
// writes neither).
func npyFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, g := range []string{"../../testdata/write/npy/*", "../../testdata/arrays/*.npy", "../../testdata/inputs/*.npy", "../../testdata/fixtures/numpy/*.npy"} {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			if !strings.Contains(filepath.Base(p), "object") {
				out = append(out, p)
			}
		}
	}
	b, err := os.ReadFile("../../testdata/write/npy/f8.npy")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, kind := range []string{"zstd", "lz4"} {
		c, err := compress(kind, b)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "f8.npy."+kind)
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) < 35 {
		t.Fatalf("only %d .npy fixtures", len(out))
	}
	return out
}

// numpySaved are the fixtures np.save wrote itself (default version):
// their canonical output is their own bytes.
var numpySaved = []string{
	"write/npy/f8.npy", "write/npy/f8_bigendian.npy", "write/npy/f8_fortran.npy", "write/npy/f8_trailing.npy",
	"write/npy/g1d.npy", "write/npy/struct_names.npy", "write/npy/struct_unicode.npy",
	"arrays/bigendian.npy", "arrays/bools.npy", "arrays/c_float64_same_values.npy", "arrays/c_int32.npy",
	"arrays/c_int32_changed.npy", "arrays/dates.npy", "arrays/empty.npy", "arrays/f_float64.npy",
	"arrays/scalar0d.npy", "arrays/structured.npy", "arrays/structured_nested.npy",
	"arrays/structured_offsets.npy", "arrays/unicode.npy", "inputs/plain_v1.npy", "inputs/fortran.npy",
	"fixtures/numpy/float64_np124.npy",
}

// TestNpyFiles: pk canon writes a .npy file of plain data as the .npy file
// numpy.save writes for its array (npy.go), compressed as it was. Every
// output has its input's pk hash and is its own canonical output
// (roundTrip, which also checks one output per digest and output kind and
// different outputs for different digests), whatever the output protocol;
// np.save's own files come back byte for byte; files of one digest (a 2.0
// and 3.0 header, another spelling and padding of the header, a 1-d array
// said to be in Fortran order) give np.save's bytes; the 2.0 header numpy
// writes for a header over 64 KiB is written as 2.0; refusals are one line
// naming the file.
func TestNpyFiles(t *testing.T) {
	files := npyFiles(t)
	var outs map[string][]byte
	for _, opt := range testfile.Sample([]Options{{Protocol: 4}, {Protocol: 2}, {Protocol: 5}, {Protocol: 4, KeepDictOrder: true}}, 2) {
		o, refused := roundTrip(t, files, opt)
		for p, why := range refused {
			if !strings.Contains(p, "refused_") {
				t.Errorf("protocol %d: %s refused: %s", opt.Protocol, p, why)
			}
		}
		if outs == nil {
			outs = o
			continue
		}
		for p, b := range o {
			if !bytes.Equal(b, outs[p]) {
				t.Errorf("%s: the output depends on the options (%+v)", p, opt)
			}
		}
	}
	if len(outs) < 30 {
		t.Errorf("only %d .npy files written", len(outs))
	}
	td := func(p string) string { return filepath.Join("../../testdata", p) }
	for _, p := range numpySaved {
		b, err := os.ReadFile(td(p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(outs[td(p)], b) {
			t.Errorf("%s: np.save's file is not its own canonical output", p)
		}
	}
	same := map[string][]string{
		"write/npy/f8.npy":  {"write/npy/f8_v2.npy", "write/npy/f8_v3.npy", "write/npy/f8_respaced.npy"},
		"write/npy/g1d.npy": {"write/npy/g1d_fortranflag.npy"},
		// the decompressed outputs: np.save's bytes
		"write/npy/gz_f8.npy.gz": {"write/npy/gz_f8_level1.npy.gz", "write/npy/f8.npy.xz", "write/npy/f8.npy.lzma", "write/npy/f8.npy.z", "write/npy/f8.npy.bz2", "write/npy/f8.npy"},
	}
	for a, bs := range same {
		for _, b := range bs {
			if outs[td(b)] == nil || !bytes.Equal(outs[td(a)], outs[td(b)]) {
				t.Errorf("%s and %s: not one output", a, b)
			}
		}
	}
	for _, p := range files {
		if strings.HasSuffix(p, ".zst") || strings.HasSuffix(p, ".zstd") || strings.HasSuffix(p, ".lz4") {
			if !bytes.Equal(outs[p], outs[td("write/npy/f8.npy")]) {
				t.Errorf("%s: decompressed, not np.save's bytes", p)
			}
		}
	}
	// numpy writes a header over 64 KiB as 2.0
	if b := outs[td("write/npy/struct_v2.npy.gz")]; len(b) < 8 || b[6] != 2 {
		t.Errorf("struct_v2.npy.gz: not written with a 2.0 header")
	}
	// the same array as big-endian, in Fortran order, with trailing bytes:
	// other digests, other outputs (roundTrip checks it); the trailing bytes
	// are copied
	if b := outs[td("write/npy/f8_trailing.npy")]; !bytes.HasSuffix(b, []byte("tail bytes")) {
		t.Errorf("f8_trailing.npy: trailing bytes not copied")
	}
	// refusals: one line naming the file and the reason
	for name, want := range map[string]string{
		"refused_truncated.npy": "exceeds the 40 bytes left (truncated)",
		"refused_notdict.npy":   ".npy header is not a dict",
		"refused_native.npy":    "header descr '=f8' pk-canon/2 does not read as an array's",
	} {
		p := td("write/npy/" + name)
		_, err := File(p, Options{}, false)
		var we *Error
		if err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line refusal %q, got %v", name, want, err)
		} else if name != "refused_truncated.npy" && name != "refused_notdict.npy" && !errors.As(err, &we) {
			t.Errorf("%s: not a refusal of pk canon: %v", name, err)
		}
	}
}

// TestNpyHeader: the header bytes of small cases against numpy 1.24's
// np.save (checked by hand with /usr/bin/python3).
func TestNpyHeader(t *testing.T) {
	for _, c := range []struct {
		descr   string
		fortran bool
		shape   []int64
		want    string
	}{
		{"<f8", false, []int64{2, 3}, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"},
		{"|b1", false, nil, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }"},
		{"<U5", true, []int64{4, 5}, "{'descr': '<U5', 'fortran_order': True, 'shape': (4, 5), }"},
		{`{"a":<i4@0,"b":(<f4)[2]@8}20`, false, []int64{7}, "{'descr': [('a', '<i4'), ('', '|V4'), ('b', '<f4', (2,)), ('', '|V4')], 'fortran_order': False, 'shape': (7,), }"},
		{`{"it's":|u1@0,"n":{"x":>u2@0}2@1}3`, false, []int64{1}, `{'descr': [("it's", '|u1'), ('n', [('x', '>u2')])], 'fortran_order': False, 'shape': (1,), }`},
	} {
		h, err := npyHeader(c.descr, c.fortran, c.shape)
		if err != nil {
			t.Errorf("%s: %v", c.descr, err)
			continue
		}
		if len(h)%64 != 0 || h[len(h)-1] != '\n' || string(h[:8]) != "\x93NUMPY\x01\x00" {
			t.Errorf("%s: preamble or alignment: %q", c.descr, h)
		}
		if got := string(h[10:]); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: header %q, want %q", c.descr, got, c.want)
		}
	}
	for _, s := range []string{"a", "it's", `q"`, `'"`, "a\\b", "t\tn\nr\r", "\x01\x7f", "é", "名", "\u00a0", "\u200b"} {
		want := map[string]string{"a": "'a'", "it's": `"it's"`, `q"`: `'q"'`, `'"`: `'\'"'`, "a\\b": `'a\\b'`,
			"t\tn\nr\r": `'t\tn\nr\r'`, "\x01\x7f": `'\x01\x7f'`, "é": "'é'", "名": "'名'", "\u00a0": `'\xa0'`, "\u200b": `'\u200b'`}[s]
		if got := pyStr(s); got != want {
			t.Errorf("pyStr(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestPythonNpy: the canonical outputs of the .npy fixtures load with
// np.load (after decompressing) to arrays equal to the originals (dtype,
// shape, C/F contiguity, element bytes), and np.save of the loaded array
// writes the output's bytes again (the trailing bytes of f8_trailing.npy
// apart) (testdata/write/npy_compare.py).
func TestPythonNpy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s cannot import numpy (%v): the .npy load test needs it", python, err)
	}
	dir := t.TempDir()
	args := []string{"../../testdata/write/npy_compare.py"}
	for _, p := range npyFiles(t) {
		res, err := File(p, Options{}, false)
		if err != nil {
			continue // refusals: TestNpyFiles
		}
		out := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(p, "../../"), "/", "_"))
		if err := os.WriteFile(out, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p, out)
	}
	cmd := exec.Command(python, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("npy_compare.py: %v\n%s", err, stderr.String())
	}
	n, skipped := 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r struct{ File, Error, Skip string }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("npy_compare.py: %v: %s", err, line)
		}
		n++
		if r.Skip != "" {
			t.Logf("%s: not compared: %s", r.File, r.Skip)
			n--
			skipped++
			continue
		}
		if r.Error != "" {
			t.Errorf("%s: %s", r.File, r.Error)
		}
	}
	if n+skipped != (len(args)-1)/2 {
		t.Errorf("npy_compare.py compared %d of %d files", n, (len(args)-1)/2)
	}
	t.Logf("%d canonical .npy outputs load equal to their originals and are np.save's bytes", n)
}

// TestNpySpooled: an output over SpoolAbove is streamed to a temporary
// file (Result.Data nil) and is the same output, with the same Canonical
// answer (with the input's bytes kept, as pk canon -l keeps them); Close
// removes the file.
func TestNpySpooled(t *testing.T) {
	files := npyFiles(t)
	mem := map[string]*Result{}
	for _, p := range files {
		if res, err := File(p, Options{}, true); err == nil {
			mem[p] = res
		}
	}
	defer func(v int64) { SpoolAbove = v }(SpoolAbove)
	SpoolAbove = 0
	n := 0
	for _, p := range files {
		want := mem[p]
		for _, keep := range []bool{false, true} {
			res, err := File(p, Options{}, keep)
			if (err == nil) != (want != nil) {
				t.Errorf("%s: spooled: %v, in memory: %v", p, err, want != nil)
				continue
			}
			if err != nil {
				continue
			}
			if res.Data != nil || res.spool == "" {
				t.Errorf("%s: not spooled", p)
			}
			var b bytes.Buffer
			if _, err := res.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), want.Data) || res.Size() != int64(len(want.Data)) {
				t.Errorf("%s: the spooled output differs", p)
			}
			if keep && res.Canonical() != want.Canonical() {
				t.Errorf("%s: Canonical %v spooled, %v in memory", p, res.Canonical(), want.Canonical())
			}
			spool := res.spool
			if err := res.Close(); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(spool); !os.IsNotExist(err) {
				t.Errorf("%s: spool %s left behind", p, spool)
			}
			n++
		}
	}
	canonical := 0
	for _, r := range mem {
		if r.Canonical() {
			canonical++
		}
	}
	if canonical < len(numpySaved) {
		t.Errorf("only %d outputs are their inputs' bytes (Canonical)", canonical)
	}
	t.Logf("%d outputs spooled, %d of %d inputs already canonical", n, canonical, len(mem))
}
