package dis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// countBoth runs Count and the machine (pickle.ParseEach, as Open reads a
// compressed bare pickle) over b.
func countBoth(b []byte) (sum Summary, cerr error, mstreams int, mtrail *pickle.Trailing, merr error) {
	sum, cerr = Count(pickle.NewReader(bytes.NewReader(b), int64(len(b)), "f"), Options{}, nil)
	f, merr := pickle.ParseEach(pickle.NewReader(bytes.NewReader(b), int64(len(b)), "f"), pickle.Options{NoGraph: true}, func(*pickle.Stream) error {
		mstreams++
		return nil
	})
	if f != nil {
		mtrail = f.Trailing
	}
	return
}

// FuzzCount: Count never panics, writes nothing, and where it reads every
// stream to its STOP and calls nothing unsure, the machine of pkg/pickle
// reads as many streams, every one to its STOP (pk dis of a compressed
// file takes Count's number for its header, which is the machine's: Open's).
// Its verdicts are RunReader's.
func FuzzCount(f *testing.F) {
	for _, s := range countSeeds {
		f.Add([]byte(s))
	}
	if paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "*", "*.pkl")); len(paths) > 0 {
		for _, p := range paths[:min(len(paths), 40)] {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sum, cerr, n, tr, merr := countBoth(b)
		if cerr == nil && sum.Trailing == nil && !sum.Unsure {
			if merr != nil || tr != nil || n != sum.Streams {
				t.Fatalf("Count: %d streams, sure; the machine: %d streams, trailing %+v, %v", sum.Streams, n, tr, merr)
			}
		}
		rs, rerr := RunReader(io.Discard, pickle.NewReader(bytes.NewReader(b), int64(len(b)), "f"), Options{})
		if (cerr == nil) != (rerr == nil) || cerr != nil && cerr.Error() != rerr.Error() || rs.Streams != sum.Streams || (rs.Trailing == nil) != (sum.Trailing == nil) ||
			rs.Trailing != nil && (rs.Trailing.Offset != sum.Trailing.Offset || rs.Trailing.Len != sum.Trailing.Len || rs.Trailing.Reason != sum.Trailing.Reason) {
			t.Fatalf("Count: %+v, %v; RunReader: %+v, %v", sum, cerr, rs, rerr)
		}
	})
}

// countSeeds: pickles on both sides of every check of Count's Unsure.
var countSeeds = []string{
	"\x80\x04K\x01.",
	"\x80\x04N.\x80\x04N.",
	"\x80\x02(K\x01K\x02d.",
	"\x80\x02(K\x01K\x02K\x03d.",            // odd DICT: the machine refuses
	"\x80\x04N.\x80\x02}(K\x01K\x02K\x03u.", // odd SETITEMS in a second stream
	"\x80\x04\x8c\x01a\x8c\x01b\x93.",       // STACK_GLOBAL of str
	"\x80\x04K\x01K\x02\x93.",               // of ints: the machine refuses
	"\x80\x04\x8c\x01aq\x00K\x01q\x01h\x00h\x01\x93.",
	"\x80\x02\x82\x00.", // EXT1 0
	"\x80\x02\x82\x01.",
	"\x80\x02a.",
	"\x80\x04N.\x80\x02h\x05.",
	"(lp0\nI1\naI2\na.",
	"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01N\x86.",
	"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02K\x01.",
}

// TestCountUnsure: each check of Count's Unsure, and the opcode of the
// first stream's result.
func TestCountUnsure(t *testing.T) {
	for _, c := range []struct {
		in     string
		unsure bool
		first  pickle.Opcode
	}{
		{"\x80\x02(K\x01K\x02d.", false, pickle.DICT},
		{"\x80\x02(K\x01K\x02K\x03d.", true, pickle.DICT},
		{"\x80\x04N.\x80\x02}(K\x01K\x02K\x03u.", true, pickle.NONE},
		{"\x80\x02}(K\x01K\x02u.", false, pickle.EMPTY_DICT},
		{"\x80\x04\x8c\x01a\x8c\x01b\x93.", false, pickle.STACK_GLOBAL},
		{"\x80\x04\x8c\x01aq\x00K\x01q\x01h\x00h\x01\x93.", true, pickle.STACK_GLOBAL},
		{"\x80\x02\x82\x00.", true, pickle.EXT1},
		{"\x80\x02\x82\x01.", false, pickle.EXT1},
		{"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19q\x000h\x00.", false, pickle.LONG1},
	} {
		var seen strings.Builder
		sum, err := Count(pickle.NewReader(strings.NewReader(c.in), int64(len(c.in)), "f"), Options{}, func(o *pickle.Op) { seen.WriteString(o.Code.String() + " ") })
		if err != nil || sum.Unsure != c.unsure || sum.First != c.first || !strings.HasSuffix(seen.String(), "STOP ") {
			t.Errorf("%q: %+v, %v (opcodes %s), want Unsure %v, First %v", c.in, sum, err, seen.String(), c.unsure, c.first)
		}
		if _, _, n, tr, merr := countBoth([]byte(c.in)); !c.unsure && (merr != nil || tr != nil || n != sum.Streams) {
			t.Errorf("%q: the machine: %d streams, %+v, %v", c.in, n, tr, merr)
		}
	}
}
