#!/usr/bin/env python3
"""Cost shapes: legal but costly pickles (issue 10 §4).

    python3 testdata/costshapes/gen.py testdata/costshapes/shapes      # committed copies (.pkl.gz)
    python3 testdata/costshapes/gen.py --raw --changed DIR             # full-size plain .pkl (scripts/bench.d/costshapes.sh)
    python3 testdata/costshapes/gen.py --readme testdata/costshapes/README.md DIR

Writes every shape below into DIR, plus DIR/manifest.json: for each shape its
file, size, SHA-256, number of pickles back to back, whether CPython loads it
("loads") or refuses it ("refused", with the exception), what it stresses, and
a small change (offset, bytes removed, bytes inserted) that gives a different
pickle CPython still loads, for `pk diff` against a changed copy.

Every shape is checked with CPython (this interpreter, in a subprocess with a
4 GiB address-space limit and a time limit): it must load, every pickle in the
file until EOF, or be refused quickly, as declared; the changed copy must load
too. --no-check skips that (the output is the same, provided each shape's
first candidate change loads, as every one does today: the check takes the
first one that does).

Stdlib only. Deterministic: the same bytes on every run (no hash-ordered sets
of str/bytes are pickled, gzip has mtime 0 and no name). Made with CPython
3.11; the few shapes written by pickle.dumps (tables, wide dicts) use only
plain types, a SimpleNamespace and argparse.Namespace, whose encodings have not
changed since 3.8.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import time
import types

M = 1_000_000

# ---------------------------------------------------------------- opcodes

MARK, STOP, POP, POP_MARK, DUP = b"(", b".", b"0", b"1", b"2"
NONE, NEWTRUE, NEWFALSE = b"N", b"\x88", b"\x89"
EMPTY_LIST, APPEND, APPENDS, LIST = b"]", b"a", b"e", b"l"
EMPTY_TUPLE, TUPLE, TUPLE1, TUPLE2, TUPLE3 = b")", b"t", b"\x85", b"\x86", b"\x87"
EMPTY_DICT, DICT, SETITEM, SETITEMS = b"}", b"d", b"s", b"u"
EMPTY_SET, ADDITEMS, FROZENSET = b"\x8f", b"\x90", b"\x91"
REDUCE, NEWOBJ, BUILD, STACK_GLOBAL = b"R", b"\x81", b"b", b"\x93"
MEMOIZE = b"\x94"
P0, P2, P4 = b"", b"\x80\x02", b"\x80\x04"


def GLOBAL(mod, name):
    return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"


def put(i):
    return b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i)


def get(i):
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def lget(i):
    return b"j" + struct.pack("<I", i)


def frame(n):
    return b"\x95" + struct.pack("<Q", n)


def u(s):
    b = s.encode("utf-8", "surrogatepass")
    if len(b) < 256:
        return b"\x8c" + bytes([len(b)]) + b
    return b"X" + struct.pack("<I", len(b)) + b


def by(b):
    if len(b) < 256:
        return b"C" + bytes([len(b)]) + b
    if len(b) < 2**32:
        return b"B" + struct.pack("<I", len(b)) + b
    return b"\x8e" + struct.pack("<Q", len(b)) + b


def i_(v):
    """An int as CPython's pickler writes it at protocol 2+."""
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -(2**31) <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    b = pickle.encode_long(v)
    if len(b) < 256:
        return b"\x8a" + bytes([len(b)]) + b
    return b"\x8b" + struct.pack("<I", len(b)) + b


def f_(v):
    return b"G" + struct.pack(">d", v)


class FS(list):
    """A frozenset, written with its items in this order."""


class SET(list):
    """A set, written with its items in this order."""


class PAIRS(list):
    """A dict written as these (key, value) pairs in order (keys may collide)."""


def enc(v, out):
    """Appends v's opcodes (no memo) to the list of byte strings out."""
    if v is None:
        out.append(NONE)
    elif v is True:
        out.append(NEWTRUE)
    elif v is False:
        out.append(NEWFALSE)
    elif isinstance(v, int):
        out.append(i_(v))
    elif isinstance(v, float):
        out.append(f_(v))
    elif isinstance(v, str):
        out.append(u(v))
    elif isinstance(v, bytes):
        out.append(by(v))
    elif isinstance(v, tuple):
        if not v:
            out.append(EMPTY_TUPLE)
        elif len(v) <= 3:
            for x in v:
                enc(x, out)
            out.append((TUPLE1, TUPLE2, TUPLE3)[len(v) - 1])
        else:
            out.append(MARK)
            for x in v:
                enc(x, out)
            out.append(TUPLE)
    elif isinstance(v, FS):
        out.append(MARK)
        for x in v:
            enc(x, out)
        out.append(FROZENSET)
    elif isinstance(v, SET):
        out.append(EMPTY_SET)
        for k in range(0, len(v), 1000):
            out.append(MARK)
            for x in v[k : k + 1000]:
                enc(x, out)
            out.append(ADDITEMS)
    elif isinstance(v, list):
        out.append(EMPTY_LIST)
        for k in range(0, len(v), 1000):
            out.append(MARK)
            for x in v[k : k + 1000]:
                enc(x, out)
            out.append(APPENDS)
    elif isinstance(v, (dict, PAIRS)):
        items = list(v.items()) if isinstance(v, dict) else list(v)
        out.append(EMPTY_DICT)
        for k in range(0, len(items), 1000):
            out.append(MARK)
            for a, b in items[k : k + 1000]:
                enc(a, out)
                enc(b, out)
            out.append(SETITEMS)
    else:
        raise TypeError(type(v))


