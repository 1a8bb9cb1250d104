package canon

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// rereadDir holds testdata/gen/gen_reread.py's fixtures: an array and a
// tensor whose one payload is 1.2 MB of every byte value.
const rereadDir = "../../testdata/reread/"

// TestRereadCompressed: an array pickled at protocol 2 (its data a streamed
// str of _codecs.encode) and a tensor pickled by pickle.dump (its storage
// streamed nested torch.save bytes) hash alike under every compression pk
// reads and in containers (a torch.save zip holding the array, a gzip'd
// joblib file holding the tensor, and one holding an object array of it),
// also from standard input, as plain at
// protocol 4 and as torch.save: the payload is read again through the
// decompression (docs/canonical-form-2.md §5).
func TestRereadCompressed(t *testing.T) {
	tmp := t.TempDir()
	v2 := Options{Form: Form2, NoPaths: true}
	plain := func(name string) (string, []byte) {
		data := testfile.Gunzip(t, rereadDir+name+".gz")
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p, data
	}
	for _, c := range []struct {
		want   string   // plain file whose digest the others have
		p2     string   // the protocol 2 pickle: in every compression
		others []string // committed as they are
		plains []string // committed gzip'd, hashed decompressed
	}{
		{"array_p4.pkl", "array_p2.pkl", []string{"array_p2.pkl.bz2", "array_p4.pkl.gz"}, []string{"array.pt"}},
		{"tensor.pt", "tensor_p2.pkl", []string{"tensor_p2.pkl.bz2", "tensor_p4.pkl.gz", "tensor.legacy.pt.gz", "tensor_p2.joblib.gz"}, []string{"tensor_p4.pkl", "tensor.legacy.pt"}},
		// an object array holding the tensor: joblib's nested pickle
		{"objarr_p4.pkl", "", []string{"objarr.joblib.gz"}, nil},
	} {
		wp, _ := plain(c.want)
		want := hashFileDigest(t, wp, v2)
		if c.p2 == "" {
			for _, o := range c.others {
				if d := hashFileDigest(t, rereadDir+o, v2); d != want {
					t.Errorf("%s: %s, want %s's %s", o, d, c.want, want)
				}
			}
			continue
		}
		p2, data := plain(c.p2)
		got := map[string]string{c.p2: hashFileDigest(t, p2, v2)}
		for _, kind := range testfile.Compressions {
			p := filepath.Join(tmp, c.p2+"."+kind)
			if err := os.WriteFile(p, testfile.Compress(t, kind, data), 0o644); err != nil {
				t.Fatal(err)
			}
			got[c.p2+"."+kind] = hashFileDigest(t, p, v2)
		}
		// standard input, spooled: read again from the spool
		got[c.p2+".gzip on stdin"] = stdinDigest(t, filepath.Join(tmp, c.p2+".gzip"), v2)
		got[c.p2+".bz2 on stdin"] = stdinDigest(t, rereadDir+c.p2+".bz2", v2)
		for _, o := range c.others {
			got[o] = hashFileDigest(t, rereadDir+o, v2)
		}
		for _, o := range c.plains {
			p, _ := plain(o)
			got[o] = hashFileDigest(t, p, v2)
		}
		for name, d := range got {
			if d != want {
				t.Errorf("%s: %s, want %s's %s", name, d, c.want, want)
			}
		}
		// pk-canon/1 still tells the forms apart
		gz := filepath.Join(tmp, c.p2+".gzip")
		if hashFileDigest(t, gz, Options{NoPaths: true}) == hashFileDigest(t, wp, Options{NoPaths: true}) {
			t.Errorf("%s: pk-canon/1 digests changed", c.p2)
		}
	}
}

// stdinDigest hashes the file at p given as standard input ("-").
func stdinDigest(t *testing.T, p string, opt Options) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	defer func() { os.Stdin = old }()
	os.Stdin = f
	return hashFileDigest(t, "-", opt)
}

