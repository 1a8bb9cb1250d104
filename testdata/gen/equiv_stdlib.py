# -*- coding: utf-8 -*-
"""Producer for the plain-data equiv cases (Python 2.7 and 3.x).

usage: python equiv_stdlib.py CASE PROTO c|py OUTFILE
Every run builds the value afresh; run it under different PYTHONHASHSEEDs.
"""
from __future__ import unicode_literals

import io
import sys

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
         "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho",
         "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "caf\xe9",
         "\u65e5\u672c"]


def shared_aliases():
    a = [1, 2]
    b = {"k": a, "s": "shared"}
    c = []
    return {"x": a, "y": [a, b, c], "z": (b, a, c), "w": [c, c]}


def cases():
    return {
        "set_of_strings": set(WORDS),
        "dict_fromkeys_set": dict.fromkeys(set(WORDS)),
        "nested_sets": {"fs": frozenset([frozenset(["a", "b", "c"]), frozenset(["d", "e"]),
                                         frozenset(["f"])]),
                        "s": set(["x", "y", "z", "w"]),
                        "d": dict.fromkeys(["k%d" % i for i in range(12)], 0)},
        "shared_aliases": shared_aliases(),
        "big_list": [i if i % 3 else "s%d" % (i % 100) for i in range(1500)],
    }


def main():
    case, proto, which, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    obj = cases()[case]
    if sys.version_info[0] == 2:
        import cPickle
        import pickle
        c_dumps = lambda o, p: cPickle.dumps(o, p)
        py_pickler = pickle.Pickler
    else:
        import pickle
        c_dumps = pickle.dumps
        py_pickler = pickle._Pickler
    if which == "c":
        data = c_dumps(obj, proto)
    else:
        f = io.BytesIO()
        py_pickler(f, proto).dump(obj)
        data = f.getvalue()
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
