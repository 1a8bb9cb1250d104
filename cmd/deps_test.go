package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinkedPackages: pk reads and writes files; its binary links no code
// that serves or fetches over a network, starts a process or renders man
// pages, so that no dependency adds such a path (or megabytes resident at
// every start) unnoticed. schollz/progressbar added an HTTP server in
// v3.18, so go.mod keeps v3.15.0; the man pages are cmd/genman's.
func TestLinkedPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	c := exec.Command(goTool, "list", "-deps", "github.com/pk-tools/pk")
	c.Dir = ".."
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	if !linked["github.com/pk-tools/pk/pkg/pickle"] {
		t.Fatalf("go list -deps lists no pkg/pickle: %q", out)
	}
	for _, p := range []string{"net/http", "crypto/tls", "os/exec", "plugin", "github.com/spf13/cobra/doc"} {
		if linked[p] {
			t.Errorf("pk links %s", p)
		}
	}
}
