package trace

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

// EachWhole writes the whole tree (`pk trace --lines 0`, or with
// opt.Depth >= 0 `--depth D`; as text with its column header, or with
// asJSON as JSON Lines) of a bare pickle file of several streams, one
// stream at a time: a
// first read counts the streams (the file's line says how many), a second
// sizes each stream and prints its lines under the file's before the next
// is read. What is held is the largest stream's store and sizes, not the
// file's (a million back-to-back pickles took 1.4 GB on the graph path).
// The output is WriteHeader and WriteText (or WriteJSON) of the graph
// path's tree, byte for byte. A bare pickle file of one stream goes
// through the whole tree's sink instead (sinkWhole, sink_whole.go), text
// and JSON alike, and so does --all and --min-size (opt.All, opt.MinSize),
// which only it takes (not opt.SortSize).
//
// It returns false when it does not apply (stdin, anything but a bare
// pickle file, any error of the first read, a file of one stream that the
// sink does not take: nothing was written, the caller takes the graph
// path, which reports the error);
// begin is called before anything is written. An error with true is one of
// writing, or an input that changed between the reads.
func EachWhole(path string, w io.Writer, opt Options, asJSON bool, sty Style, begin func()) (bool, error) {
	return eachWhole(path, nil, w, opt, asJSON, sty, begin)
}

// EachWholeCompressed is EachWhole (the whole tree, or with depth >= 0
// `--depth depth`) of a compressed bare pickle file of several streams,
// read through its spool sp (input.SpoolDecompressed): what NewDoc's tree
// of the compressed file prints, its File and its pickle part
// (Tree.Compressed) above the streams, which are a level deeper than a
// bare file's (the part uses no level of depth; depth 0 shows the File's
// line alone, as FastWholeCompressed). A file of one stream goes through
// the whole tree's sink (sinkWhole), its tree made the compressed file's
// before it is written.
func EachWholeCompressed(sp *input.Spool, w io.Writer, opt Options, asJSON bool, sty Style, begin func()) (bool, error) {
	return eachWhole(sp.Path(), sp, w, opt, asJSON, sty, begin)
}

