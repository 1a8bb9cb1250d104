package input

import (
	"bufio"
	"errors"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
)

// errNotBare stops EachStream: the file is not a bare pickle after all.
var errNotBare = errors.New("not a bare pickle")

// EachStream reads the file at path stream by stream (pickle.ParseEach: one
// stream's store at a time, reused for the next), when it is a bare pickle
// file: a regular file that Open would read as plain pickle streams, and
// that turns out to be neither joblib content (a NumpyArrayWrapper's BUILD)
// nor legacy torch (its magic number as the first stream). fn gets each
// stream as it is read; the File has Size and Trailing. ok is false when
// the file is not such a file (nothing was finished, and whatever fn did is
// to be dropped) or any error stopped it, fn's included: the caller then
// opens the file with Open, which says what is wrong in its words.
//
// opt is used as it is, with opt.Replay set to the file (pickle.Keep's
// pass 1) and opt.AfterBuild to the joblib check (it must be nil); pk hash
// and pk scan take this path for bare pickles.
func EachStream(path string, opt pickle.Options, fn func(st *pickle.Stream) error) (file *pickle.File, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	br := bufio.NewReaderSize(f, 256<<10)
	if head, _ := br.Peek(16); len(head) == 0 || !PlainPickle(head) {
		return nil, false
	}
	opt.Replay = f
	opt.AfterBuild = func(_ *pickle.Reader, s *pickle.Store, n pickle.ID) error {
		if JoblibWrapper(s, n) {
			return errNotBare
		}
		return nil
	}
	rd := pickle.NewReader(br, fi.Size(), path)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	file, err = pickle.ParseEach(rd, opt, func(st *pickle.Stream) error {
		if st.Index == 0 && TorchLegacyMagic(st.Store()) {
			return errNotBare
		}
		return fn(st)
	})
	if err != nil {
		return nil, false
	}
	return file, true
}
