package pickle

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// spanPickle is [('a', 1), 'a', {'a': ('a', 1)}, 'b'] at protocol 4 with
// the memo references the C pickler writes, split into two frames after
// op index split (0: no frame). It returns the bytes and the offset of
// each op of the list (and of STOP, last).
func spanPickle(split int) ([]byte, []int64) {
	ops := [][]byte{
		{']'}, {0x94}, // 0 1: the list, memo 0
		{'('}, {0x8c, 1, 'a'}, {0x94}, {'K', 1}, {0x86}, {0x94}, // 2-7: MARK (of APPENDS), ('a', 1): 'a' memo 1, the tuple memo 2
		{'h', 1},                                 // 8: 'a'
		{'}'}, {0x94}, {'h', 1}, {'h', 2}, {'s'}, // 9-13: {'a': ('a', 1)}, memo 3
		{0x8c, 1, 'b'}, {0x94}, // 14 15: 'b', memo 4
		{'e'}, {'.'}, // 16 17
	}
	var b bytes.Buffer
	b.Write([]byte{0x80, 4})
	var offs []int64
	frame := func(from, to int) {
		n := 0
		for _, o := range ops[from:to] {
			n += len(o)
		}
		b.WriteByte(byte(FRAME))
		binary.Write(&b, binary.LittleEndian, uint64(n))
	}
	for i, o := range ops {
		if split > 0 && i == 0 {
			frame(0, split)
		}
		if split > 0 && i == split {
			frame(split, len(ops))
		}
		offs = append(offs, int64(b.Len()))
		b.Write(o)
	}
	return b.Bytes(), offs
}

// sameNode compares the subtrees at a (whole parse) and b (range mode):
// kinds, values, offsets and byte attribution (FlagShared aside: a memo
// reference outside the spans is not seen).
func sameNode(t *testing.T, a, b *Node) {
	t.Helper()
	type pair struct{ a, b *Node }
	stack := []pair{{a, b}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := p.a, p.b
		if x.Kind != y.Kind || x.Op != y.Op || x.Offset != y.Offset || x.Self != y.Self || x.Int != y.Int || x.Str != y.Str ||
			x.Flags&^FlagShared != y.Flags&^FlagShared || len(x.Items) != len(y.Items) {
			t.Fatalf("node at %d: whole parse %+v, range mode %+v", x.Offset, *x, *y)
		}
		for i := range x.Items {
			if (x.Items[i].Owner == x) != (y.Items[i].Owner == y) {
				t.Fatalf("node at %d: item %d owned differently", x.Offset, i)
			}
			stack = append(stack, pair{x.Items[i], y.Items[i]})
		}
	}
}

func TestParseSpans(t *testing.T) {
	for _, split := range []int{0, 4, 10, 14} {
		data, offs := spanPickle(split)
		whole, err := parseBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		items := whole.Streams[0].Root.Items
		// the items' ranges: the first op of each to the first op after it
		item := []Span{
			{Start: offs[3], End: offs[8], MemoCount: 1},
			{Start: offs[8], End: offs[9], MemoCount: 3},
			{Start: offs[9], End: offs[14], MemoCount: 3},
			{Start: offs[14], End: offs[16], MemoCount: 4},
		}
		if split == 14 {
			item[2].End -= 9 // the FRAME before 'b' is outside every item
		}
		r := bytes.NewReader(data)
		size := int64(len(data))

		// every item at once
		var all []Span
		for _, s := range item {
			s.Keep = true
			all = append(all, s)
		}
		st, ids, err := ParseSpans(r, size, "t.pkl", 4, all, Options{})
		if err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		vals := graphVals(st, ids)
		for i, v := range vals {
			if len(v) != 1 {
				t.Fatalf("span %d left %d values", i, len(v))
			}
			sameNode(t, items[i], v[0])
		}

		// the dict alone, after the range that sets memo 1 and 2
		st, ids, err = ParseSpans(r, size, "t.pkl", 4, []Span{item[0], {Start: item[2].Start, End: item[2].End, MemoCount: 3, Keep: true}}, Options{})
		if err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		vals = graphVals(st, ids)
		if len(vals) != 1 || len(vals[0]) != 1 || st.Proto != 4 || st.Store().Len() != 4 {
			t.Fatalf("split %d: %d kept spans, %d nodes", split, len(vals), st.Store().Len())
		}
		sameNode(t, items[2], vals[0][0])

		// 'a' alone, then the GET of it
		st, ids, err = ParseSpans(r, size, "t.pkl", 4, []Span{{Start: offs[3], End: offs[5], MemoCount: 1}, {Start: offs[8], End: offs[9], Keep: true}}, Options{})
		vals = graphVals(st, ids)
		if err != nil || vals[0][0].Str != "a" || vals[0][0].Offset != offs[3] {
			t.Fatalf("split %d: %v %+v", split, err, vals)
		}

		// ranges that are not whole values, or reach no memo entry
		for _, bad := range [][]Span{
			{{Start: offs[2], End: offs[7]}},                 // a MARK left open
			{{Start: offs[9], End: offs[14]}},                // GET of an entry not set
			{{Start: offs[14], End: offs[14] + 2}},           // ends inside an op
			{{Start: offs[16], End: offs[17] + 1}},           // APPENDS of nothing; STOP
			{{Start: offs[3], End: size + 1}},                // past the end
			{{Start: offs[5], End: offs[5]}},                 // empty
			{{Start: offs[8], End: offs[9], MemoCount: -1}},  // negative memo size
			{{Start: offs[15], End: offs[16], MemoCount: 4}}, // MEMOIZE with nothing
		} {
			if _, _, err := ParseSpans(r, size, "t.pkl", 4, bad, Options{}); err == nil {
				t.Errorf("split %d: %+v accepted", split, bad)
			} else if pe, ok := AsError(err); !ok || pe.File != "t.pkl" || !strings.Contains(err.Error(), "t.pkl") {
				t.Errorf("split %d: %+v: error %v does not name the file", split, bad, err)
			}
		}
	}
}

// graphVals returns the values ParseSpans kept as nodes of the stream's graph.
func graphVals(st *Stream, ids [][]ID) [][]*Node {
	if st == nil {
		return nil
	}
	g := st.Store().Graph()
	out := make([][]*Node, len(ids))
	for i, v := range ids {
		for _, id := range v {
			out[i] = append(out[i], g.All[id])
		}
	}
	return out
}
