package write

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/scan"
)

// python is the interpreter the load tests use (Debian's, where .ci/run
// installs python3-cloudpickle, python3-dill and python3-numpy).
const python = "/usr/bin/python3"

func needPython(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import cloudpickle").Run(); err != nil {
		t.Skipf("%s cannot import cloudpickle (%v): the load tests need Debian's python3-cloudpickle", python, err)
	}
}

type described struct {
	File      string          `json:"file"`
	Desc      json.RawMessage `json:"desc"`
	Error     string          `json:"error"`
	Filenames []string        `json:"filenames"`
}

// describe loads files in one Python process (testdata/write/describe.py).
func describe(t *testing.T, python string, files []string) map[string]described {
	t.Helper()
	cmd := exec.Command(python, append([]string{"../../testdata/write/describe.py"}, files...)...)
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0")
	return runDescribe(t, cmd)
}

// runDescribe runs one of testdata/write's describe scripts and reads its
// JSON lines, one a file.
func runDescribe(t *testing.T, cmd *exec.Cmd) map[string]described {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(cmd.Args[1]), err, stderr.String())
	}
	res := map[string]described{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var d described
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", filepath.Base(cmd.Args[1]), err)
		}
		res[d.File] = d
	}
	return res
}

// TestPythonLoadsCorpus: every corpus input pk canon writes, that pk scan
// finds clean or carrying only producer code, and that this Python loads,
// loads from its canonical output (in another process) to an equivalent
// object (describe.py says what that means); code objects carry the
// placeholder file name.
func TestPythonLoadsCorpus(t *testing.T) {
	needPython(t)
	pol := scan.DefaultPolicy()
	dir := t.TempDir()
	var ins, outs []string
	for i, p := range corpusFiles(t) {
		rep := scan.ScanFile(p, pol)
		if rep.Verdict != scan.Clean && rep.Verdict != scan.Code {
			continue // loading it would run what we cannot vouch for
		}
		res, err := File(p, Options{}, false)
		if err != nil || strings.Contains(res.Format, "torch") || strings.Contains(res.Format, "joblib") || strings.Contains(res.Format, "npy") {
			continue // torch, joblib and .npy files: TestPythonTorch, TestPythonJoblib, TestPythonArrays
		}
		out := filepath.Join(dir, strings.ReplaceAll(filepath.Base(p), ".", "_")+"_"+strconv.Itoa(i))
		if err := os.WriteFile(out, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, p)
		outs = append(outs, out)
	}
	for _, py := range pythons() {
		same := compareLoads(t, py, ins, outs)
		if py == python && same == 0 {
			t.Error("nothing was compared")
		}
	}
}

// pythons are the interpreters the corpus is loaded with: Debian's, and
// pyenv's CPython 3.8 to 3.13 where installed (these have no producer
// library: they load the plain data).
func pythons() []string {
	out := []string{python}
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		root = filepath.Join(os.Getenv("HOME"), ".pyenv")
	}
	for _, v := range []string{"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"} {
		if m, _ := filepath.Glob(filepath.Join(root, "versions", v+".*", "bin", "python")); len(m) > 0 {
			out = append(out, m[0])
		}
	}
	return out
}

