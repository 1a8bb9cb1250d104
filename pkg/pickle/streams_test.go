package pickle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// streamSig writes down everything a stream holds, nodes by ID, so that two
// parses of the same bytes can be compared exactly (and a machine that
// reuses memory is caught writing into a stream it has handed out).
func streamSig(st *Stream) string {
	var b strings.Builder
	id := func(n *Node) string {
		if n == nil {
			return "-"
		}
		return fmt.Sprint(n.ID)
	}
	ids := func(ns []*Node) string {
		s := make([]string, len(ns))
		for i, n := range ns {
			s[i] = id(n)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	fmt.Fprintf(&b, "stream %d [%d,%d) proto %d self %d root %s tops %s popped %s leftover %s marks %d\n",
		st.Index, st.Offset, st.End, st.Proto, st.Self, id(st.Root), ids(st.Tops), ids(st.Popped), ids(st.Leftover), st.LeftoverMarks)
	for _, n := range st.All {
		fmt.Fprintf(&b, "%d %s %s %x @%d self %d int %d str %q items %s owner %s", n.ID, n.Kind, n.Op, n.Flags, n.Offset, n.Self, n.Int, n.Str, ids(n.Items), id(n.Owner))
		if x := n.X; x != nil {
			fmt.Fprintf(&b, " big %v name %q func %s args %s kw %s", x.Big, x.Name, id(x.Func), id(x.Args), id(x.Kwargs))
			for _, m := range x.Muts {
				fmt.Fprintf(&b, " mut %s @%d %s", m.Op, m.Offset, ids(m.Args))
			}
			if x.Blob != nil {
				fmt.Fprintf(&b, " blob %d %q", x.Blob.Len, x.Blob.Prefix)
			}
		}
		b.WriteByte('\n')
	}
	for _, e := range st.Log {
		fmt.Fprintf(&b, "ev %s %s @%d %s %d\n", e.Kind, e.Op, e.Offset, id(e.Node), e.Mut)
	}
	return b.String()
}

// manyStreams is every sample pickle back to back, twice (once in reverse
// order), then bytes that are not a pickle.
func manyStreams() []byte {
	var in []byte
	for _, s := range validSamples {
		in = append(in, s...)
	}
	for i := len(validSamples) - 1; i >= 0; i-- {
		in = append(in, validSamples[i]...)
	}
	return append(in, "\x80\x04]K\x01"...) // truncated
}

// TestParseEachSameAsParse: the streams ParseEach hands out one at a time,
// in memory it reuses, are the streams ParseReader keeps, field for field;
// and the streams ParseReader keeps are not changed by the streams after
// them (they share the machine's slab, item chunk and All buffer).
func TestParseEachSameAsParse(t *testing.T) {
	in := manyStreams()
	for _, size := range []int64{int64(len(in)), -1} {
		var r = bytes.NewReader(in)
		f, err := ParseReader(NewReader(r, size, "t.pkl"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkFile(f, int64(len(in))); err != nil {
			t.Fatal(err)
		}
		if len(f.Streams) != 2*len(validSamples) || f.Trailing == nil {
			t.Fatalf("%d streams, trailing %v", len(f.Streams), f.Trailing)
		}
		// each stream alone, on a fresh machine
		for i, st := range f.Streams {
			b := in[st.Offset:st.End]
			one, err := Parse(bytes.NewReader(b), int64(len(b)), "t.pkl", Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := streamSig(one.Streams[0])
			got := streamSig(st)
			// offsets differ by the stream's start: compare a rebased copy
			if shifted(one.Streams[0], st) != nil {
				t.Fatalf("stream %d: %v\ngot  %s\nwant %s", i, shifted(one.Streams[0], st), got, want)
			}
		}
		sigs := make([]string, len(f.Streams))
		for i, st := range f.Streams {
			sigs[i] = streamSig(st)
		}
		n := 0
		g, err := ParseEach(NewReader(bytes.NewReader(in), size, "t.pkl"), Options{}, func(st *Stream) error {
			if got := streamSig(st); got != sigs[n] {
				return fmt.Errorf("stream %d:\ngot  %s\nwant %s", n, got, sigs[n])
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(f.Streams) || g.Streams != nil || g.Size != f.Size || g.Trailing == nil ||
			g.Trailing.Offset != f.Trailing.Offset || g.Trailing.Reason != f.Trailing.Reason || !bytes.Equal(g.Trailing.Prefix, f.Trailing.Prefix) {
			t.Fatalf("ParseEach: %d streams, %+v; ParseReader: %+v", n, g, f)
		}
	}
}

// shifted compares a stream parsed alone (offsets from 0) with the same
// stream parsed inside a larger input.
func shifted(alone, in *Stream) error {
	d := in.Offset
	if len(alone.All) != len(in.All) || alone.Len() != in.Len() || alone.Self != in.Self || len(alone.Log) != len(in.Log) ||
		len(alone.Tops) != len(in.Tops) || alone.Root.ID != in.Root.ID {
		return fmt.Errorf("different shape")
	}
	for j, x := range alone.All {
		y := in.All[j]
		if x.Kind != y.Kind || x.Self != y.Self || x.Offset+d != y.Offset || x.Int != y.Int || x.Str != y.Str || len(x.Items) != len(y.Items) {
			return fmt.Errorf("node %d differs", j)
		}
		for k := range x.Items {
			if x.Items[k].ID != y.Items[k].ID {
				return fmt.Errorf("node %d item %d differs", j, k)
			}
		}
	}
	return nil
}

// TestParseEachError: an error from fn stops ParseEach and comes back as it is.
func TestParseEachError(t *testing.T) {
	in := bytes.Repeat([]byte("N."), 10)
	stop := fmt.Errorf("enough")
	n := 0
	f, err := ParseEach(NewReader(bytes.NewReader(in), int64(len(in)), "t"), Options{}, func(st *Stream) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 || f == nil || f.Size != 6 {
		t.Fatalf("err %v after %d streams, %+v", err, n, f)
	}
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestPerStreamCost: a stream costs what it holds, not a set of
// reservations made from the bytes left (which made a million back-to-back
// pickles take minutes and gigabytes). Measured on 200,000 streams of one
// to three nodes, without the graph (NoGraph, what the commands read):
// ParseReader allocates its Stream and Store (carved from chunks), its
// records and its pointer in File.Streams, bound twice what it holds;
// ParseEach reuses one Stream and one Store, so its bound, 16 bytes a
// stream, fails as soon as anything is allocated per stream. With the graph
// (what the tests read; docs/engine.md §3), a stream also costs
// its graph, built from the store: bound 1600 B.
func TestPerStreamCost(t *testing.T) {
	const n = 200_000
	for _, c := range []struct {
		name  string
		in    []byte
		nodes int
	}{
		{"N.", bytes.Repeat([]byte("N."), n), 1},
		{"}.", bytes.Repeat([]byte("}."), n), 1},
		{"proto 4 frame", bytes.Repeat([]byte("\x80\x04\x95\x09\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e."), n), 3},
	} {
		for _, graph := range []bool{false, true} {
			opt := Options{NoGraph: !graph}
			var f *File
			kept := allocated(func() {
				var err error
				f, err = ParseReader(NewReader(bytes.NewReader(c.in), int64(len(c.in)), "t"), opt)
				if err != nil {
					t.Fatal(err)
				}
			})
			if len(f.Streams) != n {
				t.Fatalf("%s: %d streams", c.name, len(f.Streams))
			}
			f = nil
			streamed := allocated(func() {
				if _, err := ParseEach(NewReader(bytes.NewReader(c.in), int64(len(c.in)), "t"), opt, nil); err != nil {
					t.Fatal(err)
				}
			})
			perKept, perStreamed := float64(kept)/n, float64(streamed)/n
			t.Logf("%s (graph %v): ParseReader %.0f B a stream, ParseEach %.1f B a stream", c.name, graph, perKept, perStreamed)
			sizes := float64(unsafe.Sizeof(Stream{}) + unsafe.Sizeof(Store{}) + 8 + 4 + uintptr(c.nodes)*unsafe.Sizeof(rec{}))
			limit, limitEach := 2*sizes, 16.0
			if graph {
				limit, limitEach = 1600, 1600
			}
			if perKept > limit {
				t.Errorf("%s (graph %v): ParseReader allocates %.0f B a stream, bound %.0f", c.name, graph, perKept, limit)
			}
			if perStreamed > limitEach {
				t.Errorf("%s (graph %v): ParseEach allocates %.1f B a stream, bound %.0f", c.name, graph, perStreamed, limitEach)
			}
		}
	}
}

// table writes a protocol-4 pickle as CPython does of
// [{"id": i, "v": [i, 2*i]} for i in range(rows)]: memoised keys read back
// with BINGET, batches of 1000 items.
func table(rows int) []byte {
	b := []byte("\x80\x04]\x94")
	memo := 1
	keys := [2]int{-1, -1}
	for lo := 0; lo < rows; lo += 1000 {
		b = append(b, '(')
		for i := lo; i < min(lo+1000, rows); i++ {
			b = append(b, "}\x94"...)
			memo++
			b = append(b, '(')
			for k, key := range []string{"id", "v"} {
				if keys[k] < 0 || keys[k] > 255 {
					b = append(b, 0x8c, byte(len(key)))
					b = append(b, key...)
					b = append(b, 0x94)
					keys[k] = memo
					memo++
				} else {
					b = append(b, 'h', byte(keys[k]))
				}
				if k == 0 {
					b = append(b, 'J')
					b = binary.LittleEndian.AppendUint32(b, uint32(i))
				}
			}
			b = append(b, "]\x94("...)
			memo++
			b = append(b, 'J')
			b = binary.LittleEndian.AppendUint32(b, uint32(i))
			b = append(b, 'J')
			b = binary.LittleEndian.AppendUint32(b, uint32(2*i))
			b = append(b, "eu"...)
		}
		b = append(b, 'e')
	}
	return append(b, '.')
}

// BenchmarkParse: the machine on a million streams of one node (kept by
// ParseReader, handed out one at a time by ParseEach) and on a table of
// 100,000 small dicts in one stream; reports bytes and nodes.
func BenchmarkParse(b *testing.B) {
	nones := bytes.Repeat([]byte("N."), 1_000_000)
	tab := table(100_000)
	for _, c := range []struct {
		name string
		in   []byte
		each bool
	}{
		{"streams-1M", nones, false},
		{"streams-1M-each", nones, true},
		{"table-100k", tab, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			nodes := 0
			for b.Loop() {
				rd := NewReader(bytes.NewReader(c.in), int64(len(c.in)), "t")
				nodes = 0
				if c.each {
					if _, err := ParseEach(rd, Options{}, func(st *Stream) error { nodes += len(st.All); return nil }); err != nil {
						b.Fatal(err)
					}
					continue
				}
				f, err := ParseReader(rd, Options{})
				if err != nil {
					b.Fatal(err)
				}
				for _, st := range f.Streams {
					nodes += len(st.All)
				}
			}
			b.ReportMetric(float64(nodes), "nodes")
		})
	}
}

// TestRunStreamCost: RunStream (a joblib file runs it once per object
// array, with the array data after it) reserves nothing from the bytes
// left and starts its slabs small, so a small stream costs little however
// much input follows it. Measured: about 3 KB a call (2,960 B) for `N.` followed by
// 2 MB; the bound is twice that (it was 1 MB and more: left/16 pointers, a
// 512-node slab, a 2048-item chunk and 64 Stream values per call).
func TestRunStreamCost(t *testing.T) {
	const calls = 2000
	in := append(bytes.Repeat([]byte("N."), calls), make([]byte, 2<<20)...)
	rd := NewReader(bytes.NewReader(in), int64(len(in)), "t")
	n := allocated(func() {
		for i := 0; i < calls; i++ {
			if _, err := RunStream(rd, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
	per := float64(n) / calls
	t.Logf("RunStream: %.0f B a call", per)
	if per > 6000 {
		t.Errorf("RunStream allocates %.0f B a call, bound 6000", per)
	}
}
