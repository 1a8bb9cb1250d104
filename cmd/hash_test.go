package cmd

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run pk (and its pkhash alias) in-process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pk":      func() { os.Exit(Main(os.Args)) },
		"pkhash":  func() { os.Exit(Main(os.Args)) },
		"pkdiff":  func() { os.Exit(Main(os.Args)) },
		"pktrace": func() { os.Exit(Main(os.Args)) },
	})
}

// TestHashScripts runs cmd/testdata/script/hash_*.txtar.
func TestHashScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "hash_")})
}

func globScripts(t *testing.T, prefix string) []string {
	ents, err := os.ReadDir("testdata/script")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if len(e.Name()) > len(prefix) && e.Name()[:len(prefix)] == prefix {
			out = append(out, "testdata/script/"+e.Name())
		}
	}
	return out
}
