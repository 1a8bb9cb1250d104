//go:build linux

package cmd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCostShapes runs every pk command on every cost shape (legal but costly
// pickles, testdata/costshapes: made by gen.py there, committed gzipped) as a
// subprocess and asserts the bounds of docs/cost.md: per run at most
// costCPU of user+sys CPU (failing past costCPUFail, the target with a
// margin for a loaded machine) and costRSS of peak RSS, exit 0 (1 for diff against
// the changed copy), or, for a shape CPython refuses, exit 2 with a one-line
// error naming the offset; a run over the bounds is run again, and fails
// when it is over again. A run is killed once it has used costKillCPU of
// CPU or costKillRSS of memory (polled from /proc), or after costTimeout of
// wall time (a hang); CPU rather than wall time, because the machine is
// shared and a busy one stretches wall time several times over.
//
// Runs that exceed the bounds today are listed in knownOver and skipped
// without running; PK_COSTSHAPES_ALL=1 runs them too (and logs those now
// within bounds, to be removed from the table). PK_COSTSHAPES_REPORT=FILE
// appends one tab-separated line per run (shape, command, wall, CPU, RSS,
// exit code, status).
//
// pk is the test binary itself, installed in PATH as "pk" by TestMain
// (testscript.Main).
func TestCostShapes(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil || !strings.Contains(pk, "testscript-main") {
		t.Fatalf("pk is not the test binary installed by testscript.Main: %q, %v", pk, err)
	}
	shapes := readCostManifest(t)
	all := os.Getenv("PK_COSTSHAPES_ALL") == "1"
	for _, key := range sortedKeys(knownOver) {
		name, cmd, _ := strings.Cut(key, " ")
		if !hasShape(shapes, strings.TrimSuffix(name, costGz)) || costCommandIndex(cmd) < 0 {
			t.Errorf("knownOver[%q]: no such shape or command", key)
		}
	}
	dir := t.TempDir()
	for i, sh := range shapes {
		// each shape as gen.py writes it, then in its compressed form as
		// committed (what a user has on disk: pk decompresses it as it
		// reads), named NAME.pkl.gz in the subtests and in knownOver
		for _, gz := range []bool{false, true} {
			form := sh.Name
			if gz {
				form += costGz
			}
			t.Run(form, func(t *testing.T) {
				t.Parallel()
				if gz && testing.Short() && sh.Name != costShortGz {
					t.Skipf("-short runs the compressed form of %s only (make test-full runs all)", costShortGz)
				}
				var files costFiles
				if gz {
					files = sh.compressed(t, dir)
				} else {
					files = sh.materialise(t, dir)
				}
				sh.runCommands(t, pk, i, form, gz, files, all)
			})
		}
	}
}

// costGz names the compressed form of a shape (its file as committed,
// gzip), and costShortGz the one shape whose compressed form -short runs
// through every command: a million pickles of None in 2 KB, the form that
// held a store per stream in every command through input.Open (session 35:
// 0.6-1.9 GB).
const (
	costGz      = ".pkl.gz"
	costShortGz = "streams_none"
)

// runCommands runs every command of costCommands on files, the shape sh in
// form form (its name, or NAME.pkl.gz for the compressed one: gz), and
// checks the bounds; i is the shape's index (-short runs every
// costShortEvery-th command of a bare form).
func (sh costShape) runCommands(t *testing.T, pk string, i int, form string, gz bool, files costFiles, all bool) {
	for j, c := range costCommands {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			if testing.Short() && !gz && (i+j)%costShortEvery != 0 {
				t.Skipf("-short runs every %dth command of a shape (make test-full runs all)", costShortEvery)
			}
			key := form + " " + c.name
			reason, over := knownOver[key]
			if over && !all {
				t.Skipf("known over the bounds: %s (PK_COSTSHAPES_ALL=1 runs it)", reason)
			}
			args := c.args(files)
			if args == nil {
				t.Skip("no changed copy of this shape (CPython refuses it, or gen.py found no change)")
			}
			costAlone.RLock()
			r := runCost(t, pk, args)
			costAlone.RUnlock()
			status := sh.check(r, c.name)
			for try := 1; status != "" && !over && try < costTries; try++ {
				// Peak RSS varies by up to a third between runs (when
				// the collector runs: later on a loaded machine, so
				// the heap overshoots more), CPU time with the
				// machine's load: a run over the bounds fails when it
				// is over costTries times in a row. Its runs again
				// are alone among the cost runs (costAlone).
				t.Logf("%s: %s; running it again", r, status)
				costAlone.Lock()
				r = runCost(t, pk, args)
				costAlone.Unlock()
				status = sh.check(r, c.name)
			}
			costReport(form, c.name, r, status)
			t.Logf("%s: %s", key, r)
			switch {
			case over && status == "":
				t.Logf("now within bounds: remove %q from knownOver (was: %s)", key, reason)
			case over:
				t.Logf("still over: %s (knownOver: %s)", status, reason)
			case status != "":
				t.Errorf("pk %s: %s\n%s", strings.Join(args, " "), status, r.stderrTail())
			case r.cpu > costCPU:
				t.Logf("%s: CPU %.2fs over the %v target, within the test's margin (%v)", key, r.cpu.Seconds(), costCPU, costCPUFail)
			}
		})
	}
}

