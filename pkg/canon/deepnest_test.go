package canon

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deepShapes are pickles nesting one container kind n levels deep, as
// CPython loads them (it nests with its stack, not by recursion).
var deepShapes = map[string]func(n int) []byte{
	// MARK ... LIST, n times: [[[...]]]
	"list-mark": func(n int) []byte {
		return cat("\x80\x02", strings.Repeat("(", n), strings.Repeat("l", n), ".")
	},
	// EMPTY_LIST n times, then APPEND n-1 times
	"list-append": func(n int) []byte {
		return cat("\x80\x02", strings.Repeat("]", n), strings.Repeat("a", n-1), ".")
	},
	// {0: {0: ... {}}} by MARK ... DICT
	"dict-mark": func(n int) []byte {
		return cat("\x80\x02", strings.Repeat("(K\x00", n), "}", strings.Repeat("d", n), ".")
	},
	// the same by EMPTY_DICT ... SETITEM
	"dict-setitem": func(n int) []byte {
		return cat("\x80\x02", strings.Repeat("}K\x00", n-1), "}", strings.Repeat("s", n-1), ".")
	},
	// ((((),),),) by MARK ... TUPLE
	"tuple-mark": func(n int) []byte {
		return cat("\x80\x02", strings.Repeat("(", n), ")", strings.Repeat("t", n), ".")
	},
	// tuples around a list (impure all the way) by TUPLE1
	"tuple-list": func(n int) []byte {
		return cat("\x80\x02]", strings.Repeat("\x85", n), ".")
	},
	// frozenset({frozenset({...})}) inside a set
	"frozenset": func(n int) []byte {
		return cat("\x80\x04\x8f(", strings.Repeat("(", n), strings.Repeat("\x91", n), "\x90.")
	},
	// C.__new__(C, C.__new__(C, ...)) by NEWOBJ
	"newobj": func(n int) []byte {
		return cat("\x80\x02c__main__\nC\nq\x00", strings.Repeat("h\x00", n), ")\x81", strings.Repeat("\x85\x81", n-1), ".")
	},
	// f(f(f(...))) by REDUCE
	"reduce": func(n int) []byte {
		return cat("\x80\x02c__main__\nf\nq\x00", strings.Repeat("h\x00", n), ")R", strings.Repeat("\x85R", n-1), ".")
	},
	// objects whose BUILD state {'x': ...} holds the next object
	"build": func(n int) []byte {
		return cat("\x80\x02c__main__\nC\nq\x00", strings.Repeat("h\x00)\x81}\x8c\x01x", n), "N", strings.Repeat("sb", n), ".")
	},
	// OrderedDict() memoised, then n SETITEM on it, each through a GET
	// then POP (the setitems of a memoised call result)
	"setitems": func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("\x80\x02ccollections\nOrderedDict\n)R\x94")
		for i := 0; i < n; i++ {
			b.WriteString("h\x00J")
			binary.Write(&b, binary.LittleEndian, int32(i))
			b.WriteString("K\x01s0")
		}
		b.WriteString("h\x00.")
		return b.Bytes()
	},
}

// cpuTime is the CPU time of the process so far (user and system, the
// collector's included): less disturbed than wall time on a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cat(parts ...string) []byte { return []byte(strings.Join(parts, "")) }

func hashBytes(t *testing.T, dir, name string, b []byte, opt Options) (string, time.Duration) {
	t.Helper()
	p := filepath.Join(dir, name+".pkl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	start := cpuTime()
	r, err := HashFile(p, opt)
	d := cpuTime() - start
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r.Digest, d
}

// A million levels of every container kind hash without error, and the
// time grows linearly with the depth: 200,000 levels take less than 3
// times what 100,000 take (CPU time, the best of three runs each). The streaming
// path and the graph path agree on every shape.
func TestDeepNestingLinear(t *testing.T) {
	dir := t.TempDir()
	for _, name := range sortedKeys(deepShapes) {
		mk := deepShapes[name]
		t.Run(name, func(t *testing.T) {
			fast, _ := hashBytes(t, dir, name, mk(1000), Options{})
			noFast = true
			graph, _ := hashBytes(t, dir, name, mk(1000), Options{})
			noFast = false
			if fast != graph {
				t.Errorf("1000 levels: HashFile %s, graph path %s", fast, graph)
			}
			best := func(n int) time.Duration {
				b := mk(n)
				var min time.Duration
				for i := 0; i < 3; i++ {
					if _, d := hashBytes(t, dir, name, b, Options{}); i == 0 || d < min {
						min = d
					}
				}
				return min
			}
			d1, d2 := best(100000), best(200000)
			// below half a second the ratio is the collector's noise (CI saw
			// 66 ms against 215 ms on newobj, with 1M levels in 1.0 s); the
			// quadratic cost this guards against took seconds at 200k
			if d2 > 3*d1 && d2 > 500*time.Millisecond {
				t.Errorf("100,000 levels: %v, 200,000 levels: %v (more than 3 times)", d1, d2)
			}
			if testing.Short() {
				return
			}
			_, d := hashBytes(t, dir, name, mk(1000000), Options{})
			if d > 20*time.Second {
				t.Errorf("a million levels: %v of CPU", d)
			}
			t.Logf("100k %v, 200k %v, 1M %v", d1, d2, d)
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
