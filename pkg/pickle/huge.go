package pickle

import "github.com/pk-tools/pk/pkg/internal/huge"

// adviseHuge asks the kernel to back buf's array with transparent huge
// pages (pkg/internal/huge, which says why and what it risks). The
// machine's record array is one large allocation filled front to back: in
// 4 KiB pages, a 5 MB cloudpickle state's 34 MB of records took 8,500 page
// faults, about a fifth of pk hash's CPU time on a virtual machine. (The Go
// runtime gave up marking its heap so in Go 1.21.4: with defrag "madvise",
// a fault there may stall in direct compaction on a host whose memory is
// fragmented, golang/go#61718.)
func adviseHuge[T any](buf []T) { huge.Advise(buf) }
