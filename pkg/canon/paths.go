package canon

import (
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The paths of --explain and Node.Path, spelled by pkg/path as pk trace
// and pk diff spell them (pk diff names keys with Node.Literal).

// pathLiteral returns node k as a path literal (a dict key); false when it
// is none (a placeholder, a payload kept in part, an object).
func (v *View) pathLiteral(k pickle.ID, depth int) (ppath.Value, bool) {
	k = v.res(k)
	if k < 0 || depth > ppath.MaxTupleDepth || v.specialOf(k) != 0 {
		return ppath.Value{}, false
	}
	switch v.kind(k) {
	case pickle.KindNone:
		return ppath.None(), true
	case pickle.KindBool:
		return ppath.Bool(v.ival(k) != 0), true
	case pickle.KindInt:
		if v.isBig(k) {
			b := v.bigOf(k)
			if b.BitLen() > ppath.MaxIntBits {
				return ppath.Value{}, false
			}
			return ppath.BigInt(b), true
		}
		return ppath.Int(v.ival(k)), true
	case pickle.KindFloat:
		return ppath.Float(v.float(k)), true
	case pickle.KindStr, pickle.KindBytes:
		t := v.text(k)
		if v.plen(k) != int64(len(t)) {
			return ppath.Value{}, false
		}
		if v.kind(k) == pickle.KindStr {
			return ppath.Str(t), true
		}
		return ppath.Bytes(t), true
	case pickle.KindTuple:
		if v.nmuts(k) > 0 || len(v.items(k)) > ppath.MaxTupleItems {
			return ppath.Value{}, false
		}
		var items []ppath.Value
		for _, it := range v.items(k) {
			x, ok := v.pathLiteral(it, depth+1)
			if !ok {
				return ppath.Value{}, false
			}
			items = append(items, x)
		}
		return ppath.Tuple(items...), true
	}
	return ppath.Value{}, false
}

// Literal returns the node as a path literal (a dict key, a set element,
// as pkg/path spells it); false when it is none: an object, a payload kept
// only in part, an int or tuple larger than pkg/path spells out.
func (n *Node) Literal() (ppath.Value, bool) { return n.v.pathLiteral(n.src, 0) }

// keyLabel is the step to the value of entry i (key k) of a dict: [key],
// or [<key i>] when the key is no literal (i the entry's place in the
// pickle, Entry.Pos: the same in every command).
func keyLabel(v *View, k pickle.ID, i int) string {
	if lit, ok := v.pathLiteral(k, 0); ok {
		return ppath.Key(lit)
	}
	return ppath.KeyAt(i)
}

// callStep is the step to part a (0 callable, 1 arguments, 2 keyword
// arguments) of call n.
func callStep(v *View, n pickle.ID, a int) string {
	f, _ := callForm(v, n)
	isNew := f == 'w' || f == 'W'
	switch {
	case a == 0 && isNew:
		return ppath.Class
	case a == 0:
		return ppath.Callable
	case a == 1 && isNew:
		return ppath.NewArgs
	case a == 1:
		return ppath.Args
	}
	return ppath.Kwargs
}

// opStep is the step to argument j of operation i (of ops) of a node, as
// pk diff and pk trace name it: [key] for a value a __setitem__ sets (<key
// k> for its key, k its entry's place among the object's setitems pairs), [j] for an appended item, {#j} for an added element,
// .__getstate__() for the state of a BUILD or a folded setstate, <name
// i>[j] for the others.
func opStep(v *View, ops []op, i, j int) string {
	o := ops[i]
	switch o.tag {
	case 's':
		// entries are numbered across the object's setitems operations, in
		// pickle order, as pk trace numbers them
		n := j / 2
		for _, p := range ops[:i] {
			if p.tag == 's' {
				n += len(p.args) / 2
			}
		}
		if j%2 == 1 {
			return keyLabel(v, o.args[j-1], n)
		}
		return ppath.Pseudo("key", n)
	case 'a':
		return ppath.Index(j)
	case 'd':
		return ppath.SetPos(j)
	case 'b', 'S':
		if len(o.args) == 1 {
			return ppath.State
		}
	}
	name := o.displayName()
	return ppath.Pseudo(name, i) + ppath.Index(j)
}

// attrOp reports whether argument j of operation i of ops is a state dict
// whose str-keyed entries are attributes (root.coef_, as pk diff and pk
// trace spell them, not root.__getstate__()['coef_']); pair is set when it
// is a (dict, slots dict) pair of them, as cloudpickle and __slots__
// objects write it.
func (v *View) attrOp(ops []op, i, j int) (ok, pair bool) {
	o := ops[i]
	if !(o.tag == 'b' || o.tag == 'S' || strings.HasSuffix(o.name, "setstate")) || len(o.args) != 1 || j != 0 {
		return false, false
	}
	st := v.res(o.args[0])
	if st >= 0 && v.kind(st) == pickle.KindTuple {
		items := v.items(st)
		if len(items) != 2 {
			return false, false
		}
		for _, it := range items {
			if it = v.res(it); v.kind(it) != pickle.KindNone && !v.strDict(it) {
				return false, false
			}
		}
		return true, true
	}
	return v.strDict(st), false
}

// strDict: a dict whose keys are all str (kept whole).
func (v *View) strDict(d pickle.ID) bool {
	if d < 0 || v.kind(d) != pickle.KindDict {
		return false
	}
	items := v.items(d)
	for k := 0; k+1 < len(items); k += 2 {
		if kk := v.res(items[k]); v.kind(kk) != pickle.KindStr || v.plen(kk) != int64(len(v.text(kk))) {
			return false
		}
	}
	return true
}

// attrStep is the step to the value of entry i of a state dict d (attrOp).
func attrStep(v *View, d pickle.ID, i int) string {
	return ppath.Attr(v.text(v.res(v.items(d)[2*i])))
}

// unreachablePath is the path of a normalisation applied to a node the
// result does not reach (in the stream whose result root is).
var unreachablePath = ppath.Root + ppath.Pseudo("unreachable", -1)

// streamPath puts path p (from the result of stream i of part pi of doc:
// "root...") under that stream's head (root, stream[i], part['name']).
func streamPath(doc *input.Doc, pi, i int, p string) string {
	head := ppath.StreamHead(pi == doc.MainPart(), doc.Key(pi), i, doc.MainStream(pi))
	return head + strings.TrimPrefix(p, ppath.Root)
}

// qualifiedOf is "module.name" of a global of the view, "types.X" of
// cloudpickle's _builtin_type('X') and dill's _load_type('X'), else "" (as
// pk diff reads a callable to name its arguments).
func (v *View) qualifiedOf(f pickle.ID) string {
	f = v.res(f)
	if f < 0 {
		return ""
	}
	switch v.kind(f) {
	case pickle.KindGlobal:
		if v.flags(f)&pickle.FlagDynamic != 0 {
			return ""
		}
		return v.text(f) + "." + v.name(f)
	case pickle.KindCall:
		g := v.res(v.fn(f))
		if g < 0 || v.kind(g) != pickle.KindGlobal || v.flags(g)&pickle.FlagDynamic != 0 {
			return ""
		}
		inner := v.text(g) + "." + v.name(g)
		if !strings.HasSuffix(inner, "._builtin_type") && !strings.HasSuffix(inner, "._load_type") {
			return ""
		}
		if a := v.res(v.argsOf(f)); a >= 0 && v.kind(a) == pickle.KindTuple {
			if it := v.items(a); len(it) == 1 && v.kind(v.res(it[0])) == pickle.KindStr {
				return "types." + v.text(v.res(it[0]))
			}
		}
	}
	return ""
}

// namedArg is the step from call n to item i of its argument tuple when
// pkg/path names its arguments (.__code__, .co_consts), else "".
func (v *View) namedArg(n pickle.ID, i int) string {
	args := v.res(v.argsOf(n))
	if args < 0 || v.kind(args) != pickle.KindTuple {
		return ""
	}
	q, k := v.qualifiedOf(v.fn(n)), len(v.items(args))
	if !ppath.NamesArgs(q, k) {
		return ""
	}
	return ppath.ArgName(q, k, i)
}
