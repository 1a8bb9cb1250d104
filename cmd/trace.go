package cmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
	"github.com/pk-tools/pk/pkg/trace"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newTraceCmd) }

type traceFlags struct {
	json       bool
	noProgress bool
	top        int
	depth      int
	minSize    string
	sort       string
	path       string
	svg        string
	html       string
	bytes      bool
	ascii      bool
	all        bool
	lines      int
	group      bool
	leaves     bool

	boundedView bool   // set by bounded
	cmdName     string // for the warning of a --path that matches nothing
}

// pictures gives the options of the pictures asked for (nil: not asked).
func (f *traceFlags) pictures() (so *trace.SVGOptions, ho *trace.HTMLOptions) {
	if f.svg != "" {
		so = &trace.SVGOptions{}
	}
	if f.html != "" {
		ho = &trace.HTMLOptions{}
	}
	return so, ho
}

// bounded says whether the default view applies: the largest lines of the
// tree within --lines (not with --json, --top, --all, --depth, --min-size,
// an explicit --sort or --lines 0).
func (f *traceFlags) bounded(c *cobra.Command) bool {
	f.boundedView = !f.json && f.top == 0 && !f.all && f.depth < 0 && f.minSize == "" && f.lines > 0 && !c.Flags().Changed("sort")
	return f.boundedView
}

func newTraceCmd() *cobra.Command {
	var f traceFlags
	c := &cobra.Command{
		Use:   "trace [flags] FILE",
		Short: "The object tree with exact byte sizes, dill-trace style (also run as pktrace)",
		Long: `pk trace prints the object tree of a pickle, one line per object, with the
bytes each one takes in the file: inclusive size, share of the file, and the
object's own bytes. Sizes are exact and add up: every byte of the file is
counted once, shared objects where they were built (other appearances are
references, "→ #12"), so the first line is the file's length.

Containers (torch.save zip and legacy files, joblib, compressed pickles,
.npy) are one tree: the root's children are the parts; a torch tensor is
sized with its storage's bytes and a joblib array with its data, so --top
finds the largest tensors by their path (root['layer.weight']). Compressed
inputs are sized decompressed.

  pk trace model.pkl                  the 40 largest lines of the tree, largest first,
                                      the rest of each level on one line ("N more items")
  pk trace --lines 0 model.pkl        the whole tree (small scalars summed per parent)
  pk trace --all model.pkl            the whole tree, every scalar on its own line
  pk trace --top 20 state.pkl         the 20 largest objects with their paths
  pk trace --top 10 --group rows.pkl  the 10 largest path patterns (root[*]['name'])
  pk trace --top 10 --leaves f        the 10 largest objects that hold no other
  pk trace --depth 2 --sort size f    the two upper levels, largest first
  pk trace --path "root['weights']" f one subtree
  pk trace --svg out.svg f            an icicle picture of the bytes
  pk trace --html out.html f          a page to click through the tree

` + docsLine("pk-trace.md") + ` (type codes)`,
		Args: exactArgs(1, "one FILE ('-' for stdin)"),
		RunE: func(c *cobra.Command, args []string) error { return runTrace(c, args[0], &f) },
	}
	fl := c.Flags()
	fl.BoolVar(&f.json, "json", false, "JSON Lines: a summary record, then a record a node (or a --top object, a --group group); a bad input is {\"file\",\"error\",\"offset\"} (docs/json.md)")
	fl.BoolVar(&f.noProgress, "no-progress", false, progressUsage)
	intFlag(fl, &f.top, "top", "", 0, 1, math.MaxInt, "list the N largest objects with their paths instead of the tree")
	intFlag(fl, &f.depth, "depth", "", -1, 0, math.MaxInt, "show N levels of objects below the start, the whole tree to that depth (File and Pk lines use none; default: all)")
	fl.Lookup("depth").DefValue = "" // -1 stands for all levels; it cannot be given
	fl.StringVar(&f.minSize, "min-size", "", "fold children smaller than SIZE (e.g. 10K, 1MiB) into one line")
	enumFlag(fl, &f.sort, "sort", "stream", []string{"stream", "size"}, "order of children in the whole tree: stream or size (the default view is largest first)")
	fl.StringVar(&f.path, "path", "", "start at the object at PATH (as pk trace, pk diff and pk hash --explain print paths, e.g. root['a'][0]; docs/paths.md): a malformed PATH is an error, one that matches nothing a warning")
	fl.StringVar(&f.svg, "svg", "", "write an icicle chart of the bytes to FILE ('-': stdout)")
	fl.StringVar(&f.html, "html", "", "write a self-contained interactive page to FILE ('-': stdout)")
	fl.BoolVar(&f.bytes, "bytes", false, "exact byte counts instead of KiB/MiB")
	fl.BoolVar(&f.ascii, "ascii", false, "draw branches in ASCII (default when the locale is not UTF-8)")
	fl.BoolVar(&f.all, "all", false, "the whole tree, every small scalar and reference on its own line")
	fl.BoolVar(&f.group, "group", false, "with --top: rank path patterns (root[*]['name']: every row's name) by the bytes of all their objects")
	fl.BoolVar(&f.leaves, "leaves", false, "with --top: only objects that hold no other")
	intFlag(fl, &f.lines, "lines", "n", trace.DefaultLines, 0, math.MaxInt, "show the N largest lines of the tree (0: the whole tree)")
	return c
}

