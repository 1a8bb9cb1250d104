package pickle

import (
	"math/big"
	"os"
	"strings"
	"testing"
)

// mustParse parses in and checks the file invariants (byte attribution
// among them).
func mustParse(t *testing.T, in []byte) *File {
	t.Helper()
	f, err := parseBytes(in)
	if err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	if err := checkFile(f, int64(len(in))); err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	return f
}

func root(t *testing.T, in []byte) *Node {
	t.Helper()
	return mustParse(t, in).Streams[0].Root
}

// intOf returns the value of an int or bool node as a string ("True" for
// bools, as Python prints them).
func intOf(n *Node) string {
	switch n.Kind {
	case KindBool:
		if n.Int == 1 {
			return "True"
		}
		return "False"
	case KindInt:
		return n.Big().String()
	}
	return "<" + n.Kind.String() + ">"
}

// The C unpickler's MEMOIZE stores at len(memo), so after BINPUT wrote slot
// 0 MEMOIZE writes slot 1 (checked against CPython 3.13: (1, 1)).
func TestMemoizeStoresAtLen(t *testing.T) {
	in := cat(proto4, NONE, MEMOIZE, BININT1, byte(1), BINPUT, byte(0), MEMOIZE, BINGET, byte(0), BINGET, byte(1), TUPLE2, STOP)
	r := root(t, in)
	if r.Kind != KindTuple || len(r.Items) != 2 || intOf(r.Items[0]) != "1" || r.Items[0] != r.Items[1] {
		t.Fatalf("want (1, 1) with one shared int node, got %v %d", r.Kind, len(r.Items))
	}
	// MEMOIZE after a gap: PUT 5 then MEMOIZE stores at 1 (len of the
	// memo), not at 6.
	in = cat(proto4, NONE, BINPUT, byte(5), BININT1, byte(7), MEMOIZE, BINGET, byte(1), STOP)
	if r := root(t, in); intOf(r) != "7" {
		t.Errorf("MEMOIZE after PUT 5: got %s", intOf(r))
	}
}

func TestPutOverwrites(t *testing.T) {
	// I1 p0 ( I2 p0 0 g0 . loads 2 in CPython: the second PUT replaces slot 0.
	f := mustParse(t, []byte("I1\np0\n(I2\np0\n0g0\n."))
	st := f.Streams[0]
	if intOf(st.Root) != "2" {
		t.Errorf("root %s, want 2", intOf(st.Root))
	}
	if st.LeftoverMarks != 1 || len(st.Leftover) != 1 || intOf(st.Leftover[0]) != "1" {
		t.Errorf("leftover %d marks, %d items", st.LeftoverMarks, len(st.Leftover))
	}
	if len(st.Popped) != 0 {
		// The POPped 2 is the root too (via GET): it was built at top
		// level and dropped; Popped lists it.
		if st.Popped[0] != st.Root {
			t.Errorf("popped %v", st.Popped)
		}
	}
}

func TestPopOnMarkPopsTheMark(t *testing.T) {
	f := mustParse(t, []byte("N(0."))
	st := f.Streams[0]
	if st.Root.Kind != KindNone || st.LeftoverMarks != 0 || len(st.Popped) != 0 {
		t.Errorf("root %v, %d marks left, %d popped", st.Root.Kind, st.LeftoverMarks, len(st.Popped))
	}
	// MARK and POP go to the stream: N is 1 byte, the stream 3.
	if st.Root.Self != 1 || st.Self != 3 {
		t.Errorf("Self: root %d, stream %d", st.Root.Self, st.Self)
	}
	// The MARK popped, the next POP needs an item: CPython fails with
	// "unpickling stack underflow".
	expectErr(t, []byte("(00."), 2, "POP", "unpickling stack underflow")
}

