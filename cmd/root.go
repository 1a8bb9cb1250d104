// Package cmd holds pk's cobra commands. They are kept thin: flags, input
// and output; the work is done by the packages under pkg/.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
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
		Short: "Read Python pickles without executing them: hash, diff, trace, dis",
		Long: `pk reads Python pickle files without importing or running anything in them.

  pk hash   a canonical digest that survives re-pickling (also run as pkhash)
  pk diff   a semantic diff of two pickles, exit 0 same / 1 different / 2 trouble (pkdiff)
  pk trace  the object tree with exact byte sizes (pktrace)
  pk dis    a disassembly, opcode by opcode, as pickletools prints it`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			return setupColor(gflags.color)
		},
	}
	root.PersistentFlags().StringVar(&gflags.color, "color", "auto", "colour output: auto, always or never (NO_COLOR is honoured)")
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	return root
}

// setupColor decides whether colour is used on stdout.
func setupColor(mode string) error {
	switch mode {
	case "always":
		color.NoColor = false
	case "never":
		color.NoColor = true
	case "auto", "":
		color.NoColor = os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" || !IsTerminal(os.Stdout)
	default:
		return &ExitError{Code: ExitTrouble, Err: fmt.Errorf("--color must be auto, always or never, not %q", mode)}
	}
	return nil
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Main runs pk with argv and returns the exit code.
func Main(argv []string) int {
	root := NewRoot()
	args := argv[1:]
	prog := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if sub, ok := aliases[prog]; ok {
		args = append([]string{sub}, args...)
		root.Use = prog
	}
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(os.Stderr, "pk: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(os.Stderr, "pk: %v\n", err)
	return ExitTrouble
}