// The bounds (docs/cost.md), and when a run is stopped. Under -short (make
// test) each shape runs every costShortEvery-th command, in turn, so that
// every command meets an eighth of the shapes; make test-full (CI) runs all.
const (
	costShortEvery = 8
	// costTries: the runs a command gets before it fails (the least of
	// them counts). Two were not enough on the CI machine of session 12,
	// loaded by the other packages' tests: cycle_dict's trace --top 20 read
	// 283 and 280 MB there, 214-286 MB on a quiet machine.
	costTries = 3

	costCPU = 5 * time.Second
	// costCPUFail: the CPU past which a run fails the test, the target
	// (costCPU) with the margin issue 10 asks of this test ("CPU time with
	// a generous margin"): the same run's CPU time differs by up to 1.9x
	// between this machine and the CI machine on another day, with nothing
	// beside it (nest_reduce diff changed: 3.8-3.9 s in this test here in
	// session 44, 6.95-7.12 s alone among the cost runs in stop 50's CI;
	// its .pkl.gz form 6.4-7.5 s in stop 49's), and by up to half with what
	// runs beside it (6.6 s at a load of 12). A quarter (6.25 s) failed two
	// CIs in a row on runs that meet the target here; half still fails a
	// run that doubles. A run between the two is logged as over the
	// target; scripts/bench.d/costshapes.sh reports against the target
	// itself.
	costCPUFail = costCPU * 3 / 2
	costRSS     = 256 << 20
	costKillCPU = 10 * time.Second
	costKillRSS = 2 << 30
	costTimeout = 60 * time.Second
)

// costCommands are run on every shape. files: the shape, and its changed
// copy ("" when there is none).
var costCommands = []struct {
	name string
	args func(f costFiles) []string
}{
	{"dis", func(f costFiles) []string { return []string{"dis", f.shape} }},
	{"hash", func(f costFiles) []string { return []string{"hash", f.shape} }},
	{"trace", func(f costFiles) []string { return []string{"trace", "--color=never", f.shape} }},
	{"trace --top 20", func(f costFiles) []string { return []string{"trace", "--top", "20", f.shape} }},
	// the whole-file outputs (issue 10's third target): the whole tree and
	// a picture, to /dev/null (stdout is discarded anyway)
	{"trace --lines 0", func(f costFiles) []string { return []string{"trace", "--lines", "0", "--color=never", f.shape} }},
	{"trace --svg", func(f costFiles) []string { return []string{"trace", "--svg", os.DevNull, f.shape} }},
	{"scan", func(f costFiles) []string { return []string{"scan", f.shape} }},
	// the canonical pickle to stdout (drained and counted)
	{"canon", func(f costFiles) []string { return []string{"canon", f.shape} }},
	{"diff same", func(f costFiles) []string { return []string{"diff", "--color=never", f.shape, f.shape} }},
	{"diff changed", func(f costFiles) []string {
		if f.changed == "" {
			return nil
		}
		return []string{"diff", "--color=never", f.shape, f.changed}
	}},
}

