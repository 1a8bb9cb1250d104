package canon

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

func p4() *asm { a := &asm{}; return a.proto(4) }

func TestAliasing(t *testing.T) {
	// a = []; [a, a]
	shared := p4().op(']').put(0).op(']').put(1).mark().get(1).get(1).op('e').stop()
	two := p4().op(']').mark().op(']').op(']').op('e').stop()
	differ(t, "[a,a] vs [[],[]]", shared, two)
	// the same value with and without memo: strings shared or not hash equal
	s1 := p4().mark().str("abc").put(0).get(0).op('t').stop()
	s2 := p4().mark().str("abc").str("abc").op('t').stop()
	same(t, "shared vs fresh str", s1, s2)
	// tuples of lists: aliasing inside tuples counts
	t1 := p4().op(']').put(0).get(0).op(0x86).stop()
	t2 := p4().op(']').op(']').op(0x86).stop()
	differ(t, "(a,a) vs ([],[])", t1, t2)
}

func TestCycles(t *testing.T) {
	// l = []; l.append(l)
	l := p4().op(']').put(0).get(0).op('a').stop()
	l2 := p4().op(']').put(0).op(']').op('a').stop()
	differ(t, "self list vs [[]]", l, l2)
	// d = {}; d['x'] = d
	d := p4().op('}').put(0).str("x").get(0).op('s').stop()
	d2 := p4().op('}').put(0).str("x").op('}').op('s').stop()
	differ(t, "self dict vs {'x': {}}", d, d2)
	// a set holding a tuple that holds the list holding the set (a cycle through a set element)
	c := p4().op(']').put(0).op(0x8f).put(1).mark().get(0).op(0x85).op(0x90).op('a').stop()
	digestOf(t, c, Options{})
}

func TestBillionLaughs(t *testing.T) {
	// 12 levels of 10 references each: 10^12 leaves unfolded.
	for _, lst := range []bool{false, true} {
		a := p4()
		a.str("lol").put(0)
		for i := 1; i <= 12; i++ {
			a.mark()
			for j := 0; j < 10; j++ {
				a.get(byte(i - 1))
			}
			if lst {
				a.op('l')
			} else {
				a.op('t')
			}
			a.put(byte(i))
		}
		b := a.stop()
		start := time.Now()
		digestOf(t, b, Options{})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("billion laughs (lists=%v) took %v", lst, d)
		}
	}
}

func TestDiscardedCall(t *testing.T) {
	plain := p4().op(']').stop()
	evil := p4().global("os", "system").str("echo hi").op(0x85).op('R').op('0').op(']').stop()
	differ(t, "[] vs os.system POP []", plain, evil)
	memoOnly := p4().global("os", "system").str("echo hi").op(0x85).op('R').put(5).op('0').op(']').stop()
	differ(t, "[] vs call kept in memo", plain, memoOnly)
	left := p4().global("os", "system").str("echo hi").op(0x85).op('R').op(']').stop()
	differ(t, "[] vs call left under the result", plain, left)
	globalOnly := p4().global("os", "system").op('0').op(']').stop()
	differ(t, "[] vs resolved global", plain, globalOnly)
	differ(t, "different discarded calls", evil, p4().global("os", "system").str("echo ho").op(0x85).op('R').op('0').op(']').stop())
	// a mutation of a global (patching a class) is an effect
	patch := p4().global("m", "C").put(0).op('0').op(']').get(0).op('}').str("x").binint(1).op('s').op('b').op('0').stop()
	_ = patch
}

