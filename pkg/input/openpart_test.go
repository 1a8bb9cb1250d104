package input

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

// readPart reads part i through OpenPart and checks the announced size.
func readPart(t *testing.T, d *Doc, i int) []byte {
	t.Helper()
	rc, size, err := d.OpenPart(i)
	if err != nil {
		t.Fatalf("%s part %d: %v", d.Path, i, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s part %d: %v", d.Path, i, err)
	}
	if int64(len(b)) != size {
		t.Fatalf("%s part %d: read %d bytes, OpenPart said %d", d.Path, i, len(b), size)
	}
	return b
}

// Every top-level pickle part of every fixture re-reads as the same
// streams at the same offsets; raw parts as their digest's bytes.
func TestOpenPartRereadsEveryPart(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	seen := 0
	for _, path := range files {
		base := filepath.Base(path)
		if strings.HasPrefix(base, "hostile") || strings.HasSuffix(base, ".py") || strings.HasSuffix(base, ".json") {
			continue
		}
		d, err := Open(path, pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		for i, p := range d.Parts {
			if p.Pickle == nil || p.Of >= 0 {
				continue
			}
			b := readPart(t, d, i)
			seen++
			first := p.Pickle.Streams[0]
			f, err := pickle.Parse(bytes.NewReader(b[first.Offset:]), int64(len(b))-first.Offset, base, pickle.Options{MaxStreams: len(p.Pickle.Streams)})
			if d.Format == "joblib" || strings.HasSuffix(d.Format, "+joblib") {
				// raw array bytes sit in the stream: the bare parser stops there
				if err == nil && len(f.Streams) > 0 && f.Streams[0].End+first.Offset == first.End {
					t.Errorf("%s: the bare parser read through the joblib arrays", base)
				}
				if !bytes.Contains(b, []byte("NumpyArrayWrapper")) {
					t.Errorf("%s: part %d is not the joblib stream", base, i)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s part %d: %v", base, i, err)
			}
			if len(f.Streams) != len(p.Pickle.Streams) {
				t.Fatalf("%s part %d: %d streams, want %d", base, i, len(f.Streams), len(p.Pickle.Streams))
			}
			for k, s := range f.Streams {
				if s.Offset+first.Offset != p.Pickle.Streams[k].Offset || s.End+first.Offset != p.Pickle.Streams[k].End {
					t.Errorf("%s part %d stream %d at [%d,%d), want [%d,%d)", base, i, k, s.Offset+first.Offset, s.End+first.Offset, p.Pickle.Streams[k].Offset, p.Pickle.Streams[k].End)
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("only %d pickle parts checked", seen)
	}
}

func TestOpenPartBytes(t *testing.T) {
	// a zip member: the bytes archive/zip reads
	path := filepath.Join(dir, "torch_zip_a.pt")
	d, err := Open(path, pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var want []byte
	for _, f := range zr.File {
		if f.Name == d.Parts[0].Name {
			rc, _ := f.Open()
			want, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	if got := readPart(t, d, 0); !bytes.Equal(got, want) || len(want) == 0 {
		t.Errorf("data.pkl: %d bytes, archive/zip reads %d", len(got), len(want))
	}
	// a storage: its raw bytes
	if got := readPart(t, d, 1); int64(len(got)) != d.Parts[1].Raw.Len || !bytes.HasPrefix(got, d.Parts[1].Raw.Prefix) {
		t.Errorf("storage part: %d bytes", len(got))
	}
	if d.Deflated() {
		t.Error("torch.save stores its members; Deflated() says otherwise")
	}

	// gzip: the decompressed bytes
	path = filepath.Join(dir, "joblib_a_gzip.joblib.gz")
	d, err = Open(path, pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	zg, _ := gzip.NewReader(bytes.NewReader(raw))
	want, _ = io.ReadAll(zg)
	if got := readPart(t, d, 0); !bytes.Equal(got, want) {
		t.Errorf("gzip part: %d bytes, want %d", len(got), len(want))
	}
	if !d.Deflated() {
		t.Error("gzip input: Deflated() false")
	}
	// an array inside the compressed stream cannot be re-read
	if _, _, err := d.OpenPart(1); err == nil {
		t.Error("OpenPart of an array inside gzip: no error")
	}

	// legacy torch: the five pickles only, not the storage records after them
	path = filepath.Join(dir, "torch_legacy_a.pt")
	d, err = Open(path, pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(path)
	if got := readPart(t, d, 0); !bytes.Equal(got, raw[:d.Parts[0].Pickle.Size]) || d.Parts[0].Pickle.Size >= int64(len(raw)) {
		t.Errorf("legacy part: %d bytes of %d", len(got), len(raw))
	}

	// a nested pickle (joblib object array) is not a part of its own
	d, err = Open(filepath.Join(dir, "joblib_objarray.joblib"), pickle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.OpenPart(1); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("nested part: %v", err)
	}
	if _, _, err := d.OpenPart(99); err == nil {
		t.Error("part 99: no error")
	}
}

func TestOpenPartStdin(t *testing.T) {
	raw, _ := os.ReadFile(filepath.Join(dir, "plain.pkl"))
	d, err := openStream(bytes.NewReader(raw), -1, "-", nil, pickle.Options{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.OpenPart(0); err == nil {
		t.Error("stdin part re-opened")
	}
}
