"""Fixtures for pk-canon/2's producer items (issue 11 item 4, the enum fix):
testdata/pk2/.

  dill_dataclass_<dill>_py<ver>_p<N>.pkl   a dataclass instance defined in
      __main__, by dill 0.3.8 (Python 3.11) and 0.4.1 (Python 3.13), at
      protocols 2 and 4: dill >= 0.3.8 fills closure cells through
      getattr(dill._dill, '_setattr', setattr), writes the standard library's
      reprlib globals (with its __file__) by value, and on 3.13 the class
      dict's __firstlineno__.
  dill_dataclass_changed_...                the same with another default value.
  cp_enum_<order>_p<N>.pkl                  a dynamic Enum by cloudpickle 3.1.2
      (Python 3.11): members RED, GREEN, and GREEN, RED.
  dill_enum_<dill>_py<ver>_p<N>.pkl         [Color.RED, Color] for an Enum of __main__ by
      dill 0.3.9 (Python 3.12) and 0.4.1 (3.13): dill cannot pickle the class by value and
      writes a discarded _create_type(...) call whose protocol 2 form resolves globals of
      its own (getattr(enum.Enum, ...)).

Every file is written by a separate process. The producers come from
../shared/producers (relative to the repository), copied to a staging
directory (PK_STAGE, default /tmp/pk-fixtures-gen/pk2) with the __info__.py
that dill's release build would generate. Run with any Python 3:

    python3 testdata/gen/gen_pk2_producers.py

Pythons: $PYENV_ROOT/versions/3.11.*/bin/python and 3.13.*, or PK_PY311 / PK_PY313.
"""
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "testdata", "pk2")
PRODUCERS = os.path.join(os.path.dirname(REPO), "shared", "producers")
if not os.path.isdir(PRODUCERS):
    PRODUCERS = "/work/shared/producers"
STAGE = os.environ.get("PK_STAGE", "/tmp/pk-fixtures-gen/pk2")
PYENV = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))


def python(ver):
    env = os.environ.get("PK_PY" + ver.replace(".", ""))
    if env:
        return env
    found = sorted(glob.glob(os.path.join(PYENV, "versions", ver + ".*", "bin", "python")))
    if not found:
        sys.exit("no Python %s (set PK_PY%s)" % (ver, ver.replace(".", "")))
    return found[-1]


def stage(name, version=None):
    dst = os.path.join(STAGE, name)
    if not os.path.isdir(dst):
        shutil.copytree(os.path.join(PRODUCERS, name), dst)
        if version:
            with open(os.path.join(dst, "dill", "__info__.py"), "w") as f:
                f.write('__version__ = "%s"\n__author__ = ""\n__doc__ = ""\n__license__ = ""\n' % version)
    return dst


DATACLASS = """
import sys, dataclasses, dill
@dataclasses.dataclass
class Point:
    x: int
    y: int = %s
sys.stdout.buffer.write(dill.dumps(Point(1, 2), protocol=int(sys.argv[1])))
"""

DILL_ENUM = """
import sys, enum, warnings, dill
warnings.simplefilter("ignore")
class Color(enum.Enum):
    RED = 1
    GREEN = 2
sys.stdout.buffer.write(dill.dumps([Color.RED, Color], protocol=int(sys.argv[1])))
"""

ENUM = """
import sys, enum, cloudpickle
class Color(enum.Enum):
%s
sys.stdout.buffer.write(cloudpickle.dumps(Color, protocol=int(sys.argv[1])))
"""


def write(py, path_env, code, proto, out):
    script = os.path.join(STAGE, "make.py")
    with open(script, "w") as f:
        f.write(code)
    data = subprocess.run([py, script, str(proto)], check=True, capture_output=True, cwd=STAGE,
                          env=dict(os.environ, PYTHONPATH=path_env, PYTHONHASHSEED="0")).stdout
    with open(os.path.join(OUT, out), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(STAGE, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith(".pkl"):
            os.remove(os.path.join(OUT, name))
    for dill, ver in (("0.3.8", "3.11"), ("0.4.1", "3.13")):
        path = stage("dill-" + dill, dill)
        for proto in (2, 4):
            for tag, default in (("", "0"), ("_changed", "5")):
                write(python(ver), path, DATACLASS % default, proto,
                      "dill_dataclass%s_dill%s_py%s_p%d.pkl" % (tag, dill.replace(".", ""), ver.replace(".", ""), proto))
    for dill, ver in (("0.3.9", "3.12"), ("0.4.1", "3.13")):
        path = stage("dill-" + dill, dill)
        for proto in (2, 4):
            write(python(ver), path, DILL_ENUM, proto,
                  "dill_enum_dill%s_py%s_p%d.pkl" % (dill.replace(".", ""), ver.replace(".", ""), proto))
    path = stage("cloudpickle-3.1.2")
    for order, body in (("rg", "    RED = 1\n    GREEN = 2\n"), ("gr", "    GREEN = 2\n    RED = 1\n")):
        for proto in (2, 4):
            write(python("3.11"), path, ENUM % body, proto, "cp_enum_%s_p%d.pkl" % (order, proto))


if __name__ == "__main__":
    main()
