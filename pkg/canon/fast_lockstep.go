package canon

import "sync"

// Lockstep lets the passes over two lists' items that run at once (pk
// diff's: two list results, ItemsLockstep, or two large lists below
// them, BigItemsLockstep) drop the items both lists have the same from
// the front, as they come. pk diff aligns two lists from
// their common prefix on: the items of that prefix are never looked at
// again, yet each pass held 16 bytes of fingerprint and a few of range an
// item, for the whole list (two files of 4 million floats each, one
// changed: 167 MB, docs/engine.md §4, session 47).
//
// Each pass checks in every lockEvery items (checkIn): under the lock it
// publishes its fingerprints, and the fingerprints of the items both
// sides have published are compared from where the last comparison
// stopped; while every one is equal, each pass drops its items up to
// there (FastItems.Base, rounded down to spanEvery items) at its own
// check-in, moving the rest to the front of its arrays. The first
// difference turns the dropping off for good: from there on both passes
// keep every item, as without a Lockstep. A pass that gets more than
// lockAhead items ahead of the other waits for it, so that neither holds
// what the other has not compared; a pass that ends (or gives up) says so
// (finish), and the other no longer waits. What the passes drop, the
// items before the larger Base, is the same on both sides, so the
// alignment's common prefix starts there at least and reads nothing
// before it.
//
// A pass only ever writes its own fingerprints, at indices past what it
// published or, when it drops, under the lock; the other reads them under
// the lock, up to what was published.
type Lockstep struct {
	mu   sync.Mutex
	cond sync.Cond
	side [2]lockSide
	same int  // items [0, same) are equal on both sides
	off  bool // a difference was met: nothing more is dropped
}

// lockSide is what a pass published: its fingerprints from item base
// on (a copy of the slice, which the pass goes on appending to), and
// their count.
type lockSide struct {
	sums [][16]byte
	base int
	n    int // base+len(sums); 0 before the first check-in
	done bool
}

// NewLockstep returns a Lockstep for two passes (sides 0 and 1) that run
// at the same time. A pass that runs alone must not have one: it would
// wait for the other.
func NewLockstep() *Lockstep {
	l := &Lockstep{}
	l.cond.L = &l.mu
	return l
}

// lockEvery is how many items a pass records between two check-ins, and
// lockAhead how far ahead of the other it may run (tests lower them).
var (
	lockEvery = 1 << 12
	lockAhead = 1 << 16
)

// checkIn publishes the items side has recorded in res, compares what
// both have published, drops what it may of res's, and waits while side
// is too far ahead; it reports whether the lists were found to differ
// (nothing more will be dropped).
func (l *Lockstep) checkIn(side int, res *FastItems) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	me, other := &l.side[side], &l.side[1-side]
	l.publish(me, res)
	l.compare()
	if !l.off {
		// (only when at least as much goes as stays: a pass ahead of the
		// other would otherwise move what it keeps at every check-in)
		if to := min(l.same, me.n); to > res.base && to-res.base >= me.n-to {
			res.dropFront(to)
			l.publish(me, res)
		}
	}
	l.cond.Broadcast()
	for !l.off && !other.done && me.n > other.n+lockAhead {
		l.cond.Wait()
		l.compare()
	}
	return l.off
}

func (l *Lockstep) publish(me *lockSide, res *FastItems) {
	me.sums, me.base, me.n = res.sums, res.base, res.Len()
}

// compare compares the items both sides published past same.
func (l *Lockstep) compare() {
	a, b := &l.side[0], &l.side[1]
	if l.off {
		return
	}
	for end := min(a.n, b.n); l.same < end; l.same++ {
		if a.sums[l.same-a.base] != b.sums[l.same-b.base] {
			l.off = true
			return
		}
	}
}

// finish says side's pass has ended (or given up): the other no longer
// waits for it. (What it published stays, for the other to compare: a
// pass that gives up sends pk diff to its other paths anyway.)
func (l *Lockstep) finish(side int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.side[side].done = true
	l.cond.Broadcast()
}

// dropFront drops the fingerprints and ranges of the items before to
// (rounded down to a checkpoint of the ranges).
func (f *FastItems) dropFront(to int) {
	nb := f.spans.dropFront(to)
	if k := nb - f.base; k > 0 {
		f.sums = f.sums[:copy(f.sums, f.sums[k:])]
		f.base = nb
	}
}
