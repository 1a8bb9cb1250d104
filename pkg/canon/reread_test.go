package canon

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// utf8Of is the UTF-8 text whose code points are the bytes of b (what
// protocol 0-2 pickles as the str of _codecs.encode(s, 'latin1')).
func utf8Of(b string) string {
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		sb.WriteRune(rune(b[i]))
	}
	return sb.String()
}

// codecs appends _codecs.encode(s, 'latin1') of the bytes data.
func codecs(a *asm, data string) *asm {
	a.global("_codecs", "encode")
	s := utf8Of(data)
	a.op('X')
	binary.Write(a, binary.LittleEndian, uint32(len(s)))
	a.WriteString(s)
	return a.str("latin1").op(0x86, 'R')
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hashFileDigest(t *testing.T, p string, opt Options) string {
	t.Helper()
	r, err := HashFile(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r.Digest
}

// largeData is 2.4 MB with every byte value (two-byte UTF-8 at protocol 2).
func largeData() string {
	b := make([]byte, 300000*8)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return string(b)
}

// TestRereadLatin1Array: an array of 1 MiB or more at protocol 2 (its data
// a streamed str of _codecs.encode) hashes as at protocol 4 when the input
// is a plain file (the str is read again as latin-1).
func TestRereadLatin1Array(t *testing.T) {
	data := largeData()
	a := (&asm{}).proto(2)
	a.global("numpy.core.multiarray", "_reconstruct").global("numpy", "ndarray").op('K', 0, 0x85).bytes("b").op(0x87, 'R')
	a.mark().op('K', 1).op('J')
	binary.Write(a, binary.LittleEndian, int32(300000))
	a.op(0x85)
	dtypeF8(a).op(0x89)
	codecs(a, data).op('t', 'b')
	p2 := writeTemp(t, "p2.pkl", a.stop())
	p4 := writeTemp(t, "p4.pkl", reconstructPickle(300000, data))
	v2 := Options{Form: Form2, NoPaths: true}
	if d2, d4 := hashFileDigest(t, p2, v2), hashFileDigest(t, p4, v2); d2 != d4 {
		t.Errorf("protocol 2 %s, protocol 4 %s", d2, d4)
	}
	if hashFileDigest(t, p2, Options{NoPaths: true}) == hashFileDigest(t, p4, Options{NoPaths: true}) {
		t.Error("pk-canon/1 changed")
	}
	if !utf8.ValidString(utf8Of(data)) {
		t.Fatal("bad test data")
	}
}

// nestedTorch is a legacy torch.save file of one FloatStorage of the
// float32 elements in data, its key the "address" key.
func nestedTorch(key, data string) string {
	var b strings.Builder
	b.WriteString("\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")
	b.WriteString("\x80\x02M\xe9\x03.")
	b.WriteString("\x80\x02}q\x00(X\x10\x00\x00\x00protocol_versionq\x01M\xe9\x03X\r\x00\x00\x00little_endianq\x02\x88X\n\x00\x00\x00type_sizesq\x03}q\x04(X\x05\x00\x00\x00shortq\x05K\x02X\x03\x00\x00\x00intq\x06K\x04X\x04\x00\x00\x00longq\x07K\x04uu.")
	k := (&asm{}).str(key)
	numel := len(data) / 4
	n := (&asm{}).op('J')
	binary.Write(n, binary.LittleEndian, int32(numel))
	b.WriteString("\x80\x02(X\x07\x00\x00\x00storageq\x00ctorch\nFloatStorage\nq\x01" + k.String() + "X\x03\x00\x00\x00cpuq\x03" + n.String() + "Ntq\x04Q.")
	b.WriteString("\x80\x02]q\x00" + k.String() + "a.")
	var c [8]byte
	binary.LittleEndian.PutUint64(c[:], uint64(numel))
	b.Write(c[:])
	b.WriteString(data)
	return b.String()
}

// tensorPickle is pickle.dump of one float32 tensor of shape (numel,)
// whose storage is the nested torch.save bytes; at protocol 2 the bytes
// are _codecs.encode of their latin-1 str.
func tensorPickle(proto byte, nested string, numel int32) []byte {
	a := (&asm{}).proto(proto)
	a.global("torch._utils", "_rebuild_tensor_v2")
	a.mark()
	a.global("torch.storage", "_load_from_bytes")
	if proto >= 3 {
		bytes8(a, 0x8e, nested)
	} else {
		codecs(a, nested)
	}
	a.op(0x85, 'R')
	a.op('K', 0).op('J')
	binary.Write(a, binary.LittleEndian, numel)
	a.op(0x85).op('K', 1).op(0x85).op(0x89)
	a.global("collections", "OrderedDict").op(')', 'R')
	a.op('t', 'R')
	return a.stop()
}

// TestRereadTorchStorage: pickle.dump of a tensor of 1 MiB or more (its
// storage a streamed blob of nested torch.save bytes whose key is a memory
// address) hashes alike in two processes (other keys) and at protocols 2
// and 4, from plain files; a changed element still changes the digest.
func TestRereadTorchStorage(t *testing.T) {
	data := largeData()
	numel := int32(len(data) / 4)
	a := writeTemp(t, "a.pkl", tensorPickle(4, nestedTorch("769458464", data), numel))
	b := writeTemp(t, "b.pkl", tensorPickle(4, nestedTorch("140230118", data), numel))
	c := writeTemp(t, "c.pkl", tensorPickle(2, nestedTorch("555", data), numel))
	changed := []byte(data)
	changed[12345] ^= 1
	d := writeTemp(t, "d.pkl", tensorPickle(4, nestedTorch("769458464", string(changed)), numel))
	v2 := Options{Form: Form2, NoPaths: true}
	da := hashFileDigest(t, a, v2)
	if db, dc := hashFileDigest(t, b, v2), hashFileDigest(t, c, v2); da != db || da != dc {
		t.Errorf("other key %s, protocol 2 %s, want %s", db, dc, da)
	}
	if hashFileDigest(t, d, v2) == da {
		t.Error("a changed element hashes alike")
	}
	if hashFileDigest(t, a, Options{NoPaths: true}) == hashFileDigest(t, b, Options{NoPaths: true}) {
		t.Error("pk-canon/1 changed: two keys hash alike")
	}
	// the small form, in memory, agrees with the files
	small := data[:4096]
	s1 := writeTemp(t, "s1.pkl", tensorPickle(4, nestedTorch("1", small), 1024))
	s2 := writeTemp(t, "s2.pkl", tensorPickle(2, nestedTorch("2", small), 1024))
	if hashFileDigest(t, s1, v2) != hashFileDigest(t, s2, v2) {
		t.Error("small tensor: protocol 2 and 4 differ")
	}
}
