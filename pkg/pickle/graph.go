package pickle

import (
	"math"
	"math/big"
)

// Kind is what a node of the object graph is.
type Kind uint8

const (
	KindNone      Kind = iota
	KindBool           // Int is 0 or 1
	KindInt            // Int, or X.Big when outside int64
	KindFloat          // Int holds the IEEE-754 bits
	KindStr            // Str is UTF-8 (surrogates kept); X.Blob when streamed
	KindBytes          // Str is the raw bytes; X.Blob when streamed
	KindByteArray      // as KindBytes
	KindList           // Items
	KindTuple          // Items
	KindDict           // Items: key, value, key, value ... in insertion order (duplicates kept)
	KindSet            // Items in stream order
	KindFrozenSet      // Items in stream order
	KindGlobal         // Str module, X.Name name (after the Python 2 name mapping); Items [module, name] for STACK_GLOBAL
	KindCall           // X.Func called with X.Args (and X.Kwargs); Op says how (REDUCE, NEWOBJ, NEWOBJ_EX, INST, OBJ)
	KindPersID         // Str (PERSID) or Items[0] (BINPERSID): resolved by the loader's persistent_load
	KindExt            // Int is the extension code: resolved through copyreg's registry
	KindBuffer         // Int is the index of the out-of-band buffer (NEXT_BUFFER)
	KindFolded         // stores only: a run of items the consumer summarised (Keep.Fold, Store.FoldedRun)
)

