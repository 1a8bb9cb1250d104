"""Producer for objects defined in __main__, pickled BY VALUE with cloudpickle
or dill (the `cloudpickle` and `dill` fixture groups and the equiv cases).

usage:
  python gen_dynamic.py cloudpickle all OUTDIR TAG
  python gen_dynamic.py dill        all OUTDIR TAG
  python gen_dynamic.py cloudpickle one CASE PROTO OUTFILE
  python gen_dynamic.py dill        one CASE PROTO OUTFILE [recurse]

CASE is one of the keys of cases().  The driver runs this script from fixed
staging paths (co_filename / __file__ end up inside the pickles).
Do not reorder the definitions below: line numbers are part of the pickles.
"""
import enum
import os
import pickle
import sys

SCALE = 3
TAGS = {"alpha", "beta", "gamma", "delta", "epsilon"}
BIG = b"0123456789abcdef" * 8192  # 128 KiB (> the 64 KiB pickle frame), dragged along by big_len


def helper(x):
    return x - 1


class Model:
    """A dynamic class: methods, class attributes, classmethod, property."""

    kind = "linear"
    KINDS = frozenset({"linear", "affine", "poly", "spline"})

    def __init__(self, w, b=0.0):
        self.w = w
        self.b = b

    def predict(self, x):
        return self.w * x + self.b

    @classmethod
    def identity(cls):
        return cls(1.0)

    @staticmethod
    def describe():
        return "Model"

    @property
    def params(self):
        return (self.w, self.b)


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


def make_adder(n):
    def add(x):
        return x + n
    return add


square_plus = lambda x, y=2: x * x + y  # noqa: E731


def outer():
    def scaled(x):
        if str(x) in TAGS:
            return None
        return helper(x) * SCALE
    return scaled


def big_len():
    return len(BIG) + SCALE


def cases():
    return {
        "dynclass": Model,
        "dynclass_instance": Model(2.0, 0.5),
        "enum": [Color, Color.GREEN],
        "closure": make_adder(5),
        "lambda": square_plus,
        "nested_globals": outer(),
        "big_global": big_len,
    }


def dumps(lib, obj, proto, recurse=False):
    if lib == "cloudpickle":
        import cloudpickle
        return cloudpickle.dumps(obj, protocol=proto)
    import dill
    return dill.dumps(obj, protocol=proto, recurse=recurse)


def lib_tag(lib):
    mod = __import__(lib)
    return {"cloudpickle": "cp", "dill": "dill"}[lib] + mod.__version__.replace(".", "")


def main():
    lib, mode = sys.argv[1], sys.argv[2]
    if mode == "one":
        case, proto, out = sys.argv[3], int(sys.argv[4]), sys.argv[5]
        recurse = len(sys.argv) > 6 and sys.argv[6] == "recurse"
        data = dumps(lib, cases()[case], proto, recurse)
        with open(out, "wb") as f:
            f.write(data)
        return
    outdir, tag = sys.argv[3], sys.argv[4]
    os.makedirs(outdir, exist_ok=True)
    lt = lib_tag(lib)
    for old in os.listdir(outdir):  # this producer's previous outputs
        if ("_%s_%s.pkl" % (lt, tag)) in old:
            os.remove(os.path.join(outdir, old))
    n = 0
    for case, obj in cases().items():
        variants = [("", False)]
        if lib == "dill":
            variants = [("_default", False), ("_recurse", True)]
        for suffix, recurse in variants:
            if lib == "dill" and case == "big_global" and recurse:
                continue  # another 128 KiB copy of BIG; cloudpickle has it
            try:
                data = dumps(lib, obj, None, recurse)
            except Exception as e:
                print("  SKIP %s%s with %s: %s: %s" % (case, suffix, lt, type(e).__name__, e))
                continue
            with open(os.path.join(outdir, "%s%s_%s_%s.pkl" % (case, suffix, lt, tag)), "wb") as f:
                f.write(data)
            n += 1
    print("%s %s: wrote %d pickles" % (lt, tag, n))


if __name__ == "__main__":
    main()
