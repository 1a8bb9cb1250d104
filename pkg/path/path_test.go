package path

import (
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

func TestKeysRoundTrip(t *testing.T) {
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	keys := []Value{
		Str(""), Str("a"), Str("it's"), Str(`say "hi"`), Str(`both ' and "`), Str("back\\slash"),
		Str("tab\tnew\nline\r"), Str("é ü 日本 🙂"), Str("\x00\x1f\x7f"), Str("\u00ad\u200b"),
		Str("\xed\xb0\x80"), // a lone surrogate, as pkg/pickle keeps it
		Str("layer.weight"), Str("]"), Str("['x']"),
		Bytes(""), Bytes("abc"), Bytes("\x00\xff'\""), Bytes("\\"),
		Int(0), Int(3), Int(-1), Int(-7), BigInt(huge),
		Float(0), Float(math.Copysign(0, -1)), Float(1.5), Float(-2.25), Float(1e16), Float(1e-7),
		Float(math.Inf(1)), Float(math.Inf(-1)), Float(math.NaN()),
		None(), Bool(true), Bool(false),
		Tuple(), Tuple(Int(1)), Tuple(Int(1), Int(2)), Tuple(Str("a"), Tuple(Int(1), None()), Bytes("x")),
		Tuple(Tuple()),
	}
	for _, k := range keys {
		for _, f := range []string{Root + Key(k), Root + SetElem(k), Part("x") + Key(k)} {
			p, err := Parse(f)
			if err != nil {
				t.Fatalf("Parse(%s): %v", f, err)
			}
			if got := p.String(); got != f {
				t.Errorf("Parse(%s).String() = %s", f, got)
			}
			last := p[len(p)-1]
			if !last.Value.Equal(k) {
				t.Errorf("Parse(%s): value %s, want %s", f, last.Value, k)
			}
		}
	}
}

func TestFuzzedStrKeys(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []rune{'a', 'Z', '0', ' ', '\'', '"', '\\', '\n', '\t', 0, 0x7f, 0xe9, 0x263a, 0x1F600, 0xad, '[', ']', '.', '<', '{'}
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for i := r.Intn(8); i > 0; i-- {
			b.WriteRune(alphabet[r.Intn(len(alphabet))])
		}
		s := b.String()
		var by []byte
		for i := r.Intn(8); i > 0; i-- {
			by = append(by, byte(r.Intn(256)))
		}
		for _, k := range []Value{Str(s), Bytes(string(by)), Tuple(Str(s), Int(r.Int63()-r.Int63())), Float(r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20)))} {
			f := Root + Attr("x") + Key(k) + Index(r.Intn(5))
			p, err := Parse(f)
			if err != nil {
				t.Fatalf("Parse(%s): %v", f, err)
			}
			if p.String() != f || !p[2].Value.Equal(k) {
				t.Fatalf("round trip of %q: %s -> %s", s, f, p.String())
			}
		}
	}
}

func TestSteps(t *testing.T) {
	for _, f := range []string{
		"root", "trailing", "stream[1]", "stream[0]['a']", "part['archive/data/0']", "part[\"a'b\"]",
		"root.coef_", "root.__dict__['not an ident']", "root[3][1, 2]", "root[1,]", "root[200000:600000]",
		"root{#3}", "root{'a'}", "root<popped 0>", "root<effect 3:10>", "stream[2]<effect 1>.x", "root<key 2>", "root[<key 2>]",
		"root.__reduce__[1][0]", "root.__getstate__()", "root.__getnewargs_ex__()[1]", "root['objects']<data>",
		"root[-1]", "root[None]", "root[True][False]", "root[float('nan')]", "root[b'\\x00']",
	} {
		c, err := Canonical(f)
		if err != nil {
			t.Errorf("Canonical(%s): %v", f, err)
			continue
		}
		if c != f {
			t.Errorf("Canonical(%s) = %s", f, c)
		}
	}
	// other spellings of the same path
	for in, want := range map[string]string{
		`root["key"]`:         `root['key']`,
		`root[ 'a' , 2 ]`:     `root['a', 2]`,
		`root[('a', 2)]`:      `root['a', 2]`,
		`root['\u00e9']`:      `root['é']`,
		`root[0x10]`:          `root[16]`,
		`root[1_000]`:         `root[1000]`,
		`root[(1)]`:           `root[1]`,
		`root[1.0e3]`:         `root[1000.0]`,
		`root[float('-inf')]`: `root[float('-inf')]`,
		`part["a/data.pkl"]`:  `part['a/data.pkl']`,
	} {
		c, err := Canonical(in)
		if err != nil || c != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, c, err, want)
		}
	}
}

