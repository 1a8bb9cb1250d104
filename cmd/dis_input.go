package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pk-tools/pk/pkg/dis"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/jsonl"
	"github.com/pk-tools/pk/pkg/pickle"
)

// legacyMagic is the LONG1 argument of torch's legacy magic number
// 0x1950a86a20f9469cfc6c, which a legacy torch.save file starts with.
var legacyMagic = []byte("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")

// needsInput reports whether the file at path must be read through
// pkg/input to be disassembled: a container by its first bytes, a legacy
// torch file, or a joblib file (the class name NumpyArrayWrapper occurs in
// it; its arrays' bytes sit between opcodes). Plain pickles stay on the
// streaming path, which never builds the object graph.
func needsInput(path string, head []byte) bool {
	if !input.PlainPickle(head) || bytes.Contains(head, legacyMagic) {
		return true
	}
	if input.ReadOnce(path) {
		return false // (read once, as stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	const pat = "NumpyArrayWrapper"
	buf := make([]byte, 1<<20+len(pat))
	keep := 0
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], []byte(pat)) {
			return true
		}
		if err != nil {
			return false
		}
		keep = copy(buf, buf[keep+n-len(pat)+1:keep+n])
	}
}

// disInput disassembles every pickle part of a container (torch zip or
// legacy, joblib, compressed pickle, .npy of objects): a header line per
// part, offsets within that part's stream (the zip member, the
// decompressed stream), joblib's array bytes as one @RAW line, raw parts
// (storages, arrays) as one line each.
func disInput(w io.Writer, path string, opt dis.Options) error {
	if ok, err := disCompressed(w, path, opt); ok {
		return err
	}
	doc, err := input.OpenWith(path, pickle.Options{BlobThreshold: opt.BlobThreshold}, input.Options{})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	header := func(i int, p *input.Part, text string) {
		if !opt.Pickletools {
			fmt.Fprintf(bw, "# part %d: %s\n", i, text)
		}
	}
	enc := jsonl.NewEncoder(bw)
	for i := range doc.Parts {
		p := &doc.Parts[i]
		if p.JoblibArray() {
			continue // joblib arrays: shown inside their pickle part
		}
		if p.Raw != nil {
			if opt.JSON {
				r := partRecord{File: path, Record: "part", Part: i, Name: p.Name, Role: string(p.Role), Len: p.Raw.Len, DType: p.Raw.DType, Shape: p.Raw.Shape}
				if r.DType != "" && r.Shape == nil {
					r.Shape = []int64{}
				}
				enc.Encode(r)
			} else {
				header(i, p, fmt.Sprintf("%s (%s): %d bytes of raw data, not a pickle", partName(doc, p), p.Role, p.Raw.Len))
			}
			continue
		}
		if p.Pickle == nil {
			continue
		}
		rc, size, err := doc.OpenPart(i)
		if err != nil {
			return err
		}
		where := "the file"
		switch {
		case doc.Compression != "":
			where = "the " + doc.Compression + "-decompressed stream"
		case strings.Contains(doc.Format, "torch-zip"):
			where = "member " + p.Name
		}
		start := p.Pickle.Streams[0].Offset
		disPartHead(bw, enc, path, opt, i, p, partName(doc, p), doc.Format, len(p.Pickle.Streams), start, size, where)
		gaps := map[int64]dis.Gap{}
		for _, q := range doc.Parts {
			if q.Of == i && q.JoblibArray() && q.Gap[1] > q.Gap[0] {
				gaps[q.Gap[0]] = dis.Gap{Len: q.Gap[1] - q.Gap[0], Pickle: q.Role == input.RoleObjects}
			}
		}
		o := opt
		o.Part = &i
		if len(gaps) > 0 {
			o.GapAfter = func(op *pickle.Op) (dis.Gap, bool) {
				if op.Code != pickle.BUILD {
					return dis.Gap{}, false
				}
				g, ok := gaps[op.Offset+1]
				return g, ok
			}
		}
		rd := pickle.NewReader(rc, size, path)
		if start > 0 {
			rd.Discard(start)
		}
		_, err = dis.RunReader(w, rd, o)
		rc.Close()
		if err != nil {
			return err
		}
		disTrailing(bw, opt, p.Pickle.Trailing)
	}
	for _, n := range doc.Notes {
		if !opt.JSON && !opt.Pickletools {
			fmt.Fprintf(bw, "# note: %s\n", n)
		}
	}
	return nil
}

