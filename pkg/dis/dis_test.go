package dis

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Expected reprs printed by CPython 3.13 (see the generator in docs/pk-dis.md).
var floatCases = []struct {
	bits uint64
	repr string
}{
	{0x0000000000000000, "0.0"},
	{0x8000000000000000, "-0.0"},
	{0x3ff0000000000000, "1.0"},
	{0x3fb999999999999a, "0.1"},
	{0x4341c37937e08000, "1e+16"},
	{0x430c6bf526340000, "1000000000000000.0"},
	{0x437b69b4ba630f35, "1.2345678901234568e+17"},
	{0x3eef75104d551d69, "1.5e-05"},
	{0x3f1a36e2eb1c432d, "0.0001"},
	{0x0000000000000001, "5e-324"},
	{0x7fefffffffffffff, "1.7976931348623157e+308"},
	{0x7ff0000000000000, "inf"},
	{0xfff0000000000000, "-inf"},
	{0x7ff8000000000000, "nan"},
	{0x4004000000000000, "2.5"},
	{0x4059000000000000, "100.0"},
	{0x4480f0cf064dd592, "1e+22"},
	{0xbe7ad7f29abcaf48, "-1e-07"},
	{0x3fd3333333333334, "0.30000000000000004"},
	{0x40c81cd6c8b43958, "12345.678"},
	{0x3ee4f8b588e368f1, "1e-05"},
	{0x4341c37937e08000, "1e+16"},
	{0x3f1a36e2eb1c432c, "9.999999999999999e-05"},
	{0x4341c37937e07fff, "9999999999999998.0"},
	{0x4340000000000001, "9007199254740994.0"},
	{0x3fc0000000000000, "0.125"},
	{0xbfd8000000000000, "-0.375"},
	{0x405edd3c07ee0b0b, "123.456789"},
	{0x426ffffffffff000, "1099511627775.5"},
	{0xc340000000000000, "-9007199254740992.0"},
}

// The fast paths of appendFloatRepr (integers, short fractions, fixed
// notation) print what the general path prints: random bit patterns,
// decimals m/10^k and their neighbours, values near the notation bounds.
// (Checked once against CPython's repr on 2.3 million such values.)
func TestFloatReprFastPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var vals []float64
	for i := 0; i < 200000; i++ {
		vals = append(vals, math.Float64frombits(rng.Uint64()))
		m := rng.Int63n(int64(math.Pow10(1 + rng.Intn(17))))
		v := float64(m) / math.Pow10(1+rng.Intn(9))
		if rng.Intn(2) == 0 {
			v = -v
		}
		vals = append(vals, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)), rng.Float64()*(1<<41))
	}
	for p := -6; p <= 18; p++ {
		v := math.Pow10(p)
		vals = append(vals, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)), -v, 1<<53, 1<<53+2, 1<<50-0.5, 1<<40+0.5)
	}
	bad := 0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if got, want := string(appendFloatRepr(nil, v)), string(appendFloatGeneral(nil, v)); got != want {
			if bad++; bad < 10 {
				t.Errorf("%016x: %s, the general path %s", math.Float64bits(v), got, want)
			}
		}
	}
}

