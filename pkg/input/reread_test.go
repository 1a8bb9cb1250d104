package input

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/testfile"
	"github.com/pk-tools/pk/pkg/pickle"
)

// threeBlobs is a protocol 4 pickle of a list of three bytes objects of
// 1.5 MB each (streamed blobs), and their contents.
func threeBlobs() ([]byte, [][]byte) {
	var b bytes.Buffer
	b.WriteString("\x80\x04]q\x00(")
	var payloads [][]byte
	for k := 0; k < 3; k++ {
		p := make([]byte, 1500000)
		for i := range p {
			p[i] = byte(i*7 + k)
		}
		payloads = append(payloads, p)
		b.WriteByte('B')
		binary.Write(&b, binary.LittleEndian, uint32(len(p)))
		b.Write(p)
	}
	b.WriteString("e.")
	return b.Bytes(), payloads
}

// TestRereader: the payloads of a part read again, in every compression
// and plain: sections at increasing offsets continue one decompression,
// one before the last read starts it again, a section past the part fails.
func TestRereader(t *testing.T) {
	raw, payloads := threeBlobs()
	tmp := t.TempDir()
	for _, kind := range append([]string{""}, testfile.Compressions...) {
		data := raw
		if kind != "" {
			data = testfile.Compress(t, kind, raw)
		}
		p := filepath.Join(tmp, "f"+kind)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := Open(p, pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		s := doc.Parts[0].Pickle.Streams[0].Store()
		var blobs []*pickle.Blob
		for n := pickle.ID(0); n < pickle.ID(s.Len()); n++ {
			if bl := s.Blob(n); bl != nil {
				blobs = append(blobs, bl)
			}
		}
		if len(blobs) != 3 {
			t.Fatalf("%s: %d blobs", kind, len(blobs))
		}
		r := doc.Rereader(0)
		read := func(i int) {
			t.Helper()
			rc, err := r.Section(blobs[i].Offset, blobs[i].Len)
			if err != nil {
				t.Fatalf("%s: blob %d: %v", kind, i, err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, payloads[i]) {
				t.Fatalf("%s: blob %d: %d bytes, %v", kind, i, len(got), err)
			}
		}
		read(0)
		read(1)
		read(2)
		if kind != "" && r.reopen != 1 {
			t.Errorf("%s: decompressed %d times for three sections in order", kind, r.reopen)
		}
		read(1)
		if kind != "" && r.reopen != 2 {
			t.Errorf("%s: decompressed %d times after going back", kind, r.reopen)
		}
		// two sections open at once: the second gets a stream of its own
		a, err := r.Section(blobs[0].Offset, blobs[0].Len)
		if err != nil {
			t.Fatal(err)
		}
		read(2)
		got, _ := io.ReadAll(a)
		a.Close()
		if !bytes.Equal(got, payloads[0]) {
			t.Errorf("%s: interleaved section: %d bytes", kind, len(got))
		}
		if _, err := r.Section(blobs[2].Offset, blobs[2].Len+3); err == nil {
			t.Errorf("%s: a section past the part", kind)
		}
		r.Close()
		read(0) // reopened after Close
		r.Close()
	}
}

// TestRereaderTruncated: a compressed file truncated since it was read
// fails to read again (io.ErrUnexpectedEOF or the decompressor's error),
// never gives fewer bytes without an error.
func TestRereaderTruncated(t *testing.T) {
	raw, _ := threeBlobs()
	tmp := t.TempDir()
	for _, kind := range append([]string{""}, testfile.Compressions...) {
		data := raw
		if kind != "" {
			data = testfile.Compress(t, kind, raw)
		}
		p := filepath.Join(tmp, "f"+kind)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := Open(p, pickle.Options{})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		off := int64(len(raw)) - 1500000 - 2 // the last payload
		r := doc.Rereader(0)
		rc, err := r.Section(off, 1500000)
		if err == nil {
			var n int64
			n, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err == nil {
				t.Errorf("%s: %d bytes read again from a truncated file, no error", kind, n)
			}
		}
		if kind == "" && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("plain: %v", err)
		}
		r.Close()
	}
	if (&Doc{Path: "-"}).Rereader(0) != nil {
		t.Error("a Rereader of standard input")
	}
}
