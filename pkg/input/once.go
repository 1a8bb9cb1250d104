package input

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
)

// ReadOnce reports whether path names an input that can be read only once,
// from its start: stdin ("-"), a pipe (a FIFO, a pipe's /dev/fd/N:
// `<(zcat a.pkl.gz)`) or a socket, the last judged by its metadata alone
// (os.Stat opens nothing). A FIFO opened and closed to look at it loses its
// writer (what it wrote is gone, or it dies of SIGPIPE), and the next open
// waits for another writer forever: the paths that open a file to peek at
// it leave such an input alone, and the commands that read an input more
// than once read it once, as they read stdin. A device is not one:
// /dev/zero and /dev/null read the same however often they are opened, and
// the paths for files give their errors at once.
func ReadOnce(path string) bool {
	if path == "-" {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0
}

// watchLen is how far into a read-once input CopyOnce follows its first
// pickle stream: far enough for what is not a pickle at all (zeros, text,
// an executable) to fail, short enough to cost nothing on a large pickle.
const watchLen = 1 << 20

// Copied is what CopyOnce copied and why it stopped.
type Copied struct {
	N        int64  // bytes written to w
	Pending  []byte // bytes read from r that w refused (WriteErr)
	Complete bool   // r ended (io.EOF) and all of it is in w
	// Fails: the copy stopped where the input's first pickle stream fails
	// as a bare pickle's, before its STOP. Reading it fails there too,
	// unless the opener knows bytes inside the stream (a joblib file's
	// arrays): the caller reads the copy and the rest of r as it reads r,
	// to that error or to the end.
	Fails    bool
	ReadErr  error // r's error, other than io.EOF
	WriteErr error // w's error
}

// CopyOnce copies r, a read-once input (stdin, a pipe: ReadOnce), to w
// until r ends or limit bytes are copied (limit < 0: no limit), for the
// commands that must read such an input twice. It stops early (Fails) when
// an input Open reads as a bare pickle (PlainPickle) has a first stream
// that fails within its first watchLen bytes before its STOP, at an opcode
// or argument no reader takes (pickle.Reader.Skim; the input's end is not
// such a failure, a container is copied as it is). Without it an endless
// pipe of what is not a pickle (`pk canon - < /dev/zero`) was copied until
// memory or the limit ran out before the first byte was read as a pickle.
func CopyOnce(w io.Writer, r io.Reader, limit int64) Copied {
	t := &onceTee{r: r, w: w, left: limit}
	head := make([]byte, 16)
	k, _ := io.ReadFull(t, head) // (copied through t)
	if t.stopped() == nil && PlainPickle(head[:k]) {
		watch := &io.LimitedReader{R: io.MultiReader(bytes.NewReader(head[:k]), t), N: watchLen}
		rd := pickle.NewReader(watch, -1, "-")
		var ops [256]pickle.Skimmed
		for {
			n, err := rd.Skim(ops[:])
			if err != nil {
				// the input ended (before its STOP), the watch did, t
				// stopped, or the stream fails: only the last stops here
				if !t.eof && t.stopped() == nil && watch.N > 0 {
					return t.copied(true)
				}
				break
			}
			if n > 0 && ops[n-1].Code == pickle.STOP {
				break
			}
		}
	}
	buf := make([]byte, 1<<20)
	for t.stopped() == nil {
		if _, err := t.Read(buf); err == io.EOF {
			break
		}
	}
	return t.copied(false)
}

// onceTee reads r and writes what it reads to w, up to left bytes.
type onceTee struct {
	r       io.Reader
	w       io.Writer
	left    int64 // < 0: no limit
	n       int64
	eof     bool
	pending []byte
	rerr    error
	werr    error
}

var errCopyStopped = errors.New("copy stopped")

// stopped returns errCopyStopped once the copy cannot go on: the limit
// is reached, or r or w failed (r's end is not such a stop).
func (t *onceTee) stopped() error {
	if t.left == 0 || t.rerr != nil || t.werr != nil {
		return errCopyStopped
	}
	return nil
}

func (t *onceTee) Read(p []byte) (int, error) {
	if t.eof {
		return 0, io.EOF
	}
	if err := t.stopped(); err != nil {
		return 0, err
	}
	if t.left > 0 && int64(len(p)) > t.left {
		p = p[:t.left]
	}
	n, err := t.r.Read(p)
	if n > 0 {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			t.werr, t.pending = werr, append([]byte(nil), p[:n]...)
			return 0, errCopyStopped
		}
		t.n += int64(n)
		if t.left > 0 {
			t.left -= int64(n)
		}
	}
	switch {
	case err == io.EOF:
		t.eof = true
	case err != nil:
		t.rerr = err
		return n, errCopyStopped
	}
	return n, err
}

func (t *onceTee) copied(fails bool) Copied {
	return Copied{N: t.n, Pending: t.pending, Complete: t.eof && t.werr == nil, Fails: fails, ReadErr: t.rerr, WriteErr: t.werr}
}
