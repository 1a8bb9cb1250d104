"""Equivalence cases for the canonical hash: testdata/equiv/<case>/<variant>.pkl.

Every file in one case directory is the SAME object, produced by a separate
process that differs in PYTHONHASHSEED, in the path of the producer script
(copied to two different staging directories), in protocol and, for plain
data, in pickler (C / pure Python) and Python version.

usage: python3 gen_equiv.py OUTDIR
Interpreters come from the environment (empty or missing = skip that producer):
  PK_PY27 PK_PY38 PK_PY311 PK_PY313  pyenv CPythons (PK_PY311 has cloudpickle 2.1.0)
  PK_PYDEB                           Debian python3 with cloudpickle 2.2.0 and dill 0.3.6
  PK_STAGE                           staging directory (default /tmp/pk-fixtures-gen)

Variant file names:
  dynamic (cloudpickle/dill): p<P>_seed<S>_<a|b>.pkl
  plain data:                 p<P>_<c|py>_py<VER>_seed<S>_<a|b>.pkl
where a/b is the staging copy of the producer script that ran:
  a = $PK_STAGE/equiv/a/<script>, b = $PK_STAGE/equiv/b/some/deeper/dir/<script>.

After writing, every case is checked by loading all its variants (in the
producer's own Python) and comparing a behaviour/structure signature.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STAGE = os.environ.get("PK_STAGE") or "/tmp/pk-fixtures-gen"
DIR_A = os.path.join(STAGE, "equiv", "a")
DIR_B = os.path.join(STAGE, "equiv", "b", "some", "deeper", "dir")

DYN_CASES = ["dynclass", "enum", "closure", "lambda", "nested_globals"]
PLAIN_CASES = ["set_of_strings", "dict_fromkeys_set", "nested_sets", "shared_aliases", "big_list"]

DYN_SIG = r'''
import sys, json, pickle
lib, case, files = sys.argv[1], sys.argv[2], sys.argv[3:]
if lib == "dill":
    import dill
    load = dill.loads
else:
    load = pickle.loads
def call(f, *a):
    try:
        return f(*a)
    except Exception as e:
        return "raises " + type(e).__name__
def sig(o):
    if case == "dynclass":
        m = o(2.0, 0.5)
        return [o.__name__, o.kind, sorted(o.KINDS), m.predict(3), o.identity().params, o.describe(), m.params]
    if case == "enum":
        return [[m.name for m in o[0]], o[1].name, o[1].value, o[1] is o[0].GREEN]
    if case == "closure":
        return [o(10), o.__name__, o.__qualname__]
    if case == "lambda":
        return [o(3), o(3, 4), o.__defaults__]
    if case == "nested_globals":
        # dill without recurse pickles __main__'s globals by reference, so in
        # a fresh process the call raises NameError: same for every variant
        return [call(o, 5), call(o, "alpha"), o.__qualname__]
for f in files:
    try:
        with open(f, "rb") as fh:
            print(json.dumps(sig(load(fh.read()))))
    except Exception as e:
        print("ERR %s: %s" % (type(e).__name__, e))
'''

PLAIN_SIG = r'''
import sys, pickle
files = sys.argv[1:]
def canon(o, seen):
    # mutable containers are numbered in a canonical visit order (dict items
    # sorted by key, set elements sorted) so that aliasing is compared too
    if isinstance(o, (list, dict, set)):
        if id(o) in seen:
            return ("ref", seen[id(o)])
        seen[id(o)] = n = len(seen)
        if isinstance(o, list):
            return ("list", n, [canon(x, seen) for x in o])
        if isinstance(o, dict):
            items = sorted(o.items(), key=lambda kv: repr(canon(kv[0], {})))
            return ("dict", n, [(canon(k, {}), canon(v, seen)) for k, v in items])
        return ("set", n, sorted(repr(canon(x, {})) for x in o))
    if isinstance(o, frozenset):
        return ("frozenset", sorted(repr(canon(x, {})) for x in o))
    if isinstance(o, tuple):
        return ("tuple", [canon(x, seen) for x in o])
    return (type(o).__name__, repr(o))
for f in files:
    with open(f, "rb") as fh:
        print(repr(canon(pickle.load(fh), {})))
'''


def interp(name):
    p = os.environ.get(name, "")
    return p if p and os.path.exists(p) else None


def run(cmd, env_extra=None, cwd=None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(env_extra or {})
    return subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True).stdout


def module_version(py, mod):
    try:
        return run([py, "-c", "import %s; print(%s.__version__)" % (mod, mod)]).strip()
    except subprocess.CalledProcessError:
        return None


def stage_scripts():
    for d in (DIR_A, DIR_B):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        for s in ("gen_dynamic.py", "equiv_stdlib.py"):
            shutil.copy(os.path.join(HERE, s), os.path.join(d, s))


class Seeds:
    def __init__(self):
        self.n = 0

    def next(self):
        self.n += 1
        return self.n


def check_same(case_dir, lines, tolerate_err=False):
    bad = [l for l in lines if l.startswith("ERR")]
    if bad and not tolerate_err:
        raise SystemExit("equiv check failed in %s: %s" % (case_dir, bad[0]))
    if len(set(lines)) != 1:
        raise SystemExit("equiv check failed in %s: %d different signatures" % (case_dir, len(set(lines))))
    return bad


def gen_dynamic(outdir, py, lib, tag, recurse=False):
    seeds = Seeds()
    for case in DYN_CASES:
        case_dir = os.path.join(outdir, "%s_%s" % (tag, case))
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        for proto in (2, 3, 4, 5):
            for which, d in (("a", DIR_A), ("b", DIR_B)):
                seed = seeds.next()
                out = os.path.join(case_dir, "p%d_seed%d_%s.pkl" % (proto, seed, which))
                cmd = [py, os.path.join(d, "gen_dynamic.py"), lib, "one", case, str(proto), out]
                if recurse:
                    cmd.append("recurse")
                try:
                    run(cmd, {"PYTHONHASHSEED": str(seed)}, cwd=d)
                except subprocess.CalledProcessError as e:
                    print("  SKIP %s p%d: %s" % (case_dir, proto, e.stderr.strip().splitlines()[-1]))
        files = sorted(os.path.join(case_dir, f) for f in os.listdir(case_dir))
        lines = run([py, "-c", DYN_SIG, lib, case] + files, cwd="/").splitlines()
        bad = check_same(case_dir, lines, tolerate_err=(lib == "dill" and case == "enum"))
        note = " (does not load in a fresh process: %s)" % bad[0] if bad else ""
        print("  %s: %d variants, same signature%s" % (os.path.relpath(case_dir, outdir), len(files), note))


def gen_plain(outdir, pys, checker):
    seeds = Seeds()
    # (python tag, interpreter, [(proto, pickler)])
    plan = []
    if pys.get("311"):
        plan.append(("311", pys["311"], [(p, w) for p in range(6) for w in ("c", "py")]))
    if pys.get("38"):
        plan.append(("38", pys["38"], [(2, "c"), (5, "py")]))
    if pys.get("313"):
        plan.append(("313", pys["313"], [(4, "c"), (5, "py")]))
    if pys.get("27"):
        plan.append(("27", pys["27"], [(0, "c"), (2, "py")]))
    for case in PLAIN_CASES:
        case_dir = os.path.join(outdir, "stdlib_" + case)
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        k = 0
        for ver, py, combos in plan:
            for proto, which in combos:
                seed = seeds.next()
                k += 1
                sub, d = ("a", DIR_A) if k % 2 else ("b", DIR_B)
                out = os.path.join(case_dir, "p%d_%s_py%s_seed%d_%s.pkl" % (proto, which, ver, seed, sub))
                run([py, os.path.join(d, "equiv_stdlib.py"), case, str(proto), which, out],
                    {"PYTHONHASHSEED": str(seed)}, cwd=d)
        files = sorted(os.path.join(case_dir, f) for f in os.listdir(case_dir))
        lines = run([checker, "-c", PLAIN_SIG] + files, cwd="/").splitlines()
        check_same(case_dir, lines)
        print("  %s: %d variants, same structure" % (os.path.relpath(case_dir, outdir), len(files)))


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    stage_scripts()
    pys = {"27": interp("PK_PY27"), "38": interp("PK_PY38"), "311": interp("PK_PY311"),
           "313": interp("PK_PY313")}
    deb = interp("PK_PYDEB")
    if pys["311"]:
        gen_plain(outdir, pys, pys["311"])
    else:
        print("  SKIP stdlib equiv cases: PK_PY311 not available")
    producers = []
    for py, lib in ((pys["311"], "cloudpickle"), (deb, "cloudpickle"), (deb, "dill")):
        if not py:
            continue
        v = module_version(py, lib)
        if v is None:
            print("  SKIP %s under %s: not installed" % (lib, py))
            continue
        tag = {"cloudpickle": "cp", "dill": "dill"}[lib] + v.replace(".", "")
        producers.append((py, lib, tag, False))
        if lib == "dill":
            producers.append((py, lib, tag + "_recurse", True))
    if not any(p[1] == "cloudpickle" for p in producers):
        print("  SKIP cloudpickle equiv cases: no interpreter with cloudpickle")
    if not any(p[1] == "dill" for p in producers):
        print("  SKIP dill equiv cases: no interpreter with dill")
    seen = set()
    for py, lib, tag, recurse in producers:
        if tag in seen:  # same library version reachable twice: keep the first
            continue
        seen.add(tag)
        gen_dynamic(outdir, py, lib, tag, recurse)


if __name__ == "__main__":
    main()
