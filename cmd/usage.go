package cmd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// UsageError is a mistake in the command line. It names the command and
// points to its --help; pk exits 2.
type UsageError struct {
	Cmd string // "pk trace", or the link's name ("pktrace")
	Msg string
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s: %s; see '%s --help'", e.Cmd, e.Msg, e.Cmd)
}

// usageErr makes a UsageError for command c.
func usageErr(c *cobra.Command, format string, args ...any) error {
	return &UsageError{Cmd: displayName(c), Msg: fmt.Sprintf(format, args...)}
}

// displayName is the command as the user typed it: "pk trace", or
// "pktrace" when pk runs under that link.
func displayName(c *cobra.Command) string {
	if a := c.Root().Annotations["alias"]; a != "" {
		return a
	}
	return c.CommandPath()
}

// flagError words pflag's errors without Go's internals:
// `invalid argument "abc" for "--top" flag: strconv.ParseInt: parsing "abc":
// invalid syntax` becomes `invalid value "abc" for --top: must be a whole
// number`.
func flagError(c *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	var ne *pflag.NotExistError
	var vr *pflag.ValueRequiredError
	switch {
	case errors.As(err, &iv):
		cause := iv.Unwrap()
		msg := "not accepted"
		if cause != nil {
			msg = cause.Error()
		}
		var ne *strconv.NumError
		if errors.As(cause, &ne) {
			switch {
			case ne.Func == "ParseBool":
				msg = "must be true or false"
			case errors.Is(ne.Err, strconv.ErrRange):
				msg = "is out of range"
			default:
				msg = "must be a whole number"
			}
		}
		return usageErr(c, "invalid value %q for --%s: %s", iv.GetValue(), iv.GetFlag().Name, msg)
	case errors.As(err, &vr):
		if vr.GetSpecifiedShortnames() != "" {
			return usageErr(c, "-%s needs a value", vr.GetSpecifiedName())
		}
		return usageErr(c, "--%s needs a value", vr.GetSpecifiedName())
	case errors.As(err, &ne):
		if g := ne.GetSpecifiedShortnames(); g != "" {
			if len(g) > 1 {
				return usageErr(c, "unknown flag -%s in -%s", ne.GetSpecifiedName(), g)
			}
			return usageErr(c, "unknown flag -%s", ne.GetSpecifiedName())
		}
		return usageErr(c, "unknown flag --%s", ne.GetSpecifiedName())
	}
	return usageErr(c, "%s", strings.TrimPrefix(err.Error(), "flag "))
}

// intValue is an int flag with a range, refused with a reason outside it.
type intValue struct {
	p        *int
	min, max int
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "N" }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return errors.New(v.rangeText())
		}
		return errors.New("must be a whole number")
	}
	if n < v.min || n > v.max {
		return errors.New(v.rangeText())
	}
	*v.p = n
	return nil
}

func (v *intValue) rangeText() string {
	if v.max == math.MaxInt {
		return fmt.Sprintf("must be %d or more", v.min)
	}
	return fmt.Sprintf("must be between %d and %d", v.min, v.max)
}

// intFlag defines --name (and -short) as an int in [min, max].
func intFlag(fs *pflag.FlagSet, p *int, name, short string, def, min, max int, usage string) {
	*p = def
	fs.VarP(&intValue{p: p, min: min, max: max}, name, short, usage)
}

// enumValue is a string flag that takes one of a few words; they are also
// its shell completions.
type enumValue struct {
	p       *string
	allowed []string
}

func (v *enumValue) String() string { return *v.p }
func (v *enumValue) Type() string   { return strings.Join(v.allowed, "|") }
func (v *enumValue) Set(s string) error {
	for _, a := range v.allowed {
		if s == a {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("must be %s", orList(v.allowed))
}

func enumFlag(fs *pflag.FlagSet, p *string, name, def string, allowed []string, usage string) {
	*p = def
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
}

// enumSliceValue is a repeatable flag of comma lists of known words.
type enumSliceValue struct {
	p       *[]string
	allowed []string
	set     bool
}

func (v *enumSliceValue) String() string { return "[" + strings.Join(*v.p, ",") + "]" }
func (v *enumSliceValue) Type() string   { return strings.Join(v.allowed, ",") }
func (v *enumSliceValue) Set(s string) error {
	if !v.set {
		*v.p = nil
		v.set = true
	}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		ok := false
		for _, a := range v.allowed {
			ok = ok || w == a
		}
		if !ok {
			return fmt.Errorf("unknown %q (known: %s)", w, strings.Join(v.allowed, ", "))
		}
		*v.p = append(*v.p, w)
	}
	return nil
}

func enumSliceFlag(fs *pflag.FlagSet, p *[]string, name string, allowed []string, usage string) {
	fs.Var(&enumSliceValue{p: p, allowed: allowed}, name, usage)
	fs.Lookup(name).DefValue = "" // none: not shown as "(default [])"
}

func orList(w []string) string {
	switch len(w) {
	case 0:
		return "nothing"
	case 1:
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// completeEnums registers, for every flag of c and its subcommands whose
// values are a known list (enumValue, enumSliceValue), those values as the
// flag's shell completions.
func completeEnums(c *cobra.Command) {
	reg := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			var vals []string
			switch v := f.Value.(type) {
			case *enumValue:
				vals = v.allowed
			case *enumSliceValue:
				vals = v.allowed
			default:
				return
			}
			_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return vals, cobra.ShellCompDirectiveNoFileComp
			})
		})
	}
	reg(c.LocalNonPersistentFlags())
	if !c.HasParent() {
		reg(c.PersistentFlags())
	}
	for _, s := range c.Commands() {
		completeEnums(s)
	}
}

// Argument checks worded for people.

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr(c, "needs %s (got %d argument%s)", what, len(args), plural(len(args)))
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr(c, "needs %s", what)
		}
		return nil
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// stdinOnce refuses "-" given more than once: standard input can be read
// only once.
func stdinOnce(c *cobra.Command, args []string) error {
	n := 0
	for _, a := range args {
		if a == "-" {
			n++
		}
	}
	if n > 1 {
		return usageErr(c, "stdin can be read only once: give '-' at most once")
	}
	return nil
}

// newHelpCmd is pk help [COMMAND]: an unknown topic is a usage error (exit
// 2), as an unknown command is.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			var out []string
			if len(args) == 0 {
				for _, s := range c.Root().Commands() {
					if s.IsAvailableCommand() {
						out = append(out, s.Name())
					}
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 || (target == root && len(args) > 0) {
				return usageErr(root, "unknown help topic %q%s", strings.Join(args, " "), suggest(root, args))
			}
			return target.Help()
		},
	}
}

// suggest says which commands a mistyped name may have meant.
func suggest(root *cobra.Command, args []string) string {
	if len(args) == 0 {
		return ""
	}
	s := root.SuggestionsFor(args[0])
	if len(s) == 0 {
		return ""
	}
	return " (did you mean " + orList(s) + "?)"
}
