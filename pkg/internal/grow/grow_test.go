package grow

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/pk-tools/pk/pkg/internal/huge"
)

func TestRoom(t *testing.T) {
	var s []int
	copies := 0
	for i := 0; i < 1<<20; i++ {
		before := cap(s)
		s = Room(s, 1)
		if cap(s) != before {
			copies++
			if before > 0 && cap(s) < 2*before {
				t.Fatalf("grew %d -> %d: not doubled", before, cap(s))
			}
		}
		s = append(s, i)
	}
	// (from 8 to 2^20 by doubling: 18 arrays)
	if copies > 18 {
		t.Errorf("%d reallocations for 2^20 items", copies)
	}
	if c := cap(Room([]int(nil), 1)); c > 8 {
		t.Errorf("an empty slice's first room: %d elements, want 8 (a table per small stream stays small)", c)
	}
	for i, v := range s {
		if v != i {
			t.Fatalf("s[%d] = %d", i, v)
		}
	}
	if b := Room([]byte("ab"), 100); len(b) != 2 || cap(b) < 102 || string(b) != "ab" {
		t.Errorf("Room kept %q, cap %d", b, cap(b))
	}
}

// TestRoomLarge: past huge.Large the new array is advised (its pages
// dropped) before the old one is copied in, so every item is still there
// (advised after the copy, the 16 MiB -> 32 MiB copy read zero).
func TestRoomLarge(t *testing.T) {
	var s []int64
	for i := range int64(3 << 20) { // (24 MiB)
		s = append(Room(s, 1), i)
	}
	if n := int64(cap(s)) * 8; n < huge.Large {
		t.Fatalf("%d bytes: not past huge.Large", n)
	}
	for i, v := range s {
		if v != int64(i) {
			t.Fatalf("s[%d] = %d", i, v)
		}
	}
	z := Reuse([]int64(nil), huge.Large/8)
	for i, v := range z {
		if v != 0 {
			t.Fatalf("Reuse: z[%d] = %d", i, v)
		}
	}
}

func TestReuse(t *testing.T) {
	s := []int32{1, 2, 3, 4}
	r := Reuse(s, 3)
	if len(r) != 3 || &r[0] != &s[0] || r[0] != 0 || r[2] != 0 {
		t.Errorf("Reuse(4 of cap 4, 3) = %v", r)
	}
	if r := Reuse(s, 9); len(r) != 9 || r[8] != 0 {
		t.Errorf("Reuse(cap 4, 9) = %v", r)
	}
}

func TestDiscard(t *testing.T) {
	cycles := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection but Discard's
	m := Mark()
	Discard(m)
	if c0 := cycles(); func() uint64 { Discard(Mark()); return cycles() }() != c0 {
		t.Errorf("Discard collected after a pass that allocated nothing")
	}
	m = Mark()
	var keep [][]byte
	for range DiscardAt>>20 + 1 {
		keep = append(keep, make([]byte, 1<<20))
	}
	keep = nil
	c0 := cycles()
	Discard(m)
	if cycles() == c0 {
		t.Errorf("Discard did not collect after a pass that allocated %d MB", DiscardAt>>20+1)
	}
	_ = keep
}
