package canon

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// TestOrdTab: the compact table of an isolated encoder's ordinals gives
// what a map gives, across generations, and gives way to the dense tables
// (ordSet) with the current generation's ordinals when full.
func TestOrdTab(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const nsyn = 1 << 16
	v := &View{nsyn: nsyn}
	v.enc = &encState{ordTab: newOrdTab()}
	st := v.enc
	for gen := uint32(1); gen <= 40; gen++ {
		e := &encoder{v: v, gen: gen}
		want := map[pickle.ID]int32{}
		n := rng.Intn(3000)
		if gen == 40 {
			n = nsyn / 2 // past a quarter of the dense tables: spilled
		}
		for i := 0; i < n; i++ {
			id := pickle.ID(rng.Intn(nsyn))
			if _, ok := want[id]; ok {
				continue
			}
			want[id] = int32(len(want))
			e.ordSet(id, want[id])
		}
		for id := pickle.ID(0); id < nsyn; id++ {
			o, ok := e.ordinal(id)
			w, wok := want[id]
			if ok != wok || o != w {
				t.Fatalf("gen %d id %d: got %d %v, want %d %v", gen, id, o, ok, w, wok)
			}
		}
		if gen < 40 && st.ordGen != nil {
			t.Fatalf("gen %d: %d ordinals spilled to the dense tables", gen, len(want))
		}
	}
	if st.ordGen == nil || st.ordTab != nil {
		t.Fatal("half of the nodes numbered did not move to the dense tables")
	}
}

// TestIsoDigestsDense: over the corpus, every node's isolated digest is the
// one the tables by node ID give (ordDense), and the digest of each
// stream too.
func TestIsoDigestsDense(t *testing.T) {
	var files []string
	for _, g := range []string{"../../testdata/states/*.pkl", "../../testdata/fixtures/*/*.pkl", "../../testdata/equiv/*/*.pkl", "../../testdata/canon/*/*/*.pkl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if testing.Short() && len(files) > 150 {
		files = files[:150]
	}
	if len(files) == 0 {
		t.Skip("no corpus")
	}
	defer func(from int32) { ordDense, ordTabFrom = false, from }(ordTabFrom)
	ordTabFrom = 0 // every view's isolated encodings start compact, and many spill
	tabs := 0
	digests := func(p string, dense bool) [][]byte {
		ordDense = dense
		doc, err := input.Open(p, ReadOptions(Options{}))
		if err != nil {
			return nil
		}
		var out [][]byte
		for _, part := range doc.Parts {
			if part.Pickle == nil {
				continue
			}
			for _, s := range part.Pickle.Streams {
				v := Normalize(s, Options{})
				d, err := v.Digest()
				if err != nil {
					out = append(out, []byte(err.Error()))
					continue
				}
				out = append(out, d)
				for id := pickle.ID(0); id < pickle.ID(v.nsyn); id++ {
					if v.isPure(id) {
						continue
					}
					out = append(out, v.isoDigest(id))
				}
				if st := v.state(); st.ordTab != nil {
					if dense {
						t.Fatalf("%s: a compact table with ordDense", p)
					}
					tabs++
				}
			}
		}
		return out
	}
	n := 0
	for _, p := range files {
		a, b := digests(p, false), digests(p, true)
		if len(a) != len(b) {
			t.Fatalf("%s: %d digests against %d", p, len(a), len(b))
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				t.Fatalf("%s: digest %d differs", p, i)
			}
		}
		n += len(a)
	}
	t.Logf("%d files, %d digests, %d streams with a compact table", len(files), n, tabs)
}

// TestIsoDigestsSmall: a few isolated digests in a large view (pk canon's
// class digests in a state) hold no table by node ID: they allocated 12
// bytes a node of the view (ordGen, ordVal, isoSlot) before ordTab.
func TestIsoDigestsSmall(t *testing.T) {
	// a list of 300,000 empty lists, then [[]] of a few levels
	var b bytes.Buffer
	b.WriteString("\x80\x02]q\x00(")
	for range 300000 {
		b.WriteString("]")
	}
	b.WriteString("e.")
	f, err := pickle.Parse(bytes.NewReader(b.Bytes()), int64(b.Len()), "t.pkl", ReadOptions(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	v := Normalize(f.Streams[0], Options{})
	if _, err := v.Digest(); err != nil {
		t.Fatal(err)
	}
	items := v.Root().Items()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for _, it := range items[:100] {
		it.Digest()
	}
	runtime.ReadMemStats(&ms)
	if got := ms.TotalAlloc - before; got > 1<<20 {
		t.Errorf("100 isolated digests of empty lists in a view of %d nodes allocated %d bytes", v.nsyn, got)
	}
}
