// Package testfile holds what the tests of several packages do with the
// committed fixtures (they are test helpers: no production code imports
// this package).
package testfile

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
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

// Compressions are the whole-file compressions Compress writes (bz2 has no
// Go writer: its fixtures are committed).
var Compressions = []string{"gzip", "zlib", "xz", "lzma", "zstd", "lz4"}

// Compress returns b compressed as kind (one of Compressions).
func Compress(t testing.TB, kind string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zlib":
		w = zlib.NewWriter(&buf)
	case "xz":
		w, err = xz.NewWriter(&buf)
	case "lzma":
		w, err = lzma.NewWriter(&buf)
	case "zstd":
		w, err = zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	case "lz4":
		w = lz4.NewWriter(&buf)
	default:
		t.Fatalf("no %s writer", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WriteCompressed writes b compressed as kind (Compress) to path and
// returns path.
func WriteCompressed(t testing.TB, kind, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, Compress(t, kind, b), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Sample is what a corpus test runs over: every item, or under -short
// (make test) every k-th of them, starting at the first, so the quick run
// keeps each test's code paths and make test-full (go test without -short,
// which CI runs too) walks every file. The subset is fixed: a failure in
// it reproduces.
func Sample[T any](xs []T, k int) []T {
	if !testing.Short() || k <= 1 {
		return xs
	}
	out := make([]T, 0, (len(xs)+k-1)/k)
	for i := 0; i < len(xs); i += k {
		out = append(out, xs[i])
	}
	return out
}

// ShortDiv is n under the full run and n/k (at least 1) under -short: the
// floor of a count a corpus test asserts, scaled with Sample.
func ShortDiv(n, k int) int {
	if !testing.Short() || k <= 1 {
		return n
	}
	return max(1, n/k)
}
