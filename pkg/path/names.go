package path

import "strings"

// The names every command gives the arguments of well-known constructors,
// so a path reads .__code__.co_consts[2] instead of
// .__reduce__[1][0].__reduce__[1][7][2].

var codeNames16 = []string{"co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_firstlineno", "co_linetable", "co_freevars", "co_cellvars"}

var codeNames18 = []string{"co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_qualname", "co_firstlineno", "co_linetable", "co_exceptiontable", "co_freevars", "co_cellvars"}

var funcNames = []string{"__code__", "__globals__", "__name__", "__defaults__", "__closure__", "__dict__", "__kwdefaults__"}

var skeletonClassNames = []string{"<type-constructor>", "__name__", "__bases__", "<type-kwargs>", "<class-tracker-id>", "<extra>"}

var createTypeNames = []string{"<type-constructor>", "__name__", "__bases__", "__dict__"}

var cellNames = []string{"cell_contents"}

// argTable returns the names of the arguments of a call of qualname
// (module.name; types.X for cloudpickle's _builtin_type('X') and dill's
// _load_type('X')) with n arguments, and how many leading arguments have
// none; nil when pk names them by position.
func argTable(qualname string, n int) ([]string, int) {
	if qualname == "" {
		return nil, 0
	}
	return argTableOf(qualname == "types.CodeType", qualname == "types.FunctionType", qualname[strings.LastIndexByte(qualname, '.')+1:], n)
}

// argTableOf is argTable of a qualname that is types.CodeType, or
// types.FunctionType, or whose last dotted part is last.
func argTableOf(code, function bool, last string, n int) ([]string, int) {
	switch {
	case code || last == "_create_code":
		switch {
		case n == 16:
			return codeNames16, 0
		case n == 18:
			return codeNames18, 0
		case n == 17 && last == "_create_code":
			return codeNames16, 1
		case n == 19 && last == "_create_code":
			return codeNames18, 1
		}
	case last == "_make_function" || last == "_create_function" || function:
		return funcNames, 0
	case last == "_make_skeleton_class":
		return skeletonClassNames, 0
	case last == "_create_type":
		return createTypeNames, 0
	case last == "_make_cell" || last == "_create_cell":
		return cellNames, 0
	}
	return nil, 0
}

// NamesArgs reports whether the arguments of a call of qualname with n
// arguments are named (ArgName).
func NamesArgs(qualname string, n int) bool {
	t, _ := argTable(qualname, n)
	return t != nil
}

// NamesArgsOf is NamesArgs of the qualname module + "." + name, without
// building it (pk trace asks it of every call's arguments as it sizes a
// stream; the strings were a twelfth of trace --top's time on a
// cloudpickle state).
func NamesArgsOf(module, name string, n int) bool {
	t, _ := argTableOf(module == "types" && name == "CodeType", module == "types" && name == "FunctionType", name[strings.LastIndexByte(name, '.')+1:], n)
	return t != nil
}

// ArgName is the step from a call of qualname with n arguments to its
// argument i: .__code__, .co_consts, <type-constructor>, ... (dill's
// _create_code with a leading co_lnotab: .co_lnotab), or .__reduce__[1][i]
// when the argument has no name.
func ArgName(qualname string, n, i int) string {
	names, shift := argTable(qualname, n)
	j := i - shift
	switch {
	case names != nil && j >= 0 && j < len(names):
		if strings.HasPrefix(names[j], "<") {
			return Pseudo(strings.Trim(names[j], "<>"), -1)
		}
		return Attr(names[j])
	case names != nil && i == 0 && shift == 1:
		return Attr("co_lnotab")
	}
	return Args + Index(i)
}
