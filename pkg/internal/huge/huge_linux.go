// Package huge advises the kernel to back large arrays with transparent
// huge pages.
package huge

import (
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Advise asks the kernel to back buf's array with transparent huge pages
// (madvise MADV_HUGEPAGE over the whole 2 MiB pages inside its capacity;
// the default THP setting of most distributions, "madvise", gives them
// only where asked). It is advice only: an error (no THP, an old kernel)
// changes nothing. Arrays under 4 MiB are left alone.
//
// buf must be just made (all zeros): those pages are first handed back to
// the kernel (MADV_DONTNEED), to come back as zero pages when first
// touched. When the allocator makes the array in memory it reused, it
// clears it, which makes every page of the capacity resident at once, the
// part never filled too, in 4 KiB pages: a million levels of objects (cost
// shape nest_newobj_build) held its records' 22 MB of spare capacity so in
// about one run of two, by whether the record array landed on the outgrown
// arrays handed back before it (pk trace --lines 0: 248-253 MB against
// 221-227).
//
// Two kinds of array gain, on a virtual machine above all, where a TLB miss
// walks two page tables: one large allocation filled front to back (the
// machine's records, pkg/pickle: a page fault every 4 KiB), and a large
// table probed at random (pk canon's table of values, pkg/write: in 4 KiB
// pages nearly every probe misses the TLB).
//
// The risk is the one that made Go's runtime stop advising its own heap
// this way (golang/go#61718, #64342): where the kernel's defrag setting is
// "madvise" (Debian's default), a fault in such memory may compact memory
// first, which on a host with fragmented memory can stall. PK_NO_HUGEPAGES=1
// turns the advice off (docs/engine.md, "Huge pages").
func Advise[T any](buf []T) { adviseFrom(buf, 4<<20) }

// AdviseLarge is Advise for arrays of Large bytes or more: for the arrays
// that grow by doubling or are sized for a stream's nodes, whatever their
// use (grow.Room and grow.Reuse, the store's sides, pk diff's fingerprint
// tables), so that a small input's arrays stay in 4 KiB pages. A huge page
// is resident whole once written, so the array filled last is resident to
// its 2 MiB edge: advised from 4 MiB, these made pk hash of the cloudpickle
// state (arrays of 1-8 MiB) peak 1.5 MB higher for no fewer page faults.
// From Large, a million levels of calls diffed against a changed copy
// (cost shape nest_reduce, arrays of 24-48 MiB) took 58,000 -> 40,000 page
// faults and 0.60-0.71 -> 0.47-0.53 s of system time (six interleaved runs;
// docs/engine.md §4, session 45).
func AdviseLarge[T any](buf []T) { adviseFrom(buf, Large) }

// Large is the least array AdviseLarge advises.
const Large = 16 << 20

func adviseFrom[T any](buf []T, least uintptr) {
	if off {
		return
	}
	var z T
	n := uintptr(cap(buf)) * unsafe.Sizeof(z)
	if n < least {
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
	b := unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo)
	_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
	if syscall.Madvise(b, syscall.MADV_HUGEPAGE) == nil {
		advised.Lock()
		if len(advised.r) < maxAdvised {
			advised.r = append(advised.r, span{lo, hi})
		}
		advised.Unlock()
	}
}

// advised holds the ranges Advise marked since the last Forget (at most
// maxAdvised: past that, a range stays marked, as before Forget was).
var advised struct {
	sync.Mutex
	r []span
}

type span struct{ lo, hi uintptr }

const maxAdvised = 256

// Forget takes the advice back (madvise MADV_NOHUGEPAGE) from every range
// Advise marked since the last Forget, for a caller that has let go of
// every array it advised. The mark is the address range's, not the
// array's: once the collector frees the array and hands its pages back,
// whatever the allocator puts there next (the next input's item or text
// arena, which fill bit by bit) is faulted in 2 MiB at a time, all of it
// resident from its first byte (pk diff, which reads B after letting A's
// store go: 29-33 MB now and then on a cloudpickle state, against 27-28).
// The pages stay mapped: this changes only how they are faulted in later.
func Forget() {
	advised.Lock()
	defer advised.Unlock()
	for _, r := range advised.r {
		// (by address: the array may be gone; madvise of a range no
		// longer mapped fails with ENOMEM and changes nothing)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, r.lo, r.hi-r.lo, syscall.MADV_NOHUGEPAGE)
	}
	advised.r = advised.r[:0]
}

// off: PK_NO_HUGEPAGES=1 in the environment (read once).
var off = os.Getenv("PK_NO_HUGEPAGES") == "1"

// Trim hands back to the kernel the whole pages of buf's array past its
// length (madvise MADV_DONTNEED), when they come to minTrim bytes or
// more, and reports whether it did. A huge page that the length ends
// inside is split: its pages past the length leave the resident set, where
// a huge page keeps all 2 MiB resident once one byte of it is written. The
// capacity stays buf's: what is appended there later reads zero pages
// first, as a new array's. buf's array must be one the caller may write
// past its length (its own, not a window another slice fills).
func Trim[T any](buf []T) bool {
	var z T
	sz := unsafe.Sizeof(z)
	if sz == 0 {
		return false
	}
	ptr := unsafe.Pointer(unsafe.SliceData(buf))
	base := uintptr(ptr)
	const page = 4 << 10
	lo := (base + uintptr(len(buf))*sz + page - 1) &^ (page - 1)
	hi := (base + uintptr(cap(buf))*sz) &^ (page - 1)
	if hi <= lo || hi-lo < minTrim {
		return false
	}
	b := unsafe.Slice((*byte)(unsafe.Add(ptr, lo-base)), hi-lo)
	return syscall.Madvise(b, syscall.MADV_DONTNEED) == nil
}

// minTrim is the least Trim hands back: below it a system call costs more
// than the pages are worth.
const minTrim = 64 << 10