// knownOver: the runs over the bounds today, "shape command" -> what was
// measured. Session 14 measured every entry again with PK_COSTSHAPES_ALL=1
// (the run that counts: one run each, shapes two at a time on the 2-CPU
// machine, at a load of 2-3), for the first time with pk's own peak RSS
// (runCost's wrapper: until then every figure was at least the test
// process's own peak, 100-280 MB). A few are under the bounds but within a
// tenth of them, where RSS varies enough between runs to make the test
// flaky (or, for CPU, a loaded machine). Session 17 gave the entries its
// changes touched their figures from two such runs (ranges where they
// differed). Session 19 measured the entries one at a time with the
// binary of its merged changes (/usr/bin/time on the full-size shapes, the
// machine shared with CI) and removed the 20 that were within the bounds
// by a tenth in three runs; the figures of those it kept say "session 19".
// Session 20 did the same and removed 4 (docs/cost.md, Measured); the
// kept entries keep their session 19 figures, and docs/cost.md lists
// session 20's. Remove an entry when the engine
// gets fixed:
// PK_COSTSHAPES_ALL=1 go test ./cmd -run TestCostShapes -v | grep 'now within'
// lists those (docs/cost.md).
var knownOver = map[string]string{
	// pk diff against the changed copy: two whole stores of all-live inputs and their fingerprint tables, live
	// through the walk (session 26: what each holds, and what the walk reads of it, in the figures below).
	// Session 39: nest_reduce diff changed and its .pkl.gz form left the table: 4.28 and 4.39 s of CPU, 245 and
	// 244 MB here with PK_COSTSHAPES_ALL=1 (quiet; 4.5-4.7 s by /usr/bin/time, 242-246 MB), over on CPU only when
	// the test ran beside pkg/write's tests (6.6 s in session 33), which make test-full no longer does; its text
	// report (a 20 MB path) is no longer copied through fmt (about 0.2 s).
	"nest_newobj_build diff changed": "session 33: its walk does not spill (walkBytes 343 MiB, past pkg/diff's spillUpTo): spilled it was 347-369 MB by /usr/bin/time (350 in this test, load 12) against 406-415 MB, still over, for 1-1.5 s more CPU; the two stores without sides are still about 240 MB. Session 31: 413-421 MB (400-408 before): pk diff's sums now read a lean store (16-byte records, no Self or owners), which the walk cannot size entries from, so B is read again for the walk; a build whose sums were not lean gave 412 MB, and where the rest comes from is not found. Session 29: 396-411 MB with side records of 16 bytes and operations of 20 (144 bytes a level a side). Session 28: 4.4-5.1 s CPU, 415-418 MB. One side alone (its store, view and fingerprint table, no walk) is 220-222 MB peak RSS (210 MB live: records 93 of which 72 used, operations 24, items 21, log 21, side records 20, fingerprints 26): one store at a time does not reach 230 MB, even with only the other side's fingerprints beside it (247 MB); it needs a lighter store or no store at the walk (session 26: 4.4-4.8 s, 409-417 MB; the walk reads 4 nodes a side)",
	// The compressed forms (NAME.pkl.gz, the files as committed). Session 36: pk dis, trace and diff read a
	// compressed bare pickle through a decompressed copy in a temporary file (input.SpoolDecompressed) with
	// their paths for bare files, and 30 entries went (PK_COSTSHAPES_ALL=1 at a load of 20: every run of
	// dis, trace and diff of those shapes within the bounds, e.g. streams_none.pkl.gz trace 1.9 GB -> 14 MB,
	// table_dicts_lists.pkl.gz dis 345 -> 31 MB, setitem_call.pkl.gz diff changed 268 -> 207 MB); what is left
	// (session 38: pk canon reads a compressed bare pickle through that copy too, and a file's streams share
	// their views' scratches: stack_globals_discarded.pkl.gz canon 3.9 -> 2.6 s of CPU, streams_dicts.pkl.gz
	// canon 3.9-4.3 -> 2.8-3.0 s, at a load of 10, and the two left the table; session 39: nest_reduce.pkl.gz
	// diff changed, above):
	"nest_newobj_build.pkl.gz diff changed": "session 36: 401 MB, 8.9 s CPU at a load of 20 (PK_COSTSHAPES_ALL=1), now through the paths for bare files: as the bare form (above)",
}

