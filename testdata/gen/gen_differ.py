"""Difference cases for the canonical hash: testdata/differ/<case>/{a,b}.pkl
plus what.txt (one line: what differs, and where, as a Python-style path from
the unpickled root).

usage: python3 gen_differ.py OUTDIR
  run it with the PK_PY311 interpreter (stdlib cases use its C pickler,
  protocol 4, PYTHONHASHSEED=0).  Cloudpickle cases run a templated producer
  script under each interpreter in PK_CLOUDPICKLE_PYS (colon-separated; for
  each, the case name carries the cloudpickle version).  a and b come from the
  same script path so that only the intended edit differs (plus cloudpickle's
  random class-tracker id).

The `discarded_call*` cases are hand-assembled opcodes: b.pkl loads to the
same [] as a.pkl but calls builtins.print() while loading.  Nothing here is
ever unpickled by this script.
"""
import os
import pickle
import shutil
import subprocess
import sys

STAGE = os.environ.get("PK_STAGE") or "/tmp/pk-fixtures-gen"
PROTO = 4


def write_case(outdir, name, a, b, what):
    d = os.path.join(outdir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    assert a != b, name
    with open(os.path.join(d, "a.pkl"), "wb") as f:
        f.write(a)
    with open(os.path.join(d, "b.pkl"), "wb") as f:
        f.write(b)
    with open(os.path.join(d, "what.txt"), "w") as f:
        f.write(what.rstrip("\n") + "\n")


def stdlib_cases(outdir):
    def base(x):
        return {"name": "cfg", "x": x}

    def d(v):
        return pickle.dumps(v, PROTO)

    def shared():
        a = []
        return [a, a]

    cases = [
        ("value_changed", base([1, 2, 3]), base([1, 2, 4]),
         "int value 3 -> 4 at root['x'][2]"),
        ("list_order", base([1, 2, 3]), base([1, 3, 2]),
         "list order [1, 2, 3] -> [1, 3, 2] at root['x'][1] and root['x'][2]"),
        ("int_vs_float", base(1), base(1.0), "int 1 -> float 1.0 at root['x']"),
        ("int_vs_bool", base(1), base(True), "int 1 -> bool True at root['x']"),
        ("str_vs_bytes", base("abc"), base(b"abc"), "str 'abc' -> bytes b'abc' at root['x']"),
        ("tuple_vs_list", base((1, 2)), base([1, 2]), "tuple (1, 2) -> list [1, 2] at root['x']"),
        ("set_vs_frozenset", base({1, 2}), base(frozenset({1, 2})),
         "set {1, 2} -> frozenset({1, 2}) at root['x']"),
        ("zero_vs_negzero", base(0.0), base(-0.0), "float 0.0 -> -0.0 at root['x']"),
        ("alias_change", base(shared()), base([[], []]),
         "aliasing: root['x'][1] is root['x'][0] (a=[]; [a, a]) -> two distinct lists [[], []]"),
        ("list_insertion", base(list(range(50))),
         base(list(range(25)) + ["inserted"] + list(range(25, 50))),
         "element 'inserted' inserted at root['x'][25] in a 50-element list (later elements shift by one)"),
        ("dict_key_added", base({"a": 1, "b": 2}), base({"a": 1, "b": 2, "c": 3}),
         "dict key added: root['x']['c'] = 3 only in b"),
        ("dict_key_removed", base({"a": 1, "b": 2, "c": 3}), base({"a": 1, "c": 3}),
         "dict key removed: root['x']['b'] = 2 only in a"),
    ]
    for name, a, b, what in cases:
        write_case(outdir, name, d(a), d(b), what)

    # Hand-assembled: same returned value ([]), but b calls builtins.print()
    # while loading and throws the result away.
    a = pickle.dumps([], 2)                      # \x80\x02 ] q\x00 .
    assert a == b"\x80\x02]q\x00."
    call = b"cbuiltins\nprint\n" + b")" + b"R"   # GLOBAL, EMPTY_TUPLE, REDUCE
    b_pop = b"\x80\x02" + call + b"0" + b"]q\x00."           # ... POP, then []
    b_memo = b"\x80\x02" + call + b"q\x01" + b"0" + b"]q\x00."  # BINPUT 1, POP
    write_case(outdir, "discarded_call", a, b_pop,
               "b calls builtins.print() (GLOBAL/EMPTY_TUPLE/REDUCE) and POPs the result before "
               "building the same root [] (stream level, outside the returned value)")
    write_case(outdir, "discarded_call_memo", a, b_memo,
               "b calls builtins.print(), keeps the result only in memo slot 1 (BINPUT 1, POP), "
               "then builds the same root [] (stream level, outside the returned value)")
    return len(cases) + 2


CP_TEMPLATE = '''import sys
import cloudpickle


class Model:
    kind = "linear"

    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return self.w * x {OP} 1


def scale(x, factor={DEFAULT}):
    return x * factor


obj = {{"class": Model, "func": scale}}[sys.argv[1]]
with open(sys.argv[2], "wb") as f:
    f.write(cloudpickle.dumps(obj))
'''


def cloudpickle_cases(outdir, py):
    try:
        v = subprocess.run([py, "-c", "import cloudpickle; print(cloudpickle.__version__)"],
                           check=True, stdout=subprocess.PIPE,
                           universal_newlines=True).stdout.strip()
    except (subprocess.CalledProcessError, OSError):
        print("  SKIP cloudpickle differ cases under %s: cloudpickle not importable" % py)
        return 0
    tag = "cp" + v.replace(".", "")
    work = os.path.join(STAGE, "differ", tag)
    os.makedirs(work, exist_ok=True)
    script = os.path.join(work, "model.py")
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)

    def produce(which, op, default):
        with open(script, "w") as f:
            f.write(CP_TEMPLATE.format(OP=op, DEFAULT=default))
        out = os.path.join(work, "out.pkl")
        subprocess.run([py, script, which, out], check=True, env=env, cwd=work)
        with open(out, "rb") as f:
            return f.read()

    write_case(outdir, tag + "_method_body", produce("class", "+", 2), produce("class", "-", 2),
               "method body: Model.predict returns self.w * x + 1 in a, self.w * x - 1 in b "
               "(root.__dict__['predict'].__code__: co_code differs; same line numbers)")
    write_case(outdir, tag + "_default_arg", produce("func", "+", 2), produce("func", "+", 3),
               "default argument: scale(x, factor=2) in a, factor=3 in b "
               "(root.__defaults__[0]: 2 -> 3)")
    return 2


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    n = stdlib_cases(outdir)
    for py in [p for p in os.environ.get("PK_CLOUDPICKLE_PYS", "").split(":") if p]:
        n += cloudpickle_cases(outdir, py)
    print("differ: wrote %d cases" % n)


if __name__ == "__main__":
    main()
