"""Pickle a dynamic class and an instance of it with cloudpickle.

    python3 make_class.py OUT

Each run is a new process, so cloudpickle gives the class a new random
tracker id (uuid4): two runs write different bytes for the same class.
pkg/write's TestPythonTrackerIDsAcrossProcesses canonicalises two runs and
loads them together with load_same_class.py.
"""

import sys

import cloudpickle


class Point:
    """A point in the plane."""

    dims = 2

    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x * self.x + self.y * self.y


with open(sys.argv[1], "wb") as f:
    cloudpickle.dump({"cls": Point, "obj": Point(3, 4)}, f, protocol=4)
