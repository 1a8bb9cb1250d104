package cmd

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCanonScripts runs cmd/testdata/script/canon_*.txtar: pk canon.
func TestCanonScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "canon_"), Setup: inputsEnv(t), Cmds: fileCmds})
}
