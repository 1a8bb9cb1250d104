package diff

import (
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The edges of diff's paths, spelled by pkg/path (docs/paths.md).

// index returns the edge [i].
func index(i int) string { return path.Index(i) }

// literal returns a key or set element as a path literal; false when it is
// none (a container of objects, a global, a payload pk kept only the start
// of) or deeper than a few levels of tuples.
func literal(n *canon.Node) (path.Value, bool) { return literalDepth(n, 0) }

func literalDepth(n *canon.Node, depth int) (path.Value, bool) {
	if n == nil || depth > 8 {
		return path.Value{}, false
	}
	switch n.Kind() {
	case pickle.KindNone:
		return path.None(), true
	case pickle.KindBool:
		return path.Bool(n.Int().Sign() != 0), true
	case pickle.KindInt:
		if n.IsBig() && n.Int().BitLen() > hugeIntBits {
			return path.Value{}, false
		}
		return path.BigInt(n.Int()), true
	case pickle.KindFloat:
		return path.Float(n.Float()), true
	case pickle.KindStr, pickle.KindBytes:
		if n.Len() != int64(len(n.Str())) || len(n.Str()) > 1024 {
			return path.Value{}, false
		}
		if n.Kind() == pickle.KindStr {
			return path.Str(n.Str()), true
		}
		return path.Bytes(n.Str()), true
	case pickle.KindTuple:
		items := n.Items()
		if len(items) > 16 {
			return path.Value{}, false
		}
		vs := make([]path.Value, len(items))
		for i, it := range items {
			v, ok := literalDepth(it, depth+1)
			if !ok {
				return path.Value{}, false
			}
			vs[i] = v
		}
		return path.Tuple(vs...), true
	}
	return path.Value{}, false
}

// keyEdge is the edge of entry i of a dict (or a __setitem__), with key k:
// [key] for a literal key, [<key i>] for another (i in canonical order).
func keyEdge(i int, k *canon.Node) string {
	if v, ok := literal(k); ok {
		return path.Key(v)
	}
	return path.KeyAt(i)
}

// attrEdge is the edge of attribute k (a str key of a state dict).
func attrEdge(i int, k *canon.Node) string {
	if k.Kind() == pickle.KindStr && k.Len() == int64(len(k.Str())) {
		return path.Attr(k.Str())
	}
	return path.Attr("__dict__") + keyEdge(i, k)
}

// setEdge is the edge of set element n at position i (canonical order):
// {value} for a literal, {#i} for another.
func setEdge(i int, n *canon.Node) string {
	if v, ok := literal(n); ok {
		return path.SetElem(v)
	}
	return path.SetPos(i)
}

// callParts are the edges of a call's callable and arguments.
type callParts struct{ callable, args string }

// callEdges names the parts of a call by how it calls (canon's CallForm):
// .__class__ and .__getnewargs__() for NEWOBJ, .__reduce__[0] and
// .__reduce__[1] otherwise (as pk trace names them).
func callEdges(form string) callParts {
	if form == "new" {
		return callParts{path.Class, path.NewArgs}
	}
	return callParts{path.Callable, path.Args}
}

// opEdge names operation i applied after creation (not a plain state or
// items): <name i>.
func opEdge(name string, i int) string { return path.Pseudo(name, i) }

// viewKid is one child of a node of the canonical view, with the edge the
// walk of compare names it by.
type viewKid struct {
	edge string
	n    *canon.Node
}

// viewKids lists the children of n with their edges, as compare's walk
// names them (items, entries, set elements, a call's parts, the states
// and operations applied after creation). tensorPaths and the check of
// --ignore paths use it.
func viewKids(n *canon.Node) []viewKid {
	var out []viewKid
	add := func(edge string, c *canon.Node) {
		if c != nil {
			out = append(out, viewKid{edge, c})
		}
	}
	switch n.Kind() {
	case pickle.KindList, pickle.KindTuple:
		for i, c := range n.Items() {
			add(index(i), c)
		}
	case pickle.KindSet, pickle.KindFrozenSet:
		for i, c := range n.Items() {
			add(setEdge(i, c), c)
		}
	case pickle.KindDict:
		for i, e := range n.Entries() {
			add(keyEdge(i, e.Key), e.Value)
		}
	case pickle.KindGlobal:
		if n.Flags()&pickle.FlagDynamic != 0 {
			for i, c := range n.Items() {
				add(partsForm.item(i), c)
			}
		}
	case pickle.KindCall:
		ce := callEdges(n.CallForm())
		f, args := n.Func(), n.Args()
		add(ce.callable, f)
		if names := argNames(f, args); names != nil {
			for i, c := range args.Items() {
				add(names(i), c)
			}
		} else {
			add(ce.args, args)
		}
		add(path.Kwargs, n.Kwargs())
	}
	attrs, items, app, rest := splitOps(n.Ops())
	for i, e := range attrs {
		add(attrEdge(i, e.Key), e.Value)
	}
	for i, e := range items {
		add(keyEdge(i, e.Key), e.Value)
	}
	for i, c := range app {
		add(index(i), c)
	}
	for i, o := range rest {
		if o.Name == "build" && len(o.Args) == 1 {
			add(path.State, o.Args[0])
			continue
		}
		for j, c := range o.Args {
			add(opEdge(o.Name, i)+index(j), c)
		}
	}
	return out
}

// reaches reports whether a path under root (spelled rootPath) names a
// node of the view at or below target (a path as pkg/path spells it): the
// check that an --ignore path matches something. It follows only the
// edges that lead towards target, so it visits about one node a step.
func reaches(root *canon.Node, rootPath, target string) bool {
	if !path.Under(target, rootPath) && !path.Under(rootPath, target) {
		return false
	}
	type at struct {
		n *canon.Node
		p string
	}
	stack := []at{{root, rootPath}}
	seen := map[*canon.Node]bool{}
	for len(stack) > 0 && len(seen) < 1_000_000 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if path.Under(x.p, target) {
			return true
		}
		if seen[x.n] {
			continue
		}
		seen[x.n] = true
		for _, k := range viewKids(x.n) {
			p := x.p + k.edge
			if path.Under(target, p) || path.Under(p, target) {
				stack = append(stack, at{k.n, p})
			}
		}
	}
	return false
}

// torchCross reports whether one input is a torch zip and the other a
// legacy torch file: the same checkpoint saved both ways is then compared
// by what torch.load returns (crossStorage).
func torchCross(a, b *input.Doc) bool {
	zip := func(d *input.Doc) bool { return strings.HasSuffix(d.Format, "torch-zip") }
	legacy := func(d *input.Doc) bool { return strings.HasSuffix(d.Format, "torch-legacy") }
	return zip(a) && legacy(b) || legacy(a) && zip(b)
}