func TestMalformed(t *testing.T) {
	for in, pos := range map[string]int{
		"":                 0,
		"garbage[[":        0,
		"root[[":           5,
		"root['a":          5,
		"root.":            5,
		"root[]":           4,
		"s1:root":          0,
		"root:x":           4,
		"root['a'] x":      9,
		"stream[-1]":       0,
		"stream[x]":        7,
		"part[3]":          5,
		"root<":            5,
		"root<popped x>":   12,
		"root[1":           6,
		"root[b'é']":       7,
		"root['\\x4']":     6,
		"root[float('x')]": 11,
	} {
		_, err := Parse(in)
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("Parse(%q): %v, want an *Error", in, err)
			continue
		}
		if e.Pos != pos {
			t.Errorf("Parse(%q): position %d (%v), want %d", in, e.Pos, e, pos)
		}
		if strings.Contains(e.Error(), "\n") {
			t.Errorf("error of %q is not one line", in)
		}
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"root['a']", "root['a']", true},
		{"root['a'][1]", "root['a']", true},
		{"root['a'].x", "root['a']", true},
		{"root['ab']", "root['a']", false},
		{"root[10]", "root[1]", false},
		{"root[1]", "root[1]", true},
		{"root.xy", "root.x", false},
		{"root.x<data>", "root.x", true},
	} {
		if got := Under(c.s, c.p); got != c.want {
			t.Errorf("Under(%s, %s) = %v", c.s, c.p, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"root['a'][1, 2]", "stream[1]<popped 0>.x", "part['a']", "root{#1}", "root[b'\\xff']"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		c := p.String()
		q, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(%q) = %q does not parse: %v", s, c, err)
		}
		if q.String() != c {
			t.Fatalf("not stable: %q -> %q -> %q", s, c, q.String())
		}
	})
}

func TestElementIndex(t *testing.T) {
	for _, idx := range [][]int64{{3}, {3, 7}, {}, {0, 1, 2}, {-1}} {
		s := Element(idx)
		p, err := Parse("root" + s)
		if err != nil || len(p) != 2 {
			t.Fatalf("%s: %v", s, err)
		}
		got, ok := ElementIndex(p[1])
		if !ok || len(got) != len(idx) {
			t.Fatalf("%s: %v %v", s, got, ok)
		}
		for i := range idx {
			if got[i] != idx[i] {
				t.Errorf("%s: %v", s, got)
			}
		}
	}
	if s := Element([]int64{3, 7}); s != "[3, 7]" {
		t.Errorf("Element: %s", s)
	}
	if s := Element(nil); s != "[()]" {
		t.Errorf("Element of a 0-d array: %s", s)
	}
	for _, s := range []string{"root['a']", "root[1.5]", "root[1, 'a']", "root.x", "root[123456789012345678901234567890]"} {
		p, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ElementIndex(p[len(p)-1]); ok {
			t.Errorf("%s read as an element index", s)
		}
	}
	for _, s := range []string{"root['a']", "root[1.5]", "root[3]", "root[None]", "root[True]"} {
		p, _ := Parse(s)
		if _, ok := Label(p[1]); !ok {
			t.Errorf("%s: no label", s)
		}
	}
	if p, _ := Parse("root[1, 2]"); func() bool { _, ok := Label(p[1]); return ok }() {
		t.Errorf("a tuple read as a label")
	}
}
