package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// TestFullOutput: a run whose standard output cannot be written (a full
// disk: /dev/full) exits 2 with one line naming the write error, in every
// command. Until session 29 pk hash and pk scan exited 0 without a word,
// pk canon -l and pk diff 1, and the whole tree blamed the input.
func TestFullOutput(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	a := "../testdata/fixtures/cloudpickle/big_global_cp210_py311.pkl" // (not canonical)
	b := "../testdata/fixtures/cloudpickle/big_global_cp220_py311deb.pkl"
	for _, args := range [][]string{
		{"hash", a}, {"hash", "--json", a}, {"scan", a}, {"dis", a}, {"trace", a},
		{"trace", "--lines", "0", a}, {"trace", "--top", "5", a}, {"canon", "-l", a}, {"diff", a, b},
	} {
		c := exec.Command(pk, args...)
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = full, &stderr
		err := c.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitTrouble || stderr.String() != "pk: write /dev/stdout: no space left on device\n" {
			t.Errorf("pk %q > /dev/full: %v, stderr %q; want exit %d and the write error", args, err, stderr.String(), ExitTrouble)
		}
	}
}
