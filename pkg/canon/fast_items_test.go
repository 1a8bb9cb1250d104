package canon

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBigItemsSized: the records of a large container's items (BigItems)
// are sized from its bytes at the pace of the first ones, once, not grown
// by append a quarter at a time; and they are the records Items gives.
func TestBigItemsSized(t *testing.T) {
	const n = 170000 // 9 bytes a float: past BigItemMin (append leaves room for 1.24n)
	b := []byte{0x80, 4, '}', 0x8c, 1, 'x', ']'}
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			b = append(b, '(')
		}
		b = append(b, 'G')
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(float64(i)/7))
		if i%1000 == 999 || i == n-1 {
			b = append(b, 'e')
		}
	}
	b = append(b, 's', '.')
	p := filepath.Join(t.TempDir(), "x.pkl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ok := ScanItems(p, Options{})
	if !ok {
		t.Fatal("ScanItems did not take it")
	}
	res, ok := s.Items(-1)
	if !ok || res.Len() != 1 {
		t.Fatalf("Items(-1): ok %v, %d items", ok, res.Len())
	}
	big, ok := res.Big[0]
	if !ok || big.Kind != 'l' || big.Len < n*9 || big.Start+big.Len > int64(len(b)) {
		t.Fatalf("Big[0] = %+v, %v", big, ok)
	}
	got, ok := s.BigItems(big)
	if !ok || got.Len() != n {
		t.Fatalf("BigItems: ok %v, %d items", ok, got.Len())
	}
	if c := cap(got.sums); c > n*9/8 {
		t.Errorf("BigItems: room for %d records, %d used: want them sized from the list's bytes", c, n)
	}
	want, ok := s.Items(big.Start)
	if !ok || !sameItems(got, want) {
		t.Errorf("BigItems and Items(Start) record different items")
	}
}

// TestItemsDroppedValues: the items of a dict result whose list values
// pass 2 drops (read again from the file for their hashes, dropSum) are
// recorded as where nothing is dropped (the same pickle gzipped: a
// compressed stream is not read again), with the same digest; the last
// value of the SETITEMS too.
func TestItemsDroppedValues(t *testing.T) {
	w := (&pw{}).op(0x80, 4).op('}').memo().op('(')
	w.str("rows").memo()
	w.rows(60000)
	w.str("few").memo()
	w.rowsKeys(3, -1, -1)
	w.str("meta").op('}').memo().str("k").int(7).op('s')
	w.str("n").int(1)
	w.str("last").memo() // (a list set last: its bytes end at the SETITEMS)
	w.rowsKeys(2, -1, -1)
	w.op('u', '.')
	dir := t.TempDir()
	bare := filepath.Join(dir, "d.pkl")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(w.b)
	zw.Close()
	gz := filepath.Join(dir, "d.pkl.gz")
	if os.WriteFile(bare, w.b, 0o644) != nil || os.WriteFile(gz, z.Bytes(), 0o644) != nil {
		t.Fatal("cannot write the files")
	}
	var got [2]*FastItems
	for i, p := range []string{bare, gz} {
		s, ok := ScanItems(p, Options{})
		if !ok {
			t.Fatalf("%s: ScanItems did not take it", p)
		}
		if got[i], ok = s.Items(-1); !ok || got[i].Len() != 5 {
			t.Fatalf("%s: Items(-1): ok %v", p, ok)
		}
	}
	a, b := got[0], got[1]
	if !slices.Equal(a.Keys, b.Keys) || !slices.Equal(a.KeyEnd, b.KeyEnd) || a.Result.Digest != b.Result.Digest {
		t.Errorf("keys or digest differ: %q %v, %q %v", a.Keys, a.Result.Digest, b.Keys, b.Result.Digest)
	}
	for i := range a.Len() {
		if a.Sum(i) != b.Sum(i) {
			t.Errorf("item %d (%q): hashed %x with its list read again, %x from its encoding", i, a.Key(i), a.Sum(i), b.Sum(i))
		}
	}
	if big, ok := a.Big[0]; !ok || big.Kind != 'l' || big.Len < BigItemMin {
		t.Errorf("Big[0] = %+v, %v: want the rows", big, ok)
	}
}

// sameItems reports whether a and b record the same items: fingerprints
// and byte ranges.
func sameItems(a, b *FastItems) bool {
	if !slices.Equal(a.sums, b.sums) {
		return false
	}
	for i := range a.Len() {
		if a.Span(i) != b.Span(i) {
			return false
		}
	}
	return true
}
