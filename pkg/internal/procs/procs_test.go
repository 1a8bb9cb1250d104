package procs

import (
	"os"
	"runtime"
	"sync"
	"testing"
)

// TestSerialOverlap: passes that overlap (tests in parallel) leave
// GOMAXPROCS as it was once the last is done, and at 1 while any runs.
func TestSerialOverlap(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: Serial leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	a := Serial()
	b := Serial()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d inside two passes", n)
	}
	a()
	a() // (a second call changes nothing)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d after the first pass of two", n)
	}
	b()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("GOMAXPROCS %d after both, want 4", n)
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); Serial()() }()
	}
	wg.Wait()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Fatalf("GOMAXPROCS %d after 16 overlapping passes, want 4", n)
	}
}
