package trace

import (
	"io"
	"os"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// benchTree parses PK_TRACE_BENCH (default: the trace corpus' cp_closure.pkl)
// once and makes each stream's store before the timer starts, as the
// machine will once it builds the store directly: what the benchmarks
// below report (ns/op, B/op, allocs/op) is trace's own work on top of it.
func benchTree(b *testing.B) *pickle.File {
	path := os.Getenv("PK_TRACE_BENCH")
	if path == "" {
		path = "../../testdata/trace/cp_closure.pkl"
	}
	f, err := pickle.ParseFile(path, pickle.Options{})
	if err != nil {
		b.Skip(err)
	}
	for _, s := range f.Streams {
		s.Store()
	}
	b.ReportAllocs()
	b.ResetTimer()
	return f
}

// BenchmarkStoreTop: New and --top 20.
func BenchmarkStoreTop(b *testing.B) {
	f := benchTree(b)
	for i := 0; i < b.N; i++ {
		New(f).WriteTop(io.Discard, 20, Style{})
	}
}

// BenchmarkStoreBounded: New and the default view (DefaultLines).
func BenchmarkStoreBounded(b *testing.B) {
	f := benchTree(b)
	for i := 0; i < b.N; i++ {
		t := New(f)
		t.WriteBounded(io.Discard, t.Root(), DefaultLines, Style{})
	}
}

// BenchmarkStoreWhole: New and the whole tree (--lines 0).
func BenchmarkStoreWhole(b *testing.B) {
	f := benchTree(b)
	for i := 0; i < b.N; i++ {
		t := New(f)
		t.WriteText(io.Discard, t.Root(), Options{Depth: -1}, Style{})
	}
}
