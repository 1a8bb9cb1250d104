"""Fixtures for the canon sink (pkg/canon/fold.go): small pickles whose
streams the tests compact after every few records (pickle.MinCompact), so
that each shape folds, refuses a fold or has to be hashed again.

Run: python3 testdata/fold/gen.py   (writes testdata/fold/*.pkl.gz; stdlib only)
"""
import collections
import decimal
import gzip
import os
import pickle
import sys
import types

OUT = os.path.dirname(os.path.abspath(__file__))


class P:
    def __init__(self, i):
        self.i = i
        self.name = "p%d" % i


class R:
    def __init__(self, i):
        self.i = i

    def __reduce__(self):
        return (R, (self.i,))


class S:
    __slots__ = ("a", "b")

    def __init__(self, i):
        self.a, self.b = i, [i]


def dump(name, obj, protos=(0, 1, 2, 4, 5)):
    for p in protos:
        # gzip'd (mtime 0: the same bytes at every run); pk reads through
        # it, and pass 1 of the machine reads it again
        with gzip.GzipFile(os.path.join(OUT, "%s_p%d.pkl.gz" % (name, p)), "wb", mtime=0) as f:
            pickle.dump(obj, f, protocol=p)


# more rows than a batch of APPENDS or SETITEMS (1000): the items of the
# batch being read are on the stack, the earlier ones are final
N = 1100
# objects take 8-10 records each: two batches, so that the first is
# final when the store doubles (protocols 0-1 write them through
# copyreg._reconstructor, which a rule reads: nothing folds)
M = 2100
dump("objects", [P(i) for i in range(M)], protos=(0, 2, 4))
dump("reduce", [R(i) for i in range(M)], protos=(2, 4))
dump("slots", [S(i) for i in range(N)], protos=(2, 4))
# standard-library classes no rule of the form reads (types, collections,
# decimal): their calls fold as any other
dump("namespaces", [types.SimpleNamespace(i=i, s="n%d" % i) for i in range(M)], protos=(2, 4))
dump("ordered", [collections.OrderedDict([("i", i), ("s", [i])]) for i in range(M)], protos=(2, 4))
dump("decimals", [decimal.Decimal(i) / 8 for i in range(M)], protos=(2, 4))
dump("objdict", {"k%d" % i: P(i) for i in range(M)}, protos=(2, 5))
dump("nested", {"rows": [P(i) for i in range(N)], "meta": [{"a": [i, (i, "x")]} for i in range(N)]})
tag = ("a", "b")
dump("sharedtuple", [{"t": tag, "i": i} for i in range(N)])
shared = [1, 2]
dump("sharedlist", [{"s": shared, "i": i} for i in range(N)])
rows = []
for i in range(N):
    d = {"i": i}
    d["self"] = d
    rows.append(d)
dump("cycles", rows)
dump("ruleafter", [{"a": i, "b": [i]} for i in range(N)] + [{1, 2, 3}, bytearray(b"xy")], protos=(0, 2, 4))
dump("mixed", [[i, 2**70 + i, -i * 0.5, b"b%d" % i, "s%d" % i, None, True, (i,), frozenset([i])] for i in range(N)])
dump("deep", [[[[i], {"x": [i]}]] for i in range(N)])

