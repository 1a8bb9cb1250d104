package cmd

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/dis"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newDisCmd) }

func newDisCmd() *cobra.Command {
	var opt dis.Options
	var full, noProgress bool
	c := &cobra.Command{
		Use:   "dis FILE...",
		Short: "Disassemble pickles opcode by opcode, as python -m pickletools does",
		Long: `pk dis prints every opcode of every pickle stream in each FILE ("-" is
stdin): offset, opcode, argument, indented by MARK nesting, with the memo
slot and the opcode that built the object on PUT/MEMOIZE/GET lines.
Bytes after the last pickle that are not one are reported as trailing.
On a terminal opcode names are in colour (--color). Nothing is executed.
` + docsLine("pk-dis.md"),
		Args: cobra.MatchAll(minArgs(1, "at least one FILE ('-' for stdin)"), stdinOnce),
		RunE: func(c *cobra.Command, args []string) error {
			if full {
				opt.BlobThreshold = math.MaxInt64
			}
			if usesStdin(args) {
				watchStdin()
			}
			o := opt
			noIndent := o.Indent == 0
			if noIndent {
				o.Indent = 1 // pkg/dis indents by one space or more; disWriter takes it out
			}
			colour := !color.NoColor && !o.JSON && !o.Pickletools
			out := newDisWriter(os.Stdout, colour, noIndent && !o.JSON)
			failed := false
			for _, path := range args {
				if len(args) > 1 && !o.JSON && !o.Pickletools {
					fmt.Fprintf(out, "# file %s\n", path)
				}
				if err := disOne(out, path, o, noProgress); err != nil {
					if d, ok := out.(*disWriter); ok {
						d.flush()
					}
					if o.JSON {
						jsonl.NewEncoder(out).Encode(jsonl.ErrorRecord(path, explain(err)))
					}
					fmt.Fprintf(os.Stderr, "pk: %v\n", explain(err))
					failed = true
				}
			}
			if d, ok := out.(*disWriter); ok {
				d.flush()
			}
			if failed {
				return Exit(ExitTrouble)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&opt.JSON, "json", false, `JSON Lines, one record per opcode: {"file","stream","offset","op","arg"} with typed arguments; a bad input is {"file","error","offset"} (docs/json.md)`)
	c.Flags().BoolVar(&opt.Pickletools, "pickletools", false, "print exactly what python -m pickletools prints (first stream only)")
	c.Flags().BoolVar(&full, "full", false, "print large payloads whole instead of shortened")
	c.Flags().BoolVar(&noProgress, "no-progress", false, progressUsage)
	intFlag(c.Flags(), &opt.Indent, "indent", "", 4, 0, 16, "spaces per MARK level (0: none)")
	return c
}

func disOne(w io.Writer, path string, opt dis.Options, noProgress bool) error {
	f := os.Stdin
	size := int64(-1)
	if path != "-" {
		var err error
		f, err = os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return input.DirError(path)
		} else if err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(64)
	if size >= 0 && needsInput(path, head) {
		// containers (dis_input.go): pkg/input opens the path, a spinner
		prog := newProgress(os.Stderr, noProgress, "pk dis "+path, -1, unitFiles)
		defer prog.Done()
		return disInput(prog.Writer(w), path, opt)
	}
	if kind := input.Container(head); kind != "" {
		return fmt.Errorf("%s: a %s file: pk dis reads bare pickle streams; decompress or extract the pickle first (e.g. zcat FILE | pk dis -); pk hash, diff and trace open it", path, kind)
	}
	// progress: the bytes of the input read (size -1 for a pipe: a spinner)
	prog := newProgress(os.Stderr, noProgress, "pk dis "+path, size, unitBytes)
	defer prog.Done()
	_, err := dis.Run(prog.Writer(w), bufio.NewReaderSize(prog.Reader(br), 256<<10), size, path, opt)
	return err
}
