"""Load two joblib files (an original and its pk canon output) with
joblib.load and say whether they load to the same thing: prints "same", or
the first difference.

    python3 joblib_compare.py ORIGINAL CANONICAL

Same means: the same structure (dicts compared without order, as pk canon
sorts plain dicts; OrderedDicts and lists in order), numpy arrays of equal
dtype, shape, memory order and values, equal scalars. Used by pkg/write's
TestPythonJoblib (joblib.load runs pickle code: only the committed fixtures).
"""

import sys
from collections import OrderedDict

import joblib
import numpy as np


def compare(a, b, where):
    if type(a) is not type(b):
        return "%s: %s vs %s" % (where, type(a).__name__, type(b).__name__)
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape or a.flags["C_CONTIGUOUS"] != b.flags["C_CONTIGUOUS"] \
                or a.flags["F_CONTIGUOUS"] != b.flags["F_CONTIGUOUS"]:
            return "%s: array layout differs" % where
        if a.dtype.hasobject:
            return compare(a.tolist(), b.tolist(), where)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            return "%s: array values differ" % where
        return None
    if isinstance(a, dict):
        ka, kb = list(a), list(b)
        if isinstance(a, OrderedDict) and ka != kb:
            return "%s: keys %r vs %r" % (where, ka, kb)
        if set(ka) != set(kb):
            return "%s: keys %r vs %r" % (where, ka, kb)
        for k in ka:
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
    if a != b:
        return "%s: %r vs %r" % (where, a, b)
    return None


print(compare(joblib.load(sys.argv[1]), joblib.load(sys.argv[2]), "root") or "same")
