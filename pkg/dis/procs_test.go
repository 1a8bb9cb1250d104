package dis

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

// procsWriter records GOMAXPROCS at each write.
type procsWriter struct {
	bytes.Buffer
	procs []int
}

func (w *procsWriter) Write(p []byte) (int, error) {
	w.procs = append(w.procs, runtime.GOMAXPROCS(0))
	return w.Buffer.Write(p)
}

// TestRunOneCPU: Run disassembles on one CPU (the collector's work on the
// other cost more than it saved: docs/cost.md, session 43) and sets
// GOMAXPROCS back when it returns, also on an error.
func TestRunOneCPU(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: Run leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, in := range []string{"\x80\x04N.", "\x80\x04]\x94(K\x01K\x02e.", "\x80\x04(\xff"} {
		w := &procsWriter{}
		Run(w, strings.NewReader(in), int64(len(in)), "t.pkl", Options{})
		if len(w.procs) == 0 {
			t.Fatalf("%q: nothing written", in)
		}
		for _, n := range w.procs {
			if n != 1 {
				t.Fatalf("%q: GOMAXPROCS %d while disassembling, want 1", in, n)
			}
		}
		if n := runtime.GOMAXPROCS(0); n != 4 {
			t.Fatalf("%q: GOMAXPROCS %d after Run, want 4", in, n)
		}
	}
}
