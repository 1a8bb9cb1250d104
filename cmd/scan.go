package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/scan"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newScanCmd) }

type scanFlags struct {
	json, sarif, recursive, noDefault, quiet bool
	skipNonPickles, noProgress               bool
	allow, policy                            []string
	jobs                                     int
}

func newScanCmd() *cobra.Command {
	var f scanFlags
	c := &cobra.Command{
		Use:   "scan [FILE]...",
		Short: "What loading a pickle would import, call and change, judged against an allowlist",
		Long: `pk scan reads each input (every container pk reads; "-" or no FILE: stdin)
without loading it and lists what loading would do that the allowlist does
not allow: every global it resolves, every call, every object it creates,
every change to an object the pickle did not create, with offset, opcode and
a reason. Each input gets a verdict:

  clean      everything loading does is on the allowlist
  unknown    globals not on it, none known to be dangerous
  code       the file carries code (cloudpickle, dill functions and classes)
  dangerous  a known code-execution, import, I/O or process primitive, or a
             name that cannot be resolved statically
  invalid    bytes CPython refuses or pk cannot read (never clean)

The allowlist is the presets data, numpy and torch, plus --allow presets
(` + strings.Join(scan.PresetNames(), ", ") + `) and --policy files.
Exit status: 0 all inputs clean, 1 any flagged, 2 any invalid.
` + docsLine("pk-scan.md"),
		RunE: func(c *cobra.Command, args []string) error {
			if f.json && f.sarif {
				return usageErr(c, "--json and --sarif are two formats: give one")
			}
			pol, err := f.buildPolicy()
			if err != nil {
				return usageErr(c, "%v", err)
			}
			if len(args) == 0 {
				args = []string{"-"}
			}
			if n := countStdin(args); n > 1 {
				return usageErr(c, "stdin (-) can be read only once")
			} else if n == 1 {
				watchStdin()
			}
			return runScan(c.OutOrStdout(), c.ErrOrStderr(), f, pol, args)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.json, "json", false, `one JSON object per input and line: {"file","verdict","findings":[{"global","role","offset","opcode","reason","severity"}],"error"}`)
	fl.BoolVar(&f.sarif, "sarif", false, "one SARIF 2.1.0 log of all inputs, for code-scanning tools")
	fl.BoolVarP(&f.recursive, "recursive", "r", false, "scan every regular file under directory arguments (sorted)")
	fl.StringArrayVar(&f.allow, "allow", nil, "also allow a preset (repeatable, comma list): "+strings.Join(scan.PresetNames(), ", "))
	fl.StringArrayVar(&f.policy, "policy", nil, "also allow the entries of a policy FILE (repeatable; docs/pk-scan.md)")
	intFlag(fl, &f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), 1, 1024, "inputs scanned in parallel (output stays in argument order)")
	fl.BoolVar(&f.noDefault, "no-default", false, "do not start from the default presets (data, numpy, torch)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdict lines")
	fl.BoolVar(&f.noProgress, "no-progress", false, progressUsage)
	fl.BoolVar(&f.skipNonPickles, "skip-non-pickles", false, "report inputs that are not pickles at all (text, images, empty files) as skipped on stderr instead of invalid")
	return c
}

func countStdin(args []string) int {
	n := 0
	for _, a := range args {
		if a == "-" {
			n++
		}
	}
	return n
}

func (f scanFlags) buildPolicy() (*scan.Policy, error) {
	var presets []string
	if !f.noDefault {
		presets = append(presets, scan.DefaultPresets...)
	}
	for _, a := range f.allow {
		for _, p := range strings.Split(a, ",") {
			if p = strings.TrimSpace(p); p != "" {
				presets = append(presets, p)
			}
		}
	}
	pol, err := scan.NewPolicy(presets...)
	if err != nil {
		return nil, err
	}
	for _, p := range f.policy {
		if err := pol.LoadFile(p); err != nil {
			return nil, err
		}
	}
	return pol, nil
}

