package write

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// canonBytes writes b to a file and canonicalises it.
func canonBytes(t *testing.T, b string, opt Options) ([]byte, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.pkl")
	if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := File(p, opt, false)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func mustCanon(t *testing.T, b string, opt Options) []byte {
	t.Helper()
	out, err := canonBytes(t, b, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGolden pins the bytes of small outputs: the opcode choices, the memo
// and framing are part of what pk canon promises (docs/pk-canon.md).
func TestGolden(t *testing.T) {
	cases := []struct {
		name, in string
		proto    int
		want     string // hex
	}{
		// l = []; l.append(l): the memo only where an object is used again
		{"self-list", "\x80\x04]\x94h\x00a.", 4, "8004950600000000000000" + "5d94680061" + "2e"},
		// a tuple holding an object whose BUILD state holds the tuple: the
		// BUILD is postponed until the tuple exists
		{"build-cycle", "\x80\x04\x8c\x05types\x8c\x0fSimpleNamespace\x93)\x81\x94}\x94\x8c\x01th\x00\x85\x94sb0h\x02.", 4,
			"8004952a00000000000000" + "8c0574797065738c0f53696d706c654e616d65737061636593" + "298194" + "8594" + "6800" + "7d8c0174680173" + "62302e"},
		// builtins.id resolved twice as an effect: written afresh each
		// time, and memoized at each build, its key being used twice (the
		// memo counts uses by key)
		{"effect-twice", "\x80\x04\x8c\x08builtins\x8c\x02id\x930\x8c\x08builtins\x8c\x02id\x930N.", 4,
			"8004952400000000000000" + "8c086275696c74696e738c02696493" + "9430" + "8c086275696c74696e738c02696493" + "9430" + "4e2e"},
		{"effect-twice-p2", "\x80\x04\x8c\x08builtins\x8c\x02id\x930\x8c\x08builtins\x8c\x02id\x930N.", 2,
			"8002" + "635f5f6275696c74696e5f5f0a69640a" + "710030" + "635f5f6275696c74696e5f5f0a69640a" + "710130" + "4e2e"},
		// {'b': 1, 'a': 2} at protocol 2: keys sorted, no frame, no memo
		{"dict-p2", "\x80\x02}q\x00(X\x01\x00\x00\x00bK\x01X\x01\x00\x00\x00aK\x02u.", 2,
			"80027d" + "28" + "5801000000614b02" + "5801000000624b01" + "752e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mustCanon(t, c.in, Options{Protocol: c.proto})
			if got := hex.EncodeToString(out); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestAliasing: a list used twice stays one list; two equal lists stay two.
func TestAliasing(t *testing.T) {
	shared := mustCanon(t, "\x80\x04]\x94h\x00\x86.", Options{}) // a = []; (a, a)
	two := mustCanon(t, "\x80\x04]]\x86.", Options{})            // ([], [])
	if bytes.Equal(shared, two) {
		t.Fatal("[a, a] and [[], []] written alike")
	}
	if !bytes.Contains(shared, []byte{byte(pickle.MEMOIZE)}) || bytes.Contains(two, []byte{byte(pickle.MEMOIZE)}) {
		t.Errorf("memo: shared %x, two %x", shared, two)
	}
}

// TestEffectsKept: a discarded call stays in the output (before the result).
func TestEffectsKept(t *testing.T) {
	in := "\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04true\x85R0].\x00"
	out := mustCanon(t, in[:len(in)-1], Options{})
	if !bytes.Contains(out, []byte("system")) {
		t.Fatalf("the discarded call is gone: %x", out)
	}
	if !bytes.HasSuffix(out, []byte{byte(pickle.POP), byte(pickle.EMPTY_LIST), byte(pickle.STOP)}) {
		t.Errorf("effects then result: %x", out)
	}
}

// TestBillionLaughs: a memo DAG of tuples is written with the memo, not
// unfolded.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x80\x04\x8c\x03lol\x94")
	for i := 0; i < 30; i++ {
		b.WriteString("h")
		b.WriteByte(byte(i))
		b.WriteString("h")
		b.WriteByte(byte(i))
		b.WriteString("\x86\x94")
	}
	b.WriteString(".")
	out := mustCanon(t, b.String(), Options{})
	if len(out) > 1000 {
		t.Errorf("%d bytes for 2^30 leaves", len(out))
	}
}

// TestRefusals: one line naming the file and the offset, nothing written.
func TestRefusals(t *testing.T) {
	deep := "\x80\x04" + strings.Repeat("]", MaxDepth+10) + strings.Repeat("a", MaxDepth+9) + "."
	cases := []struct {
		name, in string
		opt      Options
		want     string
	}{
		{"deep", deep, Options{}, "levels deep"},
		{"buffer-p4", "\x80\x05\x97.", Options{Protocol: 4}, "needs protocol 5"},
		{"dotted-p4", "\x80\x02cmod\na.b\n.", Options{Protocol: 4}, "dotted global name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := canonBytes(t, c.in, c.opt)
			if err == nil {
				t.Fatal("written")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "in.pkl: offset ") || strings.Contains(msg, "\n") {
				t.Errorf("%q", msg)
			}
		})
	}
}

// TestTrackerIDs: two cloudpickle pickles of one class from two processes
// (two random ids) give one output, whose id is 32 hex digits of the
// class's digest, and pk hash of it is the inputs'.
func TestTrackerIDs(t *testing.T) {
	a := "../../testdata/equiv/cp220_dynclass/p4_seed5_a.pkl"
	b := "../../testdata/equiv/cp220_dynclass/p4_seed6_b.pkl"
	ra, err := File(a, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := File(b, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ra.Data, rb.Data) {
		t.Fatal("two processes' pickles of one class give different outputs")
	}
	ina, _ := os.ReadFile(a)
	old, ids := hexIDs(ina), hexIDs(ra.Data)
	if len(ids) != 1 || len(old) != 1 || ids[0] == old[0] {
		t.Fatalf("tracker ids in the output: %q (input's %q)", ids, old)
	}
	// the id is the class's content digest
	f, err := pickle.Parse(bytes.NewReader(ra.Data), int64(len(ra.Data)), "", canon.ReadOptions(canon.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	v := canon.Normalize(f.Streams[0], canon.Options{})
	var skel *canon.Node
	var walk func(n *canon.Node, depth int)
	seen := map[*canon.Node]bool{}
	walk = func(n *canon.Node, depth int) {
		if n == nil || seen[n] || skel != nil || depth > 50 {
			return
		}
		seen[n] = true
		if n.Kind() == pickle.KindCall && n.Func() != nil && n.Func().Name() == "_make_skeleton_class" {
			skel = n
			return
		}
		for _, c := range n.Items() {
			walk(c, depth+1)
		}
		for _, e := range n.Entries() {
			walk(e.Value, depth+1)
		}
		if n.Kind() == pickle.KindCall {
			walk(n.Args(), depth+1)
		}
	}
	walk(v.Root(), 0)
	if skel == nil {
		t.Fatal("no skeleton class call in the output")
	}
	sh := newShared()
	e := newEmitter(v, 4, sh, &tape{})
	e.assignTrackers(skel.Ref(), skel.Args().Ref())
	for _, id := range sh.trackers {
		if id != ids[0] {
			t.Errorf("id %s, digest-derived %s", ids[0], id)
		}
	}
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// hexIDs finds the SHORT_BINUNICODE strings of 32 hex digits in b.
func hexIDs(b []byte) []string {
	var out []string
	for i := 0; i+34 <= len(b); i++ {
		if b[i] == byte(pickle.SHORT_BINUNICODE) && b[i+1] == 32 && hex32.Match(b[i+2:i+34]) {
			out = append(out, string(b[i+2:i+34]))
		}
	}
	return out
}

// TestLargePayloadFraming: a payload of 64 KiB or more is written outside
// frames, after the frame before it is closed; the output reads back and
// is canonical.
func TestLargePayloadFraming(t *testing.T) {
	big := strings.Repeat("x", FrameTarget+5)
	in := "\x80\x04](\x8c\x01a\x8c\x01b\x8d" + string([]byte{byte(len(big)), byte(len(big) >> 8), byte(len(big) >> 16), 0, 0, 0, 0, 0}) + big + "\x8c\x01ce."
	out := mustCanon(t, in, Options{})
	// PROTO, FRAME, ..., BINUNICODE header, payload (unframed), FRAME, ...
	i := bytes.Index(out, []byte(big))
	if i < 0 {
		t.Fatal("payload missing")
	}
	hdr := out[i-5 : i]
	if hdr[0] != byte(pickle.BINUNICODE) {
		t.Fatalf("header %x", hdr)
	}
	if out[2] != byte(pickle.FRAME) {
		t.Fatalf("no first frame: %x", out[:16])
	}
	n := int(out[3]) | int(out[4])<<8
	if 11+n != i-5 {
		t.Errorf("first frame of %d bytes ends at %d, the payload's header is at %d", n, 11+n, i-5)
	}
	again := mustCanon(t, string(out), Options{})
	if !bytes.Equal(again, out) {
		t.Error("not idempotent")
	}
}

// TestTooDeepEarly: a million nested lists are refused from the store,
// before the view and its digest are made, naming the first list past
// MaxDepth; 30,000 levels (within twice MaxDepth) are left to the
// writer's own count, which refuses them too.
func TestTooDeepEarly(t *testing.T) {
	for _, levels := range []int{1000000, 30000} {
		data := "\x80\x04" + strings.Repeat("]", levels) + strings.Repeat("a", levels-1) + "."
		p := filepath.Join(t.TempDir(), "deep.pkl")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := File(p, Options{}, false)
		var we *Error
		if !errors.As(err, &we) || !strings.Contains(we.Reason, "levels deep") {
			t.Fatalf("%d levels: %v", levels, err)
		}
		if levels == 1000000 && we.Offset != int64(2+MaxDepth) {
			t.Errorf("%d levels: refused at offset %d, want %d (the first list past MaxDepth)", levels, we.Offset, 2+MaxDepth)
		}
	}
}

// TestCheckCodeArgs: the output of a code-carrying pickle is found right
// by its check, one pk hash of it, which reads code objects' argument
// tuples whole (fastCheckOut): no stream is read back to be checked.
func TestCheckCodeArgs(t *testing.T) {
	for _, p := range []string{"cp210_closure/p4_seed21_a.pkl", "cp220_dynclass/p2_seed1_a.pkl", "dill036_closure/p3_seed19_a.pkl", "dill036_recurse_dynclass/p2_seed1_a.pkl"} {
		p = filepath.Join("../../testdata/equiv", p)
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
		fast := fastChecks
		if _, err := File(p, Options{}, false); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fastChecks != fast+1 {
			t.Errorf("%s: the output was not found right by one pk hash of it", p)
		}
	}
}
