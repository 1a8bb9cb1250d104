"""Check pk canon's bz2 outputs with Python's bz2: for each pair ORIGINAL
CANONICAL, bz2.decompress(CANONICAL) must be the bytes of CANONICAL.plain
(the canonical pickle or .npy file, as Go decompressed it), and CANONICAL
must load as ORIGINAL does. Prints one JSON line a pair: {"file"} when both
hold, {"file","error"} when one does not, {"file","skip"} when this Python
cannot load the original (a module missing).

    python3 bz2_compare.py ORIGINAL CANONICAL [ORIGINAL CANONICAL ...]

Loading: np.load (allow_pickle=False) of a .npy file, joblib.load of a
joblib file (".joblib" in its name), else pickle.loads of the decompressed
bytes. Equal means: the same structure (dicts without order, as pk canon
sorts plain dicts; lists and tuples in order), numpy arrays and torch
tensors of equal dtype, shape and values, equal scalars. Used by pkg/write's
TestPythonBz2 (pickle.load runs pickle code: only the committed fixtures).
"""

import bz2
import io
import json
import pickle
import sys


def load(path):
    with open(path, "rb") as f:
        data = bz2.decompress(f.read())
    if data[:6] == b"\x93NUMPY":
        import numpy as np

        return np.load(io.BytesIO(data), allow_pickle=False)
    if ".joblib" in path:
        import joblib

        return joblib.load(path)
    return pickle.loads(data)


def compare(a, b, where):
    if type(a) is not type(b):
        return "%s: %s vs %s" % (where, type(a).__name__, type(b).__name__)
    mod = type(a).__module__
    if mod == "numpy" and type(a).__name__ == "ndarray":
        import numpy as np

        if a.dtype != b.dtype or a.shape != b.shape:
            return "%s: array dtype or shape differs" % where
        if a.dtype.hasobject:
            return compare(a.tolist(), b.tolist(), where)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            return "%s: array values differ" % where
        return None
    if mod.startswith("torch"):
        import torch

        if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride() or not torch.equal(a, b):
            return "%s: tensor differs" % where
        return None
    if isinstance(a, dict):
        if set(a) != set(b):
            return "%s: keys %r vs %r" % (where, list(a), list(b))
        for k in a:
            d = compare(a[k], b[k], "%s[%r]" % (where, k))
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return "%s: length" % where
        for i, (x, y) in enumerate(zip(a, b)):
            d = compare(x, y, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    if a != b and not (a != a and b != b):  # NaN equals NaN here
        return "%s: %r vs %r" % (where, a, b)
    return None


def check(orig, out):
    with open(out, "rb") as f:
        data = f.read()
    with open(out + ".plain", "rb") as f:
        want = f.read()
    try:
        got = bz2.decompress(data)
    except Exception as e:
        return {"error": "bz2.decompress: %s: %s" % (type(e).__name__, e)}
    if got != want:
        return {"error": "bz2.decompress gives %d bytes, not the %d of the canonical pickle" % (len(got), len(want))}
    try:
        a = load(orig)
    except ImportError as e:
        return {"skip": "the original does not load here: %s" % e}
    try:
        b = load(out)
    except Exception as e:
        return {"error": "the output does not load: %s: %s" % (type(e).__name__, e)}
    d = compare(a, b, "root")
    if d:
        return {"error": "loads differently: " + d}
    return {}


def main():
    args = sys.argv[1:]
    for i in range(0, len(args), 2):
        r = check(args[i], args[i + 1])
        r["file"] = args[i + 1]
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