# A list of objects that is dropped (POP) after being built: its calls are
# effects of the stream, which a fold cannot place; then a list of dicts as
# the result.
body = bytearray(b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00")
body = bytearray(b"\x80\x04")
body += b"\x8c\x08__main__\x94\x8c\x01P\x94\x93\x94"  # memo 0,1,2: the class
body += b"0"  # POP the class (memo keeps it)
body += b"](" # the list that is dropped
for i in range(N):
    body += b"h\x02)\x81}\x8c\x01i\x94K" + bytes([i % 256]) + b"sb"
    if i % 100 == 99:
        body += b"e("
body += b"e0"
body += b"]("
for i in range(N):
    body += b"}\x8c\x01a\x94K" + bytes([i % 256]) + b"s"
    if i % 100 == 99:
        body += b"e("
body += b"e."
with gzip.GzipFile(os.path.join(OUT, "dropped_calls.pkl.gz"), "wb", mtime=0) as f:
    f.write(bytes(body))
# A dict of rows whose entries fold, then written again through the memo:
# a key set twice (the later value wins, the first key's place stays) and
# a new key; then the dict is the result.
body = bytearray(b"\x80\x04}\x94(")  # memo 0: the dict
for i in range(N):
    k = b"k%d" % i
    body += b"\x8c" + bytes([len(k)]) + k + b"]\x94(K" + bytes([i % 256]) + b"\x8c\x01xe"
    if i % 100 == 99:
        body += b"u("
body += b"u0"  # POP the dict (memo keeps it)
body += b"h\x00\x8c\x02k5]K\x63as"  # d['k5'] = [99]
body += b"h\x00\x8c\x04knew]K\x07as"  # d['knew'] = [7]
body += b"h\x00."
with gzip.GzipFile(os.path.join(OUT, "dict_overwrite.pkl.gz"), "wb", mtime=0) as f:
    f.write(bytes(body))
# rows holding tuples (pk canon's writer sink folds them with their items):
# nested, empty, of more than three items, equal ones that are distinct
# objects, one object shared by every row, tuples as dict values and keys,
# and tuples it cannot fold (a long str, a list, a frozenset in them; bytes
# and frozensets only from protocol 4: below, their calls are ones a rule
# reads, and the sink folds nothing in the stream)
def tuple_rows(p):
    rows = []
    for i in range(M):
        rows.append((i, "s%d" % i, i * 0.5))
        rows.append(((i, (i % 3, ())), "x", None, True, 2**70 + i, b"b" if p >= 4 else -1.5))
        rows.append({"pos": (i, 0.5), "pair": ("a%d" % (i % 5), i % 2 == 0), (i, "k"): (), "t": tag, "e": (i % 7, "r"), "q": (i, 1, 2, 3)})
        if i % 100 == 0:
            rows.append(("l" * 70, i))
            rows.append(([i], i))
            if p >= 4:
                rows.append((frozenset([i]), i))
    return rows


for p in (0, 2, 4, 5):
    dump("tuples", tuple_rows(p), protos=(p,))
# rows made by calls (pk canon's writer sink folds a call of a global with
# its argument tuple and BUILD states): objects whose states hold tuples,
# a global in a tuple and as a value, another object; __reduce__ with
# arguments, equal argument tuples that are distinct objects, one with a
# state; namespaces; classes as items; and rows it cannot fold (a
# frozenset in a state, a list in the arguments, keyword arguments,
# the table itself in a state)
class Q:
    def __init__(self, i):
        self.t = (i, "x", (i % 3,))
        self.cls = int
        self.pair = (P, i)
        self.child = P(i)


class R2:
    def __init__(self, i, s="", t=()):
        self.i = i

    def __reduce__(self):
        return (R2, (self.i, "s%d" % self.i, (self.i % 4, 2)))


class R3:
    def __init__(self, i):
        self.i = i

    def __reduce__(self):
        return (R3, (self.i % 5,), {"a": self.i, "b": (1, 2)})


class R4:
    def __init__(self, i):
        self.i = i

    def __reduce__(self):
        return (R4, ([self.i],))


class KW:
    def __init__(self, i):
        self.i = i

    def __getnewargs_ex__(self):
        return (), {"i": self.i}

    def __new__(cls, i=0):
        return object.__new__(cls)


class Outer:
    class Inner:
        def __init__(self, i):
            self.i = i


def call_rows(p):
    rows = []
    for i in range(M):
        rows.append(P(i))
        rows.append(Q(i))
        rows.append(R2(i))
        rows.append(R3(i))
        rows.append(types.SimpleNamespace(i=i, t=(i, "n")))
        if i % 100 == 0:
            rows.append(P)
            rows.append(int)
            if p >= 4:  # (below, a frozenset is a call a rule reads)
                bad = P(i)
                bad.f = frozenset([i])
                rows.append(bad)
            rows.append(collections.OrderedDict([("i", i)]))
            rows.append(R4(i))
            loop = P(i)
            loop.rows = rows
            rows.append(loop)
            if p >= 4:
                rows.append(KW(i))
    return rows


for p in (2, 4, 5):
    dump("calls_objs", call_rows(p), protos=(p,))
# objects as dict values: entries of a str key fold whole, values of an
# int key alone
calls_dict = {"k%d" % i: Q(i) for i in range(M)}
calls_dict.update({i: R3(i) for i in range(M)})
dump("calls_dict", calls_dict, protos=(2, 4))
# a nested class (protocol 4 and 5: below, its global is a getattr call,
# which a rule reads), written back at protocol 2 as getattr(Outer, 'Inner')
dump("calls_nested", [Outer.Inner(i) for i in range(M)] + [{"o": Outer.Inner(i), "i": i} for i in range(N)], protos=(4, 5))
def raw_rows(name, head, row, tail):
    """Writes name.pkl.gz: head, then row(i) for M rows in APPENDS
    batches of 100 (a list's MARK ends head), then tail."""
    body = bytearray(head)
    for i in range(M):
        body += row(bytes([i % 256]))
        if i % 100 == 99:
            body += b"e("
    with gzip.GzipFile(os.path.join(OUT, name + ".pkl.gz"), "wb", mtime=0) as f:
        f.write(bytes(body + b"e" + tail))


# calls pickle.dump does not write: OBJ and INST without arguments, INST with
# them (written back as REDUCE), an object with two BUILDs, and a class
# resolved and dropped before the rows (an effect the rows fetch; memo 1)
raw_rows("calls_raw", b"\x80\x02c__main__\nP\nq\x010]q\x02(", lambda k:
         b"(h\x01o}(X\x01\x00\x00\x00iK" + k + b"ub"  # OBJ
         + b"(i__main__\nP\n}X\x01\x00\x00\x00jK" + k + b"sb"  # INST
         + b"(K" + k + b"X\x01\x00\x00\x00ai__main__\nP\n"  # INST with arguments
         + b"h\x01)\x81}X\x01\x00\x00\x00aK" + k + b"sb}X\x01\x00\x00\x00bK" + k + b"sb", b".")  # two BUILDs
obj_row = lambda k: b"h\x01)\x81}X\x01\x00\x00\x00iK" + k + b"sb"
# a dotted name in a GLOBAL line (Python 2's, which CPython 3 does not
# resolve below protocol 4): written back as one only below protocol 4
raw_rows("calls_dotted", b"\x80\x02c__main__\nOuter.Inner\nq\x01](", obj_row, b".")
# the same rows in the argument list of a REDUCE, and the class: written
# while that call is in construction
raw_rows("calls_inprog", b"\x80\x02c__main__\nP\nq\x01c__main__\nR2\n](", obj_row, b"\x85R.")
# a REDUCE whose arguments are not a tuple, after rows that fold: refused
raw_rows("calls_notuple", b"\x80\x02c__main__\nP\nq\x01](", obj_row, b"h\x01NRa.")
dump("dictroot", {"r%d" % i: {"a": i, "b": [i, "x"]} for i in range(M)}, protos=(0, 2, 4))
dump("dictvals", {"v%d" % i: i * 0.5 for i in range(M)}, protos=(2, 4))
print("wrote", len(os.listdir(OUT)) - 1, "files", file=sys.stderr)
