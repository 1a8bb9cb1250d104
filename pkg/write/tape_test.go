package write

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// TestTapeLongMemo: 300 strings, each twice in a list, at every protocol:
// each is memoized where it is built and fetched right after, the memo
// numbered by first use, indices from 256 on in the long forms
// (LONG_BINPUT, LONG_BINGET), MEMOIZE at protocol 4 and 5; nothing else
// is memoized (the list is used once).
func TestTapeLongMemo(t *testing.T) {
	// each string written twice by value: equal values are shared
	in := "\x80\x04]("
	for i := range 300 {
		s := fmt.Sprintf("s%03d", i)
		in += "\x8c\x04" + s + "\x8c\x04" + s
	}
	in += "e."
	for _, proto := range []int{2, 3, 4, 5} {
		out := mustCanon(t, in, Options{Protocol: proto})
		rd := pickle.NewReader(bytes.NewReader(out), int64(len(out)), "")
		var puts, gets []int64
		memoize := 0
		for {
			o, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("protocol %d: %v", proto, err)
			}
			switch o.Code {
			case pickle.BINPUT, pickle.LONG_BINPUT:
				if (o.Code == pickle.LONG_BINPUT) != (o.Int >= 256) {
					t.Errorf("protocol %d: %s %d", proto, o.Code, o.Int)
				}
				puts = append(puts, o.Int)
			case pickle.MEMOIZE:
				memoize++
			case pickle.BINGET, pickle.LONG_BINGET:
				if (o.Code == pickle.LONG_BINGET) != (o.Int >= 256) {
					t.Errorf("protocol %d: %s %d", proto, o.Code, o.Int)
				}
				gets = append(gets, o.Int)
			}
			if o.Code == pickle.STOP {
				break
			}
		}
		if proto >= 4 {
			if memoize != 300 || len(puts) != 0 {
				t.Errorf("protocol %d: %d MEMOIZE, %d PUTs; want 300, 0", proto, memoize, len(puts))
			}
		} else if len(puts) != 300 {
			t.Errorf("protocol %d: %d PUTs, want 300", proto, len(puts))
		}
		if len(gets) != 300 {
			t.Fatalf("protocol %d: %d GETs, want 300", proto, len(gets))
		}
		for i := range 300 {
			if gets[i] != int64(i) || (proto < 4 && puts[i] != int64(i)) {
				t.Fatalf("protocol %d: memo entry %d: put %v, get %d", proto, i, puts, gets[i])
			}
		}
	}
}

// TestCollectBeforeReplay: the replay of a tape that passed 1 MiB first
// collects the traversal's garbage, so that the output is laid out in its
// place (a 5 MB cloudpickle state's 3 MB output beside it: 6 MB more peak
// RSS); a smaller tape's is not worth a collection.
func TestCollectBeforeReplay(t *testing.T) {
	for _, c := range []struct {
		spooled int64
		collect bool
	}{{1 << 20, true}, {3 << 20, true}, {1<<20 - 1, false}, {0, false}} {
		var before, after runtime.MemStats
		runtime.GC() // (none under way: only collect's counts)
		runtime.ReadMemStats(&before)
		(&tape{spooled: c.spooled}).collect()
		runtime.ReadMemStats(&after)
		if got := after.NumGC > before.NumGC; got != c.collect {
			t.Errorf("a tape of %d bytes spooled: collected %v, want %v", c.spooled, got, c.collect)
		}
	}
}
