// Package grow owns how pk's packages grow the large slices they fill a
// few items at a time: by doubling, where append grows a large slice by a
// quarter at a time and so allocates and copies about five times its final
// size (a million-level stack, the tape of a cloudpickle state, a million
// effects), against two for doubling; copied a chunk at a time, so that
// the collector can stop the goroutine between two (Copy); and how a pass
// that gave up gives back what it grew (Mark, Discard).
package grow

import (
	"math"
	"runtime"
	"runtime/metrics"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/huge"
)

// Room returns s with room for n more elements, doubling a full array. The
// new room is made and copied, not appended: a large array fresh from the
// system costs memory only as it is filled. An empty one starts at 8
// elements, as append's do: a table made for each of a million small
// streams stays small (at 64 a stream of small dicts cost pk canon 2 KB of
// the writer's and encoder's tables).
func Room[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	return To(s, max(2*cap(s), len(s)+n, 8))
}

// To returns a new array of capacity n holding s (its length len(s)),
// backed by huge pages when it is large (huge.AdviseLarge, asked before s
// is copied in: the advice drops the array's pages).
func To[T any](s []T, n int) []T {
	out := make([]T, len(s), n)
	huge.AdviseLarge(out)
	Copy(out, s)
	return out
}

// copyChunk is how many bytes Copy moves at a time.
const copyChunk = 64 << 10

// Copy is copy(dst, src), moved copyChunk bytes at a time by a call that
// is not inlined, so that the goroutine can be stopped between two: one
// copy is one memmove, which nothing interrupts. While the collector waits
// to scan the goroutine's stack it signals its thread every 5 µs until it
// stops (runtime.suspendG), and on the project's virtual machine a signal
// costs more than that: a copy of a few megabytes in the machine's or the
// fast paths' stacks then took hundreds of milliseconds, the collector's
// thread spinning beside it (docs/cost.md, session 43).
func Copy[T any](dst, src []T) int {
	n := min(len(dst), len(src))
	step := chunkOf[T]()
	if n <= step {
		return copy(dst, src)
	}
	for i := 0; i < n; i += step {
		j := min(i+step, n)
		copyPart(dst[i:j], src[i:j])
	}
	return n
}

//go:noinline
func copyPart[T any](dst, src []T) { copy(dst, src) }

// chunkOf is how many elements of T make a chunk (copyChunk bytes, at
// least one element; any number when T has no size).
func chunkOf[T any]() int {
	var z T
	if size := int(unsafe.Sizeof(z)); size > 0 {
		return max(copyChunk/size, 1)
	}
	return math.MaxInt
}

// Push is append(s, v), growing a full s by Room (doubling, copied a
// chunk at a time) rather than by append's one memmove: for the stacks
// that grow an item at a time to the depth of the input (a million MARKs).
func Push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = Room(s, 1)
	}
	return append(s, v)
}

// Reuse returns s with length n and every element zero, in s's memory when
// it is large enough.
func Reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		out := make([]T, n)
		huge.AdviseLarge(out)
		return out
	}
	s = s[:n]
	Clear(s)
	return s
}

// Clear is clear(s), copyChunk bytes at a time (as Copy, for the same
// reason: one memclr is not interrupted).
func Clear[T any](s []T) {
	step := chunkOf[T]()
	if len(s) <= step {
		clear(s)
		return
	}
	for i := 0; i < len(s); i += step {
		clearPart(s[i:min(i+step, len(s))])
	}
}

//go:noinline
func clearPart[T any](s []T) { clear(s) }

// Mark is the bytes allocated on the heap so far, for Discard.
func Mark() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// DiscardAt is how much a pass must have allocated for Discard to collect.
const DiscardAt = 32 << 20

// Discard is called by a streaming pass that gave up, with the Mark taken
// when it began: when it allocated DiscardAt or more, what it built is
// collected now. The path that takes over parses at the collector's quiet
// pace (pickle.QuietGC), which would hold that garbage beside its own;
// collected, its memory is the parse's to reuse (a million levels of calls
// that the fast hash gives up on at the first: 361 -> 319 MB).
func Discard(mark uint64) {
	if Mark()-mark >= DiscardAt {
		runtime.GC()
	}
}
