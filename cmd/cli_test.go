package cmd

import (
	"archive/zip"
	"os"
	"strconv"
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
