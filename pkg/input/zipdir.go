package input

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
)

// zipEntry is one central-directory record, read the way torch's zip reader
// (miniz) reads it: offsets are absolute (no adjustment for data before the
// archive), names come from the central directory.
type zipEntry struct {
	name      string
	flags     uint16
	method    uint16
	crc       uint32
	csize     uint64
	usize     uint64
	localOff  uint64
	centralAt int64
	dataOff   int64 // filled by localHeader
	localName string
}

const (
	maxZipComment = 65535
	eocdLen       = 22
)

// readZipDir reads the central directory of the archive held by ra. It also
// opens the archive with Go's archive/zip and refuses when the two readings
// disagree on the members or where their data starts.
func readZipDir(ra io.ReaderAt, size int64, path string) ([]zipEntry, error) {
	zerr := func(off int64, format string, args ...any) error {
		return &Error{File: path, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	tail := int64(maxZipComment + eocdLen)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := ra.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return nil, zerr(size-tail, "read error: %v", err)
	}
	eocd := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if string(buf[i:i+4]) == "PK\x05\x06" {
			if i+eocdLen+int(binary.LittleEndian.Uint16(buf[i+20:])) <= len(buf) {
				eocd = i
				break
			}
		}
	}
	if eocd < 0 {
		return nil, zerr(size, "zip archive without an end-of-central-directory record: truncated or not a zip (torch.load fails too: \"failed finding central directory\")")
	}
	eocdAt := size - tail + int64(eocd)
	e := buf[eocd:]
	count := uint64(binary.LittleEndian.Uint16(e[10:]))
	cdSize := uint64(binary.LittleEndian.Uint32(e[12:]))
	cdOff := uint64(binary.LittleEndian.Uint32(e[16:]))
	if count == 0xffff || cdSize == 0xffffffff || cdOff == 0xffffffff {
		// zip64: the locator sits right before the end record
		if eocdAt < 20 {
			return nil, zerr(eocdAt, "zip64 archive without its locator")
		}
		var loc [20]byte
		if _, err := ra.ReadAt(loc[:], eocdAt-20); err != nil || string(loc[:4]) != "PK\x06\x07" {
			return nil, zerr(eocdAt-20, "zip64 archive without its locator")
		}
		off := binary.LittleEndian.Uint64(loc[8:])
		var z [56]byte
		if off > uint64(size) || uint64(size)-off < 56 {
			return nil, zerr(eocdAt-20, "zip64 end record offset %d outside the file", off)
		}
		if _, err := ra.ReadAt(z[:], int64(off)); err != nil || string(z[:4]) != "PK\x06\x06" {
			return nil, zerr(int64(off), "no zip64 end record at offset %d", off)
		}
		count = binary.LittleEndian.Uint64(z[32:])
		cdSize = binary.LittleEndian.Uint64(z[40:])
		cdOff = binary.LittleEndian.Uint64(z[48:])
	}
	if cdOff > uint64(size) || cdSize > uint64(size)-cdOff {
		return nil, zerr(eocdAt, "central directory (offset %d, %d bytes) lies outside the %d-byte file: truncated, or data before the archive", cdOff, cdSize, size)
	}
	if count > cdSize/46 {
		return nil, zerr(eocdAt, "%d entries cannot fit a %d-byte central directory", count, cdSize)
	}
	cd := make([]byte, cdSize)
	if _, err := ra.ReadAt(cd, int64(cdOff)); err != nil {
		return nil, zerr(int64(cdOff), "read error: %v", err)
	}
	var ents []zipEntry
	p := 0
	for i := uint64(0); i < count; i++ {
		at := int64(cdOff) + int64(p)
		if len(cd)-p < 46 || string(cd[p:p+4]) != "PK\x01\x02" {
			return nil, zerr(at, "central directory entry %d: bad signature (truncated, or data before the archive shifts its offsets)", i)
		}
		h := cd[p:]
		en := zipEntry{
			flags:     binary.LittleEndian.Uint16(h[8:]),
			method:    binary.LittleEndian.Uint16(h[10:]),
			crc:       binary.LittleEndian.Uint32(h[16:]),
			csize:     uint64(binary.LittleEndian.Uint32(h[20:])),
			usize:     uint64(binary.LittleEndian.Uint32(h[24:])),
			localOff:  uint64(binary.LittleEndian.Uint32(h[42:])),
			centralAt: at,
		}
		nl := int(binary.LittleEndian.Uint16(h[28:]))
		xl := int(binary.LittleEndian.Uint16(h[30:]))
		cl := int(binary.LittleEndian.Uint16(h[32:]))
		if len(h) < 46+nl+xl+cl {
			return nil, zerr(at, "central directory entry %d runs past the directory", i)
		}
		en.name = string(h[46 : 46+nl])
		extra := h[46+nl : 46+nl+xl]
		for len(extra) >= 4 {
			id := binary.LittleEndian.Uint16(extra)
			sz := int(binary.LittleEndian.Uint16(extra[2:]))
			if sz > len(extra)-4 {
				break
			}
			if id == 0x0001 {
				f := extra[4 : 4+sz]
				next := func() (uint64, bool) {
					if len(f) < 8 {
						return 0, false
					}
					v := binary.LittleEndian.Uint64(f)
					f = f[8:]
					return v, true
				}
				if en.usize == 0xffffffff {
					if v, ok := next(); ok {
						en.usize = v
					}
				}
				if en.csize == 0xffffffff {
					if v, ok := next(); ok {
						en.csize = v
					}
				}
				if en.localOff == 0xffffffff {
					if v, ok := next(); ok {
						en.localOff = v
					}
				}
			}
			extra = extra[4+sz:]
		}
		ents = append(ents, en)
		p += 46 + nl + xl + cl
	}
	for i := range ents {
		if err := localHeader(ra, size, &ents[i], path); err != nil {
			return nil, err
		}
	}
	// Second opinion: Go's archive/zip.
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, zerr(-1, "Go's archive/zip refuses the archive (%v) while torch's reader would read it: pk refuses", err)
	}
	if len(zr.File) != len(ents) {
		return nil, zerr(-1, "zip readers disagree: %d members in the central directory, archive/zip sees %d", len(ents), len(zr.File))
	}
	for i, f := range zr.File {
		if f.Name != ents[i].name {
			return nil, zerr(ents[i].centralAt, "zip readers disagree on member %d: %q vs %q", i, ents[i].name, f.Name)
		}
		if off, err := f.DataOffset(); err != nil || off != ents[i].dataOff {
			return nil, zerr(ents[i].centralAt, "zip readers disagree on where member %q starts (%d vs %d): data before the archive?", f.Name, ents[i].dataOff, off)
		}
	}
	return ents, nil
}

