//go:build !linux

package resident

// DropExecutable does nothing here: it reads /proc (Linux).
func DropExecutable() {}