func TestTypes(t *testing.T) {
	vals := map[string][]byte{
		"int 1":      p4().op('K', 1).stop(),
		"True":       p4().op(0x88).stop(),
		"float 1.0":  p4().binfloat(1).stop(),
		"0.0":        p4().binfloat(0).stop(),
		"-0.0":       p4().binfloat(math_Copysign0()).stop(),
		"nan":        p4().floatBits(0x7ff8000000000000).stop(),
		"nan2":       p4().floatBits(0x7ff8000000000001).stop(),
		"str":        p4().str("ab").stop(),
		"bytes":      p4().bytes("ab").stop(),
		"bytearray":  p4().op(0x96, 2, 0, 0, 0, 0, 0, 0, 0).text("ab").stop(),
		"tuple":      p4().op(0x29).stop(),
		"list":       p4().op(']').stop(),
		"set":        p4().op(0x8f).stop(),
		"frozenset":  p4().mark().op(0x91).stop(),
		"dict":       p4().op('}').stop(),
		"None":       p4().op('N').stop(),
		"False":      p4().op(0x89).stop(),
		"int 0":      p4().op('K', 0).stop(),
		"global":     p4().global("a", "b").stop(),
		"global a.b": p4().global("a.b", "c").stop(),
	}
	seen := map[string]string{}
	for name, b := range vals {
		d := digestOf(t, b, Options{})
		if o, ok := seen[d]; ok {
			t.Errorf("%s and %s hash equal", name, o)
		}
		seen[d] = name
	}
}

func math_Copysign0() float64 {
	z := 0.0
	return -z * 1
}

func TestIntFloatStrForms(t *testing.T) {
	// INT text, BININT1, BININT, LONG1 for the same value
	forms := [][]byte{
		(&asm{}).text("I7\n.").Bytes(),
		p4().op('K', 7).stop(),
		p4().binint(7).stop(),
		p4().op(0x8a, 1, 7).stop(),
		(&asm{}).text("L7L\n.").Bytes(),
	}
	for i := 1; i < len(forms); i++ {
		same(t, "int forms", forms[0], forms[i])
	}
	same(t, "I01 is True", (&asm{}).text("I01\n.").Bytes(), p4().op(0x88).stop())
	same(t, "FLOAT vs BINFLOAT", (&asm{}).text("F1.5\n.").Bytes(), p4().binfloat(1.5).stop())
	same(t, "STRING vs BINUNICODE", (&asm{}).text("S'abc'\n.").Bytes(), p4().str("abc").stop())
	same(t, "UNICODE vs BINUNICODE", (&asm{}).text("Vabc\n.").Bytes(), p4().str("abc").stop())
	long := strings.Repeat("x", 300)
	same(t, "long str forms", (&asm{}).text("V"+long+"\n.").Bytes(), p4().str(long).stop())
	same(t, "GLOBAL vs STACK_GLOBAL", p4().global("os", "path").stop(), p4().sglobal("os", "path").stop())
	// proto 2 py2 name mapping
	same(t, "__builtin__ mapped", (&asm{}).proto(2).global("__builtin__", "len").stop(), p4().sglobal("builtins", "len").stop())
	// bytes at protocol 2: _codecs.encode(u'ab', 'latin1')
	same(t, "codecs bytes", (&asm{}).proto(2).global("_codecs", "encode").str("a\u00e9").str("latin1").op(0x86).op('R').stop(), p4().bytes("a\xe9").stop())
	same(t, "bytes()", (&asm{}).proto(2).global("__builtin__", "bytes").op(')').op('R').stop(), p4().bytes("").stop())
	differ(t, "codecs bytes value", (&asm{}).proto(2).global("_codecs", "encode").str("ab").str("latin1").op(0x86).op('R').stop(), p4().bytes("ax").stop())
	// bytearray
	same(t, "bytearray reduce", (&asm{}).proto(3).global("builtins", "bytearray").bytes("ab").op(0x85).op('R').stop(), p4().op(0x96, 2, 0, 0, 0, 0, 0, 0, 0).text("ab").stop())
}

