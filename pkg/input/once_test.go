package input

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// endless reads head, then fill forever.
type endless struct {
	head []byte
	fill byte
	n    int64 // bytes given
}

func (e *endless) Read(p []byte) (int, error) {
	k := copy(p, e.head)
	e.head = e.head[k:]
	for i := k; i < len(p); i++ {
		p[i] = e.fill
	}
	e.n += int64(len(p))
	return len(p), nil
}

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

// TestCopyOnce: stdin or a pipe copied for a second read stops at once when
// its first bytes cannot be a pickle (session 41: pk canon - < /dev/zero
// grew without end, pk hash - < /dev/zero spooled 4 GiB first), and is
// copied whole, or up to the limit, otherwise.
func TestCopyOnce(t *testing.T) {
	valid := []byte("\x80\x04\x95\x09\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e.")
	const limit = 8 << 20
	for _, tc := range []struct {
		name     string
		head     []byte
		fill     byte
		fails    bool
		complete bool
	}{
		{"zeros", nil, 0, true, false},
		{"text", []byte("hello world"), 'a', true, false}, // (the space is no opcode)
		{"invalid opcode after a valid start", []byte("\x80\x04]\x94(K\x01"), 0xff, true, false},
		{"a valid pickle, then zeros", valid, 0, false, false},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, 0, false, false},
		{"a zip", []byte("PK\x03\x04"), 0, false, false},
		{"a declared length the input fills", []byte("\x80\x04\x8e\x00\x00\x00\x00\x01\x00\x00\x00"), 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &endless{head: append([]byte(nil), tc.head...), fill: tc.fill}
			var buf bytes.Buffer
			c := CopyOnce(&buf, r, limit)
			if c.Fails != tc.fails || c.Complete != tc.complete {
				t.Fatalf("Fails %v Complete %v, want %v %v", c.Fails, c.Complete, tc.fails, tc.complete)
			}
			if c.N != int64(buf.Len()) || c.N != r.n {
				t.Errorf("N %d, copied %d, read %d: all that is read is copied", c.N, buf.Len(), r.n)
			}
			if tc.fails && c.N > 1<<20 {
				t.Errorf("copied %d bytes before stopping", c.N)
			}
			if !tc.fails && c.N != limit {
				t.Errorf("copied %d bytes, want the limit %d", c.N, limit)
			}
			if !bytes.HasPrefix(buf.Bytes(), tc.head) {
				t.Errorf("the copy does not start with the input")
			}
		})
	}

	t.Run("finite", func(t *testing.T) {
		// an input that ends is copied whole: after its first stream's
		// STOP, whatever follows, ...
		for _, in := range [][]byte{nil, valid, append(append([]byte(nil), valid...), "junk"...)} {
			var buf bytes.Buffer
			c := CopyOnce(&buf, bytes.NewReader(in), -1)
			if !c.Complete || !bytes.Equal(buf.Bytes(), in) {
				t.Errorf("%d bytes: Complete %v, copied %d", len(in), c.Complete, buf.Len())
			}
		}
		// ... but not when it fails in the first MiB with more to read
		c := CopyOnce(io.Discard, bytes.NewReader(make([]byte, 3<<20)), -1)
		if !c.Fails || c.Complete || c.N > 1<<20 {
			t.Errorf("3 MiB of zeros: Fails %v Complete %v N %d", c.Fails, c.Complete, c.N)
		}
	})

	t.Run("a failure past the watch", func(t *testing.T) {
		// a list of strings over the first MiB, then an invalid opcode:
		// copied on to the limit (the watch follows the first MiB only)
		var in bytes.Buffer
		in.WriteString("\x80\x03]q\x00(")
		for in.Len() < 2<<20 {
			in.WriteString("X\x03\x00\x00\x00abc")
		}
		r := &endless{head: in.Bytes(), fill: 0}
		c := CopyOnce(io.Discard, r, 4<<20)
		if c.Fails || c.N != 4<<20 {
			t.Errorf("Fails %v, copied %d", c.Fails, c.N)
		}
	})

	t.Run("write error", func(t *testing.T) {
		in := "\x80\x04B\xe8\x03\x00\x00" + strings.Repeat("x", 1000) + "."
		c := CopyOnce(&failingWriter{n: 100}, strings.NewReader(in), -1)
		if c.WriteErr == nil || c.Complete || c.N+int64(len(c.Pending)) == 0 {
			t.Errorf("WriteErr %v Complete %v N %d pending %d", c.WriteErr, c.Complete, c.N, len(c.Pending))
		}
	})

	t.Run("read error", func(t *testing.T) {
		c := CopyOnce(io.Discard, errReader{}, -1)
		if c.ReadErr == nil || c.Complete || c.Fails {
			t.Errorf("ReadErr %v Complete %v Fails %v", c.ReadErr, c.Complete, c.Fails)
		}
	})
}

// chunked reads b at most n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

// FuzzCopyOnce: what CopyOnce copies is the input's start, all of it
// unless it stops early, and it stops early only on an input the opener
// refuses or reads on past a bare pickle's failure (a joblib file's
// arrays), whatever the sizes of the reads.
func FuzzCopyOnce(f *testing.F) {
	f.Add([]byte("\x80\x04K\x01."), uint8(0))
	f.Add([]byte("\x80\x04N.\x80\x04N.junk"), uint8(3))
	f.Add([]byte("(lp0\nI1\na."), uint8(255))
	f.Add(make([]byte, 300), uint8(7))
	f.Add([]byte("hello world\n"), uint8(1))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint8(2))
	if b, err := os.ReadFile("../../testdata/arrays/bools.joblib"); err == nil {
		f.Add(b, uint8(100))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		var buf bytes.Buffer
		c := CopyOnce(&buf, &chunked{b: b, n: int(n) + 1}, -1)
		if c.N != int64(buf.Len()) || !bytes.Equal(buf.Bytes(), b[:buf.Len()]) {
			t.Fatalf("copied %d bytes (N %d), not the input's start", buf.Len(), c.N)
		}
		if c.Fails == c.Complete || c.ReadErr != nil || c.WriteErr != nil {
			t.Fatalf("Fails %v Complete %v ReadErr %v WriteErr %v", c.Fails, c.Complete, c.ReadErr, c.WriteErr)
		}
		if c.Complete && len(b) != buf.Len() {
			t.Fatalf("complete, %d of %d bytes", buf.Len(), len(b))
		}
		if c.Fails {
			doc, err := OpenReader(bytes.NewReader(b), "-", pickle.Options{}, Options{})
			if err == nil && !strings.Contains(doc.Format, "joblib") {
				t.Fatalf("stopped at %d bytes of %d; the opener reads it as %s", buf.Len(), len(b), doc.Format)
			}
		}
	})
}
