package pickle

import (
	"os"
	"testing"
)

// TestSidesOut: a store whose sides are out reads as a lean one (Self 0,
// Owner NoID, Owned 0) and reads as before once they are in; its
// temporary file is gone once they are in. A lean store, or one out
// already, is left as it is.
func TestSidesOut(t *testing.T) {
	// [1, [2, 3], (4, 'ab'), {'k': [5]}] with a memoised list read twice
	b := []byte("\x80\x02](K\x01(K\x02K\x03l\x94K\x04X\x02\x00\x00\x00ab\x86}X\x01\x00\x00\x00k]K\x05ash\x00e.")
	f, err := parseBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Streams[0].Store()
	n := ID(s.Len())
	self, owner, owned := make([]int64, n), make([]ID, n), make([]int64, n)
	total := int64(0)
	for id := ID(0); id < n; id++ {
		self[id], owner[id], owned[id] = s.Self(id), s.Owner(id), s.Owned(id)
		total += self[id]
	}
	if total == 0 || owned[s.Root] == 0 {
		t.Fatalf("no Self: %v, root owns %d", self, owned[s.Root])
	}
	dir := t.TempDir()
	if err := s.SidesOut(dir); err != nil {
		t.Fatal(err)
	}
	if !s.SidesAreOut() || s.SidesOut(dir) != nil {
		t.Fatal("sides not out, or out twice")
	}
	for id := ID(0); id < n; id++ {
		if s.Self(id) != 0 || s.Owner(id) != NoID || s.Owned(id) != 0 {
			t.Errorf("node %d, sides out: Self %d, Owner %d, Owned %d", id, s.Self(id), s.Owner(id), s.Owned(id))
		}
	}
	if err := s.SidesIn(); err != nil {
		t.Fatal(err)
	}
	if s.SidesAreOut() || s.SidesIn() != nil {
		t.Fatal("sides still out, or in twice")
	}
	for id := ID(0); id < n; id++ {
		if s.Self(id) != self[id] || s.Owner(id) != owner[id] || s.Owned(id) != owned[id] {
			t.Errorf("node %d, sides in again: Self %d, Owner %d, Owned %d; want %d %d %d", id, s.Self(id), s.Owner(id), s.Owned(id), self[id], owner[id], owned[id])
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in %s: %v", dir, left)
	}
	l := &Store{Root: NoID, ring: make([]ID, ownWin)}
	l.Add(KindInt, INT, 0)
	if err := l.SidesOut(dir); err != nil || l.SidesAreOut() {
		t.Errorf("a lean store's sides put out: %v", err)
	}
	if err := s.SidesOut(dir + "/none"); err == nil || s.SidesAreOut() || s.Owned(s.Root) != owned[s.Root] {
		t.Errorf("sides out into no directory: %v, out %v", err, s.SidesAreOut())
	}
}
