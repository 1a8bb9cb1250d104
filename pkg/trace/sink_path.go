package trace

import (
	"encoding/binary"
	"errors"

	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// --path through the top sink (docs/pk-trace.md, "Memory").
//
// Every view of --path PATH prints the object at PATH and what it holds,
// nothing above it: the rest of the file counts only in the sizes. So the
// file is read through the top sink with no candidates (as the pictures'
// sink with nothing drawn): every row of a table folds into its size. At
// STOP the path is looked up in that tree:
//
//   - found, and nothing below the object was folded or released: its
//     view is printed from that tree;
//   - it leads into a folded row (the longest prefix found is a list whose
//     item at the next index a folded run stands for): the file is read
//     once more, and that row, and everything below it, is not folded
//     (by the offset of its node, which pass 1 noted for each root it
//     folded); then looked up again, and printed when found whole;
//   - anything else (not found, found in part, an element of an array, a
//     file of several streams): the caller reads the file without the sink
//     and prints or warns from there, as before.
//
// A file of one stream that the sink does not compact (no table in its
// first records, a state) is the whole store: it prints or warns from
// that tree (but for an element of an array, which the caller finds).
//
// The store then holds what is live, plus the row at PATH whole.

// pathSink is the top sink's part for --path.
type pathSink struct {
	offs []byte         // each folded root's node offset, by sequence number (varint deltas)
	last int64          // the offset last noted
	keep map[int64]bool // the offsets of the roots not folded, with what hangs below them
	gone []uint8        // settle's, at STOP: 2 for the stream's own nodes
}

// note notes the offset of the next root folded.
func (ps *pathSink) note(off int64) {
	ps.offs = binary.AppendVarint(ps.offs, off-ps.last)
	ps.last = off
}

// offset returns the offset noted for folded root seq.
func (ps *pathSink) offset(seq int64) (int64, bool) {
	var v int64
	b := ps.offs
	for i := int64(0); i <= seq; i++ {
		d, k := binary.Varint(b)
		if k <= 0 {
			return 0, false
		}
		v, b = v+d, b[k:]
	}
	return v, true
}

// keeps reports whether root r of s, or one of its owners, is a node the
// sink does not fold.
func (ps *pathSink) keeps(s *pickle.Store, r pickle.ID) bool {
	if len(ps.keep) == 0 {
		return false
	}
	for x, i := r, 0; x != pickle.NoID && i <= s.Len(); x, i = s.Owner(x), i+1 {
		if ps.keep[s.Offset(x)] {
			return true
		}
	}
	return false
}

// errPathWhole: the sink's tree cannot print the view at the path.
var errPathWhole = errors.New("the path is not whole in the sink's tree")

// EachPath reads the bare pickle file at path through the top sink for a
// view printed from the object at p (--path p, without --top) and calls
// out with its tree, when the object is found in it with everything it
// holds (see above). prep, when set, is given the tree before the path is
// looked up (Tree.Compressed: the tree of the compressed file the file at
// path was decompressed from), false when it cannot make it. ok is false
// when the caller must read the file without the sink (as for
// EachBounded); out's error is returned as it is.
//
// lines > 0 says that out prints only the default view of that many lines
// from the object (WriteBounded): the sink is then the default view's
// (sink_bounded.go), and an object with folded rows below it (--path of
// the table itself) is printed when every row folded is below it.
func EachPath(path, p string, lines int, prep func(*Tree) bool, out func(*Tree) error) (ok bool, err error) {
	ok, _, err = eachPath(path, p, lines, prep, out)
	return ok, err
}

// eachPath is EachPath, with the number of reads of the file it made.
func eachPath(path, p string, lines int, prep func(*Tree) bool, out func(*Tree) error) (ok bool, reads int, err error) {
	parsed, err := ppath.Parse(p)
	if noSink || err != nil {
		return false, 0, nil
	}
	var keep map[int64]bool
	for pass := 0; pass < 2; pass++ {
		reads++
		sk := &topSink{path: &pathSink{keep: keep}}
		if lines > 0 {
			sk.n, sk.bview = max(lines, 2), true
		}
		var again int64 = -1
		ok, err := eachTree(path, &boundedKeep{lines: 1}, sk, func(t *Tree) error {
			if t.nStreams != 1 || prep != nil && !prep(t) {
				return errPathWhole // (the tree keeps one stream)
			}
			it, elem, err := t.FindElement(p)
			if sk.num == nil && elem == nil {
				return out(t) // (nothing folded: the whole stream, found or not)
			}
			if err == nil && elem == nil && it.Kind == ItemNode && (whole(it, sk.path.gone) || sk.bview && runsBelow(it)) {
				return out(t)
			}
			if pass == 0 && sk.num != nil {
				again = sk.foldedAt(t, parsed)
			}
			return errPathWhole
		})
		switch {
		case err == errPathWhole && again >= 0:
			keep = map[int64]bool{again: true}
		case err == errPathWhole:
			return false, reads, nil
		default:
			return ok, reads, err
		}
	}
	return false, reads, nil
}

// whole reports whether node it is in its stream with all it owns: no
// folded run or released node below it (gone: settle's, nil when the
// sink folded nothing).
func whole(it Item, gone []uint8) bool {
	st := it.Stream
	if st == nil || it.Node < 0 {
		return false
	}
	s := st.Store
	if gone == nil {
		return s.Kind(it.Node) != pickle.KindFolded
	}
	stack := []pickle.ID{it.Node}
	for n := 0; len(stack) > 0; n++ {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n > s.Len() || gone[x] != 2 || s.Kind(x) == pickle.KindFolded || s.Flags(x)&pickle.FlagReleased != 0 {
			return false
		}
		ok := eachChild(s, x, func(c pickle.ID, _ role, _ bool) bool {
			if c < 0 {
				return false
			}
			if s.Owner(c) == x {
				stack = append(stack, c)
			}
			return true
		})
		if !ok {
			return false
		}
		for _, c := range st.unlisted(x) {
			stack = append(stack, pickle.ID(c))
		}
	}
	return true
}

// runsBelow reports whether every run folded in the stream of node it
// hangs below it.
func runsBelow(it Item) bool {
	st := it.Stream
	if st == nil || it.Node < 0 {
		return false
	}
	s := st.Store
	for id := range pickle.ID(s.Len()) {
		if s.Kind(id) != pickle.KindFolded {
			continue
		}
		x, n := s.Owner(id), 0
		for ; x != pickle.NoID && x != it.Node && n <= s.Len(); x, n = s.Owner(x), n+1 {
		}
		if x != it.Node {
			return false
		}
	}
	return true
}

// foldedAt returns the offset of the folded root that the object at
// parsed is or lies below, when the longest prefix of parsed found in t
// is a list whose item at parsed's next step (an index) a folded run
// stands for; -1 otherwise.
func (sk *topSink) foldedAt(t *Tree, parsed ppath.Path) int64 {
	for k := len(parsed) - 1; k >= 1; k-- {
		x, err := t.find(parsed[:k])
		if err != nil {
			continue
		}
		step := parsed[k]
		if x.Kind != ItemNode || x.Node < 0 || step.Kind != ppath.SKey || step.Value.Kind != ppath.KInt || !step.Value.Int.IsInt64() {
			return -1
		}
		s, i := x.Stream.Store, step.Value.Int.Int64()
		if s.Kind(x.Node) != pickle.KindList {
			return -1
		}
		seq := int64(-1)
		eachChild(s, x.Node, func(c pickle.ID, r role, _ bool) bool {
			if c >= 0 && s.Kind(c) == pickle.KindFolded && s.Owner(c) == x.Node {
				off, _, _, _ := s.FoldedRun(c)
				if first := int64(r.i); i >= first && i < first+int64(runItems(s, c)) {
					seq = off + i - first
				}
			}
			return seq < 0
		})
		if seq < 0 {
			return -1
		}
		off, ok := sk.path.offset(seq)
		if !ok {
			return -1
		}
		return off
	}
	return -1
}
