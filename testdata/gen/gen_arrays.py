"""Fixtures for pk-canon/2's arrays (issue 11): testdata/arrays/.

Each object of OBJECTS is written in every form its producers offer, each
file by a separate process: pickle protocols 0-5 (protocol 5 in-band),
joblib plain and zlib-compressed, np.save (.npy) for plain arrays. The
"changed" objects differ from their base in one element. Numpy 2 is not
installed here: the numpy2_* files are the protocol 4 and 5 pickles of
c_int32 written under numpy 2's names (numpy._core.multiarray._reconstruct,
numpy._core.numeric._frombuffer), assembled by a reducer that names them.

Run with Debian's python3 (numpy 1.24, joblib 1.2, pandas, sklearn):

    /usr/bin/python3 testdata/gen/gen_arrays.py [OUTDIR]

PK_ONLY=name,name rewrites only those objects (the others are left alone).

Compressed containers go to OUTDIR/compressed/ (COMPRESSED): joblib with
each of its compressors (zlib, gzip, bz2, xz, lzma, lz4) and whole-file
gzip/xz of pickles, for pk diff's element names through a decompression
(pkg/diff/arrays_test.go). gzip is written with mtime 0, so a rerun gives
the same bytes.

The Go tests (pkg/canon/array_test.go) read the committed files only.
"""
import os
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "arrays")

OBJECTS = {
    "c_int32": "np.arange(6, dtype='<i4').reshape(2, 3)",
    "c_int32_changed": "(lambda a: (a.__setitem__((1, 2), 99), a)[1])(np.arange(6, dtype='<i4').reshape(2, 3))",
    "f_float64": "np.asfortranarray(np.arange(12.0).reshape(3, 4))",
    "c_float64_same_values": "np.ascontiguousarray(np.arange(12.0).reshape(3, 4))",
    "structured": "np.array([(1, 2.0), (3, 4.0)], dtype=[('a', '<i4'), ('b', '<f8')])",
    "structured_nested": "np.zeros(2, dtype=[('a', '<i4'), ('p', '<f4', (2,)), ('s', [('x', 'u1'), ('y', 'S3')])])",
    "structured_offsets": "np.zeros(3, dtype={'names': ['a', 'b'], 'formats': ['<i2', '<f8'], 'offsets': [0, 8], 'itemsize': 16})",
    "objects": "np.array([1, 'x', None, (2, 3)], dtype=object)",
    "objects_changed": "np.array([1, 'y', None, (2, 3)], dtype=object)",
    # object arrays of two dimensions (items in C order)
    "objects2d": "(lambda a: (a.__setitem__(slice(None), [[(0, 'a'), 1, None], ['b', 2.5, (1,)]]), a)[1])(np.empty((2, 3), dtype=object))",
    "objects2d_changed": "(lambda a: (a.__setitem__(slice(None), [[(0, 'a'), 1, None], ['b', 2.5, 'c']]), a)[1])(np.empty((2, 3), dtype=object))",
    # one element changed in a Fortran-order array (against c_float64_same_values: another order)
    "f_float64_changed": "(lambda a: (a.__setitem__((2, 1), -7.0), a)[1])(np.asfortranarray(np.arange(12.0).reshape(3, 4)))",
    "objects_alias": "(lambda x: {'a': np.array([x, 1], dtype=object), 'x': x})([1, 2])",
    "bools": "np.array([True, False, True])",
    "dates": "np.array(['2020-01-01', '2021-06-01'], dtype='M8[D]')",
    "unicode": "np.array(['ab', 'cde'])",
    "bigendian": "np.arange(4, dtype='>f4')",
    "scalar0d": "np.array(3.5)",
    "empty": "np.zeros((0, 3))",
    "dict_of_arrays": "{'w': np.arange(10.0).reshape(2, 5), 'b': np.ones(3, dtype='<f4'), 'name': 'model'}",
    "dict_of_arrays_reordered": "{'b': np.ones(3, dtype='<f4'), 'name': 'model', 'w': np.arange(10.0).reshape(2, 5)}",
    "dict_of_arrays_changed": "{'w': np.arange(10.0).reshape(2, 5), 'b': np.array([1, 1, 2], dtype='<f4'), 'name': 'model'}",
    "shared": "(lambda a: [a, a])(np.arange(3))",
    "unshared": "[np.arange(3), np.arange(3)]",
    # one array of each dtype spelling pk diff names elements of (half, complex, bool, big-endian,
    # unsigned, 64-bit ints, datetimes), and the same with one element of each changed
    "dtypes": "{'f2': np.array([0.1, 1.0, 2.0], dtype='<f2'), 'c8': np.array([1+2j, 0.1-1j], dtype='<c8'), 'c16': np.array([1+2j, 0.5], dtype='<c16'), 'b1': np.array([True, False, True]), 'be': np.arange(3, dtype='>f4'), 'u2': np.array([1, 65535], dtype='<u2'), 'i8': np.array([-1, 2**40], dtype='<i8'), 'M8': np.array(['2020-01-01', '2021-06-01'], dtype='M8[D]')}",
    "dtypes_changed": "{'f2': np.array([0.1, 1.0, -2.5], dtype='<f2'), 'c8': np.array([1+2j, 3j], dtype='<c8'), 'c16': np.array([1+2j, -0.25+1j], dtype='<c16'), 'b1': np.array([True, True, True]), 'be': np.array([0, 1, 2.5], dtype='>f4'), 'u2': np.array([1, 7], dtype='<u2'), 'i8': np.array([-1, -2**40], dtype='<i8'), 'M8': np.array(['2020-01-01', '2021-06-02'], dtype='M8[D]')}",
    "frame": "pd.DataFrame({'x': [1, 2, 3], 'score': [0.5, 0.25, 0.125]})",
    "linreg": "LinearRegression().fit(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, 3.0, 5.0]))",
}

