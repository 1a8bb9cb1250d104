package scan

import (
	"fmt"
	"strings"

	"github.com/pk-tools/pk/pkg/input"
	"github.com/pk-tools/pk/pkg/pickle"
)

func isTorchLegacy(doc *input.Doc) bool { return strings.Contains(doc.Format, "torch-legacy") }

func sevRank(s string) int {
	switch s {
	case SevUnknown:
		return 1
	case SevCode:
		return 2
	case SevDangerous:
		return 3
	}
	return 0
}

// What a fetching callable returns, so that the scanner can name it.
const (
	fetchNone        = iota
	fetchGetattr     // getattr(obj, 'name'): obj.name
	fetchImport      // import_module('m'), subimport('m'): module m
	fetchImportTop   // __import__('a.b'): module a (a.b with a fromlist)
	fetchDillImport  // dill _import_module('a.b'): a.b's attribute... as dill does
	fetchResolveName // pkgutil.resolve_name('m:q')
	fetchCPType      // cloudpickle _builtin_type('X'): types.X
	fetchDillType    // dill _load_type('X'): types.X for ...Type, builtins.X else
	fetchGetitem     // operator.getitem(sys.modules, 'm')
	fetchPartial     // functools.partial(f, ...): calling it calls f
)

var cpPrefixes = []string{"cloudpickle", "joblib.externals.cloudpickle", "ray.cloudpickle", "pyspark.cloudpickle", "apache_beam.internal.cloudpickle", "srsly.cloudpickle"}

// cpModules are the modules cloudpickle's functions live in (each version,
// and the vendored copies).
var cpModules = func() []string {
	var out []string
	for _, p := range cpPrefixes {
		out = append(out, p, p+".cloudpickle", p+".cloudpickle_fast")
	}
	return out
}()

var dillModules = []string{"dill._dill", "dill.dill", "dill"}

var fetchers = func() map[Name]int {
	m := map[Name]int{
		{"builtins", "getattr"}:                 fetchGetattr,
		{"importlib", "import_module"}:          fetchImport,
		{"builtins", "__import__"}:              fetchImportTop,
		{"pkgutil", "resolve_name"}:             fetchResolveName,
		{"operator", "getitem"}:                 fetchGetitem,
		{"_operator", "getitem"}:                fetchGetitem,
		{"functools", "partial"}:                fetchPartial,
		{"_functools", "partial"}:               fetchPartial,
		{"importlib._bootstrap", "_gcd_import"}: fetchImport,
	}
	for _, mod := range cpModules {
		m[Name{mod, "subimport"}] = fetchImport
		m[Name{mod, "_builtin_type"}] = fetchCPType
	}
	for _, mod := range dillModules {
		m[Name{mod, "_get_attr"}] = fetchGetattr
		m[Name{mod, "_import_module"}] = fetchDillImport
		m[Name{mod, "_load_type"}] = fetchDillType
	}
	return m
}()

// makers make functions and classes out of what the file carries: what
// they return runs the file's code when called.
var makers = func() map[Name]bool {
	m := map[Name]bool{
		{"types", "FunctionType"}:    true,
		{"types", "LambdaType"}:      true,
		{"types", "MethodType"}:      true,
		{"builtins", "classmethod"}:  true,
		{"builtins", "staticmethod"}: true,
		{"builtins", "property"}:     true,
	}
	for _, mod := range cpModules {
		for _, f := range []string{"_make_skeleton_class", "_make_skeleton_enum", "_make_function", "_make_typevar", "_class_setstate", "_function_setstate", "_rehydrate_skeleton_class", "_make_dynamic_class"} {
			m[Name{mod, f}] = true
		}
	}
	for _, mod := range dillModules {
		for _, f := range []string{"_create_type", "_create_function", "_create_enum", "_create_typevar", "_create_namedtuple", "_create_lock"} {
			m[Name{mod, f}] = true
		}
	}
	return m
}()

