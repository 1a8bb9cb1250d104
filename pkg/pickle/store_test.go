package pickle

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"
	"unsafe"
)

// sameGraph compares two graphs of one stream node by node (by ID).
func sameGraph(a, b *Stream) error {
	if a.Index != b.Index || a.Offset != b.Offset || a.End != b.End || a.Proto != b.Proto || a.Self != b.Self || a.LeftoverMarks != b.LeftoverMarks {
		return fmt.Errorf("stream facts differ: %+v vs %+v", *a, *b)
	}
	if len(a.All) != len(b.All) {
		return fmt.Errorf("%d nodes vs %d", len(a.All), len(b.All))
	}
	id := func(n *Node) int32 {
		if n == nil {
			return -1
		}
		return n.ID
	}
	ids := func(ns []*Node) string {
		s := ""
		for _, n := range ns {
			s += fmt.Sprint(id(n), " ")
		}
		return s
	}
	if id(a.Root) != id(b.Root) || ids(a.Tops) != ids(b.Tops) || ids(a.Popped) != ids(b.Popped) || ids(a.Leftover) != ids(b.Leftover) {
		return fmt.Errorf("root/tops differ")
	}
	for i, x := range a.All {
		y := b.All[i]
		if x.ID != int32(i) || y.ID != int32(i) {
			return fmt.Errorf("node %d: IDs %d, %d", i, x.ID, y.ID)
		}
		if x.Kind != y.Kind || x.Op != y.Op || x.Flags != y.Flags || x.Offset != y.Offset || x.Self != y.Self || x.Int != y.Int || x.Str != y.Str || id(x.Owner) != id(y.Owner) {
			return fmt.Errorf("node %d: %+v vs %+v", i, *x, *y)
		}
		if ids(x.Items) != ids(y.Items) {
			return fmt.Errorf("node %d: items %s vs %s", i, ids(x.Items), ids(y.Items))
		}
		if id(x.Func()) != id(y.Func()) || id(x.Args()) != id(y.Args()) || id(x.Kwargs()) != id(y.Kwargs()) || x.Name() != y.Name() || x.Blob() != y.Blob() || x.IsBig() != y.IsBig() || (x.IsBig() && x.Big().Cmp(y.Big()) != 0) {
			return fmt.Errorf("node %d: extras differ", i)
		}
		mx, my := x.Muts(), y.Muts()
		if len(mx) != len(my) {
			return fmt.Errorf("node %d: %d muts vs %d", i, len(mx), len(my))
		}
		for j := range mx {
			if mx[j].Op != my[j].Op || mx[j].Offset != my[j].Offset || ids(mx[j].Args) != ids(my[j].Args) {
				return fmt.Errorf("node %d: mut %d differs", i, j)
			}
		}
	}
	if len(a.Log) != len(b.Log) {
		return fmt.Errorf("log %d vs %d", len(a.Log), len(b.Log))
	}
	for i := range a.Log {
		x, y := a.Log[i], b.Log[i]
		if x.Kind != y.Kind || x.Op != y.Op || x.Offset != y.Offset || id(x.Node) != id(y.Node) || x.Mut != y.Mut {
			return fmt.Errorf("log %d: %+v vs %+v", i, x, y)
		}
	}
	return nil
}

// TestStoreRoundTrip: a graph taken into a store and back is the same graph,
// over the fixture corpus and the hand-made samples.
func TestStoreRoundTrip(t *testing.T) {
	files := fixtureFiles(4 << 20)
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	n := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseBytes(b)
		if err != nil {
			continue
		}
		for _, st := range f.Streams {
			s := FromGraph(st)
			if err := sameGraph(st, s.Graph()); err != nil {
				t.Errorf("%s stream %d: %v", p, st.Index, err)
			}
			n++
		}
	}
	t.Logf("%d streams", n)
}

