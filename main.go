// Command pk reads Python pickle files without executing them: pk hash, pk
// diff, pk trace, pk scan, pk canon and pk dis. Installed under the names pkhash, pkdiff or
// pktrace (make install makes the links) it acts as that subcommand.
package main

import (
	"os"

	"github.com/pk-tools/pk/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args))
}
