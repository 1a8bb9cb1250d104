package trace

import (
	"io"
	"os"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// BenchmarkTop20 runs --top 20 on testdata/bench/dicts.pkl (made by
// scripts/bench-gen.py; skipped when absent).
func BenchmarkTop20(b *testing.B) {
	const path = "../../testdata/bench/dicts.pkl"
	if _, err := os.Stat(path); err != nil {
		b.Skip("no ", path, ": run python3 scripts/bench-gen.py")
	}
	for i := 0; i < b.N; i++ {
		f, err := pickle.ParseFile(path, pickle.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t := New(f)
		t.WriteTop(io.Discard, 20, Style{})
	}
}