func TestBatchesAndMemo(t *testing.T) {
	a := p4().op(']').put(0).mark().binint(1).binint(2).op('e').mark().binint(3).op('e').stop()
	b := p4().op(']').binint(1).op('a').binint(2).op('a').binint(3).op('a').stop()
	c := (&asm{}).text("(lp0\nI1\naI2\naI3\na.").Bytes()
	same(t, "APPENDS batches", a, b)
	same(t, "proto 0 list", a, c)
	d1 := p4().op('}').put(0).mark().str("a").binint(1).op('u').mark().op('u').str("b").binint(2).op('s').stop()
	d2 := p4().op('}').mark().str("b").binint(2).str("a").binint(1).op('u').stop()
	same(t, "dict order and batches", d1, d2)
	o1 := digestOf(t, d1, Options{KeepDictOrder: true})
	o2 := digestOf(t, d2, Options{KeepDictOrder: true})
	if o1 == o2 {
		t.Error("--keep-dict-order: different insertion order hashes equal")
	}
	// duplicate keys: last value wins, 1 == 1.0 == True
	dup := p4().op('}').mark().op('K', 1).str("a").binfloat(1).str("b").op('u').stop()
	one := p4().op('}').mark().op('K', 1).str("b").op('u').stop()
	same(t, "duplicate numeric keys", dup, one)
}

func TestSets(t *testing.T) {
	s1 := p4().op(0x8f).mark().str("a").str("b").str("c").op(0x90).stop()
	s2 := p4().op(0x8f).mark().str("c").op(0x90).mark().str("a").str("b").op(0x90).stop()
	same(t, "set order", s1, s2)
	// protocol 2/3 set: builtins.set([...])
	s3 := (&asm{}).proto(2).global("__builtin__", "set").op(']').mark().str("b").str("c").str("a").op('e').op(0x85).op('R').stop()
	same(t, "set reduce", s1, s3)
	f1 := p4().mark().str("b").str("a").op(0x91).stop()
	f2 := (&asm{}).proto(3).global("builtins", "frozenset").op(']').mark().str("a").str("b").op('e').op(0x85).op('R').stop()
	same(t, "frozenset reduce", f1, f2)
	differ(t, "set vs frozenset", p4().op(0x8f).mark().str("a").str("b").op(0x90).stop(), f1)
	// only exactly builtins.set
	f3 := (&asm{}).proto(3).global("mymod", "set").op(']').mark().str("a").str("b").op('e').op(0x85).op('R').stop()
	differ(t, "mymod.set is not set", f2, f3)
	// a set of objects, in either order
	obj := func(a *asm, v int32) *asm {
		return a.global("m", "C").op(')').op(0x81).op('}').str("v").binint(v).op('s').op('b')
	}
	o1 := obj(obj(p4().op(0x8f).mark(), 1), 2).op(0x90).stop()
	o2 := obj(obj(p4().op(0x8f).mark(), 2), 1).op(0x90).stop()
	same(t, "set of objects", o1, o2)
}

func TestObjectForms(t *testing.T) {
	newobj := p4().global("m", "C").op(')').op(0x81).op('}').str("x").binint(1).op('s').op('b').stop()
	viaReduce := (&asm{}).proto(2).global("copy_reg", "__newobj__").global("m", "C").op(0x85).op('R').op('}').str("x").binint(1).op('s').op('b').stop()
	same(t, "copyreg.__newobj__ vs NEWOBJ", newobj, viaReduce)
	recon := (&asm{}).text("ccopy_reg\n_reconstructor\n(cm\nC\nc__builtin__\nobject\nNtR(dVx\nI1\nsb.").Bytes()
	same(t, "_reconstructor vs NEWOBJ", newobj, recon)
	nested := p4().sglobal("m", "A.B").stop()
	viaGetattr := (&asm{}).proto(3).global("builtins", "getattr").global("m", "A").str("B").op(0x86).op('R').stop()
	same(t, "getattr chain vs dotted global", nested, viaGetattr)
	differ(t, "dotted at proto 3 vs 4", (&asm{}).proto(3).global("m", "A.B").stop(), nested)
	// NEWOBJ_EX with empty kwargs == NEWOBJ
	ex := p4().global("m", "C").op(')').op('}').op(0x92).op('}').str("x").binint(1).op('s').op('b').stop()
	same(t, "NEWOBJ_EX empty kwargs", newobj, ex)
	// SETITEMS on a non-dict keeps order; OrderedDict keeps order
	od := func(k1, k2 string) []byte {
		return p4().global("collections", "OrderedDict").op(')').op('R').mark().str(k1).binint(1).str(k2).binint(2).op('u').stop()
	}
	differ(t, "OrderedDict order", od("a", "b"), od("b", "a"))
	obj := func(k1, k2 string) []byte {
		return p4().global("m", "C").op(')').op(0x81).mark().str(k1).binint(1).str(k2).binint(2).op('u').stop()
	}
	differ(t, "SETITEMS on an object keeps order", obj("a", "b"), obj("b", "a"))
	differ(t, "call vs newobj", p4().global("m", "C").op(')').op('R').stop(), p4().global("m", "C").op(')').op(0x81).stop())
}

