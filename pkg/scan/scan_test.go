package scan

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpus checks every file testdata/scan/gen.py wrote against
// expect.txt: the verdict, a word of the findings, and that every finding
// names its offset and opcode.
func TestCorpus(t *testing.T) {
	f, err := os.Open("../../testdata/scan/expect.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Split(line, "\t")
		name, want, word := fs[0], Verdict(fs[1]), fs[2]
		n++
		t.Run(name, func(t *testing.T) {
			rep := ScanFile(filepath.Join("../../testdata/scan/corpus", name), DefaultPolicy())
			if rep.Verdict != want {
				t.Errorf("verdict %s, want %s (error %q)", rep.Verdict, want, rep.Error)
			}
			if want == Invalid && rep.Error == "" {
				t.Errorf("invalid without an error line")
			}
			if want != Invalid && want != Clean && len(rep.Findings) == 0 {
				t.Errorf("flagged without findings")
			}
			if want == Clean && len(rep.Findings) > 0 {
				t.Errorf("clean with findings %+v", rep.Findings)
			}
			text := ""
			for _, x := range rep.Findings {
				if x.Opcode == "" || x.Offset < 0 || x.Reason == "" || x.Severity == "" || x.Role == "" {
					t.Errorf("finding without offset, opcode, role or reason: %+v", x)
				}
				text += x.Global + " " + x.Reason + "\n"
			}
			if word != "" && !strings.Contains(text, word) {
				t.Errorf("findings do not mention %q:\n%s", word, text)
			}
			if t.Failed() {
				for _, x := range rep.Findings {
					t.Logf("%s %s %s %d %s: %s", x.Severity, x.Role, x.Global, x.Offset, x.Opcode, x.Reason)
				}
			}
		})
	}
	if n < 23 {
		t.Fatalf("only %d corpus files", n)
	}
}

// fixtures lists the pickle inputs under testdata/fixtures/DIR (the
// oracle's .ops.jsonl, .dis.txt and the like are not inputs).
func fixtures(t *testing.T, dir string) []string {
	var out []string
	err := filepath.Walk(filepath.Join("../../testdata/fixtures", dir), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		for _, suf := range []string{".jsonl", ".txt", ".json"} {
			if strings.HasSuffix(p, suf) {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures under %s", dir)
	}
	return out
}

// TestFixturesDefault: every fixture of plain data, numpy, joblib and
// torch is clean under the default policy. The stdlib fixtures that hold
// the catalogue's own classes (module fixture_types) are unknown, and
// only because of those classes; the EXT fixture is dangerous (its codes
// name whatever the loader registered).
func TestFixturesDefault(t *testing.T) {
	pol := DefaultPolicy()
	counts := map[Verdict]int{}
	for _, dir := range []string{"stdlib", "numpy", "joblib", "torch", "compressed", "multi"} {
		for _, p := range fixtures(t, dir) {
			rep := ScanFile(p, pol)
			counts[rep.Verdict]++
			base := filepath.Base(p)
			switch {
			case strings.HasPrefix(base, "ext_codes"):
				if rep.Verdict != Dangerous {
					t.Errorf("%s: %s, want dangerous (EXT codes)", p, rep.Verdict)
				}
			case strings.HasPrefix(base, "trailing_junk"):
				// the junk fails at its first opcode: nothing after the
				// pickle can run, and a note says so
				if rep.Verdict != Clean || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "before anything runs") {
					t.Errorf("%s: %s %q, want clean with a note on the trailing bytes", p, rep.Verdict, rep.Notes)
				}
			case rep.Verdict == Unknown:
				for _, x := range rep.Findings {
					if !strings.HasPrefix(x.Global, "fixture_types.") {
						t.Errorf("%s: unknown for %s %s: %s", p, x.Role, x.Global, x.Reason)
					}
				}
			case rep.Verdict != Clean:
				t.Errorf("%s: %s (%s)", p, rep.Verdict, rep.Error)
				for _, x := range rep.Findings {
					t.Logf("  %s %s %s %d: %s", x.Severity, x.Role, x.Global, x.Offset, x.Reason)
				}
			}
		}
	}
	t.Logf("verdicts: %v", counts)
	if counts[Clean] < 150 {
		t.Errorf("only %d clean fixtures", counts[Clean])
	}
}

// TestFixturesCode: cloudpickle and dill files are code by default and
// clean with their preset.
func TestFixturesCode(t *testing.T) {
	def := DefaultPolicy()
	for _, dir := range []string{"cloudpickle", "dill"} {
		with, err := NewPolicy(append(DefaultPresets, dir)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range fixtures(t, dir) {
			if rep := ScanFile(p, def); rep.Verdict != Code {
				t.Errorf("%s: %s by default, want code", p, rep.Verdict)
				for _, x := range rep.Findings {
					if x.Severity != SevCode {
						t.Logf("  %s %s %s %d: %s", x.Severity, x.Role, x.Global, x.Offset, x.Reason)
					}
				}
			}
			if rep := ScanFile(p, with); rep.Verdict != Clean {
				t.Errorf("%s: %s with --allow %s, want clean", p, rep.Verdict, dir)
				for _, x := range rep.Findings {
					t.Logf("  %s %s %s %d: %s", x.Severity, x.Role, x.Global, x.Offset, x.Reason)
				}
			}
		}
	}
}

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "p.txt")
	os.WriteFile(text, []byte("# mine\npreset data\ncall mymodule.Thing\nconstruct mymodule:Thing\nresolve mymodule.helper\n"), 0o644)
	js := filepath.Join(dir, "p.json")
	os.WriteFile(js, []byte(`{"presets":["data"],"construct":["mymodule:Thing"],"resolve":["mymodule.helper"]}`), 0o644)
	for _, pf := range []string{text, js} {
		pol, _ := NewPolicy()
		if err := pol.LoadFile(pf); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"unknown_class.pkl", "unknown_resolve.pkl"} {
			if rep := ScanFile("../../testdata/scan/corpus/"+name, pol); rep.Verdict != Clean {
				t.Errorf("%s with %s: %s %+v", name, pf, rep.Verdict, rep.Findings)
			}
		}
		if rep := ScanFile("../../testdata/scan/corpus/global_reduce.pkl", pol); rep.Verdict != Dangerous {
			t.Errorf("global_reduce with %s: %s", pf, rep.Verdict)
		}
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("call\n"), 0o644)
	pol, _ := NewPolicy()
	if err := pol.LoadFile(bad); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad policy: %v", err)
	}
	if _, err := NewPolicy("nope"); err == nil {
		t.Errorf("unknown preset accepted")
	}
}

