package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/pickle"
)

func rawOf(t *testing.T, b []byte) []string {
	t.Helper()
	lines, err := RawLines(pickle.NewReader(bytes.NewReader(b), int64(len(b)), "t"))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestRawIgnoresMemoAndFrames(t *testing.T) {
	color.NoColor = true
	// [1, 2] with BINPUT 0 vs the same with MEMOIZE and a FRAME
	a := []byte("\x80\x04]q\x00(K\x01K\x02e.")
	b := []byte("\x80\x04\x95\x09\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e.")
	var out bytes.Buffer
	if WriteUnified(&out, "a", "b", rawOf(t, a), rawOf(t, b), 3) {
		t.Fatalf("memo and frame forms should vanish:\n%s", out.String())
	}
	c := []byte("\x80\x04]q\x00(K\x01K\x03e.")
	out.Reset()
	if !WriteUnified(&out, "a", "c", rawOf(t, a), rawOf(t, c), 3) {
		t.Fatal("a changed value must show")
	}
	want := "-BININT1 2\n+BININT1 3"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("got\n%s", out.String())
	}
}
