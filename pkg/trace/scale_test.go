package trace

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/big"
	"math/rand"
	"runtime" // heap bounds below
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/pickle"
)

// Cost tests: labels of big numbers in linear time, and walks of a million
// levels with bounded heap (docs/pk-trace.md, "Limits and cost").

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func parseBytes(t *testing.T, b []byte) *Tree {
	t.Helper()
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "mem.pkl", pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return New(f)
}

// TestBigLabelAgrees: above bigExact bits the label's digit count and
// leading digits agree with the exact decimal text.
func TestBigLabelAgrees(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, bits := range []int{bigExact + 1, 5000, 9999, 20000, 65536} {
		for k := 0; k < 5; k++ {
			v := new(big.Int).Rand(r, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
			v.SetBit(v, bits-1, 1)
			if k%2 == 1 {
				v.Neg(v)
			}
			l := bigLabel(v)
			s := new(big.Int).Abs(v).String()
			want := "(~" + commas(int64(len(s))) + " digits, " + commas(int64(bits)) + " bits)"
			if !strings.HasSuffix(l, want) {
				t.Errorf("%d bits: label %q, want suffix %q", bits, l, want)
			}
			// leading digits: "~1.23456e+N" against s[0] "." s[1:5]
			lead := s[:1] + "." + s[1:5]
			if v.Sign() < 0 {
				lead = "-" + lead
			}
			if !strings.HasPrefix(l, "~"+lead) && !strings.HasPrefix(l, "~"+lead[:len(lead)-1]) {
				t.Errorf("%d bits: label %q, exact %s...", bits, l, s[:8])
			}
		}
	}
	if l := bigLabel(new(big.Int).Lsh(big.NewInt(1), 100)); l != "1267650600…31 digits" {
		t.Errorf("2**100: %q", l)
	}
}

// TestBigIntLabelsFast: a 5 MB LONG4 and a text LONG of 5 MB of digits are
// labelled in well under a second of CPU, in the tree, its JSON and the
// pictures (the decimal text of such a number takes minutes).
func TestBigIntLabelsFast(t *testing.T) {
	n := 5 << 20
	b := make([]byte, n)
	rand.New(rand.NewSource(2)).Read(b)
	b[n-1] = 0x11
	var p bytes.Buffer
	p.WriteString("\x80\x02]\x8a") // a list holding it: LONG4 below
	p.Truncate(p.Len() - 1)
	p.WriteByte(0x8b)
	binary.Write(&p, binary.LittleEndian, int32(n))
	p.Write(b)
	p.WriteString("a.")
	tr := parseBytes(t, p.Bytes())
	c0 := cpuNow()
	var out bytes.Buffer
	if err := tr.WriteText(&out, tr.Root(), Options{Depth: -1, All: true}, Style{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteJSON(io.Discard, tr.Root(), Options{Depth: -1, All: true}); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteSVG(io.Discard, tr.Root(), SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteHTML(io.Discard, tr.Root(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.WriteTop(io.Discard, 3, Style{})
	if d := cpuNow() - c0; d > time.Second {
		t.Errorf("labels of a 5 MiB int took %v CPU", d)
	}
	if !strings.Contains(out.String(), "digits, 41,943,037 bits)") {
		t.Errorf("no big label in:\n%s", out.String())
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// deepShapes are a million levels of nesting: lists (EMPTY... no: MARK,
// LIST), dicts (MARK, key, ..., DICT) and tuples.
func deepShapes() map[string][]byte {
	const m = 1000000
	return map[string][]byte{
		"list":  []byte("\x80\x02" + strings.Repeat("(", m) + strings.Repeat("l", m) + "."),
		"dict":  []byte("\x80\x02" + strings.Repeat("(K\x00", m) + "}" + strings.Repeat("d", m) + "."),
		"tuple": []byte("\x80\x02" + strings.Repeat("(", m) + ")" + strings.Repeat("t", m) + "."),
	}
}

// TestDeepWalkBounded: a million levels of lists, dicts and tuples are
// walked (text and JSON) without error, every level shown, sizes adding up
// to the file, with the walk's live heap at the deepest point under 128
// bytes a level (about 2x what it takes: a 16-byte tail frame and a path
// link a level) and what it allocates in all under 512 bytes a level.
func TestDeepWalkBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million levels (-short)")
	}
	const m = 1000000
	for name, b := range deepShapes() {
		if name == "tuple" {
			continue // as the list (TestDeepPrinters has it)
		}
		tr := parseBytes(t, b)
		if tr.Root().Size != int64(len(b)) {
			t.Fatalf("%s: root %d bytes, file %d", name, tr.Root().Size, len(b))
		}
		for _, json := range []bool{false, true} {
			if json && name != "list" {
				continue
			}
			base := liveHeap()
			a0 := totalAlloc()
			var live uint64
			maxDepth, lines := 0, 0
			enter := func(v *Visit) {
				lines++
				maxDepth = max(maxDepth, v.Depth)
				if v.Depth == m-5 {
					live = liveHeap()
				}
			}
			var leave func(v *Visit)
			if json {
				leave = func(v *Visit) {}
			}
			tr.walk(tr.Root(), Options{Depth: -1}, enter, leave, false)
			alloc := totalAlloc() - a0
			if maxDepth < m {
				t.Errorf("%s: deepest line at %d, want %d", name, maxDepth, m)
			}
			per := int64(live-base) / m
			t.Logf("%s json=%v: %d lines, walk live %d MB (%d B a level), allocated %d MB", name, json, lines, (live-base)>>20, per, alloc>>20)
			if live > base && per > 128 {
				t.Errorf("%s json=%v: the walk holds %d bytes a level", name, json, per)
			}
			if alloc > 512*m {
				t.Errorf("%s json=%v: the walk allocated %d MB", name, json, alloc>>20)
			}
		}
	}
}

// countWriter counts bytes of a few kinds in what is written to it.
type countWriter struct{ nl, open, close int }

func (c *countWriter) Write(p []byte) (int, error) {
	c.nl += bytes.Count(p, []byte("\n"))
	c.open += bytes.Count(p, []byte("{"))
	c.close += bytes.Count(p, []byte("}"))
	return len(p), nil
}

// TestDeepPrinters: a tuple a million levels deep through every printer:
// the text has a line a level, the JSON closes every brace it opens, the
// pictures stop at their level limits.
func TestDeepPrinters(t *testing.T) {
	if testing.Short() {
		t.Skip("a million levels (-short)")
	}
	const m = 1000000
	b := deepShapes()["tuple"]
	tr := parseBytes(t, b)
	var cw countWriter
	if err := tr.WriteText(&cw, tr.Root(), Options{Depth: -1}, Style{}); err != nil {
		t.Fatal(err)
	}
	if cw.nl != m+2 {
		t.Errorf("text: %d lines, want %d", cw.nl, m+2)
	}
	cw = countWriter{}
	if err := tr.WriteJSON(&cw, tr.Root(), Options{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if cw.open != cw.close || cw.open < m {
		t.Errorf("JSON: %d { and %d }", cw.open, cw.close)
	}
	for _, w := range []func(io.Writer) error{
		func(w io.Writer) error { return tr.WriteSVG(w, tr.Root(), SVGOptions{}) },
		func(w io.Writer) error { return tr.WriteHTML(w, tr.Root(), HTMLOptions{}) },
		func(w io.Writer) error { return tr.WriteTop(w, 5, Style{}) },
	} {
		if err := w(io.Discard); err != nil {
			t.Error(err)
		}
	}
}

// TestWideWalkBounded: a list of 500,000 small dicts (a line each): while
// the list is open its rows wait as kids, under 96 bytes a row (about 2x
// the 40-byte kid and the marker's entry), not as lines.
func TestWideWalkBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("half a million rows (-short)")
	}
	const m = 500000
	var b bytes.Buffer
	b.WriteString("\x80\x04]\x94(")
	for i := 0; i < m; i++ {
		b.WriteString("}\x94\x8c\x01a\x94K\x01s") // {'a': 1}, the key memoised each time
	}
	b.WriteString("e.")
	tr := parseBytes(t, b.Bytes())
	base := liveHeap()
	var live uint64
	lines := 0
	tr.walk(tr.Root(), Options{Depth: -1}, func(v *Visit) {
		lines++
		if lines == m/2 {
			live = liveHeap()
		}
	}, nil, false)
	if lines < m {
		t.Fatalf("%d lines", lines)
	}
	per := int64(live-base) / m
	t.Logf("walk live %d MB (%d B a row)", (live-base)>>20, per)
	if live > base && per > 96 {
		t.Errorf("the walk holds %d bytes a row", per)
	}
}

// TestTopManyTops: --top over a stream of many discarded calls is linear in
// them. The path of each listed item used to list every top of the stream
// again (a million REDUCE+POP: 17 s for --top 20, about 17 s here for 50
// lines over 400k tops); now the tops' roles are indexed once. 400k tops
// must cost under 1 s of CPU (3.6 ms measured) and under 3x the CPU of
// 200k, and the paths name the right tops.
func TestTopManyTops(t *testing.T) {
	cost := func(n int) time.Duration {
		b := []byte("\x80\x02")
		for i := 0; i < n; i++ {
			b = append(b, "cbuiltins\ndict\n)R0"...)
		}
		b = append(b, "N."...)
		tr := parseBytes(t, b)
		best := time.Duration(1 << 62)
		for r := 0; r < 3; r++ {
			c0 := cpuNow()
			var out bytes.Buffer
			if err := tr.WriteTop(&out, 50, Style{}); err != nil {
				t.Fatal(err)
			}
			if d := cpuNow() - c0; d < best {
				best = d
			}
			if !strings.Contains(out.String(), "root<popped 49>") {
				t.Fatalf("n=%d: --top 50 does not list root<popped 49>:\n%s", n, out.String())
			}
		}
		return best
	}
	small, big := cost(200000), cost(400000)
	t.Logf("WriteTop(50): 200k tops %v, 400k tops %v", small, big)
	if big > time.Second {
		t.Errorf("WriteTop(50) over 400k tops took %v of CPU (bound 1 s)", big)
	}
	if big > 3*small+50*time.Millisecond {
		t.Errorf("WriteTop is not linear in the tops: 200k %v, 400k %v", small, big)
	}
}
