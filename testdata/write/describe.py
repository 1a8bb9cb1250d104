"""Load pickles and print a structural description of each, one JSON line a file.

    python3 describe.py FILE...

Used by pkg/write's Python test: the originals are described in one process,
their `pk canon` outputs in another, and the descriptions must be equal. The
description is what "equivalent" means for pk canon (docs/pk-canon.md):

* data by value: dicts and sets compare without order (pk canon sorts them),
  lists and tuples in order, floats by their bits;
* identity only where it is observable: a mutable object (list, dict, set,
  bytearray, instance, function, class) seen again is a back-reference;
  immutable values are described by value wherever they appear;
* functions by their code (every code field except co_filename, which pk
  canon replaces by "<pk-canon>"), name, qualname, module, defaults,
  keyword defaults, closure contents, __dict__, and the globals their code
  names;
* dynamic classes by name, qualname, module, bases and class dict; importable
  classes and functions by module and qualified name.

Loading runs code: the Go test passes only files that `pk scan` finds clean
or carrying producer code (cloudpickle, dill), never dangerous ones.
A file that fails to load prints {"error": "<exception type>"}.
"""

import gzip
import io
import json
import lzma
import pickle
import struct
import sys
import types
import zlib

try:  # the producers, when importable, register what their pickles need
    import cloudpickle  # noqa: F401
except ImportError:
    pass
try:
    import dill
    Unpickler = dill.Unpickler  # dill's find_class knows its own names
except ImportError:
    Unpickler = pickle.Unpickler


class Describer:
    def __init__(self):
        self.seen = {}  # id -> index, for mutable objects
        self.keep = []  # keep described objects alive (ids stay unique)
        self.filenames = set()

    def ref(self, obj):
        i = self.seen.get(id(obj))
        if i is not None:
            return ["ref", i]
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        return None

    def d(self, obj, depth=0):
        if depth > 400:
            return ["deep"]
        t = type(obj)
        if obj is None or t is bool or t is int:
            return [t.__name__, repr(obj)]
        if t is float:
            return ["float", struct.pack(">d", obj).hex()]
        if t is complex:
            return ["complex", repr(obj)]
        if t is str:
            return ["str", obj]
        if t is bytes:
            return ["bytes", obj.hex()]
        if t is tuple:
            return ["tuple", [self.d(x, depth + 1) for x in obj]]
        if t is frozenset:
            return ["frozenset", sorted((self.d(x, depth + 1) for x in obj), key=json.dumps)]
        if isinstance(obj, types.CodeType):
            return self.code(obj, depth)
        if isinstance(obj, types.ModuleType):
            return ["module", obj.__name__]
        if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            return ["builtin", getattr(obj, "__module__", None), getattr(obj, "__qualname__", repr(obj))]
        if isinstance(obj, type) and self.importable(obj):
            return ["class-ref", obj.__module__, obj.__qualname__]
        if isinstance(obj, types.FunctionType) and self.importable(obj):
            return ["function-ref", obj.__module__, obj.__qualname__]
        r = self.ref(obj)
        if r is not None:
            return r
        if t is list:
            return ["list", [self.d(x, depth + 1) for x in obj]]
        if t is bytearray:
            return ["bytearray", bytes(obj).hex()]
        if t is dict:
            return ["dict", self.items(obj.items(), depth)]
        if t is set:
            return ["set", sorted((self.d(x, depth + 1) for x in obj), key=json.dumps)]
        if isinstance(obj, types.FunctionType):
            return self.function(obj, depth)
        if isinstance(obj, type):
            return ["class", obj.__name__, obj.__qualname__, obj.__module__,
                    [self.d(b, depth + 1) for b in obj.__bases__],
                    self.items(((k, v) for k, v in vars(obj).items()
                                if k not in ("__dict__", "__weakref__")), depth)]
        if isinstance(obj, (staticmethod, classmethod)):
            return [t.__name__, self.d(obj.__func__, depth + 1)]
        if isinstance(obj, property):
            return ["property", self.d(obj.fget, depth + 1), self.d(obj.fset, depth + 1),
                    self.d(obj.fdel, depth + 1), self.d(obj.__doc__, depth + 1)]
        if t.__name__ == "cell":
            try:
                return ["cell", self.d(obj.cell_contents, depth + 1)]
            except ValueError:
                return ["cell-empty"]
        out = ["object", self.d(t, depth + 1)]
        if hasattr(obj, "__dict__") and isinstance(obj.__dict__, dict):
            out.append(self.items(obj.__dict__.items(), depth))
        if isinstance(obj, dict):  # OrderedDict, defaultdict...: in order
            out.append([[self.d(k, depth + 1), self.d(v, depth + 1)] for k, v in obj.items()])
        elif isinstance(obj, (list, tuple)):
            out.append([self.d(x, depth + 1) for x in obj])
        elif isinstance(obj, (set, frozenset)):
            out.append(sorted((self.d(x, depth + 1) for x in obj), key=json.dumps))
        if not hasattr(obj, "__dict__") and not isinstance(obj, (dict, list, tuple, set, frozenset)):
            out.append(repr(obj))
        return out

    def items(self, pairs, depth):
        keyed = [(self.d(k, depth + 1), v) for k, v in pairs]
        keyed.sort(key=lambda kv: json.dumps(kv[0]))
        return [[k, self.d(v, depth + 1)] for k, v in keyed]

    @staticmethod
    def importable(obj):
        mod = sys.modules.get(getattr(obj, "__module__", None) or "")
        if mod is None or mod.__name__ == "__main__":
            return False
        x = mod
        try:
            for part in obj.__qualname__.split("."):
                x = getattr(x, part)
        except AttributeError:
            return False
        return x is obj

    def code(self, co, depth):
        self.filenames.add(co.co_filename)
        fields = {}
        for name in dir(co):
            if not name.startswith("co_") or name in ("co_filename", "co_lines", "co_positions"):
                continue
            v = getattr(co, name)
            if callable(v):
                continue
            fields[name] = self.d(v, depth + 1)
        return ["code", fields]

    def function(self, f, depth):
        names = set()
        stack = [f.__code__]
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
        globs = {k: f.__globals__[k] for k in sorted(names) if k in f.__globals__}
        closure = None
        if f.__closure__ is not None:
            closure = []
            for cell in f.__closure__:
                try:
                    closure.append(self.d(cell.cell_contents, depth + 1))
                except ValueError:
                    closure.append(["cell-empty"])
        return ["function", f.__name__, f.__qualname__, f.__module__, self.d(f.__code__, depth + 1),
                self.d(f.__defaults__, depth + 1), self.d(f.__kwdefaults__, depth + 1), closure,
                self.items(vars(f).items(), depth), self.items(globs.items(), depth),
                self.d(f.__doc__, depth + 1)]


