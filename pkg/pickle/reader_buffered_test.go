package pickle

import (
	"bytes"
	"math/big"
	"testing"
)

// TestNextBufferedStale: NextBuffered writes an Op field by field, so
// what an earlier opcode left in an Op of the batch (NextInto's Big, Blob,
// Name, IsBool, a str's Str) must be cleared; NextBufferedClean gives the
// same opcodes into a batch only it wrote.
func TestNextBufferedStale(t *testing.T) {
	in := []byte("\x80\x04K\x05\x8c\x02abJ\x00\x01\x00\x00.")
	want := []Op{
		{Code: PROTO, Offset: 0, Len: 2, Int: 4},
		{Code: BININT1, Offset: 2, Len: 2, Int: 5},
		{Code: SHORT_BINUNICODE, Offset: 4, Len: 4, Str: "ab"},
		{Code: BININT, Offset: 8, Len: 5, Int: 256},
	}
	for _, clean := range []bool{false, true} {
		r := NewReader(bytes.NewReader(in), int64(len(in)), "t")
		r.Peek(1) // (fills the read buffer)
		ops := make([]Op, 8)
		if !clean {
			for i := range ops {
				ops[i] = Op{Big: big.NewInt(7), Blob: &Blob{Len: 1}, Name: "stale", IsBool: true, Str: "stale"}
			}
		}
		var n int
		if clean {
			n = r.NextBufferedClean(ops)
		} else {
			n = r.NextBuffered(ops)
		}
		if n != len(want) {
			t.Fatalf("clean %v: %d opcodes, want %d", clean, n, len(want))
		}
		for i, w := range want {
			o := ops[i]
			if o.Code != w.Code || o.Offset != w.Offset || o.Len != w.Len || o.Int != w.Int || o.Str != w.Str ||
				o.Big != nil || o.Blob != nil || o.Name != "" || o.IsBool {
				t.Errorf("clean %v: op %d = %+v, want %+v", clean, i, o, w)
			}
		}
	}
}