// compareLoads loads the originals in one process of py and the outputs in
// another and compares their descriptions; it returns how many agree.
func compareLoads(t *testing.T, py string, ins, outs []string) int {
	a, b := describe(t, py, ins), describe(t, py, outs)
	same, unloadable := 0, 0
	var ordered []string // equal only with --keep-dict-order
	for i, p := range ins {
		da, db := a[p], b[outs[i]]
		switch {
		case da.Error != "" && db.Error != "":
			// this Python cannot load it (another version's code objects, a
			// producer not installed): both sides fail, not always at the
			// same opcode (pk canon writes effects first)
			unloadable++
			if py == python {
				t.Logf("not loadable by %s: %s (%s / %s)", py, p, da.Error, db.Error)
			}
		case da.Error != "":
			t.Errorf("%s: %s: original fails to load (%s), canonical loads", py, p, da.Error)
		case db.Error != "":
			t.Errorf("%s: %s: canonical output fails to load (%s)", py, p, db.Error)
		case !bytes.Equal(da.Desc, db.Desc):
			// dict order is not canonical; where the loader keeps it
			// (cloudpickle enum members) --keep-dict-order must restore it
			res, err := File(p, Options{KeepDictOrder: true}, false)
			if err == nil {
				k := outs[i] + "_kdo"
				os.WriteFile(k, res.Data, 0o644)
				if dk := describe(t, py, []string{k})[k]; dk.Error == "" && bytes.Equal(da.Desc, dk.Desc) {
					ordered = append(ordered, filepath.Base(p))
					continue
				}
			}
			t.Errorf("%s: %s: the canonical output loads differently:\n  original  %.300s\n  canonical %.300s", py, p, da.Desc, db.Desc)
		default:
			for _, f := range db.Filenames {
				if f != Placeholder {
					t.Errorf("%s: a code object of the output has co_filename %q", p, f)
				}
			}
			same++
		}
	}
	t.Logf("%s: %d inputs load from their canonical output equal to the original, %d only with --keep-dict-order (dict order is not canonical: %s), %d not loadable there (both sides fail), of %d written",
		py, same, len(ordered), strings.Join(ordered, " "), unloadable, len(ins))
	return same
}