func runTrace(c *cobra.Command, path string, f *traceFlags) error {
	if f.path != "" {
		if _, err := ppath.Parse(f.path); err != nil {
			return usageErr(c, "--path: %v", err)
		}
		f.cmdName = displayName(c)
	}
	trouble := func(err error) error {
		err = explain(err)
		if f.json {
			jsonl.NewEncoder(c.OutOrStdout()).Encode(jsonl.ErrorRecord(path, err))
		}
		return &ExitError{Code: ExitTrouble, Err: err}
	}
	opt := trace.Options{Depth: f.depth, All: f.all, SortSize: f.sort == "size"}
	if f.minSize != "" {
		v, err := trace.ParseSize(f.minSize)
		if err != nil {
			return usageErr(c, "invalid value %q for --min-size: %v", f.minSize, err)
		}
		opt.MinSize = v
	}
	if (f.group || f.leaves) && f.top == 0 {
		return usageErr(c, "--group and --leaves go with --top N")
	}
	if path == "-" {
		watchStdin()
	}
	// progress: a spinner while pkg reads the input (it opens the path itself)
	prog := newProgress(c.ErrOrStderr(), f.noProgress, "pk trace "+path, -1, unitFiles)
	defer prog.Done()
	if f.path == "" && f.svg == "" && f.html == "" && !f.bounded(c) && f.top == 0 && !opt.SortSize {
		sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
		if !f.all && f.minSize == "" {
			// the whole tree (--lines 0, --depth D, --json) of plain data:
			// printed as a second streaming pass reaches each line (false: fall back)
			if ok, err := trace.FastWhole(path, c.OutOrStdout(), f.depth, f.json, sty, prog.Done); ok {
				if err != nil {
					return trouble(err)
				}
				return nil
			}
		}
		// a file of several pickles: printed stream by stream; of one,
		// through the whole tree's sink (also --all, --min-size)
		if ok, err := trace.EachWhole(path, c.OutOrStdout(), opt, f.json, sty, prog.Done); ok {
			if err != nil {
				return trouble(err)
			}
			return nil
		}
	}
	if ok, err := traceSpooled(c, path, f, opt, prog); ok {
		return err
	}
	if f.path == "" && f.svg == "" && f.html == "" {
		// plain data: streaming passes, no graph (nil otherwise: fall back)
		var t *trace.Tree
		if f.bounded(c) {
			t = trace.FastBounded(path, f.lines)
		} else if f.top > 0 && !f.group && !f.leaves {
			t = trace.FastTop(path, f.top)
		} else if f.depth >= 0 {
			t = trace.FastDepth(path, f.depth)
		}
		if t != nil {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes})
		}
	}
	if f.path == "" && (f.svg != "" || f.html != "") && f.top == 0 && !f.json && f.depth < 0 {
		// only pictures, from the root, of plain data: one streaming pass
		// keeps the boxes they may draw (nil otherwise: fall back)
		so, ho := f.pictures()
		if t := trace.FastPicture(path, so, ho); t != nil {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes})
		}
		// a bare pickle file: stream by stream, keeping the streams drawn
		if ok, err := trace.EachPicture(path, so, ho, func(t *trace.Tree) error {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes})
		}); ok {
			return err
		}
	}
	f.bounded(c)
	if f.path == "" && f.svg == "" && f.html == "" && (f.boundedView || f.top > 0 && !f.group) {
		// a bare pickle file: stream by stream, keeping only the streams
		// whose lines may be printed (false: anything else, or an error,
		// which the opening below reports)
		sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
		out := func(t *trace.Tree) error {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		}
		var ok bool
		var err error
		if f.boundedView {
			ok, err = trace.EachBounded(path, f.lines, out)
		} else {
			ok, err = trace.EachTop(path, f.top, f.leaves, out)
		}
		if ok {
			return err
		}
	}
	if f.top > 0 && f.group && f.path == "" && f.svg == "" && f.html == "" {
		// a bare pickle file of one stream: the groups of its rows summed
		// as they fold (false: anything else, read whole below)
		sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
		if ok, err := trace.EachGroups(path, f.leaves, func(t *trace.Tree) error {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		}); ok {
			return err
		}
	}
	if f.path != "" && f.top == 0 {
		// a bare pickle file: the rows folded into their sizes but the
		// one at the path (false: anything else, read whole below)
		sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
		lines := 0 // (the default view: only it takes a start with rows folded below)
		if f.boundedView && f.svg == "" && f.html == "" {
			lines = f.lines
		}
		if ok, err := trace.EachPath(path, f.path, lines, nil, func(t *trace.Tree) error {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		}); ok {
			return err
		}
	}
	doc, err := input.OpenWith(path, pickle.Options{}, input.Options{})
	prog.Done()
	if err != nil {
		return trouble(err)
	}
	out := c.OutOrStdout()
	sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
	// one tree for the whole input: a container's parts are the root's
	// children, storages and arrays sized in the objects that hold them
	return traceOne(out, c.ErrOrStderr(), trace.NewDoc(doc), f, opt, sty)
}

