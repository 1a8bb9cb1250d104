//go:build !linux

package pickle

// adviseHuge is a no-op where the kernel has no transparent huge pages
// (see huge_linux.go).
func adviseHuge[T any](buf []T) {}
