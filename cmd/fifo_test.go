package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipes: every command reads an input named by the path of a FIFO
// (mkfifo; a pipe's /dev/fd/N alike) once, as it reads stdin, and says what
// it says of the file with the same bytes. A FIFO opened and closed to look
// at it loses its writer, and the next open waits for another forever: in
// session 40 pk canon and pk diff hung so (opened five times, the others
// four, by the paths that peek at a file), and pk diff called two pipes of
// different bytes "identical" (it compared them again, both empty by then).
func TestNamedPipes(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "probe"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	a := "../testdata/fixtures/cloudpickle/closure_cp210_py311.pkl" // (not canonical)
	b := "../testdata/fixtures/cloudpickle/lambda_cp210_py311.pkl"  // (another pickle)
	x, y := "../testdata/fixtures/stdlib/"+"batch_p4_c_py311.pkl", "../testdata/fixtures/stdlib/"+"batch_p4_py_py311.pkl"
	gz := "../testdata/fixtures/compressed/" + firstGz(t, "../testdata/fixtures/compressed")
	// a joblib file: its arrays' bytes inside the pickle stream, which the
	// copy of a pipe takes for a failing pickle (input.CopyOnce) and the
	// opener reads
	jl := "../testdata/arrays/dict_of_arrays.joblib"
	n := 0
	// fifo makes a FIFO and writes file's bytes into it once, for one reader
	fifo := func(file string) string {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n++
		p := filepath.Join(dir, "in"+strings.Repeat("x", n)+filepath.Ext(file))
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			w, err := os.OpenFile(p, os.O_WRONLY, 0) // (waits for the reader)
			if err != nil {
				return
			}
			w.Write(data) // (EPIPE when the reader left early: the run then waits, and times out)
			w.Close()
		}()
		return p
	}
	run := func(args ...string) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, pk, args...)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		if ctx.Err() != nil {
			t.Errorf("pk %q: still running after 20 s (a FIFO opened twice?)", args)
			return "", "", -1
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), errb.String(), code
	}
	for _, tc := range []struct {
		args []string
		pipe []int // which args are read through a FIFO
	}{
		{[]string{"hash", a}, []int{1}},
		{[]string{"hash", "--json", gz}, []int{2}},
		{[]string{"trace", a}, []int{1}},
		{[]string{"trace", "--top", "5", a}, []int{3}},
		{[]string{"dis", a}, []int{1}},
		{[]string{"scan", a}, []int{1}},
		{[]string{"canon", a}, []int{1}},
		{[]string{"canon", gz}, []int{1}},
		{[]string{"canon", "-l", a}, []int{2}},
		{[]string{"canon", jl}, []int{1}},
		{[]string{"hash", jl}, []int{1}},
		{[]string{"diff", a, b}, []int{1}},
		{[]string{"diff", a, b}, []int{2}},
		{[]string{"diff", a, b}, []int{1, 2}},
		{[]string{"diff", gz, a}, []int{1}},
		{[]string{"diff", x, y}, []int{2}},
		{[]string{"diff", x, y}, []int{1, 2}},
	} {
		wantOut, wantErr, wantCode := run(tc.args...)
		args := append([]string(nil), tc.args...)
		for _, i := range tc.pipe {
			args[i] = fifo(tc.args[i])
		}
		out, errs, code := run(args...)
		if code < 0 {
			continue
		}
		// (the names differ: the FIFO's path where the file's was)
		for _, i := range tc.pipe {
			out, errs = strings.ReplaceAll(out, args[i], tc.args[i]), strings.ReplaceAll(errs, args[i], tc.args[i])
		}
		if tc.args[0] == "diff" && code == 0 && wantCode == 0 {
			// a pipe's bytes are not kept to compare: the same pickle,
			// never "identical" nor "differ in bytes"
			if !strings.HasPrefix(out, tc.args[1]+" and "+tc.args[2]+" are the same pickle (") {
				t.Errorf("pk %q through a FIFO: %q; want \"A and B are the same pickle (digest)\"", tc.args, clip(out))
			}
			out, wantOut = "", ""
		}
		if out != wantOut || errs != wantErr || code != wantCode {
			t.Errorf("pk %q through a FIFO: exit %d, stdout %q, stderr %q; the file gives exit %d, %q, %q",
				tc.args, code, clip(out), errs, wantCode, clip(wantOut), wantErr)
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// firstGz names the first .gz file under dir.
func firstGz(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pkl.gz") {
			return e.Name()
		}
	}
	t.Skip("no .pkl.gz fixture")
	return ""
}

// TestEndlessStdin: standard input or a pipe whose first bytes are no
// pickle is refused at once by the commands that copy it to read it twice
// (pk hash spools it, pk canon keeps it in memory; input.CopyOnce), even
// when it never ends. In session 40 `pk canon - < /dev/zero` grew without
// end and `pk hash - < /dev/zero` spooled 4 GiB before its error. The pipe
// here gives 32 MiB and then nothing, without closing: a copy that waits
// for its end waits until the time limit.
func TestEndlessStdin(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	out := filepath.Join(t.TempDir(), "out.pkl")
	for _, tc := range []struct {
		args []string
		fill []byte // what the pipe repeats
		want string // stderr
	}{
		{[]string{"hash", "-"}, []byte{0}, `pk: -: not a pickle: offset 0: invalid opcode byte 0x00 (invalid load key '\x00')` + "\n"},
		{[]string{"canon", "-o", out, "-"}, []byte{0}, `pk: -: not a pickle: offset 0: invalid opcode byte 0x00 (invalid load key '\x00')` + "\n"},
		{[]string{"canon", "-l", "-"}, []byte("all work and no play\n"), `pk: -: not a pickle: looks like text (first line "all work and no play"); read as a pickle it fails at offset 0: APPEND: unpickling stack underflow` + "\n"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			chunk := bytes.Repeat(tc.fill, (64<<10)/len(tc.fill))
			for n := 0; n < 32<<20; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := exec.CommandContext(ctx, pk, tc.args...)
		var stdout, stderr bytes.Buffer
		c.Stdin, c.Stdout, c.Stderr = r, &stdout, &stderr
		err = c.Run()
		timedOut := ctx.Err() != nil
		cancel()
		r.Close()
		w.Close()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		switch {
		case timedOut:
			t.Errorf("pk %q: still running after 20 s (copying stdin to its end first?)", tc.args)
		case code != 2 || stderr.String() != tc.want || stdout.Len() != 0:
			t.Errorf("pk %q: exit %d, stdout %q, stderr %q; want exit 2, %q", tc.args, code, clip(stdout.String()), stderr.String(), tc.want)
		}
	}
}
