package cmd

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScanScripts runs cmd/testdata/script/scan_*.txtar, with $CORPUS the
// scan corpus (testdata/scan/corpus), $FIXTURES testdata/fixtures and
// $INPUTS testdata/inputs.
func TestScanScripts(t *testing.T) {
	corpus, err := filepath.Abs("../testdata/scan/corpus")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Abs("../testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	inputs := inputsEnv(t)
	testscript.Run(t, testscript.Params{Files: globScripts(t, "scan_"), Setup: func(e *testscript.Env) error {
		e.Setenv("CORPUS", corpus)
		e.Setenv("FIXTURES", fixtures)
		return inputs(e)
	}})
}