func TestLeftoverAtStop(t *testing.T) {
	f := mustParse(t, cat(BININT1, byte(1), MARK, BININT1, byte(2), MARK, NONE, STOP))
	st := f.Streams[0]
	if st.Root.Kind != KindNone || st.LeftoverMarks != 2 {
		t.Fatalf("root %v, marks %d", st.Root.Kind, st.LeftoverMarks)
	}
	if len(st.Leftover) != 2 || intOf(st.Leftover[0]) != "1" || intOf(st.Leftover[1]) != "2" {
		t.Errorf("leftover %v", st.Leftover)
	}
	if len(st.Tops) != 3 {
		t.Errorf("tops %d, want root and two leftovers", len(st.Tops))
	}
}

func TestBytesAfterStop(t *testing.T) {
	// A second pickle is a second stream, with its own protocol and memo.
	f := mustParse(t, cat(proto4, NONE, MEMOIZE, STOP, "\x80\x02", BININT1, byte(3), STOP))
	if len(f.Streams) != 2 || f.Trailing != nil {
		t.Fatalf("%d streams, trailing %v", len(f.Streams), f.Trailing)
	}
	if s := f.Streams[1]; s.Offset != 5 || s.Proto != 2 || intOf(s.Root) != "3" {
		t.Errorf("second stream at %d proto %d root %s", s.Offset, s.Proto, intOf(s.Root))
	}
	// The memo does not carry over: each pickle.load starts afresh.
	expectErrStream2(t, cat(NONE, PUT, "0\n", STOP, GET, "0\n", STOP), "memo value not found")

	// Junk becomes File.Trailing, described but not parsed.
	f = mustParse(t, []byte("N.junk"))
	tr := f.Trailing
	if len(f.Streams) != 1 || tr == nil || tr.Offset != 2 || tr.Len != 4 || string(tr.Prefix) != "junk" || tr.Reason == "" {
		t.Fatalf("trailing %+v", tr)
	}
	// A complete stream followed by an incomplete one: trailing too.
	f = mustParse(t, []byte("N.(N"))
	if len(f.Streams) != 1 || f.Trailing == nil || !strings.Contains(f.Trailing.Reason, "before STOP") {
		t.Errorf("trailing %+v", f.Trailing)
	}
	// Trailing newlines (a text file's last line): still trailing bytes.
	f = mustParse(t, []byte("N.\n"))
	if f.Trailing == nil || f.Trailing.Len != 1 {
		t.Errorf("trailing %+v", f.Trailing)
	}
}

// expectErrStream2 checks that the second stream of in fails with reason
// and so becomes trailing bytes.
func expectErrStream2(t *testing.T, in []byte, reason string) {
	t.Helper()
	f := mustParse(t, in)
	if len(f.Streams) != 1 || f.Trailing == nil || !strings.Contains(f.Trailing.Reason, reason) {
		t.Errorf("%q: %d streams, trailing %+v", in, len(f.Streams), f.Trailing)
	}
}

