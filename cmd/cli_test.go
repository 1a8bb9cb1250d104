package cmd

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestColorScripts runs cmd/testdata/script/color_*.txtar: --color, NO_COLOR,
// TERM=dumb and terminals (through script(1) when it is installed).
func TestColorScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "color_"), Setup: inputsEnv(t)})
}

// TestUsageScripts runs cmd/testdata/script/usage_*.txtar: usage errors.
func TestUsageScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "usage_"), Setup: inputsEnv(t)})
}

// TestErrorScripts runs cmd/testdata/script/errors_*.txtar: inputs that are
// not pickles, worded alike by every command.
func TestErrorScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "errors_"), Setup: inputsEnv(t), Cmds: fileCmds})
}

// fileCmds make files a txtar cannot hold.
var fileCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// writebytes FILE GO-STRING: the bytes of a Go string literal's body
	"writebytes": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: writebytes FILE STRING")
		}
		b, err := strconv.Unquote(`"` + args[1] + `"`)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b), 0o644))
	},
	// xorlast FILE N: the last byte of FILE xor'd with N (0-255)
	"xorlast": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: xorlast FILE N")
		}
		n, err := strconv.ParseUint(args[1], 0, 8)
		ts.Check(err)
		p := ts.MkAbs(args[0])
		b, err := os.ReadFile(p)
		ts.Check(err)
		if len(b) == 0 {
			ts.Fatalf("xorlast: %s is empty", args[0])
		}
		b[len(b)-1] ^= byte(n)
		ts.Check(os.WriteFile(p, b, 0o644))
	},
	// mkzip FILE MEMBER...: a zip archive of empty members
	"mkzip": func(ts *testscript.TestScript, neg bool, args []string) {
		f, err := os.Create(ts.MkAbs(args[0]))
		ts.Check(err)
		w := zip.NewWriter(f)
		for _, m := range args[1:] {
			fw, err := w.Create(m)
			ts.Check(err)
			fw.Write([]byte("x"))
		}
		ts.Check(w.Close())
		ts.Check(f.Close())
	},
}

// TestInstallScripts runs cmd/testdata/script/install_*.txtar: make install
// into a temporary PREFIX (man pages, completions, docs, links), and the
// completions and --version the links answer. $REPO is the source tree; the
// Go environment is passed on so that make can build.
func TestInstallScripts(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goenv := map[string]string{}
	if out, err := exec.Command("go", "env", "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN").Output(); err == nil {
		for i, v := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			goenv[[]string{"GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"}[i]] = v
		}
	}
	goBin, _ := exec.LookPath("go")
	testscript.Run(t, testscript.Params{
		Files: globScripts(t, "install_"),
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", repo)
			for k, v := range goenv {
				e.Setenv(k, v)
			}
			if goBin != "" {
				e.Setenv("PATH", filepath.Dir(goBin)+string(os.PathListSeparator)+e.Getenv("PATH"))
			}
			return nil
		},
	})
}
