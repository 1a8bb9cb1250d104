package diff

import (
	"encoding/binary"
	"hash/maphash"
	"sort"
	"unsafe"

	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
)

// Paths of the walk, held as a tree: each is its parent and one edge
// ("[3]", "['key']", ".attr"), so a task a million levels down costs one
// edge, not a string of the whole path; the string is made only for an
// entry (and an alias's first path). Down a nesting whose levels repeat
// the same few edges (list((x,),): .__reduce__[1], [0], [0] a level) the
// paths are a run (pathRun): a path a level costs nothing more.
type pathRef int32

type pathNode struct {
	parent pathRef // -1 for a root
	// head is the path's ancestor headEdges edges from the root, or
	// -depth for a path of at most headEdges edges
	head pathRef
	// sum is a hash of the path's string (seeded per process: paths that
	// an input chooses cannot be made to collide), so that two paths are
	// compared in constant time (Same); 32 bits, as two equal sums are
	// told apart by their strings
	sum uint32
	// the edge starts at pathTable.edges[at] (the whole path for a root)
	// and ends where the next node's starts (each push adds one edge): one
	// arena, not a string each (a walk down a million levels made two
	// million of them)
	at uint32
} // 16 bytes a path (24, with a 64-bit sum and the edge's length)

// pathRun is a chain of paths, each the child of the one before (the
// first, of parent), whose edges repeat the edges of period nodes (pat:
// path base+k has pat[k%period]'s edge), as a walk down a nesting of the
// same shape pushes them: their refs are base to base+n-1, and a run takes
// the same few words however long it is. A run is only ever extended at
// its last path (push), and only while that path is the table's last;
// the paths of a run share their head (it starts below the head's depth).
// Of its paths' sums it keeps its last one's and the one's before
// (sumOf): the walk asks for no other, as a path is extended or pinned
// (seenPaths keeps it for Same) when its task is taken, while it is its
// run's last (pin: the run then ends there).
type pathRun struct {
	parent, base pathRef
	n            int32
	plain        int32 // the plain nodes before the run
	pat          [maxPeriod]pathRef
	period       int32
	head         pathRef
	sum, prev    uint32 // the last path's sum, the one's before (n > 1)
	closed       bool   // the last path is pinned: the run ends there
}

// maxPeriod is the most edges a run repeats (nest_reduce: 3).
const maxPeriod = 4

// pathSeed seeds the paths' sums.
var pathSeed = maphash.MakeSeed()

// headEdges is how many edges from the root a path's head keeps (Head):
// the root's and three steps, more than TopPath reads (head, first step,
// and a key under .__dict__).
const headEdges = 4

type pathTable struct {
	// the plain nodes (the paths not in a run) in ref order, in chunks of
	// pathChunk (the first grown to it): one slice doubling as it grew
	// held up to twice the nodes, and the copy beside the old one as it
	// grew (a walk down 400,000 dicts of two keys: 32 MB of room for 17 MB
	// of nodes)
	nodes [][]pathNode
	n     int // how many
	refs  int // the paths made: the plain nodes and the runs' paths
	runs  []pathRun
	// the nodes' edges, in blocks of edgeBlock or more, each edge whole
	// in one block; an edge's offset counts the bytes of the blocks
	// before its own (a block's unused room is not counted), so an edge
	// ends where the next node's starts, as in one arena
	edges [][]byte
	bases []uint32 // the offset of each block's first byte
	total uint32   // the offset past the last edge
	// with --ignore: for each node and each ignored path, how much of it
	// the path matches (ignState); no runs are made then (a path is its
	// node)
	ignore []string
	ign    []int32
}

const (
	pathChunk = 1 << 14 // nodes (256 KiB)
	edgeBlock = 1 << 18 // bytes
)

// plainNode is the i-th plain node.
func (p *pathTable) plainNode(i int) *pathNode { return &p.nodes[i/pathChunk][i%pathChunk] }

