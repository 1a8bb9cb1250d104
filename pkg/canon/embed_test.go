package canon

import (
	"bytes"
	"testing"
)

// TestPlainEmbedding: the plain forms are taken whole and read back item
// by item; anything else, trailing bytes, operations or nesting past the
// bound are not plain.
func TestPlainEmbedding(t *testing.T) {
	// [None, True, 1.5, -258, 'ab', {b'k': []}]
	enc := []byte("Nl\x06\x00n" + "b\x01" + "f\x3f\xf8\x00\x00\x00\x00\x00\x00" + "i-\x02\x01\x02" + "s\x02ab" + "Nd\x01\x00y\x01kNl\x00\x00")
	if !PlainEmbedding(enc, 2) {
		t.Fatal("a plain list is not plain")
	}
	if PlainEmbedding(enc, 1) {
		t.Error("nested 2 levels, taken with a bound of 1")
	}
	for name, b := range map[string][]byte{
		"trailing":  append(append([]byte{}, enc...), 'n'),
		"truncated": enc[:len(enc)-1],
		"operation": []byte("Nl\x00\x01"),
		"tuple":     []byte("T\x00"),
		"long str":  append([]byte("s\x41"), bytes.Repeat([]byte{'a'}, 65)...),
	} {
		if PlainEmbedding(b, 8) {
			t.Errorf("%s: taken as plain", name)
		}
	}
	var d EmbReader
	d.Reset(bytes.NewReader(enc))
	var got []Emb
	for range 8 {
		e, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		e.Text = string([]byte(e.Text)) // (valid until the next call)
		got = append(got, e)
	}
	want := []Emb{{Tag: 'l', Count: 6}, {Tag: 'n'}, {Tag: 'b', Bool: true}, {Tag: 'f', Float: [8]byte{0x3f, 0xf8}},
		{Tag: 'i', Neg: true, Text: "\x01\x02"}, {Tag: 's', Text: "ab"}, {Tag: 'd', Count: 1}, {Tag: 'y', Text: "k"}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("embedding %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if e, err := d.Next(); err != nil || e.Tag != 'l' || e.Count != 0 {
		t.Errorf("the last: %+v %v", e, err)
	}
	if _, err := d.Next(); err != ErrNotPlain {
		t.Errorf("past the end: %v", err)
	}
}
