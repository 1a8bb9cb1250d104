package scan

// presets are the allowlists pk scan ships (docs/pk-scan.md lists them
// with the producer that writes each entry). An entry is "ROLES NAME":
// ROLES letters c (may be called), n (may be constructed and built), m
// (may be mutated), r (may be resolved and kept as a value; every entry
// may be); NAME is module:qualname.
var presets = map[string][]string{
	"data":        dataPreset,
	"numpy":       numpyPreset,
	"torch":       torchPreset,
	"pandas":      pandasPreset,
	"sklearn":     sklearnPreset,
	"cloudpickle": nil, // filled in init
	"dill":        dillPreset,
}

var dataPreset = []string{
	// CPython's pickler for builtin types: set/frozenset below protocol 4,
	// bytearray, bytes below protocol 3 (b'' as bytes(); others through
	// _codecs.encode, guarded), complex, slice, range (xrange), and
	// type(None)/type(...)/type(NotImplemented) (guarded)
	"c builtins:set",
	"c builtins:frozenset",
	"c builtins:bytearray",
	"c builtins:bytes",
	"c builtins:complex",
	"c builtins:slice",
	"c builtins:range",
	"c builtins:type",
	"c _codecs:encode",
	// object reduction protocol 0-1 and 2+: the class arguments are checked
	// against construct
	"c copyreg:_reconstructor",
	"c copyreg:__newobj__",
	"c copyreg:__newobj_ex__",
	// bases copyreg._reconstructor and NEWOBJ use for plain types
	"n builtins:object",
	"n builtins:int",
	"n builtins:float",
	"n builtins:str",
	"n builtins:bytes",
	"n builtins:list",
	"n builtins:dict",
	"n builtins:tuple",
	"n builtins:set",
	"n builtins:frozenset",
	// values pickle writes by reference
	"r builtins:Ellipsis",
	"r builtins:NotImplemented",
	// builtin functions and types pickled by reference (kept as values:
	// calling them would need a REDUCE, which is judged as a call)
	"r builtins:len", "r builtins:abs", "r builtins:min", "r builtins:max", "r builtins:sum",
	"r builtins:sorted", "r builtins:round", "r builtins:repr", "r builtins:hash", "r builtins:id",
	"r builtins:isinstance", "r builtins:issubclass", "r builtins:iter", "r builtins:next",
	"r builtins:print", "r builtins:format", "r builtins:chr", "r builtins:ord", "r builtins:divmod",
	"r builtins:pow", "r builtins:all", "r builtins:any", "r builtins:callable",
	"r builtins:bool", "r builtins:type", "r builtins:complex", "r builtins:bytearray",
	"r builtins:range", "r builtins:slice", "r builtins:enumerate", "r builtins:zip",
	"r builtins:reversed", "r builtins:memoryview", "r builtins:NoneType",
	// collections (defaultdict: its factory is checked)
	"cn collections:OrderedDict",
	"cn collections:defaultdict",
	"cn collections:deque",
	"cn collections:Counter",
	// datetime and decimal write REDUCE of their class with bytes/str
	"cn datetime:datetime",
	"cn datetime:date",
	"cn datetime:time",
	"cn datetime:timedelta",
	"cn datetime:timezone",
	"c decimal:Decimal",
	// uuid.UUID: NEWOBJ/_reconstructor, then BUILD {'int': ..., 'is_safe': ...}
	"n uuid:UUID",
	"r uuid:SafeUUID",
}

var numpyPreset = []string{
	// ndarray: _reconstruct(ndarray, (0,), b'b') then BUILD; protocol 5:
	// _frombuffer(buffer, dtype, shape, order)
	"c numpy.core.multiarray:_reconstruct",
	"c numpy._core.multiarray:_reconstruct",
	"n numpy:ndarray",
	"c numpy.core.numeric:_frombuffer",
	"c numpy._core.numeric:_frombuffer",
	// dtype('f8', False, True) then BUILD (state tuple)
	"cn numpy:dtype",
	// numpy scalars: scalar(dtype, bytes)
	"c numpy.core.multiarray:scalar",
	"c numpy._core.multiarray:scalar",
	// joblib's array wrapper (its array bytes follow in the stream)
	"n joblib.numpy_pickle:NumpyArrayWrapper",
}

var torchPreset = []string{
	// torch.save: tensors, parameters, state dicts
	"c torch._utils:_rebuild_tensor",
	"c torch._utils:_rebuild_tensor_v2",
	"c torch._utils:_rebuild_parameter",
	"c torch._utils:_rebuild_parameter_with_state",
	"cn collections:OrderedDict",
	"r torch:DoubleStorage",
	"r torch:FloatStorage",
	"r torch:HalfStorage",
	"r torch:BFloat16Storage",
	"r torch:LongStorage",
	"r torch:IntStorage",
	"r torch:ShortStorage",
	"r torch:CharStorage",
	"r torch:ByteStorage",
	"r torch:BoolStorage",
	"r torch:ComplexDoubleStorage",
	"r torch:ComplexFloatStorage",
	"r torch:QUInt8Storage",
	"r torch:QInt8Storage",
	"r torch:QInt32Storage",
	"r torch:QUInt4x2Storage",
	"r torch:QUInt2x4Storage",
	"r torch:UntypedStorage",
}

