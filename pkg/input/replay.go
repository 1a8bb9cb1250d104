package input

import (
	"bufio"
	"io"
)

// replay is a decompressed layer read again, for the machine's pass 1
// (pickle.Options.Replay, used with Keep): an io.ReaderAt over a fresh
// decompressor of the file, read forward (the plan reads one stream from its
// first byte to its STOP), started again from the file's first byte when a
// read goes back. It reads at most limit decompressed bytes, as the main
// pass does, and holds its decompressor only while the plan reads
// (Release).
type replay struct {
	file  *readerAtSize
	kind  string
	limit int64
	r     io.Reader
	done  func()
	pos   int64
}

func (p *replay) ReadAt(b []byte, off int64) (int, error) {
	if p.r == nil || off < p.pos {
		p.Release()
		br := bufio.NewReaderSize(io.NewSectionReader(p.file.r, 0, p.file.size), 64<<10)
		dec, done, err := decompressor(p.kind, br, p.limit, p.file.size, func() io.Reader { return io.NewSectionReader(p.file.r, 0, p.file.size) })
		if err != nil {
			return 0, err
		}
		p.r, p.done, p.pos = dec, done, 0
		if p.limit > 0 {
			p.r = io.LimitReader(dec, p.limit)
		}
	}
	if off > p.pos {
		n, err := io.CopyN(io.Discard, p.r, off-p.pos)
		p.pos += n
		if err != nil {
			return 0, err
		}
	}
	n, err := io.ReadFull(p.r, b)
	p.pos += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// Release lets the decompressor go; a later read starts a new one.
func (p *replay) Release() {
	if p.done != nil {
		p.done()
	}
	p.r, p.done, p.pos = nil, nil, 0
}