// partRecord is the record of a part (docs/schema/dis.schema.json).
type partRecord struct {
	File   string  `json:"file"`
	Record string  `json:"record"`
	Part   int     `json:"part"`
	Name   string  `json:"name"`
	Role   string  `json:"role"`
	Len    int64   `json:"len"`
	Start  *int64  `json:"start,omitempty"`
	In     string  `json:"in,omitempty"`
	DType  string  `json:"dtype,omitempty"`
	Shape  []int64 `json:"shape,omitempty"`
}

// disPartHead writes what comes before the opcodes of pickle part i (p),
// named name, of an input of format format: its record (--json) or its
// header line, of streams streams from offset start in size bytes of
// where; then flushes bw.
func disPartHead(bw *bufio.Writer, enc *json.Encoder, path string, opt dis.Options, i int, p *input.Part, name, format string, streams int, start, size int64, where string) {
	if opt.JSON {
		enc.Encode(partRecord{File: path, Record: "part", Part: i, Name: p.Name, Role: string(p.Role), Len: size, Start: &start, In: where})
	} else {
		ns := strconv.Itoa(streams) + " stream"
		if streams != 1 {
			ns += "s"
		}
		if !opt.Pickletools {
			fmt.Fprintf(bw, "# part %d: %s\n", i, fmt.Sprintf("%s (%s, %s): offsets are within %s", name, format, ns, where))
		}
		if start > 0 {
			fmt.Fprintf(bw, "# bytes 0 to %d: header, not pickle\n", start)
		}
	}
	bw.Flush()
}

// disTrailing writes the line of a pickle part's trailing bytes.
func disTrailing(bw *bufio.Writer, opt dis.Options, tr *pickle.Trailing) {
	if tr != nil && !opt.JSON && !opt.Pickletools {
		fmt.Fprintf(bw, "# trailing %d bytes at offset %d of the file: %s\n", tr.Len, tr.Offset, tr.Reason)
	}
}

// disCompressed disassembles a bare pickle file under one layer of
// compression as disInput does from input.Open, without holding its
// streams (Open keeps a store for each, and the whole store of a single
// one: a million pickles of None in 2 KB of gzip took 600 MB, a table of
// 26 MB 345 MB): the file is decompressed once into a temporary file
// (input.SpoolDecompressed), a first pass counts its streams for the
// part's header (disStreams), and the copy is disassembled as a bare file
// is. ok is false when it does not apply (not compressed, joblib or legacy
// torch content, anything the spool or the count refuses, an error):
// disInput then opens the file, which reports what is wrong in input's
// words.
func disCompressed(w io.Writer, path string, opt dis.Options) (ok bool, err error) {
	sp, spooled := input.SpoolDecompressed(path, input.Options{})
	if !spooled {
		return false, nil
	}
	defer sp.Close()
	n, start, size, trailing, counted := disStreams(sp, path, opt)
	if !counted {
		return false, nil
	}
	f, err := os.Open(sp.Path())
	if err != nil {
		return false, nil
	}
	defer f.Close()
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	p := &input.Part{Name: "", Role: input.RolePickle, Of: -1}
	disPartHead(bw, jsonl.NewEncoder(bw), path, opt, 0, p, path, sp.Format(), n, start, size, "the "+sp.Compression+"-decompressed stream")
	o := opt
	zero := 0
	o.Part = &zero
	rd := pickle.NewReader(bufio.NewReaderSize(io.LimitReader(f, size), 256<<10), size, path)
	if start > 0 {
		rd.Discard(start)
	}
	if _, err := dis.RunReader(w, rd, o); err != nil {
		return true, err
	}
	disTrailing(bw, opt, trailing)
	return true, nil
}

