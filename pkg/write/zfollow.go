package write

import (
	"io"
)

// The compression of a large output, beside its writing. A compressed
// pickle file's output is written uncompressed (its streams are checked
// as a bare file's, spill.go) and compressed in the input's compression
// (compressOut). Once the output goes to its file, a compressor on a
// goroutine of its own follows the file as it is written (the follow of
// follow.go, without its check) and compresses it into an outBuf of its
// own, on the machine's other processor; when the output is complete, the
// compression is nearly done. The compressed bytes do not depend on how
// the output is cut into Writes (TestCompressorChunks), so they are those
// compressTo gives the complete output. Whatever rewrites what was written
// (a truncation, a reset) abandons it, and compressOut then compresses the
// output once complete, as before.

// zfollow is a compressor following an outBuf's file.
type zfollow struct {
	fl   *follow
	z    outBuf // the compressed bytes
	read int64  // the output's bytes compressed
	err  error
	done chan struct{}
}

// startZFollow starts compressing, in compression kind, what the outBuf's
// file will hold.
func startZFollow(kind string) *zfollow {
	zf := &zfollow{fl: &follow{}, z: outBuf{spill: true}, done: make(chan struct{})}
	zf.fl.cond.L = &zf.fl.mu
	go func() {
		defer close(zf.done)
		cw, err := newCompressor(kind, &zf.z)
		if err != nil {
			zf.err = err
			return
		}
		r := &followReader{fl: zf.fl}
		buf := make([]byte, compressChunk)
		for {
			n, rerr := io.ReadFull(r, buf)
			if n > 0 {
				if _, err := cw.Write(buf[:n]); err != nil {
					zf.err = err
					return
				}
				zf.read += int64(n)
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			if rerr != nil {
				zf.err = rerr
				return
			}
		}
		if err := cw.Close(); err != nil {
			zf.err = err
			return
		}
		zf.err = zf.z.flush()
	}()
	return zf
}

// end says that no more bytes come (abandon: the compression is not
// wanted) and returns the compressed output of the n bytes written, nil
// when it was abandoned or failed (its outBuf then removed).
func (zf *zfollow) end(abandon bool, n int64) *outBuf {
	fl := zf.fl
	fl.mu.Lock()
	fl.done = true
	fl.stop = fl.stop || abandon
	fl.cond.Broadcast()
	fl.mu.Unlock()
	<-zf.done
	if abandon || zf.err != nil || zf.read != n {
		zf.z.remove()
		return nil
	}
	return &zf.z
}

// endZ ends the compression that follows o's file, if any (abandon: its
// result is not wanted), and returns its output (nil: none).
func (o *outBuf) endZ(abandon bool) *outBuf {
	if o.zf == nil {
		return nil
	}
	if !abandon && o.flush() != nil {
		abandon = true
	}
	z := o.zf.end(abandon, o.n)
	o.zf = nil
	if z != nil {
		zFollowed++
	}
	return z
}

// zFollowed counts the outputs compressed beside their writing (tests).
var zFollowed int