// pandas 1.x-2.x, from its __reduce__/__getstate__ methods; checked on
// pandas 1.5.3's pickles of frames, series, dates, timedeltas,
// categoricals, multi-indexes and timestamps (testdata/scan/producers).
// Use with numpy.
var pandasPreset = []string{
	"n pandas.core.frame:DataFrame",
	"n pandas.core.series:Series",
	"cn pandas.core.internals.managers:BlockManager",
	"c pandas._libs.arrays:__pyx_unpickle_NDArrayBacked",
	"n pandas.core.arrays.timedeltas:TimedeltaArray",
	"n pandas.core.arrays.period:PeriodArray",
	"n pandas.core.indexes.numeric:Int64Index",
	"n pandas.core.indexes.numeric:UInt64Index",
	"n pandas.core.indexes.numeric:Float64Index",
	"n pandas.core.internals.managers:SingleBlockManager",
	"c pandas._libs.internals:_unpickle_block",
	"c pandas.core.internals.blocks:new_block",
	"c pandas.core.indexes.base:_new_Index",
	"n pandas.core.indexes.base:Index",
	"n pandas.core.indexes.range:RangeIndex",
	"n pandas.core.indexes.multi:MultiIndex",
	"c pandas.core.indexes.datetimes:_new_DatetimeIndex",
	"n pandas.core.indexes.datetimes:DatetimeIndex",
	"c pandas._libs.tslibs.timestamps:_unpickle_timestamp",
	"c pandas._libs.tslibs.timedeltas:_timedelta_unpickle",
	"n pandas.core.arrays.categorical:Categorical",
	"n pandas.core.dtypes.dtypes:CategoricalDtype",
	"n pandas.core.arrays.datetimes:DatetimeArray",
	"r pandas._libs.tslibs.nattype:NaT",
	"c pandas._libs.tslibs.nattype:__nat_unpickle",
}

// sklearn: estimators are classes of the sklearn package made by
// copyreg/NEWOBJ and given their __dict__ by BUILD (BaseEstimator's
// __setstate__ updates the dict); trees and random states are rebuilt by
// calls. Use with numpy.
var sklearnPreset = []string{
	"n sklearn.*",
	"c sklearn.tree._tree:Tree",
	"n sklearn.tree._tree:Tree",
	"n sklearn.externals.joblib.numpy_pickle:NumpyArrayWrapper",
	"cn numpy.random._pickle:__randomstate_ctor",
	"cn numpy.random._pickle:__bit_generator_ctor",
	"cn numpy.random._pickle:__generator_ctor",
	"n numpy.random.mtrand:RandomState",
}

// codeCommon: what both cloudpickle and dill write around the functions
// and classes they carry.
var codeCommon = []string{
	// class dicts of dynamic classes
	"c builtins:classmethod",
	"c builtins:staticmethod",
	"c builtins:property",
	// code objects (cloudpickle: _builtin_type('CodeType')(...))
	"c types:CodeType",
	// enums defined in __main__ (cloudpickle _make_skeleton_enum, dill _create_type)
	"r enum:Enum",
	"r enum:EnumMeta",
	"r enum:EnumType",
	"r enum:Enum.__new__",
	"r enum:Enum._generate_next_value_",
	"r enum:IntEnum",
	"r enum:Flag",
	"r enum:IntFlag",
}

var dillPreset = append([]string{
	// dill's find_class maps GLOBAL __builtin__ __main__ to the main module
	"r __builtin__:__main__",
	"r builtins:__main__",
}, codeCommon...)

func init() {
	var cp []string
	for _, m := range cpModules {
		for _, e := range cloudpickleNames {
			cp = append(cp, e[:2]+m+":"+e[2:])
		}
	}
	presets["cloudpickle"] = append(cp, codeCommon...)
	var dl []string
	for _, m := range dillModules {
		for _, e := range dillNames {
			dl = append(dl, e[:2]+m+":"+e[2:])
		}
	}
	presets["dill"] = append(dl, dillPreset...)
}

// cloudpickleNames are the functions cloudpickle writes, with their roles
// ("c " / "n "...; the module is each of cpModules).
var cloudpickleNames = []string{
	"c _builtin_type",        // types by name: _builtin_type('CodeType')
	"c _make_function",       // functions (2.x)
	"c _function_setstate",   // function state, REDUCE then POP
	"c _make_skeleton_class", // dynamic classes
	"c _make_skeleton_enum",  // dynamic enums
	"c _class_setstate",      // class state, REDUCE then POP
	"c _make_cell",           // closure cells
	"c _make_empty_cell",     // closure cells filled later
	"c _make_typevar",        // typing.TypeVar defined in __main__
	"c subimport",            // modules a function's globals name: subimport('os') imports os
	"c dynamic_subimport",    // modules defined at run time
	"c _make_dict_keys",      // dict views
	"c _make_dict_values",
	"c _make_dict_items",
}

// dillNames are the functions dill 0.3 writes (the module is each of dillModules).
var dillNames = []string{
	"c _create_function",   // functions
	"c _create_code",       // code objects
	"c _create_cell",       // closure cells
	"c _create_type",       // classes and enums
	"c _load_type",         // types by name: _load_type('FunctionType')
	"c _setattr",           // cell contents set after creation
	"c _get_attr",          // getattr(obj, name), as dill writes bound methods
	"c _import_module",     // modules a function's globals name
	"c _create_namedtuple", // namedtuples defined in __main__
}
