package cmd

import "path/filepath"

// DocDir is where make install puts the guides (docs/*.md); the Makefile
// sets it at build time (-ldflags "-X github.com/pk-tools/pk/cmd.DocDir=...")
// from PREFIX.
var DocDir = "/usr/local/share/doc/pk"

// docsLine is the pointer to a guide that ends each command's help: the
// source tree's docs/FILE and the installed copy ("" for the list).
func docsLine(file string) string {
	if file == "" {
		return "Guides: docs/*.md in pk's source, installed in " + DocDir + "; man pk-hash, pk-diff, pk-trace, pk-scan, pk-canon, pk-dis."
	}
	return "See docs/" + file + " (installed as " + filepath.Join(DocDir, file) + ")."
}
