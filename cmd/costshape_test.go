//go:build linux

package cmd

import (
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
// costCPU of user+sys CPU and costRSS of peak RSS, exit 0 (1 for diff against
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
		if !hasShape(shapes, name) || costCommandIndex(cmd) < 0 {
			t.Errorf("knownOver[%q]: no such shape or command", key)
		}
	}
	dir := t.TempDir()
	for _, sh := range shapes {
		t.Run(sh.Name, func(t *testing.T) {
			t.Parallel()
			files := sh.materialise(t, dir)
			for _, c := range costCommands {
				t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
					key := sh.Name + " " + c.name
					reason, over := knownOver[key]
					if over && !all {
						t.Skipf("known over the bounds: %s (PK_COSTSHAPES_ALL=1 runs it)", reason)
					}
					args := c.args(files)
					if args == nil {
						t.Skip("no changed copy of this shape (CPython refuses it, or gen.py found no change)")
					}
					r := runCost(t, pk, args)
					status := sh.check(r, c.name)
					if status != "" && !over {
						// Peak RSS varies by up to a third between runs (when
						// the collector runs), CPU time with the machine's
						// load: a run over the bounds fails when it is over
						// twice.
						t.Logf("%s: %s; running it again", r, status)
						r = runCost(t, pk, args)
						status = sh.check(r, c.name)
					}
					costReport(sh.Name, c.name, r, status)
					t.Logf("%s: %s", key, r)
					switch {
					case over && status == "":
						t.Logf("now within bounds: remove %q from knownOver (was: %s)", key, reason)
					case over:
						t.Logf("still over: %s (knownOver: %s)", status, reason)
					case status != "":
						t.Errorf("pk %s: %s\n%s", strings.Join(args, " "), status, r.stderrTail())
					}
				})
			}
		})
	}
}

// The bounds (docs/cost.md), and when a run is stopped.
const (
	costCPU     = 5 * time.Second
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
	{"diff same", func(f costFiles) []string { return []string{"diff", "--color=never", f.shape, f.shape} }},
	{"diff changed", func(f costFiles) []string {
		if f.changed == "" {
			return nil
		}
		return []string{"diff", "--color=never", f.shape, f.changed}
	}},
}

