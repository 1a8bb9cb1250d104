package write

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
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

// TestCollectBeforeReplay: the replay of a tape of 1 MiB or more (spooled
// or not: its events may have made it spool sooner) first
// collects the traversal's garbage, so that the output is laid out in its
// place (a 5 MB cloudpickle state's 3 MB output beside it: 6 MB more peak
// RSS); a smaller tape's is not worth a collection.
func TestCollectBeforeReplay(t *testing.T) {
	for _, c := range []struct {
		spooled int64
		held    int // bytes still in buf
		collect bool
	}{{1 << 20, 0, true}, {3 << 20, 0, true}, {1<<20 - 1, 0, false}, {0, 0, false}, {1<<20 - 1, 1, true}, {0, 1 << 20, true}} {
		var before, after runtime.MemStats
		runtime.GC() // (none under way: only collect's counts)
		runtime.ReadMemStats(&before)
		(&tape{spooled: c.spooled, buf: make([]byte, c.held)}).collect()
		runtime.ReadMemStats(&after)
		if got := after.NumGC > before.NumGC; got != c.collect {
			t.Errorf("a tape of %d bytes spooled and %d held: collected %v, want %v", c.spooled, c.held, got, c.collect)
		}
	}
}

// TestTapeEventsSpooled: a tape's events count toward what it keeps in
// memory, not its bytes alone. A list of one list fetched 100,000 times
// writes almost no bytes but an event or two an item (a code-carrying
// state: 2.1 million events beside 1.4 MB of bytes, whose events' buffer
// grew to 2.7 MB while its bytes stayed under tapeMem); what the tape
// holds in memory stays within tapeMem and one event, and its replay
// gives what a tape held whole gives.
func TestTapeEventsSpooled(t *testing.T) {
	defer func(v int) { tapeMem = v }(tapeMem)
	b := []byte{0x80, 4, ']', 0x94, '(', ']', 0x94}
	for range 100000 {
		b = append(b, 'h', 1)
	}
	b = append(b, 'e', '.')
	var outs [2][]byte
	for i, mem := range []int{1 << 30, 4096} {
		tapeMem = mem
		f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "", canon.ReadOptions(canon.Options{NoPaths: true}))
		if err != nil {
			t.Fatal(err)
		}
		w, err := newStreamWriter(canon.Normalize(f.Streams[0], canon.Options{NoPaths: true}), 4)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := w.traverse(false)
		if err != nil {
			t.Fatal(err)
		}
		if held := tp.last + len(tp.ev); mem < 1<<30 && held > mem+2*binary.MaxVarintLen64+1 {
			t.Errorf("tapeMem %d: the tape holds %d bytes and %d bytes of events (%d events, %d bytes spooled)", mem, tp.last, len(tp.ev), tp.nev, tp.spoolAt)
		}
		out, err := tp.replay(4, &bytes.Buffer{})
		tp.close()
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("the spooled tape replays to %d bytes, the whole tape to %d", len(outs[1]), len(outs[0]))
	}
}

// FuzzTapeSpooled: any bytes give the same output, or the same error, with
// the tape spooled at every few bytes and events (tapeMem 16: most events
// start a chunk) as with the tape held whole. Without -fuzz only the seeds
// run.
func FuzzTapeSpooled(f *testing.F) {
	for _, p := range []string{
		"../../testdata/fixtures/stdlib/values_p4_c_py311.pkl",
		"../../testdata/equiv/cp220_dynclass/p4_seed5_a.pkl",
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	b := []byte{0x80, 4, ']', 0x94, '(', ']', 0x94}
	for range 300 {
		b = append(b, 'h', 1)
	}
	f.Add(append(b, 'e', '.'))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 {
			return
		}
		defer func(v int) { tapeMem = v }(tapeMem)
		p := filepath.Join(t.TempDir(), "f.pkl")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tapeMem = 1 << 30
		want, werr := File(p, Options{}, false)
		tapeMem = 16
		got, gerr := File(p, Options{}, false)
		sameOutput(t, "input", "the tape whole", "spooled", want, werr, got, gerr, nil)
	})
}
