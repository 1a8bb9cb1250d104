//go:build !unix

package pickle

import "time"

var cpuStart = time.Now()

// cpuTime falls back to wall-clock time where rusage is not available.
func cpuTime() time.Duration { return time.Since(cpuStart) }
