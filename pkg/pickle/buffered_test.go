package pickle

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// chunkReader returns at most n bytes a read, so the read buffer holds
// opcodes cut at every place.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// opRec is everything NextInto gives about an opcode (Str copied), and the
// reader's offset after it (-1: not taken, inside a batch).
type opRec struct {
	Code                 Opcode
	Offset, Len, Int     int64
	Big                  string
	IsBool               bool
	Str, Name            string
	Blob                 bool
	BlobLen, BlobOffset  int64
	BlobPrefix, BlobHash string
	At                   int64
}

func opRecOf(o *Op, at int64) opRec {
	r := opRec{Code: o.Code, Offset: o.Offset, Len: o.Len, Int: o.Int, IsBool: o.IsBool, Str: string([]byte(o.Str)), Name: o.Name, At: at}
	if o.Big != nil {
		r.Big = o.Big.String()
	}
	if o.Blob != nil {
		r.Blob, r.BlobLen, r.BlobOffset, r.BlobPrefix, r.BlobHash = true, o.Blob.Len, o.Blob.Offset, o.Blob.Prefix, string(o.Blob.Digest)
	}
	return r
}

// readAllOps reads data with NextInto alone (batch 0) or with NextBuffered
// in batches of batch opcodes, NextInto where it returns 0. It returns the
// opcodes and the error that ended it.
func readAllOps(data []byte, size int64, chunk, batch int, borrow bool, th int64) ([]opRec, error) {
	var src io.Reader = bytes.NewReader(data)
	if chunk > 0 {
		src = bufio.NewReaderSize(chunkReader{src, chunk}, 64<<10)
	}
	r := NewReader(src, size, "t.pkl")
	r.Borrow = borrow
	r.BlobThreshold = th
	var out []opRec
	ops := make([]Op, max(batch, 1))
	for {
		if batch > 0 {
			if n := r.NextBuffered(ops); n > 0 {
				for i := range ops[:n] {
					out = append(out, opRecOf(&ops[i], -1))
				}
				out[len(out)-1].At = r.Offset()
				continue
			}
		}
		if err := r.NextInto(&ops[0]); err != nil {
			return out, err
		}
		out = append(out, opRecOf(&ops[0], r.Offset()))
	}
}

// bufferedAgrees checks that reading with NextBuffered gives the opcodes,
// offsets and error of NextInto alone, for a known and an unknown size,
// whole and cut reads, borrowed and copied strings, two blob thresholds
// (not every combination: the test reads a thousand files).
func bufferedAgrees(t *testing.T, name string, data []byte) {
	t.Helper()
	type config struct {
		size      int64
		chunk     int
		threshold int64
	}
	configs := []config{{int64(len(data)), 0, 0}, {-1, 7, 0}, {int64(len(data)), 7, 5}}
	if len(data) <= 4<<10 {
		configs = append(configs, config{-1, 1, 5}, config{int64(len(data)), 1, 0})
	}
	for _, c := range configs {
		want, werr := readAllOps(data, c.size, c.chunk, 0, false, c.threshold)
		for _, batch := range []int{3, 256} {
			got, gerr := readAllOps(data, c.size, c.chunk, batch, batch == 3, c.threshold)
			n := min(len(got), len(want))
			for i := 0; i < n; i++ {
				w := want[i]
				if got[i].At < 0 {
					w.At = -1 // inside a batch: the offset is not seen
				}
				if got[i] != w {
					t.Fatalf("%s (%+v, batch %d): opcode %d: %+v, NextInto %+v", name, c, batch, i, got[i], w)
				}
			}
			if len(got) != len(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s (%+v, batch %d): %d opcodes (%v), NextInto %d (%v)", name, c, batch, len(got), gerr, len(want), werr)
			}
		}
	}
}

func TestNextBufferedAgrees(t *testing.T) {
	files := 0
	filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "bench" {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, _ := d.Info(); fi == nil || fi.Size() > 64<<10 {
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
			bufferedAgrees(t, p, data)
		}
		return nil
	})
	if files < 100 {
		t.Errorf("only %d files", files)
	}
	for _, c := range hostileCases() {
		if len(c.in) <= 64<<10 {
			bufferedAgrees(t, "hostile "+c.name, c.in)
		}
	}
	for i, c := range validSamples {
		bufferedAgrees(t, fmt.Sprint("valid sample ", i), []byte(c))
	}
	// frames: opcodes ending at, and crossing, a frame's end; bad UTF-8;
	// a SHORT_BINUNICODE cut by the end of the input
	for i, c := range []string{
		"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01K\x02\x94\x95\x02\x00\x00\x00\x00\x00\x00\x00N.",
		"\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00K\x01J\x01\x02\x03\x04.",
		"\x80\x04\x95\x04\x00\x00\x00\x00\x00\x00\x00\x8c\x05abcdef.",
		"\x80\x04\x8c\x02\xff\xfe.",
		"\x80\x04\x8c\x05abc",
		"\x80\x04C\x03ab",
		"\x80\x04J\x01\x02",
		"\x80\x04K\x01\xff",
	} {
		bufferedAgrees(t, fmt.Sprint("case ", i), []byte(c))
	}
}

// FuzzNextBuffered: reading with NextBuffered gives what NextInto gives.
func FuzzNextBuffered(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		bufferedAgrees(t, "fuzz", b)
	})
}
