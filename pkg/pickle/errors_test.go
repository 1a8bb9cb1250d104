package pickle

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestWithFile(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("boom"), "a.pkl: boom"},
		{WithFile(errors.New("boom"), "a.pkl"), "a.pkl: boom"}, // named once
		{&Error{Offset: 3, Op: "MARK", Reason: "r"}, (&Error{File: "a.pkl", Offset: 3, Op: "MARK", Reason: "r"}).Error()},
		{&Error{File: "b.pkl", Offset: 3, Op: "MARK", Reason: "r"}, (&Error{File: "b.pkl", Offset: 3, Op: "MARK", Reason: "r"}).Error()},
		// the system's error on the file names it already (pk diff said
		// "a.pkl: open a.pkl: ..."); on another file it does not
		{&fs.PathError{Op: "open", Path: "a.pkl", Err: fs.ErrNotExist}, "open a.pkl: file does not exist"},
		{&fs.PathError{Op: "open", Path: "/tmp/x", Err: fs.ErrNotExist}, "a.pkl: open /tmp/x: file does not exist"},
	} {
		if got := WithFile(c.err, "a.pkl").Error(); got != c.want {
			t.Errorf("WithFile(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestLengthPastAnyInput: a length that runs past the input names the bytes
// left when the size is known, and no count when it is not (stdin, a
// decompressed layer): "exceeds the 9223372036854775807 bytes left" was
// printed for stdin before session 41.
func TestLengthPastAnyInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff", "frame length 18446744073709551615 exceeds %s: pickle data was truncated"},
		{"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff", "declared length 18446744073709551615 exceeds %s: pickle data was truncated"},
	} {
		for _, size := range []int64{int64(len(c.in)), -1} {
			r := NewReader(strings.NewReader(c.in), size, "x.pkl")
			var err error
			for err == nil {
				var o Op
				err = r.next(&o)
			}
			past := "the 0 bytes left"
			if size < 0 {
				past = "the length of any input"
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Reason != fmt.Sprintf(c.want, past) {
				t.Errorf("%q, size %d: %v; want %q", c.in, size, err, fmt.Sprintf(c.want, past))
			}
		}
	}
}
