package diff

import (
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

// qualified returns "module.name" for a global node, or for cloudpickle's
// _builtin_type('X') / dill's _load_type('X') calls "types.X".
func qualified(f *canon.Node) string {
	if f == nil {
		return ""
	}
	switch f.Kind() {
	case pickle.KindGlobal:
		if f.Flags()&pickle.FlagDynamic != 0 {
			return ""
		}
		return f.Str() + "." + f.Name()
	case pickle.KindCall:
		g := f.Func()
		if g == nil || g.Kind() != pickle.KindGlobal {
			return "" // only _builtin_type('X')-style calls of a global (no recursion)
		}
		inner := qualified(g)
		if strings.HasSuffix(inner, "._builtin_type") || strings.HasSuffix(inner, "._load_type") {
			args := f.Args()
			if args != nil && args.Kind() == pickle.KindTuple {
				if it := args.Items(); len(it) == 1 && it[0].Kind() == pickle.KindStr {
					return "types." + it[0].Str()
				}
			}
		}
	}
	return ""
}

// argNames names the arguments of well-known constructors (pkg/path's
// ArgName), so a path reads .__code__.co_consts[2] instead of
// .__reduce__[1][0].__reduce__[1][7][2]; nil when they are named by
// position.
func argNames(f, args *canon.Node) func(int) string {
	if f == nil || args == nil || args.Kind() != pickle.KindTuple {
		return nil
	}
	n := args.NItems()
	// (a global's name is not built for the calls whose arguments have no
	// names, nor their items' nodes made: a million levels of calls)
	if f.Kind() == pickle.KindGlobal && f.Flags()&pickle.FlagDynamic == 0 && !ppath.NamesArgsOf(f.Str(), f.Name(), n) {
		return nil
	}
	q := qualified(f)
	if q == "" || !ppath.NamesArgs(q, n) {
		return nil
	}
	return func(i int) string { return ppath.ArgName(q, n, i) }
}
