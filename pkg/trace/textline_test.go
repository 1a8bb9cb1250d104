package trace

import (
	"github.com/pk-tools/pk/pkg/pickle"
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"
)

// the integer formatting of sizes and percentages is AppendFloat's
func refHuman(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range [...]string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= 1024
		if f < 1024 || u == "PiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
	}
	return ""
}

func refPct(n, total int64) string {
	if total <= 0 {
		return "100.0%"
	}
	return strconv.FormatFloat(float64(n)*100/float64(total), 'f', 1, 64) + "%"
}

func TestTenthsAsAppendFloat(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	check := func(n int64) {
		if got, want := Human(n), refHuman(n); got != want {
			t.Fatalf("Human(%d) = %q, want %q", n, got, want)
		}
	}
	for n := int64(-2000); n < 3<<20; n++ {
		check(n)
	}
	for k := uint(10); k <= 62; k++ {
		for d := int64(-3000); d <= 3000; d++ {
			check(int64(1)<<k + d)
		}
		for i := 0; i < 20000; i++ {
			check(r.Int63n(int64(1) << k))
		}
	}
	check(1<<63 - 1)
	checkPct := func(n, total int64) {
		if got, want := pct(n, total), refPct(n, total); got != want {
			t.Fatalf("pct(%d, %d) = %q, want %q", n, total, got, want)
		}
	}
	for total := int64(-2); total < 2100; total++ {
		for n := int64(-3); n <= total+3; n++ {
			checkPct(n, total)
		}
	}
	for i := 0; i < 3000000; i++ {
		total := r.Int63n(int64(1) << (1 + r.Intn(62)))
		n := r.Int63n(total + 1)
		if i%4 == 0 {
			n = r.Int63()
		}
		checkPct(n, total)
		checkPct(total/1000*int64(r.Intn(1000)), total)
	}
	for _, total := range []int64{1000, 2000, 4000, 8000, 1 << 20, 10000, 1 << 40, 3 << 50} {
		for n := int64(0); n <= 20000; n++ {
			checkPct(n, total)
			checkPct(total-n, total)
		}
	}
}

// codeAppend is describe, where it answers, for every node of the fixtures:
// a call's label as call makes it without callAppend.
func TestCodeAppendIsDescribe(t *testing.T) {
	nodes, fast := 0, 0
	paths := fixtures(t)
	for _, g := range []string{"../../testdata/frames/*.pkl", "../../testdata/frames/*.joblib"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	for _, path := range paths {
		tr := loadCorpus(t, path)
		if tr == nil {
			continue
		}
		for _, st := range tr.Streams {
			for n := 0; n < st.Store.Len(); n++ {
				id := pickle.ID(n)
				nodes++
				code, b, ok := st.codeAppend([]byte("x"), id)
				if !ok {
					if string(b) != "x" {
						t.Fatalf("%s node %d: not ok, but appended %q", path, n, b)
					}
					continue
				}
				fast++
				// (describe's labels of containers and globals are
				// codeAppend's; of calls, call's own way is compared)
				noCallAppend = true
				c, l := st.describe(id)
				noCallAppend = false
				if code != c || string(b) != "x"+l {
					t.Fatalf("%s node %d: codeAppend %q %q, describe %q %q", path, n, code, b[1:], c, l)
				}
			}
		}
	}
	t.Logf("%d nodes, %d described by codeAppend", nodes, fast)
}
