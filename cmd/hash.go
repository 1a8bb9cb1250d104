package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/fatih/color"
	"github.com/pk-tools/pk/pkg/canon"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newHashCmd) }

type hashFlags struct {
	recursive, json, explain, quiet, status bool
	keepDictOrder, strict                   bool
	jobs                                    int
	check, algo                             string
	checkMode                               bool
	strip                                   []string
}

func newHashCmd() *cobra.Command {
	var f hashFlags
	c := &cobra.Command{
		Use:   "hash FILE... | hash --check [SUMS]",
		Short: "Canonical digest of pickles that survives re-pickling (also run as pkhash)",
		Long: `pk hash prints one "DIGEST  NAME" line per input, as sha256sum does ("-" is
stdin). The digest is computed over pk's canonical form (docs/canonical-form.md):
the same objects pickled by another process, protocol or pickler hash the same;
anything that changes what loading produces or does hashes differently.
The digest names the form, its options and the algorithm: pk1-sha256:<hex>.

--check SUMS reads such lines back and prints NAME: OK or NAME: FAILED; it
exits 1 when a digest does not match and 2 when an input cannot be read.
The options a digest was made with are read from the digest itself.
See docs/pk-hash.md.`,
		RunE: func(c *cobra.Command, args []string) error {
			opt, err := f.options()
			if err != nil {
				return &ExitError{Code: ExitTrouble, Err: err}
			}
			if f.checkMode {
				// as sha256sum -c: the SUMS file is the argument ("-" or none: stdin)
				switch len(args) {
				case 0:
					f.check = "-"
				case 1:
					f.check = args[0]
				default:
					return &ExitError{Code: ExitTrouble, Err: errors.New("--check reads one SUMS file")}
				}
				return runCheck(c.OutOrStdout(), f, nil)
			}
			if len(args) == 0 {
				return &ExitError{Code: ExitTrouble, Err: errors.New("hash: no input (use - for stdin)")}
			}
			return runHash(c.OutOrStdout(), f, opt, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.recursive, "recursive", "r", false, "hash every regular file under directory arguments (sorted)")
	fl.IntVar(&f.jobs, "jobs", runtime.GOMAXPROCS(0), "inputs hashed in parallel (output stays in argument order)")
	fl.BoolVar(&f.json, "json", false, `one JSON object per input: {"name","digest","explain":[...]} or {"name","error"}`)
	fl.BoolVar(&f.explain, "explain", false, "list what was normalised and where (rule, path, count) after each digest")
	fl.BoolVarP(&f.checkMode, "check", "c", false, "read DIGEST  NAME lines from the SUMS argument ('-' or none: stdin) and verify them")
	fl.BoolVar(&f.quiet, "quiet", false, "with --check: do not print OK lines")
	fl.BoolVar(&f.status, "status", false, "with --check: print nothing, the exit code says it all")
	fl.BoolVar(&f.keepDictOrder, "keep-dict-order", false, "do not sort plain dicts: their insertion order counts")
	fl.StringSliceVar(&f.strip, "strip", nil, "also normalise these (repeatable, comma list): lineno")
	fl.BoolVar(&f.strict, "strict", false, "no producer profile (cloudpickle, dill): only the standard equivalences")
	fl.StringVar(&f.algo, "algo", "sha256", "sha256, or xxh3 (fast, non-cryptographic: trusted input only)")
	return c
}

func (f hashFlags) options() (canon.Options, error) {
	a, err := canon.ParseAlgo(f.algo)
	if err != nil {
		return canon.Options{}, err
	}
	o := canon.Options{Algo: a, Strict: f.strict, KeepDictOrder: f.keepDictOrder}
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

// expand lists the inputs: files as given, directories walked with -r.
func expand(args []string, recursive bool) ([]string, []error) {
	var out []string
	var errs []error
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			out = append(out, a)
			continue
		}
		if !recursive {
			out = append(out, a) // reported as a directory when opened
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			if d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errs
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
			return nil, fmt.Errorf("%s: is a directory (use -r)", name)
		}
	}
	return canon.HashFile(name, opt)
}

func escapeName(name string) (string, bool) {
	if !strings.ContainsAny(name, "\\\n\r") {
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

type jsonHash struct {
	Name    string      `json:"name"`
	Digest  string      `json:"digest,omitempty"`
	Status  string      `json:"status,omitempty"`
	Error   string      `json:"error,omitempty"`
	Explain *[]jsonNorm `json:"explain,omitempty"`
}

func explainOf(r *canon.Result) []jsonNorm {
	out := []jsonNorm{}
	for _, a := range r.Applied {
		out = append(out, jsonNorm{a.Rule, a.Path, a.Count, a.Offset})
	}
	return out
}

func runHash(w io.Writer, f hashFlags, opt canon.Options, args []string) error {
	names, werrs := expand(args, f.recursive)
	trouble := false
	for _, e := range werrs {
		fmt.Fprintf(os.Stderr, "pk: %v\n", e)
		trouble = true
	}
	jobs := make([]*hashJob, len(names))
	for i, n := range names {
		jobs[i] = &hashJob{name: n, opt: opt, done: make(chan struct{})}
	}
	hashAll(jobs, f.jobs)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	enc := json.NewEncoder(bw)
	dim := color.New(color.Faint)
	for _, j := range jobs {
		<-j.done
		if j.err != nil {
			trouble = true
			if f.json {
				enc.Encode(jsonHash{Name: j.name, Error: j.err.Error()})
			}
			bw.Flush()
			fmt.Fprintf(os.Stderr, "pk: %v\n", j.err)
			continue
		}
		if f.json {
			o := jsonHash{Name: j.name, Digest: j.res.Digest}
			if f.explain {
				e := explainOf(j.res)
				o.Explain = &e
			}
			enc.Encode(o)
			continue
		}
		name, esc := escapeName(j.name)
		if esc {
			bw.WriteString("\\")
		}
		fmt.Fprintf(bw, "%s  %s\n", j.res.Digest, name)
		if f.explain {
			for _, a := range j.res.Applied {
				dim.Fprintf(bw, "  %s\t%s\t%d\n", a.Rule, a.Path, a.Count)
			}
		}
	}
	if trouble {
		return Exit(ExitTrouble)
	}
	return nil
}

// parseSumLine splits "DIGEST  NAME" (or "DIGEST *NAME"), with sha256sum's
// leading backslash for escaped names.
func parseSumLine(line string) (digest, name string, ok bool) {
	esc := strings.HasPrefix(line, "\\")
	if esc {
		line = line[1:]
	}
	i := strings.IndexByte(line, ' ')
	if i <= 0 || i+2 > len(line) || (line[i+1] != ' ' && line[i+1] != '*') {
		return "", "", false
	}
	digest, name = line[:i], line[i+2:]
	if name == "" {
		return "", "", false
	}
	if esc {
		r := strings.NewReplacer("\\\\", "\\", "\\n", "\n", "\\r", "\r")
		name = r.Replace(name)
	}
	return digest, name, true
}

func runCheck(w io.Writer, f hashFlags, args []string) error {
	var in io.Reader
	if f.check == "-" {
		in = os.Stdin
	} else {
		fh, err := os.Open(f.check)
		if err != nil {
			return &ExitError{Code: ExitTrouble, Err: err}
		}
		defer fh.Close()
		in = fh
	}
	if len(args) > 0 {
		return &ExitError{Code: ExitTrouble, Err: errors.New("--check takes the names from SUMS, not from arguments")}
	}
	type entry struct {
		want string
		vErr error
		job  *hashJob
	}
	var entries []*entry
	var jobs []*hashJob
	bad := 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d, name, ok := parseSumLine(line)
		if !ok {
			bad++
			if !f.status {
				fmt.Fprintf(os.Stderr, "pk: %s: %d: improperly formatted pk hash line\n", f.check, ln)
			}
			continue
		}
		o, hexd, err := canon.ParseDigest(d)
		e := &entry{want: hexd, job: &hashJob{name: name, opt: o, done: make(chan struct{})}}
		if err != nil {
			var ve *canon.VersionError
			if !errors.As(err, &ve) {
				bad++
				if !f.status {
					fmt.Fprintf(os.Stderr, "pk: %s: %d: %v\n", f.check, ln, err)
				}
				continue
			}
			e.vErr = err
			close(e.job.done)
		} else {
			jobs = append(jobs, e.job)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return &ExitError{Code: ExitTrouble, Err: fmt.Errorf("%s: %v", f.check, err)}
	}
	hashAll(jobs, f.jobs)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	enc := json.NewEncoder(bw)
	failed, unread, version := 0, 0, 0
	say := func(name, status string) {
		if f.status {
			return
		}
		if f.json {
			enc.Encode(jsonHash{Name: name, Status: status})
			return
		}
		if status == "OK" && f.quiet {
			return
		}
		n, esc := escapeName(name)
		if esc {
			bw.WriteString("\\")
		}
		switch {
		case status == "OK":
			fmt.Fprintf(bw, "%s: %s\n", n, color.GreenString("OK"))
		default:
			fmt.Fprintf(bw, "%s: %s\n", n, color.RedString("%s", status))
		}
	}
	for _, e := range entries {
		<-e.job.done
		switch {
		case e.vErr != nil:
			version++
			say(e.job.name, "FAILED wrong form version")
			bw.Flush()
			if !f.status {
				fmt.Fprintf(os.Stderr, "pk: %s: %v\n", e.job.name, e.vErr)
			}
		case e.job.err != nil:
			unread++
			say(e.job.name, "FAILED open or read")
			bw.Flush()
			if !f.status {
				fmt.Fprintf(os.Stderr, "pk: %v\n", e.job.err)
			}
		case fmt.Sprintf("%x", e.job.res.Sum) == e.want:
			say(e.job.name, "OK")
		default:
			failed++
			say(e.job.name, "FAILED")
		}
	}
	bw.Flush()
	if !f.status {
		warn := func(n int, one, many string) {
			if n == 1 {
				fmt.Fprintf(os.Stderr, "pk: WARNING: 1 %s\n", one)
			} else if n > 1 {
				fmt.Fprintf(os.Stderr, "pk: WARNING: %d %s\n", n, many)
			}
		}
		warn(bad, "line is improperly formatted", "lines are improperly formatted")
		warn(unread, "listed file could not be read", "listed files could not be read")
		warn(failed, "computed digest did NOT match", "computed digests did NOT match")
		warn(version, "digest is of another form version", "digests are of another form version")
	}
	switch {
	case unread > 0:
		return Exit(ExitTrouble)
	case failed > 0 || version > 0 || (len(entries) == 0 && bad > 0):
		return Exit(ExitDiffers)
	case len(entries) == 0:
		if !f.status {
			fmt.Fprintf(os.Stderr, "pk: %s: no properly formatted pk hash lines found\n", f.check)
		}
		return Exit(ExitDiffers)
	}
	return nil
}