// classArgs are the constructor-like callables: the positions of the
// arguments that are classes they instantiate.
var classArgs = map[Name][]int{
	{"copyreg", "_reconstructor"}:                           {0, 1},
	{"copyreg", "__newobj__"}:                               {0},
	{"copyreg", "__newobj_ex__"}:                            {0},
	{"numpy.core.multiarray", "_reconstruct"}:               {0},
	{"numpy._core.multiarray", "_reconstruct"}:              {0},
	{"pandas.core.indexes.base", "_new_Index"}:              {0},
	{"pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"}: {0},
	{"pandas.core.indexes.datetimes", "_new_DatetimeIndex"}: {0},
}

// callsArg are callables that call one of their arguments (now or later).
var callsArg = map[Name]int{
	{"collections", "defaultdict"}: 0, // later, for every missing key
	{"functools", "reduce"}:        0,
	{"_functools", "reduce"}:       0,
	{"builtins", "map"}:            0,
	{"builtins", "filter"}:         0,
	{"itertools", "starmap"}:       0,
	{"operator", "call"}:           0,
	{"_operator", "call"}:          0,
	{"builtins", "apply"}:          0,
}

// safeFactories may be a defaultdict's default factory: types whose call
// without arguments makes an empty value.
var safeFactories = map[Name]bool{}

func init() {
	for _, t := range []string{"list", "dict", "set", "frozenset", "tuple", "int", "float", "complex", "str", "bytes", "bytearray", "bool"} {
		safeFactories[Name{"builtins", t}] = true
	}
	for _, t := range []string{"OrderedDict", "defaultdict", "deque", "Counter"} {
		safeFactories[Name{"collections", t}] = true
	}
}

// guard applies the argument conditions of a few allowed callables.
func (s *scanner) guard(n pickle.ID, name Name, args []pickle.ID) string {
	ps := s.ps
	switch name {
	case Name{"_codecs", "encode"}:
		// CPython < 3 protocols write bytes as _codecs.encode(str, 'latin1')
		if len(args) == 2 && s.isStr(args[0]) && s.isStr(args[1]) && (ps.Str(args[1]) == "latin1" || ps.Str(args[1]) == "latin-1") {
			return ""
		}
		return "as CPython writes bytes below protocol 3: _codecs.encode(a str, 'latin1')"
	case Name{"builtins", "set"}, Name{"builtins", "frozenset"}, Name{"collections", "deque"}:
		// CPython writes set([...]) below protocol 4, deque([...], maxlen):
		// an iterable the pickle built; a range or a call result could make
		// a set of any size
		if len(args) == 0 || ps.Kind(args[0]) == pickle.KindList || ps.Kind(args[0]) == pickle.KindTuple {
			return ""
		}
		return "with a list or tuple the pickle built (as CPython writes it): any other iterable can be of any size"
	case Name{"builtins", "bytes"}, Name{"builtins", "bytearray"}:
		// bytes() for b'' below protocol 3, bytearray(b'...') or
		// bytearray('latin-1 text', 'latin-1'); bytes(n) allocates n bytes
		if len(args) == 0 || ps.Kind(args[0]) == pickle.KindStr || ps.Kind(args[0]) == pickle.KindBytes || ps.Kind(args[0]) == pickle.KindList {
			return ""
		}
		// bytearray(_codecs.encode('abc', 'latin1')): the pure-Python
		// pickler below protocol 3 (the encode call is judged itself)
		if a := args[0]; ps.Kind(a) == pickle.KindCall && ps.Func(a) != pickle.NoID && ps.Qualified(ps.Func(a)) == "_codecs.encode" {
			return ""
		}
		return "with a str, bytes or list argument (as CPython writes it): an int allocates that many bytes"
	case Name{"builtins", "type"}:
		// pickle writes type(None), type(...), type(NotImplemented) so
		if len(args) == 1 {
			a := args[0]
			if ps.Kind(a) == pickle.KindNone {
				return ""
			}
			if ps.Kind(a) == pickle.KindGlobal && (ps.Qualified(a) == "builtins.Ellipsis" || ps.Qualified(a) == "builtins.NotImplemented") {
				return ""
			}
		}
		return "as type(None), type(...) or type(NotImplemented): with other arguments type() makes a class"
	}
	return ""
}

