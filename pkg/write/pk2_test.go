package write

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// pk2Files lists the fixtures of pk-canon/2's array, frame, tensor and
// producer rules (testdata/arrays, frames, tensors, pk2: testdata/gen's
// gen_arrays.py, gen_frames.py, gen_tensors.py, gen_pk2_producers.py).
func pk2Files(t *testing.T) []string {
	var out []string
	for _, dir := range []string{"arrays", "frames", "tensors", "pk2"} {
		ents, err := os.ReadDir(filepath.Join("../../testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, ".txt") || strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".py") || strings.HasSuffix(n, ".md") {
				continue
			}
			out = append(out, filepath.Join("../../testdata", dir, n))
		}
	}
	sort.Strings(out)
	return out
}

// TestPk2Fixtures: pk canon writes from pk hash's default form, pk-canon/2.
// Over the array, frame, tensor and pk2 fixtures at every output protocol,
// every output has its input's pk2 digest and is its own canonical output
// (roundTrip); every file of one digest gives one output (a numpy array
// pickled at protocols 0-5, by joblib plain or compressed, with numpy 1's or
// 2's names; a DataFrame; a fitted estimator; a torch.save zip and legacy
// file, both written as one zip), except that a torch.save file stays a
// torch.save file (the tensors pickled by pickle.dump give a pickle) and a
// .npy file of plain data a .npy file (npy.go; pickle.dump of its array
// gives a pickle), and every two digests two outputs. Nothing is refused.
// (The gzip'd pickles of a tensor with a 1.2 MB storage,
// refused while pk hash did not read such a storage again through the
// decompression, are written: TestRereadWritten.)
func TestPk2Fixtures(t *testing.T) {
	files := pk2Files(t)
	if len(files) < 250 {
		t.Fatalf("only %d fixtures", len(files))
	}
	for _, opt := range testfile.Sample([]Options{{Protocol: 4}, {Protocol: 5}, {Protocol: 2}, {Protocol: 3}}, 4) {
		outs, refused := roundTrip(t, files, opt)
		for p, why := range refused {
			t.Errorf("protocol %d: %s refused: %s", opt.Protocol, p, why)
		}
		// one output per digest, torch.save files (zip and legacy) and .npy
		// files of plain data apart from pickles
		byDigest := map[string]map[string]bool{}
		for p, o := range outs {
			d := digest(t, p, opt)
			if strings.HasSuffix(p, ".pt") {
				d += " torch.save"
			}
			if bytes.HasPrefix(o, []byte("\x93NUMPY")) {
				d += " npy"
			}
			if byDigest[d] == nil {
				byDigest[d] = map[string]bool{}
			}
			byDigest[d][string(o)] = true
		}
		groups, multi := 0, 0
		for _, o := range byDigest {
			groups++
			if len(o) > 1 {
				multi++
			}
		}
		if multi > 0 {
			t.Errorf("protocol %d: %d of %d digests give more than one output", opt.Protocol, multi, groups)
		}
		t.Logf("protocol %d: %d digests (torch.save and .npy files counted apart), one output each", opt.Protocol, groups)
		// the changed copies differ from their originals
		for p, o := range outs {
			base := strings.Replace(p, "_changed", "", 1)
			if base == p {
				continue
			}
			if ob, ok := outs[base]; ok && bytes.Equal(ob, o) {
				t.Errorf("protocol %d: %s and %s give one output", opt.Protocol, p, base)
			}
		}
		if opt.Protocol != 4 {
			continue
		}
		// the protocol 4 output of each array group (what the load test reads)
		for _, name := range []string{"c_int32_p0.pkl", "c_int32.joblib", "c_int32_p5.pkl", "numpy2_c_int32_p5.pkl"} {
			if !bytes.Equal(outs[filepath.Join("../../testdata/arrays", name)], outs["../../testdata/arrays/c_int32_p4.pkl"]) {
				t.Errorf("%s: not the output of c_int32_p4.pkl", name)
			}
		}
	}
}

// TestPythonArrays: the array, frame and tensor fixtures, canonicalised at
// protocols 2, 4 and 5, load in another process (pickle.load, and
// joblib.load too; torch.load for a torch.save file) to what the originals
// load to with their producer's loader (joblib.load, np.load, torch.load,
// pickle.load): dtype (str, descr, alignment, flags), shape, memory order
// and element bytes of every array, a DataFrame's columns, index and
// values, a tensor's dtype, shape, stride and values
// (testdata/write/describe_arrays.py).
func TestPythonArrays(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import numpy, joblib, pandas, sklearn, torch").Run(); err != nil {
		t.Skipf("%s cannot import numpy, joblib, pandas, sklearn and torch (%v): the array load test needs them", python, err)
	}
	ins, _ := filepath.Glob("../../testdata/fixtures/numpy/*.npy") // np.save of an object array: np.load loads its pickle
	for _, p := range pk2Files(t) {
		if !strings.Contains(p, "/pk2/") {
			ins = append(ins, p)
		}
	}
	orig := describeArrays(t, false, ins)
	dir := t.TempDir()
	for _, proto := range []int{4, 5, 2} {
		var outs []string
		src := map[string]string{}
		for i, p := range ins {
			res, err := File(p, Options{Protocol: proto}, false)
			if err != nil {
				continue // refusals: TestPk2Fixtures
			}
			name := strconv.Itoa(proto) + "_" + strconv.Itoa(i) + "_" + filepath.Base(p)
			if !strings.HasSuffix(p, ".pt") {
				name += ".out"
			}
			out := filepath.Join(dir, name)
			if err := os.WriteFile(out, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out)
			src[out] = p
		}
		got := describeArrays(t, true, outs)
		same := 0
		for _, out := range outs {
			p := src[out]
			a, b := orig[p], got[out]
			if twin := strings.Replace(p, "numpy2_", "", 1); twin != p && a.Error != "" {
				// numpy 2's names do not load with numpy 1; the output (numpy
				// 1's names) loads as the numpy 1 pickle of the same array
				a = orig[twin]
			}
			switch {
			case a.Error != "":
				t.Errorf("%s: the original does not load: %s", p, a.Error)
			case b.Error != "":
				t.Errorf("protocol %d: %s: the canonical output does not load: %s", proto, p, b.Error)
			case !bytes.Equal(a.Desc, b.Desc):
				t.Errorf("protocol %d: %s: the canonical output loads differently:\n  original  %.400s\n  canonical %.400s", proto, p, a.Desc, b.Desc)
			default:
				same++
			}
		}
		t.Logf("protocol %d: %d of %d outputs load equal to their originals", proto, same, len(outs))
		if same == 0 {
			t.Error("nothing was compared")
		}
	}
}

