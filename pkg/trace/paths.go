package trace

import (
	"fmt"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// The paths pk trace prints and --path reads, spelled and parsed by
// pkg/path (docs/paths.md): the same as pk diff's and pk hash --explain's.

// str spells the role; s is the store of its key (rKey, rAttr).
func (r role) str(s *pickle.Store) string {
	switch r.kind {
	case rIndex:
		return ppath.Index(r.i)
	case rKey:
		if v, ok := storeLiteral(s, r.k); s != nil && ok {
			return ppath.Key(v)
		}
		return ppath.KeyAt(r.i)
	case rAttr, rAttr2:
		return ppath.Attr(s.Str(r.k))
	case rNamed:
		q, n, _ := namedArgs(s, r.k)
		return ppath.ArgName(q, n, r.i)
	case rKeyObj:
		return ppath.Pseudo("key", r.i)
	case rKeyVal:
		// a tuple key of literals: root[1, 2], as Python and pk diff read it
		if s != nil {
			if v, ok := storeLiteral(s, r.k); ok {
				return ppath.Key(v)
			}
		}
		return ppath.KeyAt(r.i)
	case rSet:
		return ppath.SetPos(r.i)
	case rFunc:
		if r.i == 1 {
			return ppath.Class
		}
		return ppath.Callable
	case rArgs:
		if r.i == 1 {
			return ppath.NewArgs
		}
		return ppath.Args
	case rKwargs:
		return ppath.Kwargs
	case rState:
		if r.i == 0 {
			return ppath.State
		}
		return ppath.Pseudo("build", r.i)
	case rName:
		return ppath.Parts + ppath.Index(r.i)
	case rPid:
		return ppath.PID
	case rRoot:
		return ""
	case rPopped:
		return ppath.Pseudo("popped", r.i)
	case rLeftover:
		return ppath.Pseudo("leftover", r.i)
	case rOrphan:
		return ppath.Pseudo("orphan", r.i)
	}
	return ppath.Pseudo("owned", r.i)
}

// link is the path link of a child with this role under the item whose
// link is up: an attribute (rAttr) is a step from the object whose state
// holds it, not from the state dict (root.coef_, not
// root.__getstate__()['coef_']).
func (r role) link(up *pathLink, rs string) *pathLink {
	switch {
	case r.kind == rAttr2 && up != nil && up.up != nil && up.up.up != nil:
		return link(up.up.up, rs) // past the pair and its dict
	case (r.kind == rAttr || r.kind == rNamed) && up != nil && up.up != nil:
		return link(up.up, rs)
	}
	return link(up, rs)
}

// isTop: the roles of a stream's tops, whose paths start with the
// stream's head.
func (r role) isTop() bool {
	return r.kind == rRoot || r.kind == rPopped || r.kind == rLeftover || r.kind == rOrphan
}

// namedArgs returns, for a tuple that is the arguments of the call that
// owns it, the call's callable (qualified, as pk diff reads it) and its
// length, when pkg/path names those arguments (.__code__, .co_consts):
// the items are then steps from the call, as pk diff prints them.
func namedArgs(s *pickle.Store, t pickle.ID) (string, int, bool) {
	o, ok := argsOf(s, t)
	if !ok {
		return "", 0, false
	}
	q := storeQualified(s, s.Func(o))
	n := s.NItems(t)
	return q, n, ppath.NamesArgs(q, n)
}

// argsOf is the call whose arguments tuple t is.
func argsOf(s *pickle.Store, t pickle.ID) (pickle.ID, bool) {
	if s == nil || t < 0 || s.Kind(t) != pickle.KindTuple {
		return pickle.NoID, false
	}
	o := s.Owner(t)
	if o == pickle.NoID || s.Kind(o) != pickle.KindCall || s.Args(o) != t {
		return pickle.NoID, false
	}
	return o, true
}

// storeQualified is "module.name" of a global, "types.X" of cloudpickle's
// _builtin_type('X') and dill's _load_type('X'), else "".
func storeQualified(s *pickle.Store, f pickle.ID) string {
	if mod, name, ok := storeQualifiedParts(s, f); ok {
		return mod + "." + name
	}
	return ""
}

// storeQualifiedParts is storeQualified as its module and name (ok false
// for ""), without building the string.
func storeQualifiedParts(s *pickle.Store, f pickle.ID) (mod, name string, ok bool) {
	if f < 0 {
		return "", "", false
	}
	switch s.Kind(f) {
	case pickle.KindGlobal:
		if s.Flags(f)&pickle.FlagDynamic != 0 {
			return "", "", false
		}
		return s.Str(f), s.Name(f), true
	case pickle.KindCall:
		g := s.Func(f)
		if g < 0 || s.Kind(g) != pickle.KindGlobal || s.Flags(g)&pickle.FlagDynamic != 0 {
			return "", "", false
		}
		if n := s.Name(g); n != "_builtin_type" && n != "_load_type" && !strings.HasSuffix(n, "._builtin_type") && !strings.HasSuffix(n, "._load_type") {
			return "", "", false
		}
		a := s.Args(f)
		if a >= 0 && s.Kind(a) == pickle.KindTuple && s.NItems(a) == 1 {
			if x := s.Items(a)[0]; s.Kind(x) == pickle.KindStr {
				return "types", s.Str(x), true
			}
		}
	}
	return "", "", false
}

// attrState reports whether dict n holds attributes of an object, as pk
// diff reads them: the state of the first BUILD of the object that owns it,
// or one of a (dict, slots dict) pair that is (as cloudpickle and
// __slots__ objects write it), with str keys. pair says which.
func attrState(s *pickle.Store, n pickle.ID) bool {
	ok, _ := attrStateOf(s, n)
	return ok
}

func attrStateOf(s *pickle.Store, n pickle.ID) (ok, pair bool) {
	// (the cheap tests first: a large dict is seldom a state)
	if n < 0 || s.Kind(n) != pickle.KindDict {
		return false, false
	}
	o := s.Owner(n)
	if o == pickle.NoID {
		return false, false
	}
	if state(s, o) == n {
		return strDict(s, n), false
	}
	if s.Kind(o) != pickle.KindTuple || s.NItems(o) != 2 || s.NMuts(o) > 0 {
		return false, false
	}
	if oo := s.Owner(o); oo == pickle.NoID || state(s, oo) != o {
		return false, false
	}
	for _, it := range s.Items(o) {
		if s.Kind(it) != pickle.KindNone && !strDict(s, it) {
			return false, false
		}
	}
	return true, true
}

// pairState reports whether tuple t is a (dict, slots dict) state whose
// dicts hold attributes (attrStateOf).
func pairState(s *pickle.Store, t pickle.ID) bool {
	if s.Kind(t) != pickle.KindTuple || s.NItems(t) != 2 {
		return false
	}
	for _, it := range s.Items(t) {
		if ok, pair := attrStateOf(s, it); ok && pair && s.Owner(it) == t {
			return true
		}
	}
	return false
}

// strDict: a dict of entries with str keys (kept whole), and no mutation.
func strDict(s *pickle.Store, n pickle.ID) bool {
	if n < 0 || s.Kind(n) != pickle.KindDict || s.NMuts(n) > 0 {
		return false
	}
	items := s.Items(n)
	for i := 0; i+1 < len(items); i += 2 {
		if s.Kind(items[i]) != pickle.KindStr || s.PayloadLen(items[i]) != int64(len(s.Str(items[i]))) {
			return false
		}
	}
	return len(items) > 0
}

// storeLiteral returns scalar k of store s (or a tuple of them) as a path
// literal; false for a payload kept only in part, or anything else.
func storeLiteral(s *pickle.Store, k pickle.ID) (ppath.Value, bool) {
	return storeLiteralDepth(s, k, 0)
}

func storeLiteralDepth(s *pickle.Store, k pickle.ID, depth int) (ppath.Value, bool) {
	if s == nil || k < 0 || int(k) >= s.Len() || depth > ppath.MaxTupleDepth {
		return ppath.Value{}, false
	}
	switch s.Kind(k) {
	case pickle.KindTuple:
		if s.NMuts(k) > 0 || s.NItems(k) > ppath.MaxTupleItems {
			return ppath.Value{}, false
		}
		var items []ppath.Value
		for _, it := range s.Items(k) {
			v, ok := storeLiteralDepth(s, it, depth+1)
			if !ok {
				return ppath.Value{}, false
			}
			items = append(items, v)
		}
		return ppath.Tuple(items...), true
	case pickle.KindNone:
		return ppath.None(), true
	case pickle.KindBool:
		return ppath.Bool(s.Int(k) != 0), true
	case pickle.KindInt:
		if s.IsBig(k) {
			b := s.Big(k)
			if b.BitLen() > ppath.MaxIntBits {
				return ppath.Value{}, false
			}
			return ppath.BigInt(b), true
		}
		return ppath.Int(s.Int(k)), true
	case pickle.KindFloat:
		return ppath.Float(s.Float(k)), true
	case pickle.KindStr, pickle.KindBytes:
		if s.PayloadLen(k) != int64(len(s.Str(k))) {
			return ppath.Value{}, false
		}
		if s.Kind(k) == pickle.KindStr {
			return ppath.Str(s.Str(k)), true
		}
		return ppath.Bytes(s.Str(k)), true
	}
	return ppath.Value{}, false
}

// setHead names the paths of stream i of a bare pickle file: root for the
// first, stream[i] for the others (Doc.StreamHead for containers).
func (st *StreamTree) setHead(i int) {
	st.prefix = ppath.Root
	if i > 0 {
		st.prefix = ppath.Stream(i)
	}
	st.rootRole = st.prefix
}

// Find returns the item at path (pkg/path's grammar; as printed in the
// tree or by --top, or any spelling of it that parses the same; for an
// element of an array or a cell of a frame, as pk diff prints them, the
// array that holds it: FindElement). A malformed path is a *path.Error.
func (t *Tree) Find(p string) (Item, error) {
	it, _, err := t.FindElement(p)
	return it, err
}

// findPath is Find of a path that names an object (or part) of the tree.
func (t *Tree) findPath(p string) (Item, error) {
	parsed, err := ppath.Parse(p)
	if err != nil {
		return Item{}, err
	}
	if alt, ok, err := t.effect(parsed); ok || err != nil {
		if err != nil {
			return Item{}, err
		}
		parsed = alt
	}
	it, err := t.find(parsed)
	if err == nil {
		return it, nil
	}
	if alt, ok := t.unfold(parsed, 0); ok {
		return alt, nil
	}
	return Item{}, err
}

// effect rewrites a path through an effect, head<effect i> (what pk diff
// and pk hash --explain print for a call, global resolution or mutation
// that loading performs but the result does not reach), to the path pk
// trace shows its node at (root<popped 0>, <leftover 1>, ...): i is the
// place of the effect in its stream's call log (pickle.Store.Event, in
// stream order; canon.Node.EffectIndex), so the number is the log's, not a
// count of the effects. ok is false when the path has no effect step.
func (t *Tree) effect(parsed ppath.Path) (ppath.Path, bool, error) {
	k := -1
	for i, st := range parsed {
		if st.Kind == ppath.SPseudo && st.Name == "effect" {
			k = i
			break
		}
	}
	if k < 1 {
		return nil, false, nil
	}
	nf := &NotFoundError{Path: parsed.String()}
	if parsed[k].I < 0 {
		return nil, false, nf
	}
	// the stream: the tree's item at the head (root, stream[i], part[...]
	// <stream i>) is one of its nodes
	head, err := t.find(parsed[:k])
	if err != nil || head.Stream == nil || head.Stream.num != nil {
		return nil, false, nf // (a fast path's synthetic store has no log)
	}
	st := head.Stream
	if parsed[k].I >= st.Store.NEvents() {
		return nil, false, nf
	}
	alt, err := ppath.Parse(t.PathOf(st, st.Store.Event(parsed[k].I).Node) + parsed[k+1:].String())
	if err != nil {
		return nil, false, nf
	}
	return alt, true, nil
}

// unfold finds a path that goes through a state cloudpickle sets with
// _function_setstate or _class_setstate, a call of its own in the pickle
// (trace shows it where the pickle makes it, as <popped i>), which pk diff
// and pk hash fold into the object (`root.predict` for a method of a class
// pickled by value, `root.__defaults__` of a function): the longest prefix
// found whose next step is an attribute that the object's setstate state
// holds continues at that entry's own path.
func (t *Tree) unfold(parsed ppath.Path, depth int) (Item, bool) {
	if depth > 8 {
		return Item{}, false
	}
	for k := len(parsed) - 1; k >= 1; k-- {
		if parsed[k].Kind != ppath.SAttr {
			continue
		}
		x, err := t.find(parsed[:k])
		if err != nil || x.Kind != ItemNode {
			continue
		}
		st := x.Stream
		v := stateEntry(st.Store, st.setstate(x.Node), parsed[k].Name)
		if v == pickle.NoID {
			continue
		}
		rest, err := ppath.Parse(t.PathOf(st, v) + parsed[k+1:].String())
		if err != nil {
			return Item{}, false
		}
		if it, err := t.find(rest); err == nil {
			return it, true
		}
		return t.unfold(rest, depth+1)
	}
	return Item{}, false
}

// stateEntry returns the value of key name in a setstate state: a dict, or
// a (dict, slotstate) tuple of them (NoID: none).
func stateEntry(s *pickle.Store, x pickle.ID, name string) pickle.ID {
	if x == pickle.NoID {
		return pickle.NoID
	}
	if s.Kind(x) == pickle.KindTuple {
		for _, c := range s.Items(x) {
			if v := dictGet(s, c, name); v != pickle.NoID {
				return v
			}
		}
		return pickle.NoID
	}
	return dictGet(s, x, name)
}

// find is Find of a parsed path, without unfold.
func (t *Tree) find(parsed ppath.Path) (Item, error) {
	target := parsed.String()
	// depth first along the items whose path the target is at or below;
	// items without a path of their own (the file, a pickle part, a
	// stream, an attribute state) are passed through
	stack := []Item{t.Root()}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids := t.findKids(it, target)
		for i := len(kids) - 1; i >= 0; i-- {
			k := kids[i]
			if k.Kind == ItemElided {
				continue
			}
			kp := k.Path()
			switch {
			case k.pl == nil || k.Kind == ItemStream || k.Kind == ItemPart && k.part != nil && k.part.pickle != nil:
				stack = append(stack, k) // no path of its own
			case kp == target:
				return k, nil
			case ppath.Under(target, kp):
				if k.Kind == ItemRef {
					return Item{}, fmt.Errorf("%s is a reference to #%d, built at %s: use that path", kp, k.Stream.numOf(k.Node), t.PathOf(k.Stream, k.Node))
				}
				stack = append(stack, k)
			case k.Kind == ItemNode && k.Stream.Store.Kind(k.Node) == pickle.KindDict && attrState(k.Stream.Store, k.Node):
				stack = append(stack, k) // its entries are its owner's attributes
			case k.Kind == ItemNode && k.Role == ppath.State && pairState(k.Stream.Store, k.Node):
				stack = append(stack, k) // a (dict, slots) pair of them
			case k.Kind == ItemNode && (k.Role == ppath.Args || k.Role == ppath.NewArgs) && isNamedArgs(k.Stream.Store, k.Node):
				stack = append(stack, k) // its items are named from the call
			}
		}
	}
	if len(parsed) == 1 && parsed[0].Kind == ppath.SHead && parsed[0].Name == "root" && t.Doc != nil && strings.HasSuffix(t.Doc.Format, "npy") {
		// a .npy file holds no pickle: what loading returns is its array
		// (pk diff's root[1, 2])
		for i, p := range t.Doc.Parts {
			if p.Role == input.RoleArray && p.Of < 0 {
				if it, ok := t.findPart(t.Doc.Key(i)); ok {
					return it, nil
				}
			}
		}
	}
	if len(parsed) == 1 && parsed[0].Kind == ppath.SHead && parsed[0].Name == "part" && t.Doc != nil {
		// a part that is shown under the object that holds it (a storage,
		// a joblib array): found by its name
		if it, ok := t.findPart(parsed[0].Value.Str); ok {
			return it, nil
		}
	}
	return Item{}, &NotFoundError{Path: target}
}

