package write

import (
	"io"

	"github.com/dsnet/compress/bzip2"
)

// bz2Level is the block size of the bz2 files pk canon writes: 9 (900 kB
// blocks, "BZh9"), what Python's bz2.compress, bz2.open and joblib's bz2
// compressor write by default.
const bz2Level = 9

// newBz2Writer is the bz2 compressor of compress: github.com/dsnet/compress's
// bzip2 writer at bz2Level. Go's standard library reads bzip2 only; the
// writer is a library's rather than pk's own because a bzip2 encoder is a
// Burrows-Wheeler transform (a suffix sort), move-to-front, two run-length
// codings and up to six Huffman tables a block with their selectors: a few
// thousand lines where a slip gives files that decompress wrongly or not at
// all, which dsnet/compress's tests already check against the reference
// implementation. Its output is a function of its input and level (no
// concurrency, no time stamp), so of the canonical pickle.
func newBz2Writer(w io.Writer) (io.WriteCloser, error) {
	return bzip2.NewWriter(w, &bzip2.WriterConfig{Level: bz2Level})
}