// Text INT and LONG follow the C unpickler (strtol with base 0, then
// Python's int()); each value was checked against CPython 3.13.
func TestTextInts(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"I010\n.", "8"}, {"I0x10\n.", "16"}, {"I0o10\n.", "8"}, {"I+1\n.", "True"}, {"I 1\n.", "True"},
		{"I01\n.", "True"}, {"I00\n.", "False"}, {"I1\n.", "1"}, {"I0\n.", "0"}, {"I000\n.", "0"},
		{"I-1\n.", "-1"}, {"I02\n.", "2"}, {"I1_0\n.", "10"}, {"I1 \n.", "1"},
		{"I99999999999999999999\n.", "99999999999999999999"}, {"I-9223372036854775808\n.", "-9223372036854775808"},
		{"L123L\n.", "123"}, {"L123\n.", "123"}, {"L-5L\n.", "-5"}, {"L0x10L\n.", "16"}, {"L 5 \n.", "5"},
		{"L" + rep("9", 4300) + "L\n.", rep("9", 4300)},
	} {
		if got := intOf(root(t, []byte(c.in))); got != c.want {
			t.Errorf("%.20q: got %.30s, want %.30s", c.in, got, c.want)
		}
	}
	expectErr(t, []byte("L010L\n."), 0, "LONG", "convert")
	expectErr(t, []byte("L"+rep("9", 4301)+"L\n."), 0, "LONG", "4300 digits")
	expectErr(t, []byte("I"+rep("9", 4301)+"\n."), 0, "INT", "4300 digits")
	// LONG4 has no digit limit: 2048 bytes are about 4900 digits.
	long := cat("\x80\x02", LONG4, u32(2048), rep("\x01", 2048), STOP)
	r := root(t, long)
	if !r.IsBig() || r.Big().BitLen() != 2048*8-7 {
		t.Errorf("LONG4 of 2048 bytes: big %v, %d bits", r.IsBig(), r.Big().BitLen())
	}
	// LONG1 sign: 0xff is -1, 0x00ff is 255; empty is 0.
	for _, c := range []struct {
		arg  string
		want int64
	}{{"\x01\xff", -1}, {"\x02\xff\x00", 255}, {"\x00", 0}, {"\x08\x00\x00\x00\x00\x00\x00\x00\x80", -1 << 63}} {
		if r := root(t, cat(LONG1, c.arg, STOP)); r.IsBig() || r.Int != c.want {
			t.Errorf("LONG1 %q: %s", c.arg, intOf(r))
		}
	}
	if r := root(t, cat(LONG1, "\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00", STOP)); r.Big().Cmp(new(big.Int).Lsh(big.NewInt(1), 63)) != 0 {
		t.Errorf("LONG1 2^63: %s", intOf(r))
	}
}

func TestDottedGlobalNames(t *testing.T) {
	// The protocol in force at that point decides: a dotted name read
	// before PROTO 4 is flagged, the same after it is not.
	r := root(t, []byte("(cos\npath.join\n\x80\x04cos\npath.join\nt."))
	if len(r.Items) != 2 || r.Items[0].Flags&FlagDotted == 0 || r.Items[1].Flags&FlagDotted != 0 {
		t.Fatalf("flags %v %v", r.Items[0].Flags, r.Items[1].Flags)
	}
	if q := r.Items[1].Qualified(); q != "os.path.join" {
		t.Errorf("qualified %q", q)
	}
	// STACK_GLOBAL at protocol 3 (no opcode is checked against the protocol).
	r = root(t, cat("\x80\x03", SHORT_BINUNICODE, byte(2), "os", SHORT_BINUNICODE, byte(9), "path.join", STACK_GLOBAL, STOP))
	if r.Kind != KindGlobal || r.Flags&FlagDotted == 0 || r.Flags&FlagDynamic != 0 {
		t.Errorf("STACK_GLOBAL at protocol 3: flags %b", r.Flags)
	}
	// A dotted module is a module path, never flagged.
	if r := root(t, []byte("cos.path\njoin\n.")); r.Flags&FlagDotted != 0 || r.Qualified() != "os.path.join" {
		t.Errorf("dotted module: %b %q", r.Flags, r.Qualified())
	}
}

func TestPython2Names(t *testing.T) {
	for _, c := range []struct {
		in, want string
		mapped   bool
	}{
		{"c__builtin__\nlen\n.", "builtins.len", true},
		{"\x80\x02c__builtin__\nlen\n.", "builtins.len", true},
		{"\x80\x03c__builtin__\nlen\n.", "__builtin__.len", false},
		{"ccopy_reg\n_reconstructor\n.", "copyreg._reconstructor", true},
		{"c__builtin__\nxrange\n.", "builtins.range", true},
		{"c__builtin__\nunicode\n.", "builtins.str", true},
		{"cexceptions\nValueError\n.", "builtins.ValueError", true},
		{"cbuiltins\nlen\n.", "builtins.len", false},
		{"\x80\x04\x8c\x0b__builtin__\x8c\x03len\x93.", "__builtin__.len", false},
	} {
		r := root(t, []byte(c.in))
		if r.Qualified() != c.want || (r.Flags&FlagMapped != 0) != c.mapped {
			t.Errorf("%q: %s mapped %v, want %s %v", c.in, r.Qualified(), r.Flags&FlagMapped != 0, c.want, c.mapped)
		}
	}
}

