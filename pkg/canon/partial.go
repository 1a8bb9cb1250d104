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
func (v *View) partialNewobjEx(n pickle.ID, args []pickle.ID) {
	if len(args) != 0 {
		return
	}
	p := v.res(v.fn(n))
	if p < 0 || v.kind(p) != pickle.KindCall || v.opOf(p) != pickle.REDUCE && v.opOf(p) != pickle.NEWOBJ {
		return
	}
	if v.callable(v.fn(p)) != "std:functools.partial" {
		return
	}
	pargs, ok := v.tuple(v.argsOf(p))
	if !ok || len(pargs) != 1 {
		return
	}
	if v.nmuts(p) != 1 {
		return
	}
	muts := v.muts(p)
	if muts[0].Op != pickle.BUILD || len(muts[0].Args) != 1 {
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
	case v.kind(kw) == pickle.KindNone:
		kw = v.synth(pickle.KindDict, state[2])
	case v.kind(kw) == pickle.KindDict && v.nmuts(kw) == 0:
	default:
		return
	}
	if d := v.res(state[3]); v.kind(d) != pickle.KindNone && !(v.kind(d) == pickle.KindDict && v.nitems(d) == 0) {
		return
	}
	t := v.synth(pickle.KindTuple, n)
	v.setKids(t, fargs[1:])
	c := v.copyCall(n, pickle.NEWOBJ_EX, fargs[0], t, kw)
	v.replace(n, c, RulePartialNewobjEx)
}

// copyKwargs gives every NEWOBJ_EX call a keyword dict of its own: the
// callee receives **kwargs, a new dict, so whether the pickled dict is also
// referenced elsewhere (protocol 4 shares it with the object's state when
// the state holds it; protocol 2-3's partial holds a copy) is not
// observable. The copy is a synthetic dict with the same items.
func (v *View) copyKwargs() {
	for n := pickle.ID(0); n < v.base; n++ {
		if v.kind(n) != pickle.KindCall { // (View.cls: no record read)
			continue
		}
		r := v.res(n)
		if r < 0 || v.kind(r) != pickle.KindCall || v.opOf(r) != pickle.NEWOBJ_EX {
			continue
		}
		kw := v.res(v.kwargsOf(r))
		if kw < 0 || v.kind(kw) != pickle.KindDict || v.nmuts(kw) > 0 || len(v.ops(kw)) > 0 {
			continue
		}
		d := v.synth(pickle.KindDict, kw)
		v.setKids(d, v.items(kw))
		c := v.synth(pickle.KindCall, r)
		v.setFlags(c, v.flags(r))
		v.setCall(c, v.fn(r), v.argsOf(r), d, r)
		v.setRepl(n, c)
		if r != n {
			v.setRepl(r, c)
		}
	}
}
