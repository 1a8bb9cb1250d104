package trace

import (
	"io"
	"os"
	"testing"
)

func BenchmarkZZEachTop(b *testing.B) {
	p := os.Getenv("PK_A")
	if p == "" {
		b.Skip()
	}
	for i := 0; i < b.N; i++ {
		ok, err := EachTop(p, 20, false, func(t *Tree) error { _ = io.Discard; return nil })
		if !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
