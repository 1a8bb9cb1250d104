package canon

// The result of the streaming hash (see fast.go): written to the hash in
// canonical order, with the dropped values of a dict result or of an object
// result's state read again from the file.

import (
	"encoding/binary"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/pickle"
)

// emitTop writes the final encoding of the result, stack[top], to the hash
// without building it in the arena (a dict result is written entry by
// entry in canonical order).
func (e *fastEnc) emitTop(top int) error {
	s := &e.stack[top]
	region := e.arena[s.off:]
	if s.c < 0 {
		e.write(region)
		return nil
	}
	e.allowRoot = true
	head, err := e.sealHeader(e.tmp[:0], s, region)
	e.allowRoot = false
	if err != nil {
		return err
	}
	e.tmp = head
	e.write(head)
	if s.kind == fkCall && e.conts[s.c].holds {
		// the call result: its body as is, but for the placeholders of
		// its state's dropped values
		f, err := os.Open(e.path)
		if err != nil {
			return errSlow
		}
		defer f.Close()
		prev := 0
		for _, at := range e.phs {
			rel := at - s.off
			if rel < prev || rel >= len(region) || region[rel] != 0 {
				return errSlow
			}
			e.write(region[prev:rel])
			i, k := binary.Uvarint(region[rel+1:])
			if k <= 0 || i >= uint64(len(e.drops)) || e.drops[i].end == 0 {
				return errSlow
			}
			if err := e.replay(f, e.drops[i]); err != nil {
				return err
			}
			prev = rel + 1 + k
		}
		e.write(region[prev:])
		e.release(s)
		return nil
	}
	if len(e.drops) == 0 || !e.conts[s.c].root {
		for _, p := range e.pieces {
			e.write(p)
		}
		e.release(s)
		return nil
	}
	f, err := os.Open(e.path)
	if err != nil {
		return errSlow
	}
	defer f.Close()
	for _, p := range e.pieces {
		if len(p) == 0 || p[0] != 0 {
			e.write(p)
			continue
		}
		i, k := binary.Uvarint(p[1:])
		if k <= 0 || 1+k != len(p) || i >= uint64(len(e.drops)) || e.drops[i].end == 0 {
			return errSlow
		}
		if err := e.replay(f, e.drops[i]); err != nil {
			return err
		}
	}
	e.release(s)
	return nil
}

// replay encodes a dropped list value again from its bytes, straight into
// the hash: its items stream as those of a list result do. The memo holds
// every entry a GET in it can read (no index is written twice, pass 1
// made sure), with the values the first pass gave them.
func (e *fastEnc) replay(ra io.ReaderAt, d dropRec) error {
	e.h.Write(e.out)
	e.out = e.out[:0]
	sub := &fastEnc{opt: e.opt, memo: e.memo, h: e.h, nmemo: d.memo0, proto: e.proto, path: e.path, size: e.size,
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
	e.h.Write(sub.out)
	return nil
}
