package write

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
)

// TorchFolder is the archive folder of a canonical torch.save zip (torch
// names it after the file being written, or "archive"; the canonical form
// leaves it out).
const TorchFolder = "archive"

// torchAlign is the alignment of each member's data, as torch.save aligns
// it (an extra field "FB" of padding in the local header).
const torchAlign = 64

// torchZip writes the canonical torch.save zip of doc: the members in the
// input's order (the canonical form counts parts in order), under the
// folder "archive"; data.pkl canonical; every other member (storages,
// version, byteorder, .data/...) copied; all stored, without time stamps,
// each member's data aligned to 64 bytes. The output is read back and must
// have the input's pk hash.
func torchZip(path string, doc *input.Doc, opt Options, copt canon.Options) ([]byte, error) {
	copt2 := copt
	copt = form1(copt)
	pk := doc.Parts[0]
	if pk.Pickle == nil || len(pk.Pickle.Streams) != 1 || pk.Pickle.Trailing != nil {
		return nil, &Error{File: path, Offset: -1, Reason: "a torch.save zip whose data.pkl is not one pickle: pk canon does not write it"}
	}
	arch, _, _ := strings.Cut(pk.Name, "/")
	var buf bytes.Buffer
	cw := &countWriter{w: &buf}
	zw := zip.NewWriter(cw)
	for i, p := range doc.Parts {
		name := p.Name
		if rest, ok := strings.CutPrefix(name, arch+"/"); ok {
			name = TorchFolder + "/" + rest
		}
		var data []byte
		switch {
		case p.Pickle != nil && i == 0:
			var out bytes.Buffer
			s := p.Pickle.Streams[0]
			if err := Stream(canon.Normalize(s, canon.DocOptions(doc, copt)), opt, &out); err != nil {
				var r *refusal
				if errors.As(err, &r) {
					return nil, &Error{File: path, Offset: r.off, Reason: "member " + p.Name + ": " + r.reason}
				}
				return nil, &Error{File: path, Offset: s.Offset, Reason: "member " + p.Name + ": " + err.Error()}
			}
			data = out.Bytes()
		case p.Raw != nil:
			rc, err := p.Raw.Open()
			if err != nil {
				return nil, &Error{File: path, Offset: -1, Reason: "member " + p.Name + ": " + err.Error()}
			}
			data, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, &Error{File: path, Offset: -1, Reason: "member " + p.Name + ": " + err.Error()}
			}
		default:
			return nil, &Error{File: path, Offset: -1, Reason: "member " + p.Name + ": a part pk canon cannot copy"}
		}
		if err := storeMember(zw, cw, name, data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	for _, c := range []canon.Options{copt, copt2} {
		if err := verifyDoc(path, doc, buf.Bytes(), c); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// form1 is copt for pk-canon/1: the torch.save writers work from the
// pk-canon/1 view, whose persistent ids and storage records they copy
// (docs/pk-canon.md, Containers); their output is checked against both
// forms.
func form1(copt canon.Options) canon.Options {
	copt.Form = canon.Form1
	return copt
}

// finishDoc compresses out as the input was and checks that the file has
// the pk hash of doc. When it does not and dict order was not kept, the
// refusal is orderReason: the layout of a container (joblib's arrays,
// legacy torch's storage numbers) follows the insertion order of a plain
// dict, which the canonical order does not keep.
func finishDoc(path string, doc *input.Doc, out []byte, copts []canon.Options, orderReason string) ([]byte, error) {
	data, err := compress(doc.Compression, out)
	if err != nil {
		return nil, err
	}
	for _, copt := range copts {
		if err := verifyDoc(path, doc, data, copt); err != nil {
			var we *Error
			if errors.As(err, &we) && we.differs && !copt.KeepDictOrder {
				we.Reason = orderReason
			}
			return nil, err
		}
	}
	return data, nil
}

// verifyDoc checks that out (a whole output file) has the pk hash of doc.
func verifyDoc(path string, doc *input.Doc, out []byte, copt canon.Options) error {
	if noVerify {
		return nil
	}
	want, err := canon.HashDoc(doc, copt)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "pk-canon-*.pt")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(out)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	od, err := input.Open(tmp.Name(), canon.ReadOptions(copt))
	if err != nil {
		return &Error{File: path, Offset: -1, Reason: fmt.Sprintf("pk cannot reproduce this file faithfully: the output does not read back (%v)", err)}
	}
	got, err := canon.HashDoc(od, copt)
	if err != nil {
		return err
	}
	if got.Digest != want.Digest {
		return &Error{File: path, Offset: -1, Reason: "pk cannot reproduce this file faithfully: the output's canonical form differs from the input's", differs: true}
	}
	return nil
}

// storeMember adds data to zw (whose bytes cw counts) as a stored member
// without time stamps, its data aligned to torchAlign by an FB padding extra
// field, as torch.save aligns it.
func storeMember(zw *zip.Writer, cw *countWriter, name string, data []byte) error {
	if err := zw.Flush(); err != nil {
		return err
	}
	// local header: 30 bytes, the name, then the extra field
	pad := int((torchAlign - (cw.n+30+int64(len(name))+4)%torchAlign) % torchAlign)
	extra := make([]byte, 4+pad)
	copy(extra, "FB")
	binary.LittleEndian.PutUint16(extra[2:], uint16(pad))
	fh := &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(data),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data)), Extra: extra}
	w, err := zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// torchLegacy writes the canonical legacy torch.save file of doc: its
