#!/usr/bin/env python3
"""Write the pk scan test corpus: bypass and side-effect pickles from raw
opcodes (pickle-facts §4-§5 and the scanner bypasses published against
picklescan, fickling and modelscan), a few invalid inputs, and data-only
controls written by CPython's own pickler.

    python3 testdata/scan/gen.py          # from the repository root

Nothing here is ever unpickled: each hand-made file is checked with
pickletools.dis (which only reads opcodes), except the ones that are
invalid on purpose. expect.txt lists every file with the verdict pk scan
must give and a word its findings must contain; pkg/scan's tests read it.
"""
import datetime
import decimal
import collections
import gzip
import io
import os
import pickle
import pickletools
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

expect = []  # (name, verdict, word)


def su(s):
    """SHORT_BINUNICODE."""
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b


def write(name, data, verdict, word="", check=True):
    if check:
        try:
            pickletools.dis(data, out=io.StringIO())  # well-formed opcodes
        except ValueError as e:
            # CPython's loader ignores what is left on the stack at STOP
            if "stack not empty after STOP" not in str(e):
                raise
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    expect.append((name, verdict, word))


P2 = b"\x80\x02"
P4 = b"\x80\x04"
ECHO = b"S'echo pk'\n"

# --- globals spelled every way --------------------------------------------
write("global_reduce.pkl", b"cos\nsystem\n(" + ECHO + b"tR.", "dangerous", "os.system")
write("posix_system.pkl", b"cposix\nsystem\n(" + ECHO + b"tR.", "dangerous", "posix.system")
write("nt_system_p2.pkl", P2 + b"cnt\nsystem\n" + ECHO + b"\x85R.", "dangerous", "nt.system")
# STACK_GLOBAL whose names come from the memo (pushed, memoised, popped)
write("stack_global_memo.pkl",
      P4 + su("os") + b"\x94" + b"0" + su("system") + b"\x94" + b"0"
      + b"h\x00h\x01\x93" + su("echo pk") + b"\x85R.", "dangerous", "names from the memo")
# STACK_GLOBAL whose module name is computed at load time: rot13('bf') == 'os'
write("stack_global_dynamic.pkl",
      P4 + su("_codecs") + su("decode") + b"\x93" + su("bf") + su("rot13") + b"\x86R"
      + su("system") + b"\x93" + su("echo pk") + b"\x85R.", "dangerous", "computed at load time")
write("inst.pkl", b"(" + ECHO + b"ios\nsystem\n.", "dangerous", "INST")
write("obj.pkl", b"(cos\nsystem\n" + ECHO + b"o.", "dangerous", "OBJ")
write("newobj_popen.pkl", P2 + b"csubprocess\nPopen\n" + b"]" + su("ls") + b"a\x85\x81.", "dangerous", "subprocess.Popen")
write("reconstructor_popen.pkl", b"ccopy_reg\n_reconstructor\n(csubprocess\nPopen\nc__builtin__\nobject\nNtR.",
      "dangerous", "subprocess.Popen")
# protocol 0 text forms and protocol 2 __builtin__ spellings of eval/exec
write("p0_builtin_eval.pkl", b"c__builtin__\neval\n(Vprint(1)\ntR.", "dangerous", "builtins.eval")
write("p2_builtin_exec.pkl", P2 + b"c__builtin__\nexec\nX\x08\x00\x00\x00print(1)\x85R.", "dangerous", "builtins.exec")
# a dotted name at protocol 4: posixpath.os.system is os.system
write("dotted_p4.pkl", P4 + su("posixpath") + su("os.system") + b"\x93" + su("echo pk") + b"\x85R.", "dangerous", "posixpath.os.system")
# the same dotted name below protocol 4: CPython refuses it, still flagged
write("dotted_p2.pkl", P2 + b"cposixpath\nos.system\n" + ECHO + b"\x85R.", "dangerous", "below protocol 4")

# --- names hidden behind calls --------------------------------------------
write("getattr_import.pkl",
      b"c__builtin__\ngetattr\n(c__builtin__\n__import__\n(S'os'\ntRS'system'\ntR(" + ECHO + b"tR.",
      "dangerous", "os.system")