func eachWhole(path string, sp *input.Spool, w io.Writer, opt Options, asJSON bool, sty Style, begin func()) (bool, error) {
	size, ok := eachSize(path)
	if !ok || opt.SortSize {
		return false, nil
	}
	depth := opt.Depth
	if !mayHoldTwo(path, size) {
		if noSink {
			return false, nil
		}
		var prep func(*Tree) bool
		if sp != nil {
			// (the tree of the compressed file: its File and part lines
			// above the stream)
			prep = func(t *Tree) bool { return t.Compressed(sp, 0) }
		}
		return sinkWhole(path, size, w, Options{Depth: depth, All: opt.All, MinSize: opt.MinSize}, asJSON, sty, begin, prep)
	}
	if opt.All || opt.MinSize > 0 {
		return false, nil // (a file of several streams: the graph path)
	}
	ropt := pickle.Options{NoGraph: true}
	var (
		n     int
		bytes int64
	)
	file, ok := input.EachStream(path, ropt, func(ps *pickle.Stream) error {
		n++
		bytes += ps.Store().Length()
		return nil
	})
	if !ok || n < 2 || file.Size != size || sp != nil && file.Trailing != nil {
		return false, nil // (trailing bytes of a spool: Tree.Compressed)
	}
	if begin != nil {
		begin()
	}
	t := &Tree{File: &pickle.File{Name: path, Size: size, Trailing: file.Trailing}, Total: size}
	t.nStreams, t.streamBytes = n, bytes
	// what NewDoc gives a bare pickle's streams (a tensor label reads a
	// large pickle.dump storage's head again from the file)
	doc := &input.Doc{Path: path, Size: size, Format: "pickle"}
	// a compressed file (sp): its File and part lines above the streams,
	// and every line below a level deeper, under the part (its only line)
	shift := sp != nil && t.Compressed(sp, 0)
	shifted := []bool{true} // the part's flag, then a line's ancestors' and its own
	bw := bufio.NewWriterSize(w, 64<<10)
	g, width := sty.layout()
	var line lineBuf
	visit := func(v *Visit) {
		if shift && v.Depth > 0 {
			// (visits come in pre-order: the flags of the ancestors are
			// in shifted already; one more a line, not a copy of Last,
			// which down a deep stream would cost its depth a line)
			shifted = append(shifted[:v.Depth], v.Last[v.Depth-1])
			x := *v
			x.Depth++
			x.Last = shifted
			v = &x
		}
		if asJSON {
			t.jsonVisit(bw, v)
			return
		}
		line.Reset()
		t.textLine(&line, v, g, width, sty)
		if sty.ASCII {
			bw.WriteString(asciiOnly(line.String()))
		} else {
			bw.Write(line.b)
		}
	}
	if asJSON {
		t.jsonSummary(bw)
	} else {
		writeHeader(&line, width)
		bw.Write(line.b)
	}
	// the file's line: its children are its streams and trailing bytes
	// (wrappers: never summed into a "more" line, and no level of --depth)
	kids := n
	if file.Trailing != nil {
		kids++
	}
	root := Visit{Item: t.Root(), Depth: 0, Last: []bool{}}
	if depth == 0 {
		root.Truncated = true
	} else {
		root.Kids = kids
	}
	if shift && depth == 0 {
		// the File's line alone, truncated (root: the first read read
		// every stream)
		visit(&root)
	} else if shift {
		// the File's only line is the part, whose lines are the streams'
		shift = false
		root.Kids = 1
		visit(&root)
		root = Visit{Item: t.top[0], Depth: 1, Last: []bool{true}, Kids: kids}
		visit(&root)
		shift = true
	} else {
		visit(&root)
	}
	if depth != 0 {
		var scr sizeScratch
		i := 0
		_, ok = input.EachStream(path, ropt, func(ps *pickle.Stream) error {
			if i >= n {
				return errChanged
			}
			s := ps.Store()
			st := sizeStream(s, nil, &scr, nil)
			st.setHead(i)
			st.tree, st.doc = t, doc
			t.Streams = append(t.Streams[:0], st)
			it := Item{Kind: ItemStream, Stream: st, Index: s.Index, Size: s.Length(), Self: s.StreamSelf, pl: noPath}
			if asJSON {
				it.pl = link(nil, "")
			}
			opt := Options{Depth: depth, base: 1, baseLast: i == kids-1, noPaths: !asJSON}
			t.walk(it, opt, visit, nil, false)
			t.Streams = t.Streams[:0]
			i++
			return nil
		})
		if !ok || i != n {
			return true, errors.Join(bw.Flush(), errChanged)
		}
		if tr := file.Trailing; tr != nil {
			it := trailingItem(tr)
			if shift {
				// (a part's trailing bytes: partChildren's line)
				it = t.partChildren(t.top[0])[0]
			}
			visit(&Visit{Item: it, Depth: 1, Last: []bool{true}})
		}
	}
	return true, bw.Flush()
}

// mayHoldTwo reports whether the file at path may hold two pickle streams
// or more: a skim of its opcodes (the reader alone, no machine) meets a
// second STOP. When it does not, EachWhole's first read would count one
// stream or fail, and the caller's graph path would parse the file again:
// a million nested calls were parsed twice (a fifth of pk trace --lines 0
// on them). A skim checks less than a read (not the UTF-8 of short texts,
// nothing of the stack), so it may say yes where the read then says no,
// never the other way.
func mayHoldTwo(path string, size int64) bool {
	if input.ReadOnce(path) {
		return true // (never opened only to look)
	}
	f, err := os.Open(path)
	if err != nil {
		return true // (the read says what is wrong)
	}
	defer f.Close()
	r := pickle.NewReader(f, size, path)
	var buf [1024]pickle.Skimmed
	stops := 0
	for {
		n, err := r.Skim(buf[:])
		for _, o := range buf[:n] {
			if o.Code == pickle.STOP {
				if stops++; stops == 2 {
					return true
				}
			}
		}
		if err != nil {
			return false
		}
	}
}
