package cmd

import (
	"bufio"
	"fmt"
	"math"
	"os"

	"github.com/pk-tools/pk/pkg/dis"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newDisCmd) }

func newDisCmd() *cobra.Command {
	var opt dis.Options
	var full bool
	c := &cobra.Command{
		Use:   "dis FILE...",
		Short: "Disassemble pickles opcode by opcode, as python -m pickletools does",
		Long: `pk dis prints every opcode of every pickle stream in each FILE ("-" is
stdin): offset, opcode, argument, indented by MARK nesting, with the memo
slot and the opcode that built the object on PUT/MEMOIZE/GET lines.
Bytes after the last pickle that are not one are reported as trailing.
Nothing is executed. See docs/pk-dis.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if full {
				opt.BlobThreshold = math.MaxInt64
			}
			failed := false
			for _, path := range args {
				if len(args) > 1 && !opt.JSON && !opt.Pickletools {
					fmt.Fprintf(os.Stdout, "# file %s\n", path)
				}
				if err := disOne(path, opt); err != nil {
					fmt.Fprintf(os.Stderr, "pk: %v\n", err)
					failed = true
				}
			}
			if failed {
				return Exit(ExitTrouble)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&opt.JSON, "json", false, `one JSON object per opcode: {"stream":i,"pos":offset,"op":"NAME","arg":typed}`)
	c.Flags().BoolVar(&opt.Pickletools, "pickletools", false, "print exactly what python -m pickletools prints (first stream only)")
	c.Flags().BoolVar(&full, "full", false, "print large payloads whole instead of shortened")
	c.Flags().IntVar(&opt.Indent, "indent", 4, "spaces per MARK level")
	return c
}

func disOne(path string, opt dis.Options) error {
	f := os.Stdin
	size := int64(-1)
	if path != "-" {
		var err error
		f, err = os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(64)
	if size >= 0 && needsInput(path, head) {
		return disInput(os.Stdout, path, opt) // containers: dis_input.go
	}
	if kind := dis.Container(head); kind != "" {
		return fmt.Errorf("%s: a %s file: pk dis reads bare pickle streams; decompress or extract the pickle first (e.g. zcat FILE | pk dis -); pk hash, diff and trace open it", path, kind)
	}
	_, err := dis.Run(os.Stdout, br, size, path, opt)
	return err
}