func describeArrays(t *testing.T, asPickle bool, files []string) map[string]described {
	t.Helper()
	args := []string{"../../testdata/write/describe_arrays.py"}
	if asPickle {
		args = append(args, "--pickle")
	}
	return runDescribe(t, exec.Command(python, append(args, files...)...))
}

// TestMutatedArrays: damaged versions of the array, frame and tensor
// fixtures (bytes changed, dropped, doubled) are written or refused, never a
// panic; what is written checks (its pk2 digest is the input's), a refusal is
// one line naming the file, and no refusal says the output did not read back
// with the input's digest.
func TestMutatedArrays(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	rng := rand.New(rand.NewSource(1414))
	dir := t.TempDir()
	written, refused := 0, 0
	for _, p := range pk2Files(t) {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 8192 || strings.HasSuffix(p, ".npy") || strings.HasSuffix(p, ".pt") || strings.Contains(p, "/pk2/") {
			continue // the dill and cloudpickle states of pk2/: TestMutatedInputs' kind of input, not arrays
		}
		orig, _ := os.ReadFile(p)
		for k := 0; k < 6; k++ {
			b := mutate(rng, orig, 2)
			in := filepath.Join(dir, "m"+filepath.Ext(p))
			os.WriteFile(in, b, 0o644)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s mutated (%x): panic: %v", p, b, r)
					}
				}()
				_, err := File(in, Options{Protocol: 2 + k%4}, false)
				if err != nil {
					refused++
					if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), in) {
						t.Errorf("%s mutated: %q", p, err)
					}
					if _, herr := canon.HashFile(in, canon.Options{Form: canon.Current}); herr == nil && (strings.Contains(err.Error(), "faithfully") || strings.Contains(err.Error(), "internal")) {
						t.Errorf("%s mutated (%x): %v", p, b, err)
					}
					return
				}
				written++
			}()
		}
	}
	t.Logf("%d mutated array inputs written, %d refused or unreadable", written, refused)
	if written == 0 {
		t.Error("nothing was written")
	}
}

// TestPythonDtypes: arrays of the dtypes the dtype writer rebuilds from a
// canonical descr alone (testdata/write/gen_dtypes.py: complex, half and
// long double, big-endian, bytes and void, timedeltas, titled, aligned and
// nested aligned structs, unicode, subarray, object and datetime fields, C
// and Fortran order), pickled by numpy at protocols 2, 4 and 5: the three
// pickles of one array give one output at each output protocol (pk-canon/2
// reads every one as an array), and the output loads in another process
// with the original's dtype (str, descr, item size, alignment, flags,
// aligned or not), shape, order and values.
func TestPythonDtypes(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/write/dtypes/*.pkl")
	if len(files) < 30 {
		t.Fatalf("only %d dtype fixtures", len(files))
	}
	dir := t.TempDir()
	type job struct{ in, out string }
	var jobs []job
	for _, proto := range []int{2, 4, 5} {
		byName := map[string][]byte{}
		for _, p := range files {
			res, err := File(p, Options{Protocol: proto}, false)
			if err != nil {
				t.Errorf("protocol %d: %s: %v", proto, p, err)
				continue
			}
			name := filepath.Base(p)
			name = name[:strings.LastIndex(name, "_p")]
			if prev, ok := byName[name]; ok && !bytes.Equal(prev, res.Data) {
				t.Errorf("protocol %d: %s: another output than the other protocols' pickles of %s", proto, p, name)
			}
			byName[name] = res.Data
			out := filepath.Join(dir, strconv.Itoa(proto)+"_"+filepath.Base(p))
			if err := os.WriteFile(out, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, job{p, out})
		}
	}
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s cannot import numpy (%v): the dtype load test needs it", python, err)
	}
	orig := describeArrays(t, false, files)
	var outs []string
	for _, j := range jobs {
		outs = append(outs, j.out)
	}
	got := describeArrays(t, true, outs)
	same := 0
	for _, j := range jobs {
		a, b := orig[j.in], got[j.out]
		switch {
		case a.Error != "" || b.Error != "":
			t.Errorf("%s: load errors: original %q, canonical %q", j.out, a.Error, b.Error)
		case !bytes.Equal(a.Desc, b.Desc):
			t.Errorf("%s: the canonical output loads differently:\n  original  %.600s\n  canonical %.600s", j.out, a.Desc, b.Desc)
		default:
			same++
		}
	}
	t.Logf("%d of %d dtype outputs (protocols 2, 4, 5) load equal to their originals", same, len(jobs))
}