// TestProducers: pandas 1.5.3 and scikit-learn 1.2.1 pickles and joblib
// files (testdata/scan/gen_producers.py) are unknown by default, never
// worse, and clean with the pandas and sklearn presets.
func TestProducers(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/scan/producers/*")
	if len(files) < 30 {
		t.Fatalf("only %d producer files", len(files))
	}
	def := DefaultPolicy()
	with, err := NewPolicy(append(DefaultPresets, "pandas", "sklearn")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		if rep := ScanFile(p, def); rep.Verdict != Unknown && rep.Verdict != Clean {
			t.Errorf("%s: %s by default, want unknown", p, rep.Verdict)
		}
		if rep := ScanFile(p, with); rep.Verdict != Clean {
			t.Errorf("%s: %s with pandas and sklearn, want clean", p, rep.Verdict)
			for _, x := range rep.Findings {
				t.Logf("  %s %s %s %d: %s", x.Severity, x.Role, x.Global, x.Offset, x.Reason)
			}
		}
	}
}

// TestMainUnderDill: dill's preset lets names in __main__ be resolved,
// never called, and never when they are known to be dangerous.
func TestMainUnderDill(t *testing.T) {
	pol, _ := NewPolicy(append(DefaultPresets, "dill", "cloudpickle")...)
	su := func(s string) string { return "\x8c" + string(rune(len(s))) + s }
	for _, c := range []struct {
		pk   string
		want Verdict
	}{
		{"\x80\x04" + su("__main__") + su("os.system") + "\x93" + su("id") + "\x85R.", Dangerous},
		{"\x80\x04" + su("__main__") + su("helper") + "\x93" + su("id") + "\x85R.", Unknown},
		{"\x80\x04" + su("__main__") + su("__builtins__.eval") + "\x93.", Dangerous},
		{"\x80\x04" + su("__main__") + su("Color") + "\x93.", Clean},
	} {
		rep := ScanReader(strings.NewReader(c.pk), "t", pol)
		if rep.Verdict != c.want {
			t.Errorf("%q: %s, want %s (%+v)", c.pk, rep.Verdict, c.want, rep.Findings)
		}
	}
}
