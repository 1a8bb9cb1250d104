package pickle

import (
	"os"
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back buf's array with transparent huge
// pages (madvise MADV_HUGEPAGE over the whole 2 MiB pages inside its
// capacity; the default THP setting of most distributions, "madvise",
// gives them only where asked). The machine's record array is one large
// allocation filled front to back: in 4 KiB pages, a 5 MB cloudpickle
// state's 34 MB of records took 8,500 page faults, about a fifth of pk
// hash's CPU time on a virtual machine. It is advice only: an error (no
// THP, an old kernel) changes nothing, and it is of no use when the
// allocator has cleared the array already (memory it reused). Arrays
// under 4 MiB are left alone. (The Go runtime gave up marking its heap so
// in Go 1.21.4: with defrag "madvise", a fault there may stall in direct
// compaction on a host whose memory is fragmented, golang/go#61718.)
//
// The risk is the one that made Go's runtime stop advising its own heap
// this way (golang/go#61718, #64342): where the kernel's defrag setting is
// "madvise" (Debian's default), a fault in such memory may compact memory
// first, which on a host with fragmented memory can stall. PK_NO_HUGEPAGES=1
// turns the advice off (docs/engine.md, "Huge pages").
func adviseHuge[T any](buf []T) {
	if noHuge {
		return
	}
	var z T
	n := uintptr(cap(buf)) * unsafe.Sizeof(z)
	if n < 4<<20 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(buf))
	const huge = 2 << 20
	p := uintptr(base)
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + n) &^ (huge - 1)
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo), syscall.MADV_HUGEPAGE)
}

// noHuge: PK_NO_HUGEPAGES=1 in the environment (read once).
var noHuge = os.Getenv("PK_NO_HUGEPAGES") == "1"