// classify says how bad a name not on the allowlist is, and why.
func classify(n Name) (sev, why string) {
	if w, ok := dangerousNames[n]; ok {
		return SevDangerous, w
	}
	if w, ok := codeNames[n]; ok {
		return SevCode, w
	}
	mod := strings.Split(n.Module, ".")
	for j := len(mod); j >= 1; j-- {
		if w, ok := dangerousModules[strings.Join(mod[:j], ".")]; ok {
			return SevDangerous, w
		}
	}
	// a dotted name is a chain of attribute fetches: judge every reading of
	// it (os.path.os.system is os.system), and dunder hops reach anything
	if n.Qual != "" {
		q := strings.Split(n.Qual, ".")
		for _, p := range q {
			if escapeDunders[p] {
				return SevDangerous, fmt.Sprintf("the attribute %s leads to objects the name does not show (globals, builtins, subclasses)", p)
			}
		}
		for b := 1; b < len(q); b++ {
			if w, ok := dangerousNames[Name{n.Module + "." + strings.Join(q[:b], "."), strings.Join(q[b:], ".")}]; ok {
				return SevDangerous, w
			}
			for a := 0; a < b; a++ {
				m := strings.Join(q[a:b], ".")
				if w, ok := dangerousNames[Name{m, strings.Join(q[b:], ".")}]; ok {
					return SevDangerous, w
				}
				if w, ok := dangerousModules[m]; ok {
					return SevDangerous, w + " (reached as an attribute)"
				}
			}
		}
	}
	for _, m := range cpModules {
		if n.Module == m {
			return SevCode, "cloudpickle's reconstruction of functions and classes: the file carries code"
		}
	}
	for _, m := range dillModules {
		if n.Module == m {
			return SevCode, "dill's reconstruction of functions, classes and code objects: the file carries code"
		}
	}
	return SevUnknown, ""
}

// escapeDunders are attributes that lead from a harmless object to any
// other: a function's globals, a class's subclasses, a module's dict, ...
var escapeDunders = map[string]bool{}

func init() {
	for _, d := range []string{"globals", "builtins", "subclasses", "dict", "class", "base", "bases", "mro",
		"getattribute", "getattr", "setattr", "delattr", "closure", "code", "func", "self", "loader", "spec",
		"import", "reduce", "reduce_ex", "init_subclass", "set_name", "wrapped", "objclass"} {
		escapeDunders["__"+d+"__"] = true
	}
}

