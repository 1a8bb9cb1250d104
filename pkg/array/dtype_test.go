package array

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	f32 := make([]byte, 4)
	binary.LittleEndian.PutUint32(f32, math.Float32bits(0.1))
	for _, c := range []struct {
		dt   string
		b    []byte
		want string
	}{
		{"<f4", f32, "0.1"},
		{"float32", f32, "0.1"},
		{"<f2", []byte{0x66, 0x2e}, "0.1"},      // float16 0.0999755859375
		{"bfloat16", []byte{0xcd, 0x3d}, "0.1"}, // 0.10009765625
		{"|b1", []byte{1}, "True"},
		{"bool", []byte{0}, "False"},
		{">i2", []byte{0xff, 0xfe}, "-2"},
		{"<c8", append(append([]byte{}, f32...), 0, 0, 0x80, 0x3f), "(0.1+1j)"},
		{"<f8", []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, "1.5"},
	} {
		d, ok := ParseDType(c.dt)
		if !ok || d.Size != len(c.b) {
			t.Fatalf("%s: %v %d", c.dt, ok, d.Size)
		}
		if got := d.Format(c.b); got != c.want {
			t.Errorf("%s % x: %s, want %s", c.dt, c.b, got, c.want)
		}
	}
	if ItemSize("bfloat16") != 2 || ItemSize("float32") != 4 || ItemSize("<c16") != 16 || ItemSize("complex64") != 8 {
		t.Fatal("item sizes")
	}
}

func TestIndex(t *testing.T) {
	if got := Index(5, []int64{2, 3}, 'C'); got[0] != 1 || got[1] != 2 {
		t.Fatal(got)
	}
	if got := Index(5, []int64{2, 3}, 'F'); got[0] != 1 || got[1] != 2 {
		t.Fatal(got)
	}
	if got := Index(3, []int64{2, 3}, 'F'); got[0] != 1 || got[1] != 1 {
		t.Fatal(got)
	}
	// row 1 of a (2, 3) storage: shape (3,), stride (1,), offset 3
	if got, ok := TensorIndex(5, []int64{3}, []int64{1}, 3); !ok || got[0] != 2 {
		t.Fatal(got, ok)
	}
	// the transpose of (2, 3): shape (3, 2), stride (1, 3)
	if got, ok := TensorIndex(5, []int64{3, 2}, []int64{1, 3}, 0); !ok || got[0] != 2 || got[1] != 1 {
		t.Fatal(got, ok)
	}
}
