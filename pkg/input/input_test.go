package input

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pk-tools/pk/pkg/pickle"
)

const dir = "../../testdata/inputs"

type expTensor struct {
	StorageSHA string  `json:"storage_sha256"`
	DType      string  `json:"dtype"`
	Shape      []int64 `json:"shape"`
	Offset     int64   `json:"offset"`
}

type expArray struct {
	SHA    string  `json:"sha256"`
	Len    int64   `json:"len"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	Object bool    `json:"object"`
}

type expected struct {
	Format      string               `json:"format"`
	Storages    map[string]string    `json:"storages"`
	StorageLen  map[string]int64     `json:"storage_len"`
	Tensors     map[string]expTensor `json:"tensors"`
	Arrays      []expArray           `json:"arrays"`
	PickleLen   int64                `json:"pickle_len"`
	Streams     int                  `json:"streams"`
	SHA         string               `json:"sha256"`
	Len         int64                `json:"len"`
	Shape       []int64              `json:"shape"`
	Descr       string               `json:"descr"`
	Object      bool                 `json:"object"`
	TorchLoads  bool                 `json:"torch_loads"`
	TorchSame   bool                 `json:"torch_same_values"`
	Compression string               `json:"compression"`
}

func loadExpected(t *testing.T) map[string]expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]expected{}
	for k, v := range m {
		if strings.HasPrefix(k, "_") {
			continue
		}
		var e expected
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = e
	}
	return out
}

func open(t *testing.T, name string) *Doc {
	t.Helper()
	d, err := OpenWith(filepath.Join(dir, name), pickle.Options{NewHash: sha256.New}, Options{Graph: true})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func hexd(b []byte) string { return hex.EncodeToString(b) }

// stateDict returns the (key, value) pairs of a pickled OrderedDict built
// by REDUCE then SETITEMS.
func stateDict(t *testing.T, root *pickle.Node) [][2]*pickle.Node {
	t.Helper()
	var out [][2]*pickle.Node
	items := root.Items
	for _, m := range root.Muts() {
		if m.Op == pickle.SETITEMS || m.Op == pickle.SETITEM {
			items = append(items, m.Args...)
		}
	}
	for i := 0; i+1 < len(items); i += 2 {
		out = append(out, [2]*pickle.Node{items[i], items[i+1]})
	}
	if len(out) == 0 {
		t.Fatalf("no state dict entries in %v", root.Kind)
	}
	return out
}

func dataPickle(t *testing.T, d *Doc) *pickle.Stream {
	t.Helper()
	if d.Parts[0].Role != RolePickle || d.Parts[0].Pickle == nil {
		t.Fatalf("first part is %s", d.Parts[0].Role)
	}
	ss := d.Parts[0].Pickle.Streams
	if d.Format == "torch-legacy" || strings.HasSuffix(d.Format, "+torch-legacy") {
		return ss[3]
	}
	return ss[0]
}

// Every torch fixture: each tensor of the state dict links, through its
// persistent id, to a storage part whose bytes have the digest torch's
// own storage has, with torch's dtype, shape and offset.
func TestTorchTensorsLinkToStorages(t *testing.T) {
	exp := loadExpected(t)
	for _, name := range []string{"torch_zip_a.pt", "torch_zip_b.pt", "torch_legacy_a.pt", "torch_legacy_b.pt"} {
		t.Run(name, func(t *testing.T) {
			e := exp[name]
			d := open(t, name)
			if d.Format != e.Format {
				t.Fatalf("format %q, want %q", d.Format, e.Format)
			}
			n := 0
			dp := dataPickle(t, d)
			for _, kv := range stateDict(t, dp.Root) {
				key := kv[0].Str
				want, ok := e.Tensors[key]
				if !ok {
					t.Fatalf("unexpected key %q", key)
				}
				tr, ok := d.TensorAt(dp.Store(), pickle.ID(kv[1].ID))
				if !ok {
					t.Fatalf("%s: not a tensor rebuild: %v", key, kv[1].Kind)
				}
				if tr.Storage.Part == nil || tr.Storage.Part.Raw == nil {
					t.Fatalf("%s: storage %q has no part", key, tr.Storage.Key)
				}
				if got := hexd(tr.Storage.Part.Raw.Digest); got != want.StorageSHA {
					t.Errorf("%s: storage digest %s, want %s", key, got, want.StorageSHA)
				}
				if tr.Storage.DType != want.DType || tr.Offset != want.Offset || !equalInts(tr.Shape, want.Shape) {
					t.Errorf("%s: %s offset %d shape %v, want %s %d %v", key, tr.Storage.DType, tr.Offset, tr.Shape, want.DType, want.Offset, want.Shape)
				}
				n++
			}
			if n != len(e.Tensors) {
				t.Fatalf("%d tensors, want %d", n, len(e.Tensors))
			}
			// zip: storages by key as torch numbered them
			if e.Format == "torch-zip" {
				for k, sha := range e.Storages {
					var p *Part
					for i := range d.Parts {
						if d.Parts[i].Role == RoleStorage && d.Parts[i].Key == k {
							p = &d.Parts[i]
						}
					}
					if p == nil || hexd(p.Raw.Digest) != sha || p.Raw.Len != e.StorageLen[k] {
						t.Errorf("storage %s: %+v, want %s", k, p, sha)
					}
				}
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Two checkpoints that differ in one element of one tensor: exactly the
// storages of that tensor (and its tied and view aliases) differ.
func TestTorchOneElementChanged(t *testing.T) {
	for _, f := range []string{"zip", "legacy"} {
		a, b := open(t, "torch_"+f+"_a.pt"), open(t, "torch_"+f+"_b.pt")
		da, db := map[string]string{}, map[string]string{}
		pa, pb := dataPickle(t, a), dataPickle(t, b)
		for _, kv := range stateDict(t, pa.Root) {
			tr, _ := a.TensorAt(pa.Store(), pickle.ID(kv[1].ID))
			da[kv[0].Str] = hexd(tr.Storage.Part.Raw.Digest)
		}
		for _, kv := range stateDict(t, pb.Root) {
			tr, _ := b.TensorAt(pb.Store(), pickle.ID(kv[1].ID))
			db[kv[0].Str] = hexd(tr.Storage.Part.Raw.Digest)
		}
		var changed []string
		for k := range da {
			if da[k] != db[k] {
				changed = append(changed, k)
			}
		}
		want := map[string]bool{"layer.weight": true, "head.weight": true, "row1": true}
		if len(changed) != len(want) {
			t.Fatalf("%s: changed %v, want layer.weight, head.weight, row1", f, changed)
		}
		for _, k := range changed {
			if !want[k] {
				t.Fatalf("%s: %s changed", f, k)
			}
		}
	}
}

// Raw.Open re-reads exactly the bytes that were digested.
func TestRawReopen(t *testing.T) {
	for _, name := range []string{"torch_zip_a.pt", "torch_legacy_a.pt", "joblib_a.joblib"} {
		d := open(t, name)
		n := 0
		for _, p := range d.Parts {
			if p.Raw == nil {
				continue
			}
			rc, err := p.Raw.Open()
			if err != nil {
				t.Fatalf("%s %s: %v", name, p.Name, err)
			}
			h := sha256.New()
			io.Copy(h, rc)
			rc.Close()
			if !bytes.Equal(h.Sum(nil), p.Raw.Digest) {
				t.Fatalf("%s %s: re-read bytes differ", name, p.Name)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("%s: no raw parts", name)
		}
	}
	d := open(t, "joblib_a_gzip.joblib.gz")
	if _, err := d.Parts[1].Raw.Open(); err == nil {
		t.Fatal("re-reading inside a gzip stream should fail")
	}
}

// joblib: every array's bytes are a raw part whose digest is the SHA-256
// numpy computed, with dtype and shape, for every compression.
func TestJoblibArrays(t *testing.T) {
	exp := loadExpected(t)
	n := 0
	for name, e := range exp {
		if e.Format != "joblib" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			d := open(t, name)
			wantFormat := "joblib"
			if e.Compression != "" {
				wantFormat = e.Compression + "+joblib"
			}
			if d.Format != wantFormat {
				t.Errorf("format %q, want %q", d.Format, wantFormat)
			}
			var arrays []Part
			for _, p := range d.Parts[1:] {
				if p.Role != RoleArray && p.Role != RoleObjects {
					t.Fatalf("part %s role %s", p.Name, p.Role)
				}
				if !p.JoblibArray() || p.Of != 0 || classOf(d.Parts[0].Pickle.Streams[p.NodeStream].Store(), p.NodeID) != "joblib.numpy_pickle.NumpyArrayWrapper" {
					t.Fatalf("part %s not linked to its wrapper", p.Name)
				}
				if p.Raw != nil && (p.Gap[1] != p.Raw.Offset+p.Raw.Len || p.Gap[0] > p.Raw.Offset || p.Raw.Offset-p.Gap[0] > 256) {
					t.Fatalf("part %s: gap %v, data at %d+%d", p.Name, p.Gap, p.Raw.Offset, p.Raw.Len)
				}
				arrays = append(arrays, p)
			}
			if len(arrays) != len(e.Arrays) {
				t.Fatalf("%d arrays, want %d", len(arrays), len(e.Arrays))
			}
			for i, a := range e.Arrays {
				p := arrays[i]
				if a.Object {
					if p.Role != RoleObjects || p.Pickle == nil || len(p.Pickle.Streams) != 1 {
						t.Fatalf("array %d: want a nested pickle, got %s", i, p.Role)
					}
					continue
				}
				if hexd(p.Raw.Digest) != a.SHA || p.Raw.Len != a.Len || p.Raw.DType != a.DType || !equalInts(p.Raw.Shape, a.Shape) {
					t.Errorf("array %d: %s %d %s %v, want %s %d %s %v", i, hexd(p.Raw.Digest)[:12], p.Raw.Len, p.Raw.DType, p.Raw.Shape, a.SHA[:12], a.Len, a.DType, a.Shape)
				}
			}
			f := d.Parts[0].Pickle
			if len(f.Streams) != 1 || f.Trailing != nil {
				t.Fatalf("%d streams, trailing %v", len(f.Streams), f.Trailing)
			}
			// sizes add up: every byte of the stream, raw ones included
			st := f.Streams[0]
			sum := st.Self
			for _, nd := range st.All {
				sum += nd.Self
			}
			if sum != st.Len() {
				t.Errorf("bytes attributed %d, stream %d", sum, st.Len())
			}
		})
	}
	if n < 8 {
		t.Fatalf("only %d joblib fixtures", n)
	}
}

func TestJoblibOneArrayChanged(t *testing.T) {
	a, b := open(t, "joblib_a.joblib"), open(t, "joblib_b.joblib")
	var diff []int
	for i := 1; i < len(a.Parts); i++ {
		if !bytes.Equal(a.Parts[i].Raw.Digest, b.Parts[i].Raw.Digest) {
			diff = append(diff, i-1)
		}
	}
	if len(diff) != 1 || diff[0] != 1 {
		t.Fatalf("arrays differing: %v, want [1] (ids)", diff)
	}
}

// Compressed pickles read as the plain pickle does: same streams, same
// graph, sizes in the decompressed stream.
func TestCompressed(t *testing.T) {
	exp := loadExpected(t)
	plain := open(t, "plain.pkl").Parts[0].Pickle
	n := 0
	for name, e := range exp {
		if e.Format != "compressed" {
			continue
		}
		n++
		d := open(t, name)
		f := d.Parts[0].Pickle
		if !strings.HasSuffix(d.Format, "+pickle") || d.Compression == "" {
			t.Errorf("%s: format %q", name, d.Format)
		}
		if f.Size != e.PickleLen || len(f.Streams) != e.Streams || f.Trailing != nil {
			t.Errorf("%s: size %d streams %d, want %d %d", name, f.Size, len(f.Streams), e.PickleLen, e.Streams)
		}
		for i, s := range f.Streams {
			p := plain.Streams[i]
			if len(s.All) != len(p.All) || s.End != p.End || s.Root.Kind != p.Root.Kind {
				t.Errorf("%s: stream %d differs from the plain pickle", name, i)
			}
		}
	}
	if n != 7 {
		t.Fatalf("%d compressed fixtures, want 7", n)
	}
}

func TestNpy(t *testing.T) {
	exp := loadExpected(t)
	for name, e := range exp {
		if e.Format != "npy" {
			continue
		}
		d := open(t, name)
		if d.Format != "npy" {
			t.Errorf("%s: format %s", name, d.Format)
		}
		if e.Object {
			if len(d.Parts) != 1 || d.Parts[0].Role != RoleObjects || d.Parts[0].Pickle == nil {
				t.Errorf("%s: want one object pickle part", name)
			}
			continue
		}
		r := d.Parts[0].Raw
		if hexd(r.Digest) != e.SHA || r.Len != e.Len || !equalInts(r.Shape, e.Shape) {
			t.Errorf("%s: %x %d %v, want %s %d %v", name, r.Digest, r.Len, r.Shape, e.SHA, e.Len, e.Shape)
		}
		if e.Descr != "structured" && r.DType != e.Descr {
			t.Errorf("%s: dtype %s, want %s", name, r.DType, e.Descr)
		}
		if strings.HasPrefix(name, "fortran") != (r.Order == "F") {
			t.Errorf("%s: order %s", name, r.Order)
		}
	}
}

// Every hostile container: pk's reading or refusal, against what torch did.
func TestHostileContainers(t *testing.T) {
	exp := loadExpected(t)
	cases := map[string]string{ // fixture -> substring of pk's refusal ("" = reads)
		"hostile_crc_mismatch.pt":   "CRC-32 mismatch",
		"hostile_encrypted_flag.pt": "encryption",
		"hostile_local_name.pt":     "",
		"hostile_duplicate.pt":      "duplicate member name",
		"hostile_junk_before.pt":    "a zip archive starts at offset 16",
		"hostile_truncated.pt":      "end-of-central-directory",
		"hostile_badcrc.pkl.gz":     "checksum",
	}
	for name, want := range cases {
		_, err := Open(filepath.Join(dir, name), pickle.Options{NewHash: sha256.New})
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want %q and the file name", name, err, want)
		}
		if strings.HasSuffix(name, ".pt") && strings.Contains(err.Error(), "member") == false && !strings.Contains(name, "junk") && !strings.Contains(name, "truncated") {
			t.Errorf("%s: error does not name the member: %v", name, err)
		}
		e := exp[name]
		if strings.HasSuffix(name, ".pt") && e.TorchLoads && want != "CRC-32 mismatch" && want != "duplicate member name" {
			t.Errorf("%s: torch loads it, pk refuses", name)
		}
	}
	// the local-name mismatch reads as torch reads it: the same storages
	a := open(t, "torch_zip_a.pt")
	h := open(t, "hostile_local_name.pt")
	if len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "local header") {
		t.Errorf("notes %v", h.Notes)
	}
	for i := range a.Parts {
		if a.Parts[i].Raw != nil && !bytes.Equal(a.Parts[i].Raw.Digest, h.Parts[i].Raw.Digest) {
			t.Errorf("part %s differs", a.Parts[i].Name)
		}
	}
	// with AllowBadCRC pk reads what torch reads: storage 0 changed, noted
	d, err := OpenWith(filepath.Join(dir, "hostile_crc_mismatch.pt"), pickle.Options{NewHash: sha256.New}, Options{AllowBadCRC: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Notes) != 1 || bytes.Equal(d.Parts[1].Raw.Digest, a.Parts[1].Raw.Digest) || !bytes.Equal(d.Parts[2].Raw.Digest, a.Parts[2].Raw.Digest) {
		t.Errorf("AllowBadCRC: notes %v", d.Notes)
	}
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// bigBytesPickle is a pickle of one bytes object of n zero bytes.
func bigBytesPickle(n int) []byte {
	b := []byte{0x80, 4, 'B', byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
	b = append(b, make([]byte, n)...)
	return append(b, '.')
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestGzipBombStopsAtLimit(t *testing.T) {
	p := writeTemp(t, "bomb.gz", gz(bigBytesPickle(8<<20)))
	_, err := OpenWith(p, pickle.Options{}, Options{MaxDecompressed: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "gzip-decompressed stream") {
		t.Fatalf("err = %v", err)
	}
	// under the limit it reads
	d, err := OpenWith(p, pickle.Options{}, Options{MaxDecompressed: 16 << 20})
	if err != nil || d.Parts[0].Pickle.Streams[0].Store().PayloadLen(d.Parts[0].Pickle.Streams[0].Store().Root) != 8<<20 {
		t.Fatalf("err = %v", err)
	}
	t.Setenv("PK_MAX_DECOMPRESSED", "1000")
	if _, err := Open(p, pickle.Options{}); err == nil || !strings.Contains(err.Error(), "limit of 1000 bytes") {
		t.Fatalf("env limit: %v", err)
	}
}

func TestDefaultLimit(t *testing.T) {
	t.Setenv("PK_MAX_DECOMPRESSED", "")
	if got := (Options{}).limit(1000); got != 100*1000+256<<20 {
		t.Fatalf("limit %d", got)
	}
	if got := (Options{MaxDecompressed: -1}).limit(1000); got != -1 {
		t.Fatalf("limit %d", got)
	}
}

// torchZip builds a torch-like archive whose storage member is deflated.
func torchZip(t *testing.T, storage []byte, lieSize bool) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "torch_zip_a.pt"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		if strings.HasSuffix(f.Name, "/data/0") {
			data = storage
			if lieSize {
				var c bytes.Buffer
				cw, _ := flate.NewWriter(&c, flate.BestCompression)
				cw.Write(data)
				cw.Close()
				w, err := zw.CreateRaw(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, CRC32: 0, CompressedSize64: uint64(c.Len()), UncompressedSize64: 24})
				if err != nil {
					t.Fatal(err)
				}
				w.Write(c.Bytes())
				continue
			}
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate})
			w.Write(data)
			continue
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}

func TestZipBomb(t *testing.T) {
	big := make([]byte, 8<<20)
	// honest declared size over the limit: refused before inflating
	p := writeTemp(t, "bomb.pt", torchZip(t, big, false))
	_, err := OpenWith(p, pickle.Options{}, Options{MaxDecompressed: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "zip bomb") || !strings.Contains(err.Error(), "member torch_zip_a/data/0") {
		t.Fatalf("err = %v", err)
	}
	// a member that lies about its size: stopped by the limit while inflating
	p = writeTemp(t, "liar.pt", torchZip(t, big, true))
	_, err = OpenWith(p, pickle.Options{}, Options{MaxDecompressed: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "member torch_zip_a/data/0") {
		t.Fatalf("err = %v", err)
	}
	// under a generous limit the liar is refused for its size, as torch does
	_, err = OpenWith(p, pickle.Options{}, Options{MaxDecompressed: 64 << 20})
	if err == nil || !strings.Contains(err.Error(), "the central directory says 24") {
		t.Fatalf("err = %v", err)
	}
	// an honest deflated member reads, with the same digest as stored
	st := make([]byte, 24)
	a := open(t, "torch_zip_a.pt")
	rc, _ := a.Parts[1].Raw.Open()
	io.ReadFull(rc, st)
	rc.Close()
	p = writeTemp(t, "deflated.pt", torchZip(t, st, false))
	d, err := OpenWith(p, pickle.Options{NewHash: sha256.New}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Parts[1].Raw.Digest, a.Parts[1].Raw.Digest) {
		t.Fatal("deflated storage digest differs")
	}
}

// Truncations of every container never panic and name the file.
func TestTruncatedContainers(t *testing.T) {
	for _, name := range []string{"torch_zip_a.pt", "torch_legacy_a.pt", "joblib_a.joblib", "joblib_objarray.joblib", "plain_v1.npy", "objects.npy", "plain.pkl.gz", "plain.pkl.xz", "plain.pkl.zst", "plain.pkl.lz4", "plain.pkl.bz2", "joblib_a_zlib.joblib.z"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{1, 5, 11, len(b) / 3, len(b) / 2, len(b) - 30, len(b) - 1} {
			if cut <= 0 || cut >= len(b) {
				continue
			}
			p := writeTemp(t, name, b[:cut])
			d, err := Open(p, pickle.Options{NewHash: sha256.New})
			if err == nil {
				// a cut after a complete first pickle may leave a readable
				// prefix; it must then report what it dropped
				if d.Parts[0].Pickle == nil || (d.Parts[0].Pickle.Trailing == nil && !strings.Contains(name, "pkl")) {
					t.Errorf("%s cut at %d: read without complaint", name, cut)
				}
				continue
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s cut at %d: error does not name the file: %v", name, cut, err)
			}
		}
	}
}

func TestLegacyTorchInGzip(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(dir, "torch_legacy_a.pt"))
	p := writeTemp(t, "legacy.pt.gz", gz(b))
	d, err := Open(p, pickle.Options{NewHash: sha256.New})
	if err != nil {
		t.Fatal(err)
	}
	a := open(t, "torch_legacy_a.pt")
	if d.Format != "gzip+torch-legacy" || len(d.Parts) != len(a.Parts) {
		t.Fatalf("format %s parts %d", d.Format, len(d.Parts))
	}
	for i := 1; i < len(a.Parts); i++ {
		if !bytes.Equal(d.Parts[i].Raw.Digest, a.Parts[i].Raw.Digest) || d.Parts[i].Raw.Where != "gzip-decompressed stream" {
			t.Fatalf("part %d differs", i)
		}
	}
}

func TestErrorOffsetInDecompressedStream(t *testing.T) {
	p := writeTemp(t, "bad.pkl.gz", gz([]byte("\x80\x04K\x01\xff")))
	_, err := Open(p, pickle.Options{})
	pe, ok := pickle.AsError(err)
	if !ok || pe.Offset != 4 || !strings.Contains(err.Error(), "offset 4 is in the gzip-decompressed stream") || pe.File != p {
		t.Fatalf("err = %v", err)
	}
}

func TestNpyHostile(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join(dir, "plain_v1.npy"))
	cases := map[string][]byte{
		"version":  append(append([]byte{}, good[:6]...), append([]byte{9, 0}, good[8:]...)...),
		"hugehdr":  append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f"), good[10:]...),
		"badhdr":   append(append([]byte{}, good[:10]...), bytes.Repeat([]byte("("), len(good)-10)...),
		"bigshape": []byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f8', 'fortran_order': False, 'shape': (9999999999, 9999999999), }\n"),
	}
	for name, b := range cases {
		p := writeTemp(t, name+".npy", b)
		if _, err := Open(p, pickle.Options{}); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestSniffCompression(t *testing.T) {
	for head, want := range map[string]string{
		"\x1f\x8b\x08":     "gzip",
		"BZh91AY&SY":       "bz2",
		"BZh9xxxxxx":       "",
		"\x78\x9c":         "zlib",
		"\x78\x00":         "",
		"]\x00\x00\x80":    "lzma",
		"](":               "",
		"\x80\x04\x95":     "",
		"\x28\xb5\x2f\xfd": "zstd",
		"\x04\x22\x4d\x18": "lz4",
		"\xfd7zXZ\x00":     "xz",
	} {
		if got := sniffCompression([]byte(head)); got != want {
			t.Errorf("%q: %q, want %q", head, got, want)
		}
	}
}

// stdin: compressed and joblib content stream; a zip needs the file.
func TestStdin(t *testing.T) {
	old := os.Stdin
	defer func() { os.Stdin = old }()
	for name, want := range map[string]string{"joblib_a_gzip.joblib.gz": "gzip+joblib", "torch_legacy_a.pt": "torch-legacy", "torch_zip_a.pt": ""} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r, w, _ := os.Pipe()
		go func() { io.Copy(w, f); w.Close(); f.Close() }()
		os.Stdin = r
		d, err := Open("-", pickle.Options{NewHash: sha256.New})
		r.Close()
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "pipe") {
				t.Errorf("%s: err = %v", name, err)
			}
			continue
		}
		if err != nil || d.Format != want {
			t.Errorf("%s: %v %v", name, d, err)
		}
	}
}

// TestNpyHeaderEscapes: a .npy header's strings are read as Python reads
// them (numpy's header is a literal): '\x01' is one byte, not "x01".
func TestNpyHeaderEscapes(t *testing.T) {
	for lit, want := range map[string]string{
		`'a\x01b'`: "a\x01b", `'\r\n\t'`: "\r\n\t", `'\\'`: `\`, `'\''`: `'`, `"\""`: `"`,
		`'\101'`: "A", `'\u00e9'`: "é", `'\U0001F600'`: "😀", `'\q'`: `\q`, `'\0'`: "\x00",
	} {
		p := &litParser{s: lit}
		v, err := p.value(0)
		if err != nil || v != want {
			t.Errorf("%s: %q, %v; want %q", lit, v, err, want)
		}
	}
}
