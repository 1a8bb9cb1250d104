"""The same function, defined at line 3 of one script and line 40 of another
(same file name, so only co_firstlineno differs), pickled by value in separate
processes by cloudpickle and by dill. pk hash tells them apart by default and
hashes each pair equal with --strip lineno.

Run (writes lineno_{cp,dill}_{a,b}.pkl next to this file):
    ~/.pyenv/versions/3.11.7/bin/python testdata/canon/gen_lineno.py cloudpickle
    /usr/bin/python3 testdata/canon/gen_lineno.py dill     (Debian's python3-dill)
"""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
lib = sys.argv[1] if len(sys.argv) > 1 else "cloudpickle"
tag = {"cloudpickle": "cp", "dill": "dill"}[lib]

BODY = '''
def scale(x, k=3):
    """multiply"""
    return x * k
'''

DUMP = '''
import sys, {lib}
with open(sys.argv[1], "wb") as f:
    {dump}(scale, f, protocol=4)
'''

dump = "cloudpickle.dump" if lib == "cloudpickle" else "dill.dump"
for name, pad in (("a", 1), ("b", 38)):
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "make.py")  # same path name in both runs
        with open(script, "w") as f:
            f.write("\n" * pad + BODY + DUMP.format(lib=lib, dump=dump))
        out = os.path.join(here, "lineno_%s_%s.pkl" % (tag, name))
        subprocess.run([sys.executable, script, out], check=True, cwd=d)
        print("wrote", out)