// traceSpooled traces a bare pickle under one layer of compression (a
// regular file) in every view, decompressed once into a temporary file
// (input.SpoolDecompressed) that the paths for bare files read as a bare
// file, where they give what input.Open's tree of the compressed file
// prints: --top (without --group), the default view, the whole tree and
// --depth (text and JSON), the pictures from the root (--svg, --html); the
// tree they make is given the user's file name and, but for --top, the
// two lines NewDoc shows above the streams of a compressed file
// (Tree.Compressed); --path (without --top) through trace.EachPath,
// --group through trace.EachGroups, and of one stream --all and
// --min-size through the whole tree's sink. Any other view (--sort size,
// ...), and any of those whose path does not apply, reads the spool as
// Open reads a bare file, into the document Open gives the compressed
// file (Spool.Open), without its decompression's memory. ok is false when
// it does not apply or any of it fails: runTrace then goes on as before
// (and reports an error in input's words).
func traceSpooled(c *cobra.Command, path string, f *traceFlags, opt trace.Options, prog *progress) (ok bool, err error) {
	if path == "-" {
		return false, nil
	}
	f.bounded(c)
	pics := f.svg != "" || f.html != ""
	top := f.top > 0 && !f.group && f.path == "" && !pics
	// (the default view: its budget less the File and part lines leaves
	// the stream's line and its result's)
	view := f.boundedView && f.lines >= 4 && f.path == "" && !pics
	// the whole tree (--lines 0, --depth D, --json; one stream also
	// --all, --min-size) of one stream, or of several streams
	whole := !f.boundedView && f.top == 0 && !opt.SortSize && f.path == "" && !pics
	// --depth D in the other views of the whole tree (--sort size, ...)
	depth := !whole && !f.boundedView && f.top == 0 && f.depth >= 0 && f.path == "" && !pics
	// only the pictures, from the root
	picture := pics && f.top == 0 && !f.json && f.depth < 0 && f.path == ""
	sp, ok := input.SpoolDecompressed(path, input.Options{})
	if !ok {
		return false, nil
	}
	defer sp.Close()
	sty := trace.Style{ASCII: f.ascii || !trace.UTF8Locale(), Bytes: f.bytes}
	if whole {
		// one stream of plain data, else several streams, or one through
		// the whole tree's sink
		if !f.all && f.minSize == "" {
			if ok, err := trace.FastWholeCompressed(sp, c.OutOrStdout(), f.depth, f.json, sty, prog.Done); ok {
				return true, err
			}
		}
		if ok, err := trace.EachWholeCompressed(sp, c.OutOrStdout(), opt, f.json, sty, prog.Done); ok {
			return true, err
		}
		return spooledDoc(c, sp, f, opt, sty, prog)
	}
	var t *trace.Tree
	named := func(t *trace.Tree) bool {
		if top {
			t.File.Name = path
			return true
		}
		return t.Compressed(sp, f.lines)
	}
	switch {
	case view:
		t = trace.FastBounded(sp.Path(), f.lines-2)
	case top && !f.leaves:
		t = trace.FastTop(sp.Path(), f.top)
	case depth:
		if t = trace.FastDepth(sp.Path(), f.depth); t != nil && !t.Compressed(sp, 0) {
			t = nil
		}
		if t != nil {
			prog.Done()
			return true, traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		}
	}
	if t != nil && named(t) {
		prog.Done()
		return true, traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
	}
	out := func(t *trace.Tree) error {
		if !named(t) {
			return errNotNamed
		}
		prog.Done()
		return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
	}
	ok = false
	switch {
	case picture:
		so, ho := f.pictures()
		out := func(t *trace.Tree) error {
			if !t.Compressed(sp, 0) {
				return errNotNamed
			}
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		}
		ok, err = trace.EachPicture(sp.Path(), so, ho, out)
	case view:
		ok, err = trace.EachBounded(sp.Path(), f.lines, out)
	case top:
		ok, err = trace.EachTop(sp.Path(), f.top, f.leaves, out)
	case f.top > 0 && f.group && f.path == "" && !pics:
		// the groups of the rows summed as they fold, in the tree of the
		// compressed file
		ok, err = trace.EachGroups(sp.Path(), f.leaves, out)
	case f.path != "" && f.top == 0:
		// the rows folded but the one at the path, in the tree of the
		// compressed file
		lines := 0 // (the default view: only it takes a start with rows folded below)
		if f.boundedView && !pics {
			lines = f.lines
		}
		ok, err = trace.EachPath(sp.Path(), f.path, lines, func(t *trace.Tree) bool { return t.Compressed(sp, 0) }, func(t *trace.Tree) error {
			prog.Done()
			return traceOne(c.OutOrStdout(), c.ErrOrStderr(), t, f, opt, sty)
		})
	}
	if ok && err != errNotNamed {
		return true, err
	}
	return spooledDoc(c, sp, f, opt, sty, prog)
}

