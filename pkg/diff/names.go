package diff

import (
	"strings"

	"github.com/pk-tools/pk/pkg/canon"
	ppath "github.com/pk-tools/pk/pkg/path"
	"github.com/pk-tools/pk/pkg/pickle"
)

var codeNames16 = []string{"co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_firstlineno", "co_linetable", "co_freevars", "co_cellvars"}

var codeNames18 = []string{"co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_qualname", "co_firstlineno", "co_linetable", "co_exceptiontable", "co_freevars", "co_cellvars"}

var funcNames = []string{"__code__", "__globals__", "__name__", "__defaults__", "__closure__", "__dict__", "__kwdefaults__"}

var skeletonClassNames = []string{"<type-constructor>", "__name__", "__bases__", "<type-kwargs>", "<class-tracker-id>", "<extra>"}

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

// argNames names the arguments of well-known constructors, so a path reads
// .__code__.co_consts[2] instead of .__reduce__[1][0].__reduce__[1][7][2].
func argNames(f, args *canon.Node) func(int) string {
	q := qualified(f)
	if q == "" || args == nil || args.Kind() != pickle.KindTuple {
		return nil
	}
	n := len(args.Items())
	named := func(names []string, shift int) func(int) string {
		return func(i int) string {
			j := i - shift
			if j >= 0 && j < len(names) {
				if strings.HasPrefix(names[j], "<") {
					return ppath.Pseudo(strings.Trim(names[j], "<>"), -1)
				}
				return ppath.Attr(names[j])
			}
			if i == 0 && shift == 1 {
				return ppath.Attr("co_lnotab")
			}
			return ppath.Args + ppath.Index(i)
		}
	}
	last := q[strings.LastIndexByte(q, '.')+1:]
	switch {
	case q == "types.CodeType" || last == "_create_code":
		switch {
		case n == 16:
			return named(codeNames16, 0)
		case n == 18:
			return named(codeNames18, 0)
		case n == 17 && last == "_create_code":
			return named(codeNames16, 1)
		case n == 19 && last == "_create_code":
			return named(codeNames18, 1)
		}
	case last == "_make_function" || last == "_create_function" || q == "types.FunctionType":
		return named(funcNames, 0)
	case last == "_make_skeleton_class":
		return named(skeletonClassNames, 0)
	case last == "_create_type":
		return named([]string{"<type-constructor>", "__name__", "__bases__", "__dict__"}, 0)
	case last == "_make_cell" || last == "_create_cell":
		return named([]string{"cell_contents"}, 0)
	}
	return nil
}