// dangerousModules: every name in these modules (and their submodules) is
// a process, file, network, import or code primitive, or leads to one.
var dangerousModules = map[string]string{
	"os":               "operating-system calls: processes, files, environment",
	"posix":            "operating-system calls: processes, files, environment",
	"nt":               "operating-system calls: processes, files, environment",
	"subprocess":       "runs processes",
	"_posixsubprocess": "runs processes",
	"pty":              "runs processes on a terminal",
	"commands":         "runs shell commands (Python 2)",
	"popen2":           "runs processes (Python 2)",
	"platform":         "runs processes (platform.popen) and reads the system",
	"socket":           "network access",
	"_socket":          "network access",
	"ssl":              "network access",
	"urllib":           "network and file access",
	"urllib2":          "network access (Python 2)",
	"http":             "network access",
	"httplib":          "network access (Python 2)",
	"ftplib":           "network access",
	"smtplib":          "network access",
	"telnetlib":        "network access",
	"requests":         "network access",
	"webbrowser":       "starts programs",
	"shutil":           "file operations (copy, move, delete) and processes",
	"tempfile":         "creates files",
	"io":               "opens files",
	"_io":              "opens files",
	"pathlib":          "file operations",
	"fileinput":        "opens files",
	"glob":             "reads the file system",
	"sys":              "the interpreter's state: modules, hooks, exit",
	"importlib":        "imports modules by name",
	"imp":              "imports modules by name",
	"zipimport":        "imports code from archives",
	"pkgutil":          "imports modules and resolves names given as strings",
	"runpy":            "runs modules and scripts",
	"code":             "runs Python source",
	"codeop":           "compiles Python source",
	"marshal":          "loads code objects",
	"pickle":           "unpickles nested bytes, which can run anything",
	"_pickle":          "unpickles nested bytes, which can run anything",
	"cPickle":          "unpickles nested bytes, which can run anything",
	"shelve":           "opens files and unpickles their contents",
	"ctypes":           "calls C functions and writes memory",
	"_ctypes":          "calls C functions and writes memory",
	"multiprocessing":  "runs processes",
	"concurrent":       "runs code in threads and processes",
	"threading":        "runs code in threads",
	"_thread":          "runs code in threads",
	"asyncio":          "runs processes and network access",
	"signal":           "changes signal handlers",
	"pdb":              "the debugger: runs code",
	"bdb":              "the debugger: runs code",
	"timeit":           "runs code given as strings",
	"cProfile":         "runs code given as strings",
	"profile":          "runs code given as strings",
	"trace":            "runs code given as strings",
	"doctest":          "runs code given as strings",
	"gc":               "reaches every live object",
	"inspect":          "reaches frames and globals",
	"ptrace":           "controls processes",
	"site":             "changes import paths",
	"sysconfig":        "reads the system",
	"distutils":        "runs build commands",
	"setuptools":       "runs build commands",
	"venv":             "creates environments and runs processes",
	"ensurepip":        "runs pip",
	"pip":              "installs packages",
	"torch.hub":        "downloads and runs code",
	"torch.jit":        "loads and runs TorchScript",
	"torch.package":    "loads packaged code",
	"numpy.f2py":       "compiles and runs code",
	"numpy.distutils":  "runs build commands",
	"numpy.testing":    "runs processes",
}

