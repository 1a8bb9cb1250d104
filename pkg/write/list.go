package write

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
)

// pk canon -l: whether a file is its own canonical output. The file's
// bytes are not kept: the output is compared with them as it is written,
// reading the file as it goes, and the comparison stops at the first
// difference. So -l holds what writing holds, not the file besides.

// errDiffers stops a write into a fileCompare at the first difference.
var errDiffers = errors.New("the output differs from the file")

// fileCompare compares what is written to it with the bytes of r.
type fileCompare struct {
	r       *bufio.Reader
	buf     []byte
	differs bool
}

func newFileCompare(f io.Reader) *fileCompare {
	return &fileCompare{r: bufio.NewReaderSize(f, 64<<10), buf: make([]byte, 64<<10)}
}

func (c *fileCompare) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !c.differs {
		k := min(len(p), len(c.buf))
		m, _ := io.ReadFull(c.r, c.buf[:k])
		if m < k || !bytes.Equal(c.buf[:k], p[:k]) {
			c.differs = true
		}
		p = p[k:]
	}
	if c.differs {
		return 0, errDiffers
	}
	return n, nil
}

// sameFile reports whether what write writes is the file at path, byte
// for byte; size is what write will write (-1: not known), which a file of
// another size is told apart by without reading it. Reading the file and
// writing stop at the first difference.
func sameFile(path string, size int64, write func(io.Writer) error) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if size >= 0 && fi.Mode().IsRegular() && fi.Size() != size {
		return false, nil
	}
	c := newFileCompare(f)
	werr := write(c)
	if c.differs {
		return false, nil
	}
	if werr != nil {
		return false, werr
	}
	_, err = c.r.ReadByte() // the file must end where the output does
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// sameAsInput is Canonical for an output whose input's bytes were not
// kept: the output compared with the file at r.inPath.
func (r *Result) sameAsInput() bool {
	if r.inPath == "" {
		return false
	}
	same, err := sameFile(r.inPath, r.Size(), func(w io.Writer) error {
		_, err := r.WriteTo(w)
		return err
	})
	return err == nil && same
}

// listSame is pk canon -l's look at a pickle output before it is checked:
// out holds the written streams (in memory or spilled), which the bytes
// after them (trail) and the compression follow, and the whole is compared
// with the file at path as it is read from out (the compressor's output as
// it is written: it stops at the first difference). When they are the
// same, the file is its own output: it reads back as itself, so the checks
// that follow in File (the output's pk hash, stream by stream) hold, and
// listSame returns the Result (the output handed to it). Otherwise it
// returns nil and out as it was.
func listSame(path, format, compression string, out *outBuf, trail *pickle.Trailing) *Result {
	mark := out.Len()
	res := &Result{Format: format, inPath: path, verdict: 1}
	if !listCompare(path, compression, out, trail, res) {
		out.Truncate(mark)
		res.Close()
		return nil
	}
	return res
}

// listCompare appends the trailing bytes to out and compares out,
// compressed, with the file; when it is the file, it hands the output to
// res (out, or the compressed bytes kept as they were compared) and
// returns true. An error (met again by File when it writes the output, or
// the comparison's) is a difference: the output is then checked and
// compared as any.
func listCompare(path, compression string, out *outBuf, trail *pickle.Trailing, res *Result) bool {
	if trail != nil {
		if err := trailing(path, nil, compression, trail, out); err != nil {
			return false
		}
	}
	if compression == "" {
		same, err := sameFile(path, int64(out.Len()), out.writeTo)
		return err == nil && same && out.result(res) == nil
	}
	// the compressed bytes kept as they are compared (the Result's output
	// when they are the file's); the compressor stops at the first
	// difference of what it writes
	z := outBuf{spill: true}
	defer z.remove()
	same, err := sameFile(path, -1, func(w io.Writer) error {
		if err := compressInto(compression, out, io.MultiWriter(w, &z)); err != nil {
			return err
		}
		return z.flush()
	})
	return err == nil && same && z.result(res) == nil
}
