package pickle

import (
	"bytes"
	"testing"
)

// FLOAT "nan" must give the bits Python's float('nan') has, as pickletools
// reports them (0x7ff8000000000000; '-nan' with the sign bit).
func TestFloatTextNaNBits(t *testing.T) {
	for text, want := range map[string]uint64{"nan": 0x7ff8000000000000, "-nan": 0xfff8000000000000, "NaN": 0x7ff8000000000000} {
		data := []byte("F" + text + "\n.")
		o, err := NewReader(bytes.NewReader(data), int64(len(data)), "t").Next()
		if err != nil {
			t.Fatal(err)
		}
		if uint64(o.Int) != want {
			t.Errorf("FLOAT %s: bits %#x, want %#x", text, uint64(o.Int), want)
		}
	}
}