// cloudpickle-like skeleton: _make_skeleton_class(type, name, (), {}, id, {})
func skeleton(a *asm, id string, memo byte) *asm {
	a.sglobal("cloudpickle.cloudpickle", "_make_skeleton_class")
	a.sglobal("builtins", "type").str("C").op(')').op('}').str(id).op('}')
	a.mark()
	// args tuple built with MARK .. TUPLE: type, name, bases, kwargs, id, extra
	b := a.Bytes()
	_ = b
	return a
}

func skel(a *asm, id string) *asm {
	a.sglobal("cloudpickle.cloudpickle", "_make_skeleton_class")
	a.mark().sglobal("builtins", "type").str("C").op(')').op('}').str(id).op('}').op('t')
	return a.op('R')
}

func TestTrackerIDs(t *testing.T) {
	const id1 = "0123456789abcdef0123456789abcdef"
	const id2 = "fedcba9876543210fedcba9876543210"
	const id3 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	pair := func(x, y string) []byte {
		a := p4().mark()
		skel(a, x)
		skel(a, y)
		return a.op('t').stop()
	}
	same(t, "one id vs another", pair(id1, id1), pair(id2, id2))
	same(t, "two ids vs two others", pair(id1, id2), pair(id3, id1))
	differ(t, "same id twice vs two ids", pair(id1, id1), pair(id1, id2))
	// the strict form keeps them
	if digestOf(t, pair(id1, id1), Options{Strict: true}) == digestOf(t, pair(id2, id2), Options{Strict: true}) {
		t.Error("--strict normalised tracker ids")
	}
	// a 32-hex string in user data is data
	differ(t, "hex in user data", p4().str(id1).stop(), p4().str(id2).stop())
	differ(t, "hex in a non-tracker position", p4().sglobal("cloudpickle.cloudpickle", "_make_skeleton_class").mark().str(id1).op('t').op('R').stop(),
		p4().sglobal("cloudpickle.cloudpickle", "_make_skeleton_class").mark().str(id2).op('t').op('R').stop())
	// vendored cloudpickle
	v1 := p4().sglobal("joblib.externals.cloudpickle.cloudpickle", "_make_skeleton_class").mark().sglobal("builtins", "type").str("C").op(')').op('}').str(id1).op('}').op('t').op('R').stop()
	v2 := p4().sglobal("joblib.externals.cloudpickle.cloudpickle", "_make_skeleton_class").mark().sglobal("builtins", "type").str("C").op(')').op('}').str(id2).op('}').op('t').op('R').stop()
	same(t, "vendored tracker", v1, v2)
}

func TestExplain(t *testing.T) {
	b := (&asm{}).proto(2).op(']').mark().global("__builtin__", "set").op(']').mark().str("a").op('e').op(0x85).op('R').op('e').stop()
	f := parse(t, b)
	v := Normalize(f.Streams[0], Options{})
	ap := v.Applied()
	if len(ap) != 1 || ap[0].Rule != RuleSetReduce || ap[0].Path != "root[0]" {
		t.Errorf("applied = %+v", ap)
	}
}

