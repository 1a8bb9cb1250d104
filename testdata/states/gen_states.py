"""Writes the code-carrying states of issue 10's targets (docs/cost.md):

    cloudpickle_state.pkl   cloudpickle: thousands of dynamic classes, functions
                            closing over them, and instances (>= 4 MB)
    dill_state.pkl          dill, recurse=True: the same program's objects

Run with a Python that has the producer importable (Debian's python3 with
python3-cloudpickle and python3-dill):

    python3 testdata/states/gen_states.py OUTDIR [SCALE]

SCALE (default 3200) is the number of classes; each class gets 5 functions and
a quarter of the classes an instance. Two runs (separate processes) give two
states of the same objects whose bytes differ (cloudpickle's tracker ids), for
pk diff. The objects are defined by exec in __main__, so that both producers pickle
them by value, as they do for a notebook's or a script's own code.
"""
import os
import sys

def build(n):
    import __main__
    ns = __main__.__dict__
    classes, funcs = [], []
    for i in range(n):
        src = (
            "class C%d:\n"
            "    k = %d\n"
            "    tags = {'a%d', 'b', 'c'}\n"
            "    def __init__(self, x):\n"
            "        self.x = x\n"
            "    def m(self, y):\n"
            "        return self.x + y * %d\n"
            "def f%d(a, b=%d):\n"
            "    return a * b + %d\n" % (i, i, i, i, i, i, i)
        )
        exec(compile(src, "/srv/app/statemod_%d.py" % (i % 7), "exec"), ns)
        classes.append(ns["C%d" % i])
        funcs.append(ns["f%d" % i])
        for j in range(4):
            exec("def g%d_%d(a, c=C%d):\n    return c(a).m(%d)\n" % (i, j, i, j), ns)
            funcs.append(ns["g%d_%d" % (i, j)])
    inst = [classes[i % n](i) for i in range(n // 4)]
    return {"classes": classes, "funcs": funcs, "inst": inst, "config": {"n": n, "name": "state"}}


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3200
    os.makedirs(out, exist_ok=True)
    sys.setrecursionlimit(100000)
    state = build(n)
    import cloudpickle
    with open(os.path.join(out, "cloudpickle_state.pkl"), "wb") as f:
        cloudpickle.dump(state, f, protocol=4)
    import dill
    with open(os.path.join(out, "dill_state.pkl"), "wb") as f:
        dill.dump(state, f, protocol=4, recurse=True)


if __name__ == "__main__":
    main()