// localHeader reads the local header of en and sets where its data starts.
func localHeader(ra io.ReaderAt, size int64, en *zipEntry, path string) error {
	var h [30]byte
	if en.localOff > uint64(size) || uint64(size)-en.localOff < 30 {
		return &Error{File: path, Member: "member " + en.name, Offset: int64(min(en.localOff, uint64(size))), Reason: "local header lies outside the file: truncated archive"}
	}
	off := int64(en.localOff)
	if _, err := ra.ReadAt(h[:], off); err != nil || string(h[:4]) != "PK\x03\x04" {
		return &Error{File: path, Member: "member " + en.name, Offset: off, Reason: "no local header signature where the central directory points"}
	}
	nl := int64(binary.LittleEndian.Uint16(h[26:]))
	xl := int64(binary.LittleEndian.Uint16(h[28:]))
	if off+30+nl > size {
		return &Error{File: path, Member: "member " + en.name, Offset: off, Reason: "local header runs past the end of the file"}
	}
	name := make([]byte, nl)
	ra.ReadAt(name, off+30)
	en.localName = string(name)
	en.dataOff = off + 30 + nl + xl
	if uint64(en.dataOff) > uint64(size) || en.csize > uint64(size-en.dataOff) {
		return &Error{File: path, Member: "member " + en.name, Offset: en.dataOff, Reason: fmt.Sprintf("%d bytes of data declared, %d left in the file: truncated archive", en.csize, size-min(en.dataOff, size))}
	}
	return nil
}