def E(v, proto=P4):
    out = [proto]
    enc(v, out)
    out.append(STOP)
    return b"".join(out)


# ---------------------------------------------------------------- shapes

SHAPES = []  # (name, function, cpython, description, divisor of the committed copy)


def shape(cpython, desc, committed=1):
    """cpython: "loads" or "refused" (refused quickly, as the check asserts).

    committed: the committed .pkl.gz copy is made with counts divided by this
    (the function takes the divisor as its argument). gzip cannot squeeze a
    long run of distinct keys below ~2 bytes each, so the shapes whose point
    is many distinct dict keys or memo indices are committed smaller; every
    other shape's values repeat with a short period and is committed whole.
    """

    def reg(fn):
        SHAPES.append((fn.__name__, fn, cpython, desc, committed))
        return fn

    return reg


# A shape function returns the bytes, or (bytes, change) with change =
# (offset, remove, insert): an explicit small edit for the diff test. Without
# one, a numeric or string argument near the middle is changed.

# --- deep nesting: a million levels of each kind


@shape("loads", "10^6 nested lists, EMPTY_LIST x 10^6 then APPEND x 10^6 (outer first)")
def nest_list_append():
    d = P4 + EMPTY_LIST * M + APPEND * (M - 1) + STOP
    return d, (2 + M - 1, 1, EMPTY_TUPLE)  # the innermost list becomes a tuple


