package input

import (
	"io/fs"
	"os"
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