# compressed containers (OUTDIR/compressed): object name -> expression
COMPRESSED = {
    "dict": "{'w': np.arange(10.0).reshape(2, 5), 'b': np.ones(3, dtype='<f4'), 'name': 'model'}",
    "dict_changed": "{'w': np.arange(10.0).reshape(2, 5), 'b': np.array([1, 1, 2], dtype='<f4'), 'name': 'model'}",
    # 1.2 MB of data: a streamed payload (pk reads it again through the decompression)
    "big": "{'w': np.zeros((500, 600), dtype='<f4')}",
    "big_changed": "{'w': (lambda a: (a.__setitem__((400, 123), 1.5), a)[1])(np.zeros((500, 600), dtype='<f4'))}",
}
COMPRESSED_FORMS = [  # form, file suffix
    ("jl:zlib", ".joblib.z"), ("jl:gzip", ".joblib.gz"), ("jl:bz2", ".joblib.bz2"), ("jl:xz", ".joblib.xz"),
    ("jl:lzma", ".joblib.lzma"), ("jl:lz4", ".joblib.lz4"),
    ("gz:p2", "_p2.pkl.gz"), ("gz:p4", "_p4.pkl.gz"), ("gz:p5", "_p5.pkl.gz"), ("xz:p4", "_p4.pkl.xz"),
]

PLAIN = {"c_int32", "c_int32_changed", "f_float64", "c_float64_same_values", "structured", "structured_nested",
         "structured_offsets", "bools", "dates", "objects", "objects_changed",
         "unicode", "bigendian", "scalar0d", "empty"}