var strCases = []struct{ hex, repr string }{
	{"", "''"},
	{"61", "'a'"},
	{"69742773", "\"it's\""},
	{"7361792022686922", "'say \"hi\"'"},
	{"626f746820272022", "'both \\' \"'"},
	{"746162096e6c0a62735c", "'tab\\tnl\\nbs\\\\'"},
	{"007fc280c2a0c2adc3a9", "'\\x00\\x7f\\x80\\xa0\\xadé'"},
	{"e280a8c3a9e4b8ad", "'\\u2028é中'"},
	{"f09f9880", "'😀'"},
	{"eda080", "'\\ud800'"},
	{"f3a08081", "'\\U000e0001'"},
	{"efbbbf", "'\\ufeff'"},
}
var bytesCases = []struct{ hex, repr string }{
	{"", "b''"},
	{"27", "b\"'\""},
	{"2227", "b'\"\\''"},
	{"006162ff095c", "b'\\x00ab\\xff\\t\\\\'"},
}
var latin1Cases = []struct{ hex, repr string }{
	{"7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "'~\\x7f\\x80\\x81\\x82\\x83\\x84\\x85\\x86\\x87\\x88\\x89\\x8a\\x8b\\x8c\\x8d\\x8e\\x8f\\x90\\x91\\x92\\x93\\x94\\x95\\x96\\x97\\x98\\x99\\x9a\\x9b\\x9c\\x9d\\x9e\\x9f\\xa0¡¢£¤¥¦§¨©ª«¬\\xad®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ'"},
	{"2227", "'\"\\''"},
}

func TestFloatRepr(t *testing.T) {
	for _, c := range floatCases {
		if got := string(appendFloatRepr(nil, math.Float64frombits(c.bits))); got != c.repr {
			t.Errorf("%#x: got %s, want %s", c.bits, got, c.repr)
		}
	}
}

func unhex(t *testing.T, s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStrBytesRepr(t *testing.T) {
	for _, c := range strCases {
		if got := string(appendStrRepr(nil, unhex(t, c.hex))); got != c.repr {
			t.Errorf("str %s: got %s, want %s", c.hex, got, c.repr)
		}
	}
	for _, c := range bytesCases {
		if got := string(appendBytesRepr(nil, unhex(t, c.hex))); got != c.repr {
			t.Errorf("bytes %s: got %s, want %s", c.hex, got, c.repr)
		}
	}
	for _, c := range latin1Cases {
		if got := string(appendLatin1Repr(nil, unhex(t, c.hex))); got != c.repr {
			t.Errorf("latin-1 %s: got %s, want %s", c.hex, got, c.repr)
		}
	}
}

func run(t *testing.T, data []byte, opt Options) (string, Summary, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Run(&out, bytes.NewReader(data), int64(len(data)), "in.pkl", opt)
	return out.String(), sum, err
}

// b"\x80\x04K\x01." : PROTO 4, BININT1 1, STOP
var tiny = []byte("\x80\x04K\x01.")

func TestErrorsAfterOpcodes(t *testing.T) {
	cases := []struct {
		name, data string
		off        int64
		op, reason string
		lines      int // opcode lines printed before the error
	}{
		{"empty", "", 0, "", "empty input", 0},
		{"truncated", "\x80\x04K\x01", 4, "", "truncated", 2},
		{"truncated arg", "\x80\x04X\xff\x00\x00\x00ab", 2, "BINUNICODE", "truncated", 1},
		{"underflow", "\x80\x04R.", 2, "REDUCE", "stack underflow", 2},
		{"no mark", "\x80\x04K\x01e.", 4, "APPENDS", "could not find MARK", 3},
		{"mark as operand", "\x80\x04](\x85.", 4, "TUPLE1", "unexpected MARK", 4},
		{"unknown memo", "\x80\x04h\x05.", 2, "BINGET", "never been stored", 2},
		{"bad opcode", "\x80\x04\xff.", 2, "", "invalid opcode", 1},
		{"proto 6", "\x80\x06N.", 0, "PROTO", "unsupported pickle protocol", 1},
	}
	for _, c := range cases {
		out, _, err := run(t, []byte(c.data), Options{})
		pe, ok := pickle.AsError(err)
		if !ok {
			t.Errorf("%s: error %v is not a *pickle.Error", c.name, err)
			continue
		}
		if pe.File != "in.pkl" || pe.Offset != c.off || pe.Op != c.op || !strings.Contains(pe.Reason, c.reason) {
			t.Errorf("%s: got %q (file %q offset %d op %q)", c.name, err, pe.File, pe.Offset, pe.Op)
		}
		n := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ": ") && !strings.HasPrefix(l, "#") {
				n++
			}
		}
		if n != c.lines {
			t.Errorf("%s: %d opcode lines before the error, want %d:\n%s", c.name, n, c.lines, out)
		}
	}
}

