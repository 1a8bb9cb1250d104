package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// inputsEnv gives scripts $INPUTS: testdata/inputs (binary container
// fixtures that a txtar cannot hold), and $TESTDATA: testdata.
func inputsEnv(t *testing.T) func(*testscript.Env) error {
	dir, err := filepath.Abs("../testdata/inputs")
	if err != nil {
		t.Fatal(err)
	}
	td, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	return func(e *testscript.Env) error {
		e.Setenv("INPUTS", dir)
		e.Setenv("TESTDATA", td) // the arrays/, frames/, tensors/ fixtures
		// the colour scripts run pk under script(1), a terminal: a slow
		// machine must not get a progress bar into their output
		e.Setenv("PK_NO_PROGRESS", "1")
		return nil
	}
}

// TestTraceScripts runs cmd/testdata/script/trace_*.txtar.
func TestTraceScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "trace_"), Setup: inputsEnv(t), Cmds: traceCmds})
}

// traceCmds: chomp FILE drops the newline that txtar ends every file with
// (a pickle that ends at STOP takes the fast paths; trailing bytes do not).
var traceCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"chomp": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: chomp FILE")
		}
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), bytes.TrimSuffix(b, []byte("\n")), 0o644))
	},
}

// TestInputScripts runs cmd/testdata/script/inputs_*.txtar: every command
// on real-world containers.
func TestInputScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "inputs_"), Setup: inputsEnv(t)})
}
