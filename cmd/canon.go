package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pk-tools/pk/pkg/write"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newCanonCmd) }

type canonFlags struct {
	out           string
	list          bool
	protocol      int
	keepDictOrder bool
	json          bool
}

type jsonCanon struct {
	Name      string `json:"name"`
	Output    string `json:"output,omitempty"`
	Size      *int   `json:"size,omitempty"`
	Canonical *bool  `json:"canonical,omitempty"`
	Error     string `json:"error,omitempty"`
}

func newCanonCmd() *cobra.Command {
	var f canonFlags
	c := &cobra.Command{
		Use:   "canon IN [-o OUT] | canon -l FILE...",
		Short: "Write the canonical pickle of an input: same pk hash, same bytes",
		Long: `pk canon writes the canonical pickle of IN ("-": stdin) to OUT (-o; default
stdout): a pickle whose bytes depend only on pk hash's canonical form of IN
(pk-canon/2, docs/canonical-form-2.md) and on --protocol and --keep-dict-order,
so two inputs with the same pk hash give byte-identical outputs, a numpy
array pickled at any protocol or by joblib included (each array is written
in numpy's own form for --protocol). Its pk hash is IN's, and pk canon of it
gives it back byte for byte. cloudpickle class tracker ids become digests of
the class's content.

Bare pickles and compressed ones (written back in the same compression with
fixed settings) are written; joblib files and .npy object arrays are written
as the canonical pickle of their arrays (joblib.load and np.load load it);
torch.save files (zip and legacy) become one canonical torch.save zip; a
.npy file of plain data the .npy file numpy.save writes for its array. What
pk canon cannot reproduce faithfully (the cases docs/pk-canon.md lists) is
refused with one line naming the file, offset and reason, and nothing is
written (exit 2).

-l lists the FILEs that are not canonical already, as gofmt -l does: exit 0
when none is listed, 1 when some are, 2 when a file cannot be read or is
refused. The output is compared with the file as it is written, up to the
first difference: a FILE is not held in memory ("-" is read whole).

--json: with -l, one line per FILE, {"name","canonical"} or {"name","error"};
when writing (which then needs -o), {"name","output","size"} or
{"name","error"}.
` + docsLine("pk-canon.md"),
		Args: stdinOnce,
		RunE: func(c *cobra.Command, args []string) error {
			opt := write.Options{Protocol: f.protocol, KeepDictOrder: f.keepDictOrder}
			if usesStdin(args) {
				watchStdin()
			}
			if f.list {
				if c.Flags().Changed("output") {
					return usageErr(c, "-l lists files; it writes none: -o does not apply")
				}
				if len(args) == 0 {
					return usageErr(c, "-l needs at least one FILE")
				}
				return runCanonList(c, args, opt, f.json)
			}
			if len(args) != 1 {
				return usageErr(c, "needs one input, IN ('-' for stdin; got %d arguments)", len(args))
			}
			if f.json && (f.out == "" || f.out == "-") {
				return usageErr(c, "--json writes JSON lines: without -l it needs -o OUT (stdout would hold the pickle)")
			}
			return runCanon(c, args[0], f.out, opt, f.json)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.out, "output", "o", "", "write to `OUT` (replaced only once the whole output is ready) instead of stdout")
	fl.BoolVarP(&f.list, "list", "l", false, "list the FILEs that are not canonical already (exit 1 when any is)")
	intFlag(fl, &f.protocol, "protocol", "", write.DefaultProtocol, write.MinProtocol, write.MaxProtocol, "pickle protocol of the output, 2 to 5")
	fl.BoolVar(&f.keepDictOrder, "keep-dict-order", false, "plain dicts keep their insertion order (the output then matches pk hash --keep-dict-order)")
	fl.BoolVar(&f.json, "json", false, `JSON lines: {"name","canonical"} with -l, {"name","output","size"} with -o, {"name","error"}`)
	return c
}

func runCanon(c *cobra.Command, in, out string, opt write.Options, asJSON bool) error {
	res, err := write.File(in, opt, false)
	if err != nil {
		if asJSON {
			json.NewEncoder(c.OutOrStdout()).Encode(jsonCanon{Name: in, Error: explain(err).Error()})
		}
		return &ExitError{Code: ExitTrouble, Err: explain(err)}
	}
	defer res.Close() // (a large .npy output is spooled to a temporary file)
	size := int(res.Size())
	if out == "" || out == "-" {
		if _, err := res.WriteTo(c.OutOrStdout()); err != nil {
			return &ExitError{Code: ExitTrouble, Err: err}
		}
		return nil
	}
	if fi, err := os.Stat(out); err == nil {
		real, rerr := filepath.EvalSymlinks(out)
		written := func(werr error) error {
			if werr != nil {
				return &ExitError{Code: ExitTrouble, Err: werr}
			}
			return canonDone(c, in, out, size, asJSON)
		}
		if so, serr := os.Stdout.Stat(); serr == nil && os.SameFile(fi, so) {
			// pk's own standard output (-o /dev/stdout, /dev/fd/1),
			// whatever it is (a file opened to append, a file no name
			// reaches any more): written as -o - writes it
			_, werr := res.WriteTo(c.OutOrStdout())
			return written(werr)
		}
		if !fi.Mode().IsRegular() || rerr != nil || viaDevOrProc(out) {
			// a device or a pipe (-o /dev/null), or a file reached
			// through /dev or /proc (/dev/fd/3): written to as it is;
			// renaming a file over the name would replace the link or
			// the device node itself
			return written(writeTo(out, res))
		}
		out = real // a link to OUT stays a link, to the new file
	}
	mode := os.FileMode(0o644) // as a new file; an existing OUT keeps its mode
	if fi, err := os.Stat(out); err == nil {
		mode = fi.Mode().Perm()
	}
	if res.RenameTo(out, mode) {
		// a large output already in a file of its own, renamed over OUT
		return canonDone(c, in, out, size, asJSON)
	}
	// a temporary file next to OUT, renamed over it: OUT is never half
	// written
	tmp, err := os.CreateTemp(filepath.Dir(out), ".pk-canon-*")
	if err != nil {
		// (the user's name, not the temporary file's: "create OUT: no such
		// file or directory")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "create", Path: out, Err: pe.Err}
		}
		return &ExitError{Code: ExitTrouble, Err: err}
	}
	_, werr := res.WriteTo(tmp)
	if werr == nil {
		werr = tmp.Chmod(mode)
	}
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), out)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return &ExitError{Code: ExitTrouble, Err: werr}
	}
	return canonDone(c, in, out, size, asJSON)
}