func TestStackGlobalFromMemo(t *testing.T) {
	in := cat(proto4, SHORT_BINUNICODE, byte(2), "os", MEMOIZE, SHORT_BINUNICODE, byte(6), "system", MEMOIZE,
		STACK_GLOBAL, POP, BINGET, byte(0), BINGET, byte(1), STACK_GLOBAL, STOP)
	f := mustParse(t, in)
	st := f.Streams[0]
	if st.Root.Qualified() != "os.system" || st.Root.Flags&FlagDynamic != 0 {
		t.Fatalf("root %q flags %b", st.Root.Qualified(), st.Root.Flags)
	}
	var globals []string
	for _, e := range st.Log {
		if e.Kind == EvGlobal {
			globals = append(globals, e.Node.Qualified())
		}
	}
	if strings.Join(globals, ",") != "os.system,os.system" {
		t.Errorf("log globals %v", globals)
	}
	// The GETs belong to the global that consumed them; the strings stay
	// with the first global, where they were built.
	if st.Root.Self != 1+2+2 {
		t.Errorf("second STACK_GLOBAL Self %d, want 5", st.Root.Self)
	}
	// Operands only known at load time: a dynamic global.
	r := root(t, cat(proto4, GLOBAL, "m\nf\n", EMPTY_TUPLE, REDUCE, SHORT_BINUNICODE, byte(1), "x", STACK_GLOBAL, STOP))
	if r.Flags&FlagDynamic == 0 || r.Qualified() != "" {
		t.Errorf("dynamic STACK_GLOBAL: flags %b", r.Flags)
	}
}

// calls returns the qualified callables of the EvCall events.
func calls(st *Stream) []string {
	var out []string
	for _, e := range st.Log {
		if e.Kind == EvCall {
			out = append(out, e.Node.Func().Qualified())
		}
	}
	return out
}

func contains(ns []*Node, n *Node) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// A call that does not reach the result is still in the log.
func TestHiddenCalls(t *testing.T) {
	call := "cos\nsystem\n(S'ls'\ntR"
	for _, c := range []struct {
		name, in string
		where    string // popped, leftover, memo, mark
	}{
		{"discarded by POP", call + "0].", "popped"},
		{"discarded by POP_MARK", "(" + call + "1].", "popped"},
		{"kept only in the memo", call + "p0\n0].", "popped"},
		{"left under the result", call + "].", "leftover"},
		{"inside an unclosed MARK", "(" + call + "].", "leftover"},
		{"by INST", "(S'ls'\nios\nsystem\n0].", "popped"},
		{"by OBJ", "(cos\nsystem\nS'ls'\no0].", "popped"},
		{"as a BUILD state", "]" + call + "b.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mustParse(t, []byte(c.in))
			st := f.Streams[0]
			if st.Root.Kind != KindList || len(st.Root.Items) != 0 {
				t.Errorf("root %v", st.Root.Kind)
			}
			cs := calls(st)
			if len(cs) != 1 || cs[0] != "os.system" {
				t.Fatalf("calls %v", cs)
			}
			var n *Node
			for _, e := range st.Log {
				if e.Kind == EvCall {
					n = e.Node
				}
			}
			switch c.where {
			case "popped":
				if !contains(st.Popped, n) || !contains(st.Tops, n) {
					t.Errorf("call not in Popped/Tops")
				}
			case "leftover":
				if !contains(st.Leftover, n) || !contains(st.Tops, n) {
					t.Errorf("call not in Leftover/Tops")
				}
			}
			if strings.HasPrefix(c.name, "kept") && n.Flags&FlagMemo == 0 {
				t.Errorf("memo flag not set")
			}
		})
	}
}

