package canon

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/internal/testfile"
)

// TestHashEachSameAsDoc: hashing a bare pickle stream by stream gives, on
// every file it takes, the digest and per-rule totals of HashDoc over the
// opened input; containers, joblib and legacy torch files are left to Open.
func TestHashEachSameAsDoc(t *testing.T) {
	var files []string
	for _, root := range []string{"../../testdata/fixtures", "../../testdata/inputs", "../../testdata/equiv", "../../testdata/canon"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, _ := d.Info(); fi.Size() < 4<<20 {
					files = append(files, p)
				}
			}
			return nil
		})
	}
	// many streams and trailing bytes
	dir := t.TempDir()
	var many []byte
	for i := 0; i < 300; i++ {
		many = append(many, "\x80\x04K\x01."...)
		many = append(many, "(dp0\nVx\np1\nI1\ns."...)
	}
	for name, b := range map[string][]byte{"many.pkl": many, "trailing.pkl": append(append([]byte{}, many...), "junk"...)} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		files = append(files, p)
	}
	opt := Options{NoPaths: true}
	took, left := 0, 0
	for _, p := range files {
		each, ok := hashEach(p, opt)
		doc, err := input.Open(p, ReadOptions(opt))
		if !ok {
			left++
			continue
		}
		if err != nil {
			t.Errorf("%s: hashEach took it, Open refuses it: %v", p, err)
			continue
		}
		want, err := HashDoc(doc, opt)
		if err != nil {
			t.Errorf("%s: hashEach took it, HashDoc refuses it: %v", p, err)
			continue
		}
		took++
		if each.Digest != want.Digest {
			t.Errorf("%s: stream by stream %s, HashDoc %s (format %s)", p, each.Digest, want.Digest, doc.Format)
		}
		if len(each.Applied) != len(want.Applied) {
			t.Errorf("%s: %d rule totals, HashDoc %d", p, len(each.Applied), len(want.Applied))
			continue
		}
		for i := range each.Applied {
			if each.Applied[i].Rule != want.Applied[i].Rule || each.Applied[i].Count != want.Applied[i].Count {
				t.Errorf("%s: rule %d: %+v, HashDoc %+v", p, i, each.Applied[i], want.Applied[i])
			}
		}
	}
	t.Logf("%d files hashed stream by stream, %d left to Open", took, left)
	if took < 100 {
		t.Errorf("only %d files taken", took)
	}
}

// TestHashEachCompressed: a compressed file of many pickles is hashed
// stream by stream (hashEach, through input.EachStreamDecompressed) to the
// digest HashDoc gives it through Open; a compressed file whose payload a
// pk-canon/2 rule reads again (protocol 2's _codecs.encode of 1 MiB) is
// left to Open, where it is read through a second decompression: the
// rule applies as in the bare file.
func TestHashEachCompressed(t *testing.T) {
	dir := t.TempDir()
	var many []byte
	for i := 0; i < 300; i++ {
		many = append(many, "\x80\x04K\x01."...)
		many = append(many, "(dp0\nVx\np1\nI1\ns."...)
	}
	str := bytes.Repeat([]byte("\u00e9"), 1<<19+10) // (not ASCII: its latin-1 bytes are not its UTF-8)
	blob := append([]byte("\x80\x02c_codecs\nencode\nq\x00X"), binary.LittleEndian.AppendUint32(nil, uint32(len(str)))...)
	blob = append(append(blob, str...), "q\x01X\x06\x00\x00\x00latin1q\x02\x86q\x03Rq\x04."...)
	gz := func(name string, b []byte) string {
		return testfile.WriteCompressed(t, "gzip", filepath.Join(dir, name), b)
	}
	opt := Options{NoPaths: true, Form: Form2}
	for _, p := range []string{gz("many.pkl.gz", many), gz("trailing.pkl.gz", append(append([]byte{}, many...), "junk"...))} {
		each, ok := hashEach(p, opt)
		if !ok {
			t.Errorf("%s: not hashed stream by stream", p)
			continue
		}
		doc, err := input.Open(p, ReadOptions(opt))
		if err != nil {
			t.Fatal(err)
		}
		want, err := HashDoc(doc, opt)
		if err != nil {
			t.Fatal(err)
		}
		if each.Digest != want.Digest {
			t.Errorf("%s: stream by stream %s, HashDoc %s", p, each.Digest, want.Digest)
		}
	}
	p := gz("blob.pkl.gz", blob)
	bare := filepath.Join(dir, "blob.pkl")
	os.WriteFile(bare, blob, 0o644)
	want, err := HashFile(bare, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hashEach(p, opt); ok {
		t.Errorf("%s: hashed stream by stream, though its payload must be read again", p)
	}
	got, err := HashFile(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != want.Digest {
		t.Errorf("%s: %s, the bare file %s", p, got.Digest, want.Digest)
	}
}