func TestStoreGrowth(t *testing.T) {
	s := &Store{}
	l := s.Add(KindList, EMPTY_LIST, 0)
	var want []ID
	for i := 0; i < 1000; i++ {
		c := s.Add(KindInt, BININT1, int64(i+1))
		s.AppendItems(l, []ID{c})
		want = append(want, c)
		if i%7 == 0 {
			s.AddMut(l, BUILD, int64(i), []ID{c})
		}
	}
	got := s.Items(l)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("items differ")
	}
	if len(s.kids) > 4*len(want)+200 {
		t.Fatalf("arena %d for %d items: growth not amortised", len(s.kids), len(want))
	}
	if s.NMuts(l) != 143 || len(s.Muts(l)) != 143 || s.Muts(l)[2].Args[0] != want[14] {
		t.Fatalf("muts wrong: %d", s.NMuts(l))
	}
}

// TestStoreGrownRoom: the room of a container's items that grew is in its
// far entry, not in every side record (an object's BUILD makes a 16-byte
// ext and no far entry), and it goes when the items are set anew: an
// append then moves them rather than writing over the next node's.
func TestStoreGrownRoom(t *testing.T) {
	if n := unsafe.Sizeof(ext{}); n != 16 {
		t.Fatalf("ext is %d bytes", n)
	}
	s := &Store{}
	a := s.Add(KindList, EMPTY_LIST, 0)
	obj := s.Add(KindCall, NEWOBJ, 1)
	x := s.Add(KindInt, BININT1, 2)
	s.AddMut(obj, BUILD, 3, []ID{x})
	if s.fr(obj) != nil || s.kcap(&s.recs[obj]) != 0 {
		t.Fatalf("an operation made a far entry")
	}
	for range 5 {
		s.AppendItems(a, []ID{x, x})
	}
	if k := s.kcap(&s.recs[a]); k < 10 || s.NItems(a) != 10 {
		t.Fatalf("grown list: room %d, %d items", k, s.NItems(a))
	}
	b := s.Add(KindList, EMPTY_LIST, 4)
	y := s.Add(KindInt, BININT1, 5)
	s.SetItems(a, []ID{x})
	s.SetItems(b, []ID{y, y})
	s.AppendItems(a, []ID{x})
	if got := fmt.Sprint(s.Items(a), s.Items(b)); got != fmt.Sprint([]ID{x, x}, []ID{y, y}) {
		t.Fatalf("items after SetItems and an append: %s", got)
	}
}

// TestStoreMutArgsFar: an operation whose arguments are too many for
// smut.opn (lowered here to 2) keeps their number before them in the item
// arena, in the store, its graph and a compaction's copy.
func TestStoreMutArgsFar(t *testing.T) {
	defer func(v int32) { mutArgsFar = v }(mutArgsFar)
	mutArgsFar = 2
	s := &Store{}
	obj := s.Add(KindCall, REDUCE, 0)
	a, b, c := s.Add(KindInt, BININT1, 1), s.Add(KindInt, BININT1, 2), s.Add(KindInt, BININT1, 3)
	s.AddMut(obj, APPENDS, 10, []ID{a, b, c})
	s.AddMut(obj, BUILD, 11, []ID{a})
	s.AddMut(obj, SETITEMS, 12, []ID{c, b, a, a})
	want := "[{APPENDS 10 [1 2 3]} {BUILD 11 [1]} {SETITEMS 12 [3 2 1 1]}]"
	if got := fmt.Sprint(s.Muts(obj)); got != want {
		t.Fatalf("Muts = %s", got)
	}
	var it []SMut
	for i := s.MutIter(obj); ; {
		m, ok := i.Next()
		if !ok {
			break
		}
		it = append(it, m)
	}
	if got := fmt.Sprint(it); got != want {
		t.Fatalf("MutIter = %s", got)
	}
	if got := fmt.Sprint(s.Children(obj, nil)); got != "[1 2 3 1 3 2 1 1]" {
		t.Fatalf("Children = %s", got)
	}
	if g := s.Graph().All[obj].Muts(); len(g) != 3 || len(g[0].Args) != 3 || g[0].Args[2].ID != int32(c) || len(g[2].Args) != 4 {
		t.Fatalf("graph's operations differ")
	}
	// an object made by a call, APPENDS of 3 items applied to it, then
	// tuples of 40 Nones popped: compactions release their items and copy
	// the operation
	var p bytes.Buffer
	p.WriteString("\x80\x04cbuiltins\nobject\n)R(K\x01K\x02K\x03e")
	for range 4 {
		p.WriteString("(")
		for range 40 {
			p.WriteString("N")
		}
		p.WriteString("t0")
	}
	p.WriteString(".")
	data := p.Bytes()
	defer func(v int) { MinCompact = v }(MinCompact)
	MinCompact = 64 // (after the first tuple is popped)
	whole, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: &Keep{Depth: 1, Items: 1}, Replay: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	ws, ks := whole.Streams[0].Store(), kept.Streams[0].Store()
	args := func(s *Store) string {
		var out []string
		for _, m := range s.Muts(s.Root) {
			for _, a := range m.Args {
				out = append(out, fmt.Sprint(s.Int(a)))
			}
		}
		return fmt.Sprint(s.Muts(s.Root)[0].Op, s.NMuts(s.Root), out)
	}
	if ks.Len() >= ws.Len() || args(ks) != args(ws) || args(ws) != "APPENDS 1 [1 2 3]" {
		t.Fatalf("compacted %d of %d nodes: operations %s, whole %s", ks.Len(), ws.Len(), args(ks), args(ws))
	}
}