func TestMultiStreamAndTrailing(t *testing.T) {
	data := append(append(append([]byte{}, tiny...), tiny...), "junk!"...)
	out, sum, err := run(t, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Streams != 2 || sum.Trailing == nil || sum.Trailing.Offset != 10 || sum.Trailing.Len != 5 {
		t.Fatalf("summary %+v %+v", sum, sum.Trailing)
	}
	for _, want := range []string{"# stream 0 at offset 0", "# stream 1 at offset 5", "    5: \\x80 PROTO      4", "# trailing 5 bytes at offset 10 are not a pickle", "b'junk!'"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// the junk's ops (j = LONG_BINGET) must not be shown as a stream
	if strings.Contains(out, "   10: j") {
		t.Errorf("trailing bytes disassembled:\n%s", out)
	}
	js, _, _ := run(t, data, Options{JSON: true})
	if !strings.Contains(js, `,"stream":1,"offset":7,"op":"BININT1","arg":1}`) || !strings.Contains(js, `,"record":"trailing","offset":10,"len":5,`) {
		t.Errorf("json:\n%s", js)
	}
	pt, _, _ := run(t, data, Options{Pickletools: true})
	if strings.Contains(pt, "#") || strings.Count(pt, "PROTO") != 1 {
		t.Errorf("--pickletools must show the first stream only:\n%s", pt)
	}
}

func TestMemoAnnotations(t *testing.T) {
	// [d, d] with d = {} : EMPTY_LIST MEMOIZE MARK EMPTY_DICT MEMOIZE BINGET 1 APPENDS STOP
	data := []byte("\x80\x04]\x94(}\x94h\x01e.")
	out, _, err := run(t, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    3: \\x94 MEMOIZE    (memo[0] = EMPTY_LIST at 2)",
		"    6: \\x94     MEMOIZE    (memo[1] = EMPTY_DICT at 5)",
		"    7: h        BINGET     1 (memo[1] = EMPTY_DICT at 5)",
		"    9: e        APPENDS    (MARK at 4)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	pt, _, _ := run(t, data, Options{Pickletools: true})
	if !strings.Contains(pt, "    6: \\x94     MEMOIZE    (as 1)\n") {
		t.Errorf("pickletools form:\n%s", pt)
	}
}

func TestBlobShortened(t *testing.T) {
	payload := strings.Repeat("x", 3000)
	data := []byte("\x80\x04B\xb8\x0b\x00\x00" + payload + ".")
	out, _, err := run(t, data, Options{BlobThreshold: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "... (3000 bytes, shortened)") || len(out) > 600 {
		t.Errorf("not shortened:\n%s", out)
	}
	js, _, _ := run(t, data, Options{JSON: true, BlobThreshold: 1000})
	if !strings.Contains(js, `"len":3000,"shortened":true}`) {
		t.Errorf("json:\n%s", js)
	}
}

// Hostile shapes stay linear: 10^6 nested MARKs (indentation is capped),
// a memo index of 2^32-1, a billion-laughs memo (GETs are not expanded).
func TestHostileLinear(t *testing.T) {
	const n = 1000000
	deep := append([]byte("\x80\x04]"), bytes.Repeat([]byte("(]"), n)...)
	deep = append(deep, bytes.Repeat([]byte("e"), n)...)
	deep = append(deep, '.')
	start := time.Now()
	var out countWriter
	_, err := Run(&out, bytes.NewReader(deep), int64(len(deep)), "deep", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(3*n) * int64(40+MaxIndentLevels*4); out.n > max {
		t.Errorf("output %d bytes for %d opcodes: indentation not capped", out.n, 3*n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("10^6 nested MARKs took %v", d)
	}

	big := []byte("\x80\x04Nr\xff\xff\xff\xffj\xff\xff\xff\xff.")
	o, _, err := run(t, big, Options{})
	if err != nil || !strings.Contains(o, "LONG_BINGET 4294967295 (memo[4294967295] = NONE at 2)") {
		t.Errorf("huge memo index: %v\n%s", err, o)
	}

	var laughs bytes.Buffer
	laughs.WriteString("\x80\x04]\x94")
	for i := 0; i < 10; i++ {
		laughs.WriteString("(")
		for j := 0; j < 10; j++ {
			laughs.WriteString("h")
			laughs.WriteByte(byte(i))
		}
		laughs.WriteString("l\x94")
	}
	laughs.WriteString(".")
	o, _, err = run(t, laughs.Bytes(), Options{})
	if err != nil || strings.Count(o, "\n") > 200 {
		t.Errorf("billion laughs: %v, %d lines", err, strings.Count(o, "\n"))
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestPutNumbers checks the in-place number writers of line.go against
// strconv at every digit count and around every power of ten.
func TestPutNumbers(t *testing.T) {
	var vals []int64
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, 2*p-1, 9*p, -p, -p+1, -p-1)
	}
	vals = append(vals, 0, 1, 99999, 100000, math.MaxInt64, math.MinInt64, math.MaxInt64-1, 1e16-1, 1e16, 18446744073709551/1000)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		vals = append(vals, int64(r.Uint64()>>r.Intn(64)))
	}
	b := make([]byte, 64)
	for _, v := range vals {
		for i := range b {
			b[i] = '#'
		}
		n := putInt(b, 3, v)
		if got, want := string(b[3:n]), strconv.FormatInt(v, 10); got != want || string(b[:3]) != "###" {
			t.Fatalf("putInt(%d) = %q, want %q", v, b[:n], want)
		}
		if v >= 0 {
			n = putOffset(b, 3, v)
			if got, want := string(b[3:n]), fmt.Sprintf("%5d: ", v); got != want || string(b[:3]) != "###" {
				t.Fatalf("putOffset(%d) = %q, want %q", v, b[:n], want)
			}
		}
	}
	for _, u := range []uint64{math.MaxUint64, math.MaxUint64 - 1, 1e19, 1e19 - 1} {
		n := putUint(b, 0, u)
		if got, want := string(b[:n]), strconv.FormatUint(u, 10); got != want {
			t.Fatalf("putUint(%d) = %q, want %q", u, got, want)
		}
	}
}