func TestViewAPI(t *testing.T) {
	b := p4().op('}').mark().str("b").op(']').put(0).str("a").get(0).op('u').stop()
	v := Normalize(parse(t, b).Streams[0], Options{})
	r := v.Root()
	es := r.Entries()
	if len(es) != 2 || es[0].Key.Str() != "a" || es[1].Key.Str() != "b" {
		t.Fatalf("entries not sorted: %v", es)
	}
	if es[0].Value != es[1].Value {
		t.Error("aliasing lost in the view")
	}
	if p := es[1].Value.Path(); p != "root['a']" {
		t.Errorf("path = %q", p)
	}
	if string(es[0].Value.Digest()) != string(Normalize(parse(t, p4().op(']').stop()).Streams[0], Options{}).Root().Digest()) {
		t.Error("subtree digest of [] differs")
	}
}

func TestParseDigest(t *testing.T) {
	o, h, err := ParseDigest("pk1+strict+dictorder-xxh3:" + strings.Repeat("a", 32))
	if err != nil || !o.Strict || !o.KeepDictOrder || o.Algo != XXH3 || len(h) != 32 {
		t.Errorf("got %+v %q %v", o, h, err)
	}
	if o, _, err := ParseDigest("pk2+nolineno-sha256:" + strings.Repeat("a", 64)); err != nil || o.Form != Form2 || !o.StripLineno {
		t.Errorf("pk2: %+v %v", o, err)
	}
	if _, _, err := ParseDigest("pk3-sha256:" + strings.Repeat("a", 64)); err == nil {
		t.Error("pk3 accepted")
	} else if _, ok := err.(*VersionError); !ok {
		t.Errorf("pk3: %T %v", err, err)
	}
	d := digestOf(t, p4().op(']').stop(), Options{Algo: XXH3})
	if !strings.HasPrefix(d, "pk1-xxh3:") || len(d) != len("pk1-xxh3:")+32 {
		t.Errorf("xxh3 digest %q", d)
	}
}

func TestBlobs(t *testing.T) {
	big := func(last byte, op byte) []byte {
		s := strings.Repeat("z", 3<<20) + string(last)
		a := p4()
		if op == 'X' {
			return a.str(s).stop()
		}
		return a.bytes(s).stop()
	}
	differ(t, "streamed bytes, last byte", big('a', 'B'), big('b', 'B'))
	differ(t, "streamed str vs bytes", big('a', 'B'), big('a', 'X'))
	// the same long string inline (below the blob threshold) and streamed hashes the same
	s := strings.Repeat("q", 2<<20)
	f1, err := pickle.Parse(bytes.NewReader(p4().str(s).stop()), -1, "a", pickle.Options{NewHash: SHA256.New, BlobThreshold: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	f2, err := pickle.Parse(bytes.NewReader(p4().str(s).stop()), -1, "b", pickle.Options{NewHash: SHA256.New, BlobThreshold: 1024})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := HashDoc(&input.Doc{Parts: []input.Part{{Pickle: f1}}}, Options{})
	d2, _ := HashDoc(&input.Doc{Parts: []input.Part{{Pickle: f2}}}, Options{})
	if d1.Digest != d2.Digest {
		t.Error("inline and streamed payloads hash differently")
	}
}

func TestDeepNesting(t *testing.T) {
	for _, op := range []byte{0x85, 'l'} { // TUPLE1 (pure) and MARK..LIST (identity)
		a := p4()
		if op == 'l' {
			a.text(strings.Repeat("(", 200000))
		}
		a.op('N')
		for i := 0; i < 200000; i++ {
			a.op(op)
		}
		digestOf(t, a.stop(), Options{})
	}
}