var kindNames = [...]string{"none", "bool", "int", "float", "str", "bytes", "bytearray", "list", "tuple", "dict", "set", "frozenset", "global", "call", "persid", "ext", "buffer", "folded"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Immutable reports whether values of kind k cannot change after creation
// (tuples and frozensets count, although their items may be mutable).
func (k Kind) Immutable() bool {
	switch k {
	case KindNone, KindBool, KindInt, KindFloat, KindStr, KindBytes, KindTuple, KindFrozenSet, KindGlobal, KindExt:
		return true
	}
	return false
}

// Flags are facts about a node.
type Flags uint16

const (
	FlagPy2Str      Flags = 1 << iota // str from a Python 2 STRING/BINSTRING/SHORT_BINSTRING (Latin-1 decoded)
	FlagReadOnly                      // READONLY_BUFFER was applied
	FlagDynamic                       // STACK_GLOBAL whose operands are not both literal str
	FlagDotted                        // a dotted global name read at protocol < 4 (CPython does not resolve it)
	FlagMapped                        // global renamed by the Python 2 → 3 mapping (protocol < 3)
	FlagMemo                          // stored in the memo at least once
	FlagShared                        // referenced again after it was built (GET or DUP): one object, several places
	FlagReleased                      // stands for what the machine released (Options.Keep): a stub, or a node whose items were cut
	FlagUser1                         // free for the store's consumer (pk scan marks what it explained); kept through compaction
	FlagUser2                         // as FlagUser1
	FlagHasFolded                     // a list or dict some of whose items are KindFolded runs (Store.ItemCount)
	FlagFoldEffects                   // a KindFolded run that holds calls, operations or globals (Folded.Effects)
	FlagFoldEntries                   // a KindFolded run of a dict's entries, keys and values (Store.FoldedRun)
	FlagFoldArgs                      // a KindFolded node in the place of a call's argument tuple (Keep.FoldArgs)

	// flagsPublic is one past the last flag above: a flag added there that
	// reaches the store's own flagExt (1 << 15) fails to compile (store.go)
	flagsPublic
)

// Node is one object of the graph. Shared objects are one node with several
// parents; cycles are allowed.
type Node struct {
	Kind   Kind
	Op     Opcode // the opcode that created the node
	Flags  Flags
	ID     int32 // index in Stream.All
	Offset int64 // offset of the creating opcode
	// Self is the number of stream bytes attributed to this node (see
	// docs/reader.md): its own opcodes and arguments, the MARKs, memo
	// writes and container opcodes that built it, and the GETs it holds.
	Self  int64
	Int   int64
	Str   string
	Items []*Node
	// Owner is the node that consumed this node where it was built (its
	// parent in the ownership tree); nil for the stream's top nodes.
	Owner *Node
	X     *Extra
}

// Extra holds what few nodes need.
type Extra struct {
	Big    *big.Int
	Name   string // global name
	Func   *Node  // callable (REDUCE), class (NEWOBJ, NEWOBJ_EX, INST, OBJ)
	Args   *Node  // argument tuple
	Kwargs *Node  // NEWOBJ_EX keyword arguments
	Muts   []Mut  // BUILD states and container operations on non-builtin targets, in stream order
	Blob   *Blob  // streamed payload of a large str/bytes/bytearray
}

// Mut is one operation applied to an existing object that is not a plain
// list/dict/set: BUILD (setstate), APPEND(S) (append/extend), SETITEM(S)
// (__setitem__), ADDITEMS (add).
type Mut struct {
	Op     Opcode
	Offset int64
	Args   []*Node // BUILD: [state]; APPEND(S)/ADDITEMS: items; SETITEM(S): key, value, ...
}

// Name returns the global name of a KindGlobal node.
func (n *Node) Name() string {
	if n.X == nil {
		return ""
	}
	return n.X.Name
}

// Func, Args and Kwargs return the parts of a call.
func (n *Node) Func() *Node {
	if n.X == nil {
		return nil
	}
	return n.X.Func
}
func (n *Node) Args() *Node {
	if n.X == nil {
		return nil
	}
	return n.X.Args
}
func (n *Node) Kwargs() *Node {
	if n.X == nil {
		return nil
	}
	return n.X.Kwargs
}

// Muts returns the operations applied after creation.
func (n *Node) Muts() []Mut {
	if n.X == nil {
		return nil
	}
	return n.X.Muts
}

// Big returns the value of a KindInt node as a big.Int.
func (n *Node) Big() *big.Int {
	if n.X != nil && n.X.Big != nil {
		return n.X.Big
	}
	return big.NewInt(n.Int)
}

// IsBig reports whether an int does not fit int64.
func (n *Node) IsBig() bool { return n.X != nil && n.X.Big != nil }

// Float returns the value of a KindFloat node.
func (n *Node) Float() float64 { return math.Float64frombits(uint64(n.Int)) }

// Blob returns the streamed payload, or nil when Str holds it all.
func (n *Node) Blob() *Blob {
	if n.X == nil {
		return nil
	}
	return n.X.Blob
}

// Len returns the payload length of a str/bytes/bytearray node.
func (n *Node) Len() int64 {
	if b := n.Blob(); b != nil {
		return b.Len
	}
	return int64(len(n.Str))
}

// Qualified returns "module.name" for a resolved global.
func (n *Node) Qualified() string {
	if n.Kind != KindGlobal || n.Flags&FlagDynamic != 0 {
		return ""
	}
	return n.Str + "." + n.Name()
}

// Children returns every node n refers to, in a fixed order: items, then
// call parts, then mutation arguments. The same child may appear twice.
func (n *Node) Children() []*Node {
	out := make([]*Node, 0, len(n.Items)+3)
	out = append(out, n.Items...)
	if n.X != nil {
		for _, c := range []*Node{n.X.Func, n.X.Args, n.X.Kwargs} {
			if c != nil {
				out = append(out, c)
			}
		}
		for _, m := range n.X.Muts {
			out = append(out, m.Args...)
		}
	}
	return out
}

// EventKind classifies an entry of the call log.
type EventKind uint8

const (
	EvGlobal EventKind = iota // a global resolution (GLOBAL, STACK_GLOBAL, INST's class)
	EvCall                    // a call (REDUCE, NEWOBJ, NEWOBJ_EX, INST, OBJ)
	EvMut                     // BUILD or a container operation on a non-builtin object
	EvPersID                  // persistent_load
	EvExt                     // extension registry lookup
	EvBuffer                  // out-of-band buffer
)

var evNames = [...]string{"global", "call", "mutate", "persid", "ext", "buffer"}

func (k EventKind) String() string { return evNames[k] }

// Event is one call-like operation in stream order. Node is the node created
// (or, for EvMut, the node mutated; Mut then indexes Node.Muts()).
type Event struct {
	Kind   EventKind
	Op     Opcode
	Offset int64
	Node   *Node
	Mut    int
}

// Stream is one pickle: from its first opcode to its STOP. Its nodes are
// in its Store; the *Node graph (Graph) is built only when the parse was
// asked for it (Options.NoGraph unset: the tests), and is nil otherwise.
type Stream struct {
	Index  int
	Offset int64 // first byte
	End    int64 // one past STOP
	Proto  int   // the last PROTO seen (0 when none)
	// LeftoverMarks counts MARKs still open at STOP.
	LeftoverMarks int
	// Self is the bytes attributed to the stream itself: PROTO, FRAME,
	// STOP, POP/POP_MARK and what they discarded the reference to.
	Self int64
	*Graph

	store *Store
}

// Graph is a stream as a graph of *Node: the same nodes as its Store, under
// the same IDs, for the tests and the debugging tools that walk pointers.
type Graph struct {
	Root *Node // what pickle.load returns
	// All holds every node in creation order (Node.ID indexes it).
	All []*Node
	// Tops are the nodes without an owner: the root (when built at top
	// level), nodes dropped by POP/POP_MARK, and nodes left on the stack
	// under the result at STOP.
	Tops []*Node
	// Popped are the nodes discarded by POP or POP_MARK where they were
	// built; Leftover are those left under the result at STOP.
	Popped   []*Node
	Leftover []*Node
	// Log is every call-like operation and global resolution, in order.
	Log []Event
}

// Store returns the stream as a Store (docs/engine.md): the same nodes under
// the same IDs. The consumers ported to the store read it from here.
func (s *Stream) Store() *Store {
	if s.store == nil {
		s.store = FromGraph(s)
	}
	return s.store
}

// Len is the stream's length in bytes.
func (s *Stream) Len() int64 { return s.End - s.Offset }

// File is the result of reading one input: its streams, and what follows
// the last one when that is not a pickle.
type File struct {
	Name     string
	Size     int64 // bytes read
	Streams  []*Stream
	Trailing *Trailing
	// Longest: the reader's Longest once the file is read (a payload of
	// pickle.DefaultBlobThreshold bytes or more shows here)
	Longest int64
}

// Trailing describes bytes after the last complete stream that do not form
// a pickle. CPython's pickle.loads ignores them; a load-until-EOF loop
// fails on them.
type Trailing struct {
	Offset int64
	Len    int64
	Reason string // why they are not a pickle
	Prefix []byte // first bytes, for display
	Digest []byte // digest of all of them, when Options.NewHash is set
}
