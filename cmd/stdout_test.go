package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// TestCanonOutputThroughLinks: pk canon -o names its own standard output or
// a file descriptor through /dev or /proc; it writes through the name and
// never renames a file over it. In session 30 `pk canon -o /dev/stdout`,
// run with its standard output a file whose directory had been removed,
// replaced the machine's /dev/stdout link with a regular file; and an
// output opened to append (`>>`) lost what it held.
func TestCanonOutputThroughLinks(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil {
		t.Skip("no pk in PATH (TestMain installs the test binary as pk)")
	}
	if _, err := os.Readlink("/proc/self/fd/1"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	in := "../testdata/fixtures/cloudpickle/big_global_cp210_py311.pkl" // (not canonical)
	want, err := exec.Command(pk, "canon", in).Output()
	if err != nil || len(want) == 0 {
		t.Fatalf("pk canon %s: %v", in, err)
	}
	dir := t.TempDir()
	run := func(stdout *os.File, out string) {
		t.Helper()
		c := exec.Command(pk, "canon", "-o", out, in)
		var stderr bytes.Buffer
		c.Stdout, c.Stderr = stdout, &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("pk canon -o %s: %v, %s", out, err, stderr.String())
		}
	}
	contents := func(f *os.File) []byte {
		t.Helper()
		b, err := os.ReadFile(f.Name())
		if err != nil {
			// (a removed file: read through its descriptor)
			b = make([]byte, 1<<20)
			n, _ := f.ReadAt(b, 0)
			b = b[:n]
		}
		return b
	}

	// standard output opened to append, named by /dev/stdout
	name := filepath.Join(dir, "appended")
	if err := os.WriteFile(name, []byte("head\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	run(f, "/dev/stdout")
	f.Close()
	if got, _ := os.ReadFile(name); !bytes.Equal(got, append([]byte("head\n"), want...)) {
		t.Errorf("-o /dev/stdout >> file: the file holds %d bytes, want head and the %d of the output", len(got), len(want))
	}

	// standard output a file no name reaches, named by a link of ours to
	// /proc/self/fd/1 (as /dev/stdout is)
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/1", link); err != nil {
		t.Fatal(err)
	}
	g, err := os.CreateTemp(dir, "gone")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	os.Remove(g.Name())
	run(g, link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o %s (a link to /proc/self/fd/1): the link was replaced (%v, %v)", link, fi.Mode(), err)
	}
	if got := contents(g); !bytes.Equal(got, want) {
		t.Errorf("-o %s: standard output holds %d bytes, want the %d of the output", link, len(got), len(want))
	}
}