@shape("loads", "10^6 nested lists, MARK x 10^6 then LIST x 10^6")
def nest_list_mark():
    return P4 + MARK * M + LIST * M + STOP, (2 + M + M // 2, 1, TUPLE)


@shape("loads", "10^6 nested tuples, MARK x 10^6 then TUPLE x 10^6")
def nest_tuple_mark():
    return P4 + MARK * M + TUPLE * M + STOP, (2 + M + M // 2, 1, LIST)


@shape("loads", "10^6 nested 1-tuples, EMPTY_TUPLE then TUPLE1 x 10^6")
def nest_tuple1():
    return P4 + EMPTY_TUPLE + TUPLE1 * M + STOP, (2, 1, NONE)


@shape("loads", "10^6 nested pairs ((((), None), None), ...): NONE TUPLE2 x 10^6")
def nest_tuple2():
    return P4 + EMPTY_TUPLE + (NONE + TUPLE2) * M + STOP, (3 + M, 1, NEWTRUE)


@shape("loads", "10^6 nested dicts {0: {0: ...}}: (EMPTY_DICT K0) x 10^6, SETITEM x 10^6")
def nest_dict_setitem():
    return P4 + (EMPTY_DICT + b"K\x00") * M + EMPTY_DICT + SETITEM * M + STOP


@shape("loads", "10^6 nested dicts by MARK K0 ... DICT x 10^6")
def nest_dict_mark():
    return P4 + (MARK + b"K\x00") * M + MARK + DICT * (M + 1) + STOP


@shape("loads", "10^6 nested frozensets (frozenset of frozenset), MARK x 10^6 then FROZENSET x 10^6")
def nest_frozenset():
    return P4 + MARK * M + FROZENSET * M + STOP, (2 + M + M // 2, 1, TUPLE)


@shape("loads", "10^6 levels cycling list > dict value > tuple > list, by MARK")
def nest_mixed():
    kinds = [(MARK, LIST), (MARK + b"K\x07", DICT), (MARK, TUPLE)]
    pre = b"".join(kinds[k % 3][0] for k in range(M))
    suf = b"".join(kinds[k % 3][1] for k in reversed(range(M)))
    return P4 + pre + NONE + suf + STOP


@shape("loads", "10^6 nested calls list((list((...,)),)): BINGET builtins.list, TUPLE1, TUPLE1, REDUCE")
def nest_reduce():
    d = P4 + GLOBAL("builtins", "list") + put(0) + get(0) * (M - 1)
    at = len(d)
    d += EMPTY_TUPLE + REDUCE + (TUPLE1 + TUPLE1 + REDUCE) * (M - 1) + STOP
    return d, (at, 1, NONE + TUPLE1 + TUPLE1)  # the innermost list() becomes list((None,))


@shape("loads", "10^6 nested objects: types.SimpleNamespace NEWOBJ, BUILD {'a': inner}")
def nest_newobj_build():
    d = P4 + GLOBAL("types", "SimpleNamespace") + put(0) + POP + u("a") + put(1) + POP
    level = get(0) + EMPTY_TUPLE + NEWOBJ + EMPTY_DICT + get(1)
    d += level * M + get(0) + EMPTY_TUPLE + NEWOBJ + (SETITEM + BUILD) * M + STOP
    return d


@shape("loads", "10^6 MARKs each closed by POP_MARK (nested), then None")
def marks_pop_mark():
    return P4 + MARK * M + POP_MARK * M + NONE + STOP, (2 + 2 * M, 1, NEWTRUE)


@shape("loads", "10^6 MARKs never closed, then None and STOP (CPython ignores marks left)")
def marks_unclosed():
    return P4 + MARK * M + NONE + STOP, (2 + M, 1, NEWTRUE)


# --- DAGs: x = [x, x] by memo (the billion laughs family)


def laughs(levels, width, leaf, mk, alt, get_=lget):
    """x = leaf, then levels times x = mk(width gets of x); the change makes the leaf alt."""
    d = [P4, leaf, MEMOIZE, POP]
    for lv in range(levels):
        d.append(mk(b"".join(get_(lv) for _ in range(width))))
        d.append(MEMOIZE)
        d.append(POP)
    d.pop()
    d.append(STOP)
    return b"".join(d), (2, len(leaf), alt)


@shape("loads", "billion laughs, mutable: x = [x, x] 40 times by BINGET (2^40 paths; tiny file)")
def dag_list_40():
    return laughs(40, 2, EMPTY_LIST, lambda g: MARK + g + LIST, EMPTY_TUPLE, get)


@shape("loads", "billion laughs, immutable: x = (x, x) 40 times by BINGET (2^40 paths; tiny file)")
def dag_tuple_40():
    return laughs(40, 2, EMPTY_TUPLE, lambda g: g + TUPLE2, NONE, get)


def deep(levels, leaf, body, alt):
    """x = leaf, then levels times x = body (which reads x as BINGET 1), kept by BINPUT 1."""
    d = P4 + u("a") + put(0) + POP + leaf + put(1) + POP + (body + put(1) + POP) * levels
    return d[:-1] + STOP, (len(P4 + u("a") + put(0) + POP), len(leaf), alt)


@shape("loads", "x = [x, x] 400,000 times, one memo slot (BINGET 1, BINPUT 1): 2^400000 paths")
def dag_list_deep():
    return deep(400_000, EMPTY_LIST, MARK + get(1) + get(1) + LIST, EMPTY_TUPLE)


@shape("loads", "x = (x, x) 400,000 times, one memo slot: 2^400000 paths through immutable tuples")
def dag_tuple_deep():
    return deep(400_000, EMPTY_TUPLE, get(1) + get(1) + TUPLE2, NONE)


@shape("loads", "x = {'a': x, 'b': (x,)} 400,000 times, one memo slot (dict values shared)")
def dag_dict_deep():
    return deep(400_000, EMPTY_DICT, MARK + get(0) + get(1) + u("b") + get(1) + TUPLE1 + DICT, NONE)


@shape("loads", "x = [x] * 1000, 1000 times: 1000^1000 paths, 10^6 LONG_BINGETs")
def dag_wide():
    return laughs(1000, 1000, EMPTY_LIST, lambda g: MARK + g + LIST, EMPTY_TUPLE)


@shape("loads", "x = frozenset({x, (x,)}) 400,000 times, one memo slot: a hashable DAG")
def dag_frozenset_deep():
    return deep(400_000, MARK + FROZENSET, MARK + get(1) + get(1) + TUPLE1 + FROZENSET, MARK + TUPLE)


# --- cycles


@shape("loads", "a chain of 10^6 lists closing back on itself: l0 = [l1], ..., l999999 = [l0]")
def cycle_list():
    return P4 + EMPTY_LIST + MEMOIZE + EMPTY_LIST * (M - 1) + lget(0) + APPEND * M + STOP, (3 + M, 0, NONE + APPEND)


@shape("loads", "a chain of 10^6 dicts {0: next} closing back on the first")
def cycle_dict():
    d = P4 + EMPTY_DICT + MEMOIZE + (b"K\x00" + EMPTY_DICT) * (M - 1) + b"K\x00" + lget(0)
    return d + SETITEM * M + STOP


@shape("loads", "one list holding itself 10^6 times: x = [x] * 10^6")
def cycle_self():
    return P4 + EMPTY_LIST + MEMOIZE + MARK + b"h\x00" * M + APPENDS + STOP, (5 + M, 2, b"K\x05")


@shape("loads", "a ring of 500,000 SimpleNamespace objects: o.a = next, the last .a = the first")
def cycle_objects():
    n = 500_000
    d = P4 + GLOBAL("types", "SimpleNamespace") + put(0) + POP + u("a") + put(1) + POP
    d += get(0) + EMPTY_TUPLE + NEWOBJ + put(2) + EMPTY_DICT + get(1)
    d += (get(0) + EMPTY_TUPLE + NEWOBJ + EMPTY_DICT + get(1)) * (n - 1)
    return d + get(2) + (SETITEM + BUILD) * n + STOP


# --- wide containers


@shape("loads", "a dict of 500,000 int keys (BININT1/2/BININT/LONG1 mixed)", 4)
def wide_dict_int(div):
    return E({(k * 7919) - 2**21 if k % 5 else k * 2**40: k % 7 for k in range(500_000 // div)})


@shape("loads", "a dict of 500,000 float keys (incl. 0.0, inf, subnormals, 4 NaNs, which stay apart)", 4)
def wide_dict_float(div):
    keys = [k * 0.25 - 60000.0 for k in range(500_000 // div - 8)]
    keys += [-0.0001, float("inf"), float("-inf"), 5e-324, float("nan"), float("nan"), float("nan"), float("nan")]
    return E(PAIRS((k, None) for k in keys))


@shape("loads", "a dict of 500,000 str keys", 4)
def wide_dict_str(div):
    return E({"key%06d" % k: k % 3 == 0 for k in range(500_000 // div)})


@shape("loads", "a dict of 400,000 bytes keys", 4)
def wide_dict_bytes(div):
    return E({b"b%06d\x00\xff" % k: None for k in range(400_000 // div)})


@shape("loads", "a dict of 300,000 tuple keys (int, str, (float, None))", 4)
def wide_dict_tuple(div):
    return E({(k, "t%d" % (k % 100), (k % 1000 * 0.5, None)): k % 1000 for k in range(300_000 // div)})


@shape("loads", "a dict of 200,000 frozenset keys of ints and tuples", 4)
def wide_dict_frozenset(div):
    return E(PAIRS((FS([k, -(k % 1000) - 1, (k % 1000, 1)]), k % 1000) for k in range(200_000 // div)))


@shape("loads", "a dict of 500,000 entries, keys of every type mixed (int, float, str, bytes, tuple, None/bool, frozenset)", 4)
def wide_dict_mixed(div):
    pairs = []
    for k in range(500_000 // 7 // div):
        pairs += [(k * 10 + 3, 1), (k + 0.5, 2), ("s%d" % k, 3), (b"b%d" % k, 4),
                  ((k, "t"), 5), (FS([k, k + 2**40]), 6), (("n", k, None), 7)]
    pairs += [(None, 0), (True, 0), (False, 0), ((), 0), (FS([]), 0), ("", 0), (b"", 0)]
    return E(PAIRS(pairs))


@shape("loads", "500,000 SETITEMs of keys that collide in CPython (k, float(k), True/1/1.0, 0/-0.0/False): 250,002 keys", 4)
def wide_dict_collide(div):
    pairs = [(True, "t"), (1, "i"), (1.0, "f"), (False, "F"), (0, "z"), (-0.0, "nz")]
    for k in range(2, 250_000 // div):
        pairs += [(k, k % 1000), (float(k), -(k % 1000))]
    pairs += [(2**53, 0), (float(2**53), 1), (2**53 + 1, 2)]
    return E(PAIRS(pairs))


@shape("loads", "a set of 500,000 mixed hashables (ADDITEMS)", 4)
def wide_set(div):
    items = []
    for k in range(500_000 // 4 // div):
        items += [k, k + 0.5, (k, None), FS([k, -1])]
    return E(SET(items))


@shape("loads", "a tuple of 10^6 items by one MARK ... TUPLE")
def wide_tuple():
    vals = [i_((j * 7919) % 300_000 - 1000) for j in range(1000)]
    return P4 + MARK + b"".join(vals[k % 1000] for k in range(M)) + TUPLE + STOP


@shape("loads", "a list of 10^6 medium ints (BININT2, BININT, LONG1 mixed)")
def wide_list_ints():
    vals = [(j * 104729) % 2**33 - 2**32 + (j % 3) * 2**45 for j in range(997)]
    return E([vals[k % 997] for k in range(M)])


# --- big numbers, every form


@shape("refused", "LONG text of 2,000,000 decimal digits (CPython: 4300-digit limit)")
def long_text_huge():
    return P2 + b"L" + b"1234567890" * 200_000 + b"L\n" + STOP


@shape("refused", "INT text of 3,000,000 digits (CPython: 4300-digit limit)")
def int_text_huge():
    return P0 + b"I" + b"9876543210" * 300_000 + b"\n" + STOP


@shape("loads", "1000 LONG texts of 4300 digits each (at CPython's limit), in a list")
def long_text_many():
    digits = (b"31415926535897932384626433832795028841971693993751" * 86)[:4300]
    return P2 + EMPTY_LIST + (MARK + (b"L" + digits + b"L\n") * 100 + APPENDS) * 10 + STOP


@shape("loads", "one LONG4 of 8 MiB (about 20 million decimal digits)")
def long4_huge():
    b = bytes(range(256)) * (8 * 4096)
    return P4 + b"\x8b" + struct.pack("<I", len(b)) + b[:-1] + b"\x3f" + STOP


@shape("loads", "25,000 LONG1 ints of 255 bytes each (~614 digits), in a list")
def long1_many():
    out = [P4, EMPTY_LIST]
    for k in range(0, 25_000, 1000):
        out.append(MARK)
        for j in range(k, k + 1000):
            b = bytes((j * 31 + x) % 256 for x in range(254)) + bytes([j % 120])
            out.append(b"\x8a\xff" + b)
        out.append(APPENDS)
    out.append(STOP)
    return b"".join(out)


@shape("loads", "400,000 ints in every encoding: INT text (incl. I00/I01 bools, 0x/0o), LONG text, BININT1/2, BININT, LONG1, LONG4")
def ints_every_form():
    forms = [b"I%d\n", b"I-%d\n", b"I0x%x\n", b"I0o%o\n", b"L%dL\n", b"L-%d\n"]
    out = [P2, EMPTY_LIST]
    for k in range(0, 400_000, 1000):
        out.append(MARK)
        for j in range(k, k + 1000):
            r = j % 12
            if r < 6:
                out.append(forms[r] % (j % 1200 * 977))
            elif r == 6:
                out.append(b"I01\n" if j % 24 < 12 else b"I00\n")
            elif r == 7:
                out.append(b"\x8b" + struct.pack("<I", 3) + (j % 1200).to_bytes(3, "little"))
            else:
                out.append(i_(j % 1200 * 3 ** (r - 7) * (-1) ** j))
        out.append(APPENDS)
    out.append(STOP)
    return b"".join(out)


@shape("loads", "floats in every form: FLOAT text (nan, inf, -0.0, 1e308, 17 digits), BINFLOAT (NaN payloads, subnormals), and 3 FLOAT texts of 1 MB of digits")
def floats_every_form():
    texts = [b"nan", b"inf", b"-inf", b"-0.0", b"1e308", b"4.9406564584124654e-324",
             b"0.1", b"2.5", b"-1.0000000000000002", b"123456789012345680.0"]
    out = [P2, EMPTY_LIST]
    for k in range(0, 300_000, 1000):
        out.append(MARK)
        for j in range(k, k + 1000):
            r = j % 6
            if r < 2:
                out.append(b"F" + texts[j % len(texts)] + b"\n")
            elif r == 2:
                out.append(b"G" + struct.pack(">Q", 0x7FF0000000000001 + j % 1000))  # NaN payloads
            elif r == 3:
                out.append(b"G" + struct.pack(">Q", j % 1000))  # subnormals
            else:
                out.append(f_(j % 1000 / 64 - 1000))
        out.append(APPENDS)
    out.append(MARK)
    for k in range(3):
        out.append(b"F" + b"3." + b"1415926535" * 100_000 + b"e-%d\n" % k)
    out.append(APPENDS)
    out.append(STOP)
    return b"".join(out)


# --- long escaped strings, every renderer


@shape("loads", "UNICODE (protocol 0, raw-unicode-escape) of 5 MB: \\uXXXX, \\UXXXXXXXX, lone surrogates, Latin-1 bytes")
def unicode_escaped():
    unit = b"\\u00e9\\U0001f600\\u000a\\u005c\\ud800ab\"'\xe9\x7f\\u0000 "
    n = 5_000_000 // len(unit)
    return P0 + b"V" + unit * n + b"\n" + STOP, (1 + n // 2 * len(unit) + unit.index(b"ab"), 1, b"A")


@shape("loads", "STRING (protocol 0) of 5 MB with escapes: \\x00, \\n, \\t, \\\\, \\', octal")
def string_escaped():
    unit = b"\\x00\\n\\t\\\\\\'\\101\\x7fabc\\r\"q"
    n = 5_000_000 // len(unit)
    return P0 + b"S'" + unit * n + b"'\n" + STOP, (2 + n // 2 * len(unit) + unit.index(b"abc"), 1, b"A")


@shape("loads", "BINUNICODE of 5 MB: control characters, quotes, backslashes, non-BMP, lone surrogates (surrogatepass)")
def binunicode_controls():
    unit = "\x00\x01\x1b\x7f\x85\u2028'\"\\\n\t\ud800\udfff\U0001f600\u00e9x"
    s = unit * (5_000_000 // len(unit.encode("utf-8", "surrogatepass")))
    return P4 + u(s) + STOP


@shape("loads", "bytes of every value: 5 x BINBYTES just under 1 MiB, one BINBYTES8 of 3 MiB")
def bytes_escaped():
    small = bytes(range(256)) * 4095
    big = (bytes(range(255, -1, -1)) * 12288)
    d = P4 + EMPTY_LIST + MARK + by(small) * 5
    d += b"\x8e" + struct.pack("<Q", len(big)) + big + APPENDS + STOP
    return d


@shape("loads", "a list of 10^6 short strings with control characters and quotes")
def str_many_short():
    vals = ["\x00", "'", '"', "\\", "\n", "é", "\U0001f600", "a\tb", "\x7f", "\ud800"]
    out = [P4, EMPTY_LIST]
    for k in range(0, M, 1000):
        out.append(MARK)
        out += [u(vals[j % 10] + "%d" % (j % 10)) for j in range(k, k + 1000)]
        out.append(APPENDS)
    out.append(STOP)
    return b"".join(out)


# --- many pickles in one file


@shape("loads", "10^6 pickles back to back: N. x 10^6 (protocol 0)")
def streams_none():
    return b"N." * M, (M, 1, b"K\x01")


@shape("loads", "200,000 pickles back to back, each a small dict with a list (pickle.dumps, framed)")
def streams_dicts():
    return b"".join(pickle.dumps({"a": k % 500, "b": [k % 500 % 7, "x"]}, protocol=4) for k in range(200_000))


# --- memo storms


@shape("refused", "10^6 LONG_BINPUTs at sparse indices up to 2^31-1 (CPython grows its memo array to 2x the index: MemoryError)", 5)
def memo_sparse(div):
    out = [P4]
    for k in range(M // div):
        idx = 2**31 - 1 - (k % 1024) * 2**21 - (k // 1024)
        out.append(NONE + b"r" + struct.pack("<I", idx) + POP)
    out.append(MARK + b"".join(lget(2**31 - 1 - k * 2**21) for k in range(1000)) + LIST + STOP)
    return b"".join(out)


@shape("loads", "700,000 LONG_BINPUTs at sparse indices below 2^23 (CPython loads it: a 128 MB memo array), 100,000 read back", 5)
def memo_sparse_small(div):
    out = [P4]
    for k in range(700_000 // div):
        out.append(i_(k % 200) + b"r" + struct.pack("<I", (k * 12) % 2**23) + POP)
    out.append(MARK + b"".join(lget((k * 12) % 2**23) for k in range(100_000 // div)) + LIST + STOP)
    return b"".join(out), (3, 1, b"\x01")  # the first value, which is read back


@shape("loads", "one memoised dict of 10 lists read 10^6 times by BINGET into one list")
def memo_get_storm():
    v = {"k%d" % k: [k, "v%d" % k, k * 0.5] for k in range(10)}
    out = [P4]
    enc(v, out)
    return b"".join(out) + MEMOIZE + POP + MARK + b"h\x00" * M + LIST + STOP


@shape("loads", "MEMOIZE 10^6 times on one None, then 1000 LONG_BINGETs across the memo")
def memoize_storm():
    return P4 + NONE + MEMOIZE * M + POP + MARK + b"".join(lget(k * 997) for k in range(1000)) + LIST + STOP, (2, 1, NEWTRUE)


@shape("loads", "10^6 distinct empty lists memoised and popped (the memo holds them all)")
def memo_distinct():
    return P4 + (EMPTY_LIST + MEMOIZE + POP) * M + lget(M // 2) + STOP, (2 + 3 * (M // 2), 1, EMPTY_TUPLE)


@shape("loads", "BINPUT 0 overwritten 10^6 times with different ints, then BINGET 0")
def memo_overwrite():
    d = P4 + b"".join(i_(k % 1000 * 61) + b"q\x00" + POP for k in range(M)) + get(0) + STOP
    last = len(d) - 3 - 6 + 1  # the low byte of the last BININT2, the value read back
    return d, (last, 1, bytes([d[last] ^ 1]))


# --- discarded globals and calls


@shape("loads", "500,000 GLOBAL builtins.id + POP (text GLOBAL, protocol 2)")
def globals_discarded():
    d = P2 + (GLOBAL("builtins", "id") + POP) * 500_000 + NONE + STOP
    return d, (len(d) - 2, 1, NEWTRUE)  # the final None


@shape("loads", "10^6 STACK_GLOBAL builtins.id from memoised strings + POP")
def stack_globals_discarded():
    d = P4 + u("builtins") + MEMOIZE + u("id") + MEMOIZE + POP + POP
    d = d + (get(0) + get(1) + STACK_GLOBAL + POP) * M + NONE + STOP
    return d, (len(d) - 2, 1, NEWTRUE)  # the final None


@shape("loads", "10^6 calls builtins.dict() discarded: BINGET, EMPTY_TUPLE, REDUCE, POP")
def calls_discarded():
    d = P4 + GLOBAL("builtins", "dict") + put(0) + POP
    d = d + (get(0) + EMPTY_TUPLE + REDUCE + POP) * M + NONE + STOP
    return d, (len(d) - 2, 1, NEWTRUE)  # the final None


@shape("loads", "10^6 objects types.SimpleNamespace made by NEWOBJ and discarded")
def newobj_discarded():
    d = P4 + GLOBAL("types", "SimpleNamespace") + put(0) + POP
    d = d + (get(0) + EMPTY_TUPLE + NEWOBJ + POP) * M + NONE + STOP
    return d, (len(d) - 2, 1, NEWTRUE)  # the final None


# --- a million mutations of one object


@shape("loads", "10^6 SETITEMs on one collections.OrderedDict() call result", 4)
def setitem_call(div):
    d = P4 + GLOBAL("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE + MEMOIZE
    return d + b"".join(b"J" + struct.pack("<i", k * 3) + NONE + SETITEM for k in range(M // div)) + STOP


@shape("loads", "700,000 times: BINGET the memoised OrderedDict, SETITEM of the same key, POP (one key at the end)")
def setitem_same_key():
    d = P4 + GLOBAL("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE + MEMOIZE + u("k") + MEMOIZE + POP
    return d + b"".join(get(0) + get(1) + b"M" + struct.pack("<H", k % 1000) + SETITEM + POP for k in range(700_000)) + STOP


@shape("loads", "700,000 BUILDs of {'a': k} on one SimpleNamespace")
def build_repeated():
    d = P4 + GLOBAL("types", "SimpleNamespace") + EMPTY_TUPLE + NEWOBJ + u("a") + put(0) + POP
    return d + b"".join(EMPTY_DICT + get(0) + b"J" + struct.pack("<i", k % 1000 * 4099) + SETITEM + BUILD for k in range(700_000)) + STOP


@shape("loads", "10^6 APPENDs one by one on a builtins.list() call result")
def append_call():
    d = P4 + GLOBAL("builtins", "list") + EMPTY_TUPLE + REDUCE
    return d + b"".join(b"K" + bytes([k % 256]) + APPEND for k in range(M)) + STOP


# --- tables


@shape("loads", "600,000 small dicts each with a nested two-item list (pickle.dumps; ~27 MB, the one large shape; values repeat every 500 rows)")
def table_dicts_lists():
    rows = [{"id": k % 500, "name": "row%d" % (k % 500), "ok": k % 500 % 3 == 0, "score": k % 500 * 0.25, "pair": [k % 500, "p"]}
            for k in range(600_000)]
    return pickle.dumps(rows, protocol=4)


@shape("loads", "a list of 10^6 floats (BINFLOAT; 2000 distinct values, compressible)")
def table_floats():
    return pickle.dumps([k % 2000 / 8 for k in range(M)], protocol=4)


@shape("loads", "500,000 rows (int, str, str) whose strings are 550 memo-shared objects (BINGET)")
def table_strings_memo():
    names = ["name-%d" % k for k in range(500)]
    cities = ["city-%d" % k for k in range(50)]
    return pickle.dumps([(k % 500, names[k % 500], cities[k % 50]) for k in range(500_000)], protocol=4)


@shape("loads", "200,000 types.SimpleNamespace objects with dict state (REDUCE + BUILD)")
def table_namespaces():
    return pickle.dumps([types.SimpleNamespace(id=k % 500, name="n%d" % (k % 100), tags=["a", "b"]) for k in range(200_000)], protocol=4)


@shape("loads", "200,000 argparse.Namespace objects with dict state (NEWOBJ + BUILD)")
def table_objects():
    import argparse as ap

    return pickle.dumps([ap.Namespace(id=k % 500, score=k % 100 * 0.5, label="l%d" % (k % 50)) for k in range(200_000)], protocol=4)


# --- framing


@shape("loads", "500,000 FRAMEs of 2 bytes each (NONE POP), then None")
def frames_tiny():
    d = P4 + (frame(2) + NONE + POP) * 500_000 + frame(2) + NONE + STOP
    return d, (len(d) - 2, 1, NEWTRUE)  # the final None


# ---------------------------------------------------------------- checks

CHECK = r"""
import pickle, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
t = time.time()
f = open(sys.argv[1], "rb")
n = 0
try:
    while f.peek(1):
        pickle.load(f)
        n += 1
    print("loads", n, "%.2f" % (time.time() - t))
except Exception as e:
    print("refused", n, "%.2f" % (time.time() - t), type(e).__name__ + ": " + str(e)[:200])
"""


def cpython(path, timeout=300):
    try:
        r = subprocess.run([sys.executable, "-c", CHECK, path], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", 0, float(timeout), ""
    line = (r.stdout.strip().splitlines() or ["crashed 0 0 " + r.stderr.strip()[-200:]])[-1]
    status, n, secs, *rest = line.split(" ", 3)
    return status, int(n), float(secs), (rest[0] if rest else "")


def candidates(data):
    """Offsets of numeric or string arguments of the first pickle, middle first."""
    import pickletools

    out = []
    try:
        for op, arg, pos in pickletools.genops(data):
            n = op.name
            if n in ("BININT1", "BININT2", "BININT"):
                out.append((pos + 1, 1, bytes([data[pos + 1] ^ 1])))
            elif n == "BINFLOAT":
                out.append((pos + 8, 1, bytes([data[pos + 8] ^ 1])))
            elif n in ("SHORT_BINUNICODE", "BINUNICODE"):
                start = pos + (2 if n == "SHORT_BINUNICODE" else 5)
                for j, c in enumerate(arg.encode("utf-8", "surrogatepass")):
                    if 97 <= c <= 122:
                        out.append((start + j, 1, bytes([c - 32])))
                        break
            elif n in ("LONG1", "LONG4") and arg:
                start = pos + (2 if n == "LONG1" else 5)
                out.append((start, 1, bytes([data[start] ^ 1])))
            elif n in ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8") and arg:
                at = pos + len(data[pos:pos + 1]) + {"SHORT_BINBYTES": 1, "BINBYTES": 4, "BINBYTES8": 8}[n] + len(arg) // 2
                out.append((at, 1, bytes([data[at] ^ 1])))
            elif n in ("INT", "LONG", "FLOAT"):
                for j in range(pos + 1, pos + 40):
                    if 49 <= data[j] <= 56:
                        out.append((j, 1, bytes([data[j] + 1])))
                        break
    except Exception:
        pass
    mid = len(data) // 2
    out.sort(key=lambda c: abs(c[0] - mid))
    return out[:8]


def apply(data, ch):
    off, rm, ins = ch
    return data[:off] + ins + data[off + rm :]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--raw", action="store_true", help="write plain .pkl files, not .pkl.gz")
    ap.add_argument("--no-check", action="store_true", help="do not load the shapes with CPython")
    ap.add_argument("--only", help="comma-separated shape names (their entries in DIR/manifest.json are updated)")
    ap.add_argument("--readme", help="rewrite the shape table in this README")
    ap.add_argument("--changed", action="store_true", help="also write each shape's changed copy, <name>-changed.pkl[.gz]")
    ap.add_argument("--scale", choices=("full", "committed"),
                    help="full counts, or the committed copies' (default: committed for .pkl.gz, full with --raw)")
    a = ap.parse_args()
    full = a.scale == "full" if a.scale else a.raw
    os.makedirs(a.dir, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    manifest = []
    tmp = os.path.join(a.dir, ".check.pkl")
    bad = 0
    for name, fn, declared, desc, committed in SHAPES:
        if only and name not in only:
            continue
        div = 1 if full else committed
        r = fn(div) if committed != 1 else fn()
        data, change = r if isinstance(r, tuple) else (r, None)
        if change is None and declared == "loads":
            cands = candidates(data)
        else:
            cands = [change] if change else []
        ent = {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
               "cpython": declared, "refusal": "", "streams": 1, "what": desc, "change": None,
               "divisor": div, "committed_divisor": committed}
        if not a.no_check:
            with open(tmp, "wb") as f:
                f.write(data)
            st, n, secs, err = cpython(tmp)
            print("%-24s %9d bytes  CPython %s (%d pickles, %.2fs) %s" % (name, len(data), st, n, secs, err), file=sys.stderr)
            if st != declared or (st == "refused" and secs > 5):
                print("  !! declared %s" % declared, file=sys.stderr)
                bad += 1
            ent["refusal"] = err
            ent["streams"] = n
            if declared == "loads":
                for ch in cands:
                    with open(tmp, "wb") as f:
                        f.write(apply(data, ch))
                    if cpython(tmp)[0] == "loads":
                        ent["change"] = {"offset": ch[0], "remove": ch[1], "insert": ch[2].hex()}
                        break
                else:
                    print("  (no change that CPython loads)", file=sys.stderr)
            os.remove(tmp)
        else:
            ent["streams"] = data.count(b"N.") if name == "streams_none" else (200_000 if name == "streams_dicts" else 1)
            if cands:
                ch = cands[0]
                ent["change"] = {"offset": ch[0], "remove": ch[1], "insert": ch[2].hex()}
        if a.raw:
            ent["file"] = name + ".pkl"
            payload = data
        else:
            ent["file"] = name + ".pkl.gz"
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as g:
                g.write(data)
            payload = buf.getvalue()
        with open(os.path.join(a.dir, ent["file"]), "wb") as f:
            f.write(payload)
        ent["stored"] = len(payload)
        if a.changed and ent["change"]:
            c = ent["change"]
            changed = apply(data, (c["offset"], c["remove"], bytes.fromhex(c["insert"])))
            with open(os.path.join(a.dir, ent["file"].replace(".pkl", "-changed.pkl")), "wb") as f:
                f.write(changed if a.raw else gzip.compress(changed, 6, mtime=0))
        manifest.append(ent)
    mpath = os.path.join(a.dir, "manifest.json")
    if only:  # update those entries of the existing manifest
        if not os.path.exists(mpath):
            return 1 if bad else 0
        new = {e["name"]: e for e in manifest}
        manifest = [new.get(e["name"], e) for e in json.load(open(mpath))["shapes"]]
    with open(mpath, "w") as f:
        json.dump({"generator": "testdata/costshapes/gen.py", "shapes": manifest}, f, indent=1)
        f.write("\n")
    if a.readme:
        write_readme(a.readme, manifest)
    return 1 if bad else 0


def write_readme(path, manifest):
    rows = ["| shape | size | stresses | CPython |", "|---|---|---|---|"]
    for e in manifest:
        size = human(e["size"])
        if e["divisor"] != 1:
            size += " (1/%d of the counts)" % e["divisor"]
        elif e["committed_divisor"] != 1:
            size += " (committed: 1/%d)" % e["committed_divisor"]
        cp = "loads" if e["cpython"] == "loads" else "refuses" + (" (%s)" % e["refusal"].split(":")[0] if e["refusal"] else "")
        if e["streams"] > 1:
            cp += " (%d pickles)" % e["streams"]
        rows.append("| `%s` | %s | %s | %s |" % (e["name"], size, e["what"].replace("|", "\\|"), cp))
    text = open(path).read()
    a, b = "<!-- shapes: gen.py --readme -->", "<!-- end shapes -->"
    i, j = text.index(a) + len(a), text.index(b)
    with open(path, "w") as f:
        f.write(text[:i] + "\n" + "\n".join(rows) + "\n" + text[j:])


def human(n):
    if n >= 1 << 20:
        return "%.1f MiB" % (n / (1 << 20))
    if n >= 1 << 10:
        return "%.0f KiB" % (n / (1 << 10))
    return "%d B" % n


if __name__ == "__main__":
    sys.exit(main())
