package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/pk-tools/pk/pkg/jsonl"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newHashCmd) }

type hashFlags struct {
	recursive, json, explain bool
	keepDictOrder, noProfile bool
	jobs                     int
	algo                     string
	form                     string
	strip                    []string
	zero, tag                bool
	include, exclude         []string
	skipNonPickles           bool
	checkMode                bool
	quiet, status, warn      bool
	strict, ignoreMissing    bool
	noProgress               bool
}

var stripWords = []string{"lineno"}

func newHashCmd() *cobra.Command {
	var f hashFlags
	c := &cobra.Command{
		Use:   "hash [FILE]... | hash --check [SUMS]...",
		Short: "Canonical digest of pickles that survives re-pickling (also run as pkhash)",
		Long: `pk hash prints one "DIGEST  NAME" line per input, as sha256sum does ("-", or
no FILE at all, is stdin). The digest is computed over pk's canonical form
(docs/canonical-form-2.md, pk-canon/2; --form pk1 for docs/canonical-form.md):
the same objects pickled by another process, protocol or pickler hash the
same, numpy arrays in every form numpy and joblib write them; anything that
changes what loading produces or does hashes differently. The digest names
the form, its options and the algorithm: pk2-sha256:HEX.

--check reads such lines back from the SUMS files (none or "-": stdin;
--tag lines too) and prints NAME: OK or NAME: FAILED; it exits 1 when a
digest does not match and 2 when an input cannot be read. The form and
options a digest was made with are read from the digest itself: a stored
pk1-... digest is checked against pk-canon/1.
` + docsLine("pk-hash.md"),
		Args: stdinOnce,
		RunE: func(c *cobra.Command, args []string) error {
			if err := f.validate(c); err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"-"} // as sha256sum: stdin
			}
			if usesStdin(args) {
				watchStdin()
			}
			if f.checkMode {
				return runCheck(c.OutOrStdout(), f, args)
			}
			opt, _ := f.options()
			return runHash(c.OutOrStdout(), f, opt, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.recursive, "recursive", "r", false, "hash every regular file under directory arguments (sorted; symbolic links followed)")
	fl.StringArrayVar(&f.include, "include", nil, "with -r: only files whose name or relative path matches `GLOB` (repeatable)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "with -r: leave out files and directories whose name or relative path matches `GLOB` (repeatable)")
	fl.BoolVar(&f.skipNonPickles, "skip-non-pickles", false, "report inputs that are not pickles as skipped on stderr instead of failing")
	intFlag(fl, &f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), 1, 1024, "inputs hashed in parallel (output stays in argument order)")
	fl.BoolVar(&f.json, "json", false, `JSON Lines, one record per input: {"file","digest","explain":[...]} or {"file","error","offset"} (docs/json.md)`)
	fl.BoolVar(&f.explain, "explain", false, "list what was normalised and where (rule, path, count) after each digest")
	fl.BoolVarP(&f.zero, "zero", "z", false, "end each output line with NUL, not newline, and do not escape names (with --check: SUMS lines end with NUL too)")
	fl.BoolVar(&f.tag, "tag", false, "BSD-style lines: pk2-sha256 (NAME) = HEX")
	fl.BoolVarP(&f.checkMode, "check", "c", false, "read DIGEST  NAME lines from the SUMS arguments ('-' or none: stdin) and verify them")
	fl.BoolVar(&f.ignoreMissing, "ignore-missing", false, "with --check: say nothing of listed files that do not exist")
	fl.BoolVar(&f.quiet, "quiet", false, "with --check: do not print OK lines")
	fl.BoolVar(&f.status, "status", false, "with --check: print nothing, the exit code says it all")
	fl.BoolVarP(&f.warn, "warn", "w", false, "with --check: warn about each improperly formatted line")
	fl.BoolVar(&f.strict, "strict", false, "with --check: exit 1 on improperly formatted lines (as sha256sum; the producer-profile switch is --no-profile)")
	fl.BoolVar(&f.keepDictOrder, "keep-dict-order", false, "do not sort plain dicts: their insertion order counts")
	enumSliceFlag(fl, &f.strip, "strip", stripWords, "also normalise these (repeatable, comma list): lineno")
	fl.BoolVar(&f.noProfile, "no-profile", false, "no producer profile (cloudpickle, dill): only the standard equivalences (digest tag +strict)")
	fl.BoolVar(&f.noProgress, "no-progress", false, progressUsage)
	enumFlag(fl, &f.form, "form", "pk2", []string{"pk2", "pk1"}, "the canonical form: pk2 (pk-canon/2, arrays as values) or pk1 (pk-canon/1, as pk wrote before)")
	enumFlag(fl, &f.algo, "algo", "sha256", []string{"sha256", "xxh3"}, "sha256, or xxh3 (fast, non-cryptographic: trusted input only)")
	return c
}

