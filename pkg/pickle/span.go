package pickle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Span is a byte range of a stream that holds whole values, for ParseSpans.
type Span struct {
	Start, End int64
	// MemoCount is the size of the memo at Start (where MEMOIZE stores).
	MemoCount int
	// Keep: ParseSpans returns the values the span leaves on the stack;
	// otherwise the span only defines memo entries for the spans after it.
	Keep bool
}

// ParseSpans is the range mode of the machine: it runs the opcodes of each
// span of the stream in r (size bytes) in order, on one machine whose memo
// carries over from span to span, as if the bytes between the spans were
// not there. Each span must start at an opcode, end where an opcode ends,
// hold no STOP and leave its values on the stack with no MARK open: the
// values a caller knows to be built there (an item of a container, with its
// memo writes; the value a memo entry was set to). A GET must find its
// entry in an earlier span (or earlier in its own). Nodes carry true
// offsets in r and the byte attribution of the whole stream's parse, as
// long as every byte that builds them lies in the spans. The stream
// returned holds its Store only (no graph), with Proto proto and every node
// built (no Root); vals holds, per span with Keep, the IDs of the values it
// left (bottom first). Any error
// is reported as Parse would, or says which span broke these rules.
func ParseSpans(r io.ReaderAt, size int64, name string, proto int, spans []Span, opt Options) (st *Stream, vals [][]ID, err error) {
	m := &machine{s: &Store{Proto: proto, Root: NoID}, project: true}
	if len(spans) > 0 {
		m.s.Begin, m.s.End = spans[0].Start, spans[len(spans)-1].End
		m.start = m.s.Begin
	}
	var br *bufio.Reader
	for i, sp := range spans {
		if sp.Start < 0 || sp.End <= sp.Start || sp.End > size || sp.MemoCount < 0 {
			return nil, nil, &Error{File: name, Offset: sp.Start, Reason: fmt.Sprintf("span %d [%d, %d) is not inside the input", i, sp.Start, sp.End)}
		}
		// only the span's bytes are read (the reader knows the input goes on)
		sec := io.NewSectionReader(r, sp.Start, sp.End-sp.Start)
		if br == nil {
			br = bufio.NewReaderSize(sec, 64<<10)
		} else {
			br.Reset(sec)
		}
		rd := NewReader(br, size, name)
		rd.off = sp.Start
		rd.BlobThreshold = opt.BlobThreshold
		rd.NewHash = opt.NewHash
		m.rd = rd
		m.memo.count = sp.MemoCount
		for rd.Offset() < sp.End {
			if err := rd.next(&m.cur); err != nil {
				if errors.Is(err, io.EOF) {
					err = &Error{File: name, Offset: rd.Offset(), Reason: "pickle data was truncated: input ends inside a span"}
				}
				return nil, nil, err
			}
			m.op = &m.cur
			if m.cur.Code == STOP {
				return nil, nil, m.fail("STOP inside span %d [%d, %d)", i, sp.Start, sp.End)
			}
			if _, err := m.step(m.op); err != nil {
				return nil, nil, err
			}
		}
		if rd.Offset() != sp.End || len(m.marks) > 0 || len(m.stack) == 0 {
			return nil, nil, &Error{File: name, Offset: sp.Start, Reason: fmt.Sprintf("span %d [%d, %d) does not hold whole values (it reads to %d, leaves %d values and %d marks)", i, sp.Start, sp.End, rd.Offset(), len(m.stack), len(m.marks))}
		}
		if sp.Keep {
			out := append([]ID(nil), m.stack...)
			vals = append(vals, out)
		}
		m.stack = m.stack[:0]
	}
	s := m.s
	return &Stream{Index: s.Index, Offset: s.Begin, End: s.End, Proto: s.Proto, store: s}, vals, nil
}
