# -*- coding: utf-8 -*-
"""stdlib fixtures: the catalogue in fixture_types.build_items() pickled with
the C pickler and the pure-Python pickler.

usage: python gen_stdlib.py OUTDIR TAG [--items] [--protocols 0,1,2] [--py-protocols 2]
                            [--batch 2,4] [--extras]

Writes  OUTDIR/values_p<P>_<c|py>_<TAG>.pkl        (dict name -> value)
and, with --items,
        OUTDIR/item_<name>_p<P>_c_<TAG>.pkl        (one catalogue entry)
plus    OUTDIR/bytearray_p5_<c|py>_<TAG>.pkl       (BYTEARRAY8, protocol 5 only)
and, with --extras (Python 3 only), see write_extras()
and, with --batch,
        OUTDIR/batch_p<P>_<c|py>_<TAG>.pkl         (fixture_types.build_batch())

Runs on Python 2.7 and 3.6+.  Deterministic given PYTHONHASHSEED.
"""
from __future__ import print_function

import io
import os
import re
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


def write_extras(outdir, tag):
    """Real-pickler outputs for rarer opcodes (C pickler only):
      memo_long_p<0|2>   > 256 memo entries (LONG_BINPUT / LONG_BINGET)
      persid_p<0|2>      Pickler.persistent_id: PERSID (p0) / BINPERSID (p2)
      ext_codes_p2       copyreg extension codes 1, 300, 70000: EXT1/EXT2/EXT4
                         (the loader needs the same copyreg.add_extension calls:
                         ('fixture_types', 'Point') = 1, ('fixture_types',
                         'WithReduce') = 300, ('fixture_types', 'Slotted') = 70000)"""
    import copyreg
    n = 0
    for proto in (0, 2):
        write(os.path.join(outdir, "memo_long_p%d_c_%s.pkl" % (proto, tag)),
              pickle.dumps(fixture_types.build_memo_long(), proto))
        n += 1

    class PersPickler(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, str) and obj.startswith("ext:"):
                return obj[4:]
            return None

    for proto in (0, 2):
        f = io.BytesIO()
        PersPickler(f, proto).dump(["ext:storage/0", {"k": "ext:storage/1"}, "plain"])
        write(os.path.join(outdir, "persid_p%d_c_%s.pkl" % (proto, tag)), f.getvalue())
        n += 1

    codes = [(fixture_types.Point, 1), (fixture_types.WithReduce, 300), (fixture_types.Slotted, 70000)]
    for cls, code in codes:
        copyreg.add_extension(cls.__module__, cls.__name__, code)
    try:
        write(os.path.join(outdir, "ext_codes_p2_c_%s.pkl" % tag),
              pickle.dumps([cls for cls, _ in codes], 2))
        n += 1
    finally:
        for cls, code in codes:
            copyreg.remove_extension(cls.__module__, cls.__name__, code)
    return n


def main():
    args = sys.argv[1:]
    outdir, tag = args[0], args[1]
    with_items = "--items" in args
    protos = list(range(pickle.HIGHEST_PROTOCOL + 1))
    if "--protocols" in args:
        protos = [int(p) for p in args[args.index("--protocols") + 1].split(",")]
    py_protos = protos
    if "--py-protocols" in args:
        py_protos = [int(p) for p in args[args.index("--py-protocols") + 1].split(",")]
    if not os.path.isdir(outdir):
        os.makedirs(outdir)
    # drop this tag's previous outputs (and their oracle files)
    for n in os.listdir(outdir):
        if ("_%s.pkl" % tag) in n or n == "items_%s.repr.txt" % tag:
            os.remove(os.path.join(outdir, n))
    items = fixture_types.build_items()
    n = 0
    for proto in protos:
        for pname, dumps in PICKLERS:
            if pname == "py" and proto not in py_protos:
                continue
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
    if "--extras" in args:
        n += write_extras(outdir, tag)
    if with_items:
        # a human-readable listing of the catalogue for this Python
        with io.open(os.path.join(outdir, "items_%s.repr.txt" % tag), "w", encoding="utf-8") as f:
            for name, value in items:
                r = repr(value)
                if PY2:
                    r = r.decode("ascii")
                r = re.sub(r" at 0x[0-9a-fA-F]+", "", r)  # no addresses: keep reruns identical
                if len(r) > 400:
                    r = r[:400] + "... (%d chars)" % len(r)
                f.write("%s: %s\n" % (name, r))
    print("stdlib %s: wrote %d pickles" % (tag, n))


if __name__ == "__main__":
    main()
