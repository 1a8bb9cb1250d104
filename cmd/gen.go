package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
)

// make install writes the shell completions with the hidden command
// `pk gen-completions DIR` (so that they describe the binary being
// installed) and the man pages with cmd/genman, built from the same source
// with the same flags: cobra's doc package, which renders them, links a
// Markdown and a YAML library, and they stay out of the pk binary. The work
// is in GenCompletions and GenMan.

func init() { subcommands = append(subcommands, newGenCompletionsCmd) }

func newGenCompletionsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-completions DIR",
		Short:  "Write bash, zsh and fish completions of pk and its links into DIR/{bash,zsh,fish}",
		Hidden: true,
		Args:   exactArgs(1, "one DIR"),
		RunE: func(c *cobra.Command, args []string) error {
			return trouble(GenCompletions(args[0]))
		},
	}
}

func trouble(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: ExitTrouble, Err: err}
}

// linkNames lists the links make install makes, sorted.
func linkNames() []string {
	var out []string
	for n := range aliases {
		if n != "pkdis" { // make install makes no pkdis link
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// GenMan writes pk.1 and pk-SUBCOMMAND.1 into dir with tree (cmd/genman
// passes cobra's doc.GenManTree), and for each link (pkhash) a page that
// includes its command's (".so man1/pk-hash.1").
func GenMan(dir string, tree func(root *cobra.Command, dir string) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := NewRoot()
	root.DisableAutoGenTag = true
	if err := tree(root, dir); err != nil {
		return err
	}
	for _, n := range linkNames() {
		page := fmt.Sprintf(".so man1/pk-%s.1\n", aliases[n])
		if err := os.WriteFile(filepath.Join(dir, n+".1"), []byte(page), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GenCompletions writes, for pk and each link, dir/bash/NAME,
// dir/zsh/_NAME and dir/fish/NAME.fish: cobra's scripts, which ask the
// program itself (its hidden __complete command) what to complete, so flag
// values complete as the program knows them (--color, --algo, --sort,
// --strip ...).
func GenCompletions(dir string) error {
	for _, sub := range []string{"bash", "zsh", "fish"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	for _, name := range append([]string{"pk"}, linkNames()...) {
		root := NewRoot()
		if sub, ok := aliases[name]; ok {
			aliasArgs(root, name, sub, nil)
		}
		var b, z, f bytes.Buffer
		if err := root.GenBashCompletionV2(&b, true); err != nil {
			return err
		}
		if err := root.GenZshCompletion(&z); err != nil {
			return err
		}
		if err := root.GenFishCompletion(&f, true); err != nil {
			return err
		}
		for path, data := range map[string][]byte{
			filepath.Join(dir, "bash", name):         b.Bytes(),
			filepath.Join(dir, "zsh", "_"+name):      z.Bytes(),
			filepath.Join(dir, "fish", name+".fish"): f.Bytes(),
		} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
