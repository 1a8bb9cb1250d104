// Package testfile holds what the tests of several packages do with the
// committed fixtures (they are test helpers: no production code imports
// this package).
package testfile

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// Gunzip returns the decompressed bytes of gzip file src.
func Gunzip(t testing.TB, src string) []byte {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// GunzipTo writes the decompressed bytes of gzip file src to dst.
func GunzipTo(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.WriteFile(dst, Gunzip(t, src), 0o644); err != nil {
		t.Fatal(err)
	}
}
