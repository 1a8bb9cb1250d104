package pickle

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// skimAll reads data with Skim in batches of batch opcodes.
func skimAll(data []byte, size int64, batch int) ([]Skimmed, error) {
	r := NewReader(bytes.NewReader(data), size, "t.pkl")
	var out []Skimmed
	buf := make([]Skimmed, batch)
	for {
		n, err := r.Skim(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

func nextAll(data []byte, size int64) ([]Skimmed, error) {
	r := NewReader(bytes.NewReader(data), size, "t.pkl")
	var out []Skimmed
	for {
		o, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, Skimmed{Code: o.Code, Offset: o.Offset, Int: o.Int, Big: o.Big != nil})
	}
}

// skimAgrees checks that Skim reports what Next reads, and fails where Next
// fails (except on the text of a short str, which Skim does not decode).
func skimAgrees(t *testing.T, name string, data []byte) {
	t.Helper()
	for _, size := range []int64{int64(len(data)), -1} {
		want, werr := nextAll(data, size)
		for _, batch := range []int{3, 256} {
			got, gerr := skimAll(data, size, batch)
			n := min(len(got), len(want))
			for i := 0; i < n; i++ {
				if got[i] != want[i] {
					t.Fatalf("%s (size %d, batch %d): opcode %d: Skim %+v, Next %+v", name, size, batch, i, got[i], want[i])
				}
			}
			var pe *Error
			if errors.As(werr, &pe) && len(got) > len(want) && pe.Op == "SHORT_BINUNICODE" {
				continue // the documented difference: Skim skips the text
			}
			if len(got) != len(want) || (gerr == io.EOF) != (werr == io.EOF) {
				t.Fatalf("%s (size %d, batch %d): Skim read %d opcodes (%v), Next %d (%v)", name, size, batch, len(got), gerr, len(want), werr)
			}
			if werr != io.EOF && gerr.Error() != werr.Error() {
				t.Fatalf("%s: Skim error %v, Next %v", name, gerr, werr)
			}
		}
	}
}

func TestSkimAgreesWithNext(t *testing.T) {
	files := 0
	filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "bench" {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, _ := d.Info(); fi == nil || fi.Size() > 8<<20 {
			return nil
		}
		switch filepath.Ext(p) {
		case ".pkl", ".pickle", ".p", ".bin":
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil {
			files++
			skimAgrees(t, p, data)
		}
		return nil
	})
	if files < 100 {
		t.Errorf("only %d files", files)
	}
	for _, c := range hostileCases() {
		if len(c.in) <= 64<<10 { // the large ones repeat one opcode a million times
			skimAgrees(t, "hostile "+c.name, c.in)
		}
	}
}

// TestSkimStr: the payload SkimStr gives of a short argument in a window is
// the Op.Str NextBuffered decodes there, and it refuses where NextBuffered
// stops (a str not valid UTF-8 with surrogates passed) and on other opcodes.
func TestSkimStr(t *testing.T) {
	for _, c := range []struct {
		op   byte
		arg  string
		want bool
	}{
		{0x8c, "name", true}, {0x8c, "", true}, {0x8c, "é\u20ac", true},
		{0x8c, "a\xed\xa0\x80b", true}, // a surrogate, passed
		{0x8c, "a\xffb", false}, {0x8c, "\xc3", false},
		{'C', "\xff\x00", true}, {'U', "\xffx", true}, // bytes, Py2 str: any bytes
	} {
		data := append([]byte{c.op, byte(len(c.arg))}, c.arg...)
		data = append(data, 'N', '.')
		r := NewReader(bytes.NewReader(data), int64(len(data)), "t.pkl")
		r.Borrow = true
		r.Peek(1) // (fills the read buffer)
		win, th := r.SkimWindow()
		if _, ok := SkimOp(win, 0, th); !ok {
			t.Fatalf("%q: SkimOp refuses it", data)
		}
		p, ok := SkimStr(win, 0)
		ops := make([]Op, 1)
		n := r.NextBuffered(ops)
		if ok != c.want || (n == 1) != c.want || ok && string(p) != ops[0].Str {
			t.Errorf("%q: SkimStr %q %v, NextBuffered %d %q", data, p, ok, n, ops[0].Str)
		}
	}
	if _, ok := SkimStr([]byte{'K', 5}, 0); ok {
		t.Error("SkimStr took BININT1")
	}
}