// validate refuses flags that mean nothing together, as sha256sum does.
func (f hashFlags) validate(c *cobra.Command) error {
	fl := c.Flags()
	if f.checkMode {
		for _, n := range []string{"tag", "recursive", "explain", "include", "exclude", "skip-non-pickles"} {
			if fl.Changed(n) {
				return usageErr(c, "--%s is meaningless with --check", n)
			}
		}
	} else {
		if f.strict {
			return usageErr(c, "--strict is meaningful only with --check (it refuses improperly formatted SUMS lines, as in sha256sum); the switch for no producer profile is now --no-profile")
		}
		for _, n := range []string{"ignore-missing", "quiet", "status", "warn"} {
			if fl.Changed(n) {
				return usageErr(c, "--%s is meaningful only with --check", n)
			}
		}
	}
	if !f.recursive {
		for _, n := range []string{"include", "exclude"} {
			if fl.Changed(n) {
				return usageErr(c, "--%s selects files under directories: it needs -r", n)
			}
		}
	}
	for _, g := range append(append([]string(nil), f.include...), f.exclude...) {
		if _, err := filepath.Match(g, ""); err != nil {
			return usageErr(c, "invalid glob %q: %v", g, err)
		}
	}
	if f.json && (f.zero || f.tag) {
		return usageErr(c, "--json writes JSON lines: -z and --tag do not apply")
	}
	return nil
}

func (f hashFlags) options() (canon.Options, error) {
	a, err := canon.ParseAlgo(f.algo)
	if err != nil {
		return canon.Options{}, err
	}
	// paths of the normalisations cost a second walk of the graph: only
	// --explain prints them
	o := canon.Options{Form: canon.Current, Algo: a, Strict: f.noProfile, KeepDictOrder: f.keepDictOrder, NoPaths: !f.explain}
	if f.form == "pk1" {
		o.Form = canon.Form1
	}
	for _, s := range f.strip {
		switch strings.TrimSpace(s) {
		case "lineno":
			o.StripLineno = true
		case "":
		default:
			return o, fmt.Errorf("--strip: unknown %q (known: lineno)", s)
		}
	}
	return o, nil
}

type hashJob struct {
	name string
	opt  canon.Options
	res  *canon.Result
	err  error
	done chan struct{}
}

// hashAll hashes jobs with n workers; each job's done closes when ready.
func hashAll(jobs []*hashJob, n int) {
	if n < 1 {
		n = 1
	}
	ch := make(chan *hashJob)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				j.res, j.err = hashOne(j.name, j.opt)
				close(j.done)
			}
		}()
	}
	go func() {
		for _, j := range jobs {
			ch <- j
		}
		close(ch)
		wg.Wait()
	}()
}

func hashOne(name string, opt canon.Options) (*canon.Result, error) {
	if name != "-" {
		if fi, err := os.Stat(name); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%w (use -r to hash the files under it)", input.DirError(name))
		}
	}
	res, err := canon.HashFile(name, opt)
	return res, explain(err)
}

// escapeName escapes a name as sha256sum does ("\\" and newlines; the line
// then starts with a backslash); -z writes names as they are.
func escapeName(name string, zero bool) (string, bool) {
	if zero || !strings.ContainsAny(name, "\\\n\r") {
		return name, false
	}
	r := strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r")
	return r.Replace(name), true
}

