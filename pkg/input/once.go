package input

import "os"

// ReadOnce reports whether path names an input that can be read only once,
// from its start: one that exists and is neither a regular file nor a
// directory (a FIFO, a pipe's /dev/fd/N, a character device, a socket),
// judged by its metadata alone (os.Stat opens nothing). A FIFO opened and
// closed to look at it loses its writer (what it wrote is gone, or it dies
// of SIGPIPE), and the next open waits for another writer forever: the
// paths that open a file to peek at it leave such an input alone, and the
// commands that read an input more than once read it once, as they read
// stdin ("-", which is not such a path).
func ReadOnce(path string) bool {
	if path == "-" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}
