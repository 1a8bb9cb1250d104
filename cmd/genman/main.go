// Command genman writes pk's man pages (section 1) into DIR: `make install`
// runs it with the flags pk is built with, so that the pages describe the
// binary being installed. It is a program of its own so that cobra's doc
// package, which renders the pages through a Markdown and a YAML library,
// is not linked into pk.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/pk-tools/pk/cmd"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genman DIR")
		os.Exit(2)
	}
	hdr := &doc.GenManHeader{Title: "PK", Section: "1", Source: "pk " + cmd.Version, Manual: "pk manual"}
	err := cmd.GenMan(os.Args[1], func(root *cobra.Command, dir string) error {
		return doc.GenManTree(root, hdr, dir)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(2)
	}
}
