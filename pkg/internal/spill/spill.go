// Package spill owns how pk puts a large slice of plain values (no
// pointers) out of memory for a while and brings it back: its bytes are
// written to a temporary file, removed at once where an open file can be
// (it goes with its descriptor), and read back whole. pk diff's walk of two
// large streams holds what it reads only at its start or end this way (its
// stores' Self and owners, one side's fingerprints while the other's are
// made), so that they do not add to its peak.
package spill

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// File holds a slice's bytes while it is out.
type File struct {
	f       *os.File
	n       int  // elements
	removed bool // the file's name is removed (it is deleted when closed)
}

// Out writes s to a temporary file in dir (os.TempDir when ""). The
// caller drops s; In brings it back. T must hold no pointers.
func Out[T any](s []T, dir string) (*File, error) {
	f, err := os.CreateTemp(dir, "pk-spill-*")
	if err != nil {
		return nil, err
	}
	o := &File{f: f, n: len(s)}
	o.removed = os.Remove(f.Name()) == nil
	if _, err := f.Write(bytesOf(s)); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// In reads the slice back, in a new array, and closes the file.
func In[T any](o *File) ([]T, error) {
	defer o.Close()
	s := make([]T, o.n)
	if _, err := o.f.ReadAt(bytesOf(s), 0); err != nil && !(err == io.EOF && len(s) == 0) {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading back a spilled table: %w", err)
	}
	return s, nil
}

// Close deletes the file (a File that is not brought back).
func (o *File) Close() {
	o.f.Close()
	if !o.removed {
		os.Remove(o.f.Name())
		o.removed = true
	}
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}