// dangerousNames are single names known to run code, import, do I/O or
// hide what they reach.
var dangerousNames = map[Name]string{
	{"os", "system"}:                           "runs a shell command",
	{"posix", "system"}:                        "runs a shell command",
	{"nt", "system"}:                           "runs a shell command",
	{"os", "popen"}:                            "runs a shell command",
	{"subprocess", "Popen"}:                    "runs a process",
	{"subprocess", "run"}:                      "runs a process",
	{"subprocess", "call"}:                     "runs a process",
	{"subprocess", "check_output"}:             "runs a process",
	{"subprocess", "getoutput"}:                "runs a shell command",
	{"pty", "spawn"}:                           "runs a process on a terminal",
	{"builtins", "eval"}:                       "evaluates a string as Python code",
	{"builtins", "exec"}:                       "runs a string as Python code",
	{"builtins", "execfile"}:                   "runs a file as Python code (Python 2)",
	{"builtins", "compile"}:                    "compiles Python source",
	{"builtins", "open"}:                       "opens files",
	{"builtins", "file"}:                       "opens files (Python 2)",
	{"builtins", "input"}:                      "reads the terminal",
	{"builtins", "raw_input"}:                  "reads the terminal (Python 2)",
	{"builtins", "__import__"}:                 "imports modules by name",
	{"builtins", "reload"}:                     "re-imports modules (Python 2)",
	{"builtins", "getattr"}:                    "fetches any attribute: this is how names are hidden",
	{"builtins", "setattr"}:                    "changes any attribute of any object",
	{"builtins", "delattr"}:                    "deletes any attribute of any object",
	{"builtins", "globals"}:                    "reaches the loader's globals",
	{"builtins", "locals"}:                     "reaches the loader's locals",
	{"builtins", "vars"}:                       "reaches any object's namespace",
	{"builtins", "breakpoint"}:                 "starts the debugger",
	{"builtins", "help"}:                       "starts the interactive help (a pager process)",
	{"builtins", "exit"}:                       "exits the process",
	{"builtins", "quit"}:                       "exits the process",
	{"builtins", "__build_class__"}:            "builds classes by running code",
	{"builtins", "apply"}:                      "calls a function given as an argument (Python 2)",
	{"builtins", "__loader__"}:                 "the import machinery",
	{"builtins", "__spec__"}:                   "the import machinery",
	{"builtins", "__builtins__"}:               "the builtins namespace",
	{"builtins", "__dict__"}:                   "the builtins namespace: changing it rebinds builtins everywhere",
	{"builtins", "object.__subclasses__"}:      "reaches every class in the process",
	{"operator", "attrgetter"}:                 "fetches attributes named by strings: hides names",
	{"operator", "methodcaller"}:               "calls methods named by strings: hides calls",
	{"_operator", "attrgetter"}:                "fetches attributes named by strings: hides names",
	{"_operator", "methodcaller"}:              "calls methods named by strings: hides calls",
	{"functools", "reduce"}:                    "calls a function given as an argument",
	{"_functools", "reduce"}:                   "calls a function given as an argument",
	{"copyreg", "add_extension"}:               "changes copyreg's extension registry: later EXT codes name what it says",
	{"copyreg", "_extension_registry"}:         "copyreg's extension registry: EXT codes name what it says",
	{"copyreg", "_inverted_registry"}:          "copyreg's extension registry",
	{"copyreg", "_extension_cache"}:            "copyreg's extension cache",
	{"copy_reg", "add_extension"}:              "changes copyreg's extension registry",
	{"joblib", "load"}:                         "joblib.load unpickles files",
	{"joblib.numpy_pickle", "load"}:            "joblib.load unpickles files",
	{"dill", "load"}:                           "unpickles nested bytes, which can run anything",
	{"dill", "loads"}:                          "unpickles nested bytes, which can run anything",
	{"dill._dill", "load"}:                     "unpickles nested bytes, which can run anything",
	{"dill._dill", "loads"}:                    "unpickles nested bytes, which can run anything",
	{"cloudpickle", "load"}:                    "unpickles nested bytes, which can run anything",
	{"cloudpickle", "loads"}:                   "unpickles nested bytes, which can run anything",
	{"numpy", "load"}:                          "numpy.load reads files (and unpickles them with allow_pickle)",
	{"numpy.lib.npyio", "load"}:                "numpy.load reads files (and unpickles them with allow_pickle)",
	{"numpy", "fromfile"}:                      "reads files",
	{"numpy", "loadtxt"}:                       "reads files",
	{"numpy", "save"}:                          "writes files",
	{"numpy", "memmap"}:                        "maps files",
	{"torch", "load"}:                          "torch.load unpickles nested bytes (weights_only=False runs anything)",
	{"torch.serialization", "load"}:            "torch.load unpickles nested bytes (weights_only=False runs anything)",
	{"torch.storage", "_load_from_bytes"}:      "calls torch.load on the bytes it is given: a nested pickle that can run anything (scan those bytes separately)",
	{"torch", "save"}:                          "writes files",
	{"torch._C", "_jit_pass_lower_all_tuples"}: "TorchScript internals",
	{"dill._dill", "_create_filehandle"}:       "opens a file",
	{"dill._dill", "_eval_repr"}:               "evaluates a string as Python code",
	{"dill", "_create_filehandle"}:             "opens a file",
}

// codeNames make functions, code objects and classes: the file carries code.
var codeNames = map[Name]string{
	{"types", "CodeType"}:        "makes a code object: the file carries code",
	{"types", "FunctionType"}:    "makes a function: the file carries code",
	{"types", "LambdaType"}:      "makes a function: the file carries code",
	{"types", "MethodType"}:      "binds a function: the file carries code",
	{"types", "CellType"}:        "makes a closure cell: the file carries code",
	{"types", "ModuleType"}:      "makes a module: the file carries code",
	{"builtins", "type"}:         "makes a class: the file carries code",
	{"builtins", "classmethod"}:  "wraps a function: the file carries code",
	{"builtins", "staticmethod"}: "wraps a function: the file carries code",
	{"builtins", "property"}:     "wraps functions: the file carries code",
}