// find is where path r is: the index of its run (plain -1), else the
// index of its plain node.
func (p *pathTable) find(r pathRef) (run, plain int) {
	if len(p.runs) == 0 || r < p.runs[0].base {
		return -1, int(r) // (no run before it: inlined)
	}
	return p.findRun(r)
}

// inRun reports whether path r is a run's.
func (p *pathTable) inRun(r pathRef) bool {
	run, _ := p.find(r)
	return run >= 0
}

// findRun is find past the first run's base.
func (p *pathTable) findRun(r pathRef) (run, plain int) {
	i := len(p.runs) - 1
	if p.runs[i].base > r {
		i = sort.Search(len(p.runs), func(j int) bool { return p.runs[j].base > r }) - 1
	}
	u := &p.runs[i]
	if r < u.base+pathRef(u.n) {
		return i, -1
	}
	return -1, int(u.plain) + int(r-u.base-pathRef(u.n))
}

// reset empties the table, keeping its first chunk and block.
func (p *pathTable) reset(ignore []string) {
	p.nodes, p.edges, p.bases = p.nodes[:min(len(p.nodes), 1)], p.edges[:min(len(p.edges), 1)], p.bases[:min(len(p.bases), 1)]
	if len(p.nodes) > 0 {
		p.nodes[0] = p.nodes[0][:0]
	}
	if len(p.edges) > 0 {
		p.edges[0] = p.edges[0][:0]
	}
	p.n, p.refs, p.runs, p.total, p.ignore, p.ign = 0, 0, p.runs[:0], 0, ignore, p.ign[:0]
}

// addNode appends a node.
func (p *pathTable) addNode(x pathNode) {
	if k := len(p.nodes); k == 0 || len(p.nodes[k-1]) == pathChunk {
		c := []pathNode(nil)
		if k > 0 {
			c = make([]pathNode, 0, pathChunk)
		}
		p.nodes = append(p.nodes, c)
	}
	c := &p.nodes[len(p.nodes)-1]
	if len(p.nodes) == 1 && cap(*c) < pathChunk {
		*c = grow.Room(*c, 1)
	}
	*c = append(*c, x)
	p.n++
	p.refs++
}

// addEdge appends an edge and returns its offset.
func (p *pathTable) addEdge(edge string) uint32 {
	k := len(p.edges)
	if k == 0 || cap(p.edges[k-1])-len(p.edges[k-1]) < len(edge) && (k > 1 || cap(p.edges[0]) >= edgeBlock) {
		c := []byte(nil)
		if k > 0 {
			c = make([]byte, 0, max(edgeBlock, len(edge)))
		}
		p.edges, p.bases = append(p.edges, c), append(p.bases, p.total)
		k++
	}
	c := &p.edges[k-1]
	if k == 1 && cap(*c)-len(*c) < len(edge) {
		*c = grow.Room(*c, len(edge)) // (the first block grows to edgeBlock)
	}
	*c = append(*c, edge...)
	at := p.total
	p.total += uint32(len(edge))
	return at
}

const (
	ignDiverged int32 = -1 // the path left the ignored path
	ignMatched  int32 = -2 // the path is the ignored path or below it
)

func (p *pathTable) root(s string) pathRef { return p.push(-1, s) }

func (p *pathTable) child(parent pathRef, edge string) pathRef { return p.push(parent, edge) }

func (p *pathTable) push(parent pathRef, edge string) pathRef {
	if r, ok := p.extend(parent, edge); ok {
		return r
	}
	head := pathRef(-1)
	if parent >= 0 {
		switch h := p.headOf(parent); {
		case h >= 0:
			head = h
		case -h < headEdges:
			head = h - 1
		default:
			head = parent
		}
	}
	var sum uint32
	if parent >= 0 {
		sum = p.sumOf(parent)
	}
	if p.startRun(parent, edge, head, sum) {
		return pathRef(p.refs - 1)
	}
	at := p.addEdge(edge)
	p.addNode(pathNode{parent: parent, head: head, sum: pathSum(parent >= 0, sum, edge), at: at})
	if len(p.ignore) > 0 {
		for k, ig := range p.ignore {
			m := int32(0)
			if parent >= 0 {
				m = p.ign[int(parent)*len(p.ignore)+k]
			}
			p.ign = append(p.ign, advanceIgnore(m, ig, edge))
		}
	}
	return pathRef(p.refs - 1)
}