// scanInputs lists the inputs: arguments as given, directories walked
// with -r (regular files, sorted by path).
func scanInputs(args []string, recursive bool) []string {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if a == "-" || !recursive || err != nil || !fi.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				found = append(found, p) // reported as invalid when scanned
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				found = append(found, p)
			} else if d.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					found = append(found, p)
				}
			}
			return nil
		})
		sort.Strings(found)
		out = append(out, found...)
	}
	return out
}

func runScan(w, ew io.Writer, f scanFlags, pol *scan.Policy, args []string) error {
	exit := ExitOK
	var all []*scan.Report
	inputs := scanInputs(args, f.recursive)
	// f.jobs inputs are scanned at once; reports are written in input order
	results := make([]chan *scan.Report, len(inputs))
	for i := range results {
		results[i] = make(chan *scan.Report, 1)
	}
	go func() {
		sem := make(chan struct{}, f.jobs)
		for i, name := range inputs {
			sem <- struct{}{}
			go func(i int, name string) {
				defer func() { <-sem }()
				rep := scan.ScanFile(name, pol)
				if rep.Err != nil {
					rep.Err = explain(rep.Err)
					rep.Error = rep.Err.Error()
				}
				results[i] <- rep
			}(i, name)
		}
	}()
	// progress: files done of several inputs, a spinner for one
	prog := newFilesProgress(ew, f.noProgress, "pk scan", inputs)
	defer prog.Done()
	w, ew = prog.Writer(w), prog.Writer(ew)
	enc := jsonl.NewEncoder(w)
	for i := range inputs {
		rep := <-results[i]
		prog.Add(1)
		var np *input.NotPickleError
		if f.skipNonPickles && rep.Err != nil && errors.As(rep.Err, &np) {
			fmt.Fprintf(ew, "pk: skipped: %s\n", rep.Error)
			continue
		}
		switch {
		case rep.Verdict == scan.Invalid:
			exit = ExitTrouble
		case rep.Verdict != scan.Clean && exit == ExitOK:
			exit = ExitDiffers
		}
		if f.sarif {
			all = append(all, rep)
			continue
		}
		if f.json {
			if err := enc.Encode(scanRecord(rep)); err != nil {
				return &ExitError{Code: ExitTrouble, Err: err}
			}
			continue
		}
		writeScanText(w, rep, f.quiet)
	}
	prog.Done()
	if f.sarif {
		if err := scan.WriteSARIF(w, all, Version); err != nil {
			return &ExitError{Code: ExitTrouble, Err: err}
		}
	}
	if exit != ExitOK {
		return Exit(exit)
	}
	return nil
}

func writeScanText(w io.Writer, rep *scan.Report, quiet bool) {
	if !quiet {
		for _, x := range rep.Findings {
			where := rep.File
			if x.Part != "" {
				where += ":" + x.Part
			}
			if x.Stream > 0 {
				where += fmt.Sprintf("#%d", x.Stream)
			}
			g := x.Global
			if g == "" {
				g = "?"
			}
			fmt.Fprintf(w, "%s:%d: %s: %s %s (%s): %s\n", where, x.Offset, x.Severity, x.Role, g, x.Opcode, x.Reason)
		}
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "%s: note: %s\n", rep.File, n)
		}
	}
	counts := map[string]int{}
	for _, x := range rep.Findings {
		counts[x.Severity]++
	}
	var parts []string
	for _, s := range []string{scan.SevDangerous, scan.SevCode, scan.SevUnknown, scan.SevNote} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	line := fmt.Sprintf("%s: %s", rep.File, rep.Verdict)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if rep.Error != "" {
		line += ": " + rep.Error
	}
	fmt.Fprintln(w, line)
}

// scanRecordT is the record of scan --json (docs/schema/scan.schema.json):
// the report, and for an invalid input the offset of the failure (null
// when none applies), as every command's error record has it (pkg/jsonl).
type scanRecordT struct {
	*scan.Report
	Offset json.RawMessage `json:"offset,omitempty"`
}

func scanRecord(rep *scan.Report) scanRecordT {
	r := scanRecordT{Report: rep}
	if rep.Error != "" {
		r.Offset = json.RawMessage("null")
		if o := jsonl.ErrorOffset(rep.Err); o != nil {
			r.Offset = jsonl.AppendInt(nil, *o)
		}
	}
	return r
}
