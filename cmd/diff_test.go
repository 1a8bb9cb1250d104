package cmd

import (
	"encoding/binary"
	"os"
	"strconv"

	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestDiffScripts runs cmd/testdata/script/diff_*.txtar.
func TestDiffScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Files: globScripts(t, "diff_"), Setup: inputsEnv(t), Cmds: diffCmds})
}

// diffCmds make the large pickles the diff scripts need.
var diffCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// mkbytes FILE N [AT...]: a protocol 4 pickle of one bytes value of N
	// zero bytes, with a 1 at each offset AT
	"mkbytes": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: mkbytes FILE N [AT...]")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		payload := make([]byte, n)
		for _, a := range args[2:] {
			at, err := strconv.Atoi(a)
			ts.Check(err)
			payload[at] = 1
		}
		b := []byte{0x80, 4, 0x8e} // PROTO 4, BINBYTES8
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
		b = append(b, payload...)
		b = append(b, '.')
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	},
}