// TestPythonTrackerIDsAcrossProcesses: a dynamic class and an instance,
// pickled by cloudpickle in two processes (two random tracker ids), give
// one canonical output, and the two outputs loaded in a third process give
// one class: the instance of each is an instance of the other's class. The
// originals load as two classes.
func TestPythonTrackerIDsAcrossProcesses(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	var files, canon []string
	for _, name := range []string{"a.pkl", "b.pkl"} {
		p := filepath.Join(dir, name)
		cmd := exec.Command(python, "../../testdata/write/make_class.py", p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make_class.py: %v\n%s", err, out)
		}
		res, err := File(p, Options{}, false)
		if err != nil {
			t.Fatal(err)
		}
		c := filepath.Join(dir, "canon-"+name)
		if err := os.WriteFile(c, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		canon = append(canon, c)
	}
	ra, _ := os.ReadFile(files[0])
	rb, _ := os.ReadFile(files[1])
	if bytes.Equal(ra, rb) {
		t.Fatal("the two processes wrote the same bytes: no random tracker id to test")
	}
	ca, _ := os.ReadFile(canon[0])
	cb, _ := os.ReadFile(canon[1])
	if !bytes.Equal(ca, cb) {
		t.Fatal("the canonical outputs of the two processes differ")
	}
	run := func(args ...string) string {
		out, err := exec.Command(python, append([]string{"../../testdata/write/load_same_class.py"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("load_same_class.py: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(canon...); got != "one class" {
		t.Errorf("canonical outputs: %s", got)
	}
	if got := run(files...); got != "two classes" {
		t.Errorf("originals: %s (expected two classes: distinct random ids)", got)
	}
}

// TestPythonTorch: the torch.save files of the corpus, canonicalised (with
// --keep-dict-order where a legacy file's storages would be renumbered),
// load with torch as the originals do (testdata/write/torch_compare.py:
// keys in order, tensors' layout, values and storage sharing).
func TestPythonTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s cannot import torch (%v): the torch load test needs Debian's python3-torch", python, err)
	}
	var files []string
	for _, g := range []string{"../../testdata/fixtures/torch/*.pt", "../../testdata/inputs/torch_*.pt", "../../testdata/canon/*.pt"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	dir := t.TempDir()
	n, kdo := 0, 0
	for _, p := range files {
		res, err := File(p, Options{}, false)
		if err != nil && strings.Contains(err.Error(), "--keep-dict-order keeps it") {
			res, err = File(p, Options{KeepDictOrder: true}, false)
			kdo++
		}
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		out := filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(out, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(python, "../../testdata/write/torch_compare.py", p, out).CombinedOutput()
		if err != nil {
			t.Errorf("%s: torch_compare.py: %v\n%s", p, err, got)
			continue
		}
		if s := strings.TrimSpace(string(got)); !strings.HasSuffix(s, "same") {
			// a plain dict's keys come out in canonical order (Dict order,
			// docs/pk-canon.md); --keep-dict-order must keep them
			if strings.Contains(s, "keys") {
				if res, err := File(p, Options{KeepDictOrder: true}, false); err == nil {
					k := out + ".kdo.pt"
					os.WriteFile(k, res.Data, 0o644)
					if g, err := exec.Command(python, "../../testdata/write/torch_compare.py", p, k).CombinedOutput(); err == nil && strings.HasSuffix(strings.TrimSpace(string(g)), "same") {
						kdo++
						n++
						continue
					}
				}
			}
			t.Errorf("%s: %s", p, s)
			continue
		}
		n++
	}
	t.Logf("%d torch.save files (zip and legacy) load from their canonical output as from the original (%d of them, whose tensors sit in a plain dict, equal in key order only with --keep-dict-order)", n, kdo)
	if n == 0 {
		t.Error("nothing was compared")
	}
}

// TestPythonJoblib: the joblib files of the corpus, canonicalised (with
// --keep-dict-order where their arrays sit in a plain dict, see
// docs/pk-canon.md), load with joblib as the originals do
// (testdata/write/joblib_compare.py).
func TestPythonJoblib(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no Python")
	}
	if err := exec.Command(python, "-c", "import joblib, numpy").Run(); err != nil {
		t.Skipf("%s cannot import joblib and numpy (%v): the joblib load test needs Debian's python3-joblib", python, err)
	}
	var files []string
	for _, g := range []string{"../../testdata/fixtures/joblib/*", "../../testdata/inputs/joblib_*"} {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			if !strings.HasSuffix(p, ".txt") && !strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, ".jsonl") && !strings.HasSuffix(p, ".pkl") {
				files = append(files, p)
			}
		}
	}
	dir := t.TempDir()
	n, kdo := 0, 0
	for _, p := range files {
		res, err := File(p, Options{}, false)
		if err != nil && strings.Contains(err.Error(), "--keep-dict-order keeps it") {
			res, err = File(p, Options{KeepDictOrder: true}, false)
			kdo++
		}
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		out := filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(out, res.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(python, "../../testdata/write/joblib_compare.py", p, out).CombinedOutput()
		if err != nil {
			t.Errorf("%s: joblib_compare.py: %v\n%s", p, err, got)
			continue
		}
		if s := strings.TrimSpace(string(got)); !strings.HasSuffix(s, "same") {
			t.Errorf("%s: %s", p, s)
			continue
		}
		n++
	}
	t.Logf("%d joblib files load from their canonical output as from the original (%d written with --keep-dict-order)", n, kdo)
	if n == 0 {
		t.Error("nothing was compared")
	}
}

// TestPythonStatesAcrossProcesses: the code-carrying states of
// testdata/states/gen_states.py (dynamic classes, functions closing over
// them, instances), written by cloudpickle and dill in two processes
// (different tracker ids), give byte-identical canonical outputs; the
// canonical cloudpickle state loads as the original does.
func TestPythonStatesAcrossProcesses(t *testing.T) {
	needPython(t)
	if err := exec.Command(python, "-c", "import dill").Run(); err != nil {
		t.Skipf("%s cannot import dill: the states test needs Debian's python3-dill", python)
	}
	dir := t.TempDir()
	outs := map[string][][]byte{}
	for _, run := range []string{"a", "b"} {
		d := filepath.Join(dir, run)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(python, "../../testdata/states/gen_states.py", d, "60").CombinedOutput(); err != nil {
			t.Fatalf("gen_states.py: %v\n%s", err, out)
		}
		for _, name := range []string{"cloudpickle_state.pkl", "dill_state.pkl"} {
			res, err := File(filepath.Join(d, name), Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			outs[name] = append(outs[name], res.Data)
			if run == "a" {
				os.WriteFile(filepath.Join(d, "canon-"+name), res.Data, 0o644)
			}
		}
	}
	for name, o := range outs {
		if !bytes.Equal(o[0], o[1]) {
			t.Errorf("%s: the canonical outputs of two processes differ", name)
		}
	}
	a := filepath.Join(dir, "a", "cloudpickle_state.pkl")
	c := filepath.Join(dir, "a", "canon-cloudpickle_state.pkl")
	da, dc := describe(t, python, []string{a})[a], describe(t, python, []string{c})[c]
	if da.Error != "" || dc.Error != "" || !bytes.Equal(da.Desc, dc.Desc) {
		t.Errorf("the canonical cloudpickle state loads differently (errors %q, %q)", da.Error, dc.Error)
	}
}
