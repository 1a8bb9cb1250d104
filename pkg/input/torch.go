package input

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/big"
	"math/bits"
	"os"
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// torchMagic is the first pickle of a legacy torch.save file.
var torchMagic, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

// StorageRef is what a torch persistent id ('storage', storage_type, key,
// location, numel) says, with the part holding the bytes.
type StorageRef struct {
	Key      string
	Type     string // "torch.FloatStorage"
	DType    string // "float32"; "" when the storage type is unknown
	ElemSize int64  // 0 when unknown
	Location string // "cpu", "cuda:0", ...
	Numel    int64
	Part     *Part // nil when the input has no storage with this key
	// FromBytes: the storage is torch.storage._load_from_bytes' nested
	// torch.save file (FromBytesAt); its elements are read through Open
	FromBytes bool

	open    func() (io.ReadCloser, error)
	dataOff int64 // of the elements in the nested file
}

// TensorRef describes a tensor rebuilt by torch._utils._rebuild_tensor_v2
// (or _rebuild_tensor) from a storage.
type TensorRef struct {
	Storage *StorageRef
	Offset  int64 // storage offset, in elements
	Shape   []int64
	Stride  []int64
}

// pids returns every torch storage persistent id of f, in stream order.
func pids(f *pickle.File) []*StorageRef {
	var out []*StorageRef
	for _, st := range f.Streams {
		s := st.Store()
		for _, ev := range s.Events() {
			if ev.Kind == pickle.EvPersID {
				if r, ok := parsePIDAt(s, ev.Node); ok {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// openTorchZip reads a torch.save zip archive as torch's own reader does.
func openTorchZip(doc *Doc, ra *readerAtSize, opt pickle.Options, iopt Options) (*Doc, error) {
	doc.Format = "torch-zip"
	path := doc.Path
	ents, err := readZipDir(ra.r, ra.size, path)
	if err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, &Error{File: path, Offset: -1, Reason: "zip archive without members (torch: \"archive does not contain any files\")"}
	}
	seen := map[string]int{}
	for i, e := range ents {
		if j, dup := seen[e.name]; dup {
			return nil, &Error{File: path, Member: "member " + e.name, Offset: e.centralAt, Reason: fmt.Sprintf(
				"duplicate member name (entries %d and %d): which one a reader takes depends on the zip library (torch's takes one, Python's zipfile the last); pk refuses", j, i)}
		}
		seen[e.name] = i
		if e.flags&(1|1<<6|1<<5) != 0 {
			return nil, &Error{File: path, Member: "member " + e.name, Offset: e.centralAt, Reason: fmt.Sprintf(
				"general-purpose flags 0x%04x mark the member encrypted or patched: torch.load refuses it (\"unsupported encryption\"), so does pk", e.flags)}
		}
		if e.method == 8 {
			doc.deflated = true
		}
		if e.method != 0 && e.method != 8 {
			return nil, &Error{File: path, Member: "member " + e.name, Offset: e.centralAt, Reason: fmt.Sprintf("compression method %d: torch's zip reader knows only stored (0) and deflate (8)", e.method)}
		}
		if e.method == 0 && e.csize != e.usize {
			return nil, &Error{File: path, Member: "member " + e.name, Offset: e.centralAt, Reason: fmt.Sprintf("stored member with compressed size %d != size %d", e.csize, e.usize)}
		}
		if e.localName != e.name {
			doc.Notes = append(doc.Notes, fmt.Sprintf("member %q: its local header names it %q; read by its central-directory name, as torch does", e.name, e.localName))
		}
	}
	first := ents[0].name
	slash := strings.IndexByte(first, '/')
	if slash < 0 {
		return nil, &Error{File: path, Member: "member " + first, Offset: ents[0].centralAt, Reason: "the first member is not in a folder: torch.load refuses (\"file in archive is not in a subdirectory\")"}
	}
	arch := first[:slash+1]
	if _, ok := seen[arch+"data.pkl"]; !ok {
		return nil, &Error{File: path, Offset: -1, Reason: fmt.Sprintf("no %sdata.pkl: not a torch.save archive (torch.jit archives hold code, pk reads only torch.save)", arch)}
	}
	_, v1 := seen[arch+"version"]
	_, v2 := seen[arch+".data/version"]
	if !v1 && !v2 {
		return nil, &Error{File: path, Offset: -1, Reason: fmt.Sprintf("no %sversion record: torch.load refuses the archive", arch)}
	}
	zr := &zipReading{ra: ra, doc: doc, budget: iopt.limit(ra.size), allowBadCRC: iopt.AllowBadCRC, newHash: opt.NewHash}
	// data.pkl first
	pk := ents[seen[arch+"data.pkl"]]
	f, err := zr.pickle(pk, opt)
	if err != nil {
		return nil, err
	}
	doc.Parts = append(doc.Parts, Part{Name: pk.name, Role: RolePickle, Pickle: f, Of: -1,
		src: &partSource{path: ra.path, off: pk.dataOff, n: int64(pk.csize), method: pk.method, limit: -1}})
	dtypes := map[string]*StorageRef{}
	for _, r := range pids(f) {
		if _, ok := dtypes[r.Key]; !ok {
			dtypes[r.Key] = r
		}
		if _, ok := seen[arch+"data/"+r.Key]; !ok {
			return nil, &Error{File: path, Member: "member " + pk.name, Offset: -1, Reason: fmt.Sprintf("a persistent id refers to storage %q but the archive has no member %sdata/%s: torch.load fails", r.Key, arch, r.Key)}
		}
	}
	for _, e := range ents {
		if e.name == pk.name {
			continue
		}
		p := Part{Name: e.name, Role: RoleExtra, Of: -1}
		switch {
		case strings.HasPrefix(e.name, arch+"data/"):
			p.Role, p.Key, p.Of = RoleStorage, strings.TrimPrefix(e.name, arch+"data/"), 0
		case e.name == arch+"version" || e.name == arch+".data/version" || e.name == arch+"byteorder":
			p.Role = RoleMeta
		case strings.HasPrefix(e.name, arch+".data/"):
			p.Role = RoleExtra // serialization_id and other bookkeeping torch.load does not need
		}
		raw, err := zr.raw(e)
		if err != nil {
			return nil, err
		}
		if r := dtypes[p.Key]; p.Role == RoleStorage && r != nil {
			raw.DType = r.DType
			if r.ElemSize > 0 {
				raw.Shape = []int64{raw.Len / r.ElemSize}
			}
		}
		p.Raw = raw
		doc.Parts = append(doc.Parts, p)
	}
	return doc, nil
}

// zipReading streams members, checking CRCs, sizes and the decompression
// budget shared by all deflated members.
type zipReading struct {
	ra          *readerAtSize
	doc         *Doc
	budget      int64 // < 0: none
	allowBadCRC bool
	newHash     func() hash.Hash
}

// member returns a reader of e's uncompressed bytes and a check to run at
// its end (sizes, CRC).
func (z *zipReading) member(e zipEntry) (io.Reader, func() error, error) {
	path := z.doc.Path
	where := "member " + e.name
	sec := io.NewSectionReader(z.ra.r, e.dataOff, int64(e.csize))
	var r io.Reader = sec
	var lim *limitReader
	if e.method == 8 {
		if z.budget >= 0 && e.usize > uint64(z.budget) {
			return nil, nil, &Error{File: path, Member: where, Offset: e.dataOff, Reason: fmt.Sprintf(
				"declares %d bytes uncompressed, over the decompression limit (%d bytes left of it): stopped as a zip bomb (raise the limit with PK_MAX_DECOMPRESSED=<bytes>, -1 for none)", e.usize, z.budget)}
		}
		lim = &limitReader{r: flate.NewReader(bufio.NewReaderSize(sec, 64<<10)), limit: z.budget, file: path, layer: where}
		r = lim
	}
	crc := crc32.NewIEEE()
	cnt := &countWriter{}
	tr := io.TeeReader(r, io.MultiWriter(crc, cnt))
	check := func() error {
		if err := lim.failure(); err != nil {
			return err
		}
		if lim != nil && z.budget >= 0 {
			z.budget -= cnt.n
		}
		// the reader must have reached the end: read what is left
		if n, err := io.Copy(io.Discard, tr); err != nil {
			if le := lim.failure(); le != nil {
				return le
			}
			return &Error{File: path, Member: where, Offset: e.dataOff, Reason: err.Error()}
		} else if n > 0 && lim != nil && z.budget >= 0 {
			z.budget -= n
		}
		if uint64(cnt.n) != e.usize {
			return &Error{File: path, Member: where, Offset: e.dataOff, Reason: fmt.Sprintf("holds %d bytes, the central directory says %d: torch's reader refuses (unexpected decompressed size)", cnt.n, e.usize)}
		}
		if crc.Sum32() != e.crc {
			msg := fmt.Sprintf("CRC-32 mismatch (computed %08x, recorded %08x): torch.load ignores zip CRCs and would load these bytes", crc.Sum32(), e.crc)
			if !z.allowBadCRC {
				return &Error{File: path, Member: where, Offset: e.dataOff, Reason: msg + "; pk refuses (the member is corrupt or was edited)"}
			}
			z.doc.Notes = append(z.doc.Notes, where+": "+msg)
		}
		return nil
	}
	return tr, check, nil
}

func (z *zipReading) pickle(e zipEntry, opt pickle.Options) (*pickle.File, error) {
	r, check, err := z.member(e)
	if err != nil {
		return nil, err
	}
	f, err := pickle.Parse(r, int64(e.usize), z.doc.Path, opt)
	if err != nil {
		if pe, ok := pickle.AsError(err); ok {
			if cerr := check(); cerr != nil {
				if _, isIn := cerr.(*Error); isIn && strings.Contains(cerr.Error(), "zip bomb") {
					return nil, cerr
				}
			}
			c := *pe
			c.File = z.doc.Path
			c.Reason += fmt.Sprintf(" (offset %d is in member %s)", c.Offset, e.name)
			return nil, &c
		}
		return nil, err
	}
	if err := check(); err != nil {
		return nil, err
	}
	return f, nil
}

func (z *zipReading) raw(e zipEntry) (*Raw, error) {
	r, check, err := z.member(e)
	if err != nil {
		return nil, err
	}
	w := &rawWriter{}
	if z.newHash != nil {
		w.h = z.newHash()
	}
	buf := make([]byte, 256<<10)
	n, err := io.CopyBuffer(w, r, buf)
	if err != nil {
		if le := check(); le != nil {
			return nil, le
		}
		return nil, &Error{File: z.doc.Path, Member: "member " + e.name, Offset: e.dataOff, Reason: err.Error()}
	}
	if err := check(); err != nil {
		return nil, err
	}
	raw := &Raw{Len: n, Prefix: w.prefix, Offset: e.dataOff, Where: ""}
	if w.h != nil {
		raw.Digest = w.h.Sum(nil)
	}
	path, off, cs, method := z.ra.path, e.dataOff, int64(e.csize), e.method
	raw.open = func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		var r io.Reader = io.NewSectionReader(f, off, cs)
		if method == 8 {
			r = flate.NewReader(r)
		}
		return struct {
			io.Reader
			io.Closer
		}{r, f}, nil
	}
	return raw, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// sectionOpener re-reads n bytes at off of the file at path.
func sectionOpener(ra io.ReaderAt, off, n int64) func() (io.ReadCloser, error) {
	if ras, ok := ra.(*os.File); ok {
		path := ras.Name()
		return func() (io.ReadCloser, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			return struct {
				io.Reader
				io.Closer
			}{io.NewSectionReader(f, off, n), f}, nil
		}
	}
	return nil
}

// isTorchLegacy reports whether br starts with torch's legacy magic pickle.
func isTorchLegacy(br *bufio.Reader) bool {
	head, _ := br.Peek(64)
	f, err := pickle.Parse(bytes.NewReader(head), int64(len(head)), "", pickle.Options{MaxStreams: 1, NoGraph: true})
	if err != nil || len(f.Streams) != 1 {
		return false
	}
	return TorchLegacyMagic(f.Streams[0].Store())
}

// readTorchLegacy reads torch's legacy format: five pickles (magic number,
// protocol version, sys info, the object, the sorted storage keys), then for
// each key an 8-byte little-endian element count and the storage's bytes.
func readTorchLegacy(doc *Doc, br *bufio.Reader, size int64, where string, opt pickle.Options, lim *limitReader, ra *readerAtSize) error {
	doc.Format = withLayer(doc, "torch-legacy")
	rd := pickle.NewReader(br, size, doc.Path)
	rd.BlobThreshold = opt.BlobThreshold
	rd.NewHash = opt.NewHash
	o := opt
	o.MaxStreams = 5
	f, err := pickle.ParseReader(rd, o)
	if err != nil {
		return located(doc.Path, where, lim, err)
	}
	if err := lim.failure(); err != nil {
		return err
	}
	fail := func(off int64, format string, args ...any) error {
		m := ""
		if where != "" {
			m = where
		}
		return &Error{File: doc.Path, Member: m, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	if len(f.Streams) != 5 || f.Trailing != nil {
		return fail(rd.Offset(), "legacy torch file with %d complete pickles where torch.load needs 5 (magic, protocol, sys info, data, storage keys)", len(f.Streams))
	}
	if s := f.Streams[1].Store(); s.Kind(s.Root) != pickle.KindInt || s.Int(s.Root) != 1001 {
		return fail(f.Streams[1].Offset, "legacy torch protocol version is not 1001: torch.load refuses")
	}
	ks := f.Streams[4].Store()
	if ks.Kind(ks.Root) != pickle.KindList {
		return fail(f.Streams[4].Offset, "legacy torch storage keys are a %s, not a list", ks.Kind(ks.Root))
	}
	refs := map[string]*StorageRef{}
	for _, r := range pids(&pickle.File{Streams: f.Streams[3:4]}) {
		if _, ok := refs[r.Key]; !ok {
			refs[r.Key] = r
		}
	}
	doc.Parts = append(doc.Parts, Part{Name: "", Role: RolePickle, Pickle: f, Of: -1})
	for _, kid := range ks.Items(ks.Root) {
		if ks.Kind(kid) != pickle.KindStr {
			return fail(f.Streams[4].Offset, "a legacy torch storage key is a %s, not a str", ks.Kind(kid))
		}
		key := ks.Str(kid)
		r := refs[key]
		if r == nil {
			return fail(rd.Offset(), "storage key %q is not referenced by the data pickle: its element size is unknown (torch.load fails too)", key)
		}
		if r.ElemSize == 0 {
			return fail(rd.Offset(), "storage %q has an unknown storage type %q: cannot size its record", key, r.Type)
		}
		at := rd.Offset()
		head := rd.Peek(8)
		if len(head) < 8 {
			return fail(at, "storage %q: the input ends before its element count (truncated)", key)
		}
		rd.Discard(8)
		numel := int64(binary.LittleEndian.Uint64(head))
		hi, lo := bits.Mul64(uint64(numel), uint64(r.ElemSize))
		if numel < 0 || hi != 0 || lo > math.MaxInt64 {
			return fail(at, "storage %q: element count %d overflows", key, numel)
		}
		n := int64(lo)
		if numel != r.Numel {
			return fail(at, "storage %q: the record holds %d elements, the persistent id says %d: torch.load refuses (wrong byte size)", key, numel, r.Numel)
		}
		if size >= 0 && n > size-rd.Offset() {
			return fail(at, "storage %q of %d bytes exceeds the %d bytes left (truncated)", key, n, size-rd.Offset())
		}
		raw := &Raw{Offset: rd.Offset(), Where: where, DType: r.DType, Shape: []int64{numel}}
		if err := readRaw(rd, n, raw, opt.NewHash); err != nil {
			if le := lim.failure(); le != nil {
				return le
			}
			return fail(raw.Offset, "storage %q of %d bytes: %v", key, n, err)
		}
		if ra != nil && ra.r != nil && where == "" {
			raw.open = sectionOpener(ra.r, raw.Offset, raw.Len)
		}
		doc.Parts = append(doc.Parts, Part{Name: "storage " + key, Role: RoleStorage, Key: key, Raw: raw, Of: 0})
	}
	if !rd.AtEOF() {
		t := &pickle.Trailing{Offset: rd.Offset(), Reason: "bytes after the last storage record (torch.load ignores them)"}
		raw := &Raw{}
		readRaw(rd, math.MaxInt64, raw, opt.NewHash)
		t.Len, t.Prefix, t.Digest = raw.Len, raw.Prefix, raw.Digest
		f.Trailing = t
	}
	if err := lim.failure(); err != nil {
		return err
	}
	return nil
}