type jsonNorm struct {
	Rule   string `json:"rule"`
	Path   string `json:"path"`
	Count  int    `json:"count"`
	Offset int64  `json:"offset"`
}

// jsonHash is a record of hash --json (docs/schema/hash.schema.json): a
// digest, or with --check a status.
type jsonHash struct {
	File    string      `json:"file"`
	Digest  string      `json:"digest,omitempty"`
	Status  string      `json:"status,omitempty"`
	Explain *[]jsonNorm `json:"explain,omitempty"`
}

// jsonHashError is the record of an input hash could not read
// (jsonl.Error; "status":"skipped" with --skip-non-pickles).
type jsonHashError struct {
	jsonl.Error
	Status string `json:"status,omitempty"`
}

func explainOf(r *canon.Result) []jsonNorm {
	out := []jsonNorm{}
	for _, a := range r.Applied {
		out = append(out, jsonNorm{a.Rule, a.Path, a.Count, a.Offset})
	}
	return out
}

// notPickle reports whether err says that the input is not a pickle at all
// (what --skip-non-pickles passes over).
func notPickle(err error) bool {
	var np *input.NotPickleError
	return errors.As(err, &np)
}

// digestLine writes one output line: "DIGEST  NAME" or, with --tag,
// "FORM (NAME) = HEX"; NUL-terminated with -z.
func digestLine(w io.Writer, f hashFlags, digest, name string) {
	n, esc := escapeName(name, f.zero)
	if esc {
		io.WriteString(w, "\\")
	}
	if f.tag {
		form, hex, _ := strings.Cut(digest, ":")
		fmt.Fprintf(w, "%s (%s) = %s", form, n, hex)
	} else {
		fmt.Fprintf(w, "%s  %s", digest, n)
	}
	w.Write(lineEnd(f.zero))
}

func lineEnd(zero bool) []byte {
	if zero {
		return []byte{0}
	}
	return []byte{'\n'}
}

func runHash(w io.Writer, f hashFlags, opt canon.Options, args []string) error {
	names, werrs, notes := expand(args, f)
	trouble := false
	for _, e := range werrs {
		fmt.Fprintf(os.Stderr, "pk: %v\n", e)
		trouble = true
	}
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "pk: %s\n", n)
	}
	jobs := make([]*hashJob, len(names))
	for i, n := range names {
		jobs[i] = &hashJob{name: n, opt: opt, done: make(chan struct{})}
	}
	// progress: files done of several inputs, a spinner for one
	prog := newFilesProgress(os.Stderr, f.noProgress, "pk hash", names)
	defer prog.Done()
	ew := prog.Writer(os.Stderr)
	hashAll(jobs, f.jobs)
	bw := bufio.NewWriter(prog.Writer(w))
	defer bw.Flush()
	enc := jsonl.NewEncoder(bw)
	dim := color.New(color.Faint)
	for _, j := range jobs {
		<-j.done
		prog.Add(1)
		if j.err != nil {
			skip := f.skipNonPickles && notPickle(j.err)
			if f.json {
				o := jsonHashError{Error: jsonl.ErrorRecord(j.name, j.err)}
				if skip {
					o.Status = "skipped"
				}
				enc.Encode(o)
			}
			bw.Flush()
			if skip {
				fmt.Fprintf(ew, "pk: skipped: %v\n", j.err)
				continue
			}
			trouble = true
			fmt.Fprintf(ew, "pk: %v\n", j.err)
			continue
		}
		if f.json {
			o := jsonHash{File: j.name, Digest: j.res.Digest}
			if f.explain {
				e := explainOf(j.res)
				o.Explain = &e
			}
			enc.Encode(o)
			continue
		}
		digestLine(bw, f, j.res.Digest, j.name)
		if f.explain {
			for _, a := range j.res.Applied {
				dim.Fprintf(bw, "  %s\t%s\t%d", a.Rule, a.Path, a.Count)
				bw.Write(lineEnd(f.zero))
			}
		}
	}
	if trouble {
		return Exit(ExitTrouble)
	}
	return nil
}
