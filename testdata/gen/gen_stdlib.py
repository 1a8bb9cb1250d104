# -*- coding: utf-8 -*-
"""stdlib fixtures: the catalogue in fixture_types.build_items() pickled with
the C pickler and the pure-Python pickler.

usage: python gen_stdlib.py OUTDIR TAG [--items] [--protocols 0,1,2] [--batch 2,4]

Writes  OUTDIR/values_p<P>_<c|py>_<TAG>.pkl        (dict name -> value)
and, with --items,
        OUTDIR/item_<name>_p<P>_c_<TAG>.pkl        (one catalogue entry)
plus    OUTDIR/bytearray_p5_<c|py>_<TAG>.pkl       (BYTEARRAY8, protocol 5 only)
and, with --batch,
        OUTDIR/batch_p<P>_<c|py>_<TAG>.pkl         (fixture_types.build_batch())

Runs on Python 2.7 and 3.6+.  Deterministic given PYTHONHASHSEED.
"""
from __future__ import print_function

import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_types  # noqa: E402

PY2 = sys.version_info[0] == 2
if PY2:
    import cPickle
    import pickle

    def dumps_c(obj, proto):
        return cPickle.dumps(obj, proto)

    def dumps_py(obj, proto):
        f = io.BytesIO()
        pickle.Pickler(f, proto).dump(obj)
        return f.getvalue()
else:
    import pickle

    def dumps_c(obj, proto):
        return pickle.dumps(obj, proto)

    def dumps_py(obj, proto):
        f = io.BytesIO()
        pickle._Pickler(f, proto).dump(obj)
        return f.getvalue()

PICKLERS = [("c", dumps_c), ("py", dumps_py)]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    args = sys.argv[1:]
    outdir, tag = args[0], args[1]
    with_items = "--items" in args
    protos = list(range(pickle.HIGHEST_PROTOCOL + 1))
    if "--protocols" in args:
        protos = [int(p) for p in args[args.index("--protocols") + 1].split(",")]
    if not os.path.isdir(outdir):
        os.makedirs(outdir)
    items = fixture_types.build_items()
    n = 0
    for proto in protos:
        for pname, dumps in PICKLERS:
            root = {}
            for name, value in items:
                try:
                    dumps(value, proto)
                except Exception as e:  # some values need a newer protocol/python
                    print("  SKIP %s at p%d/%s on %s: %s: %s"
                          % (name, proto, pname, tag, type(e).__name__, e))
                    continue
                root[name] = value
            write(os.path.join(outdir, "values_p%d_%s_%s.pkl" % (proto, pname, tag)),
                  dumps(root, proto))
            n += 1
            if proto >= 5:
                write(os.path.join(outdir, "bytearray_p%d_%s_%s.pkl" % (proto, pname, tag)),
                      dumps(bytearray(b"pk bytearray \x00\xff"), proto))
                n += 1
        if with_items:
            for name, value in items:
                try:
                    data = dumps_c(value, proto)
                except Exception:
                    continue
                write(os.path.join(outdir, "item_%s_p%d_c_%s.pkl" % (name, proto, tag)), data)
                n += 1
    if "--batch" in args:
        for proto in [int(p) for p in args[args.index("--batch") + 1].split(",")]:
            for pname, dumps in PICKLERS:
                write(os.path.join(outdir, "batch_p%d_%s_%s.pkl" % (proto, pname, tag)),
                      dumps(fixture_types.build_batch(), proto))
                n += 1
    if with_items:
        # a human-readable listing of the catalogue for this Python
        with io.open(os.path.join(outdir, "items_%s.repr.txt" % tag), "w", encoding="utf-8") as f:
            for name, value in items:
                r = repr(value)
                if PY2:
                    r = r.decode("ascii")
                if len(r) > 400:
                    r = r[:400] + "... (%d chars)" % len(r)
                f.write("%s: %s\n" % (name, r))
    print("stdlib %s: wrote %d pickles" % (tag, n))


if __name__ == "__main__":
    main()
