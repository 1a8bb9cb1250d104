package pickle

import (
	"errors"
	"io/fs"
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
