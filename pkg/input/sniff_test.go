package input

import (
	"archive/zip"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

func TestLooks(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"# pk — read Python pickles without executing them\n", `text (first line "# pk — read Python pickles without execu…")`},
		{"\n\nimport os\n", `text (first line "import os")`},
		{"\x89PNG\r\n\x1a\n\x00\x00", "a PNG image"},
		{"\xff\xd8\xff\xe0", "a JPEG image"},
		{"GIF89a", "a GIF image"},
		{"%PDF-1.7\n", "a PDF document"},
		{"\x7fELF\x02\x01", "an ELF executable or shared library"},
		{"PK\x03\x04", "a zip archive"},
		{"\x1f\x8b\x08\x00", "a gzip stream"},
		{"\x80\x04\x95", ""},     // a pickle
		{"\x00\x01\x02\x03", ""}, // unknown binary
		{"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}", "a safetensors file"},
		{"caf\xc3", `text (first line "caf\xc3")`}, // a rune cut by the end of the head
	} {
		if got := Looks([]byte(c.head)); got != c.want {
			t.Errorf("Looks(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

func TestExplain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	open := func(p string) error {
		_, err := Open(p, pickle.Options{})
		if err == nil {
			t.Fatalf("%s opened", p)
		}
		return Explain(err, nil)
	}
	text := write("README.md", "# pk — read\nmore\n")
	if got, want := open(text).Error(), text+`: not a pickle: looks like text (first line "# pk — read"); read as a pickle it fails at offset 0: invalid opcode byte 0x23 (invalid load key '#')`; got != want {
		t.Errorf("text:\n got %s\nwant %s", got, want)
	}
	py := write("a.py", "import os\nprint(1)\n")
	if got := open(py).Error(); !strings.Contains(got, `not a pickle: looks like text (first line "import os")`) {
		t.Errorf("py: %s", got)
	}
	png := write("p.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	if got, want := open(png).Error(), png+": not a pickle: looks like a PNG image"; got != want {
		t.Errorf("png: %s", got)
	}
	empty := write("empty", "")
	if got, want := open(empty).Error(), empty+": not a pickle: the file is empty"; got != want {
		t.Errorf("empty: %s", got)
	}
	bin := write("x.bin", "\x00\x01")
	if got, want := open(bin).Error(), bin+": not a pickle: offset 0: invalid opcode byte 0x00 (invalid load key '\\x00')"; got != want {
		t.Errorf("bin:\n got %s\nwant %s", got, want)
	}
	if got, want := open(dir).Error(), dir+": is a directory"; got != want {
		t.Errorf("dir: %s", got)
	}
	// a damaged pickle is not reworded: its error is about the pickle
	bad := write("bad.pkl", "(lp0\nI1\naI2\naXYZ\n")
	err := open(bad)
	if _, ok := err.(*NotPickleError); ok {
		t.Errorf("damaged pickle reworded: %v", err)
	}
	// the offset stays available
	if pe, ok := pickle.AsError(open(text)); !ok || pe.Offset != 0 {
		t.Errorf("no pickle.Error under the explanation")
	}
	// text under gzip
	gzp := filepath.Join(dir, "t.gz")
	f, _ := os.Create(gzp)
	zw := gzip.NewWriter(f)
	zw.Write([]byte("hello world\n"))
	zw.Close()
	f.Close()
	if got := open(gzp).Error(); !strings.Contains(got, `not a pickle: the gzip-decompressed stream looks like text (first line "hello world")`) {
		t.Errorf("gzip: %s", got)
	}
	// a zip that is not torch.save's
	zp := filepath.Join(dir, "z.zip")
	f, _ = os.Create(zp)
	w := zip.NewWriter(f)
	m, _ := w.Create("hello.txt")
	m.Write([]byte("hi"))
	w.Close()
	f.Close()
	if got, want := open(zp).Error(), zp+`: not a pickle: looks like a zip archive that is not a torch.save checkpoint (no data.pkl member, first member "hello.txt")`; got != want {
		t.Errorf("zip:\n got %s\nwant %s", got, want)
	}
	// stdin: the caller gives the head
	_, err = OpenReader(strings.NewReader("hello\n"), "-", pickle.Options{}, Options{})
	if got := Explain(err, []byte("hello\n")).Error(); !strings.HasPrefix(got, `-: not a pickle: looks like text (first line "hello")`) {
		t.Errorf("stdin: %s", got)
	}
}

// TestContainerOneSniffer: every command decides by input.Container whether
// a file needs pkg/input; an LZMA-alone joblib file is one (pk dis read it as
// a bare pickle, "offset 1: invalid opcode byte 0x00", where pk hash
// decompressed it).
func TestContainerOneSniffer(t *testing.T) {
	for head, want := range map[string]string{
		"\x1f\x8b\x08\x00": "gzip", "PK\x03\x04": "zip", "\x93NUMPY\x01\x00": "npy", "x\x9c": "zlib",
		"BZh91AY&SY": "bz2", "]\x00\x00\x80\x00": "lzma", "\xfd7zXZ\x00": "xz", "ZF0x": "joblib-zfile",
		"BZh": "", "\x80\x04K\x01.": "", "(lp0\n": "",
	} {
		if got := Container([]byte(head)); got != want {
			t.Errorf("%q: %q, want %q", head, got, want)
		}
		if PlainPickle([]byte(head)) != (want == "") {
			t.Errorf("%q: PlainPickle disagrees with Container", head)
		}
	}
}
