"""Makes the small fixtures pk trace's tests read (pkg/trace/trace_test.go).

Rerun from the repository root:
  ~/.pyenv/versions/3.11.7/bin/python testdata/trace/gen.py cloudpickle   # cloudpickle 2.1.0
  /usr/bin/python3 testdata/trace/gen.py debian                           # dill 0.3.6, numpy, torch (Debian packages)
  python3 testdata/trace/gen.py stdlib                                    # any CPython 3.8+

Files land in testdata/trace/ next to this script. The tests only read them;
they never need Python.
"""
import io
import os
import pickle
import sys

OUT = os.path.dirname(os.path.abspath(__file__))


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(name, len(data))


# A global that a closure drags along: 200 KiB of floats.
TABLE = [float(i) / 7 for i in range(25600)]


def make_scorer(scale):
    def score(x):
        return sum(TABLE) * scale * x
    return score


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5


def cloudpickle_cases():
    import cloudpickle
    write("cp_closure.pkl", cloudpickle.dumps(make_scorer(3), protocol=4))
    write("cp_class.pkl", cloudpickle.dumps({"cls": Point, "p": Point(1, 2), "norm": Point.norm}, protocol=5))


def debian_cases():
    import dill
    import numpy as np
    write("dill_func.pkl", dill.dumps(make_scorer(2), protocol=4, recurse=True))
    write("dill_class.pkl", dill.dumps({"cls": Point, "p": Point(3, 4)}, protocol=4))
    rng = np.random.default_rng(0)
    arr = rng.standard_normal((64, 48)).astype(np.float32)
    write("numpy.pkl", pickle.dumps({"weights": arr, "bias": np.zeros(48, dtype=np.float64), "ids": np.arange(10)}, protocol=4))
    write("numpy_p2.pkl", pickle.dumps([arr[:4, :4]], protocol=2))
    try:
        import torch
    except ImportError:
        return
    buf = io.BytesIO()
    torch.save({"w": torch.ones(3, 4), "b": torch.zeros(4)}, buf)
    import zipfile
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    name = [n for n in z.namelist() if n.endswith("data.pkl")][0]
    write("torch_data.pkl", z.read(name))


def stdlib_cases():
    shared = {"k": [1, 2, 3]}
    cyc = []
    cyc.append(cyc)
    d = {"self": None}
    d["self"] = d
    obj = {
        "weights": [float(i) for i in range(2000)],
        "names": ["alpha", "beta", "gamma"],
        "shared_a": shared,
        "shared_b": shared,
        "blob": b"x" * 5000,
        "nested": {"deep": {"deeper": (1, 2.5, None, True)}},
        "cycle_list": cyc,
        "cycle_dict": d,
        "s": {1, 2, 3},
        "fs": frozenset({"a"}),
    }
    for proto in (0, 2, 4, 5):
        write("stdlib_p%d.pkl" % proto, pickle.dumps(obj, protocol=proto))
    # Two pickles back to back.
    write("multi.pkl", pickle.dumps([1, 2], protocol=4) + pickle.dumps({"a": "b"}, protocol=2))
    # Memo "billion laughs": 10 levels of 10 references each, a few hundred bytes.
    ops = [b"\x80\x04", b"]", b"(", b"X\x03\x00\x00\x00lol" * 10, b"e", b"\x94"]  # list0 = ['lol'] * 10, MEMOIZE -> 0
    for lvl in range(1, 10):
        ops.append(b"0")  # POP the previous level (it stays in the memo)
        ops.append(b"](" + (b"h" + bytes([lvl - 1])) * 10 + b"e\x94")
    ops.append(b".")
    write("laughs.pkl", b"".join(ops))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "stdlib"
    {"cloudpickle": cloudpickle_cases, "debian": debian_cases, "stdlib": stdlib_cases}[what]()