// pickles canonical (the storage keys, memory addresses in the input,
// written as their ordinals 0, 1, ... as the canonical form numbers them),
// then each storage record (its 8-byte header and data copied) in ordinal
// order, which is the order of the key list. The output is read back and
// must have the input's pk hash.
func torchLegacy(path string, doc *input.Doc, opt Options, copt canon.Options) ([]byte, error) {
	copt2 := copt
	copt = form1(copt)
	pk := doc.Parts[0]
	if pk.Pickle == nil || pk.Pickle.Trailing != nil {
		return nil, &Error{File: path, Offset: -1, Reason: "a legacy torch file that is not its pickles then its storages: pk canon does not write it"}
	}
	dopt := canon.DocOptions(doc, copt)
	var out bytes.Buffer
	for _, s := range pk.Pickle.Streams {
		w, err := newStreamWriter(canon.Normalize(s, dopt), opt.proto())
		if err != nil {
			return nil, err
		}
		w.storage = true
		b, err := w.write(false, nil)
		if err != nil {
			var r *refusal
			if errors.As(err, &r) {
				return nil, &Error{File: path, Offset: r.off, Reason: r.reason}
			}
			return nil, &Error{File: path, Offset: s.Offset, Reason: err.Error()}
		}
		out.Write(b)
	}
	var whole []byte // the decompressed input, when its parts cannot be re-read in place
	read := func(off, n int64) ([]byte, error) {
		if whole == nil {
			r, _, finish, err := input.OpenBare(path, input.Options{})
			if err != nil {
				return nil, err
			}
			whole, err = io.ReadAll(r)
			if ferr := finish(); err == nil {
				err = ferr
			}
			if err != nil {
				return nil, err
			}
		}
		if off < 0 || off+n > int64(len(whole)) {
			return nil, errors.New("a storage record past the end of the input")
		}
		return whole[off : off+n], nil
	}
	for _, ref := range canon.Parts(doc, dopt) {
		if ref.Index < 0 || ref.Index == 0 {
			continue
		}
		p := doc.Parts[ref.Index]
		if p.Role != input.RoleStorage || p.Raw == nil || !strings.HasPrefix(ref.Name, "storage #") {
			return nil, &Error{File: path, Offset: -1, Reason: fmt.Sprintf("legacy torch part %q: pk canon does not write it", p.Name)}
		}
		rec, err := read(p.Raw.Offset-8, p.Raw.Len+8) // the record: its 8-byte element count, then the data
		if err != nil {
			return nil, &Error{File: path, Offset: p.Raw.Offset, Reason: "storage record: " + err.Error()}
		}
		out.Write(rec)
	}
	return finishDoc(path, doc, out.Bytes(), []canon.Options{copt, copt2}, "pk cannot write this legacy torch file canonically: its storages would be numbered in another order "+
		"(pk hash numbers them by first appearance in stream order, which follows dict insertion order; --keep-dict-order keeps it)")
}
