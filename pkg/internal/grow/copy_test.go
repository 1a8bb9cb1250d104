package grow

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCopy: Copy is copy for every length about the chunk, for scalars and
// for elements that hold pointers, and for dst and src of unequal lengths.
func TestCopy(t *testing.T) {
	type slot struct {
		s string
		p *int
		v [5]int64
	}
	for _, n := range []int{0, 1, 7, copyChunk/8 - 1, copyChunk / 8, copyChunk/8 + 1, 3*copyChunk/8 + 5, 100000} {
		src := make([]int64, n)
		for i := range src {
			src[i] = int64(i)*7919 + 1
		}
		for _, dn := range []int{n, n / 2, n + 3} {
			dst := make([]int64, dn)
			want := make([]int64, dn)
			if got, w := Copy(dst, src), copy(want, src); got != w {
				t.Fatalf("n %d dst %d: Copy %d, copy %d", n, dn, got, w)
			}
			for i := range want {
				if dst[i] != want[i] {
					t.Fatalf("n %d dst %d: [%d] %d, want %d", n, dn, i, dst[i], want[i])
				}
			}
		}
		ss := make([]slot, n/4)
		for i := range ss {
			k := i
			ss[i] = slot{s: strconv.Itoa(i), p: &k, v: [5]int64{int64(i)}}
		}
		ds := make([]slot, len(ss))
		Copy(ds, ss)
		runtime.GC() // (the pointers copied are seen by the collector)
		for i := range ds {
			if ds[i].s != strconv.Itoa(i) || *ds[i].p != i || ds[i].v[0] != int64(i) {
				t.Fatalf("slots %d: [%d] = %+v", len(ss), i, ds[i])
			}
		}
	}
}

// TestPush: Push is append, a full slice grown by doubling.
func TestPush(t *testing.T) {
	var s []int32
	caps := map[int]bool{}
	for i := 0; i < 100000; i++ {
		s = Push(s, int32(i))
		caps[cap(s)] = true
	}
	for i, v := range s {
		if v != int32(i) {
			t.Fatalf("[%d] = %d", i, v)
		}
	}
	if len(caps) > 15 { // 8, 16, ... 131072: 15 capacities
		t.Fatalf("%d capacities on the way to %d: not doubling", len(caps), len(s))
	}
}

// TestCopyStops: a goroutine copying a large slice is stopped for the
// collector between two chunks, where one memmove of it could not be. The
// measure is how long a collection waits for it (runtime.GC from another
// goroutine while the copies run): with one copy of 64 MB at a time it
// waits for a whole copy.
func TestCopyStops(t *testing.T) {
	if testing.Short() {
		t.Skip("128 MB")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	src := make([]byte, 64<<20)
	dst := make([]byte, len(src))
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			Copy(dst, src)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	var worst time.Duration
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		runtime.GC()
		worst = max(worst, time.Since(t0))
	}
	stop.Store(true)
	wg.Wait()
	// one memmove of 64 MB takes milliseconds, seconds while the collector
	// signals its thread (4.9 s on the project's machine); a chunk of 64 KB
	// microseconds. The bound leaves room for a loaded machine.
	if worst > time.Second {
		t.Fatalf("a collection waited %v for the copying goroutine", worst)
	}
}

// TestClear: Clear is clear about the chunk's size.
func TestClear(t *testing.T) {
	for _, n := range []int{0, 5, copyChunk/4 - 1, copyChunk / 4, copyChunk/4 + 1, 3*copyChunk/4 + 3} {
		s := make([]int32, n+2)
		for i := range s {
			s[i] = int32(i) + 1
		}
		Clear(s[1 : n+1])
		for i, v := range s {
			want := int32(0)
			if i == 0 || i == n+1 { // (outside what was cleared)
				want = int32(i) + 1
			}
			if v != want {
				t.Fatalf("n %d: [%d] = %d, want %d", n, i, v, want)
			}
		}
	}
}
