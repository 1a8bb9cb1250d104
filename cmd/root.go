// Package cmd holds pk's cobra commands. They are kept thin: flags, input
// and output; the work is done by the packages under pkg/.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is set at build time (-ldflags "-X github.com/pk-tools/pk/cmd.Version=...").
var Version = "0.1.0-dev"

// Exit codes, as diff and sha256sum -c have them.
const (
	ExitOK      = 0
	ExitDiffers = 1 // different (diff), a failed check (hash --check)
	ExitTrouble = 2 // bad input, bad usage, I/O errors
)

// ExitError carries an exit code out of a command. A nil Err means the
// command has already said what it had to.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that makes pk exit with code after printing nothing more.
func Exit(code int) error { return &ExitError{Code: code} }

// globals holds the flags every command shares.
type globals struct {
	color string
}

var gflags globals

// aliases maps program names to the subcommand they stand for.
var aliases = map[string]string{"pkdiff": "diff", "pkhash": "hash", "pktrace": "trace", "pkdis": "dis"}

// subcommands are added by the files of this package in their init.
var subcommands []func() *cobra.Command

// NewRoot builds the root command.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "pk",
		Short: "Read Python pickles without executing them: hash, diff, trace, scan, canon, dis",
		Long: `pk reads Python pickle files without importing or running anything in them.

  pk hash   a canonical digest that survives re-pickling (also run as pkhash)
  pk diff   a semantic diff of two pickles, exit 0 same / 1 different / 2 trouble (pkdiff)
  pk trace  the object tree with exact byte sizes (pktrace)
  pk scan   what loading would import, call and change, judged against an allowlist
  pk canon  the canonical pickle itself: same pk hash, same bytes
  pk dis    a disassembly, opcode by opcode, as pickletools prints it

` + docsLine(""),
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr(c, "unknown command %q%s", args[0], suggest(c, args))
			}
			return c.Help()
		},
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			json := false
			if f := c.Flags().Lookup("json"); f != nil {
				json = f.Value.String() == "true"
			}
			setupColor(gflags.color, json)
			return nil
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(flagError)
	enumFlag(root.PersistentFlags(), &gflags.color, "color", "auto", []string{"auto", "always", "never"},
		"colour: auto (a terminal, unless NO_COLOR or TERM=dumb), always or never; never with --json")
	root.SetHelpCommand(newHelpCmd())
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	completeEnums(root)
	return root
}

// gcPercent is the collector's pace when GOGC is not set. What pk holds is
// mostly pickle.Store records and arenas, which hold no pointers, so a
// collection costs little however large they are, while at Go's default
// (100) the heap grows to twice what is live before one runs. Measured
// (docs/reader.md, Memory; peak RSS and CPU at 100 / 50 / 25): the
// whole-tree pk trace of a 26 MB table 578 / 454 / 395 MB at 1.38 / 1.43 /
// 1.44 s; pk diff of two equal 5 MB cloudpickle states 131 / 98 / 96 MB.
// What is not pointer-free pays: a million back-to-back pickles keep a
// Stream and a Store each, and hash in 0.48 / 0.64 / 1.04 s. 50 takes most
// of the memory for a third of that CPU.
const gcPercent = 50

// Main runs pk with argv and returns the exit code.
func Main(argv []string) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	root := NewRoot()
	args := argv[1:]
	prog := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if sub, ok := aliases[prog]; ok {
		args = aliasArgs(root, prog, sub, args)
	}
	root.SetArgs(args)
	out := &stdout{w: os.Stdout}
	root.SetOut(out)
	code, msg := exitOf(root.Execute())
	if out.err != nil && code != ExitTrouble {
		// what the command printed is lost (a full disk): whatever it
		// found, the run failed (sha256sum and diff say so too)
		code, msg = ExitTrouble, fmt.Sprintf("pk: %v", out.err)
	}
	if msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	return code
}

// exitOf returns the exit code of a command that returned err, and the
// line to print on stderr ("": none).
func exitOf(err error) (int, string) {
	if err == nil {
		return ExitOK, ""
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitTrouble, ue.Error()
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			return ee.Code, fmt.Sprintf("pk: %v", ee.Err)
		}
		return ee.Code, ""
	}
	return ExitTrouble, fmt.Sprintf("pk: %v", err)
}

// stdout is standard output as the commands write it (cobra's
// OutOrStdout): it keeps the first write error, so that a run whose
// output was lost exits with trouble and says so, even from a command that
// does not check its writes (pk hash, pk scan and pk diff did not).
type stdout struct {
	w   io.Writer
	err error
}

func (o *stdout) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// aliasArgs makes pk act as subcommand sub when run as the link prog
// (pkhash = pk hash): the link's name is shown in help and errors, it
// answers --version, and shell completion (cobra's hidden __complete
// command, which the completion scripts call) completes the subcommand.
func aliasArgs(root *cobra.Command, prog, sub string, args []string) []string {
	root.Use = prog
	root.Annotations = map[string]string{"alias": prog}
	for _, c := range root.Commands() {
		if c.Name() == sub {
			c.Version = Version
			c.SetVersionTemplate(prog + " (pk " + sub + ") version {{.Version}}\n")
		}
	}
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return append([]string{args[0], sub}, args[1:]...)
	}
	return append([]string{sub}, args...)
}
