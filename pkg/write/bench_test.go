package write

import (
	"os"
	"testing"
)

// BenchmarkFile writes the canonical pickle of $PK_BENCH_FILE (default: the
// cloudpickle state of testdata/states/gen_states.py under /work/states).
func BenchmarkFile(b *testing.B) {
	p := os.Getenv("PK_BENCH_FILE")
	if p == "" {
		b.Skip("PK_BENCH_FILE not set")
	}
	for i := 0; i < b.N; i++ {
		res, err := File(p, Options{}, false)
		if err != nil {
			b.Fatal(err)
		}
		res.Close() // (a large output is spooled to a temporary file)
	}
}