// TestRereadHostile: a file that changes between the read and the read
// again (another payload, a truncated or corrupt stream, a decompression
// bomb in its place) fails with an error naming the file and the payload,
// never a panic nor a digest of another payload.
func TestRereadHostile(t *testing.T) {
	tmp := t.TempDir()
	v2 := Options{Form: Form2, NoPaths: true}
	array := testfile.Gunzip(t, rereadDir+"array_p2.pkl.gz")
	tensor := testfile.Gunzip(t, rereadDir+"tensor_p2.pkl.gz")
	// one ASCII byte of the payload changed: still valid UTF-8, latin-1
	changed := func(b []byte) []byte {
		c := bytes.Clone(b)
		i := len(c) / 2
		for c[i] >= 0x80 || c[i] == 0 {
			i++
		}
		c[i] ^= 1
		return c
	}
	gz := func(b []byte) []byte { return testfile.Compress(t, "gzip", b) }
	xz := func(b []byte) []byte { return testfile.Compress(t, "xz", b) }
	bomb := gz(make([]byte, 64<<20))
	for _, c := range []struct {
		name        string
		first, then []byte
		want        string
	}{
		{"array changed (gzip)", gz(array), gz(changed(array)), "reads otherwise the second time (from the file through its gzip decompression)"},
		{"array changed (xz)", xz(array), xz(changed(array)), "reads otherwise the second time (from the file through its xz decompression)"},
		{"array changed (plain)", array, changed(array), "reads otherwise the second time (from the file)"},
		{"tensor changed (gzip)", gz(tensor), gz(changed(tensor)), "reads otherwise the second time"},
		{"array truncated (gzip)", gz(array), gz(array)[:len(gz(array))/2], "reading the payload of"},
		{"tensor truncated (gzip)", gz(tensor), gz(tensor)[:len(gz(tensor))/2], "reading the payload of"},
		{"array truncated (plain)", array, array[:len(array)/2], "reading the payload of"},
		{"array corrupt (gzip)", gz(array), corrupt(gz(array)), "the payload of 1843200 bytes"}, // a bad CRC or another payload
		{"array replaced by a bomb (gzip)", gz(array), bomb, "reads otherwise"},
		{"array replaced by another compression", gz(array), xz(array), "reading the payload of"},
	} {
		p := filepath.Join(tmp, "f")
		if err := os.WriteFile(p, c.first, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := input.Open(p, ReadOptions(v2))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := os.WriteFile(p, c.then, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = HashDoc(doc, v2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v does not name the file", c.name, err)
		}
	}
}

// corrupt flips a byte in the middle of a compressed stream.
func corrupt(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)/2] ^= 0x55
	return c
}

// TestRereadNotLatin1Compressed: a large str of _codecs.encode(s, 'latin1')
// with a code point above U+00FF (which Python would refuse to encode) is
// no array's data, compressed as plain: the rule does not apply, without
// an error.
func TestRereadNotLatin1Compressed(t *testing.T) {
	data := largeData()
	s := utf8Of(data[:len(data)-2]) + "\u0100" // one code point above U+00FF
	b := (&asm{}).proto(2)
	b.global("_codecs", "encode")
	b.op('X')
	n := len(s)
	b.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	b.WriteString(s)
	b.str("latin1").op(0x86, 'R')
	raw := b.stop()
	tmp := t.TempDir()
	v2 := Options{Form: Form2, NoPaths: true}
	pp := filepath.Join(tmp, "plain.pkl")
	pz := filepath.Join(tmp, "z.pkl.gz")
	if err := os.WriteFile(pp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pz, testfile.Compress(t, "gzip", raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if dp, dz := hashFileDigest(t, pp, v2), hashFileDigest(t, pz, v2); dp != dz {
		t.Errorf("plain %s, gzip %s", dp, dz)
	}
}

// memoCodecs is a protocol 2 pickle of k latin-1 strs of 1.1 MB each,
// memoized first, then made bytes by _codecs.encode in the order given.
func memoCodecs(k int, order []int) []byte {
	a := (&asm{}).proto(2)
	a.mark()
	for i := 0; i < k; i++ {
		s := strings.Repeat("a", 1100000) + string(rune('A'+i))
		a.op('X')
		a.Write([]byte{byte(len(s)), byte(len(s) >> 8), byte(len(s) >> 16), byte(len(s) >> 24)})
		a.WriteString(s)
		a.op('q', byte(i))
	}
	a.op('1') // POP_MARK: the strs stay in the memo
	a.op(']').mark()
	for _, i := range order {
		a.global("_codecs", "encode")
		a.op('h', byte(i))
		a.str("latin1").op(0x86, 'R')
	}
	a.op('e')
	return a.stop()
}

// TestRereadOutOfOrder: payloads a stream asks for in stream order are
// read again in one more decompression; a stream that asks for them in
// reverse order (each a decompression from the start) fails at the bound
// of input.RereadBudget, cleanly, where the plain file (read at random)
// hashes.
func TestRereadOutOfOrder(t *testing.T) {
	const k = 20
	fwd, rev := make([]int, k), make([]int, k)
	for i := range k {
		fwd[i], rev[i] = i, k-1-i
	}
	tmp := t.TempDir()
	v2 := Options{Form: Form2, NoPaths: true}
	for _, c := range []struct {
		name  string
		order []int
		fails bool
	}{{"in order", fwd, false}, {"reversed", rev, true}} {
		raw := memoCodecs(k, c.order)
		pp := filepath.Join(tmp, "plain.pkl")
		pz := filepath.Join(tmp, "z.pkl.gz")
		if err := os.WriteFile(pp, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pz, testfile.Compress(t, "gzip", raw), 0o644); err != nil {
			t.Fatal(err)
		}
		want := hashFileDigest(t, pp, v2)
		r, err := HashFile(pz, v2)
		switch {
		case c.fails && (err == nil || !strings.Contains(err.Error(), "out of stream order") || !strings.Contains(err.Error(), pz)):
			t.Errorf("%s: %v, want the bound's error", c.name, err)
		case !c.fails && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.fails && r.Digest != want:
			t.Errorf("%s: gzip %s, plain %s", c.name, r.Digest, want)
		case c.fails:
			t.Logf("%s: %v", c.name, err)
		}
	}
}
