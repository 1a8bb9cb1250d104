package write

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
)

// TestSameFile: the comparison of pk canon -l (list.go) reads the file as
// the output is written to it, whatever the sizes of the writes and across
// its 64 KiB reads: the same bytes are the file; a last byte changed, a
// byte more or less, are not; writing stops at the first difference.
func TestSameFile(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	b := make([]byte, 200<<10+3)
	rng.Read(b)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// writes of uneven sizes, as a compressor or the replay gives them
	chunked := func(w io.Writer, data []byte) error {
		for i, n := 0, 1; len(data) > 0; i, n = i+1, n*3%70001+1 {
			k := min(n, len(data))
			if _, err := w.Write(data[:k]); err != nil {
				return err
			}
			data = data[k:]
		}
		return nil
	}
	last := bytes.Clone(b)
	last[len(last)-1] ^= 1
	first := bytes.Clone(b)
	first[0] ^= 1
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"same", b, true},
		{"last byte", last, false},
		{"first byte", first, false},
		{"one byte less", b[:len(b)-1], false},
		{"one byte more", append(bytes.Clone(b), 0), false},
		{"empty", nil, false},
	} {
		for _, size := range []int64{int64(len(c.data)), -1} {
			got, err := sameFile(p, size, func(w io.Writer) error { return chunked(w, c.data) })
			if err != nil || got != c.want {
				t.Errorf("%s (size %d): same %v, %v; want %v", c.name, size, got, err, c.want)
			}
		}
	}
	// the write stops at the first difference: nothing is written past
	// the chunk that differs
	writes := 0
	same, err := sameFile(p, -1, func(w io.Writer) error {
		for off := 0; off < len(first); off += 4096 {
			if _, err := w.Write(first[off:min(off+4096, len(first))]); err != nil {
				return err
			}
			writes++
		}
		return nil
	})
	if same || err != nil || writes != 0 {
		t.Errorf("first byte differs: same %v, %v, %d writes went through (want none)", same, err, writes)
	}
	if _, err := sameFile(filepath.Join(t.TempDir(), "missing"), 1, func(io.Writer) error { return nil }); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestListCanonical: pk canon -l's answer (File with keep, then
// Canonical) without the input's bytes held: a canonical file of several
// 64 KiB reads is its own output, taken as it is written before any check
// of it (the early answer of listSame), with the output's bytes in Data; a
// non-canonical one is not (a .npy file's output, which is not a pickle,
// is compared with the file once written). For compressed inputs the comparison is of the
// compressed bytes: every bz2 fixture's canonical output is its own, and
// the same output with a padding bit flipped in its last byte (after
// bzip2's end-of-stream CRC: it decompresses to the same pickle, the same
// pk hash) is listed, and written gives the canonical bytes back.
func TestListCanonical(t *testing.T) {
	dir := t.TempDir()
	// a protocol 2 pickle of 40000 floats: 360 kB, other bytes than its
	// canonical output (protocol 4, framed)
	var in bytes.Buffer
	in.WriteString("\x80\x02](")
	for i := range 40000 {
		in.WriteByte('G')
		binary.Write(&in, binary.BigEndian, float64(i)/7)
	}
	in.WriteString("e.")
	p := filepath.Join(dir, "floats.pkl")
	if err := os.WriteFile(p, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := File(p, Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Canonical() || res.Input != nil {
		t.Errorf("%s: listed as canonical (or its bytes kept: %d)", p, len(res.Input))
	}
	c := filepath.Join(dir, "floats.c.pkl")
	if err := os.WriteFile(c, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := File(c, Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if again.verdict != 1 || !again.Canonical() || !bytes.Equal(again.Data, res.Data) || again.Input != nil {
		t.Errorf("%s: the canonical output is not taken as its own output as written (verdict %d)", c, again.verdict)
	}
	// another protocol: not its own output
	if r, err := File(c, Options{Protocol: 2}, true); err != nil || r.Canonical() {
		t.Errorf("%s at protocol 2: canonical %v, %v", c, r != nil && r.Canonical(), err)
	}

	flipped := 0
	for _, f := range bz2Files(t) {
		res, err := File(f, Options{}, false)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		c := filepath.Join(dir, filepath.Base(f))
		os.WriteFile(c, res.Data, 0o644)
		r, err := File(c, Options{}, true)
		// (a .npy file's output is not a pickle's: compared once written)
		if err != nil || !r.Canonical() || (r.verdict != 1) != strings.Contains(r.Format, "npy") || !bytes.Equal(r.Data, res.Data) {
			t.Errorf("%s: the canonical bz2 output is not its own (%v)", f, err)
		}
		tail := bytes.Clone(res.Data)
		tail[len(tail)-1] ^= 1
		ft := c + ".tail.bz2"
		os.WriteFile(ft, tail, 0o644)
		if h, err := canon.HashFile(ft, Options{}.CanonOptions()); err != nil || h.Digest != digest(t, c, Options{}) {
			continue // no padding bit in its last byte: another file
		}
		flipped++
		r, err = File(ft, Options{}, true)
		if err != nil || r.Canonical() || !bytes.Equal(r.Data, res.Data) {
			t.Errorf("%s: its last byte changed, a padding bit: not listed, or written otherwise (%v)", f, err)
		}
	}
	if flipped == 0 {
		t.Error("no bz2 output has a padding bit in its last byte: the last-byte case was not tried")
	}
	t.Logf("%d bz2 outputs with a padding bit flipped in their last byte are listed", flipped)
}
