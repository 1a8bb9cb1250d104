package diff

import (
	"testing"
	"unsafe"
)

// The walk lends its task slice to one helper at a time (spareKids) and
// takes it back only as compare's result (takeBack): a helper asking while
// it is lent gets nil, a result that is another array (grown, or a
// helper's own) is not kept, and what is kept is cleared.
func TestSpareKids(t *testing.T) {
	var c cmp
	k := c.spareKids()
	if k == nil || len(k) != 0 {
		t.Fatalf("first loan: %v", k)
	}
	if nested := c.spareKids(); nested != nil {
		t.Fatalf("a second loan while lent: %v", nested)
	}
	k = append(k, task{differ: true}, task{depth: 2})
	c.takeBack(k)
	again := c.spareKids()
	if unsafe.SliceData(again[:1]) != unsafe.SliceData(k[:1]) {
		t.Fatal("the slice compare returned was not kept")
	}
	if k[0].differ || k[1].depth != 0 {
		t.Fatalf("kept without clearing: %+v", k[:2])
	}
	// another array as compare's result: the loan ends, nothing is kept
	c.takeBack(make([]task, 3))
	if c.lent != nil || c.spare != nil {
		t.Fatalf("after another array: lent %v, spare %d", c.lent != nil, cap(c.spare))
	}
	lent := c.spareKids()
	if lent == nil {
		t.Fatal("no loan after a loan ended")
	}
	// grown past the lent array by append: a new array, not kept
	grown := append(lent, make([]task, 100)...)
	c.takeBack(grown)
	c.takeBack(nil) // (nothing lent: nothing happens)
	if c.spare != nil {
		t.Fatal("kept a slice that was not lent")
	}
}