// pkAccepts: shapes CPython refuses that pk reads by design (docs/reader.md,
// "Where pk accepts what CPython refuses").
var pkAccepts = map[string]string{
	"memo_sparse": "CPython grows its memo array to twice the largest index; pk keeps sparse indices in a map",
}

type costShape struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	CPython string `json:"cpython"`
	Refusal string `json:"refusal"`
	Streams int    `json:"streams"`
	Change  *struct {
		Offset int    `json:"offset"`
		Remove int    `json:"remove"`
		Insert string `json:"insert"`
	} `json:"change"`
}

type costFiles struct{ shape, changed string }

func readCostManifest(t *testing.T) []costShape {
	t.Helper()
	b, err := os.ReadFile("../testdata/costshapes/shapes/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Shapes []costShape `json:"shapes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Shapes) < 30 {
		t.Fatalf("manifest.json lists %d shapes", len(m.Shapes))
	}
	return m.Shapes
}

// materialise decompresses the shape (and writes its changed copy) into dir.
func (sh costShape) materialise(t *testing.T, dir string) costFiles {
	t.Helper()
	f, err := os.Open(filepath.Join("../testdata/costshapes/shapes", sh.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != sh.Size || hex.EncodeToString(sum[:]) != sh.SHA256 {
		t.Fatalf("%s does not match manifest.json (regenerate: python3 testdata/costshapes/gen.py testdata/costshapes/shapes)", sh.File)
	}
	out := costFiles{shape: filepath.Join(dir, sh.Name+".pkl")}
	if err := os.WriteFile(out.shape, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := sh.Change; c != nil && sh.refused() == "" {
		ins, err := hex.DecodeString(c.Insert)
		if err != nil || c.Offset+c.Remove > len(data) {
			t.Fatalf("manifest.json: bad change %+v", c)
		}
		changed := append(append(append([]byte(nil), data[:c.Offset]...), ins...), data[c.Offset+c.Remove:]...)
		out.changed = filepath.Join(dir, sh.Name+"-changed.pkl")
		if err := os.WriteFile(out.changed, changed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// compressed is the shape's compressed form as committed, and its changed
// copy gzipped into dir (what materialise writes, compressed).
func (sh costShape) compressed(t *testing.T, dir string) costFiles {
	t.Helper()
	sub := filepath.Join(dir, "gz-"+sh.Name) // (the bare form's subtest writes to dir)
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := sh.materialise(t, sub)
	out := costFiles{shape: filepath.Join("../testdata/costshapes/shapes", sh.File)}
	if bare.changed != "" {
		data, err := os.ReadFile(bare.changed)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		z.Write(data)
		z.Close()
		out.changed = bare.changed + ".gz"
		if err := os.WriteFile(out.changed, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(bare.changed)
	}
	os.Remove(bare.shape)
	return out
}

// refused is CPython's refusal when pk must refuse the shape too.
func (sh costShape) refused() string {
	if sh.CPython != "refused" {
		return ""
	}
	if _, ok := pkAccepts[sh.Name]; ok {
		return ""
	}
	return "refused by CPython (" + sh.Refusal + ")"
}

// check says what is wrong with run r of command cmd, "" when nothing is.
func (sh costShape) check(r costRun, cmd string) string {
	var bad []string
	if r.killed {
		bad = append(bad, r.killReason)
	}
	if r.cpu > costCPUFail {
		bad = append(bad, fmt.Sprintf("CPU %.2fs > %v (the %v target and the test's margin)", r.cpu.Seconds(), costCPUFail, costCPU))
	}
	if r.rss > costRSS {
		bad = append(bad, fmt.Sprintf("peak RSS %d MB > %d MB", r.rss>>20, costRSS>>20))
	}
	if !r.killed {
		if why := sh.refused(); why != "" {
			line := strings.TrimSpace(r.stderr.String())
			if cmd == "scan" {
				// the verdict "invalid", with its offset, is the report on
				// stdout (pk scan's own tests check its text)
				line = "offset"
			}
			if r.code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "offset") {
				bad = append(bad, fmt.Sprintf("exit %d: want 2 and a one-line error naming the offset (%s)", r.code, why))
			}
		} else {
			want := 0
			if cmd == "diff changed" {
				want = 1
			}
			if cmd == "scan" && r.code == 1 {
				want = 1 // flagged: the shapes made of calls name globals no policy allows
			}
			if line := strings.TrimSpace(r.stderr.String()); cmd == "canon" && r.code == 2 && !strings.Contains(line, "\n") && strings.Contains(line, ": offset ") {
				want = 2 // a refusal of pk canon (docs/pk-canon.md, What is refused): one line naming the offset
			}
			if r.code != want {
				bad = append(bad, fmt.Sprintf("exit %d, want %d", r.code, want))
			}
		}
	}
	return strings.Join(bad, "; ")
}

type costRun struct {
	wall, cpu  time.Duration
	rss        int64 // bytes
	code       int
	out        int64 // bytes written to stdout
	killed     bool
	killReason string
	stderr     *capped
}

func (r costRun) String() string {
	return fmt.Sprintf("wall %.2fs, CPU %.2fs, peak RSS %d MB, exit %d, %d bytes out", r.wall.Seconds(), r.cpu.Seconds(), r.rss>>20, r.code, r.out)
}

func (r costRun) stderrTail() string {
	s := r.stderr.String()
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// costAlone: a cost run holds it shared, and a run again after one over the
// bounds holds it alone, so that the shapes' parallel runs do not share the
// two processors with it. The CPU time of a process rises with what runs
// beside it (dag_dict_deep diff changed, 5 December 2026: 5.0-5.6 s among
// the parallel runs of a make test-full, where runs of session 32's binary
// and this one, interleaved at a load of 6, took 4.3-4.6 and 3.6-4.7 s); a
// regression over the bound is still over when run alone.
var costAlone sync.RWMutex

// runCost runs pk with args, stdout drained and counted, killed when it has
// used costKillCPU or costKillRSS, or after costTimeout.
//
// pk is started by a wrapper (this test binary again, costWrap), not by the
// test itself: on Linux a child's peak RSS as wait4 reports it is at least
// the peak RSS of the process that started it (exec records the old memory
// map's high-water mark, and Go starts children with vfork, sharing the
// parent's map), so pk started by a test process of 200 MB read as 200 MB
// whatever it used. The wrapper is small (TestCostWrapRSS).
func runCost(t *testing.T, pk string, args []string) costRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), costTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, append([]string{pk}, args...)...)
	out := &counter{}
	r := costRun{stderr: &capped{max: 4096}}
	cmd.Stdout, cmd.Stderr = out, r.stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1", costWrapEnv+"=1")
	cmd.WaitDelay = 2 * time.Second
	rep, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	cmd.ExtraFiles = []*os.File{repW}
	pid := 0 // pk's
	cmd.Cancel = func() error {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return cmd.Process.Kill()
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	repW.Close()
	br := bufio.NewReader(rep)
	if _, err := fmt.Fscanf(br, "pid %d\n", &pid); err != nil {
		cmd.Wait()
		t.Fatalf("pk %s: the wrapper did not start pk (%v): %s", strings.Join(args, " "), err, r.stderr.String())
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() { // the CPU and RSS guard
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				cpu, rss := procUsage(pid)
				why := ""
				if cpu > costKillCPU {
					why = fmt.Sprintf("killed after %v of CPU", costKillCPU)
				} else if rss > costKillRSS {
					why = fmt.Sprintf("killed: RSS passed %d MB", costKillRSS>>20)
				}
				if why != "" {
					mu.Lock()
					r.killed, r.killReason = true, why
					mu.Unlock()
					syscall.Kill(pid, syscall.SIGKILL)
					return
				}
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	r.wall = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil && !r.killed {
		r.killed, r.killReason = true, fmt.Sprintf("killed after %v of wall time (a hang?)", costTimeout)
	}
	var cpuNS, rssKB int64
	if _, serr := fmt.Fscanf(br, "done %d %d %d\n", &r.code, &cpuNS, &rssKB); serr != nil {
		if r.killed {
			r.code = -1
			return r
		}
		t.Fatalf("pk %s: no report from the wrapper (%v, %v): %s", strings.Join(args, " "), err, serr, r.stderr.String())
	}
	r.cpu, r.rss = time.Duration(cpuNS), rssKB<<10 // KB on Linux
	r.out = out.n
	return r
}

// costWrapEnv makes this test binary the wrapper that starts pk for
// runCost (costWrap).
const costWrapEnv = "PK_COSTSHAPES_WRAP"

func init() {
	if os.Getenv(costWrapEnv) == "1" {
		os.Exit(costWrap(os.Args[1:]))
	}
}

// costWrap runs args (pk and its arguments) with this process's stdin,
// stdout and stderr, and reports on file descriptor 3 "pid N" once pk has
// started, then "done EXIT CPU_NS MAXRSS_KB" (exit -1: killed by a signal).
// pk is killed when the wrapper dies.
func costWrap(args []string) int {
	rep := os.NewFile(3, "report")
	if len(args) == 0 || rep == nil {
		return 3
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, costWrapEnv+"=") {
			env = append(env, e)
		}
	}
	runtime.LockOSThread() // Pdeathsig follows the thread that started pk
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr, c.Env = os.Stdin, os.Stdout, os.Stderr, env
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Fprintf(rep, "pid %d\n", c.Process.Pid)
	c.Wait()
	ps := c.ProcessState
	var rss int64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	fmt.Fprintf(rep, "done %d %d %d\n", ps.ExitCode(), int64(ps.UserTime()+ps.SystemTime()), rss)
	return 0
}

// procUsage is the user+sys CPU and resident set of process pid, from
// /proc/pid/stat (zero when unknown).
func procUsage(pid int) (time.Duration, int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid ...: fields after the comm's closing parenthesis,
	// utime and stime are the 12th and 13th, rss the 22nd.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return 0, 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	const clkTck = 100 // USER_HZ, 100 on every Linux
	return time.Duration(ut+st) * time.Second / clkTck, rss * int64(os.Getpagesize())
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// capped keeps the first max bytes written.
type capped struct {
	max int
	bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var costReportMu sync.Mutex

func costReport(shape, cmd string, r costRun, status string) {
	path := os.Getenv("PK_COSTSHAPES_REPORT")
	if path == "" {
		return
	}
	costReportMu.Lock()
	defer costReportMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if status == "" {
		status = "ok"
	}
	fmt.Fprintf(f, "%s\t%s\t%.2f\t%.2f\t%d\t%d\t%s\n", shape, cmd, r.wall.Seconds(), r.cpu.Seconds(), r.rss>>20, r.code, status)
}

func hasShape(shapes []costShape, name string) bool {
	for _, s := range shapes {
		if s.Name == name {
			return true
		}
	}
	return false
}

func costCommandIndex(name string) int {
	for i, c := range costCommands {
		if c.name == name {
			return i
		}
	}
	return -1
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// TestCostWrapRSS: the peak RSS runCost reports is pk's own, not that of
// the process that started it (the test process, here grown past 256 MB).
func TestCostWrapRSS(t *testing.T) {
	pk, err := exec.LookPath("pk")
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	r := runCost(t, pk, []string{"dis", "../testdata/fixtures/stdlib/batch_p4_c_py311.pkl"})
	if r.code != 0 || r.killed {
		t.Fatalf("pk dis: %v: %s", r, r.stderrTail())
	}
	if r.rss <= 0 || r.rss > 64<<20 {
		t.Errorf("pk dis of a small file: peak RSS %d MB; the test process holds %d MB", r.rss>>20, len(big)>>20)
	}
	runtime.KeepAlive(big)
}
