package cmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a terminal stand-in: the bar's ticker writes from its own
// goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeTerminal makes every writer a terminal and the delay short.
func fakeTerminal(t *testing.T, delay time.Duration) {
	t.Helper()
	tty, d := progressTTY, progressDelay
	progressTTY = func(io.Writer) bool { return true }
	progressDelay = delay
	t.Setenv("PK_NO_PROGRESS", "")
	t.Cleanup(func() { progressTTY, progressDelay = tty, d })
}

func TestProgressNotATerminal(t *testing.T) {
	t.Setenv("PK_NO_PROGRESS", "")
	var buf syncBuffer
	p := newProgress(&buf, false, "pk hash", 10, unitFiles)
	if p != nil {
		t.Fatal("a bar on a writer that is not a terminal")
	}
	p.Add(3) // a nil bar does nothing
	if w := p.Writer(&buf); w != io.Writer(&buf) {
		t.Error("a nil bar wraps the writer")
	}
	p.Done()
	if buf.String() != "" {
		t.Errorf("wrote %q", buf.String())
	}
	if newProgress(os.Stderr, false, "x", 1, unitFiles) != nil && !IsTerminal(os.Stderr) {
		t.Error("a bar on the tests' stderr, which is not a terminal")
	}
}

func TestProgressShortRunDrawsNothing(t *testing.T) {
	fakeTerminal(t, 300*time.Millisecond)
	var buf syncBuffer
	p := newProgress(&buf, false, "pk hash", 10, unitFiles)
	if p == nil {
		t.Fatal("no bar on a terminal")
	}
	p.Add(10)
	out := p.Writer(&buf)
	io.WriteString(out, "digest  name\n")
	p.Done()
	time.Sleep(400 * time.Millisecond) // past the delay: the timer was stopped
	if got := buf.String(); got != "digest  name\n" {
		t.Errorf("a run shorter than the delay wrote %q", got)
	}
}

func TestProgressAfterDelay(t *testing.T) {
	fakeTerminal(t, 200*time.Millisecond)
	var buf syncBuffer
	p := newProgress(&buf, false, "pk hash", 10, unitFiles)
	p.Add(3)
	if got := buf.String(); got != "" {
		t.Fatalf("drawn before the delay: %q", got)
	}
	time.Sleep(400 * time.Millisecond)
	got := buf.String()
	if !strings.Contains(got, "pk hash") || !strings.Contains(got, "3/10") {
		t.Fatalf("after the delay: %q, want the description and 3/10", got)
	}
	// output through the bar's writer erases the bar first
	io.WriteString(p.Writer(&buf), "line\n")
	if got := buf.String(); !strings.HasSuffix(got, "\r\x1b[2Kline\n") {
		t.Errorf("output not after an erase: %q", got)
	}
	p.Done()
	end := buf.String()
	if !strings.HasSuffix(end, "\r\x1b[2K") && !strings.HasSuffix(end, "\r") {
		t.Errorf("the bar not erased at the end: %q", end)
	}
	time.Sleep(150 * time.Millisecond)
	if buf.String() != end {
		t.Errorf("drawn after Done: %q", buf.String()[len(end):])
	}
}

func TestProgressSpinnerAndBytes(t *testing.T) {
	fakeTerminal(t, 150*time.Millisecond)
	var buf syncBuffer
	p := newProgress(&buf, false, "pk trace big.pkl", -1, unitFiles)
	// no Add at all: the spinner draws itself (waited for, not slept on: on
	// a loaded machine the bar's timer may fire late)
	drawn := eventually(func() bool { return strings.Contains(buf.String(), "pk trace big.pkl") })
	p.Done()
	if !drawn {
		t.Errorf("spinner: %q", buf.String())
	}

	var buf2 syncBuffer
	p = newProgress(&buf2, false, "pk dis f", 4<<20, unitBytes)
	n, _ := io.Copy(io.Discard, p.Reader(bytes.NewReader(make([]byte, 2<<20))))
	if n != 2<<20 {
		t.Fatal(n)
	}
	drawn = eventually(func() bool {
		p.Add(0) // (a redraw, with the rate)
		got := buf2.String()
		return strings.Contains(got, "pk dis f") && strings.Contains(got, "B/s")
	})
	p.Done()
	if !drawn {
		t.Errorf("bytes bar: %q", buf2.String())
	}
}

// eventually polls cond every 20 ms for up to 10 s and reports whether it
// held.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestProgressOff(t *testing.T) {
	fakeTerminal(t, time.Millisecond)
	if newProgress(&syncBuffer{}, true, "x", 1, unitFiles) != nil {
		t.Error("a bar with --no-progress")
	}
	t.Setenv("PK_NO_PROGRESS", "1")
	if newProgress(&syncBuffer{}, false, "x", 1, unitFiles) != nil {
		t.Error("a bar with PK_NO_PROGRESS=1")
	}
	t.Setenv("PK_NO_PROGRESS", "0")
	if p := newProgress(&syncBuffer{}, false, "x", 1, unitFiles); p == nil {
		t.Error("no bar with PK_NO_PROGRESS=0")
	} else {
		p.Done()
	}
}

// TestProgressCommandsQuiet: the commands, run with a stderr that is not a
// terminal, write on stderr exactly what they wrote before the bar existed.
func TestProgressCommandsQuiet(t *testing.T) {
	t.Setenv("PK_NO_PROGRESS", "")
	dir := t.TempDir()
	for _, n := range []string{"a.pkl", "b.pkl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("\x80\x04K\x01."), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	errPath := filepath.Join(t.TempDir(), "stderr")
	for _, args := range [][]string{
		{"pk", "hash", "-r", dir},
		{"pk", "hash", filepath.Join(dir, "a.pkl")},
		{"pk", "scan", "-r", dir},
		{"pk", "trace", filepath.Join(dir, "a.pkl")},
		{"pk", "dis", filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")},
	} {
		ef, err := os.Create(errPath)
		if err != nil {
			t.Fatal(err)
		}
		oldErr, oldOut := os.Stderr, os.Stdout
		os.Stderr, os.Stdout = ef, devNull(t)
		code := Main(args)
		os.Stderr, os.Stdout = oldErr, oldOut
		ef.Close()
		b, _ := os.ReadFile(errPath)
		if code != 0 || len(b) != 0 {
			t.Errorf("%v: exit %d, stderr %q", args[1:], code, b)
		}
	}
}

func devNull(t *testing.T) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
