package canon

import (
	"bytes"
	"os"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

func benchBytes(b *testing.B, data []byte, opt Options) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "bench", ReadOptions(opt))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := HashDoc(&input.Doc{Parts: []input.Part{{Pickle: f}}}, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// smallDicts assembles a protocol-4 list of n dicts with 5 memoised keys.
func smallDicts(n int) []byte {
	a := p4().op(']').put(0).mark()
	keys := []string{"id", "name", "score", "ok", "email"}
	for i := 0; i < n; i++ {
		a.op('}').mark()
		for k, key := range keys {
			if i == 0 {
				a.str(key).op(0x94)
			} else {
				a.op('h', byte(k+1))
			}
			switch k {
			case 0:
				a.binint(int32(i))
			case 2:
				a.binfloat(float64(i) / 2)
			case 3:
				a.op(0x88)
			default:
				a.str("user-value-0000000")
			}
		}
		a.op('u')
	}
	return a.op('e').stop()
}

func BenchmarkSmallDicts(b *testing.B) { benchBytes(b, smallDicts(100000), Options{}) }

func BenchmarkSmallDictsXXH3(b *testing.B) { benchBytes(b, smallDicts(100000), Options{Algo: XXH3}) }

func BenchmarkBlobs(b *testing.B) {
	blob := bytes.Repeat([]byte("0123456789abcdef"), 4<<20) // 64 MiB
	a := p4()
	a.op(0x8e)
	var l [8]byte
	for i := 0; i < 8; i++ {
		l[i] = byte(uint64(len(blob)) >> (8 * i))
	}
	a.Write(l[:])
	a.Write(blob)
	benchBytes(b, a.stop(), Options{})
}

// BenchmarkFile hashes $PK_BENCH_FILE (e.g. testdata/bench/dicts_1m.pkl).
func BenchmarkFile(b *testing.B) {
	p := os.Getenv("PK_BENCH_FILE")
	if p == "" {
		b.Skip("PK_BENCH_FILE not set")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := HashFile(p, Options{NoPaths: true}); err != nil { // as pk hash without --explain
			b.Fatal(err)
		}
	}
}

func BenchmarkSmallDictsParseOnly(b *testing.B) {
	data := smallDicts(100000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "bench", ReadOptions(Options{})); err != nil {
			b.Fatal(err)
		}
	}
}
