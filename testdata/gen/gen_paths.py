"""Path cases: testdata/paths/<case>/{a,b}.pkl plus what.txt, pairs whose pk
diff entries go through the places docs/paths.md numbers rather than
spells: dict keys and set elements that are no literal (<key i>, {#i}),
counted in pickle order, and effects (<effect i>), numbered by their place
in the stream's call log.  cmd/paths_test.go checks that every path pk diff
and pk hash --explain print for them is found by pk trace --path and
accepted by pk diff --ignore.

usage: python3 gen_paths.py OUTDIR
  The object-key cases are made by the stdlib pickler (protocol 4, any
  CPython 3.8+); the effect cases are hand-assembled opcodes (calls the
  loader makes and throws away, which no pickler writes).  Nothing here is
  ever unpickled by this script.
"""
import collections
import datetime
import os
import pickle
import shutil
import sys

PROTO = 4


def write_case(outdir, name, a, b, what):
    d = os.path.join(outdir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    assert a != b, name
    for n, data in (("a.pkl", a), ("b.pkl", b)):
        with open(os.path.join(d, n), "wb") as f:
            f.write(data)
    with open(os.path.join(d, "what.txt"), "w") as f:
        f.write(what.rstrip("\n") + "\n")


def D(y):
    return datetime.date(y, 1, 1)


def object_key_cases(outdir):
    # keys written in an order that is not the canonical one (dates by
    # value would sort otherwise than written), so a canonical count and a
    # pickle count give different numbers
    a = {D(2022): "c", frozenset({1, 2}): "fs", D(2020): "a", D(2021): "b", "plain": 1}
    b = {D(2022): "c", frozenset({1, 2}): "FS", D(2020): "a", D(2023): "d", "plain": 1}
    write_case(outdir, "object_keys", pickle.dumps(a, PROTO), pickle.dumps(b, PROTO),
               "dict keyed by datetime.date objects and a frozenset: the value under frozenset({1, 2}) "
               "changed (root[<key 1>]), date(2021) removed (root[<key 3>] in a), date(2023) added (root[<key 3>] in b)")
    a = {"s": {D(2022), D(2020), D(2021)}}
    b = {"s": {D(2022), D(2020), D(2024)}}
    write_case(outdir, "object_set", pickle.dumps(a, PROTO), pickle.dumps(b, PROTO),
               "a set of datetime.date objects: date(2021) removed, date(2024) added (root['s']{#i})")
    a = collections.OrderedDict([(D(2021), 1), (D(2020), 2)])
    b = collections.OrderedDict([(D(2021), 1), (D(2020), 3)])
    write_case(outdir, "ordereddict_object_keys", pickle.dumps(a, PROTO), pickle.dumps(b, PROTO),
               "an OrderedDict (its items set by SETITEMS on the object) keyed by dates: the value under "
               "date(2020) changed (root[<key 1>])")
    return 3


# opcodes, protocol 2
GLOBAL = lambda mod, name: b"c" + mod + b"\n" + name + b"\n"
UNI = lambda s: b"X" + len(s).to_bytes(4, "little") + s
EMPTY_TUPLE, TUPLE1, TUPLE2, REDUCE, POP, MARK, SETITEMS = b")", b"\x85", b"\x86", b"R", b"0", b"(", b"u"
BINPUT = lambda i: b"q" + bytes([i])
BINGET = lambda i: b"h" + bytes([i])
HEAD, TAIL = b"\x80\x02", b"]q\x00."  # [] as what loading returns


def call(g, *args):
    out = g
    if not args:
        return out + EMPTY_TUPLE + REDUCE
    for a in args:
        out += a
    return out + {1: TUPLE1, 2: TUPLE2}[len(args)] + REDUCE


def effect_cases(outdir):
    pr = GLOBAL(b"builtins", b"print")
    # a: print('x') POP, bytearray(_codecs.encode('abc', 'latin1')) POP,
    #    an OrderedDict kept in memo and given an item (a mutation) POP
    # b: print('y') (the call changed), the bytearray the same, the
    #    mutation's value changed, and one more call
    ba = call(GLOBAL(b"builtins", b"bytearray"), call(GLOBAL(b"_codecs", b"encode"), UNI(b"abc"), UNI(b"latin1"))) + POP
    od = lambda v: call(GLOBAL(b"collections", b"OrderedDict")) + BINPUT(1) + POP + BINGET(1) + MARK + UNI(b"k") + UNI(v) + SETITEMS + POP
    a = HEAD + call(pr, UNI(b"x")) + POP + ba + od(b"v") + TAIL
    b = HEAD + call(pr, UNI(b"y")) + POP + ba + od(b"w") + call(pr) + POP + TAIL
    write_case(outdir, "effects", a, b,
               "hand-assembled: both load to [], while loading they call print('x') (b: print('y')), "
               "bytearray(_codecs.encode('abc', 'latin1')) and an OrderedDict given the item 'k': 'v' "
               "(b: 'w'), all thrown away; b also calls print()")
    return 1


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    n = object_key_cases(outdir) + effect_cases(outdir)
    print("paths: wrote %d cases" % n)


if __name__ == "__main__":
    main()