PRELUDE = """
import pickle, sys, numpy as np, joblib
import pandas as pd
from sklearn.linear_model import LinearRegression
obj = %s
form, path = sys.argv[1], sys.argv[2]
if form.startswith('p'):
    with open(path, 'wb') as f:
        pickle.dump(obj, f, protocol=int(form[1:]))
elif form == 'joblib':
    joblib.dump(obj, path)
elif form == 'joblibz':
    joblib.dump(obj, path, compress=3)
elif form == 'npy':
    np.save(path, obj)
elif form.startswith('jl:'):
    joblib.dump(obj, path, compress=(form[3:], 3))
elif form.startswith('gz:'):
    import gzip
    with open(path, 'wb') as f:
        f.write(gzip.compress(pickle.dumps(obj, protocol=int(form[4:])), mtime=0))
elif form.startswith('xz:'):
    import lzma
    with open(path, 'wb') as f:
        f.write(lzma.compress(pickle.dumps(obj, protocol=int(form[4:]))))
"""

NUMPY2 = """
import pickle, sys, types, numpy as np
obj = np.arange(6, dtype='<i4').reshape(2, 3)
proto, path = int(sys.argv[1]), sys.argv[2]
def _reconstruct(*a): pass
def _frombuffer(*a): pass
for mod, fn in (('numpy._core.multiarray', _reconstruct), ('numpy._core.numeric', _frombuffer)):
    m = types.ModuleType(mod)
    setattr(m, fn.__name__, fn)
    fn.__module__ = mod
    sys.modules[mod] = m
class P(pickle.Pickler):
    def reducer_override(self, o):
        if type(o) is np.ndarray:
            r = o.__reduce_ex__(proto)
            f = r[0]
            if f is np.core.multiarray._reconstruct:
                return (_reconstruct,) + r[1:]
            if f is np.core.numeric._frombuffer:
                return (_frombuffer,) + r[1:]
        return NotImplemented
with open(path, 'wb') as f:
    P(f, protocol=proto).dump(obj)
"""


def run(code, *args):
    subprocess.run([sys.executable, "-c", code] + list(args), check=True, env=dict(os.environ, PYTHONHASHSEED="0"))


def main():
    if os.environ.get("PK_ONLY_NUMPY2"):
        return numpy2()
    if os.environ.get("PK_ONLY_COMPRESSED"):
        return compressed()
    os.makedirs(OUT, exist_ok=True)
    only = [n for n in os.environ.get("PK_ONLY", "").split(",") if n]  # rewrite these objects only
    if not only:
        for name in os.listdir(OUT):
            if name.endswith((".pkl", ".joblib", ".npy")):
                os.remove(os.path.join(OUT, name))
    for name, expr in OBJECTS.items():
        if only and name not in only:
            continue
        forms = ["p0", "p1", "p2", "p3", "p4", "p5", "joblib", "joblibz"]
        if name in PLAIN:
            forms.append("npy")
        for form in forms:
            ext = {"joblib": ".joblib", "joblibz": ".z.joblib", "npy": ".npy"}.get(form, ".pkl")
            tag = "" if form in ("joblib", "joblibz", "npy") else "_" + form
            path = os.path.join(OUT, name + tag + ext)
            run(PRELUDE % expr, form, path)
    if not only:
        numpy2()
        compressed()


def compressed():
    out = os.path.join(OUT, "compressed")
    os.makedirs(out, exist_ok=True)
    try:
        import lz4  # noqa: F401  (joblib's lz4 compressor needs it)
        has_lz4 = True
    except ImportError:
        has_lz4 = False
        print("   SKIP: no lz4 module: the .joblib.lz4 files are left as they are")
    for name, expr in COMPRESSED.items():
        for form, suffix in COMPRESSED_FORMS:
            if name.startswith("big") and form not in ("jl:zlib", "gz:p4", "gz:p2"):
                continue
            if form == "jl:lz4" and not has_lz4:
                continue
            path = os.path.join(out, name + suffix)
            if os.path.exists(path):
                os.remove(path)
            run(PRELUDE % expr, form, path)


def numpy2():
    for proto in (4, 5):
        run(NUMPY2, str(proto), os.path.join(OUT, "numpy2_c_int32_p%d.pkl" % proto))


if __name__ == "__main__":
    main()
