package diff

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// agreeEach checks that eachFiles, when it takes the pair, gives the
// Result of the path that holds both inputs whole; it reports whether it
// took it.
func agreeEach(t *testing.T, a, b string, opt Options) bool {
	t.Helper()
	each, ok := eachFiles(a, b, opt)
	whole, err := slowFiles(a, b, opt)
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%s vs %s: eachFiles took a pair Docs refuses: %v", a, b, err)
		return true
	}
	if e, w := renderAll(t, each), renderAll(t, whole); e != w {
		t.Errorf("%s vs %s %+v: eachFiles\n%s\nDocs\n%s", a, b, opt.Canon, e, w)
	}
	return true
}

// TestEachDiffGenerated: files of several streams, changed in a stream,
// with streams added or removed, trailing bytes added or changed, at every
// protocol; eachFiles must give what Docs gives.
func TestEachDiffGenerated(t *testing.T) {
	dir := t.TempDir()
	taken, total := 0, 0
	for seed := int64(0); seed < int64(testfile.ShortDiv(12, 2)); seed++ {
		for proto := 0; proto <= 5; proto++ {
			g := &vgen{r: rand.New(rand.NewSource(seed*11 + int64(proto))), proto: proto, words: words}
			n := 2 + g.r.Intn(6)
			var va, vb []*pv
			for i := 0; i < n; i++ {
				v := g.dict(2, 1+g.r.Intn(5))
				if i%2 == 1 {
					v = g.list(2, 1+g.r.Intn(5))
				}
				va = append(va, v)
				vb = append(vb, v.clone())
			}
			switch seed % 4 {
			case 0:
				g.mutate(vb[g.r.Intn(n)], false)
			case 1:
				vb = append(vb, g.list(1, 3)) // a stream added
			case 2:
				vb = vb[:n-1] // one removed
				g.mutate(vb[0], true)
			case 3:
				g.mutate(vb[n-1], false)
				g.mutate(vb[0], false)
			}
			file := func(vs []*pv, trailing string) []byte {
				var b bytes.Buffer
				for _, v := range vs {
					b.Write(dump(v, proto, 64+g.r.Intn(200)))
				}
				b.WriteString(trailing)
				return b.Bytes()
			}
			tr := []string{"", "", "junk", "more junk"}[g.r.Intn(4)]
			pa := writeFile(t, dir, fmt.Sprintf("a%d_%d.pkl", seed, proto), file(va, tr))
			pb := writeFile(t, dir, fmt.Sprintf("b%d_%d.pkl", seed, proto), file(vb, []string{"", tr, "other"}[g.r.Intn(3)]))
			same := writeFile(t, dir, fmt.Sprintf("s%d_%d.pkl", seed, proto), file(va, tr))
			for _, opt := range fastOpts {
				for _, pair := range [][2]string{{pa, pb}, {pb, pa}, {pa, same}} {
					total++
					if agreeEach(t, pair[0], pair[1], opt) {
						taken++
					}
				}
			}
		}
	}
	t.Logf("eachFiles took %d of %d pairs", taken, total)
	if taken < total*9/10 {
		t.Errorf("eachFiles took only %d of %d pairs", taken, total)
	}
}

// TestEachDiffCorpus: every bare pickle of testdata with several streams,
// against itself and against a copy whose middle stream is replaced by
// another file's first stream.
func TestEachDiffCorpus(t *testing.T) {
	var multi []string
	filepath.Walk(corpus, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Size() > 256<<10 {
			return nil
		}
		if head, _ := os.ReadFile(p); !input.PlainPickle(head[:min(16, len(head))]) {
			return nil // compressed (the cost shapes decompress to megabytes), or no pickle
		}
		d, err := input.Open(p, pickle.Options{NoGraph: true})
		if err != nil || d.Format != "pickle" || d.Compression != "" || len(d.Parts) != 1 || d.Parts[0].Pickle == nil || len(d.Parts[0].Pickle.Streams) < 2 {
			return nil
		}
		multi = append(multi, p)
		return nil
	})
	if len(multi) < 3 {
		t.Fatalf("only %d files of several streams in testdata", len(multi))
	}
	dir := t.TempDir()
	taken := 0
	for i, p := range multi {
		b, _ := os.ReadFile(p)
		d, _ := input.Open(p, pickle.Options{NoGraph: true})
		st := d.Parts[0].Pickle.Streams
		other, _ := os.ReadFile(multi[(i+1)%len(multi)])
		od, _ := input.Open(multi[(i+1)%len(multi)], pickle.Options{NoGraph: true})
		os0 := od.Parts[0].Pickle.Streams[0]
		m := st[len(st)/2]
		changed := append(append(append([]byte{}, b[:m.Offset]...), other[os0.Offset:os0.Offset+os0.Len()]...), b[m.Offset+m.Len():]...)
		pc := writeFile(t, dir, fmt.Sprintf("c%d.pkl", i), changed)
		for _, pair := range [][2]string{{p, p}, {p, pc}, {pc, p}} {
			if agreeEach(t, pair[0], pair[1], Options{}) {
				taken++
			}
		}
	}
	t.Logf("%d files of several streams; eachFiles took %d pairs", len(multi), taken)
	if taken < len(multi) {
		t.Errorf("eachFiles took only %d pairs", taken)
	}
}

