package cmd

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// inputsEnv gives scripts $INPUTS: testdata/inputs (binary container
// fixtures that a txtar cannot hold).
func inputsEnv(t *testing.T) func(*testscript.Env) error {
	dir, err := filepath.Abs("../testdata/inputs")
	if err != nil {
		t.Fatal(err)
	}
	return func(e *testscript.Env) error {
		e.Setenv("INPUTS", dir)
		return nil
	}
}

// TestTraceScripts runs cmd/testdata/script/trace_*.txtar.
func TestTraceScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "trace_"), Setup: inputsEnv(t)})
}

// TestInputScripts runs cmd/testdata/script/inputs_*.txtar: every command
// on real-world containers.
func TestInputScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "inputs_"), Setup: inputsEnv(t)})
}
