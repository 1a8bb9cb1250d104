//go:build unix

package pickle

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the test process has used: the
// hostile-input time limit is checked on it, as wall-clock time on a shared
// machine measures the other processes too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
