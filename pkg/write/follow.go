package write

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/pk-tools/pk/pkg/canon"
)

// The check of a large output, beside its writing. The output of a bare
// pickle file is checked by one pk hash of it (File, fastCheckOut), which
// for plain data is the streaming hash: two passes over the file. Once the
// output goes to its file (spill.go), that hash can read it as it is
// written: the first stream's writer knows what pass 2 needs from pass 1
// (its result is a list of so many items: canon.FastHint), so pass 2 and
// pass 1 both follow the file, beside the replay that writes it, on the
// machine's other processor. The check keeps its strength: the digest is
// still computed from the output's bytes, read from the file by pk's own
// reader, and compared with the input's; pass 1 confirms the hint, and when
// anything differs (a wrong hint, a second stream, data the streaming hash
// gives up on, an output truncated or rewritten meanwhile) the result is
// not used and fastCheckOut hashes the file afterwards, as it did before
// (canon.FastHashFollow says why a wrong hint cannot pass a wrong output).

// follow publishes how much of an outBuf's file is written, for the
// readers of the check that follows it.
type follow struct {
	mu   sync.Mutex
	cond sync.Cond
	f    *os.File
	n    int64 // bytes of f written (readable)
	done bool  // no more bytes come
	stop bool  // the readers fail: the check gave up or is abandoned

	res chan []byte // the check's sum (nil: it gave up), once
}

// errStopped is what a reader of a stopped follow gets.
var errStopped = errors.New("write: the check of the output was stopped")

// startFollow starts the check of an output whose first stream is about to
// be written, with the hint, and returns the follow its outBuf publishes to.
func startFollow(hint canon.FastHint, copt canon.Options) *follow {
	fl := &follow{res: make(chan []byte, 1)}
	fl.cond.L = &fl.mu
	stop := func() {
		fl.mu.Lock()
		fl.stop = true
		fl.cond.Broadcast()
		fl.mu.Unlock()
	}
	go func() {
		res, ok := canon.FastHashFollow(&followReader{fl: fl}, &followReader{fl: fl}, "pk canon output", hint, copt, stop)
		if !ok {
			fl.res <- nil
			return
		}
		fl.res <- res.Sum
	}()
	return fl
}

// wrote publishes that the file f holds n bytes.
func (fl *follow) wrote(f *os.File, n int64) {
	fl.mu.Lock()
	fl.f, fl.n = f, n
	fl.cond.Broadcast()
	fl.mu.Unlock()
}

// end says that no more bytes come (abandon: the check is not wanted, its
// readers fail) and returns the check's sum, nil when it gave up or was
// abandoned. The readers are done with the file when it returns.
func (fl *follow) end(abandon bool) []byte {
	fl.mu.Lock()
	fl.done = true
	fl.stop = fl.stop || abandon
	fl.cond.Broadcast()
	fl.mu.Unlock()
	sum := <-fl.res
	if abandon {
		return nil
	}
	return sum
}

// followReader reads the file of a follow from its start, waiting for
// bytes not yet written.
type followReader struct {
	fl  *follow
	off int64
}

func (r *followReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	fl := r.fl
	fl.mu.Lock()
	for r.off >= fl.n && !fl.done && !fl.stop {
		fl.cond.Wait()
	}
	stopped, n, f := fl.stop, fl.n, fl.f
	fl.mu.Unlock()
	if stopped {
		return 0, errStopped
	}
	if r.off >= n {
		return 0, io.EOF
	}
	m, err := f.ReadAt(p[:min(int64(len(p)), n-r.off)], r.off)
	r.off += int64(m)
	if err == io.EOF && m > 0 {
		err = nil
	}
	return m, err
}

// publisher is the writer of an outBuf's file when a check (or a
// compressor, zfollow.go) follows it: each write, once in the file, is
// published to each.
type publisher struct {
	f   *os.File
	fls []*follow
	n   int64
}

func (p *publisher) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	p.n += int64(n)
	for _, fl := range p.fls {
		fl.wrote(p.f, p.n)
	}
	return n, err
}

// followHint is the hint for the check of a stream written by w onto t as
// the first of out, and whether the check can follow it: the output will
// go to its file (it is spillAt bytes or more), and its result is a list
// built first (no effects before it).
func (w *streamWriter) followHint(t *tape, out *outBuf) (canon.FastHint, bool) {
	if !out.follows || out.fl != nil || out.Len() != 0 || len(w.effects) != 0 || t.outSize() < spillAt {
		return canon.FastHint{}, false
	}
	root := w.v.RootRef()
	n, ok := listLen(root)
	if !ok {
		return canon.FastHint{}, false
	}
	return canon.FastHint{RootLen: int64(n), Memoize: w.proto >= 4}, true
}

// followedSum ends the check that follows out, if any, and reports whether
// it found the sum.
func followedSum(out *outBuf, sum []byte) bool {
	if out.fl == nil {
		return false
	}
	if out.flush() != nil {
		out.endFollow(true)
		return false
	}
	got := out.endFollow(false)
	if got != nil && !bytes.Equal(got, sum) {
		followDiffers++
	}
	return got != nil && bytes.Equal(got, sum)
}

// followDiffers counts the checks beside the writing that found another
// sum than the input's (tests).
var followDiffers int
