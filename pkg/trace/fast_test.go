package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// topNs are the --top sizes every comparison runs: 1, a few, more than
// most fixtures hold (ties are everywhere in small pickles).
var topNs = []int{1, 2, 3, 7, 20, 1000}

// topOutputs renders --top n as text (both styles) and JSON.
func topOutputs(t *testing.T, tr *Tree, n int) string {
	t.Helper()
	var b bytes.Buffer
	if err := tr.WriteTop(&b, n, Style{}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--\n")
	if err := tr.WriteTop(&b, n, Style{ASCII: true, Bytes: true}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--\n")
	if err := tr.WriteTopJSON(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// slowTree is what pk trace builds without the fast path.
func slowTree(path string) (*Tree, error) {
	d, err := input.OpenWith(path, pickle.Options{}, input.Options{})
	if err != nil {
		return nil, err
	}
	return NewDoc(d), nil
}

// agree checks, for every n of topNs, that the fast path either falls back
// or prints what the graph path prints. It reports how many n it took.
func agree(t *testing.T, path string) (fast int) {
	t.Helper()
	var slow *Tree
	var slowErr error
	for _, n := range topNs {
		ft := FastTop(path, n)
		if ft == nil {
			continue
		}
		fast++
		if slow == nil && slowErr == nil {
			slow, slowErr = slowTree(path)
		}
		if slowErr != nil {
			t.Errorf("%s: the fast path answered but the graph path fails: %v", path, slowErr)
			return fast
		}
		got, want := topOutputs(t, ft, n), topOutputs(t, slow, n)
		if got != want {
			t.Errorf("%s --top %d: fast path differs\n--- fast\n%s\n--- graph\n%s", path, n, got, want)
			return fast
		}
	}
	if fast != 0 && fast != len(topNs) {
		t.Errorf("%s: the fast path applied to %d of %d --top sizes", path, fast, len(topNs))
	}
	return fast
}

// TestFastTopCorpus: on every file under testdata/ (fixtures, equiv,
// differ, inputs, trace, ...; pickles or not) the fast path falls back or
// agrees with the graph path (every second file under -short).
func TestFastTopCorpus(t *testing.T) {
	files := testfile.Sample(corpusFiles(8<<20), 2)
	if len(files) < testfile.ShortDiv(100, 2) {
		t.Fatalf("only %d files under testdata", len(files))
	}
	took := 0
	for _, p := range files {
		if agree(t, p) > 0 {
			took++
		}
	}
	t.Logf("%d files, the fast path applied to %d", len(files), took)
	if took < testfile.ShortDiv(30, 2) {
		t.Errorf("the fast path applied to only %d files of the corpus", took)
	}
}

// enc writes pickle opcodes for the generated cases.
type enc struct {
	b     bytes.Buffer
	proto int
	memo  int
}

func (e *enc) op(c pickle.Opcode, arg ...byte) { e.b.WriteByte(byte(c)); e.b.Write(arg) }

func le(n int, v uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:n]
}

// put memoizes the top of the stack in the form of the protocol.
func (e *enc) put() int {
	i := e.memo
	e.memo++
	switch {
	case e.proto >= 4 && i%3 == 0:
		e.op(pickle.MEMOIZE)
	case e.proto == 0:
		e.op(pickle.PUT, []byte(strconv.Itoa(i)+"\n")...)
	case i < 256:
		e.op(pickle.BINPUT, byte(i))
	default:
		e.op(pickle.LONG_BINPUT, le(4, uint64(i))...)
	}
	return i
}

func (e *enc) get(i int) {
	switch {
	case e.proto == 0:
		e.op(pickle.GET, []byte(strconv.Itoa(i)+"\n")...)
	case i < 256:
		e.op(pickle.BINGET, byte(i))
	default:
		e.op(pickle.LONG_BINGET, le(4, uint64(i))...)
	}
}

func (e *enc) int(v int64) {
	switch {
	case e.proto == 0 || (v > math.MaxInt32 || v < math.MinInt32) && e.proto < 2:
		e.op(pickle.INT, []byte(strconv.FormatInt(v, 10)+"\n")...)
	case v >= 0 && v < 256:
		e.op(pickle.BININT1, byte(v))
	case v >= 0 && v < 65536:
		e.op(pickle.BININT2, le(2, uint64(v))...)
	case v >= math.MinInt32 && v <= math.MaxInt32:
		e.op(pickle.BININT, le(4, uint64(v))...)
	default:
		e.op(pickle.LONG1, 8)
		e.b.Write(le(8, uint64(v)))
	}
}

func (e *enc) str(s string) {
	switch {
	case e.proto == 0:
		e.op(pickle.UNICODE, []byte(s+"\n")...)
	case e.proto < 3:
		e.op(pickle.BINUNICODE, le(4, uint64(len(s)))...)
		e.b.WriteString(s)
	case e.proto >= 4 && len(s) < 256:
		e.op(pickle.SHORT_BINUNICODE, byte(len(s)))
		e.b.WriteString(s)
	case e.proto >= 4 && len(s)%2 == 0:
		e.op(pickle.BINUNICODE8, le(8, uint64(len(s)))...)
		e.b.WriteString(s)
	default:
		e.op(pickle.BINUNICODE, le(4, uint64(len(s)))...)
		e.b.WriteString(s)
	}
}

func (e *enc) bytes(s string) {
	switch {
	case e.proto == 0:
		// Python 2 str, quoted
		e.op(pickle.STRING, []byte("'"+s+"'\n")...)
		return
	case e.proto < 3 && len(s) < 256:
		e.op(pickle.SHORT_BINSTRING, byte(len(s)))
	case e.proto < 3:
		e.op(pickle.BINSTRING, le(4, uint64(len(s)))...)
	case len(s) < 256:
		e.op(pickle.SHORT_BINBYTES, byte(len(s)))
	case e.proto >= 5 && len(s)%3 == 0:
		e.op(pickle.BYTEARRAY8, le(8, uint64(len(s)))...)
	case e.proto >= 4:
		e.op(pickle.BINBYTES8, le(8, uint64(len(s)))...)
	default:
		e.op(pickle.BINBYTES, le(4, uint64(len(s)))...)
	}
	e.b.WriteString(s)
}

// gen writes random plain data: nested lists, tuples, dicts, sets, with
// memo references to strings and tuples; sizes repeat so ties are common.
type gen struct {
	*enc
	r      *rand.Rand
	shared []int // memo indices of immutable objects
	nodes  int
}

func (g *gen) value(depth int) {
	g.nodes++
	k := g.r.Intn(14)
	if depth > 6 || g.nodes > 400 {
		k = g.r.Intn(6)
	}
	switch k {
	case 0:
		if len(g.shared) > 0 {
			g.get(g.shared[g.r.Intn(len(g.shared))])
			return
		}
		g.op(pickle.NONE)
	case 1:
		g.int(int64(g.r.Intn(5)) * []int64{1, 300, 70000, 1 << 40, -1}[g.r.Intn(5)])
	case 2:
		if g.proto >= 2 {
			g.op([]pickle.Opcode{pickle.NEWTRUE, pickle.NEWFALSE}[g.r.Intn(2)])
		} else {
			g.op(pickle.INT, []byte([]string{"00\n", "01\n"}[g.r.Intn(2)])...)
		}
	case 3:
		if g.proto == 0 {
			g.op(pickle.FLOAT, []byte("2.5\n")...)
		} else {
			g.op(pickle.BINFLOAT, le(8, math.Float64bits(float64(g.r.Intn(4))/3))...)
		}
	case 4, 5:
		s := strings.Repeat([]string{"a", "bé", "key", "x'y"}[g.r.Intn(4)], []int{1, 3, 1, 40}[g.r.Intn(4)])
		g.str(s)
		if g.r.Intn(2) == 0 {
			g.shared = append(g.shared, g.put())
		}
	case 6:
		g.bytes(strings.Repeat("z", []int{0, 3, 9, 300}[g.r.Intn(4)]))
	case 7, 8:
		g.list(depth)
	case 9, 10:
		g.dict(depth)
	case 11:
		g.tuple(depth)
	default:
		g.set(depth)
	}
}

func (g *gen) key(depth int) {
	switch g.r.Intn(6) {
	case 0:
		g.int(int64(g.r.Intn(3)))
	case 1:
		if len(g.shared) > 0 {
			g.get(g.shared[g.r.Intn(len(g.shared))])
			return
		}
		g.op(pickle.NONE)
	case 2:
		g.tuple(depth)
	case 3:
		g.bytes("kb")
	default:
		g.str([]string{"a", "name", "b"}[g.r.Intn(3)])
		if g.r.Intn(2) == 0 {
			g.shared = append(g.shared, g.put())
		}
	}
}

func (g *gen) items(depth int, n int, pairs bool) {
	for i := 0; i < n; i++ {
		if pairs {
			g.key(depth + 1)
		}
		g.value(depth + 1)
	}
}

func (g *gen) list(depth int) {
	n := g.r.Intn(5)
	if g.proto == 0 || g.r.Intn(3) == 0 {
		g.op(pickle.MARK)
		g.items(depth, n, false)
		g.op(pickle.LIST)
		if g.r.Intn(3) == 0 {
			g.put()
		}
		return
	}
	g.op(pickle.EMPTY_LIST)
	if g.r.Intn(2) == 0 {
		g.put()
	}
	for n > 0 {
		if g.r.Intn(2) == 0 {
			g.value(depth + 1)
			g.op(pickle.APPEND)
			n--
			continue
		}
		b := min(n, 1+g.r.Intn(3))
		g.op(pickle.MARK)
		g.items(depth, b, false)
		g.op(pickle.APPENDS)
		n -= b
	}
	if g.r.Intn(4) == 0 {
		g.op(pickle.MARK)
		g.op(pickle.APPENDS) // empty batch
	}
}

func (g *gen) dict(depth int) {
	n := g.r.Intn(5)
	if g.proto == 0 || g.r.Intn(3) == 0 {
		g.op(pickle.MARK)
		g.items(depth, n, true)
		g.op(pickle.DICT)
		return
	}
	g.op(pickle.EMPTY_DICT)
	if g.r.Intn(2) == 0 {
		g.put()
	}
	for n > 0 {
		if g.r.Intn(2) == 0 {
			g.key(depth + 1)
			g.value(depth + 1)
			g.op(pickle.SETITEM)
			n--
			continue
		}
		b := min(n, 1+g.r.Intn(3))
		g.op(pickle.MARK)
		g.items(depth, b, true)
		g.op(pickle.SETITEMS)
		n -= b
	}
}

func (g *gen) tuple(depth int) {
	n := g.r.Intn(5)
	if g.proto >= 2 && n <= 3 && g.r.Intn(2) == 0 {
		if n == 0 {
			g.op(pickle.EMPTY_TUPLE)
		} else {
			for i := 0; i < n; i++ {
				g.scalarish(depth + 1)
			}
			g.op(pickle.TUPLE1 + pickle.Opcode(n-1))
		}
	} else {
		g.op(pickle.MARK)
		for i := 0; i < n; i++ {
			g.scalarish(depth + 1)
		}
		g.op(pickle.TUPLE)
	}
	if g.r.Intn(2) == 0 {
		g.shared = append(g.shared, g.put())
	}
}

// scalarish: tuple items are immutable here (a tuple may be referenced
// again, and mutable objects must not be: that falls back).
func (g *gen) scalarish(depth int) {
	switch g.r.Intn(4) {
	case 0:
		g.str("t")
	case 1:
		if depth < 5 {
			g.tuple(depth)
			return
		}
		g.int(7)
	default:
		g.int(int64(g.r.Intn(300)))
	}
}

func (g *gen) set(depth int) {
	n := g.r.Intn(4)
	if g.proto < 4 {
		g.tuple(depth)
		return
	}
	if g.r.Intn(2) == 0 {
		g.op(pickle.MARK)
		for i := 0; i < n; i++ {
			g.scalarish(depth + 1)
		}
		g.op(pickle.FROZENSET)
		if g.r.Intn(2) == 0 {
			g.shared = append(g.shared, g.put())
		}
		return
	}
	g.op(pickle.EMPTY_SET)
	g.op(pickle.MARK)
	for i := 0; i < n; i++ {
		g.scalarish(depth + 1)
	}
	g.op(pickle.ADDITEMS)
}

// genPickle writes one random plain-data pickle of the given protocol.
func genPickle(seed int64, proto int) []byte {
	g := &gen{enc: &enc{proto: proto}, r: rand.New(rand.NewSource(seed))}
	if proto >= 2 {
		g.op(pickle.PROTO, byte(proto))
	}
	var body []byte
	if proto >= 4 {
		// one frame around everything but PROTO (as CPython writes short pickles)
		outer := g.enc.b
		g.enc.b = bytes.Buffer{}
		g.value(0)
		g.op(pickle.STOP)
		body = g.enc.b.Bytes()
		g.enc.b = outer
		g.op(pickle.FRAME, le(8, uint64(len(body)))...)
		g.b.Write(body)
		return g.b.Bytes()
	}
	g.value(0)
	g.op(pickle.STOP)
	return g.b.Bytes()
}

func writeTemp(t testing.TB, dir, name string, b []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFastTopGenerated: random plain-data pickles of protocols 0-5 take the
// fast path and print what the graph path prints.
func TestFastTopGenerated(t *testing.T) {
	dir := t.TempDir()
	took := 0
	for proto := 0; proto <= 5; proto++ {
		for seed := int64(0); seed < 60; seed++ {
			b := genPickle(seed*7+int64(proto), proto)
			p := writeTemp(t, dir, fmt.Sprintf("g%d_%d.pkl", proto, seed), b)
			if _, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), p, pickle.Options{}); err != nil {
				t.Fatalf("generator wrote a bad pickle (proto %d seed %d): %v", proto, seed, err)
			}
			if agree(t, p) > 0 {
				took++
			} else if reason := fastReason(b); !strings.HasSuffix(reason, objKeyReason) {
				// (a shared tuple key goes to the graph path: its value's
				// path is root[1, 2], which only the graph path spells)
				t.Errorf("proto %d seed %d: plain data fell back: %s", proto, seed, reason)
			}
		}
	}
	t.Logf("%d generated pickles took the fast path", took)
}

func fastReason(b []byte) string {
	_, err := fastTopOf(bytes.NewReader(b), int64(len(b)), "x", 5)
	if err == nil {
		return "none"
	}
	return err.Error()
}

// TestFastTopCases: hand-written plain data with keys of every scalar
// kind, references as keys and values, ties, a large str (a streamed
// blob), and deep nesting (JSON paths over MaxJSONPath are left out).
func TestFastTopCases(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{}
	{ // dict keyed by every scalar kind, some by reference
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.EMPTY_DICT)
		e.op(pickle.MARK)
		e.str("k")
		e.put() // 0
		e.str(strings.Repeat("v", 50))
		e.get(0)
		e.op(pickle.MARK)
		e.int(1)
		e.str("x")
		e.op(pickle.LIST)
		e.int(-5)
		e.op(pickle.EMPTY_LIST)
		e.op(pickle.BINFLOAT, le(8, math.Float64bits(-0.25))...)
		e.str("f")
		e.op(pickle.NONE)
		e.str("n")
		e.op(pickle.NEWTRUE)
		e.str("t")
		e.bytes("by\x00\xff")
		e.str("b")
		e.op(pickle.LONG1, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9)
		e.str("big")
		e.op(pickle.SETITEMS)
		e.op(pickle.STOP)
		cases["keys.pkl"] = e.b.Bytes()
	}
	{ // a tuple key by reference, its value, and a set
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.MARK)
		e.str("a")
		e.int(2)
		e.op(pickle.TUPLE2)
		e.put() // 0
		e.str("first")
		e.get(0)
		e.op(pickle.EMPTY_SET)
		e.op(pickle.MARK)
		e.int(1)
		e.int(2)
		e.op(pickle.ADDITEMS)
		e.op(pickle.DICT)
		e.op(pickle.STOP)
		cases["tuplekey.pkl"] = e.b.Bytes()
	}
	{ // a str over the blob threshold as a key and as a value
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.EMPTY_DICT)
		big := strings.Repeat("é", pickle.DefaultBlobThreshold/2+10)
		e.str(big)
		e.put()
		e.str("v")
		e.op(pickle.SETITEM)
		e.op(pickle.STOP)
		cases["blobkey.pkl"] = e.b.Bytes()
		e = &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.EMPTY_DICT)
		e.str(big)
		e.put() // 0
		e.int(1)
		e.op(pickle.SETITEM)
		e.op(pickle.EMPTY_DICT)
		e.get(0)
		e.str(strings.Repeat("w", 3000))
		e.op(pickle.SETITEM)
		e.op(pickle.TUPLE2)
		e.op(pickle.STOP)
		cases["blobref.pkl"] = e.b.Bytes()
	}
	{ // 3000 nested lists: long paths
		e := &enc{proto: 2}
		e.op(pickle.PROTO, 2)
		for i := 0; i < 3000; i++ {
			e.op(pickle.EMPTY_LIST)
		}
		e.str("leaf")
		for i := 0; i < 3000; i++ {
			e.op(pickle.APPEND)
		}
		e.op(pickle.STOP)
		cases["deep.pkl"] = e.b.Bytes()
	}
	{ // ties: equal items
		e := &enc{proto: 3}
		e.op(pickle.PROTO, 3)
		e.op(pickle.EMPTY_LIST)
		e.op(pickle.MARK)
		for i := 0; i < 50; i++ {
			e.op(pickle.MARK)
			e.int(int64(i))
			e.str("abc")
			e.op(pickle.TUPLE)
		}
		e.op(pickle.APPENDS)
		e.op(pickle.STOP)
		cases["ties.pkl"] = e.b.Bytes()
	}
	{ // a dict keyed by references, values growing: every value enters
		// the heap on its way (roles of references are resolved at the end)
		e := &enc{proto: 4}
		e.op(pickle.PROTO, 4)
		e.op(pickle.MARK)
		for i := 0; i < 3000; i++ {
			e.str("key" + strconv.Itoa(i))
			e.put()
		}
		e.op(pickle.LIST)
		e.op(pickle.EMPTY_DICT)
		e.op(pickle.MARK)
		for i := 0; i < 3000; i++ {
			e.get(i)
			e.bytes(strings.Repeat("v", i%700))
		}
		e.op(pickle.SETITEMS)
		e.op(pickle.TUPLE2)
		e.op(pickle.STOP)
		cases["refkeys.pkl"] = e.b.Bytes()
	}
	{ // a scalar result, and a memoized result
		cases["scalar.pkl"] = []byte("\x80\x04K\x05.")
		cases["memoroot.pkl"] = []byte("\x80\x04]\x94.")
		cases["p0.pkl"] = []byte("(lp0\nI1\naS'x'\np1\nag1\na(dp2\nVk\np3\nF1.5\nsg3\n(I1\nI2\ntp4\nsa.")
	}
	for name, b := range cases {
		p := writeTemp(t, dir, name, b)
		if name == "tuplekey.pkl" {
			// a tuple key: its value's path is root['a', 2], spelled by the
			// graph path from the key's items
			if r := fastReason(b); !strings.HasSuffix(r, objKeyReason) {
				t.Errorf("%s: the fast path took a tuple key (%s)", name, r)
			}
			tr, err := slowTree(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Find("root['a', 2]"); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if agree(t, p) == 0 {
			t.Errorf("%s: fell back: %s", name, fastReason(b))
		}
		if agreeDepth(t, p) != len(depthOpts) {
			t.Errorf("%s: the depth view fell back", name)
		}
	}
}

// TestFastTopFallsBack: what the fast path must leave to the graph path.
func TestFastTopFallsBack(t *testing.T) {
	cases := map[string]string{
		"empty":         "",
		"POP":           "\x80\x04K\x01K\x020.",
		"DUP":           "\x80\x04]2a.",
		"GET mutable":   "\x80\x04]\x94h\x00a.",
		"GET of a dict": "\x80\x04}q\x00]h\x00a.",
		"GLOBAL":        "\x80\x02cos\nsystem\nq\x00.",
		"REDUCE":        "\x80\x02c__builtin__\nlist\n)R.",
		"two streams":   "\x80\x04K\x01.\x80\x04K\x02.",
		"trailing":      "\x80\x04K\x01.junk",
		"leftover":      "\x80\x04K\x01K\x02.",
		"open MARK":     "\x80\x04(K\x01.",
		"truncated":     "\x80\x04]K\x01",
		"no STOP":       "\x80\x04]",
		"bad opcode":    "\x80\x04\xff.",
		"PROTO 6":       "\x80\x06K\x01.",
		"GET missing":   "\x80\x04h\x05.",
		"PUT of a ref":  "\x80\x04X\x01\x00\x00\x00aq\x00h\x00q\x01\x86.",
		"APPEND tuple":  "\x80\x04)K\x01a.",
		"SETITEM list":  "\x80\x04]K\x01K\x02s.",
		"odd DICT":      "\x80\x04(K\x01d.",
		"result ref":    "\x80\x04X\x01\x00\x00\x00aq\x000h\x00.",
		"bz2 magic":     "BZh91AY&SY",
		"gzip":          "\x1f\x8b\x08\x00",
		"zlib":          "x\x9c\x03\x00",
		"zip":           "PK\x03\x04",
		"npy":           "\x93NUMPY\x01\x00",
		"torch magic":   "\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.",
		"ext":           "\x80\x02\x82\x01.",
		"persid":        "\x80\x02K\x01Q.",
		"inst":          "(ios\nsystem\n.",
	}
	for name, s := range cases {
		b := []byte(s)
		tr, err := fastTopOf(bytes.NewReader(b), int64(len(b)), "x", 3)
		if tr != nil || err == nil {
			t.Errorf("%s: the fast path did not fall back", name)
		}
	}
	if FastTop("-", 3) != nil || FastTop("/nonexistent/file.pkl", 3) != nil || FastTop(".", 3) != nil {
		t.Error("stdin, a missing file or a directory took the fast path")
	}
}

// fuzzMaxInput bounds the inputs of the fast paths' fuzz targets: the seeds
// they are given and the inputs they test (a larger one returns at once).
// Go minimizes each input that adds coverage, for at most -fuzzminimizetime
// (3 s in scripts/fuzz.sh; Go's minimizer is quadratic in the input's
// length), and a minimization not done by then kills the worker process, no
// execution counted meanwhile. An execution here costs one to a few
// milliseconds (the fast paths, each with its own 256 KB read buffer, the
// graph path and up to a dozen renderings): a new input of more than a few
// hundred bytes is not minimized in time, and children of the 10-60 KB seeds
// (and the unminimized inputs such kills leave in the fuzz cache) kept the
// workers at 0-10 execs/sec for much of a run. The corpus tests cover the
// larger fixtures.
const fuzzMaxInput = 1 << 10

// addFuzzSeeds seeds a fast path's fuzz target: the small fixtures (at most
// fuzzMaxInput) and a generated plain-data pickle of each protocol.
func addFuzzSeeds(f *testing.F) {
	for _, p := range fixturesForSeeds() {
		if b, err := os.ReadFile(p); err == nil && len(b) <= fuzzMaxInput {
			f.Add(b)
		}
	}
	for proto := 0; proto <= 5; proto++ {
		f.Add(genPickle(int64(proto), proto))
	}
}

// fuzzSlowTree is the graph path's tree of b (written to a file in dir,
// named fuzz.pkl as the fast paths are told), the fuzz targets' oracle;
// what names the fast path that answered.
func fuzzSlowTree(t *testing.T, dir string, b []byte, what string) *Tree {
	t.Helper()
	fh, err := os.CreateTemp(dir, "f*.pkl")
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(b)
	fh.Close()
	defer os.Remove(fh.Name())
	slow, err := slowTree(fh.Name())
	if err != nil {
		t.Fatalf("%s answered but the graph path fails: %v", what, err)
	}
	slow.File.Name = "fuzz.pkl"
	return slow
}

// FuzzFastTop: on any bytes the fast paths (--top and the depth view) never
// panic, and either fall back or print what the graph path prints.
func FuzzFastTop(f *testing.F) {
	addFuzzSeeds(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		var slowT *Tree // the oracle, made once
		slow := func(what string) *Tree {
			if slowT == nil {
				slowT = fuzzSlowTree(t, dir, b, what)
			}
			return slowT
		}
		topFellBack := false // --top 1 fell back
		for _, n := range []int{1, 4} {
			tr, err := fastTopOf(bytes.NewReader(b), int64(len(b)), "fuzz.pkl", n)
			if n == 1 {
				topFellBack = tr == nil
			}
			if tr == nil {
				if err == nil {
					t.Fatal("no tree and no reason")
				}
				continue
			}
			if got, want := topOutputs(t, tr, n), topOutputs(t, slow("the fast path"), n); got != want {
				t.Fatalf("--top %d differs\n--- fast\n%s\n--- graph\n%s", n, got, want)
			}
		}
		// the depth view: falls back exactly when --top does, else agrees
		for _, opt := range []Options{{Depth: 1}, {Depth: 3, All: true}} {
			dt, err := fastDepthOf(bytes.NewReader(b), int64(len(b)), "fuzz.pkl", opt.Depth)
			if (dt == nil) != topFellBack {
				t.Fatalf("depth view and --top disagree on falling back: %v", err)
			}
			if dt == nil {
				continue
			}
			if got, want := depthOutputs(t, dt, opt), depthOutputs(t, slow("the depth view"), opt); got != want {
				t.Fatalf("%+v differs\n--- fast\n%s\n--- graph\n%s", opt, got, want)
			}
		}
	})
}

