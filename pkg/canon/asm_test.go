package canon

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// asm assembles pickle bytes by hand.
type asm struct{ bytes.Buffer }

func (a *asm) op(b ...byte) *asm { a.Write(b); return a }
func (a *asm) proto(p byte) *asm { return a.op(0x80, p) }
func (a *asm) mark() *asm        { return a.op('(') }
func (a *asm) stop() []byte      { a.op('.'); return a.Bytes() }
func (a *asm) binint(v int32) *asm {
	a.op('J')
	binary.Write(a, binary.LittleEndian, v)
	return a
}
func (a *asm) str(s string) *asm { // SHORT_BINUNICODE / BINUNICODE
	if len(s) < 256 {
		a.op(0x8c, byte(len(s)))
	} else {
		a.op('X')
		binary.Write(a, binary.LittleEndian, uint32(len(s)))
	}
	a.WriteString(s)
	return a
}
func (a *asm) bytes(s string) *asm { // SHORT_BINBYTES / BINBYTES
	if len(s) < 256 {
		a.op('C', byte(len(s)))
	} else {
		a.op('B')
		binary.Write(a, binary.LittleEndian, uint32(len(s)))
	}
	a.WriteString(s)
	return a
}
func (a *asm) binfloat(f float64) *asm {
	a.op('G')
	binary.Write(a, binary.BigEndian, math.Float64bits(f))
	return a
}
func (a *asm) floatBits(u uint64) *asm {
	a.op('G')
	binary.Write(a, binary.BigEndian, u)
	return a
}
func (a *asm) global(m, n string) *asm { a.op('c'); a.WriteString(m + "\n" + n + "\n"); return a }
func (a *asm) sglobal(m, n string) *asm {
	a.str(m).str(n)
	return a.op(0x93)
}
func (a *asm) put(i byte) *asm { return a.op('q', i) }
func (a *asm) get(i byte) *asm { return a.op('h', i) }
func (a *asm) text(s string) *asm {
	a.WriteString(s)
	return a
}

func parse(t testing.TB, b []byte) *pickle.File {
	t.Helper()
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "test.pkl", ReadOptions(Options{}))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func digestOf(t testing.TB, b []byte, opt Options) string {
	t.Helper()
	f, err := pickle.Parse(bytes.NewReader(b), int64(len(b)), "test.pkl", ReadOptions(opt))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	r, err := HashDoc(&input.Doc{Path: "test.pkl", Parts: []input.Part{{Pickle: f}}}, opt)
	if err != nil {
		t.Fatalf("hash: %v", err)
	}
	return r.Digest
}

func same(t *testing.T, name string, a, b []byte) {
	t.Helper()
	da, db := digestOf(t, a, Options{}), digestOf(t, b, Options{})
	if da != db {
		t.Errorf("%s: digests differ, want equal:\n%s\n%s", name, da, db)
	}
}

func differ(t *testing.T, name string, a, b []byte) {
	t.Helper()
	da, db := digestOf(t, a, Options{}), digestOf(t, b, Options{})
	if da == db {
		t.Errorf("%s: digests equal, want different: %s", name, da)
	}
}