// TestStoreSelfEscape: a Self of 4 GiB or more (a huge payload, array data
// read after a joblib BUILD) is kept exactly.
func TestStoreSelfEscape(t *testing.T) {
	s := &Store{}
	id := s.Add(KindBytes, BINBYTES8, 0)
	s.AddSelf(id, 9)
	s.AddSelf(id, 5<<30)
	s.AddSelf(id, 3)
	if got := s.Self(id); got != 5<<30+12 {
		t.Fatalf("Self = %d", got)
	}
	small := s.Add(KindNone, NONE, 1)
	s.AddSelf(small, 1)
	if s.Self(small) != 1 || s.x(small) != nil {
		t.Fatalf("small Self moved to ext")
	}
}

// TestStoreOffsetsPast4GiB: a stream that crosses 4 GiB of input keeps
// every offset (the record holds the low word; Store.hi the high words),
// in its nodes, its log and its graph; and a consumer's node added out of
// order (AddFrom of an early node, Add with a small offset) keeps its own.
func TestStoreOffsetsPast4GiB(t *testing.T) {
	var b []byte
	b = append(b, 0x80, 4, ']') // PROTO 4, EMPTY_LIST
	for i := 0; i < 300; i++ {
		b = append(b, 'N', 'a', 'c', 'm', '\n', 'n', '\n', '}', 'b') // None APPEND, GLOBAL m n, {} BUILD
	}
	b = append(b, '0', '.')
	parse := func(base int64) *Store {
		rd := NewReader(bytes.NewReader(b), -1, "x")
		rd.off = base
		st, err := RunStream(rd, 0)
		if err != nil {
			t.Fatal(err)
		}
		return st.Store()
	}
	base := int64(1<<32 - 1000) // (the stream crosses 4 GiB a third of the way in)
	a, s := parse(0), parse(base)
	if a.Len() != s.Len() || s.hi == nil || len(s.hi.from) != 1 {
		t.Fatalf("nodes %d/%d, runs %v", a.Len(), s.Len(), s.hi)
	}
	for i := range a.Len() {
		if id := ID(i); s.Offset(id) != a.Offset(id)+base || s.Self(id) != a.Self(id) || s.Flags(id) != a.Flags(id) {
			t.Fatalf("node %d: offset %d, want %d", i, s.Offset(id), a.Offset(id)+base)
		}
	}
	for i := range a.NEvents() {
		if s.Event(i).Offset != a.Event(i).Offset+base {
			t.Fatalf("event %d: offset %d, want %d", i, s.Event(i).Offset, a.Event(i).Offset+base)
		}
	}
	if s.mutHi == nil || len(s.mutHi.from) != 1 {
		t.Fatalf("operations' runs %v", s.mutHi)
	}
	for i := range a.Len() {
		am, sm := a.Muts(ID(i)), s.Muts(ID(i))
		for j := range am {
			if sm[j].Offset != am[j].Offset+base {
				t.Fatalf("node %d operation %d: offset %d, want %d", i, j, sm[j].Offset, am[j].Offset+base)
			}
		}
	}
	g := s.Graph()
	for i, n := range g.All {
		if n.Offset != a.Offset(ID(i))+base {
			t.Fatalf("graph node %d: offset %d", i, n.Offset)
		}
	}
	s.grow = nil
	last := ID(s.Len() - 1)
	early := s.AddFrom(1)
	small := s.Add(KindNone, NONE, 7)
	again := s.AddFrom(last)
	if s.Offset(early) != a.Offset(1)+base || s.Offset(small) != 7 || s.Offset(again) != s.Offset(last) || s.Offset(last) != a.Offset(last)+base {
		t.Fatalf("added out of order: %d %d %d", s.Offset(early), s.Offset(small), s.Offset(again))
	}
}