def load(path):
    """The pickles of a file (decompressed), loaded back to back, as a list;
    trailing bytes that are not a pickle end the list."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    elif data[:6] == b"\xfd7zXZ\x00":
        data = lzma.decompress(data)
    elif data[:2] == b"]\x00":
        data = lzma.decompress(data, format=lzma.FORMAT_ALONE)
    elif data[:1] == b"x":
        data = zlib.decompress(data)
    elif data[:3] == b"BZh" and data[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        import bz2  # here: a Python without it loads the rest

        data = bz2.decompress(data)
    if data[:6] == b"\x93NUMPY":  # a .npy file (object arrays hold a pickle)
        import numpy as np
        a = np.load(io.BytesIO(data), allow_pickle=True)
        return ["npy", str(a.dtype), list(a.shape), a.tolist()]
    f = io.BytesIO(data)
    out = [Unpickler(f).load()]
    while f.tell() < len(data):
        pos = f.tell()
        try:
            out.append(Unpickler(f).load())
        except Exception:
            f.seek(pos)
            out.append(["trailing", f.read().hex()])
    return out


def main():
    sys.setrecursionlimit(10000)
    for path in sys.argv[1:]:
        try:
            obj = load(path)
        except BaseException as e:  # noqa: B902 - the type is the answer
            print(json.dumps({"file": path, "error": type(e).__name__}))
            continue
        dsc = Describer()
        try:
            desc = dsc.d(obj)
        except BaseException as e:
            print(json.dumps({"file": path, "error": "describe: " + type(e).__name__ + ": " + str(e)[:100]}))
            continue
        print(json.dumps({"file": path, "desc": desc, "filenames": sorted(dsc.filenames)}))


if __name__ == "__main__":
    main()