func fixturesForSeeds() []string {
	var out []string
	for _, g := range []string{"../../testdata/trace/*.pkl", "../../testdata/fixtures/stdlib/*.pkl", "../../testdata/equiv/*/*.pkl"} {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	return out
}

// BenchmarkFastTop20 is BenchmarkTop20 through the fast path.
func BenchmarkFastTop20(b *testing.B) {
	const path = "../../testdata/bench/dicts.pkl"
	if _, err := os.Stat(path); err != nil {
		b.Skip("no ", path, ": run python3 scripts/bench-gen.py")
	}
	for i := 0; i < b.N; i++ {
		t := FastTop(path, 20)
		if t == nil {
			b.Fatal("the fast path fell back")
		}
		t.WriteTop(io.Discard, 20, Style{})
	}
}

// TestFastTopDeepFallsBack: nesting beyond fastMaxStack takes the graph
// path (the fast path's stack stays bounded).
func TestFastTopDeepFallsBack(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x04")
	for i := 0; i <= fastMaxStack; i++ {
		b.WriteByte(byte(pickle.EMPTY_LIST))
	}
	for i := 0; i < fastMaxStack; i++ {
		b.WriteByte(byte(pickle.APPEND))
	}
	b.WriteByte(byte(pickle.STOP))
	if tr, _ := fastTopOf(bytes.NewReader(b.Bytes()), int64(b.Len()), "deep", 3); tr != nil {
		t.Error("a pickle nested deeper than fastMaxStack took the fast path")
	}
	// one level less is fine
	c := append([]byte{0x80, 4}, b.Bytes()[3:b.Len()-2]...)
	c = append(c, byte(pickle.STOP))
	if _, err := fastTopOf(bytes.NewReader(c), int64(len(c)), "deep", 3); err != nil {
		t.Errorf("a pickle nested fastMaxStack deep fell back: %v", err)
	}
}

// depthOpts are the walk options the depth comparisons run.
var depthOpts = []Options{
	{Depth: 0}, {Depth: 1}, {Depth: 2}, {Depth: 3, SortSize: true}, {Depth: 4, All: true},
	{Depth: 6, MinSize: 20}, {Depth: 2, MinSize: 1, All: true, SortSize: true},
}

// depthOutputs renders a walk from the root as text (both styles) and JSON.
func depthOutputs(t *testing.T, tr *Tree, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := tr.WriteText(&b, tr.Root(), opt, Style{}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--\n")
	if err := tr.WriteText(&b, tr.Root(), opt, Style{ASCII: true, Bytes: true}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("--\n")
	if err := tr.WriteJSON(&b, tr.Root(), opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// agreeDepth checks that FastDepth falls back or prints what the graph
// path prints, for every depthOpts; it reports how many it took.
func agreeDepth(t *testing.T, path string) (fast int) {
	t.Helper()
	var slow *Tree
	var slowErr error
	for _, opt := range depthOpts {
		ft := FastDepth(path, opt.Depth)
		if ft == nil {
			continue
		}
		fast++
		if slow == nil && slowErr == nil {
			slow, slowErr = slowTree(path)
		}
		if slowErr != nil {
			t.Errorf("%s: the depth fast path answered but the graph path fails: %v", path, slowErr)
			return fast
		}
		got, want := depthOutputs(t, ft, opt), depthOutputs(t, slow, opt)
		if got != want {
			t.Errorf("%s %+v: depth fast path differs\n--- fast\n%s\n--- graph\n%s", path, opt, got, want)
			return fast
		}
	}
	return fast
}

// corpusFiles lists the regular files under testdata/ smaller than max,
// leaving out the generated benchmark inputs, fuzz corpora and the cost
// shapes (held to their bounds by cmd's TestCostShapes).
func corpusFiles(max int64) []string {
	var files []string
	filepath.Walk("../../testdata", func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if fi.IsDir() && (fi.Name() == "bench" || fi.Name() == "fuzz" || fi.Name() == "costshapes") {
			return filepath.SkipDir
		}
		if fi.Mode().IsRegular() && fi.Size() < max {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// corpusAgrees runs agree (a fast path against the graph path, true when
// the fast path answered) on every file under testdata/ of less than max
// bytes (every fourth one under -short) and asks that the fast path took
// at least 30 (7) of them.
func corpusAgrees(t *testing.T, name string, max int64, agree func(*testing.T, string) bool) {
	t.Helper()
	files := testfile.Sample(corpusFiles(max), 4)
	took := 0
	for _, p := range files {
		if agree(t, p) {
			took++
		}
	}
	t.Logf("%d files, %s applied to %d", len(files), name, took)
	if took < testfile.ShortDiv(30, 4) {
		t.Errorf("%s applied to only %d files of the corpus", name, took)
	}
}

// TestFastDepthCorpus: FastDepth on every file under testdata/.
func TestFastDepthCorpus(t *testing.T) {
	corpusAgrees(t, "the depth fast path", 8<<20, func(t *testing.T, p string) bool { return agreeDepth(t, p) > 0 })
}

// TestFastDepthGenerated: random plain data of protocols 0-5 and the
// hand-written cases.
func TestFastDepthGenerated(t *testing.T) {
	dir := t.TempDir()
	for proto := 0; proto <= 5; proto++ {
		for seed := int64(0); seed < 30; seed++ {
			b := genPickle(seed*11+int64(proto), proto)
			p := writeTemp(t, dir, fmt.Sprintf("g%d_%d.pkl", proto, seed), b)
			if agreeDepth(t, p) != len(depthOpts) && !strings.HasSuffix(fastReason(b), objKeyReason) {
				t.Errorf("proto %d seed %d: plain data fell back", proto, seed)
			}
		}
	}
}

// BenchmarkFastDepth1 is `pk trace --depth 1` of dicts.pkl through the
// depth fast path.
func BenchmarkFastDepth1(b *testing.B) {
	const path = "../../testdata/bench/dicts.pkl"
	if _, err := os.Stat(path); err != nil {
		b.Skip("no ", path, ": run python3 scripts/bench-gen.py")
	}
	for i := 0; i < b.N; i++ {
		t := FastDepth(path, 1)
		if t == nil {
			b.Fatal("the fast path fell back")
		}
		t.WriteText(io.Discard, t.Root(), Options{Depth: 1}, Style{})
	}
}