// TestEachDiffOneStream: bare pickles of one stream each (eachFiles takes
// them since the digests of the two files decide at once when they are
// equal): every directory of testdata, each file against the next and
// against itself, in the form pk diff reads (pk-canon/2, where locate's
// second walk is left out when the views of both forms are alike) and in
// pk-canon/1; eachFiles must give what Docs gives.
func TestEachDiffOneStream(t *testing.T) {
	t.Run("sink", func(t *testing.T) { eachDiffOneStream(t, testfile.ShortDiv(16, 8), false) })
	// B read whole (readWhole) wherever A's sink folded or shared
	// little: about half of the pairs (a file of a few Nones shares them)
	t.Run("whole", func(t *testing.T) {
		wholeFrom = 0
		defer func() { wholeFrom = 1 << 18 }()
		eachDiffOneStream(t, testfile.ShortDiv(8, 4), true)
	})
}

// eachDiffOneStream runs TestEachDiffOneStream on up to perDir files of
// each directory; whole: count the pairs whose B readWhole reads whole.
func eachDiffOneStream(t *testing.T, perDir int, whole bool) {
	byDir := plainPicklesByDir()
	wholes := 0
	opts := []Options{
		{Canon: canon.Options{Form: canon.Current, NoPaths: true}},
		{Canon: canon.Options{Form: canon.Current}},
		{},
	}
	taken, total := 0, 0
	for _, files := range byDir {
		for i := 0; i < len(files) && i < perDir; i++ {
			pairs := [][2]string{{files[i], files[i]}}
			if i+1 < len(files) {
				pairs = append(pairs, [2]string{files[i], files[i+1]})
			}
			for _, p := range pairs {
				if whole {
					if sa, ok := sumStreams(p[0], Options{}, false); ok && readWhole(sa, p[1]) {
						wholes++
					}
				}
				for _, opt := range opts {
					total++
					if agreeEach(t, p[0], p[1], opt) {
						taken++
					}
				}
			}
		}
	}
	t.Logf("eachFiles took %d of %d pairs", taken, total)
	if taken < total/2 {
		t.Errorf("eachFiles took only %d of %d pairs", taken, total)
	}
	if whole {
		t.Logf("B read whole in %d of %d pairs", wholes, total/len(opts))
		if wholes < total/len(opts)/4 {
			t.Errorf("B read whole in only %d of %d pairs", wholes, total/len(opts))
		}
	}
}

// plainPicklesByDir is the bare pickles of testdata up to 256 KiB, by
// directory.
func plainPicklesByDir() map[string][]string {
	byDir := map[string][]string{}
	filepath.Walk(corpus, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Size() > 256<<10 {
			return nil
		}
		if head, _ := os.ReadFile(p); len(head) == 0 || !input.PlainPickle(head[:min(16, len(head))]) {
			return nil
		}
		byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		return nil
	})
	return byDir
}

// TestEachDiffSharedNone: a one-stream file whose Nones the sums read as
// one record (pickle.Keep.OneNone) is read again for the walk, so that a
// None's path and offset are its own, not the first None's.
func TestEachDiffSharedNone(t *testing.T) {
	dir := t.TempDir()
	head := "\x80\x02](c__builtin__\nobject\n)RNN"
	a, b := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
	os.WriteFile(a, []byte(head+"K\x01e."), 0o644) // [object(), None, None, 1]
	os.WriteFile(b, []byte(head+"Ne."), 0o644)     // [object(), None, None, None]
	for _, opt := range []Options{{Canon: canon.Options{Form: canon.Current}}, {}} {
		if !agreeEach(t, a, b, opt) || !agreeEach(t, b, a, opt) {
			t.Errorf("eachFiles did not take the pair")
		}
	}
}

// TestEachDiffLeanStore: the sums read B's one stream into a lean store
// (pickle.Keep.OneNone: no Self, no owners), which the walk must not take
// as the stream (it reads sizes: B's added list is 6 bytes, not 0).
func TestEachDiffLeanStore(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pkl"), filepath.Join(dir, "b.pkl")
	os.WriteFile(a, []byte("\x80\x02]K\x01a."), 0o644)              // [1]
	os.WriteFile(b, []byte("\x80\x02](K\x01(K\x02K\x03le."), 0o644) // [1, [2, 3]]
	r, ok := eachFiles(a, b, Options{})
	if !ok || !agreeEach(t, a, b, Options{}) {
		t.Fatalf("eachFiles did not take the pair")
	}
	for _, e := range r.Entries {
		if e.Kind == Added && e.SizeB == 0 {
			t.Errorf("%s added with size 0", e.Path)
		}
	}
}

// TestSameBytesChunks: sameBytes reads two files in pieces of sameChunk,
// not of a megabyte each (pk diff runs it right after hashing A, whose
// store is garbage not yet collected: the buffers were fresh pages on top
// of it), and still tells equal files from files that differ in their last
// byte or in length.
func TestSameBytesChunks(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", data)
	same := write("same", data)
	last := append([]byte(nil), data...)
	last[len(last)-1]++
	other := write("last", last)
	short := write("short", data[:len(data)-1])
	eq := func(a, b string) bool {
		same, known := sameBytes(a, b)
		if !known {
			t.Fatalf("sameBytes(%s, %s): two regular files not compared", a, b)
		}
		return same
	}
	if !eq(a, same) {
		t.Fatal("equal files read as different")
	}
	if eq(a, other) || eq(a, short) {
		t.Fatal("different files read as equal")
	}
	// what is not a regular file is not compared: stdin, a pipe read
	// already (opened again it reads as empty), a directory
	for _, p := range []string{"-", dir, "/dev/null"} {
		if same, known := sameBytes(p, p); same || known {
			t.Errorf("sameBytes(%s, %s) = %v, %v; want false, false", p, p, same, known)
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	sameBytes(a, same)
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 256<<10 {
		t.Fatalf("sameBytes allocated %d bytes, want at most 256 KB", got)
	}
}
