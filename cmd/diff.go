package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/pk-tools/pk/pkg/diff"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

type diffFlags struct {
	json, raw             bool
	brief, quiet, stat    bool
	keepDictOrder, strict bool
	max, context          int
	strip, ignore         []string
	allowBadCRC           bool
	form                  string
}

func newDiffCmd() *cobra.Command {
	var f diffFlags
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Semantic diff of two pickles: exit 0 same, 1 different, 2 trouble (also run as pkdiff)",
		Long: `pk diff says whether two pickles are the same thing under pk's canonical form
(the same rules and flags as pk hash: "same" exactly when the digests match),
and, when they are not, lists each difference at a Python-style path
(root['provider'].create.__code__.co_consts[2]) with both sides shown short.

Exit status: 0 same, 1 different, 2 trouble (as diff).
` + docsLine("pk-diff.md"),
		Args: cobra.MatchAll(exactArgs(2, "two inputs, A and B ('-' for stdin, once)"), stdinOnce),
		RunE: func(c *cobra.Command, args []string) error {
			if n := countSet(f.brief, f.quiet, f.json); n > 1 {
				return usageErr(c, "-q/--brief, --quiet and --json are one choice of output: give one")
			}
			if f.stat && f.raw {
				return usageErr(c, "--stat counts the semantic differences; --raw lists opcodes: give one")
			}
			if f.raw && f.json {
				return usageErr(c, "--raw is an opcode listing in text: --json does not apply")
			}
			ignore, err := diff.ParseIgnore(f.ignore)
			if err != nil {
				return usageErr(c, "--ignore: %v", err)
			}
			if usesStdin(args) {
				watchStdin()
			}
			hf := hashFlags{algo: "sha256", form: f.form, noProfile: f.strict, keepDictOrder: f.keepDictOrder, strip: f.strip}
			copt, err := hf.options()
			if err != nil {
				return &ExitError{Code: ExitTrouble, Err: err}
			}
			out := c.OutOrStdout()
			if f.raw {
				return runRawDiff(c, args[0], args[1], f)
			}
			// the entries shown are worded whole, the others only counted
			detail := f.max
			if f.stat || f.brief || f.quiet {
				detail = 1
			}
			res, err := diff.Files(args[0], args[1], diff.Options{Canon: copt, Ignore: ignore, Input: input.Options{AllowBadCRC: f.allowBadCRC}, Detail: detail})
			if err != nil {
				var ie *diff.InputError
				name := ""
				if errors.As(err, &ie) {
					name = args[0]
					if ie.Side == 'b' {
						name = args[1]
					}
					err = pickle.WithFile(ie.Err, name)
				}
				err = explain(err)
				if f.json {
					jsonl.NewEncoder(out).Encode(diff.ErrorRecord{A: args[0], B: args[1], Error: jsonl.ErrorRecord(name, err)})
				}
				return &ExitError{Code: ExitTrouble, Err: err}
			}
			res.A, res.B = args[0], args[1]
			for _, p := range res.Unmatched {
				fmt.Fprintf(c.ErrOrStderr(), "%s: warning: --ignore %s matches nothing in %s or %s\n", displayName(c), p, args[0], args[1])
			}
			if f.brief || f.quiet {
				return briefVerdict(c, f, args[0], args[1], !res.Same)
			}
			if f.stat && f.json {
				if err := res.WriteStatJSON(out); err != nil {
					return &ExitError{Code: ExitTrouble, Err: err}
				}
			} else if f.stat {
				res.WriteStat(out, f.max)
			} else if f.json {
				if err := res.WriteJSON(out, f.max); err != nil {
					return &ExitError{Code: ExitTrouble, Err: err}
				}
			} else {
				res.WriteText(out, f.max)
			}
			if !res.Same {
				return Exit(ExitDiffers)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.json, "json", false, "JSON Lines: one record a difference, then a summary record; a bad input is {\"a\",\"b\",\"file\",\"error\",\"offset\"} (docs/json.md)")
	intFlag(fl, &f.max, "max", "", 50, 0, math.MaxInt, "show at most N differences (0: all); the rest are counted")
	fl.BoolVarP(&f.brief, "brief", "q", false, "as diff -q: only say \"Files A and B differ\" (nothing when they are the same); the exit status as usual")
	fl.BoolVar(&f.quiet, "quiet", false, "as git diff --quiet: print nothing; the exit status only (0 same, 1 different, 2 trouble)")
	fl.BoolVar(&f.stat, "stat", false, "as git diff --stat: the differences counted by kind and by top-level path (root['key'], root.attr, root[*] for a list's items), one row a path (--max rows); with --json one record")
	fl.BoolVar(&f.raw, "raw", false, "an opcode-level unified diff of the two disassemblies, offsets and memo indices taken out")
	intFlag(fl, &f.context, "context", "U", 3, 0, math.MaxInt, "with --raw: lines of context")
	fl.BoolVar(&f.keepDictOrder, "keep-dict-order", false, "as pk hash: plain dicts keep insertion order")
	enumFlag(fl, &f.form, "form", "pk2", []string{"pk2", "pk1"}, "as pk hash: the canonical form that decides \"the same\" (pk2: arrays and tensors as values)")
	enumSliceFlag(fl, &f.strip, "strip", stripWords, "as pk hash: also normalise these (lineno)")
	fl.BoolVar(&f.strict, "no-profile", false, "as pk hash: no producer profile (cloudpickle, dill)")
	fl.BoolVar(&f.strict, "strict", false, "")
	fl.MarkDeprecated("strict", "use --no-profile (pk hash's --strict now means what sha256sum's does)")
	fl.StringArrayVar(&f.ignore, "ignore", nil, "leave out the subtree at PATH (repeatable), e.g. \"root['timestamp']\" (docs/paths.md); a malformed PATH is an error, one that matches nothing a warning")
	fl.BoolVar(&f.allowBadCRC, "allow-bad-crc", false, "read zip members whose CRC does not match, as torch.load does")
	return c
}

// briefVerdict ends a run of -q/--brief or --quiet: GNU diff's one line
// when the inputs differ (-q), nothing at all (--quiet), and the exit status.
func briefVerdict(c *cobra.Command, f diffFlags, a, b string, differ bool) error {
	if !differ {
		return nil
	}
	if f.brief && !f.quiet {
		fmt.Fprintf(c.OutOrStdout(), "Files %s and %s differ\n", a, b)
	}
	return Exit(ExitDiffers)
}

func runRawDiff(c *cobra.Command, a, b string, f diffFlags) error {
	ctx := f.context
	var lists [2][]string
	for i, name := range []string{a, b} {
		doc, err := input.Open(name, pickle.Options{})
		if err != nil {
			return &ExitError{Code: ExitTrouble, Err: explain(pickle.WithFile(err, name))}
		}
		lines, err := rawListing(doc)
		if err != nil {
			return &ExitError{Code: ExitTrouble, Err: explain(pickle.WithFile(err, name))}
		}
		lists[i] = lines
	}
	var buf bytes.Buffer
	differ := diff.WriteUnified(&buf, a, b, lists[0], lists[1], ctx)
	if f.brief || f.quiet {
		return briefVerdict(c, f, a, b, differ)
	}
	if !differ {
		fmt.Fprintf(c.OutOrStdout(), "%s and %s have the same opcodes (apart from offsets, memo indices and frames)\n", a, b)
		return nil
	}
	c.OutOrStdout().Write(buf.Bytes())
	return Exit(ExitDiffers)
}

// rawListing lists the opcodes of every pickle part of a document.
func rawListing(doc *input.Doc) ([]string, error) {
	var lines []string
	for _, p := range doc.Parts {
		if p.Pickle == nil {
			if p.Raw != nil {
				lines = append(lines, fmt.Sprintf("# %s %s: %d bytes", p.Role, p.Name, p.Raw.Len))
			}
			continue
		}
		if len(doc.Parts) > 1 {
			lines = append(lines, "# part "+p.Name)
		}
		r, err := openPart(doc, p)
		if err != nil {
			return nil, err
		}
		l, err := diff.RawLines(r)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}

// openPart re-reads a bare pickle file for --raw; container parts are
// listed from their graph instead.
func openPart(doc *input.Doc, p input.Part) (*pickle.Reader, error) {
	if doc.Format != "pickle" || doc.Path == "-" {
		return nil, fmt.Errorf("--raw reads bare pickle files only (this is %s)", doc.Format)
	}
	f, err := os.Open(doc.Path)
	if err != nil {
		return nil, err
	}
	st, _ := f.Stat()
	return pickle.NewReader(f, st.Size(), doc.Path), nil
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
