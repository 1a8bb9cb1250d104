package write

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/canon"
)

// outWriter is where the replay of a tape writes a stream (frame.go): a
// bytes.Buffer, or an outBuf.
type outWriter interface {
	io.Writer
	io.StringWriter
}

// outBuf holds the output of a bare pickle file as its streams are written:
// in memory up to spillAt bytes, then in a temporary file, which the
// output's check (one pk hash of it) reads and the Result hands on
// (Result.spool). So a large output is never held in memory besides the
// input's tables, nor written out a second time to be checked.
type outBuf struct {
	mem   bytes.Buffer
	spill bool // the output may go to a file past spillAt bytes

	f   *os.File      // the file, once spilled
	bw  *bufio.Writer // its writer
	n   int64         // bytes written to the file (flushed or not)
	err error         // the first error writing the file

	// follows: the check of the output may follow its file as it is
	// written (follow.go), with canon options copt; fl is that check
	follows bool
	copt    canon.Options
	fl      *follow

	// zkind: once the output goes to its file, a compressor in this
	// compression follows it (zfollow.go), zf
	zkind string
	zf    *zfollow

	// long: a stream written into the buffer has a payload of
	// pickle.DefaultBlobThreshold bytes or more (writeOut sets it, Reset
	// clears it), which pk hash streams and may read again (compressOut)
	long bool
}

// endFollow ends the check that follows the file, if any (abandon: its
// result is not wanted), and returns its sum (nil: none). Whatever
// rewrites what was written ends it first.
func (o *outBuf) endFollow(abandon bool) []byte {
	if o.fl == nil {
		return nil
	}
	sum := o.fl.end(abandon)
	o.fl = nil
	return sum
}

// spillAt is the size past which an outBuf that may spill writes to a
// temporary file (tests lower it).
var spillAt = 4 << 20

func (o *outBuf) spilled() bool { return o.f != nil }

// Len is the number of bytes written.
func (o *outBuf) Len() int {
	if o.f != nil {
		return int(o.n)
	}
	return o.mem.Len()
}

func (o *outBuf) Write(p []byte) (int, error) {
	if o.f == nil {
		if !o.spill || o.mem.Len()+len(p) <= spillAt || !o.toFile() {
			return o.mem.Write(p)
		}
	}
	n, err := o.bw.Write(p)
	o.n += int64(n)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

func (o *outBuf) WriteString(s string) (int, error) {
	if o.f == nil {
		if !o.spill || o.mem.Len()+len(s) <= spillAt || !o.toFile() {
			return o.mem.WriteString(s)
		}
	}
	n, err := o.bw.WriteString(s)
	o.n += int64(n)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// toFile moves what is in memory to a new temporary file, which takes what
// follows; false when no file can be made (the output stays in memory).
func (o *outBuf) toFile() bool {
	f, err := os.CreateTemp("", "pk-canon-*.pkl")
	if err != nil {
		o.spill = false
		return false
	}
	var w io.Writer = f
	var fls []*follow // (what follows the file)
	if o.fl != nil {
		fls = append(fls, o.fl)
	}
	if o.zkind != "" {
		o.zf = startZFollow(o.zkind)
		fls = append(fls, o.zf.fl)
	}
	if len(fls) > 0 {
		w = &publisher{f: f, fls: fls}
	}
	o.f, o.bw = f, bufio.NewWriterSize(w, 1<<20)
	o.n = int64(o.mem.Len())
	if _, err := o.bw.Write(o.mem.Bytes()); err != nil {
		o.err = err
	}
	o.mem = bytes.Buffer{}
	return true
}

// grow makes room for about n more bytes: in memory when they stay there,
// else the output goes to its file at once (no buffer grows to spillAt
// bytes first). more is room beyond n that the output may take (an
// estimate that may be high): it is made in memory within spillAt, and
// never sends the output to the file.
func (o *outBuf) grow(n, more int) {
	if o.f != nil {
		return
	}
	if !o.spill || o.mem.Len()+n <= spillAt || !o.toFile() {
		if o.spill {
			more = min(more, spillAt-o.mem.Len()-n) // (past spillAt the output goes to the file)
		}
		o.mem.Grow(n + max(more, 0))
	}
}

// flush writes what is buffered to the file and reports the first error
// writing it.
func (o *outBuf) flush() error {
	if o.f == nil {
		return nil
	}
	if err := o.bw.Flush(); err != nil && o.err == nil {
		o.err = err
	}
	if o.err != nil {
		return fmt.Errorf("writing the output to %s: %v", o.f.Name(), o.err)
	}
	return nil
}

// Truncate drops what was written past n bytes.
func (o *outBuf) Truncate(n int) error {
	o.endFollow(true)
	o.endZ(true)
	if o.f == nil {
		o.mem.Truncate(n)
		return nil
	}
	if err := o.flush(); err != nil {
		return err
	}
	if err := o.f.Truncate(int64(n)); err != nil {
		return err
	}
	if _, err := o.f.Seek(int64(n), io.SeekStart); err != nil {
		return err
	}
	o.n = int64(n)
	return nil
}

// Bytes returns the whole output in memory (a spilled one read back).
func (o *outBuf) Bytes() ([]byte, error) {
	if o.f == nil {
		return o.mem.Bytes(), nil
	}
	if err := o.flush(); err != nil {
		return nil, err
	}
	b := make([]byte, o.n)
	if _, err := o.f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("reading back the output (%s): %v", o.f.Name(), err)
	}
	return b, nil
}

// writeTo writes what was written to w, in Writes of compressChunk bytes
// (a spilled output read back from its file a chunk at a time).
func (o *outBuf) writeTo(w io.Writer) error {
	if o.f == nil {
		for b := o.mem.Bytes(); len(b) > 0; {
			k := min(len(b), compressChunk)
			if _, err := w.Write(b[:k]); err != nil {
				return err
			}
			b = b[k:]
		}
		return nil
	}
	if err := o.flush(); err != nil {
		return err
	}
	buf := make([]byte, compressChunk)
	for off := int64(0); off < o.n; {
		k, rerr := o.f.ReadAt(buf[:min(int64(len(buf)), o.n-off)], off)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				return err
			}
			off += int64(k)
		}
		if rerr != nil && off < o.n {
			return fmt.Errorf("reading back the output (%s): %v", o.f.Name(), rerr)
		}
	}
	return nil
}

// result hands what was written to res: its bytes in memory (Data), or
// its file (spool), which the buffer forgets.
func (o *outBuf) result(res *Result) error {
	if o.f == nil {
		res.Data = o.mem.Bytes()
		return nil
	}
	var err error
	res.spool, res.size, err = o.file()
	return err
}

// Reset empties the buffer (a spilled file is removed).
func (o *outBuf) Reset() {
	o.remove()
	o.mem.Reset()
	o.long = false
}

// file flushes a spilled output and returns its file's name and size,
// handing the file to the caller (the buffer forgets it).
func (o *outBuf) file() (string, int64, error) {
	o.endFollow(true)
	o.endZ(true)
	if err := o.flush(); err != nil {
		return "", 0, err
	}
	name, n := o.f.Name(), o.n
	if err := o.f.Close(); err != nil {
		os.Remove(name)
		o.f, o.bw, o.n = nil, nil, 0
		return "", 0, err
	}
	o.f, o.bw, o.n = nil, nil, 0
	return name, n, nil
}

// remove closes and removes a spilled file.
func (o *outBuf) remove() {
	o.endFollow(true)
	o.endZ(true)
	if o.f != nil {
		o.f.Close()
		os.Remove(o.f.Name())
		o.f, o.bw, o.n, o.err = nil, nil, 0, nil
	}
}
