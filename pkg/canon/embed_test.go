package canon

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestPlainEmbedding: the plain forms are taken whole and read back item
// by item; anything else, trailing bytes, operations or nesting past the
// bound are not plain.
func TestPlainEmbedding(t *testing.T) {
	// [None, True, 1.5, -258, 'ab', {b'k': []}]
	enc := []byte("Nl\x06\x00n" + "b\x01" + "f\x3f\xf8\x00\x00\x00\x00\x00\x00" + "i-\x02\x01\x02" + "s\x02ab" + "Nd\x01\x00y\x01kNl\x00\x00")
	if !PlainEmbedding(enc, 2, 0) {
		t.Fatal("a plain list is not plain")
	}
	if PlainEmbedding(enc, 1, 0) {
		t.Error("nested 2 levels, taken with a bound of 1")
	}
	for name, b := range map[string][]byte{
		"trailing":  append(append([]byte{}, enc...), 'n'),
		"truncated": enc[:len(enc)-1],
		"operation": []byte("Nl\x00\x01"),
		"tuple":     []byte("T\x00"),
		"long str":  append([]byte("s\x41"), bytes.Repeat([]byte{'a'}, 65)...),
	} {
		if PlainEmbedding(b, 8, 0) {
			t.Errorf("%s: taken as plain", name)
		}
	}
	// a tuple with its side items, ('ab', (1,)), digests of 4 bytes: plain
	// only with that digest size, and only with its items
	tup := []byte("H1234T\x02s\x02abH5678T\x01i+\x01\x01")
	if !PlainEmbedding(tup, 2, 4) {
		t.Error("a tuple with its items is not plain")
	}
	for name, c := range map[string]struct {
		b     []byte
		dsize int
	}{
		"no digest size":     {tup, 0},
		"another size":       {tup, 3},
		"too deep":           {tup, 4},
		"its digest only":    {[]byte("H1234"), 4},
		"an item short":      {[]byte("H1234T\x02s\x02ab"), 4},
		"a frozenset's body": {[]byte("H1234F\x00"), 4},
	} {
		depth := 8
		if name == "too deep" {
			depth = 1
		}
		if PlainEmbedding(c.b, depth, c.dsize) {
			t.Errorf("%s: taken as plain", name)
		}
	}
	if size, items, text := PlainForm(tup, 4); size != 7 || items != 2 || string(text) != "H1234" {
		t.Errorf("a tuple's header: %d bytes, %d items, %q", size, items, text)
	}
	// m.C(*('ab',)) with two BUILDs, of None and of {'k': builtins.int}
	call := []byte("NCc\x02b\x01b\x01g\x01m\x01CH1234T\x01s\x02abnNd\x01\x00s\x01kg\x08builtins\x03int")
	if !PlainEmbedding(call, 2, 4) {
		t.Error("a call of a global with a tuple and two states is not plain")
	}
	if size, items, text := PlainForm(call, 4); size != 13 || items != 3 || string(text) != "g\x01m\x01C" {
		t.Errorf("a call's header: %d bytes, %d items, %q", size, items, text)
	}
	if mod, name, dotted, ok := PlainGlobal([]byte("G\x01m\x03a.b")); !ok || string(mod) != "m" || string(name) != "a.b" || !dotted {
		t.Errorf("a dotted global: %q %q %v %v", mod, name, dotted, ok)
	}
	for name, b := range map[string][]byte{
		"keyword arguments":   []byte("NCW\x00g\x01m\x01CH1234T\x00Nd\x00\x00"),
		"an append":           []byte("NCw\x01a\x01g\x01m\x01CH1234T\x00n"),
		"a BUILD of two":      []byte("NCw\x01b\x02g\x01m\x01CH1234T\x00nn"),
		"a call's callable":   []byte("NCw\x00NCw\x00g\x01m\x01CH1234T\x00H1234T\x00"),
		"arguments not tuple": []byte("NCc\x00g\x01m\x01Cn"),
		"a computed global":   []byte("NCc\x00H5678T\x00H1234T\x00"),
		"a state short":       []byte("NCw\x01b\x01g\x01m\x01CH1234T\x00"),
		"a global's name cut": []byte("g\x01m\x05ab"),
	} {
		if PlainEmbedding(b, 8, 4) {
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

// plainRef is the recursive reader PlainEmbedding replaced: the reference
// TestPlainEmbeddingLoop compares it with.
func plainRef(b []byte, depth, maxDepth, dsize int) (int, bool) {
	if len(b) == 0 || depth > maxDepth {
		return 0, false
	}
	switch b[0] {
	case 'n':
		return 1, true
	case 'b':
		return 2, len(b) >= 2
	case 'f':
		return 9, len(b) >= 9
	case 'i':
		if len(b) < 2 || b[1] != '+' && b[1] != '-' {
			return 0, false
		}
		l, w := binary.Uvarint(b[2:])
		if w <= 0 || l > uint64(len(b)) || 2+w+int(l) > len(b) {
			return 0, false
		}
		return 2 + w + int(l), true
	case 's', 'y':
		l, w := binary.Uvarint(b[1:])
		if w <= 0 || l > InlineMax || 1+w+int(l) > len(b) {
			return 0, false
		}
		return 1 + w + int(l), true
	case 'N':
		if len(b) >= 3 && b[1] == 'C' && (b[2] == 'c' || b[2] == 'w' || b[2] == 'o') {
			nops, w := binary.Uvarint(b[3:])
			if w <= 0 || nops > uint64(len(b)) {
				return 0, false
			}
			i := 3 + w
			for range nops {
				if i+1 >= len(b) || b[i] != 'b' || b[i+1] != 1 {
					return 0, false
				}
				i += 2
			}
			if i >= len(b) || b[i] != 'g' && b[i] != 'G' {
				return 0, false
			}
			n, ok := plainRef(b[i:], depth, maxDepth, dsize) // (the callable: the header's)
			if !ok || i+n >= len(b) || b[i+n] != 'H' {
				return 0, false
			}
			i += n
			for range 1 + nops {
				n, ok := plainRef(b[i:], depth+1, maxDepth, dsize)
				if !ok {
					return 0, false
				}
				i += n
			}
			return i, true
		}
		if len(b) < 2 || b[1] != 'l' && b[1] != 'd' {
			return 0, false
		}
		cnt, w := binary.Uvarint(b[2:])
		if w <= 0 || cnt > uint64(len(b)) {
			return 0, false
		}
		i := 2 + w
		if i >= len(b) || b[i] != 0 {
			return 0, false
		}
		i++
		if b[1] == 'd' {
			cnt *= 2
		}
		for ; cnt > 0; cnt-- {
			n, ok := plainRef(b[i:], depth+1, maxDepth, dsize)
			if !ok {
				return 0, false
			}
			i += n
		}
		return i, true
	case 'g', 'G':
		i := 1
		for range 2 {
			l, w := binary.Uvarint(b[i:])
			if w <= 0 || l > uint64(len(b)) || i+w+int(l) > len(b) {
				return 0, false
			}
			i += w + int(l)
		}
		return i, true
	case 'H':
		i := 1 + dsize
		if dsize <= 0 || i >= len(b) || b[i] != 'T' {
			return 0, false
		}
		cnt, w := binary.Uvarint(b[i+1:])
		if w <= 0 || cnt > uint64(len(b)) {
			return 0, false
		}
		i += 1 + w
		for ; cnt > 0; cnt-- {
			n, ok := plainRef(b[i:], depth+1, maxDepth, dsize)
			if !ok {
				return 0, false
			}
			i += n
		}
		return i, true
	}
	return 0, false
}

// TestPlainEmbeddingLoop: PlainEmbedding's loop reads as the recursive
// reader does, on plain encodings nested around the depth bound (64, the
// writer sink's, and 100, past the loop's array on the stack), lists and
// tuples with their side items (digests of 2 bytes), and on their cuts and
// random mutations, read with and without the digest size.
func TestPlainEmbeddingLoop(t *testing.T) {
	for _, maxDepth := range []int{0, 2, 64, 100} {
		var encs [][]byte
		leaf := []byte("s\x03abci+\x01\x05nb\x01f\x00\x00\x00\x00\x00\x00\xf0\x3f")
		for _, d := range []int{0, 1, 2, maxDepth - 1, maxDepth, maxDepth + 1} {
			var e []byte
			for j := range max(d, 0) {
				if j%2 == 0 {
					e = append(e, "Nl\x02\x00"...)
				} else {
					e = append(e, "HabT\x02"...)
				}
				e = append(e, 'n')
			}
			e = append(e, "Nd\x02\x00s\x01ai-\x00s\x01bNl\x00\x00s\x00"...)
			encs = append(encs, e, append([]byte("Nl\x05\x00"), leaf...), append([]byte("HxyT\x05"), leaf...))
			// calls: of a global with a tuple and two states, in a list
			call := append([]byte("NCw\x02b\x01b\x01g\x01m\x02abHxyT\x01n"), leaf[:5]...)
			call = append(call, "Nd\x01\x00s\x01kG\x00\x01x"...)
			encs = append(encs, call, append(append([]byte("Nl\x02\x00"), call...), "NCo\x00g\x00\x00HxyT\x00"...))
		}
		rng := rand.New(rand.NewPCG(1, uint64(maxDepth)))
		n := len(encs)
		for i := range n {
			e := encs[i]
			for j := 0; j <= len(e); j++ {
				encs = append(encs, e[:j])
			}
			for range 200 {
				m := append([]byte(nil), e...)
				if len(m) > 0 {
					m[rng.IntN(len(m))] = byte(rng.IntN(256))
				}
				encs = append(encs, m)
			}
		}
		for _, e := range encs {
			for _, dsize := range []int{0, 2} {
				n, ok := plainRef(e, 0, maxDepth, dsize)
				if got, want := PlainEmbedding(e, maxDepth, dsize), ok && n == len(e); got != want {
					t.Fatalf("maxDepth %d, digests of %d bytes: PlainEmbedding(%q) = %v, the recursive reader %v", maxDepth, dsize, e, got, want)
				}
			}
		}
	}
}
