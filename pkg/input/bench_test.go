package input

import (
	"crypto/sha256"
	"os"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// BenchmarkOpen opens $PK_BENCH_FILE through Open with SHA-256 digests
// (scripts/bench.d/inputs.sh makes a ~500 MB torch checkpoint for it).
func BenchmarkOpen(b *testing.B) {
	path := os.Getenv("PK_BENCH_FILE")
	if path == "" {
		b.Skip("PK_BENCH_FILE not set")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for i := 0; i < b.N; i++ {
		d, err := Open(path, pickle.Options{NewHash: sha256.New})
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Parts) == 0 {
			b.Fatal("no parts")
		}
	}
}
