# -*- coding: utf-8 -*-
"""Module-level types and the value catalogue for the `stdlib` fixtures.

Importable from Python 2.7 and 3.6+.  The classes live here (module
``fixture_types``) rather than in ``__main__`` so that their global references
are stable: ``fixture_types Point`` etc.

build_items() returns an ordered list of (name, value) pairs; gen_stdlib.py
pickles each item alone (``item_<name>_...``) and all of them together in one
dict (``values_...``).
"""
from __future__ import unicode_literals

import collections
import datetime
import decimal
import sys

PY2 = sys.version_info[0] == 2


class Point(object):
    """Plain instance with a __dict__ (state via BUILD)."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __repr__(self):
        return "Point(%r, %r)" % (self.x, self.y)


class WithReduce(object):
    """Custom __reduce__: rebuilt as WithReduce(1, 'two')."""

    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __reduce__(self):
        return (WithReduce, (self.a, self.b))

    def __repr__(self):
        return "WithReduce(%r, %r)" % (self.a, self.b)


class Slotted(object):
    """__slots__ and no __dict__: state is (None, {'a': .., 'b': ..})."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __repr__(self):
        return "Slotted(%r, %r)" % (self.a, self.b)


class WithNewArgsEx(object):
    """__getnewargs_ex__: NEWOBJ_EX at protocol >= 4."""

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self.args = args
        self.kwargs = kwargs
        return self

    def __getnewargs_ex__(self):
        return (self.args, self.kwargs)

    def __repr__(self):
        return "WithNewArgsEx(*%r, **%r)" % (self.args, self.kwargs)


class OldStyle:
    """An old-style class on Python 2 (INST at protocol 0, OBJ at 1-2);
    an ordinary class on Python 3."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return "OldStyle(%r)" % (self.v,)


Pair = collections.namedtuple("Pair", "x y")


def module_func(x):
    """A module-level function, pickled by reference."""
    return x + 1


def _shared():
    a = []
    return [a, a]


def _shared_nested():
    a = [1, 2]
    b = {"k": a}
    return {"x": a, "y": [a, b], "z": (b, a)}


def _selfref_list():
    lst = [1]
    lst.append(lst)
    return lst


def _selfref_dict():
    d = {"name": "d"}
    d["self"] = d
    return d


def _selfref_tuple():
    # a tuple reached again while its own items are being pickled: the
    # pickler emits POP_MARK + GET (protocol >= 1) or POP... + GET (protocol 0)
    lst = []
    t = (lst, "t")
    lst.append(t)
    return t


def _utc():
    if PY2:
        return None
    return datetime.timezone.utc


def build_items():
    """Ordered list of (name, value).  Identical contents on every Python,
    except where noted (py2: bytes are `str`, text is `unicode`, no
    datetime.timezone)."""
    items = []
    add = lambda name, value: items.append((name, value))

    add("none_bool", [None, True, False])
    add("ints_small", [0, 1, -1, 127, 128, 255, 256, -256, 65535, 65536, -65536])
    add("ints_32", [2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 32])
    add("ints_64", [2 ** 63 - 1, -(2 ** 63), 2 ** 63, -(2 ** 63) - 1, 2 ** 64, -(2 ** 64)])
    add("ints_big", [2 ** 100, -(2 ** 100), 2 ** 255 - 19, 256 ** 255, -(256 ** 255)])
    # 3011 decimal digits: under CPython's 4300-digit int<->str limit, so
    # protocol 0 (text LONG) can still write and read it.
    add("int_huge", 2 ** 10000)
    add("floats", [0.0, -0.0, 1.0, 1.5, -2.25, 0.1, 1e300, -1e-300, 5e-324,
                   float("inf"), float("-inf"), float("nan")])
    add("complex", complex(1.5, -2.0))
    add("strs", ["", "ascii", "h\xe9llo w\xf6rld", "\u65e5\u672c\u8a9e",
                 "\U0001F600 emoji", "line\nbreak\\back\rslash", "quote'\"",
                 "nul\x00byte", "x" * 300])
    add("str_lone_surrogate", "\ud800")
    add("bytes", [b"", b"abc", b"\x00\xff\x80\n", b"y" * 300])
    add("bytearrays", [bytearray(b"abc"), bytearray()])
    add("lists", [[], [1], [1, "two", 3.0, None]])
    add("tuples", [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), (("nested",),)])
    add("dicts", [{}, {"a": 1, "b": 2}, {1: "int key", (1, 2): "tuple key", None: "none key"}])
    add("sets", [set(), {1, 2, 3}, {"alpha", "beta", "gamma"}, frozenset(),
                 frozenset({"x", "y"}), frozenset({1, 2})])
    add("nested", {"a": [1, (2, 3), {"b": {4, 5}}], "c": {"d": {"e": [[], [[]]]}}})
    add("shared_list", _shared())
    add("shared_nested", _shared_nested())
    add("selfref_list", _selfref_list())
    add("selfref_dict", _selfref_dict())
    add("selfref_tuple", _selfref_tuple())
    add("instance", Point(3, "four"))
    add("oldstyle_obj", OldStyle([1, "v"]))
    add("reduce_obj", WithReduce(1, "two"))
    add("slots_obj", Slotted(5, [6]))
    add("newargs_ex_obj", WithNewArgsEx(7, "eight", key="value"))
    dts = [datetime.datetime(2024, 1, 2, 3, 4, 5, 678901),
           datetime.date(1999, 12, 31), datetime.time(23, 59, 58),
           datetime.timedelta(days=-1, seconds=5, microseconds=7)]
    if not PY2:
        dts.append(datetime.datetime(2024, 6, 7, 8, 9, 10, tzinfo=_utc()))
    add("datetimes", dts)
    add("decimals", [decimal.Decimal("3.14159"), decimal.Decimal("-0"),
                     decimal.Decimal("NaN"), decimal.Decimal("1E+100")])
    add("ordereddict", collections.OrderedDict([("b", 1), ("a", 2), ("c", [3])]))
    add("namedtuple", Pair(1, "y"))
    add("globals", [module_func, len, collections.OrderedDict, Point])
    return items


def build_memo_long():
    """More than 256 memo entries: BINPUT/BINGET switch to LONG_BINPUT/
    LONG_BINGET (protocols 1-3); text PUT/GET indices grow (protocol 0)."""
    words = ["w%03d" % i for i in range(260)]
    return words + [words[0], words[255], words[256], words[259]]


def build_batch():
    """Containers at the 1000-item batch edges of APPENDS/SETITEMS/ADDITEMS.

    C pickler: list_1001 -> 2 x APPENDS; dict_1000 -> MARK SETITEMS twice (the
    second one empty); set_1001 -> 2 x ADDITEMS (protocol >= 4).
    Pure-Python pickler: list_1001 -> APPENDS + APPEND; dict_1000 -> one
    SETITEMS."""
    return {
        "list_1001": list(range(1001)),
        "dict_1000": dict((i, i % 7) for i in range(1000)),
        "set_1001": set(range(1001)),
    }
