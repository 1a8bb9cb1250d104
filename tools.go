//go:build tools

// This file pins modules that pk's packages and tests use, so that
// `go mod tidy` keeps them while the code that imports them is written.
package main

import (
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/nlpodyssey/gopickle/pickle"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/ulikunitz/xz"
	_ "github.com/zeebo/xxh3"
	_ "golang.org/x/term"
)
