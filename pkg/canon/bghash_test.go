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

// TestBGHashBuffers: what bgHash holds of a long stream is its two
// buffers of bgChunk, at most 128 KB (they are live at pk hash's peak on
// a code-carrying state: 0.5 MB at 256 KB chunks).
func TestBGHashBuffers(t *testing.T) {
	b := newBGHash(sha256.New())
	data := make([]byte, 1<<20)
	for range 4 {
		b.Write(data)
	}
	b.stop()
	if held := cap(b.buf) + cap(b.idle); held > 128<<10 {
		t.Fatalf("bgHash holds %d bytes of buffers, want at most 128 KB", held)
	}
	if got, want := b.Sum(nil), sha256.Sum256(make([]byte, 4<<20)); string(got) != string(want[:]) {
		t.Fatal("digest differs")
	}
}
