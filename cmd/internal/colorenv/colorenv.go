// Package colorenv takes NO_COLOR out of pk's environment before any other
// package of pk is initialised, and keeps its value for --color=auto.
//
// fatih/color's New marks a colour object "never colour" for good when
// NO_COLOR is set at the moment the object is made; objects made by package
// variables (pkg/trace's palette) would then ignore an explicit
// --color=always. With NO_COLOR out of the environment every object follows
// color.NoColor, which pk's --color sets: always, never, or auto (this
// package's NoColor, TERM=dumb, a terminal on stdout).
//
// Why this runs first: Go initialises packages in the order of their import
// paths among those whose imports are initialised (the spec's "Package
// initialization", Go 1.21 and later). This package imports only os, which
// every package that makes colours (through fatih/color) imports too, and
// github.com/pk-tools/pk/cmd/internal/colorenv sorts before
// github.com/pk-tools/pk/pkg/..., so its variables are set first.
package colorenv

import "os"

// NoColor is whether NO_COLOR was set to a non-empty value when pk started
// (https://no-color.org).
var NoColor = take()

func take() bool {
	v := os.Getenv("NO_COLOR")
	os.Unsetenv("NO_COLOR")
	return v != ""
}
