package canon

import (
	"bytes"
	"testing"
	"time"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// f()()()... 200,000 calls deep: every call asks what its callable is;
// that question must not walk the chain again (it was quadratic and
// recursive: pk hash hung).
func TestDeepCallChain(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x04cbuiltins\nprint\n(K\x01tR")
	for i := 0; i < 200000; i++ {
		b.WriteString(")R")
	}
	b.WriteString(".")
	data := b.Bytes()
	start := time.Now()
	f, err := pickle.Parse(bytes.NewReader(data), int64(len(data)), "deep", ReadOptions(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HashDoc(&input.Doc{Path: "deep", Format: "pickle", Parts: []input.Part{{Pickle: f}}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}
