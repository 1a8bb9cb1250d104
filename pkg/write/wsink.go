package write

import (
	"errors"
	"io"
	"math/big"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The writer sink. A bare pickle file is read through the canon sink
// (canon.EachStreamWrite: pkg/canon/fold.go), which, as the machine
// compacts, encodes each final subtree of plain data hanging off a kept
// list or dict (a row of a table; a dict's entry with a str or bytes key,
// whole) into its canonical encoding and keeps only those bytes, spooled to
// a temporary file; the store keeps one KindFolded node per run. The
// view's digest reads them back, as pk hash's does. The writer takes only
// subtrees it can write back from that encoding alone (foldable: None,
// bools, ints, floats, str and bytes of up to 64 bytes, lists and dicts of
// those, no operations, at most foldDepth levels; an entry's key a str or
// bytes of up to 64 bytes), and at STOP, where the traversal meets a run,
// it decodes the items and writes each exactly as it writes the node it
// stands for: the same opcodes, the same keys for the memo (a str by its
// text, so a value seen again anywhere in the stream is fetched, and one
// seen twice memoized, as before), the same framing events, a dict's
// entries in the order the view gives them (its canonical order, folded
// entries by their keys' embeddings). An identity node in such a subtree
// has one parent and is never fetched again, so its build is not recorded
// (unrecorded, it would not be memoized either). What the sink cannot
// write (a run met while an object is in construction, whose blocking is
// counted by node) gives errNoSink, and any error the file is written
// again without the sink, which gives that error or the same output: the
// output is the same either way.

// foldDepth is the deepest subtree the writer sink takes.
const foldDepth = 64

// errNoSink: the stream cannot be written from its folded runs.
var errNoSink = errors.New("write: the sink cannot write this stream")

// noSink turns the writer sink off (tests compare both ways); sinkRuns
// counts the folded runs the sink wrote (tests).
var (
	noSink   bool
	sinkRuns int
)

// foldable reports whether enc, the canonical encoding of one subtree, is
// one embedding the writer can write back (see above).
func foldable(enc []byte) bool { return canon.PlainEmbedding(enc, foldDepth) }

// sinkStreams writes the streams of the bare pickle file at path through
// the writer sink, appending each to out, its digest to wants and its end
// to ends. ok false: the sink does not apply, or a stream could not be
// written with it (out, wants and ends are then to be discarded).
func sinkStreams(path string, p int, copt canon.Options, out *outBuf, wants *[]byte, ends *[]int) (trail *pickle.Trailing, ok bool) {
	if noSink {
		return nil, false
	}
	dsize := copt.Algo.Size()
	file, ok := canon.EachStreamWrite(path, copt, foldable, func(v *canon.View) error {
		if _, deep := tooDeep(v.Store()); deep {
			return errNoSink
		}
		w, err := newStreamWriter(v, p)
		if err != nil {
			return err
		}
		w.fingerprints = true // (File checks the output)
		if err = w.writeOut(false, out); err != nil {
			return err
		}
		if len(w.want) != dsize {
			return errNoSink
		}
		addStream(wants, ends, w.want, out.Len())
		return nil
	})
	if !ok {
		return nil, false
	}
	return file.Trailing, true
}

// folded writes the items of folded run n (the dict value it stands for).
func (e *emitter) folded(n canon.Ref) error {
	items, rd, ok := n.FoldedItems()
	if !ok {
		return errNoSink
	}
	sinkRuns++
	d := e.decoder(rd)
	for range items {
		if err := d.item(e); err != nil {
			return err
		}
	}
	return nil
}

// fillFolded writes the items of list n, some of them folded runs, from
// index from (0: fill does not postpone a list with runs).
func (e *emitter) fillFolded(n canon.Ref) error {
	if e.ninprog > 0 {
		return errNoSink // (the items' blocking is counted by node)
	}
	kids := n.NItems()
	total := 0
	for i := range kids {
		if c := n.Item(i); c.Kind() == pickle.KindFolded {
			k, _, ok := c.FoldedItems()
			if !ok {
				return errNoSink
			}
			total += k
		} else {
			total++
		}
	}
	kid, left := 0, 0 // the next kid; items left in the run being read
	var d *decoder
	return e.batches(total, pickle.APPEND, pickle.APPENDS, func(int) error {
		if left == 0 {
			if kid >= kids {
				return errNoSink
			}
			c := n.Item(kid)
			kid++
			if c.Kind() != pickle.KindFolded {
				return e.emit(c)
			}
			k, rd, _ := c.FoldedItems()
			if k == 0 {
				return errNoSink
			}
			sinkRuns++
			d, left = e.decoder(rd), k
		}
		left--
		return d.item(e)
	})
}

// fillFoldedDict writes the entries of dict n, some of them folded runs
// (of values, or of whole entries), in canonical order.
func (e *emitter) fillFoldedDict(n canon.Ref) error {
	if e.ninprog > 0 {
		return errNoSink
	}
	ents, ok := n.FoldedEntries()
	if !ok {
		return errNoSink
	}
	return e.batches(len(ents), pickle.SETITEM, pickle.SETITEMS, func(i int) error {
		en := ents[i]
		if en.Key.ID() < 0 {
			rd, ok := en.Key.FoldedEntry()
			if !ok {
				return errNoSink
			}
			sinkRuns++
			d := e.decoder(rd)
			if err := d.item(e); err != nil {
				return err
			}
			return d.item(e)
		}
		if err := e.emit(en.Key); err != nil {
			return err
		}
		return e.emit(en.Value)
	})
}

// decoder reads the embeddings of a folded run.
type decoder struct {
	canon.EmbReader
	x big.Int
}

func (e *emitter) decoder(rd io.Reader) *decoder {
	if e.dec == nil {
		e.dec = &decoder{}
	}
	e.dec.Reset(rd)
	return e.dec
}

// item writes the next embedding as emit writes the node it stands for.
func (d *decoder) item(e *emitter) error {
	em, err := d.Next()
	if err != nil {
		return errNoSink
	}
	switch em.Tag {
	case 's', 'y':
		k := key{id: valueID, v: e.keys.vals.indexTemp(vkey{em.Tag, em.Text})}
		if idx, ok := e.memo.get(k); ok {
			return e.fetch(canon.Ref{}, k, int(idx))
		}
		if err := e.enter(canon.Ref{}); err != nil {
			return err
		}
		if em.Tag == 's' {
			err = e.str(canon.Ref{}, em.Text)
		} else {
			err = e.bytes(canon.Ref{}, em.Text)
		}
		e.depth--
		if err != nil {
			return err
		}
		return e.built(k)
	}
	if err := e.enter(canon.Ref{}); err != nil {
		return err
	}
	defer func() { e.depth-- }()
	switch em.Tag {
	case 'n':
		e.op(pickle.NONE)
	case 'b':
		if em.Bool {
			e.op(pickle.NEWTRUE)
		} else {
			e.op(pickle.NEWFALSE)
		}
	case 'f':
		var b [9]byte
		b[0] = byte(pickle.BINFLOAT)
		copy(b[1:], em.Float[:])
		e.out.write(b[:]...)
	case 'i':
		mag := em.Text
		if len(mag) <= 4 {
			var u int64
			for i := 0; i < len(mag); i++ {
				u = u<<8 | int64(mag[i])
			}
			if em.Neg {
				u = -u
			}
			if e.int32(u) {
				break
			}
		}
		d.x.SetBytes([]byte(mag))
		if em.Neg {
			d.x.Neg(&d.x)
		}
		e.int(&d.x)
	case 'l':
		e.op(pickle.EMPTY_LIST)
		return e.batches(em.Count, pickle.APPEND, pickle.APPENDS, func(int) error { return d.item(e) })
	case 'd':
		e.op(pickle.EMPTY_DICT)
		return e.batches(em.Count, pickle.SETITEM, pickle.SETITEMS, func(int) error {
			if err := d.item(e); err != nil {
				return err
			}
			return d.item(e)
		})
	default:
		return errNoSink
	}
	return nil
}
