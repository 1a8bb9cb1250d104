package trace

import (
	"bufio"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The whole view's printer (fast_whole.go): pass 2 decides the lines and
// the printer formats and writes them, on a goroutine of its own, so that
// the formatting runs on a second CPU beside the machine. The lines go in
// batches, each with the scratch store of its lines' nodes; a batch comes
// back to the machine once printed, and is filled again. Each line is
// formatted by the graph path's printer (textLine, jsonVisit), in the
// order pass 2 made them: the output is the bytes a line-by-line printer
// writes.

// wholeBatchLines bounds a batch's lines (and the nodes of its store);
// wholeBatchText its store's text bytes.
const (
	wholeBatchLines = 4096
	wholeBatchText  = 1 << 20
)

// wholeBatches is how many batches go round: one being filled, one being
// printed, one waiting between them.
const wholeBatches = 3

// wholeLine is a line of a batch: its Visit (Last is the printer's),
// whether it is the last among its siblings, and its role when the
// printer spells it.
type wholeLine struct {
	v    Visit
	last bool
	role wRole
}

// wholeBatch is a run of lines and the scratch store of their nodes.
type wholeBatch struct {
	st    *StreamTree
	textN int64 // text bytes in st's store
	lines []wholeLine
	err   error // the printer's first write error, as of this batch's return
}

// wholePrinter formats and writes the batches it is sent, in order.
type wholePrinter struct {
	t     *Tree
	bw    *bufio.Writer
	json  bool
	g     glyphs
	width int
	sty   Style
	full  chan *wholeBatch // to print
	free  chan *wholeBatch // printed, to fill again
	done  chan struct{}    // closed when the printer has returned
	// the printer goroutine's own
	err  error
	line lineBuf
	last []bool // for each depth 1..: was the line there the last of its siblings
	// shift: the lines are that many levels deeper, under as many lines
	// each the last of its siblings (a compressed file's File and part:
	// FastWholeCompressed), whose flags are last's first (setShift)
	shift int
}

// setShift makes the lines n levels deeper (see shift); before any line.
func (p *wholePrinter) setShift(n int) {
	p.shift = n
	p.last = make([]bool, n, n+64)
	for i := range p.last {
		p.last[i] = true
	}
}

// newWholePrinter starts the printer of the stream's lines (proto and the
// stream's own bytes sself, as its scratch stores say them) to bw.
func newWholePrinter(t *Tree, bw *bufio.Writer, asJSON bool, sty Style, proto int, sself int64) *wholePrinter {
	p := &wholePrinter{t: t, bw: bw, json: asJSON, sty: sty,
		full: make(chan *wholeBatch, wholeBatches), free: make(chan *wholeBatch, wholeBatches), done: make(chan struct{})}
	p.g, p.width = sty.layout()
	for range wholeBatches {
		st := &StreamTree{upNode: pickle.NoID, prefix: ppath.Root, rootRole: ppath.Root, tree: t, Store: &pickle.Store{}}
		b := &wholeBatch{st: st, lines: make([]wholeLine, 0, wholeBatchLines)}
		b.reset(t.Total, proto, sself)
		p.free <- b
	}
	go p.run(proto, sself)
	return p
}

// reset empties b, keeping its arrays (the lines left in them are
// overwritten as it fills again).
func (b *wholeBatch) reset(total int64, proto int, sself int64) {
	b.lines = b.lines[:0]
	b.st.Store.Reset()
	b.st.Store.End, b.st.Store.Proto, b.st.Store.StreamSelf = total, proto, sself
	b.st.num, b.st.counts = b.st.num[:0], b.st.counts[:0]
	b.textN = 0
}

// full says whether b has no room for another line or node.
func (b *wholeBatch) full() bool {
	return len(b.lines) >= wholeBatchLines || b.st.Store.Len() >= wholeBatchLines || b.textN >= wholeBatchText
}

// run prints each batch sent, then empties it and sends it back.
func (p *wholePrinter) run(proto int, sself int64) {
	defer close(p.done)
	for b := range p.full {
		for i := range b.lines {
			if p.err == nil {
				p.err = p.print(&b.lines[i])
			}
		}
		b.err = p.err
		b.reset(p.t.Total, proto, sself)
		p.free <- b
	}
}

// print writes the line l.
func (p *wholePrinter) print(l *wholeLine) error {
	v := &l.v
	if v.Depth > 0 {
		p.last = append(p.last[:p.shift+v.Depth-1], l.last)
	}
	v.Last = p.last[:p.shift+v.Depth]
	v.Depth += p.shift
	if l.role.spell {
		v.Role = l.role.str()
	}
	if p.json {
		p.t.jsonVisit(p.bw, v)
		return nil
	}
	p.line.Reset()
	p.t.textLine(&p.line, v, p.g, p.width, p.sty)
	var err error
	if p.sty.ASCII {
		_, err = p.bw.WriteString(asciiOnly(p.line.String()))
	} else {
		_, err = p.bw.Write(p.line.b)
	}
	return err
}

// swap sends b to be printed and returns an empty batch, with the
// printer's write error if one happened.
func (p *wholePrinter) swap(b *wholeBatch) (*wholeBatch, error) {
	p.full <- b
	b = <-p.free
	return b, b.err
}

// close prints b, the last batch, waits for the printer to return, and
// gives its write error.
func (p *wholePrinter) close(b *wholeBatch) error {
	p.full <- b
	close(p.full)
	<-p.done
	return p.err
}
