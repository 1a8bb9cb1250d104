package write

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeap(t *testing.T) {
	p := os.Getenv("PK_BENCH_FILE")
	if p == "" {
		t.Skip()
	}
	heapHook = func() {
		runtime.GC()
		f, _ := os.Create("/tmp/heap.prof")
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	if _, err := File(p, Options{}, false); err != nil {
		t.Fatal(err)
	}
}
