// Package procs sets how many CPUs Go's runtime gives pk's own code, for
// the passes that run better on one.
//
// A pass that is one goroutine (pk diff's walk of two stores, and its
// reads of the two inputs) gains nothing from a second CPU but the
// collector's work, and on the project's machine (a virtual machine of
// two CPUs) it loses more than that: at the low pace the walk sets
// (diff's walkGCPercent) a collection starts every few megabytes, and
// each one runs an idle mark worker on the other CPU and stops the
// walk's goroutine by signal to scan its stack, which a guest pays dearly
// for. pk diff of the cost shape nest_frozenset and its changed copy ran
// 130 collections, 5,800 tgkill and 7,900 sched_yield calls: 5.5 s of CPU
// and 3.6 s of wall time on two CPUs, 2.2 and 2.2 s on one.
//
// The collector's signals cost most while the goroutine is in a long
// copy, which it cannot be stopped in (a stack grown by one memmove):
// pkg/internal/grow now copies in chunks (session 43), which took most of
// that cost from every command; pk diff's walk still runs better on one
// CPU (over the 66 cost shapes, 82 against 96 s of CPU and 77 against 78
// s of wall time), pk dis no longer does (14.4 against 13.1 s of CPU). So
// pk diff's passes over two bare files (diff.eachFiles) call Serial; the
// passes that run in parallel (the fast paths' segments, pass 1 ahead of
// a large stream, --jobs) keep every CPU. A GOMAXPROCS set by the user is
// left as it is.
package procs

import (
	"os"
	"runtime"
	"sync"
)

// serial counts the callers of Serial not yet restored: the first sets
// GOMAXPROCS to 1, the last sets it back (two passes that overlap, in tests
// that run in parallel, would otherwise leave it at 1).
var serial struct {
	sync.Mutex
	n    int
	prev int
}

// Serial runs what follows on one CPU (runtime.GOMAXPROCS(1)) and returns
// what sets it back; it changes nothing when the user set GOMAXPROCS.
func Serial() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	serial.Lock()
	if serial.n == 0 {
		serial.prev = runtime.GOMAXPROCS(1)
	}
	serial.n++
	serial.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			serial.Lock()
			serial.n--
			if serial.n == 0 {
				runtime.GOMAXPROCS(serial.prev)
			}
			serial.Unlock()
		})
	}
}
