package canon

// The result of the streaming hash (see fast.go): written to the hash in
// canonical order, with the dropped values of a dict result or of an object
// result's state read again from the file.

import (
	"encoding/binary"
	"hash"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/zeebo/xxh3"
)

// emitTop writes the final encoding of the result, stack[top], to the hash
// without building it in the arena; the placeholders of dropped values (in
// a dict result, or in the state of a call result) are replaced by those
// values, read again from the file.
func (e *fastEnc) emitTop(top int) error {
	s := &e.stack[top]
	if s.c >= 0 {
		e.allowRoot = true
		err := e.seal(s, len(e.arena))
		e.allowRoot = false
		if err != nil {
			return err
		}
	}
	return e.emit(true, s.off, len(e.arena), [2]int32{s.kh, s.kt})
}

// replayAt replays the dropped value whose placeholder is b (0x00 and its
// index in e.drops).
func (e *fastEnc) replayAt(b []byte) error {
	i, k := binary.Uvarint(b[1:])
	if k <= 0 || 1+k != len(b) || i >= uint64(len(e.drops)) || e.drops[i].end == 0 {
		return errSlow
	}
	f, err := e.replayFile()
	if err != nil {
		return err
	}
	if e.hooks != nil {
		if give := e.hooks.replayedSum(int(i)); give != nil {
			x := xxh3.New()
			e.flush()
			if err := e.replayTo(&countHash{Hash: teeHash{Hash: x, to: e.h}}, f, e.drops[i]); err != nil {
				return err
			}
			give(x.Sum128())
			return nil
		}
	}
	return e.replay(f, e.drops[i])
}

// teeHash is Hash (written to) that also writes what it is given to to.
type teeHash struct {
	hash.Hash
	to io.Writer
}

func (t teeHash) Write(b []byte) (int, error) {
	t.to.Write(b)
	return t.Hash.Write(b)
}

// replayFile opens the file to read dropped values again from, once.
func (e *fastEnc) replayFile() (io.ReaderAt, error) {
	if e.replayF == nil {
		f, err := os.Open(e.path)
		if err != nil {
			return nil, errSlow
		}
		e.replayF = f
	}
	return e.replayF, nil
}

func (e *fastEnc) closeReplay() {
	if e.replayF != nil {
		e.replayF.Close()
		e.replayF = nil
	}
	if e.parFile != nil {
		e.parFile.Close()
		e.parFile = nil
	}
}

// replay encodes a dropped list value again from its bytes, straight into
// the hash: its items stream as those of a list result do. The memo holds
// every entry a GET in it can read (no index is written twice, pass 1
// made sure), with the values the first pass gave them.
func (e *fastEnc) replay(ra io.ReaderAt, d dropRec) error {
	e.flush()
	return e.replayTo(e.h, ra, d)
}

// replayTo is replay writing the value's encoding to h (the digest's hash,
// or the hash of an item's encoding, itemTracker.dropSum).
func (e *fastEnc) replayTo(h *countHash, ra io.ReaderAt, d dropRec) error {
	sub := &fastEnc{opt: e.opt, memo: e.memo, h: h, nmemo: d.memo0, proto: e.proto, path: e.path, size: e.size,
		scan: &fastScanResult{rootList: 0, rootLen: d.n, memoize: e.scan.memoize, live: e.scan.live}}
	rd := pickle.NewReaderAt(ra, e.size, e.path, d.start)
	rd.NewHash = e.opt.Algo.New
	rd.Borrow = true
	var o pickle.Op
	for rd.Offset() < d.end {
		if err := rd.NextInto(&o); err != nil {
			return errSlow
		}
		sub.opOff = o.Offset
		stop, err := sub.step(&o)
		if err != nil || stop || int64(len(sub.arena)) > arenaExpansion*e.size+arenaSlack {
			return errSlow
		}
	}
	if rd.Offset() != d.end || len(sub.stack) != 1 || len(sub.marks) != 0 {
		return errSlow
	}
	if s := sub.stack[0]; s.c < 0 || !sub.conts[s.c].stream || sub.conts[s.c].n != d.n || len(sub.arena) != s.off {
		return errSlow
	}
	h.Write(sub.out)
	return nil
}
