package cmd

import (
	"io"
	"os"
	"sync"

	"github.com/pk-tools/pk/pkg/input"
)

// Standard input is read by the packages under pkg/ as os.Stdin. To say
// what it looked like when it is not a pickle (input.Explain), pk keeps its
// first bytes: a regular file (pk hash - < f) is read again at the offset it
// started at; a pipe is put behind one of pk's own, which passes the bytes
// on and remembers the first input.SniffLen of them.
var stdinState struct {
	once    sync.Once
	mu      sync.Mutex
	head    []byte
	file    *os.File // a regular file: read the head from it
	fileOff int64
}

// watchStdin starts keeping standard input's first bytes; call it before
// anything reads os.Stdin, when an argument is "-".
func watchStdin() {
	stdinState.once.Do(func() {
		orig := os.Stdin
		if fi, err := orig.Stat(); err == nil && fi.Mode().IsRegular() {
			off, err := orig.Seek(0, io.SeekCurrent)
			if err == nil {
				stdinState.file, stdinState.fileOff = orig, off
			}
			return
		}
		r, w, err := os.Pipe()
		if err != nil {
			return
		}
		os.Stdin = r
		go func() {
			defer w.Close()
			buf := make([]byte, 64<<10)
			for {
				stdinState.mu.Lock()
				full := len(stdinState.head) >= input.SniffLen
				stdinState.mu.Unlock()
				if full {
					break
				}
				n, err := orig.Read(buf)
				if n > 0 {
					stdinState.mu.Lock()
					keep := min(n, input.SniffLen-len(stdinState.head))
					stdinState.head = append(stdinState.head, buf[:keep]...)
					stdinState.mu.Unlock()
					if _, werr := w.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
			io.Copy(w, orig)
		}()
	})
}

// stdinHead returns the first bytes read from standard input so far.
func stdinHead() []byte {
	if f := stdinState.file; f != nil {
		buf := make([]byte, input.SniffLen)
		n, _ := f.ReadAt(buf, stdinState.fileOff)
		return buf[:n]
	}
	stdinState.mu.Lock()
	defer stdinState.mu.Unlock()
	return append([]byte(nil), stdinState.head...)
}

// explain words an input error for a person (input.Explain: not a pickle,
// a directory, ...). Every command reports its input errors through it.
func explain(err error) error {
	return input.Explain(err, stdinHead())
}

// usesStdin reports whether args name standard input.
func usesStdin(args []string) bool {
	for _, a := range args {
		if a == "-" {
			return true
		}
	}
	return false
}
