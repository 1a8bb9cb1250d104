package diff

import (
	"slices"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/internal/grow"
	"github.com/pk-tools/pk/pkg/pickle"
)

// opList is what was applied to an object after creation (canon's Ops) with
// the operations' arguments as IDs of the object's view in one arena, a
// node or a Ref made for an argument only where an entry or a task needs
// it: canon.Ref.Ops holds 48 bytes an operation and 16 an argument, and
// 700,000 BUILDs on one object (or 700,000 SETITEMs, one operation of 1.4
// million arguments) held 45 MB a side through the object's comparison.
type opList struct {
	of    *canon.Node // the object
	ops   []dop
	args  []pickle.ID // pickle.NoID for none
	names []string    // the operations' names (canon's few: build, append, setattr, ...)
}

// dop is one operation of an opList: 16 bytes (32 with its name as a
// string, 24 with its name's index a field of its own: 700,000 BUILDs on
// one object, 17 MB a side through its comparison).
type dop struct {
	// its offset and the index of its name in opList.names: offset<<8 |
	// index (canon names operations from a fixed few: build, append,
	// setitems, add, setattr, ...; an offset is far below 2^55)
	off   int64
	at, n int32 // its arguments: opList.args[at:at+n]
}

// offset is o's offset in its stream.
func (o dop) offset() int64 { return o.off >> 8 }

// opsOf reads the operations of n.
func opsOf(n *canon.Node) opList {
	l := opList{of: n}
	r := n.Ref()
	if !r.HasOps() {
		return l
	}
	r.EachOp(func(i, nops int, name string, offset int64, args []pickle.ID) {
		if i == 0 {
			l.ops = make([]dop, 0, nops)
		}
		k := slices.Index(l.names, name)
		if k < 0 {
			k = len(l.names)
			l.names = append(l.names, name)
		}
		l.ops = append(l.ops, dop{off: offset<<8 | int64(k&0xff), at: int32(len(l.args)), n: int32(len(args))})
		l.args = append(grow.Room(l.args, len(args)), args...)
	})
	return l
}

// name is the name of o, one of l's operations.
func (l *opList) name(o dop) string { return l.names[o.off&0xff] }

// argsOf are the arguments of o, one of l's operations.
func (l *opList) argsOf(o dop) []pickle.ID { return l.args[o.at : o.at+o.n] }

// idNode is the node of id in at's view (nil for none): as Ops would have
// made it.
func idNode(at *canon.Node, id pickle.ID) *canon.Node {
	if id < 0 {
		return nil
	}
	return at.Under(id)
}

// idRef is idNode as a Ref (the zero Ref for none).
func idRef(at *canon.Node, id pickle.ID) canon.Ref {
	if id < 0 {
		return canon.Ref{}
	}
	return at.Ref().Under(id)
}