// viaDevOrProc reports whether path, or a symbolic link on the way from it
// to its file, lies under /dev or /proc: names of devices and of open file
// descriptors (/dev/stdout -> /proc/self/fd/1), which pk canon writes
// through and never replaces.
func viaDevOrProc(path string) bool {
	for hop := 0; hop < 40; hop++ {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if strings.HasPrefix(path, "/dev/") || strings.HasPrefix(path, "/proc/") {
			return true
		}
		next, err := os.Readlink(path)
		if err != nil {
			return false // (not a link: the file itself)
		}
		if !filepath.IsAbs(next) {
			next = filepath.Join(filepath.Dir(path), next)
		}
		path = next
	}
	return true // (a loop of links: Stat would have failed; written through)
}

// writeTo writes the output to the file at path, which exists and is not
// to be replaced (a device, a pipe, a name under /dev or /proc).
func writeTo(path string, res *write.Result) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = res.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// canonDone reports a written output (--json).
func canonDone(c *cobra.Command, in, out string, n int, asJSON bool) error {
	if asJSON {
		json.NewEncoder(c.OutOrStdout()).Encode(jsonCanon{Name: in, Output: out, Size: &n})
	}
	return nil
}

func runCanonList(c *cobra.Command, files []string, opt write.Options, asJSON bool) error {
	w := c.OutOrStdout()
	enc := json.NewEncoder(w)
	listed, trouble := false, false
	for _, name := range files {
		res, err := write.File(name, opt, true)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pk: %v\n", explain(err))
			if asJSON {
				enc.Encode(jsonCanon{Name: name, Error: explain(err).Error()})
			}
			trouble = true
			continue
		}
		ok := res.Canonical()
		res.Close()
		if asJSON {
			enc.Encode(jsonCanon{Name: name, Canonical: &ok})
		} else if !ok {
			fmt.Fprintln(w, name)
		}
		listed = listed || !ok
	}
	switch {
	case trouble:
		return Exit(ExitTrouble)
	case listed:
		return Exit(ExitDiffers)
	}
	return nil
}
