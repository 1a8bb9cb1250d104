package dis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// benchInput returns testdata/bench/dicts.pkl (made by scripts/bench-gen.py)
// when present, else a small pickle of the same shape built here.
func benchInput(b *testing.B) []byte {
	if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "bench", "dicts.pkl")); err == nil && !testing.Short() {
		return data
	}
	// 20,000 rows of the bench shape, protocol 4, written by hand.
	var buf bytes.Buffer
	buf.WriteString("\x80\x04]\x94(")
	for i := 0; i < 20000; i++ {
		buf.WriteString("}\x94(\x8c\x02id\x94J")
		buf.Write([]byte{byte(i), byte(i >> 8), 0, 0})
		buf.WriteString("\x8c\x04name\x94\x8c\x0buser0000000\x94\x8c\x05score\x94G@\x00\x00\x00\x00\x00\x00\x00")
		buf.WriteString("\x8c\x04tags\x94]\x94(\x8c\x01a\x94\x8c\x01b\x94eu")
	}
	buf.WriteString("e.")
	return buf.Bytes()
}

func benchRun(b *testing.B, opt Options) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(io.Discard, bytes.NewReader(data), int64(len(data)), "bench", opt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDisText(b *testing.B)        { benchRun(b, Options{}) }
func BenchmarkDisJSON(b *testing.B)        { benchRun(b, Options{JSON: true}) }
func BenchmarkDisPickletools(b *testing.B) { benchRun(b, Options{Pickletools: true}) }

// BenchmarkDisTables runs the text listing over the table cost shapes
// committed in testdata/costshapes/shapes (the shapes issue 10's pk dis
// target is measured on), one sub-benchmark each.
func BenchmarkDisTables(b *testing.B) {
	for _, name := range []string{"table_dicts_lists", "table_floats", "table_strings_memo", "table_namespaces", "table_objects"} {
		b.Run(name, func(b *testing.B) {
			data := testfile.Gunzip(b, filepath.Join("..", "..", "testdata", "costshapes", "shapes", name+".pkl.gz"))
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Run(io.Discard, bytes.NewReader(data), int64(len(data)), name, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