func TestMutationsOnGlobals(t *testing.T) {
	// BUILD on a global patches a shared class: an EvMut on the global.
	f := mustParse(t, []byte("\x80\x02cos\n_Environ\n}S'x'\nK\x01sb."))
	st := f.Streams[0]
	var muts []Event
	for _, e := range st.Log {
		if e.Kind == EvMut {
			muts = append(muts, e)
		}
	}
	if len(muts) != 1 || muts[0].Op != BUILD || muts[0].Node != st.Root || muts[0].Mut != 0 {
		t.Fatalf("mutations %+v", muts)
	}
	state := st.Root.Muts()[0].Args[0]
	if state.Kind != KindDict || len(state.Items) != 2 {
		t.Errorf("state %v", state.Kind)
	}
	// SETITEM on builtins.__dict__ rebinds len.
	f = mustParse(t, []byte("cbuiltins\n__dict__\nS'len'\ncos\nsystem\ns0N."))
	st = f.Streams[0]
	if len(st.Log) != 3 || st.Log[2].Kind != EvMut || st.Log[2].Op != SETITEM || st.Log[2].Node.Qualified() != "builtins.__dict__" {
		t.Errorf("log %+v", st.Log)
	}
	// APPENDS and ADDITEMS on a call result are mutations too; on a
	// plain list or set they are items.
	r := root(t, cat(proto4, GLOBAL, "collections\ndeque\n", EMPTY_TUPLE, REDUCE, MARK, NONE, NONE, APPENDS, STOP))
	if len(r.Muts()) != 1 || len(r.Muts()[0].Args) != 2 || len(r.Items) != 0 {
		t.Errorf("APPENDS on a call: %d muts", len(r.Muts()))
	}
	r = root(t, cat(proto4, EMPTY_SET, MARK, NONE, NONE, ADDITEMS, STOP))
	if len(r.Items) != 2 || len(r.Muts()) != 0 {
		t.Errorf("ADDITEMS on a set: %d items", len(r.Items))
	}
	// Mutation after reference: the list is filled after it was put in
	// the tuple; the graph holds the state at STOP.
	r = root(t, cat(proto4, EMPTY_LIST, MEMOIZE, TUPLE1, BINGET, byte(0), NONE, APPEND, POP, STOP))
	if r.Kind != KindTuple || len(r.Items[0].Items) != 1 {
		t.Errorf("mutation after reference lost")
	}
}

// Byte attribution: scalars' opcodes to the scalar; MARK, memo writes and
// container opcodes to the container; PROTO/FRAME/STOP/POP to the stream;
// a GET to the node that consumes it; a shared object's bytes where it was
// built.
func TestAttributionRules(t *testing.T) {
	// \x80\x02 ] q\x00 ( K\x01 h\x00 e .
	f := mustParse(t, []byte("\x80\x02]q\x00(K\x01h\x00e."))
	st := f.Streams[0]
	if st.Root.Self != 1+2+1+2+1 || st.Root.Items[0].Self != 2 || st.Self != 3 {
		t.Errorf("list %d, int %d, stream %d", st.Root.Self, st.Root.Items[0].Self, st.Self)
	}
	// ( ] q\x00 h\x00 t .: the list keeps ] and the PUT; the tuple its MARK,
	// TUPLE and the GET; the list is owned by the tuple.
	f = mustParse(t, []byte("(]q\x00h\x00t."))
	st = f.Streams[0]
	l := st.Root.Items[0]
	if st.Root.Self != 4 || l.Self != 3 || l.Owner != st.Root || st.Self != 1 {
		t.Errorf("tuple %d, list %d, owner ok %v, stream %d", st.Root.Self, l.Self, l.Owner == st.Root, st.Self)
	}
	// DUP is a reference like GET.
	f = mustParse(t, []byte("]2a."))
	if st := f.Streams[0]; st.Root.Self != 3 || st.Self != 1 {
		t.Errorf("DUP: list %d stream %d", st.Root.Self, st.Self)
	}
	// FRAME and POP go to the stream, and so does the GET that STOP
	// consumes (the stream is its consumer).
	in := cat(proto4, FRAME, u64(6), NONE, BINPUT, byte(0), POP, BINGET, byte(0), STOP)
	f = mustParse(t, in)
	if st := f.Streams[0]; st.Self != 2+9+1+2+1 || st.Root.Self != 3 {
		t.Errorf("frame: stream %d, None %d", st.Self, st.Root.Self)
	}
	// A GET dropped by POP: its bytes go to the stream.
	f = mustParse(t, cat(NONE, BINPUT, byte(0), BINGET, byte(0), POP, STOP))
	if st := f.Streams[0]; st.Self != 2+1+1 || st.Root.Self != 3 {
		t.Errorf("popped GET: stream %d, None %d", st.Self, st.Root.Self)
	}
}

