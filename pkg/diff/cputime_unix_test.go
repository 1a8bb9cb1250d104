//go:build unix

package diff

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: less
// sensitive than wall time to a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
