package pickle

import (
	"errors"
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
	} {
		if got := WithFile(c.err, "a.pkl").Error(); got != c.want {
			t.Errorf("WithFile(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
