package cmd

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestDisScripts runs cmd/testdata/script/dis_*.txtar.
func TestDisScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "dis_"), Setup: inputsEnv(t)})
}