// disStreams counts the streams of the spooled copy of path for the
// part's header, as Open counts them (its machine's verdict on each
// stream): n streams from offset start, size bytes with the trailing ones,
// and those as Open words them. The count is dis's own emulator's
// (dis.Count: a stack of offsets, no store), taken when nothing in the
// file could make the machine's verdict or Open's reading differ from it:
// every stream read to its STOP, no trailing bytes, nothing dis.Count
// calls unsure, no str or global name that may be joblib's array wrapper
// (Open reads such a file as joblib) and a first result not made by an
// int opcode (torch's legacy magic number). Else the machine counts them
// (input.EachStream, releasing what is final: disCount), which holds what
// is live: all of a nesting 1.5 million levels deep until its STOP, 256
// MB where dis.Count takes 75. ok is false when neither applies.
func disStreams(sp *input.Spool, path string, opt dis.Options) (n int, start, size int64, trailing *pickle.Trailing, ok bool) {
	if f, err := os.Open(sp.Path()); err == nil {
		wrapper := false
		rd := pickle.NewReader(bufio.NewReaderSize(f, 256<<10), sp.Size, path)
		sum, err := dis.Count(rd, dis.Options{BlobThreshold: opt.BlobThreshold}, func(o *pickle.Op) {
			if strings.Contains(o.Str, "ArrayWrapper") || strings.Contains(o.Name, "ArrayWrapper") {
				wrapper = true
			}
		})
		f.Close()
		switch sum.First {
		case pickle.INT, pickle.LONG, pickle.LONG1, pickle.LONG4:
			wrapper = true // (the root may be the magic number)
		}
		if err == nil && sum.Trailing == nil && !sum.Unsure && !wrapper && sum.Streams > 0 && rd.Offset() == sp.Size {
			return sum.Streams, 0, sp.Size, nil, true
		}
	}
	var end int64
	file, each := input.EachStream(sp.Path(), pickle.Options{NoGraph: true, BlobThreshold: opt.BlobThreshold, Keep: &disCount}, func(st *pickle.Stream) error {
		if n == 0 {
			start = st.Offset
		}
		n++
		end = st.End
		return nil
	})
	if !each || n == 0 {
		return 0, 0, 0, nil, false
	}
	if file.Trailing != nil {
		// the reason the trailing bytes are not a pickle, as Open words it
		// from a reader that does not know the decompressed size ("pickle
		// data was truncated inside the argument", where the spool's
		// reader says "exceeds the 3 bytes left"): read the file again,
		// decompressed as it is read, for it alone
		tf, _, ok := input.EachStreamDecompressed(path, pickle.Options{NoGraph: true, BlobThreshold: opt.BlobThreshold, Keep: &disCount}, input.Options{}, func(*pickle.Stream) error { return nil })
		if !ok || tf.Trailing == nil || tf.Trailing.Offset != file.Trailing.Offset {
			return 0, 0, 0, nil, false
		}
		file.Trailing = tf.Trailing
	}
	size = end // (the part's bytes, as Open's Pickle.Size: its trailing bytes too)
	if tr := file.Trailing; tr != nil {
		size = tr.Offset + tr.Len
	}
	return n, start, size, file.Trailing, true
}

// disCount is what the machine keeps of values for disCompressed's count
// of streams: nothing it reads of them, so that every node is released
// once final (pickle.Keep) and a stream costs what is live, not its store.
var disCount = pickle.Keep{Final: func(*pickle.Store, []pickle.SEvent) bool { return true }}

func partName(doc *input.Doc, p *input.Part) string {
	if p.Name != "" {
		return p.Name
	}
	return doc.Path
}
