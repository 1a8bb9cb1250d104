package canon

import (
	"crypto/sha256"
	"math/rand"
	"testing"
)

// TestBGHash: bgHash gives the digest its hash gives the same bytes,
// written in pieces of every size around its chunk, across Sum (which does
// not end the stream) and Reset.
func TestBGHash(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 5*bgChunk+123)
	rng.Read(data)
	for _, piece := range []int{1, 7, 4096, bgChunk - 1, bgChunk, bgChunk + 1, 3 * bgChunk} {
		b := newBGHash(sha256.New())
		b.Write([]byte("junk before reset"))
		b.Reset()
		want := sha256.New()
		for off := 0; off < len(data); {
			n := min(piece+rng.Intn(3), len(data)-off)
			b.Write(data[off : off+n])
			want.Write(data[off : off+n])
			off += n
			if rng.Intn(50) == 0 {
				if got, w := b.Sum(nil), want.Sum(nil); string(got) != string(w) {
					t.Fatalf("piece %d: mid-stream Sum differs at %d", piece, off)
				}
			}
		}
		if got, w := b.Sum(nil), want.Sum(nil); string(got) != string(w) {
			t.Fatalf("piece %d: Sum differs", piece)
		}
	}
}
