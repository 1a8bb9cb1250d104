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

// literal returns a key or set element as a path literal (canon's, the
// rule pk hash --explain spells keys by); false when it is none.
func literal(n *canon.Node) (path.Value, bool) {
	if n == nil {
		return path.Value{}, false
	}
	return n.Literal()
}

// keyEdge is the edge of entry i of a dict (or a __setitem__), with key k:
// [key] for a literal key, [<key i>] for another (i the entry's place in
// the pickle, canon.Entry.Pos).
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

// setEdge is the edge of set element n at place i in the pickle
// (canon.Node.Elements): {value} for a literal, {#i} for another.
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
		items, at := n.Elements()
		for i, c := range items {
			add(setEdge(at[i], c), c)
		}
	case pickle.KindDict:
		for _, e := range n.Entries() {
			add(keyEdge(e.Pos, e.Key), e.Value)
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
	ops := opsOf(n)
	attrs, items, app, rest := splitOps(&ops)
	for _, e := range attrs {
		add(attrEdge(e.Pos, e.Key), e.Value)
	}
	for _, e := range opEntries(n, items) {
		add(keyEdge(e.Pos, e.Key), e.Value)
	}
	for i := range app.len() {
		add(index(i), app.node(i))
	}
	for i, o := range rest {
		args := ops.argsOf(o)
		if ops.name(o) == "build" && len(args) == 1 {
			add(path.State, idNode(n, args[0]))
			continue
		}
		for j, c := range args {
			add(opEdge(ops.name(o), i)+index(j), idNode(n, c))
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
	seen := map[pickle.ID]bool{} // (by ID: a view may make a node each time)
	for len(stack) > 0 && len(seen) < 1_000_000 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if path.Under(x.p, target) {
			return true
		}
		if seen[x.n.ID()] {
			continue
		}
		seen[x.n.ID()] = true
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
