//go:build !linux

// Package huge advises the kernel to back large arrays with transparent
// huge pages (huge_linux.go).
package huge

// Advise is a no-op where the kernel has no transparent huge pages (see
// huge_linux.go).
func Advise[T any](buf []T) {}

// AdviseLarge is a no-op too.
func AdviseLarge[T any](buf []T) {}

// Large is the least array AdviseLarge advises (see huge_linux.go).
const Large = 16 << 20

// Trim does nothing where the kernel is not Linux (see huge_linux.go).
func Trim[T any](buf []T) bool { return false }

// Forget takes back what Advise marked (nothing here).
func Forget() {}