// findKids returns the children of it that find may act on for target
// (those the cases of its switch take: a child with no path of its own, at
// or above target, or whose entries or items are named from elsewhere), in
// order. A node's others are passed over one at a time, so that a list of
// a million items costs no million items at once.
func (t *Tree) findKids(it Item, target string) []Item {
	onWay := func(k Item) bool {
		if k.Kind == ItemElided {
			return false
		}
		kp := k.Path()
		switch {
		case k.pl == nil || k.Kind == ItemStream || k.Kind == ItemPart && k.part != nil && k.part.pickle != nil,
			kp == target, ppath.Under(target, kp),
			k.Kind == ItemNode && k.Stream.Store.Kind(k.Node) == pickle.KindDict && attrState(k.Stream.Store, k.Node),
			k.Kind == ItemNode && k.Role == ppath.State && pairState(k.Stream.Store, k.Node),
			k.Kind == ItemNode && (k.Role == ppath.Args || k.Role == ppath.NewArgs) && isNamedArgs(k.Stream.Store, k.Node):
			return true
		}
		return false
	}
	if it.Kind == ItemStream {
		// (a stream of a million tops: opened one at a time)
		var out []Item
		it.Stream.eachTopKid(func(k kid) {
			if x := k.open(it.Stream, it.pl); onWay(x) {
				out = append(out, x)
			}
		})
		return out
	}
	if it.Kind != ItemNode {
		// (the file's streams, a part's: kept in place)
		kids := t.Children(it)
		n := 0
		for _, k := range kids {
			if onWay(k) {
				kids[n] = k
				n++
			}
		}
		return kids[:n]
	}
	var out []Item
	it.Stream.eachChildItem(it, func(k Item) {
		if onWay(k) {
			out = append(out, k)
		}
	})
	for _, k := range t.attached(it, nil) {
		if onWay(k) {
			out = append(out, k)
		}
	}
	return out
}

// findPart returns the line of the part whose name (Doc.Key) is key, where
// it is counted (not a reference to it).
func (t *Tree) findPart(key string) (Item, bool) {
	stack := []Item{t.Root()}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.Kind == ItemPart && it.part != nil && it.part.idx >= 0 && !it.part.ref && t.Doc.Key(it.part.idx) == key {
			return it, true
		}
		kids := t.Children(it)
		for i := len(kids) - 1; i >= 0; i-- {
			if kids[i].Kind != ItemElided && kids[i].Kind != ItemRef {
				stack = append(stack, kids[i])
			}
		}
	}
	return Item{}, false
}

func isNamedArgs(s *pickle.Store, t pickle.ID) bool {
	o, ok := argsOf(s, t)
	if !ok {
		return false
	}
	mod, name, ok := storeQualifiedParts(s, s.Func(o))
	return ok && ppath.NamesArgsOf(mod, name, s.NItems(t))
}

// NotFoundError says that a well-formed path names nothing in the tree.
type NotFoundError struct {
	Path string // as pkg/path spells it
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no object at path %s (see --top for paths, docs/paths.md for their grammar)", e.Path)
}