// spooledDoc traces the document Spool.Open reads from sp (the compressed
// file's, as Open gives it) in any view; false when it cannot.
func spooledDoc(c *cobra.Command, sp *input.Spool, f *traceFlags, opt trace.Options, sty trace.Style, prog *progress) (bool, error) {
	doc, err := sp.Open(pickle.Options{})
	if err != nil {
		return false, nil
	}
	prog.Done()
	return true, traceOne(c.OutOrStdout(), c.ErrOrStderr(), trace.NewDoc(doc), f, opt, sty)
}

// errNotNamed: Tree.Compressed cannot give the compressed file's tree.
var errNotNamed = errors.New("not the compressed file's tree")

func traceOne(out, errOut io.Writer, t *trace.Tree, f *traceFlags, opt trace.Options, sty trace.Style) error {
	trouble := func(err error) error { return &ExitError{Code: ExitTrouble, Err: err} }
	start := t.Root()
	t.Leaves = f.leaves
	if f.path != "" {
		it, elem, err := t.FindElement(f.path)
		var nf *trace.NotFoundError
		if errors.As(err, &nf) {
			// not an error: a warning, nothing printed, the exit status unchanged
			fmt.Fprintf(errOut, "%s: warning: --path %s matches nothing in %s (see --top for paths, docs/paths.md for their grammar)\n", f.cmdName, nf.Path, t.File.Name)
			return nil
		}
		if err != nil {
			return trouble(err)
		}
		start = it
		// an element of an array or a cell of a frame (pk diff's
		// root['w'][3, 7], root['score'][42]): the array that holds it,
		// after a line (a record) saying which element
		t.Element = elem
		if elem != nil && !f.json && f.svg == "" && f.html == "" {
			fmt.Fprintln(out, elem.Line())
		}
	}
	if f.svg != "" {
		if err := writePicture(out, errOut, f.svg, func(w io.Writer) error { return t.WriteSVG(w, start, trace.SVGOptions{}) }); err != nil {
			return trouble(err)
		}
	}
	if f.html != "" {
		if err := writePicture(out, errOut, f.html, func(w io.Writer) error { return t.WriteHTML(w, start, trace.HTMLOptions{}) }); err != nil {
			return trouble(err)
		}
	}
	if (f.svg != "" || f.html != "") && f.top == 0 && !f.json && f.depth < 0 && f.path == "" {
		return nil // the picture was asked for, not the tree
	}
	var err error
	switch {
	case f.top > 0 && f.group && f.json:
		err = t.WriteGroupsJSON(out, f.top, f.leaves)
	case f.top > 0 && f.group:
		err = t.WriteGroups(out, f.top, f.leaves, sty)
	case f.top > 0 && f.json:
		err = t.WriteTopJSON(out, f.top)
	case f.top > 0:
		err = t.WriteTop(out, f.top, sty)
	case f.json:
		err = t.WriteJSON(out, start, opt)
	case f.boundedView:
		err = t.WriteBounded(out, start, max(f.lines, 2), sty)
	default:
		if err = trace.WriteHeader(out, sty); err == nil {
			err = t.WriteText(out, start, opt, sty)
		}
	}
	if err != nil {
		return trouble(err)
	}
	return nil
}

// writePicture writes a picture to name, or to out for "-", and says on
// errOut what it wrote ("wrote trace.svg (12.3 KiB)").
func writePicture(out, errOut io.Writer, name string, fn func(io.Writer) error) error {
	if name == "-" {
		return fn(out)
	}
	if err := writeFile(name, fn); err != nil {
		return err
	}
	if fi, err := os.Stat(name); err == nil {
		fmt.Fprintf(errOut, "wrote %s (%s)\n", name, trace.Human(fi.Size()))
	}
	return nil
}

func writeFile(name string, fn func(io.Writer) error) error {
	fh, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := fn(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
