package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMayHoldTwo: the skim EachWhole runs first says no only where its read
// would count fewer than two streams, so a single stream is parsed once.
func TestMayHoldTwo(t *testing.T) {
	one := []byte("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00]\x94K\x01a.")
	none := []byte("N.")
	cases := []struct {
		name string
		data []byte
		want bool
	}{
		{"one stream", one, false},
		{"two streams", append(append([]byte{}, one...), none...), true},
		{"a million-level shape's kind: one stream of calls", []byte("\x80\x04cbuiltins\nlist\n)R)R."), false},
		{"one stream and trailing bytes", append(append([]byte{}, one...), "junk"...), false},
		{"one stream and a truncated one", append(append([]byte{}, one...), "\x80\x04]"...), false},
		{"a bad opcode first", []byte("\xff."), false},
		{"empty", nil, false},
		{"three streams", []byte("N.N.N."), true},
	}
	dir := t.TempDir()
	for i, c := range cases {
		p := filepath.Join(dir, string(rune('a'+i))+".pkl")
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := mayHoldTwo(p, int64(len(c.data))); got != c.want {
			t.Errorf("%s: mayHoldTwo = %v, want %v", c.name, got, c.want)
		}
	}
	if !mayHoldTwo(filepath.Join(dir, "missing.pkl"), 0) {
		t.Errorf("a file that cannot be opened: want true (the read reports it)")
	}
}
