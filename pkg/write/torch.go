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
		if err := zw.Flush(); err != nil {
			return nil, err
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
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := verifyDoc(path, doc, buf.Bytes(), copt); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
		return &Error{File: path, Offset: -1, Reason: "pk cannot reproduce this file faithfully: the output's canonical form differs from the input's"}
	}
	return nil
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