write("getattr_import_module.pkl",
      P4 + su("builtins") + su("getattr") + b"\x93" + su("importlib") + su("import_module") + b"\x93"
      + su("subprocess") + b"\x85R" + su("getoutput") + b"\x86R" + su("id") + b"\x85R.", "dangerous", "subprocess.getoutput")
# getattr on an object the pickle built: ().__class__.__base__.__subclasses__()
write("getattr_subclasses.pkl",
      P4 + su("builtins") + su("getattr") + b"\x93\x94"
      + b"h\x00h\x00)" + su("__class__") + b"\x86R" + su("__base__") + b"\x86R" + su("__subclasses__") + b"\x86R)R.",
      "dangerous", "cannot be")
write("attrgetter.pkl",
      P4 + su("operator") + su("attrgetter") + b"\x93" + su("system") + b"\x85R"
      + su("importlib") + su("import_module") + b"\x93" + su("os") + b"\x85R\x85R" + su("echo pk") + b"\x85R.",
      "dangerous", "operator.attrgetter")
write("pkgutil_resolve_name.pkl",
      P4 + su("pkgutil") + su("resolve_name") + b"\x93" + su("os:system") + b"\x85R" + su("echo pk") + b"\x85R.",
      "dangerous", "os.system")
write("partial_system.pkl",
      P4 + su("functools") + su("partial") + b"\x93" + su("os") + su("system") + b"\x93" + su("echo pk") + b"\x86R)R.",
      "dangerous", "functools.partial")
write("defaultdict_factory.pkl",
      P2 + b"ccollections\ndefaultdict\n" + b"cos\nsystem\n" + b"\x85R.", "dangerous", "missing key")
write("sys_modules.pkl",
      P4 + su("builtins") + su("getattr") + b"\x93\x94" + su("operator") + su("getitem") + b"\x93"
      + su("sys") + su("modules") + b"\x93" + su("os") + b"\x86R" + su("system") + b"\x86R" + su("echo pk") + b"\x85R.",
      "dangerous", "os.system")
# EXT codes: resolved through copyreg's registry of the loading process
write("ext_code.pkl", P2 + b"\x82\x01" + ECHO + b"\x85R.", "dangerous", "EXT")
write("ext_after_add_extension.pkl",
      P2 + b"ccopyreg\nadd_extension\n(S'os'\nS'system'\nK\xf0tR0" + b"\x82\xf0" + ECHO + b"\x85R.",
      "dangerous", "registered by copyreg.add_extension")
# a nested pickle run by pickle.loads, and torch's own nested torch.load
inner = b"cos\nsystem\n(" + ECHO + b"tR."
write("nested_loads.pkl", P2 + b"cpickle\nloads\nC" + bytes([len(inner)]) + inner + b"\x85R.", "dangerous", "pickle.loads")
write("torch_load_from_bytes.pkl", P2 + b"ctorch.storage\n_load_from_bytes\nC" + bytes([len(inner)]) + inner + b"\x85R.",
      "dangerous", "torch.load")
write("marshal_loads.pkl", P2 + b"cmarshal\nloads\nC\x01\xe3\x85R.", "dangerous", "marshal.loads")
write("runpy.pkl", P2 + b"crunpy\nrun_path\nX\x07\x00\x00\x00evil.py\x85R.", "dangerous", "runpy.run_path")

# --- results that look harmless: the call runs anyway ---------------------
CALL = b"cos\nsystem\n(" + ECHO + b"tR"
write("reduce_pop.pkl", CALL + b"0]." , "dangerous", "discarded by POP")
write("memo_only.pkl", CALL + b"p0\n0]." , "dangerous", "memo")
write("left_under.pkl", CALL + b"]." , "dangerous", "left on the stack")
write("unclosed_mark.pkl", b"(" + CALL + b"]." , "dangerous", "MARK")
write("pop_mark.pkl", b"(" + CALL + b"1]." , "dangerous", "discarded by POP")
write("inside_list.pkl", b"(lp0\n" + CALL + b"a.", "dangerous", "os.system")

