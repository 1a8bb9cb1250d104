package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// BenchmarkHashFile hashes the file named by PK_BENCH_FILE (for profiling
// with -cpuprofile/-memprofile; skipped when unset).
func BenchmarkHashFile(b *testing.B) {
	p := os.Getenv("PK_BENCH_FILE")
	if p == "" {
		b.Skip("PK_BENCH_FILE not set")
	}
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := HashFile(p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// recordsPickle is a list of dicts sharing memoised keys (as the pickler
// writes records), with shapes that change along the list: other key
// orders, duplicate keys (last value wins), keys equal across int, bool
// and float, a dict key that is an identity object, and a NaN key.
func recordsPickle() []byte {
	a := p4().op(']').put(0).mark()
	keys := []string{"id", "name", "score", "ok", "email"}
	for k, key := range keys {
		a.str(key).put(byte(k + 1))
	}
	a.op('0', '0', '0', '0', '0') // POP the five keys: only the memo keeps them
	for i := 0; i < 300; i++ {
		a.op('}').mark()
		order := []int{0, 1, 2, 3, 4}
		switch i % 7 {
		case 3:
			order = []int{4, 3, 2, 1, 0}
		case 5:
			order = []int{0, 1, 0, 2, 3, 4, 1} // duplicates
		}
		for j, k := range order {
			a.get(byte(k + 1))
			a.binint(int32(i*10 + j))
		}
		switch i % 11 {
		case 4: // 1, True and 1.0 are one key
			a.binint(1).str("int").op(0x88).str("bool").binfloat(1).str("float")
		case 6: // an identity key and a NaN key
			a.op(']').binint(1).floatBits(0x7ff8000000000001).binint(2)
		}
		a.op('u')
	}
	return a.op('e').stop()
}

func TestDictPermCacheSameDigest(t *testing.T) {
	data := recordsPickle()
	for _, opt := range []Options{{}, {KeepDictOrder: true}, {Strict: true}} {
		withCache := digestOf(t, data, opt)
		noDictPerm = true
		without := digestOf(t, data, opt)
		noDictPerm = false
		if withCache != without {
			t.Errorf("%s: the dict-order cache changes the digest:\n%s\n%s", opt.Tag(), withCache, without)
		}
	}
	// and the cache is used: a changed value still changes the digest
	other := bytes.Replace(data, []byte{'J', 0x2a, 0, 0, 0}, []byte{'J', 0x2b, 0, 0, 0}, 1)
	if bytes.Equal(other, data) {
		t.Fatal("value 42 not found")
	}
	if digestOf(t, data, Options{}) == digestOf(t, other, Options{}) {
		t.Error("changing one value kept the digest")
	}
}

// Isolated digests are cached by node ID and computed by pooled encoders
// sharing one ordinal table: the digest of a node must not depend on which
// digests were computed before it.
func TestIsoDigestOrderIndependent(t *testing.T) {
	files := []string{"../../testdata/fixtures/stdlib/item_selfref_list_p5_c_py311.pkl"}
	more, _ := filepath.Glob("../../testdata/fixtures/cloudpickle/*.pkl")
	files = append(files, more...)
	datas := [][]byte{recordsPickle()}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			datas = append(datas, b)
		}
	}
	for i, data := range datas {
		f := parse(t, data)
		s := f.Streams[0]
		collect := func(v *View) []*Node {
			var out []*Node
			queue := []*Node{v.Root()}
			seen := map[*Node]bool{}
			for len(queue) > 0 && len(out) < 3000 {
				n := queue[0]
				queue = queue[1:]
				if n == nil || seen[n] {
					continue
				}
				seen[n] = true
				out = append(out, n)
				queue = append(queue, n.Items()...)
				for _, e := range n.Entries() {
					queue = append(queue, e.Key, e.Value)
				}
				if n.Kind() == pickle.KindCall {
					queue = append(queue, n.Func(), n.Args(), n.Kwargs())
				}
				for _, o := range n.Ops() {
					queue = append(queue, o.Args...)
				}
			}
			return out
		}
		va, vb := Normalize(s, Options{}), Normalize(s, Options{})
		na, nb := collect(va), collect(vb)
		if len(na) != len(nb) {
			t.Fatalf("input %d: %d and %d nodes", i, len(na), len(nb))
		}
		da := make([]string, len(na))
		for j, n := range na {
			da[j] = n.HexDigest()
		}
		for j := len(nb) - 1; j >= 0; j-- {
			if d := nb[j].HexDigest(); d != da[j] {
				t.Errorf("input %d node %d (%s): digest %s forward, %s backward", i, j, nb[j].Path(), da[j], d)
			}
		}
	}
}

// HashFile raises the GC percent while it works (pickle.QuietGC) and puts
// back whatever was set before, also when it was off or higher.
func TestHashFileRestoresGCPercent(t *testing.T) {
	const f = "../../testdata/fixtures/stdlib/item_selfref_list_p5_c_py311.pkl"
	if _, err := os.Stat(f); err != nil {
		t.Skip(err)
	}
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, before := range []int{150, -1, 5000} {
		debug.SetGCPercent(before)
		if _, err := HashFile(f, Options{}); err != nil {
			t.Fatal(err)
		}
		if got := debug.SetGCPercent(before); got != before {
			t.Errorf("GC percent %d before HashFile, %d after", before, got)
		}
		release := pickle.QuietGC()
		release2 := pickle.QuietGC() // nested
		want := max(before, pickle.GCPercentWhileParsing)
		if before < 0 {
			want = before
		}
		if got := debug.SetGCPercent(want); got != want {
			t.Errorf("GC percent %d while quiet (before: %d), want %d", got, before, want)
		}
		if !release2() {
			t.Error("restore of the inner hold: want others=true")
		}
		if got := debug.SetGCPercent(want); got != want {
			t.Errorf("GC percent %d after the inner release, want %d", got, want)
		}
		if release() {
			t.Error("restore of the last hold: want others=false")
		}
		release() // a second call does nothing
		if got := debug.SetGCPercent(before); got != before {
			t.Errorf("GC percent %d after the holds, want %d", got, before)
		}
	}
}
