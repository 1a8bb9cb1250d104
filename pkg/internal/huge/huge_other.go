//go:build !linux

// Package huge advises the kernel to back large arrays with transparent
// huge pages (huge_linux.go).
package huge

// Advise is a no-op where the kernel has no transparent huge pages (see
// huge_linux.go).
func Advise[T any](buf []T) {}

// Trim does nothing where the kernel is not Linux (see huge_linux.go).
func Trim[T any](buf []T) bool { return false }

// Forget takes back what Advise marked (nothing here).
func Forget() {}