# --- mutations of objects the pickle did not create -----------------------
# BUILD on a class: patches collections.OrderedDict for the whole process
write("build_global_class.pkl", P2 + b"ccollections\nOrderedDict\n}S'__repr__'\nc__builtin__\nid\nsb0]." ,
      "dangerous", "patched")
# SETITEM on builtins.__dict__ fetched by getattr: rebinds len
write("setitem_builtins_dict.pkl",
      P4 + su("builtins") + su("getattr") + b"\x93" + su("importlib") + su("import_module") + b"\x93"
      + su("builtins") + b"\x85R" + su("__dict__") + b"\x86R" + su("len") + su("builtins") + su("abs") + b"\x93s0)." ,
      "dangerous", "builtins.__dict__")
write("setitem_global_dict.pkl", b"c__builtin__\n__dict__\nS'len'\nc__builtin__\nabs\ns0N.", "dangerous", "builtins.__dict__")

# --- allowed callables with arguments CPython never writes ----------------
# set(range(10**12)) and bytearray(10**12): plain-data names, unbounded memory
write("set_of_range.pkl", P2 + b"c__builtin__\nset\nc__builtin__\nxrange\nJ\x00\x00\x00\x00\x8a\x06\x00\x10\xa5\xd4\xe8\x00\x86R\x85R.",
      "unknown", "list or tuple")
write("bytearray_int.pkl", P2 + b"c__builtin__\nbytearray\n\x8a\x06\x00\x10\xa5\xd4\xe8\x00\x85R.", "unknown", "allocates")

# --- code and unknown -----------------------------------------------------
write("function_type.pkl", P2 + b"ctypes\nFunctionType\n(NNtR.", "code", "types.FunctionType")
write("unknown_class.pkl", P2 + b"cmymodule\nThing\n)\x81}S'x'\nK\x01sb.", "unknown", "mymodule.Thing")
write("unknown_resolve.pkl", P2 + b"cmymodule\nhelper\n.", "unknown", "mymodule.helper")

# --- several streams, containers, invalid bytes ---------------------------
data = pickle.dumps({"a": [1, 2, 3]}, protocol=4)
write("second_stream.pkl", data + inner, "dangerous", "os.system")
gz = io.BytesIO()
with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0) as g:
    g.write(inner)
write("gzipped.pkl.gz", gz.getvalue(), "dangerous", "os.system", check=False)
# after a good stream, a stream that calls os.system, then an invalid opcode
write("trailing_call.pkl", data + CALL + b"\xff", "invalid", "", check=False)
write("truncated.pkl", inner[:-3], "invalid", "", check=False)
write("empty.pkl", b"", "invalid", "", check=False)
write("not_a_pickle.txt", b"hello world\n", "invalid", "", check=False)
# an argument that crosses the end of its frame: pk refuses it
frame = P4 + b"\x95" + struct.pack("<Q", 3) + b"\x8c\x05hel" + b"lo."
write("frame_crossing.pkl", frame, "invalid", "", check=False)

# --- controls: plain data by CPython's pickler ----------------------------
controls = {
    "data_p0.pkl": (0, {"a": [1, 2.5, "x", b"by", (None, True)], "s": {1, 2}, "f": frozenset([3])}),
    "data_p2.pkl": (2, [bytearray(b"ab"), b"bytes", complex(1, 2), set("ab"), range(3), slice(1, 2)]),
    "data_p4.pkl": (4, collections.OrderedDict(a=datetime.datetime(2020, 1, 2, 3, 4, 5),
                                               b=datetime.timedelta(3), c=decimal.Decimal("1.5"),
                                               d=collections.defaultdict(list, x=[1]))),
    "data_p5.pkl": (5, {"tz": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
                        "types": [type(None), type(...), type(NotImplemented)], "e": ...}),
}
for name, (proto, value) in controls.items():
    write(name, pickle.dumps(value, protocol=proto), "clean", "")

with open(os.path.join(HERE, "expect.txt"), "w") as f:
    f.write("# written by gen.py: FILE VERDICT [a word the findings must contain]\n")
    for name, verdict, word in expect:
        f.write(f"{name}\t{verdict}\t{word}\n")
print(f"{len(expect)} files in {OUT}", file=sys.stderr)
