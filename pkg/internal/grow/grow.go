// Package grow owns how pk's packages grow the large slices they fill a
// few items at a time: by doubling, where append grows a large slice by a
// quarter at a time and so allocates and copies about five times its final
// size (a million-level stack, the tape of a cloudpickle state, a million
// effects), against two for doubling.
package grow

// Room returns s with room for n more elements, doubling a full array. The
// new room is made and copied, not appended: a large array fresh from the
// system costs memory only as it is filled.
func Room[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	out := make([]T, len(s), max(2*cap(s), len(s)+n, 64))
	copy(out, s)
	return out
}

// Reuse returns s with length n and every element zero, in s's memory when
// it is large enough.
func Reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
