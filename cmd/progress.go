package cmd

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress is shown in one place, for every command alike: a bar on
// standard error drawn by schollz/progressbar, only when standard error is
// a terminal (and TERM is not "dumb"), only for a run that lasts longer
// than progressDelay, never with --no-progress or PK_NO_PROGRESS set to
// anything but "" or "0". It is erased when the run ends, so a terminal
// holds only the command's own output and messages afterwards.
//
// What the bar counts follows from where the input is read:
//
//   - several inputs (pk hash and pk scan with several FILEs or -r): files
//     done out of files listed;
//   - pk dis of a plain pickle: bytes of the input read (cmd hands pkg/dis
//     the reader, which is wrapped);
//   - one input that pkg opens by its path (pk hash FILE, pk scan FILE,
//     pk trace, pk dis of a container): a spinner with the time elapsed,
//     since no byte count leaves pkg; a bar of bytes there would need a
//     hook in pkg/canon, pkg/trace and pkg/input.
var (
	progressDelay = time.Second
	// progressTTY says whether w is a terminal that a bar may be drawn on;
	// tests replace it.
	progressTTY = func(w io.Writer) bool { return IsTerminal(w) && os.Getenv("TERM") != "dumb" }
)

const progressUsage = "no progress bar on stderr (also PK_NO_PROGRESS=1; a bar is drawn only on a terminal, for runs over a second)"

// progress is a bar that stays invisible until progressDelay has passed.
// A nil *progress is valid and does nothing, so callers need no checks.
type progress struct {
	bar   *progressbar.ProgressBar
	gate  *progressGate
	timer *time.Timer
	mu    sync.Mutex
	done  bool
}

// progressGate passes the bar's writes to the terminal once it is open
// (progressDelay after the start), drops them before and after the end.
type progressGate struct {
	mu    sync.Mutex
	w     io.Writer
	open  bool
	shut  bool
	drawn bool // something was drawn since the last clear
}

func (g *progressGate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.open || g.shut {
		return len(p), nil
	}
	g.drawn = true
	return g.w.Write(p)
}

// progressUnits: what a bar counts.
type progressUnits int

const (
	unitFiles progressUnits = iota
	unitBytes
)

// progressWanted reports whether a bar may be drawn on w.
func progressWanted(w io.Writer, off bool) bool {
	if off {
		return false
	}
	if v := os.Getenv("PK_NO_PROGRESS"); v != "" && v != "0" {
		return false
	}
	return progressTTY(w)
}

// newProgress starts a bar on w of total units (total < 0: unknown, a
// spinner), or returns nil when no bar is wanted there.
func newProgress(w io.Writer, off bool, desc string, total int64, units progressUnits) *progress {
	if !progressWanted(w, off) {
		return nil
	}
	g := &progressGate{w: w}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(g),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetElapsedTime(true),
	}
	switch {
	case units == unitBytes:
		opts = append(opts, progressbar.OptionShowBytes(true))
	case total >= 0:
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionSetItsString("files"), progressbar.OptionShowIts())
	}
	if total < 0 {
		total = -1
		opts = append(opts, progressbar.OptionSpinnerType(14))
	}
	p := &progress{bar: progressbar.NewOptions64(total, opts...), gate: g}
	p.bar.RenderBlank() // starts the clock (and a spinner's ticker); the gate is still shut
	p.timer = time.AfterFunc(progressDelay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.done {
			return
		}
		g.mu.Lock()
		g.open = true
		g.mu.Unlock()
		p.bar.RenderBlank() // draw now, not at the next step
	})
	return p
}

// Add counts n more units done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.bar.Add64(n)
}

// Reader returns r, whose reads advance the bar by the bytes read.
func (p *progress) Reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &progressReader{r: r, p: p}
}

type progressReader struct {
	r io.Reader
	p *progress
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if n > 0 {
		pr.p.Add(int64(n))
	}
	return n, err
}

// Writer returns w, on which each write first erases the bar, so that
// output and messages on the same terminal never land after the bar's
// text; the bar is drawn again below them at its next step.
func (p *progress) Writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return &progressWriter{w: w, g: p.gate}
}

type progressWriter struct {
	w io.Writer
	g *progressGate
}

func (pw *progressWriter) Write(b []byte) (int, error) {
	pw.g.mu.Lock()
	defer pw.g.mu.Unlock()
	if pw.g.drawn && !pw.g.shut {
		io.WriteString(pw.g.w, "\r\x1b[2K")
		pw.g.drawn = false
	}
	return pw.w.Write(b)
}

// Done erases the bar (if it was drawn) and stops it for good.
func (p *progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	p.timer.Stop()
	p.bar.Finish() // with OptionClearOnFinish: erases what was drawn
	p.gate.mu.Lock()
	if p.gate.drawn {
		io.WriteString(p.gate.w, "\r\x1b[2K")
	}
	p.gate.shut = true
	p.gate.mu.Unlock()
}

// newFilesProgress is the bar of a run over names: files done out of
// len(names), or a spinner naming the input when there is one.
func newFilesProgress(w io.Writer, off bool, desc string, names []string) *progress {
	if len(names) == 1 {
		return newProgress(w, off, desc+" "+names[0], -1, unitFiles)
	}
	return newProgress(w, off, desc, int64(len(names)), unitFiles)
}