// pathSum is the sum of a path of one more edge than a path whose sum is
// sum (a root: none).
func pathSum(hasParent bool, sum uint32, edge string) uint32 {
	var h maphash.Hash
	h.SetSeed(pathSeed)
	if hasParent {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], sum)
		h.Write(b[:])
	}
	h.WriteString(edge)
	return uint32(h.Sum64())
}

// extend adds the path parent+edge to the last run, when parent is its
// last path, the table's last, and edge the one the run repeats next.
func (p *pathTable) extend(parent pathRef, edge string) (pathRef, bool) {
	if len(p.runs) == 0 || int(parent) != p.refs-1 {
		return 0, false
	}
	u := &p.runs[len(p.runs)-1]
	if u.closed || u.base+pathRef(u.n)-1 != parent || string(p.edge(u.pat[u.n%u.period])) != edge {
		return 0, false
	}
	u.prev, u.sum = u.sum, pathSum(true, u.sum, edge)
	u.n++
	p.refs++
	return pathRef(p.refs - 1), true
}

// startRun starts a run with the path parent+edge (whose head and parent's
// sum push found) when parent is the table's last path, a plain node
// below the head's depth, and edge starts again a period of edges that the
// paths above it have twice (all plain nodes): [0][0] and [0], or
// .__reduce__[1][0][0].__reduce__[1][0][0] and .__reduce__[1]; the
// shortest such period. No runs with --ignore (its state is kept a node).
func (p *pathTable) startRun(parent pathRef, edge string, head pathRef, sum uint32) bool {
	if len(p.ignore) > 0 || parent < 0 || int(parent) != p.refs-1 || head < 0 {
		return false
	}
	// the plain ancestors, parent first, found as the periods tried need
	// them (most pushes fail at the first edge they compare)
	var up [2 * maxPeriod]pathRef
	n := 0
	reach := func(i int) bool {
		for ; n <= i; n++ {
			x := parent
			if n > 0 {
				x = p.parent(up[n-1])
			}
			if x < 0 || p.inRun(x) {
				return false
			}
			up[n] = x
		}
		return true
	}
period:
	for k := 1; k <= maxPeriod; k++ {
		if !reach(k-1) || string(p.edge(up[k-1])) != edge {
			continue
		}
		if !reach(2*k - 1) {
			break
		}
		for j := range k {
			if string(p.edge(up[j])) != string(p.edge(up[j+k])) {
				continue period
			}
		}
		u := pathRun{parent: parent, base: pathRef(p.refs), n: 1, plain: int32(p.n), period: int32(k), head: head, sum: pathSum(true, sum, edge)}
		for j := range k {
			u.pat[j] = up[k-1-j]
		}
		p.runs = append(p.runs, u)
		p.refs++
		return true
	}
	return false
}

// advanceIgnore is how much of the ignored path ig (as pkg/path spells it)
// a path matches after one more edge, when it matched m bytes before:
// ignMatched when the path equals ig or continues it at a step ("[", ".",
// "{", "(", "<"), as path.Under decides on whole strings.
func advanceIgnore(m int32, ig, edge string) int32 {
	if m < 0 {
		return m
	}
	rest := ig[m:]
	if len(rest) <= len(edge) {
		switch {
		case edge[:len(rest)] != rest:
			return ignDiverged
		case len(rest) == len(edge), ppath.StepStart(edge[len(rest)]):
			return ignMatched
		}
		return ignDiverged
	}
	if rest[:len(edge)] == edge {
		return m + int32(len(edge))
	}
	return ignDiverged
}

