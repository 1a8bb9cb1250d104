package canon

import "testing"

// A dict whose keys mix pure values with an identity object (or a NaN):
// the equality keys of the pure ones must survive the key that has none.
// (The buffer used to be dropped there: "b" after [] compared equal to
// "a" and was merged into it, and longer dicts panicked.)
func TestDedupeIdentityKeyBetweenPureKeys(t *testing.T) {
	mid := p4().op('}').mark().str("a").binint(1).op(']').binint(2).str("b").binint(3).op('u').stop()
	last := p4().op('}').mark().str("a").binint(1).str("b").binint(3).op(']').binint(2).op('u').stop()
	same(t, "identity key in the middle or last", mid, last)
	nan := p4().op('}').mark().str("a").binint(1).floatBits(0x7ff8000000000001).binint(2).str("b").binint(3).op('u').stop()
	nanLast := p4().op('}').mark().str("a").binint(1).str("b").binint(3).floatBits(0x7ff8000000000001).binint(2).op('u').stop()
	same(t, "NaN key in the middle or last", nan, nanLast)
	// 20 keys: the map path of dedupe
	a := p4().op('}').mark()
	for i := 0; i < 20; i++ {
		if i == 3 {
			a.op(']').binint(0)
		}
		a.str(string(rune('a' + i))).binint(int32(i))
	}
	digestOf(t, a.op('u').stop(), Options{}) // must not panic
}
