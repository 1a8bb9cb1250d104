package pickle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// TestPlanLastRead: the plan gives, for every memo index, the offset of the
// last GET that reads it, as a walk over Next's opcodes finds it, for every
// first stream of the fixtures.
func TestPlanLastRead(t *testing.T) {
	n := 0
	filepath.WalkDir("../../testdata/fixtures", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".pkl" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		want := map[int64]int64{}
		rd := NewReader(bytes.NewReader(data), int64(len(data)), p)
		for {
			o, err := rd.Next()
			if err != nil {
				return nil // not a pickle the reader reads whole
			}
			if (o.Code == GET || o.Code == BINGET || o.Code == LONG_BINGET) && o.Big == nil {
				want[o.Int] = o.Offset
			}
			if o.Code == STOP {
				break
			}
		}
		plan, err := PlanStream(NewReader(bytes.NewReader(data), int64(len(data)), p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if plan.Reads() != len(want) {
			t.Errorf("%s: plan has %d read indices, Next finds %d", p, plan.Reads(), len(want))
		}
		for i, off := range want {
			if got := plan.LastRead(i); got != off {
				t.Errorf("%s: last read of memo %d at %d, plan says %d", p, i, off, got)
			}
		}
		n++
		return nil
	})
	if n < 100 {
		t.Fatalf("only %d fixtures planned", n)
	}
}

// TestPlanSparse: indices read beyond the dense range are in the map.
func TestPlanSparse(t *testing.T) {
	// PROTO 4, EMPTY_LIST, LONG_BINPUT 2^30, POP, LONG_BINGET 2^30, STOP
	data := []byte("\x80\x04]r\x00\x00\x00\x400j\x00\x00\x00\x40.")
	p, err := PlanStream(NewReader(bytes.NewReader(data), int64(len(data)), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.LastRead(1 << 30); got != 9 {
		t.Fatalf("LastRead(2^30) = %d, want 9", got)
	}
	if p.LastRead(0) != -1 || p.ReadAfter(1<<30, 9) {
		t.Fatal("index 0 is never read, and nothing reads 2^30 after offset 9")
	}
}

// TestKeepReleasesRows: with Keep, the store of a long list of small dicts
// holds what is live (the list, the first items), not every row, and the
// machine's memo holds bits for the writes nothing reads.
func TestKeepReleasesRows(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("\x80\x04]\x94")
	const batches, rows = 200, 1000
	for i := 0; i < batches; i++ {
		b.WriteByte('(')
		for j := 0; j < rows; j++ {
			b.WriteString("}\x94(K\x01\x8c\x01a\x94u")
		}
		b.WriteByte('e')
	}
	b.WriteByte('.')
	data := b.Bytes()
	keep := &Keep{Depth: 3, Items: 64}
	f, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: keep, Replay: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Streams[0].Store()
	if s.Len() > 3*MinCompact {
		t.Fatalf("store holds %d nodes of %d rows: nothing released", s.Len(), batches*rows)
	}
	root := s.Root
	// cut to 64 items at the last compaction, then grown by the rows after it
	if s.Kind(root) != KindList || s.NItems(root) >= batches*rows/4 || !s.Has(root, FlagReleased) {
		t.Fatalf("root: %s with %d items, released %v; want a list cut short", s.Kind(root), s.NItems(root), s.Has(root, FlagReleased))
	}
	first := s.Items(root)[0]
	if s.Kind(first) != KindDict || s.NItems(first) != 2 || s.Str(s.Items(first)[1]) != "a" {
		t.Fatalf("first row not kept whole: %s %d", s.Kind(first), s.NItems(first))
	}
	full, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := full.Streams[0].Store().Len(); n < 3*batches*rows {
		t.Fatalf("without Keep the store holds %d nodes", n)
	}
}

// TestPlanHostileIndex: a read of a huge index in a tiny stream costs a map
// entry, not a dense table up to it.
func TestPlanHostileIndex(t *testing.T) {
	// PROTO 4, EMPTY_LIST, LONG_BINPUT 2^24-1, LONG_BINGET 2^24-1, STOP
	data := []byte("\x80\x04]r\xff\xff\xff\x00j\xff\xff\xff\x00.")
	p, err := PlanStream(NewReader(bytes.NewReader(data), int64(len(data)), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if p.dense() > 4096 || p.LastRead(1<<24-1) != 8 {
		t.Fatalf("dense %d, LastRead %d", p.dense(), p.LastRead(1<<24-1))
	}
}

// TestKeepMemoSemantics: with a plan, the memo still counts every write
// (MEMOIZE stores at len(memo)) and finds every index read later, whether
// it is in the plan's dense part or its map, written once or overwritten.
func TestKeepMemoSemantics(t *testing.T) {
	defer func(v int) { MinCompact = v }(MinCompact)
	MinCompact = 4
	var b bytes.Buffer
	b.WriteString("\x80\x04]\x94") // memo[0] = the list
	for i := 0; i < 40; i++ {
		b.WriteString("K\x05\x94") // MEMOIZE: memo[1..40], never read
	}
	b.WriteString("0000000000000000000000000000000000000000") // POP them
	b.WriteString("N")
	b.WriteString("r\x00\x00\x00\x01") // LONG_BINPUT 2^24: memo[2^24] = None (read below: map)
	b.WriteString("0")
	b.WriteString("K\x07r\x05\x00\x00\x00") // memo[5] = 7, overwriting a write nothing read
	b.WriteString("0")
	b.WriteString("K\x09\x94") // MEMOIZE: memo[len(memo)] = memo[42] = 9
	b.WriteString("0")
	b.WriteString("h\x00")                              // the list
	b.WriteString("(j\x00\x00\x00\x01h\x05h\x2aK\x2ae") // APPENDS None, 7, 9, 42
	b.WriteString("0h\x00.")
	data := b.Bytes()
	keep := &Keep{Depth: 3, Items: 64}
	f, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: keep, Replay: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Streams[0].Store()
	items := s.Items(s.Root)
	if len(items) != 4 || s.Kind(items[0]) != KindNone || s.Int(items[1]) != 7 || s.Int(items[2]) != 9 || s.Int(items[3]) != 42 {
		t.Fatalf("root items: %d", len(items))
	}
}

// keepLog is what compaction must not change: the call log's entries (kind,
// opcode, offset), stream by stream, and the error text.
func keepLog(b []byte, keep *Keep, replay bool) (string, error) {
	opt := Options{NoGraph: true, Keep: keep}
	if replay {
		opt.Replay = bytes.NewReader(b)
	}
	var out bytes.Buffer
	f, err := Parse(bytes.NewReader(b), int64(len(b)), "k", opt)
	if err != nil {
		return "", err
	}
	for _, st := range f.Streams {
		s := st.Store()
		fmt.Fprintf(&out, "stream %d root %s tops %d;", st.Index, s.Kind(s.Root), len(s.Tops))
		for _, ev := range s.Events() {
			fmt.Fprintf(&out, " %s/%s@%d", ev.Kind, ev.Op, ev.Offset)
		}
		out.WriteByte('\n')
	}
	if f.Trailing != nil {
		fmt.Fprintf(&out, "trailing %d %s\n", f.Trailing.Offset, f.Trailing.Reason)
	}
	return out.String(), nil
}

// FuzzKeep: with release (compaction after every few records) the machine
// reads what it reads without: the same call log, root kinds and errors; a
// Released error only where pass 1 cannot see the truth, which for a plain
// byte slice is never. With Keep.Final, the events handed over and those
// left are, in order, the whole log.
func FuzzKeep(f *testing.F) {
	fuzzSeeds(f)
	defer func(v int) { MinCompact = v }(MinCompact)
	MinCompact = 4
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err1 := keepLog(b, nil, false)
		got, err2 := keepLog(b, &Keep{Depth: 3, Items: 64}, true)
		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("errors differ: %v / with Keep: %v", err1, err2)
		}
		if want != got {
			t.Fatalf("with Keep:\n%s\nwithout:\n%s", got, want)
		}
		if err1 != nil {
			return
		}
		// (by stream: a stream that fails after events were handed over,
		// bytes after the last pickle that do not form one, is dropped
		// from the file, and so are the events Final was given of it)
		type takenEv struct {
			stream int
			ev     string
		}
		var handed []takenEv
		k := &Keep{Depth: 1, Items: 2, Final: func(s *Store, evs []SEvent) bool {
			for _, ev := range evs {
				handed = append(handed, takenEv{s.Index, fmt.Sprintf("%s/%s@%d", ev.Kind, ev.Op, ev.Offset)})
			}
			return true
		}}
		f2, err := Parse(bytes.NewReader(b), int64(len(b)), "k", Options{NoGraph: true, Keep: k, Replay: bytes.NewReader(b)})
		if err != nil {
			t.Fatalf("with Keep.Final: %v", err)
		}
		f1, _ := Parse(bytes.NewReader(b), int64(len(b)), "k", Options{NoGraph: true})
		var taken []string
		for _, h := range handed {
			if h.stream < len(f2.Streams) {
				taken = append(taken, h.ev)
			}
		}
		var all, rest []string
		for i, st := range f1.Streams {
			for _, ev := range st.Store().Events() {
				all = append(all, fmt.Sprintf("%s/%s@%d", ev.Kind, ev.Op, ev.Offset))
			}
			for _, ev := range f2.Streams[i].Store().Events() {
				rest = append(rest, fmt.Sprintf("%s/%s@%d", ev.Kind, ev.Op, ev.Offset))
			}
		}
		merged := append(append([]string(nil), taken...), rest...)
		sort.Strings(merged)
		sorted := append([]string(nil), all...)
		sort.Strings(sorted)
		if strings.Join(merged, " ") != strings.Join(sorted, " ") {
			t.Fatalf("events taken %v + left %v != log %v", taken, rest, all)
		}
	})
}

// TestKeepOneNone: with Keep.OneNone a stream's Nones are one record, named
// wherever a None is, in a lean store that attributes no bytes to nodes;
// without it, one record each, and the bytes add up.
func TestKeepOneNone(t *testing.T) {
	data := []byte("\x80\x02](NN(NNteN0.") // [None, None, (None, None)], a None popped
	for _, one := range []bool{false, true} {
		f, err := Parse(bytes.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: &Keep{Depth: 3, Items: 64, OneNone: one}, Replay: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		s := f.Streams[0].Store()
		nones, self := map[ID]bool{}, s.StreamSelf
		for id := ID(0); int(id) < s.Len(); id++ {
			self += s.Self(id)
			if s.Kind(id) == KindNone {
				nones[id] = true
			}
		}
		items := s.Items(s.Root)
		if len(items) != 3 || s.Kind(items[2]) != KindTuple {
			t.Fatalf("OneNone %v: root items %v", one, items)
		}
		named := append(append([]ID{}, items[:2]...), s.Items(items[2])...)
		for _, id := range named {
			if s.Kind(id) != KindNone {
				t.Fatalf("OneNone %v: %v is not None", one, id)
			}
		}
		if want := map[bool]int{false: 5, true: 1}[one]; len(nones) != want {
			t.Errorf("OneNone %v: %d None records, want %d", one, len(nones), want)
		}
		if one && s.Flags(named[0])&FlagShared == 0 {
			t.Errorf("the shared None is not FlagShared")
		}
		// (a lean store, Keep.OneNone's, attributes no bytes to nodes)
		if want := map[bool]int64{false: int64(len(data)), true: s.StreamSelf}[one]; self != want || s.Lean() != one {
			t.Errorf("OneNone %v: %d bytes attributed, want %d (lean %v)", one, self, want, s.Lean())
		}
	}
}

// TestPlanAllocatesOnce: pass 1 of a stream with 200,000 memo reads
// allocates its dense table about once (pages written once), not the
// doubled and trimmed copies of a growing table (3.16 MB for 0.8).
func TestPlanAllocatesOnce(t *testing.T) {
	const n = 200_000
	var b bytes.Buffer
	b.WriteString("\x80\x04(")
	for i := 0; i < n; i++ {
		b.WriteString("N\x94") // NONE, MEMOIZE
	}
	b.WriteString("l0(")
	for i := 0; i < n; i++ {
		b.Write([]byte{'j', byte(i), byte(i >> 8), byte(i >> 16), 0}) // LONG_BINGET i
	}
	b.WriteString("l.")
	data := b.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := PlanStream(NewReader(bytes.NewReader(data), int64(len(data)), "t"))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if p.LastRead(n-1) < 0 || p.LastRead(n) >= 0 {
		t.Fatalf("LastRead %d %d", p.LastRead(n-1), p.LastRead(n))
	}
	if got, table := after.TotalAlloc-before.TotalAlloc, uint64(4*n); got > table+table/2 {
		t.Errorf("pass 1 allocated %d bytes for a dense table of %d", got, table)
	}
}

// TestKeepOneNoneMutated: with Keep.OneNone an operation on a shared None
// (None.append(None), a BUILD of None: loading fails there) is
// Error.Released, on which the stream is read again without Keep; shared,
// the operation would become every None's (FuzzFold found "NNa.": the None
// appended to itself, a cycle the whole store does not have).
func TestKeepOneNoneMutated(t *testing.T) {
	for _, data := range []string{"NNa.", "NN}b.", "N(Ne.", "\x80\x04N\x94Nh\x00a."} {
		_, err := Parse(strings.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: &Keep{Depth: 3, Items: 64, OneNone: true}, Replay: strings.NewReader(data)})
		if pe, ok := AsError(err); !ok || !pe.Released {
			t.Errorf("%q with OneNone: %v, want Error.Released", data, err)
		}
		if _, err := Parse(strings.NewReader(data), int64(len(data)), "t", Options{NoGraph: true, Keep: &Keep{Depth: 3, Items: 64}, Replay: strings.NewReader(data)}); err != nil {
			t.Errorf("%q without OneNone: %v", data, err)
		}
	}
}

// TestPlanSealed: a plan whose stream reads few of its memo indices (a
// cloudpickle state reads one in seven) is sealed at STOP into a table of
// the read ones, and the memo that adopts it keeps a slot only for those:
// LastRead, get, released and len(memo) are what the pages gave. It fails
// with seal a no-op (the pages, 4 bytes an index, stay).
func TestPlanSealed(t *testing.T) {
	const n = 100_000
	var b bytes.Buffer
	b.WriteString("\x80\x04(")
	for i := 0; i < n; i++ {
		b.WriteString("N\x94") // NONE, MEMOIZE
	}
	b.WriteString("l0(")
	gets := map[int64]int64{}
	for i := 0; i < n; i += 7 {
		gets[int64(i)] = int64(b.Len())
		b.Write([]byte{'j', byte(i), byte(i >> 8), byte(i >> 16), 0}) // LONG_BINGET i
	}
	b.WriteString("l.")
	data := b.Bytes()
	p, err := PlanStream(NewReader(bytes.NewReader(data), int64(len(data)), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if size := 8*len(p.bits) + 4*len(p.rank) + 4*len(p.last) + 4*planPage*len(p.pages); !p.sealed() || size > n {
		t.Fatalf("plan of %d indices, %d read: %d bytes (sealed %v)", n, len(gets), size, p.sealed())
	}
	if p.Reads() != len(gets) {
		t.Fatalf("Reads %d, want %d", p.Reads(), len(gets))
	}
	for i := int64(0); i < n+planPage; i++ {
		want, ok := gets[i]
		if !ok {
			want = -1
		}
		if got := p.LastRead(i); got != want {
			t.Fatalf("LastRead(%d) = %d, want %d", i, got, want)
		}
	}
	var m memoTable
	for i := int64(0); i < 10; i++ {
		m.put(i, ID(i), 3) // written before the plan
	}
	m.adopt(p)
	for i := int64(10); i < n; i++ {
		m.put(i, ID(i), 3+2*i)
	}
	if m.count != n || len(m.dense) != len(gets) {
		t.Fatalf("memo: count %d, %d slots; want %d, %d", m.count, len(m.dense), n, len(gets))
	}
	for i := int64(0); i < n; i++ {
		id, ok := m.get(i)
		if _, read := gets[i]; read != ok || ok && id != ID(i) || m.released(i) == read {
			t.Fatalf("memo index %d: get %d %v, released %v; read later %v", i, id, ok, m.released(i), read)
		}
	}
}

// TestPlanStreamWindows: PlanStream decodes the opcodes in the read buffer
// itself (SkimWindow); on inputs read in chunks of every size, with frames,
// short str and bytes arguments across the window's end and above a low
// blob threshold, and every kind of memo read, it finds each index's last
// read where Next does.
func TestPlanStreamWindows(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		data := planTestPickle(seed, 30000)
		want := map[int64]int64{}
		rd := NewReader(bytes.NewReader(data), int64(len(data)), "t")
		for {
			o, err := rd.Next()
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if (o.Code == GET || o.Code == BINGET || o.Code == LONG_BINGET) && o.Big == nil {
				want[o.Int] = o.Offset
			}
			if o.Code == STOP {
				break
			}
		}
		for _, chunk := range []int{0, 1, 7, 100, 4093} {
			for _, th := range []int64{0, 16} {
				var src io.Reader = bytes.NewReader(data)
				if chunk > 0 {
					src = chunkReader{r: src, n: chunk} // (buffered_test.go)
				}
				rd := NewReader(src, int64(len(data)), "t")
				rd.BlobThreshold = th
				p, err := PlanStream(rd)
				if err != nil {
					t.Fatalf("seed %d chunk %d: %v", seed, chunk, err)
				}
				if p.Reads() != len(want) {
					t.Errorf("seed %d chunk %d th %d: %d read indices, Next finds %d", seed, chunk, th, p.Reads(), len(want))
				}
				for i, off := range want {
					if got := p.LastRead(i); got != off {
						t.Fatalf("seed %d chunk %d th %d: last read of memo %d at %d, plan says %d", seed, chunk, th, i, off, got)
					}
				}
			}
		}
	}
}

// planTestPickle is a protocol 4 stream of n opcodes in frames of random
// sizes: memo writes, BINGET, LONG_BINGET and GET reads of them, short and
// long str and bytes arguments, ints, POPs (the reader's opcodes, not
// a loadable pickle).
func planTestPickle(seed int64, n int) []byte {
	rnd := rand.New(rand.NewSource(seed))
	out := []byte{byte(PROTO), 4}
	var frame []byte
	memo := 0
	flush := func() {
		if len(frame) == 0 {
			return
		}
		out = append(out, byte(FRAME))
		out = binary.LittleEndian.AppendUint64(out, uint64(len(frame)))
		out = append(out, frame...)
		frame = frame[:0]
	}
	text := func(l int) []byte {
		b := make([]byte, l)
		for i := range b {
			b[i] = byte('a' + rnd.Intn(26))
		}
		return b
	}
	for k := 0; k < n; k++ {
		var op []byte
		switch r := rnd.Intn(10); {
		case r < 2 || memo == 0:
			op = []byte{byte(EMPTY_LIST), byte(MEMOIZE)}
			memo++
		case r == 2:
			op = []byte{byte(BINGET), byte(rnd.Intn(min(memo, 256)))}
		case r == 3:
			op = binary.LittleEndian.AppendUint32([]byte{byte(LONG_BINGET)}, uint32(rnd.Intn(memo)))
		case r == 4:
			op = fmt.Appendf([]byte{byte(GET)}, "%d\n", rnd.Intn(memo))
		case r == 5:
			l := rnd.Intn(256)
			op = append([]byte{byte(SHORT_BINUNICODE), byte(l)}, text(l)...)
		case r == 6:
			l := rnd.Intn(256)
			op = append([]byte{byte(SHORT_BINBYTES), byte(l)}, text(l)...)
		case r == 7:
			l := rnd.Intn(600)
			op = binary.LittleEndian.AppendUint32([]byte{byte(BINUNICODE)}, uint32(l))
			op = append(op, text(l)...)
		case r == 8:
			op = []byte{byte(BININT1), byte(rnd.Intn(256))}
		default:
			op = []byte{byte(POP)}
		}
		if rnd.Intn(3) == 0 {
			out = append(out, op...) // (outside a frame)
			continue
		}
		frame = append(frame, op...)
		if rnd.Intn(50) == 0 || len(frame) > 1<<16 {
			flush()
		}
	}
	flush()
	return append(out, byte(STOP))
}
