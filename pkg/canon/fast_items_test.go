package canon

import (
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
	if !ok || len(res.Items) != 1 {
		t.Fatalf("Items(-1): ok %v, %d items", ok, len(res.Items))
	}
	big, ok := res.Big[0]
	if !ok || big.Kind != 'l' || big.Len < n*9 || big.Start+big.Len > int64(len(b)) {
		t.Fatalf("Big[0] = %+v, %v", big, ok)
	}
	got, ok := s.BigItems(big)
	if !ok || len(got.Items) != n {
		t.Fatalf("BigItems: ok %v, %d items", ok, len(got.Items))
	}
	if c := cap(got.Items); c > n*9/8 {
		t.Errorf("BigItems: room for %d records, %d used: want them sized from the list's bytes", c, n)
	}
	want, ok := s.Items(big.Start)
	if !ok || !slices.Equal(got.Items, want.Items) {
		t.Errorf("BigItems and Items(Start) record different items")
	}
}
