package cmd

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestDiffScripts runs cmd/testdata/script/diff_*.txtar.
func TestDiffScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "diff_")})
}
