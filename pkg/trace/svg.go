package trace

import "io"

// SVGOptions tune the icicle.
type SVGOptions struct{}

// HTMLOptions tune the page.
type HTMLOptions struct{}

func (t *Tree) WriteSVG(w io.Writer, start Item, o SVGOptions) error   { return nil }
func (t *Tree) WriteHTML(w io.Writer, start Item, o HTMLOptions) error { return nil }