// ignored reports whether the path is under an ignored path, and marks
// in hit (indexed as p.ignore) the ignored paths it is under.
func (p *pathTable) ignored(r pathRef, hit []bool) bool {
	k := len(p.ignore)
	found := false
	for i, m := range p.ign[int(r)*k : int(r)*k+k] {
		if m == ignMatched {
			found = true
			if hit != nil {
				hit[i] = true
			}
		}
	}
	return found
}

// Head returns the path's first headEdges edges, and whether that is the
// whole path: what an entry past Options.Detail keeps (its string costs
// those edges, not the path's depth).
func (p *pathTable) Head(r pathRef) (string, bool) {
	if h := p.headOf(r); h >= 0 {
		return p.String(h), false
	}
	return p.String(r), true
}

// headOf is path r's head (pathNode.head).
func (p *pathTable) headOf(r pathRef) pathRef {
	if run, i := p.find(r); run >= 0 {
		return p.runs[run].head
	} else {
		return p.plainNode(i).head
	}
}

// sumOf is path r's sum: a run's last path's or the one's before, which
// are the ones push and Same ask for (pathRun); another path of a run is
// hashed again from the run's parent.
func (p *pathTable) sumOf(r pathRef) uint32 {
	run, i := p.find(r)
	if run < 0 {
		return p.plainNode(i).sum
	}
	u := &p.runs[run]
	switch k := r - u.base; {
	case k == pathRef(u.n)-1:
		return u.sum
	case k == pathRef(u.n)-2:
		return u.prev
	default:
		sum := p.sumOf(u.parent)
		for x := u.base; x <= r; x++ {
			sum = pathSum(true, sum, string(p.edge(x)))
		}
		return sum
	}
}

// pin keeps path r for Same (seenPaths): a run's last path ends its run.
func (p *pathTable) pin(r pathRef) {
	if run, _ := p.find(r); run >= 0 && p.runs[run].base+pathRef(p.runs[run].n)-1 == r {
		p.runs[run].closed = true
	}
}

// Same reports whether two paths are the same string, in constant time
// but when they are (the walk makes a path once, so nearly never for two
// refs: an alias check of two objects first met a million levels down
// built and compared both strings, once a level).
func (p *pathTable) Same(x, y pathRef) bool {
	if x == y {
		return true
	}
	if p.sumOf(x) != p.sumOf(y) {
		return false
	}
	return p.String(x) == p.String(y)
}

// edge is the last edge of path r (a root's whole path).
func (p *pathTable) edge(r pathRef) []byte {
	run, i := p.find(r)
	if run >= 0 {
		u := &p.runs[run]
		return p.edge(u.pat[(r-u.base)%pathRef(u.period)])
	}
	at, end := p.plainNode(i).at, p.total
	if i+1 < p.n {
		end = p.plainNode(i + 1).at
	}
	if at == end {
		return nil
	}
	// the block that holds it: the last whose first byte is at or before
	// it (the last block, for the edges the walk pushed last)
	b := len(p.bases) - 1
	if p.bases[b] > at {
		b = sort.Search(len(p.bases), func(i int) bool { return p.bases[i] > at }) - 1
	}
	return p.edges[b][at-p.bases[b] : end-p.bases[b]]
}

// parent is path r's parent (-1 for a root).
func (p *pathTable) parent(r pathRef) pathRef {
	run, i := p.find(r)
	if run < 0 {
		return p.plainNode(i).parent
	}
	if u := &p.runs[run]; r > u.base {
		return r - 1
	}
	return p.runs[run].parent
}

// String renders a path.
func (p *pathTable) String(r pathRef) string { return p.With(r, "") }

// With renders a path and one more edge, in one allocation (a path a
// million levels down is 20 MB: made and copied to a string, then copied
// again with its edge, it took 60).
func (p *pathTable) With(r pathRef, edge string) string {
	n := len(edge)
	for x := r; x >= 0; x = p.parent(x) {
		n += len(p.edge(x))
	}
	b := make([]byte, n)
	n -= copy(b[n-len(edge):], edge)
	for x := r; x >= 0; x = p.parent(x) {
		e := p.edge(x)
		n -= len(e)
		copy(b[n:], e)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)) // (b is not written again)
}
