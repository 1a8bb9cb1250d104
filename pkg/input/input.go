// Package input owns the way pk opens what a user hands it: a bare pickle
// stream, a file of several pickles, stdin, and (as containers are added)
// compressed pickles, PyTorch and joblib files and .npy files, recognised by
// content, never by name. Every command opens its inputs through Open, so
// they all see the same parts.
package input

import (
	"github.com/pk-tools/pk/pkg/pickle"
)

// Part is one piece of an input: a pickle file (one or more streams), or
// raw bytes that belong to the content (a tensor storage, an array's data).
type Part struct {
	// Name says where the part sits inside the input ("" for a bare pickle,
	// "archive/data.pkl" inside a zip, ...).
	Name string
	// Pickle is set for pickle parts.
	Pickle *pickle.File
	// Raw is set for raw data parts.
	Raw *Raw
}

// Raw is a run of bytes that is content but not pickle.
type Raw struct {
	Len    int64
	Digest []byte // with Options.NewHash
	Prefix []byte
}

// Doc is an opened input.
type Doc struct {
	Path   string
	Format string // "pickle", later "gzip", "torch-zip", "joblib", ...
	Size   int64  // bytes of the input as given
	Parts  []Part
}

// Open reads path ("-" for stdin).
func Open(path string, opt pickle.Options) (*Doc, error) {
	f, err := pickle.ParseFile(path, opt)
	if err != nil {
		return nil, err
	}
	return &Doc{Path: path, Format: "pickle", Size: f.Size, Parts: []Part{{Pickle: f}}}, nil
}
