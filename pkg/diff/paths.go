package diff

import (
	"encoding/binary"
	"hash/maphash"
	"sort"

	"github.com/pk-tools/pk/pkg/internal/grow"
	ppath "github.com/pk-tools/pk/pkg/path"
)

// Paths of the walk, held as a tree: each is its parent and one edge
// ("[3]", "['key']", ".attr"), so a task a million levels down costs one
// edge, not a string of the whole path; the string is made only for an
// entry (and an alias's first path).
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
} // 16 bytes a level of the walk (24, with a 64-bit sum and the edge's length)

// pathSeed seeds the paths' sums.
var pathSeed = maphash.MakeSeed()

// headEdges is how many edges from the root a path's head keeps (Head):
// the root's and three steps, more than TopPath reads (head, first step,
// and a key under .__dict__).
const headEdges = 4

type pathTable struct {
	// the nodes by ref, in chunks of pathChunk (the first grown to it):
	// one slice doubling as it grew held up to twice the nodes, and the
	// copy beside the old one as it grew (a walk down 400,000 dicts of
	// two keys: 32 MB of room for 17 MB of nodes)
	nodes [][]pathNode
	n     int // how many
	// the nodes' edges, in blocks of edgeBlock or more, each edge whole
	// in one block; an edge's offset counts the bytes of the blocks
	// before its own (a block's unused room is not counted), so an edge
	// ends where the next node's starts, as in one arena
	edges [][]byte
	bases []uint32 // the offset of each block's first byte
	total uint32   // the offset past the last edge
	// with --ignore: for each node and each ignored path, how much of it
	// the path matches (ignState)
	ignore []string
	ign    []int32
}

const (
	pathChunk = 1 << 14 // nodes (256 KiB)
	edgeBlock = 1 << 18 // bytes
)

// node is path r's node.
func (p *pathTable) node(r pathRef) *pathNode { return &p.nodes[r/pathChunk][r%pathChunk] }

// reset empties the table, keeping its first chunk and block.
func (p *pathTable) reset(ignore []string) {
	p.nodes, p.edges, p.bases = p.nodes[:min(len(p.nodes), 1)], p.edges[:min(len(p.edges), 1)], p.bases[:min(len(p.bases), 1)]
	if len(p.nodes) > 0 {
		p.nodes[0] = p.nodes[0][:0]
	}
	if len(p.edges) > 0 {
		p.edges[0] = p.edges[0][:0]
	}
	p.n, p.total, p.ignore, p.ign = 0, 0, ignore, p.ign[:0]
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
	head := pathRef(-1)
	if parent >= 0 {
		switch h := p.node(parent).head; {
		case h >= 0:
			head = h
		case -h < headEdges:
			head = h - 1
		default:
			head = parent
		}
	}
	var h maphash.Hash
	h.SetSeed(pathSeed)
	if parent >= 0 {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], p.node(parent).sum)
		h.Write(b[:])
	}
	h.WriteString(edge)
	at := p.addEdge(edge)
	p.addNode(pathNode{parent: parent, head: head, sum: uint32(h.Sum64()), at: at})
	if len(p.ignore) > 0 {
		for k, ig := range p.ignore {
			m := int32(0)
			if parent >= 0 {
				m = p.ign[int(parent)*len(p.ignore)+k]
			}
			p.ign = append(p.ign, advanceIgnore(m, ig, edge))
		}
	}
	return pathRef(p.n - 1)
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
	if h := p.node(r).head; h >= 0 {
		return p.String(h), false
	}
	return p.String(r), true
}

// Same reports whether two paths are the same string, in constant time
// but when they are (the walk makes a path once, so nearly never for two
// refs: an alias check of two objects first met a million levels down
// built and compared both strings, once a level).
func (p *pathTable) Same(x, y pathRef) bool {
	if x == y {
		return true
	}
	if p.node(x).sum != p.node(y).sum {
		return false
	}
	return p.String(x) == p.String(y)
}

// edge is the last edge of path r (a root's whole path).
func (p *pathTable) edge(r pathRef) []byte {
	at, end := p.node(r).at, p.total
	if int(r)+1 < p.n {
		end = p.node(r + 1).at
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
func (p *pathTable) parent(r pathRef) pathRef { return p.node(r).parent }

// String renders a path.
func (p *pathTable) String(r pathRef) string {
	n := 0
	for x := r; x >= 0; x = p.parent(x) {
		n += len(p.edge(x))
	}
	b := make([]byte, n)
	for x := r; x >= 0; x = p.parent(x) {
		e := p.edge(x)
		n -= len(e)
		copy(b[n:], e)
	}
	return string(b)
}
