"""Load two pickles of make_class.py in one process; print "one class" when
their classes are the same object (and each instance is an instance of the
other's class), "two classes" when they are distinct, anything else is an
error.

    python3 load_same_class.py A B
"""

import pickle
import sys

import cloudpickle  # noqa: F401 - the pickles call into it

loaded = []
for path in sys.argv[1:3]:
    with open(path, "rb") as f:
        loaded.append(pickle.load(f))
a, b = loaded
assert a["obj"].norm2() == 25 and b["obj"].norm2() == 25
assert a["cls"].__doc__ == "A point in the plane." and a["cls"].dims == 2
assert type(a["obj"]) is a["cls"] and type(b["obj"]) is b["cls"]
if a["cls"] is b["cls"]:
    assert isinstance(a["obj"], b["cls"]) and isinstance(b["obj"], a["cls"])
    print("one class")
else:
    assert not isinstance(a["obj"], b["cls"])
    print("two classes")
