package canon

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestSlotTab: the compact table gives back what was set, grows, and
// reports full at its bound.
func TestSlotTab(t *testing.T) {
	tab := newSlotTab(0, 1000)
	for i := 0; i < 1000; i++ {
		if !tab.set(pickle.ID(i*7919), int32(i)) {
			t.Fatalf("set %d: full", i)
		}
	}
	if tab.set(1, 1) {
		t.Fatal("a 1001st entry past the bound")
	}
	if !tab.set(0, 5) {
		t.Fatal("an entry set again reported full")
	}
	for i := 1; i < 1000; i++ {
		if v, ok := tab.get(pickle.ID(i * 7919)); !ok || v != int32(i) {
			t.Fatalf("get %d = %d, %v", i*7919, v, ok)
		}
	}
	if v, _ := tab.get(0); v != 5 {
		t.Fatalf("get 0 = %d, want 5", v)
	}
	if _, ok := tab.get(2); ok {
		t.Fatal("get of an ID never set")
	}
	n := 0
	tab.each(func(pickle.ID, int32) { n++ })
	if n != 1000 {
		t.Fatalf("each: %d entries, want 1000", n)
	}
}

// dictList is a pickle of a list of n empty dicts, every tenth item the
// first dict again (a GET): n identity nodes, a tenth of them shared.
func dictList(n int) []byte {
	b := []byte{0x80, 4, ']', 0x94, '('}
	for i := 0; i < n; i++ {
		if i%10 == 9 {
			b = append(b, 'h', 1) // BINGET 1: the first dict
			continue
		}
		b = append(b, '}', 0x94)
	}
	return append(b, 'e', '.')
}

// TestSparseOrdsNoTable: the main encoder of a large view keeps its
// ordinals apart, and the pure slots compact: no table of 4 bytes a node
// (pslot) is made. (Before, Digest made it for every view: 1.5 MB on a
// cloudpickle state, at pk hash's peak.)
func TestSparseOrdsNoTable(t *testing.T) {
	f, err := pickle.Parse(bytes.NewReader(dictList(20000)), -1, "dicts.pkl", pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := Normalize(f.Streams[0], Options{})
	if _, err := v.Digest(); err != nil {
		t.Fatal(err)
	}
	if st := v.state(); st.pslot != nil {
		t.Errorf("pslot of %d entries made for a view of %d nodes", len(st.pslot), v.nsyn)
	}
}

// TestSparseOrds: every digest (or error) is the one the table by node ID
// gives, with every view's ordinals and pure slots compact (slotTabFrom 0:
// small tables that spill too), and with no ordinal kept (ordForget:
// every node reached twice makes Digest encode the stream again).
func TestSparseOrds(t *testing.T) {
	var files []string
	for _, g := range []string{"../../testdata/states/*.pkl", "../../testdata/fixtures/*/*.pkl", "../../testdata/equiv/*/*.pkl", "../../testdata/canon/*/*/*.pkl", "../../testdata/costshapes/*.pkl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if testing.Short() && len(files) > 200 {
		files = files[:200]
	}
	if len(files) == 0 {
		t.Skip("no corpus")
	}
	defer func(from int) { slotTabFrom, ordForget = from, false }(slotTabFrom)
	digests := func(p string, from int, forget bool) []string {
		slotTabFrom, ordForget = from, forget
		doc, err := input.Open(p, ReadOptions(Options{}))
		if err != nil {
			return nil
		}
		var out []string
		for _, part := range doc.Parts {
			if part.Pickle == nil {
				continue
			}
			for _, s := range part.Pickle.Streams {
				v := Normalize(s, Options{})
				d, err := v.Digest()
				if err != nil {
					out = append(out, err.Error())
					continue
				}
				out = append(out, fmt.Sprintf("%x", d))
			}
		}
		return out
	}
	misses := ordMisses.Load()
	for _, p := range append(files, "") {
		var want, sparse, forget []string
		if p == "" {
			// (made here: a view past the default slotTabFrom)
			f, err := pickle.Parse(bytes.NewReader(dictList(20000)), -1, "dicts.pkl", pickle.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				from   int
				forget bool
				out    *[]string
			}{{math.MaxInt, false, &want}, {0, false, &sparse}, {0, true, &forget}} {
				slotTabFrom, ordForget = c.from, c.forget
				d, err := Normalize(f.Streams[0], Options{}).Digest()
				if err != nil {
					t.Fatal(err)
				}
				*c.out = []string{fmt.Sprintf("%x", d)}
			}
		} else {
			want, sparse, forget = digests(p, math.MaxInt, false), digests(p, 0, false), digests(p, 0, true)
		}
		for i := range want {
			if i >= len(sparse) || sparse[i] != want[i] {
				t.Fatalf("%s: stream %d: compact ordinals give %q, the table %q", p, i, sparse, want)
			}
			if i >= len(forget) || forget[i] != want[i] {
				t.Fatalf("%s: stream %d: encoded again give %q, the table %q", p, i, forget, want)
			}
		}
	}
	if ordMisses.Load() == misses {
		t.Error("no stream was encoded again with ordForget")
	}
}

// FuzzSparseOrds: on any input, the digest (or error) of every stream is
// the same with the ordinals and pure slots by node ID, compact, and
// compact with none kept (TestSparseOrds on the fuzzer's inputs).
func FuzzSparseOrds(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/fixtures/*/*.pkl")
	for i, s := range seeds {
		if b, err := os.ReadFile(s); err == nil && i%5 == 0 && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	f.Add(dictList(300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		file, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "fuzz", ReadOptions(Options{}))
		if err != nil {
			return
		}
		defer func(from int) { slotTabFrom, ordForget = from, false }(slotTabFrom)
		for _, s := range file.Streams {
			for _, o := range []Options{{}, {Form: Form2}} {
				var want string
				for i, c := range []struct {
					from   int
					forget bool
				}{{math.MaxInt, false}, {0, false}, {0, true}} {
					slotTabFrom, ordForget = c.from, c.forget
					d, err := Normalize(s, o).Digest()
					got := fmt.Sprintf("%x %v", d, err)
					if i == 0 {
						want = got
					} else if got != want {
						t.Fatalf("stream %d, form %v, slotTabFrom %d, ordForget %v: %s, want %s", s.Index, o.Form, c.from, c.forget, got, want)
					}
				}
			}
		}
	})
}

// TestDigestDropsOrdinals: the main encoder a scratch keeps past Digest
// holds no ordinals (sparse or dense): no later encoding reads them, and
// pk canon's writer, whose peak is after the digest, held them (2.6 MB on
// a cloudpickle state). Digest asked again still gives the same digest.
func TestDigestDropsOrdinals(t *testing.T) {
	f, err := pickle.Parse(bytes.NewReader(dictList(20000)), -1, "dicts.pkl", pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var scr Scratch
	v := NormalizeScratch(f.Streams[0], Options{}, &scr)
	d1, err := v.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if e := &scr.s.enc; e.ordBits != nil || e.ordTab != nil || e.ordS != nil || e.ordM != nil {
		t.Errorf("after Digest the scratch's encoder holds ordinals: bits %d words, table %v, by ID %d", len(e.ordBits), e.ordTab != nil, len(e.ordS))
	}
	d2, err := v.Digest()
	if err != nil || !bytes.Equal(d1, d2) {
		t.Errorf("Digest again: %x, %v; first %x", d2, err, d1)
	}
}
