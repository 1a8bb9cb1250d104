package write

// room returns b with room for n more elements, doubling a full array:
// append grows a large array by a quarter at a time, so that one appended
// to a few bytes at a time allocates and copies about five times its
// final size as it grows (the tape of a 5 MB cloudpickle state: 16 MB of
// events for 3 MB), where doubling costs two. The new room is not cleared
// at once (make and copy, not append): a large array fresh from the system
// costs memory only as it is filled.
func room[T any](b []T, n int) []T {
	if n <= cap(b)-len(b) {
		return b
	}
	out := make([]T, len(b), max(2*cap(b), len(b)+n, 64))
	copy(out, b)
	return out
}