// The attribution invariant on every sample and every committed fixture.
func TestAttributionEverywhere(t *testing.T) {
	n := 0
	for _, s := range validSamples {
		mustParse(t, []byte(s))
		n++
	}
	for _, p := range fixtureFiles(0) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseBytes(b)
		if err != nil {
			// Containers (zip, compressed) are not plain pickles.
			continue
		}
		if err := checkFile(f, int64(len(b))); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		n++
	}
	t.Logf("%d inputs checked", n)
}

// TestLongGetBytes: a GET whose text argument is 255 bytes or more keeps
// its bytes aside from the stack's byte per slot (machine.farPend); they go
// to the node that consumes the reference, as a short GET's do, with short
// ones between them and after a slot of the same position was popped.
func TestLongGetBytes(t *testing.T) {
	long := func(n int) string { return "g" + strings.Repeat("0", n) + "\n" } // (index 0)
	in := "Np0\n0" + "(" + long(300) + "g0\n" + long(400) + "l" + "(" + long(260) + "0" + long(500) + "g0\nl" + "."
	f, err := Parse(strings.NewReader(in), int64(len(in)), "t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := f.Streams[0]
	var sum int64
	for _, n := range st.All {
		sum += n.Self
	}
	if sum+st.Self != st.Len() {
		t.Fatalf("attributed %d + %d, stream %d", sum, st.Self, st.Len())
	}
	inner, outer := st.All[1], st.All[2]
	if want := int64(1 + 302 + 3 + 402 + 1); inner.Self != want {
		t.Errorf("first list: Self %d, want %d", inner.Self, want)
	}
	if want := int64(1 + 502 + 3 + 1); outer.Self != want || len(outer.Items) != 2 {
		t.Errorf("second list: Self %d (want %d), %d items", outer.Self, want, len(outer.Items))
	}
}

// The arrays a machine outgrows (a deep stack, its records and arenas) go
// back to the system once releaseAt bytes of them have piled up
// (releaseOutgrown), about once per doubling from there; a small stream's
// never do, and what is parsed does not change.
func TestReleaseOutgrown(t *testing.T) {
	defer func(at int, f func()) { releaseAt, releaseOutgrown = at, f }(releaseAt, releaseOutgrown)
	releaseAt = 1 << 16
	calls := 0
	releaseOutgrown = func() { calls++ }
	for _, c := range []struct{ items, min, max int }{{1000, 0, 0}, {100000, 1, 8}} {
		calls = 0
		in := cat(proto4, MARK, strings.Repeat(string(rune(NONE)), c.items), LIST, STOP)
		if r := root(t, in); r.Kind != KindList || len(r.Items) != c.items {
			t.Fatalf("%d items: got %v of %d", c.items, r.Kind, len(r.Items))
		}
		if calls < c.min || calls > c.max {
			t.Errorf("a list of %d items on the stack: %d releases, want %d to %d", c.items, calls, c.min, c.max)
		}
	}
}
