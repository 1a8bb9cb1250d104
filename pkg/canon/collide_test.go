package canon

import (
	"os"
	"path/filepath"
	"testing"
)

// Keys of a dict (SETITEM(S), DICT) and items of a set (ADDITEMS,
// FROZENSET) collide exactly when CPython's dict and set find them equal:
// numbers by value across bool, int and float, whatever opcode wrote them;
// equal strs; tuples and frozensets item by item; a NaN only with itself
// (the same object, read again with a memo GET), never with another NaN.
// Each hand-made pickle must hash as the value CPython loads from it
// (shown in the comments, as python3 prints it), on the graph path and
// through HashFile (the streaming path refuses such keys and hands them
// over).
func TestKeysCollideAsCPython(t *testing.T) {
	const nanBits = 0x7ff8000000000000
	cases := []struct {
		name      string
		made, is  []byte
		different bool // made must hash apart from is
	}{
		{
			// {1: 'a', 1.0: 'b', True: 'c'} loads as {1: 'c'}
			name: "1, 1.0, True",
			made: p4().op('}').mark().op('K', 1).str("a").binfloat(1).str("b").op(0x88).str("c").op('u').stop(),
			is:   p4().op('}').op('K', 1).str("c").op('s').stop(),
		},
		{
			// {0: 'a', 0.0: 'b', -0.0: 'c', False: 'd'} loads as {0: 'd'}
			name: "0, 0.0, -0.0, False",
			made: p4().op('}').mark().op('K', 0).str("a").binfloat(0).str("b").floatBits(1 << 63).str("c").op(0x89).str("d").op('u').stop(),
			is:   p4().op('}').op('K', 0).str("d").op('s').stop(),
		},
		{
			// 5 written by BININT1, BININT, LONG1 and INT: {5: 'd'}
			name: "equal ints by four opcodes",
			made: p4().op('}').mark().op('K', 5).str("a").binint(5).str("b").op(0x8a, 1, 5).str("c").text("I5\n").str("d").op('u').stop(),
			is:   p4().op('}').op('K', 5).str("d").op('s').stop(),
		},
		{
			// 'k' written by SHORT_BINUNICODE, BINUNICODE and UNICODE: {'k': 3}
			name: "equal strs by three opcodes",
			made: p4().op('}').mark().str("k").op('K', 1).op('X', 1, 0, 0, 0).text("k").op('K', 2).text("Vk\n").op('K', 3).op('u').stop(),
			is:   p4().op('}').str("k").op('K', 3).op('s').stop(),
		},
		{
			// x = float('nan'); d = {}; d[x] = 1; d[x] = 2: {nan: 2}
			name: "one NaN object twice",
			made: p4().op('}').mark().floatBits(nanBits).put(0).op('K', 1).get(0).op('K', 2).op('u').stop(),
			is:   p4().op('}').floatBits(nanBits).op('K', 2).op('s').stop(),
		},
		{
			// {float('nan'): 1, float('nan'): 2}: two keys, {nan: 1, nan: 2}
			name:      "two NaN objects",
			made:      p4().op('}').mark().floatBits(nanBits).op('K', 1).floatBits(nanBits).op('K', 2).op('u').stop(),
			is:        p4().op('}').floatBits(nanBits).op('K', 2).op('s').stop(),
			different: true,
		},
		{
			// s = set(); s.add(x); s.add(x); s.add(y), x and y NaNs: 2 items
			name: "set: one NaN twice, another once",
			made: p4().op(0x8f).mark().floatBits(nanBits).put(0).get(0).floatBits(nanBits).op(0x90).stop(),
			is:   p4().op(0x8f).mark().floatBits(nanBits).floatBits(nanBits).op(0x90).stop(),
		},
		{
			// {1, 1.0, True, 2} has 2 items: {1, 2}
			name: "set: 1, 1.0, True",
			made: p4().op(0x8f).mark().op('K', 1).binfloat(1).op(0x88).op('K', 2).op(0x90).stop(),
			is:   p4().op(0x8f).mark().op('K', 1).op('K', 2).op(0x90).stop(),
		},
		{
			// {(1,): 'a', (1.0,): 'b'} loads as {(1,): 'b'}
			name: "tuple keys (1,) and (1.0,)",
			made: p4().op('}').mark().op('K', 1).op(0x85).str("a").binfloat(1).op(0x85).str("b").op('u').stop(),
			is:   p4().op('}').op('K', 1).op(0x85).str("b").op('s').stop(),
		},
		{
			// x = float('nan'); {(x,): 'a', (x,): 'b'} loads as {(nan,): 'b'}
			name: "tuple keys holding one NaN object",
			made: p4().op('}').mark().floatBits(nanBits).put(0).op(0x85).str("a").get(0).op(0x85).str("b").op('u').stop(),
			is:   p4().op('}').floatBits(nanBits).op(0x85).str("b").op('s').stop(),
		},
		{
			// {(float('nan'),): 'a', (float('nan'),): 'b'}: two keys
			name:      "tuple keys holding two NaN objects",
			made:      p4().op('}').mark().floatBits(nanBits).op(0x85).str("a").floatBits(nanBits).op(0x85).str("b").op('u').stop(),
			is:        p4().op('}').floatBits(nanBits).op(0x85).str("b").op('s').stop(),
			different: true,
		},
		{
			// {frozenset([1]): 'a', frozenset([1.0]): 'b'} loads as {frozenset({1}): 'b'}
			name: "frozenset keys {1} and {1.0}",
			made: p4().op('}').mark().mark().op('K', 1).op(0x91).str("a").mark().binfloat(1).op(0x91).str("b").op('u').stop(),
			is:   p4().op('}').mark().op('K', 1).op(0x91).str("b").op('s').stop(),
		},
		{
			// {(True, (2,)): 'a', (1, (2.0,)): 'b'} loads as {(True, (2,)): 'b'}
			name: "nested tuple keys",
			made: p4().op('}').mark().op(0x88).op('K', 2).op(0x85).op(0x86).str("a").op('K', 1).binfloat(2).op(0x85).op(0x86).str("b").op('u').stop(),
			is:   p4().op('}').op(0x88).op('K', 2).op(0x85).op(0x86).str("b").op('s').stop(),
		},
		{
			// {(1, 'x'): 'a', (1, 'y'): 'b'}: two keys
			name:      "tuple keys that differ",
			made:      p4().op('}').mark().op('K', 1).str("x").op(0x86).str("a").op('K', 1).str("y").op(0x86).str("b").op('u').stop(),
			is:        p4().op('}').op('K', 1).str("y").op(0x86).str("b").op('s').stop(),
			different: true,
		},
	}
	dir := t.TempDir()
	for i, c := range cases {
		dm, di := digestOf(t, c.made, Options{}), digestOf(t, c.is, Options{})
		if (dm == di) == c.different {
			t.Errorf("%s: graph path: %s and %s (want them %s)", c.name, dm, di, map[bool]string{false: "equal", true: "different"}[c.different])
		}
		// HashFile (the streaming path when it takes the file) agrees
		for j, b := range [][]byte{c.made, c.is} {
			p := filepath.Join(dir, filepath.Base(t.Name())+string(rune('a'+i))+string(rune('0'+j))+".pkl")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := HashFile(p, Options{})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if want := []string{dm, di}[j]; r.Digest != want {
				t.Errorf("%s (%d): HashFile %s, graph path %s", c.name, j, r.Digest, want)
			}
		}
	}
}
