"""An object whose class defines __getnewargs_ex__ with keyword arguments,
pickled at protocols 2-5 by the C and the pure-Python pickler: below 4 the
pickler writes functools.partial(cls.__new__, cls, *args, **kwargs)(), from 4
on NEWOBJ_EX. Run: python3 testdata/canon/gen_newobj_ex.py testdata/canon"""
import os
import pickle
import sys
import types

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


class Point:
    def __init__(self, x, *, y=0):
        self.x, self.y = x, y

    def __getnewargs_ex__(self):
        return (self.x,), {"y": self.y}


# pickled by reference as pkfixture.Point (a module made here, not imported)
Point.__module__ = "pkfixture"
sys.modules["pkfixture"] = types.ModuleType("pkfixture")
sys.modules["pkfixture"].Point = Point
for proto in (2, 3, 4, 5):
    for kind, dumps in (("c", pickle.dumps), ("py", pickle._dumps)):
        with open(os.path.join(out, "newobj_ex_p%d_%s.pkl" % (proto, kind)), "wb") as f:
            f.write(dumps([Point(1, y=2), Point(3, y=4)], protocol=proto))