// TestStoreSides: a record is 16 bytes; Self and owner live in the sides
// (a consumer's node past them has neither, AddFrom copies the Self and
// not the owner, cut drops them); a lean store keeps the owners of its
// last ownWin nodes only, and owning an older node (whose place in the
// ring a recent node has) leaves the recent node's owner as it was.
func TestStoreSides(t *testing.T) {
	if n := unsafe.Sizeof(rec{}); n != 16 {
		t.Errorf("rec is %d bytes", n)
	}
	s := &Store{Root: NoID}
	a, b := s.Add(KindInt, INT, 0), s.Add(KindList, EMPTY_LIST, 1)
	s.AddSelf(a, 3)
	s.SetOwner(a, b)
	s.AddSelf(a, 1<<32) // (to far)
	c := s.AddFrom(a)
	if s.Self(a) != 3+1<<32 || s.Self(c) != 3+1<<32 || s.Owner(a) != b || s.Owner(c) != NoID || s.Self(b) != 0 {
		t.Errorf("self %d %d %d, owner %d %d", s.Self(a), s.Self(c), s.Self(b), s.Owner(a), s.Owner(c))
	}
	s.cut(b)
	d := s.Add(KindInt, INT, 2)
	if s.Self(d) != 0 || s.Owner(d) != NoID || s.Offset(d) != 2 {
		t.Errorf("a node in a cut one's place: self %d, owner %d", s.Self(d), s.Owner(d))
	}

	l := &Store{Root: NoID, ring: make([]ID, ownWin)}
	for i := 0; i < 3*ownWin; i++ {
		l.Add(KindInt, INT, int64(i))
	}
	recent, old := ID(3*ownWin-5), ID(3*ownWin-5-2*ownWin)
	l.own(recent, 7)
	l.own(old, 9)
	l.AddSelf(recent, 4)
	if got := l.ownerOf(recent); got != 7 || !l.Lean() || l.Self(recent) != 0 {
		t.Errorf("lean: owner %d, Self %d", got, l.Self(recent))
	}
	if l.recs[old].flags&flagOwned == 0 || l.Flags(old) != 0 {
		t.Errorf("an old node owned in a lean store: flags %b", l.recs[old].flags)
	}
}

// TestCollectReadTrims: CollectRead hands back the pages of a large
// store's arrays past their length (which, written, read zero after it),
// and keeps the nodes.
func TestCollectReadTrims(t *testing.T) {
	in := []byte("\x80\x04](")
	for i := 0; i < collectMin; i++ {
		in = append(in, 'K', byte(i))
	}
	in = append(in, 'e', '.')
	_, err := ParseEach(NewReader(bytes.NewReader(in), int64(len(in)), "t"), Options{NoGraph: true}, func(st *Stream) error {
		s := st.Store()
		s.recs = slices.Grow(s.recs, 1<<16) // (a tail of 1 MiB)
		n := len(s.recs)
		tail := s.recs[n:cap(s.recs)]
		for i := range tail {
			tail[i] = rec{kind: KindInt, v: 1}
		}
		s.CollectRead()
		if s.Len() != collectMin+1 || s.Kind(s.Root) != KindList || len(s.Items(s.Root)) != collectMin {
			t.Fatalf("the store changed: %d nodes", s.Len())
		}
		for i := 4096 / 16; i < len(tail)-4096/16; i++ {
			if tail[i] != (rec{}) {
				t.Fatalf("record %d past the length is %v after CollectRead: not handed back", n+i, tail[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
