package canon

import (
	"strings"

	"github.com/pk-tools/pk/pkg/pickle"
)

// RulePartialNewobjEx: below protocol 4, CPython's pickler (C and Python)
// writes an object whose class has __getnewargs_ex__ as
//
//	functools.partial(getattr(C, '__new__'))  BUILD (f, (cls, *args), kwargs, None)  () REDUCE
//
// (save_reduce's __newobj_ex__ branch: partial(cls.__new__, cls, *args,
// **kwargs) called with no arguments), where protocol 4 writes
// cls args kwargs NEWOBJ_EX. Both call cls.__new__(cls, *args, **kwargs)
// when C.__new__ is cls.__new__, which the pickler made true when it
// evaluated cls.__new__ (the same caveat as copyreg._reconstructor).
const RulePartialNewobjEx = "partial-newobj-ex"

// partialNewobjEx rewrites call n (REDUCE of a partial object with no
// arguments) into NEWOBJ_EX(cls, args, kwargs) when the shape is exact.
func (v *View) partialNewobjEx(n *pickle.Node, args []*pickle.Node) {
	if len(args) != 0 {
		return
	}
	p := v.res(n.Func())
	if p == nil || p.Kind != pickle.KindCall || p.Op != pickle.REDUCE && p.Op != pickle.NEWOBJ {
		return
	}
	if v.callable(p.Func()) != "std:functools.partial" {
		return
	}
	pargs, ok := v.tuple(p.Args())
	if !ok || len(pargs) != 1 {
		return
	}
	muts := p.Muts()
	if len(muts) != 1 || muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
		return
	}
	state, ok := v.tuple(muts[0].Args[0])
	if !ok || len(state) != 4 || v.res(state[0]) != v.res(pargs[0]) {
		return
	}
	// f is C.__new__ for a resolved global C
	if _, name, ok := v.global(pargs[0]); !ok || !strings.HasSuffix(name, ".__new__") {
		return
	}
	fargs, ok := v.tuple(state[1])
	if !ok || len(fargs) < 1 {
		return
	}
	kw := v.res(state[2])
	switch {
	case kw.Kind == pickle.KindNone:
		kw = v.synth(pickle.KindDict, state[2])
	case kw.Kind == pickle.KindDict && len(kw.Muts()) == 0:
	default:
		return
	}
	if d := v.res(state[3]); d.Kind != pickle.KindNone && !(d.Kind == pickle.KindDict && len(d.Items) == 0) {
		return
	}
	c := v.copyCall(n, pickle.NEWOBJ_EX)
	c.X.Func = fargs[0]
	t := v.synth(pickle.KindTuple, n)
	t.Items = fargs[1:]
	c.X.Args = t
	c.X.Kwargs = kw
	v.replace(n, c, RulePartialNewobjEx)
}

// copyKwargs gives every NEWOBJ_EX call a keyword dict of its own: the
// callee receives **kwargs, a new dict, so whether the pickled dict is also
// referenced elsewhere (protocol 4 shares it with the object's state when
// the state holds it; protocol 2-3's partial holds a copy) is not
// observable. The copy is a synthetic dict with the same items.
func (v *View) copyKwargs() {
	for _, n := range v.Stream.All {
		if n.Kind != pickle.KindCall {
			continue
		}
		r := v.res(n)
		if r == nil || r.Kind != pickle.KindCall || r.Op != pickle.NEWOBJ_EX {
			continue
		}
		kw := v.res(r.Kwargs())
		if kw == nil || kw.Kind != pickle.KindDict || len(kw.Muts()) > 0 || len(v.ops(kw)) > 0 {
			continue
		}
		d := v.synth(pickle.KindDict, kw)
		d.Items = kw.Items
		c := v.synth(pickle.KindCall, r)
		c.Op, c.Flags = r.Op, r.Flags
		c.X = &pickle.Extra{Func: r.Func(), Args: r.Args(), Kwargs: d, Muts: r.Muts()}
		v.setRepl(n, c)
		if r != n {
			v.setRepl(r, c)
		}
	}
}
