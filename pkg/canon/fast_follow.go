package canon

import (
	"io"
	"sync"
)

// The streaming hash of a pickle as it is written (pk canon's check of its
// output, pkg/write/follow.go). pass 2 (fast_encode.go) must know what
// pass 1 learns before it reads the first opcode: whether the result is a
// list, and its item count, whose header comes before its items. The
// writer knows both, and gives them as a hint, so that pass 2 can read the
// bytes as they are written instead of after pass 1 has read them all; pass
// 1 reads them too, at the same time, and the digest stands only when pass 1
// succeeds and learns what the hint said. So pass 2 has run with what pass
// 1 gives it, up to three things that do not change its digest:
//
//   - every memo index counts as read (allLive) where pass 1 marks those
//     some GET reads: pass 2 keeps a memoised value that nothing reads, which
//     costs memory only (the writer memoises only what it fetches again);
//   - the memo opcode kind (MEMOIZE or PUT) is the protocol's: pass 2 gives
//     up at any memo opcode of the other kind, and reads the flag nowhere
//     else;
//   - no list is dropped to be read again (rootVals), as for a compressed
//     input: only a dict result has such lists, and a list result is
//     required here.
//
// A wrong hint therefore makes the check give up (pass 2 at STOP, where the
// streamed list must be the result with that item count, or the comparison
// with pass 1), never pass: the caller then checks the output as before.

// FastHint is what a writer knows of the pickle it writes that pass 1 of
// the streaming hash would learn: the result is a list, the first list the
// stream makes, of RootLen items; memo opcodes are MEMOIZE (protocol 4 and
// above) or PUT.
type FastHint struct {
	RootLen int64
	Memoize bool
}

// FastHashFollow hashes one bare pickle on the streaming path, reading it
// twice at once: pass 1 from r1 (in a goroutine of its own) and pass 2 from
// r2, with the hint (see above). Both readers give the same bytes, possibly
// as they are written; stop is called (possibly twice) when one pass gives
// up, to make the other's reads fail. ok is false when the streaming path
// gives up or pass 1 does not confirm the hint: the caller then hashes the
// pickle as before.
func FastHashFollow(r1, r2 io.Reader, name string, hint FastHint, opt Options, stop func()) (res *Result, ok bool) {
	if noFast || opt.storageKeys != nil || hint.RootLen < 0 {
		return nil, false
	}
	none := func() error { return nil }
	var (
		scan    *fastScanResult
		scanErr error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		scan, _, scanErr = fastScanFrom(r1, -1, name, none)
		if scanErr != nil {
			stop()
		}
	}()
	h := &fastScanResult{rootList: 0, rootLen: hint.RootLen, memoize: hint.Memoize, allLive: true}
	sum, err := fastEncodeFrom(r2, -1, name, none, opt, h, nil)
	if err != nil {
		stop()
	}
	wg.Wait()
	if err != nil || scanErr != nil || scan.rootList != h.rootList || scan.rootLen != h.rootLen {
		return nil, false
	}
	return docResult(opt, sum), true
}