// knownOver: the runs over the bounds today, "shape command" -> what was
// measured (first at commit 58def43, then re-measured with
// PK_COSTSHAPES_ALL=1 at the end of the session, 2026-12-01, the project's
// shared 2-CPU machine; the larger figure of two runs; see docs/cost.md). A few are under
// the bounds but within 10% of them, where RSS varies enough between runs to
// make the test flaky. Remove an entry when the engine gets fixed:
// PK_COSTSHAPES_ALL=1 go test ./cmd -run TestCostShapes -v | grep 'now within'
// lists those.
var knownOver = map[string]string{
	"nest_mixed trace":                       "0.4 s CPU, 229 MB (within 10% of the bound)",
	"table_objects trace --top 20":           "0.4 s CPU, 255 MB (within 10% of the bound)",
	"dag_list_deep diff same":                "0.5 s CPU, 247 MB (within 10% of the bound)",
	"nest_list_append trace":                 "0.4 s CPU, 324 MB",
	"nest_list_append trace --top 20":        "0.4 s CPU, 324 MB",
	"nest_list_append diff same":             "0.9 s CPU, 678 MB",
	"nest_list_append diff changed":          "3.3 s CPU, 857 MB",
	"nest_list_mark diff changed":            "2.6 s CPU, 838 MB",
	"nest_tuple_mark diff changed":           "2.8 s CPU, 731 MB",
	"nest_tuple1 diff changed":               "4.4 s CPU, 816 MB",
	"nest_tuple2 diff changed":               "4.0 s CPU, 1087 MB",
	"nest_dict_setitem hash":                 "0.4 s CPU, 309 MB",
	"nest_dict_setitem trace":                "0.6 s CPU, 542 MB",
	"nest_dict_setitem trace --top 20":       "0.7 s CPU, 542 MB",
	"nest_dict_setitem diff same":            "1.1 s CPU, 610 MB",
	"nest_dict_setitem diff changed":         "5.7 s CPU, 1433 MB",
	"nest_dict_mark trace":                   "0.6 s CPU, 483 MB",
	"nest_dict_mark trace --top 20":          "0.6 s CPU, 482 MB",
	"nest_dict_mark diff same":               "0.8 s CPU, 337 MB",
	"nest_dict_mark diff changed":            "5.1 s CPU, 1553 MB",
	"nest_frozenset diff changed":            "2.2 s CPU, 636 MB",
	"nest_mixed diff same":                   "0.6 s CPU, 284 MB",
	"nest_mixed diff changed":                "3.7 s CPU, 959 MB",
	"nest_reduce hash":                       "1.9 s CPU, 1431 MB",
	"nest_reduce trace":                      "0.8 s CPU, 624 MB",
	"nest_reduce trace --top 20":             "0.9 s CPU, 612 MB",
	"nest_reduce diff same":                  "3.9 s CPU, 2106 MB",
	"nest_reduce diff changed":               "3.8 s CPU, 2051 MB",
	"nest_newobj_build hash":                 "2.0 s CPU, 1924 MB",
	"nest_newobj_build trace":                "1.3 s CPU, 1019 MB",
	"nest_newobj_build trace --top 20":       "1.4 s CPU, 1052 MB",
	"nest_newobj_build diff same":            "4.5 s CPU, 2094 MB",
	"nest_newobj_build diff changed":         "4.6 s CPU, 2052 MB",
	"dag_list_deep trace":                    "0.7 s CPU, 333 MB",
	"dag_list_deep diff changed":             "3.1 s CPU, 608 MB",
	"dag_tuple_deep trace":                   "0.7 s CPU, 326 MB",
	"dag_tuple_deep diff same":               "0.7 s CPU, 318 MB",
	"dag_tuple_deep diff changed":            "3.0 s CPU, 566 MB",
	"dag_dict_deep hash":                     "0.4 s CPU, 325 MB",
	"dag_dict_deep trace":                    "0.9 s CPU, 439 MB",
	"dag_dict_deep diff same":                "1.2 s CPU, 525 MB",
	"dag_dict_deep diff changed":             "4.8 s CPU, 1065 MB",
	"dag_frozenset_deep hash":                "0.8 s CPU, 444 MB",
	"dag_frozenset_deep trace":               "0.8 s CPU, 406 MB",
	"dag_frozenset_deep diff same":           "2.0 s CPU, 559 MB",
	"dag_frozenset_deep diff changed":        "3.4 s CPU, 629 MB",
	"cycle_list hash":                        "0.5 s CPU, 576 MB",
	"cycle_list trace":                       "0.4 s CPU, 328 MB",
	"cycle_list trace --top 20":              "0.4 s CPU, 336 MB",
	"cycle_list diff same":                   "1.3 s CPU, 731 MB",
	"cycle_list diff changed":                "5.0 s CPU, 1077 MB",
	"cycle_dict hash":                        "0.8 s CPU, 940 MB",
	"cycle_dict trace":                       "0.6 s CPU, 558 MB",
	"cycle_dict trace --top 20":              "0.7 s CPU, 534 MB",
	"cycle_dict diff same":                   "1.8 s CPU, 879 MB",
	"cycle_dict diff changed":                "10.1 s CPU, 1737 MB",
	"cycle_self diff changed":                "1.3 s CPU, 367 MB",
	"cycle_self diff same":                   "0.3 s CPU, 265 MB",
	"cycle_objects hash":                     "1.1 s CPU, 910 MB",
	"cycle_objects trace":                    "0.7 s CPU, 481 MB",
	"cycle_objects trace --top 20":           "0.7 s CPU, 493 MB",
	"cycle_objects diff same":                "2.3 s CPU, 1055 MB",
	"cycle_objects diff changed":             "5.8 s CPU, 1758 MB",
	"wide_dict_bytes diff changed":           "0.9 s CPU, 265 MB",
	"wide_tuple trace":                       "0.6 s CPU, 403 MB",
	"wide_tuple trace --top 20":              "0.4 s CPU, 308 MB",
	"wide_tuple diff changed":                "2.3 s CPU, 747 MB",
	"wide_tuple diff same":                   "0.4 s CPU, 291 MB",
	"wide_dict_tuple diff same":              "0.7 s CPU, 293 MB",
	"wide_dict_tuple diff changed":           "1.7 s CPU, 364 MB",
	"streams_none hash":                      "0.4 s CPU, 336 MB",
	"streams_none trace":                     "1.2 s CPU, 1072 MB",
	"streams_none trace --top 20":            "0.9 s CPU, 667 MB",
	"streams_none diff same":                 "1.2 s CPU, 663 MB",
	"streams_none diff changed":              "2.9 s CPU, 1383 MB",
	"streams_dicts hash":                     "0.5 s CPU, 333 MB",
	"streams_dicts trace":                    "0.5 s CPU, 372 MB",
	"streams_dicts trace --top 20":           "0.4 s CPU, 284 MB",
	"streams_dicts diff same":                "1.3 s CPU, 657 MB",
	"streams_dicts diff changed":             "4.3 s CPU, 893 MB",
	"memo_distinct trace":                    "1.8 s CPU, 762 MB",
	"memo_distinct diff same":                "0.5 s CPU, 322 MB",
	"memo_distinct diff changed":             "0.5 s CPU, 322 MB",
	"memo_overwrite trace":                   "1.7 s CPU, 697 MB",
	"memo_overwrite diff same":               "0.5 s CPU, 303 MB",
	"memo_overwrite diff changed":            "0.5 s CPU, 303 MB",
	"globals_discarded trace":                "0.9 s CPU, 551 MB",
	"globals_discarded trace --top 20":       "0.3 s CPU, 228 MB (within 10% of the bound)",
	"globals_discarded diff same":            "0.6 s CPU, 356 MB",
	"globals_discarded diff changed":         "1.2 s CPU, 594 MB",
	"stack_globals_discarded hash":           "0.5 s CPU, 355 MB",
	"stack_globals_discarded trace":          "2.2 s CPU, 1033 MB",
	"stack_globals_discarded trace --top 20": "0.6 s CPU, 365 MB",
	"stack_globals_discarded diff same":      "1.3 s CPU, 770 MB",
	"stack_globals_discarded diff changed":   "2.7 s CPU, 1219 MB",
	"calls_discarded hash":                   "1.7 s CPU, 1240 MB",
	"calls_discarded trace":                  "2.3 s CPU, 1201 MB",
	"calls_discarded trace --top 20":         "0.8 s CPU, 463 MB",
	"calls_discarded diff same":              "3.7 s CPU, 1489 MB",
	"calls_discarded diff changed":           "7.7 s CPU, 2065 MB",
	"newobj_discarded hash":                  "0.9 s CPU, 585 MB",
	"newobj_discarded trace":                 "2.4 s CPU, 1108 MB",
	"newobj_discarded trace --top 20":        "0.9 s CPU, 454 MB",
	"newobj_discarded diff same":             "1.9 s CPU, 1014 MB",
	"newobj_discarded diff changed":          "4.7 s CPU, 2049 MB",
	"setitem_call diff changed":              "1.9 s CPU, 617 MB",
	"setitem_same_key hash":                  "0.4 s CPU, 312 MB",
	"setitem_same_key trace":                 "0.6 s CPU, 385 MB",
	"setitem_same_key trace --top 20":        "0.4 s CPU, 296 MB",
	"setitem_same_key diff same":             "0.9 s CPU, 591 MB",
	"setitem_same_key diff changed":          "4.5 s CPU, 1860 MB",
	"build_repeated hash":                    "0.7 s CPU, 447 MB",
	"build_repeated trace":                   "0.8 s CPU, 442 MB",
	"build_repeated trace --top 20":          "0.7 s CPU, 389 MB",
	"build_repeated diff same":               "1.5 s CPU, 710 MB",
	"build_repeated diff changed":            "6.2 s CPU, 2031 MB",
	"append_call hash":                       "0.5 s CPU, 373 MB",
	"append_call trace":                      "0.7 s CPU, 464 MB",
	"append_call trace --top 20":             "0.5 s CPU, 359 MB",
	"append_call diff same":                  "1.1 s CPU, 744 MB",
	"append_call diff changed":               "3.2 s CPU, 1079 MB",
	"table_namespaces hash":                  "0.7 s CPU, 379 MB",
	"table_namespaces trace":                 "0.5 s CPU, 281 MB",
	"table_namespaces trace --top 20":        "0.4 s CPU, 255 MB (within 10% of the bound)",
	"table_namespaces diff same":             "1.4 s CPU, 614 MB",
	"table_namespaces diff changed":          "3.6 s CPU, 915 MB",
	"table_objects trace":                    "0.4 s CPU, 271 MB",
	"frames_tiny trace":                      "1.0 s CPU, 348 MB",
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
	if r.cpu > costCPU {
		bad = append(bad, fmt.Sprintf("CPU %.2fs > %v", r.cpu.Seconds(), costCPU))
	}
	if r.rss > costRSS {
		bad = append(bad, fmt.Sprintf("peak RSS %d MB > %d MB", r.rss>>20, costRSS>>20))
	}
	if !r.killed {
		if why := sh.refused(); why != "" {
			line := strings.TrimSpace(r.stderr.String())
			if r.code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "offset") {
				bad = append(bad, fmt.Sprintf("exit %d: want 2 and a one-line error naming the offset (%s)", r.code, why))
			}
		} else {
			want := 0
			if cmd == "diff changed" {
				want = 1
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

// runCost runs pk with args, stdout drained and counted, killed when it has
// used costKillCPU or costKillRSS, or after costTimeout.
func runCost(t *testing.T, pk string, args []string) costRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), costTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pk, args...)
	out := &counter{}
	r := costRun{stderr: &capped{max: 4096}}
	cmd.Stdout, cmd.Stderr = out, r.stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
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
				cpu, rss := procUsage(cmd.Process.Pid)
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
					cmd.Process.Kill()
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	r.wall = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil && !r.killed {
		r.killed, r.killReason = true, fmt.Sprintf("killed after %v of wall time (a hang?)", costTimeout)
	}
	ps := cmd.ProcessState
	if ps == nil {
		t.Fatalf("pk %s: %v", strings.Join(args, " "), err)
	}
	r.code = ps.ExitCode()
	r.cpu = ps.UserTime() + ps.SystemTime()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.rss = ru.Maxrss << 10 // KB on Linux
	}
	r.out = out.n
	return r
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
