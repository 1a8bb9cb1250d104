"""Write testdata/write/dtypes/: numpy arrays of the dtypes pk canon's dtype writer must rebuild from a
canonical descr alone (pkg/write/array.go), pickled at protocols 2, 4 and 5 by numpy itself.

    python3 testdata/write/gen_dtypes.py testdata/write/dtypes

Used by pkg/write's TestPythonDtypes: each file's canonical output, loaded in another process, has the dtype
(str, descr, item size, alignment, flags, aligned or not), shape, order and values of the original. Debian's
python3 with numpy 1.24 wrote the committed files.
"""

import os
import pickle
import sys

import numpy as np

DTYPES = {
    "c8": np.dtype("<c8"),
    "c16": np.dtype("<c16"),
    "f2": np.dtype("<f2"),
    "f16": np.dtype("<f16"),
    "u2be": np.dtype(">u2"),
    "s5": np.dtype("S5"),
    "v3": np.dtype("V3"),
    "m8_us": np.dtype("<m8[us]"),
    "m8_generic": np.dtype("<M8"),
    "titled": np.dtype([(("the title", "t"), "<i4"), ("u", "<f8")]),
    "aligned": np.dtype([("a", "<i2"), ("b", "<f8"), ("c", "<c8")], align=True),
    "nested_aligned": np.dtype([("n", np.dtype([("a", "<i2"), ("b", "<f8")], align=True)), ("x", "u1")]),
    "unicode_field": np.dtype([("u", "<U3"), ("i", "<i2")]),
    "subarray_field": np.dtype([("s", ("<f4", (2, 3))), ("k", "<i8")]),
    "object_field": np.dtype([("o", "O"), ("i", "<i8")]),
    "datetime_field": np.dtype([("t", "<M8[ns]"), ("d", "<m8[D]")]),
    "many_fields": np.dtype([("f%d" % i, "<i%d" % (1 << (i % 4))) for i in range(6)]),
}


def make(name, dt):
    n = 4
    a = np.zeros(n, dtype=dt)
    if dt.names:
        for i, f in enumerate(dt.names):
            sub = dt.fields[f][0]
            if sub.kind == "O":
                a[f] = [("x", i), None, 3.5, "y"]
            elif sub.kind in "iu":
                a[f] = np.arange(n) + i
            elif sub.kind in "fc":
                a[f] = np.arange(n) * 0.5 + i
            elif sub.kind == "U":
                a[f] = ["a", "bc", "def", ""]
            elif sub.kind in "Mm":
                a[f] = np.arange(n).astype(sub)
    elif dt.kind in "iufc":
        a = (np.arange(n) * 3).astype(dt)
    elif dt.kind == "S":
        a = np.array([b"a", b"bc", b"def", b"ghijk"], dtype=dt)
    elif dt.kind == "V":
        a = np.frombuffer(b"abcdefghijkl", dtype=dt)
    elif dt.kind in "Mm":
        a = np.arange(n).astype(dt)
    return a.reshape(2, 2)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, dt in DTYPES.items():
        a = make(name, dt)
        for proto in (2, 4, 5):
            with open(os.path.join(out, "%s_p%d.pkl" % (name, proto)), "wb") as f:
                pickle.dump({"a": a, "t": a.T}, f, protocol=proto)


if __name__ == "__main__":
    main()
