package pickle

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Error is the error every failure of the reader and the machine returns: it
// names the file, the byte offset of the opcode at fault, the opcode and the
// reason, in one line.
type Error struct {
	File   string // name of the input, "-" for stdin; may be empty
	Offset int64  // byte offset of the opcode (or of the byte) at fault
	Op     string // opcode name, or "" when no opcode was read
	Reason string
	// Stricter is true when CPython would accept the input and pk refuses it
	// on purpose (see docs/reader.md).
	Stricter bool
	// Released is true when the machine released a memo entry that a later
	// opcode reads (Options.Keep): pass 1 read other bytes than pass 2 (the
	// input changed, or a reader hook consumed bytes that are not opcodes,
	// as joblib's array data). The input is sound; read it again without
	// Keep.
	Released bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "offset %d", e.Offset)
	if e.Op != "" {
		b.WriteString(": ")
		b.WriteString(e.Op)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Stricter {
		b.WriteString(" (pk is stricter than CPython here)")
	}
	return b.String()
}

// AsError returns err as an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var pe *Error
	ok := errors.As(err, &pe)
	return pe, ok
}

// WithFile returns err with its File set to name when err is an *Error
// without one; other errors are wrapped with the name, but for those that
// name it already: one passed up twice, or the operating system's error on
// the file itself ("open NAME: no such file or directory", as every command
// words it).
func WithFile(err error, name string) error {
	if err == nil {
		return nil
	}
	if pe, ok := AsError(err); ok {
		if pe.File == "" {
			c := *pe
			c.File = name
			return &c
		}
		return err
	}
	if strings.HasPrefix(err.Error(), name+": ") {
		return err // already named (an error passed up twice)
	}
	var fe *fs.PathError
	if errors.As(err, &fe) && fe.Path == name && strings.Contains(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
