#!/bin/sh
# Regenerate the pickle fixture corpus (testdata/fixtures, testdata/equiv,
# testdata/differ) with real producers, then the pickletools oracle.
#
#   sh testdata/gen/make_fixtures.sh          (what `make fixtures` runs)
#
# Interpreters (override with environment variables):
#   PK_PY27  PK_PY38  PK_PY311  PK_PY313   pyenv CPythons  (default: $PYENV_ROOT/versions/<x.y>.*/bin/python)
#   PK_PYDEB                              Debian python3 with python3-dill, -cloudpickle, -numpy,
#                                         -joblib, -torch (default /usr/bin/python3)
#   PK_STAGE                              staging dir for producer scripts (default /tmp/pk-fixtures-gen);
#                                         its paths end up inside cloudpickle/dill pickles
# A producer whose interpreter or package is missing is skipped with a message
# and its previously committed files are left alone.  Re-running is safe:
# each producer first removes its own previous outputs.
set -eu

GEN_DIR=$(cd "$(dirname "$0")" && pwd)
TESTDATA=$(dirname "$GEN_DIR")
FIX="$TESTDATA/fixtures"
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
STAGE=${PK_STAGE:-/tmp/pk-fixtures-gen}
export PK_STAGE="$STAGE"
# fixture groups are made with a fixed hash seed (deterministic set/dict order);
# the equiv cases vary it on purpose
export PYTHONHASHSEED=0
unset PYTHONPATH || true

pyenv_python() { # pyenv_python 3.11  -> newest installed 3.11.x python, or ""
    for d in $(ls -d "$PYENV_ROOT/versions/$1".* 2>/dev/null | sort -V -r); do
        if [ -x "$d/bin/python" ]; then echo "$d/bin/python"; return; fi
    done
    echo ""
}

PY27=${PK_PY27:-$(pyenv_python 2.7)}
PY38=${PK_PY38:-$(pyenv_python 3.8)}
PY311=${PK_PY311:-$(pyenv_python 3.11)}
PY313=${PK_PY313:-$(pyenv_python 3.13)}
PYDEB=${PK_PYDEB:-/usr/bin/python3}
DEBNAME=${PK_PYDEB:-/usr/bin/python3}
for v in PY27 PY38 PY311 PY313 PYDEB; do
    eval "p=\$$v"
    if [ -n "$p" ] && ! [ -x "$p" ]; then eval "$v="; fi
done
export PK_PY27="$PY27" PK_PY38="$PY38" PK_PY311="$PY311" PK_PY313="$PY313" PK_PYDEB="$PYDEB"

say() { echo "== $*"; }
skip() { echo "   SKIP: $*"; }
has_mod() { # has_mod PY MODULE...
    [ -n "$1" ] || return 1
    py=$1; shift
    for m in "$@"; do "$py" -c "import $m" >/dev/null 2>&1 || return 1; done
}

# Producer scripts run from a fixed staging copy: cloudpickle and dill store
# the script path (co_filename, __file__), so this keeps reruns reproducible
# regardless of where the repository is checked out.
SRC="$STAGE/src"
rm -rf "$SRC"
mkdir -p "$SRC"
cp "$GEN_DIR"/*.py "$SRC"/
mkdir -p "$FIX"

say "stdlib"
if [ -n "$PY311" ]; then
    "$PY311" "$SRC/gen_stdlib.py" "$FIX/stdlib" py311 --items --batch 4 --extras
else
    skip "no Python 3.11 (stdlib py311 fixtures)"
fi
if [ -n "$PY27" ]; then "$PY27" "$SRC/gen_stdlib.py" "$FIX/stdlib" py27; else skip "no Python 2.7"; fi
if [ -n "$PY38" ]; then
    "$PY38" "$SRC/gen_stdlib.py" "$FIX/stdlib" py38 --protocols 0,2,4,5 --py-protocols 4
else skip "no Python 3.8"; fi
if [ -n "$PY313" ]; then
    "$PY313" "$SRC/gen_stdlib.py" "$FIX/stdlib" py313 --protocols 0,2,4,5 --py-protocols 4
else skip "no Python 3.13"; fi

say "cloudpickle"
if has_mod "$PY311" cloudpickle; then
    (cd "$SRC" && "$PY311" gen_dynamic.py cloudpickle all "$FIX/cloudpickle" py311)
else skip "no cloudpickle in Python 3.11 ($PY311)"; fi
if has_mod "$PYDEB" cloudpickle; then
    (cd "$SRC" && "$PYDEB" gen_dynamic.py cloudpickle all "$FIX/cloudpickle" py311deb)
else skip "no cloudpickle in $DEBNAME (apt-get install python3-cloudpickle)"; fi

say "dill"
if has_mod "$PYDEB" dill; then
    (cd "$SRC" && "$PYDEB" -W ignore gen_dynamic.py dill all "$FIX/dill" py311deb)
else skip "no dill in $DEBNAME (apt-get install python3-dill)"; fi

say "numpy"
if has_mod "$PYDEB" numpy; then
    rm -rf "$FIX/numpy"; "$PYDEB" "$SRC/gen_numpy.py" "$FIX/numpy"
else skip "no numpy in $DEBNAME (apt-get install python3-numpy)"; fi

say "joblib"
if has_mod "$PYDEB" numpy joblib; then
    rm -rf "$FIX/joblib"; "$PYDEB" "$SRC/gen_joblib.py" "$FIX/joblib"
else skip "no joblib in $DEBNAME (apt-get install python3-joblib)"; fi

say "torch"
if has_mod "$PYDEB" torch; then
    rm -rf "$FIX/torch"; "$PYDEB" "$SRC/gen_torch.py" "$FIX/torch"
else skip "no torch in $DEBNAME (apt-get install python3-torch)"; fi

say "arrays, frames, tensors (pk-canon/2: testdata/arrays, testdata/frames, testdata/tensors)"
# Each object is written by a separate process; the scripts remove their own
# previous outputs. A rerun gives the same bytes except where the producer
# writes a memory address: legacy torch.save files and pickle.dump'd
# tensors name each storage by its address (their pk2 digests are the same).
if has_mod "$PYDEB" numpy joblib pandas sklearn; then
    "$PYDEB" "$SRC/gen_arrays.py" "$TESTDATA/arrays"
    "$PYDEB" "$SRC/gen_frames.py" "$TESTDATA/frames"
else skip "no numpy, joblib, pandas or sklearn in $DEBNAME (apt-get install python3-numpy python3-joblib python3-pandas python3-sklearn)"; fi
if has_mod "$PYDEB" torch; then
    "$PYDEB" "$SRC/gen_tensors.py" "$TESTDATA/tensors"
else skip "no torch in $DEBNAME (apt-get install python3-torch)"; fi

say "compressed"
PYANY=${PY311:-$PYDEB}
if [ -n "$PYANY" ]; then
    rm -rf "$FIX/compressed"; "$PYANY" "$SRC/gen_compressed.py" "$FIX/compressed"
else skip "no Python 3"; fi

say "multi"
if [ -n "$PYANY" ]; then
    rm -rf "$FIX/multi"; "$PYANY" "$SRC/gen_multi.py" "$FIX/multi"
else skip "no Python 3"; fi

say "equiv"
if [ -n "$PYANY" ]; then
    "$PYANY" "$SRC/gen_equiv.py" "$TESTDATA/equiv"
else skip "no Python 3"; fi

say "differ"
if [ -n "$PY311" ]; then
    CP_PYS=""
    if has_mod "$PY311" cloudpickle; then CP_PYS="$PY311"; fi
    if has_mod "$PYDEB" cloudpickle; then CP_PYS="${CP_PYS:+$CP_PYS:}$PYDEB"; fi
    PK_CLOUDPICKLE_PYS="$CP_PYS" "$PY311" "$SRC/gen_differ.py" "$TESTDATA/differ"
else skip "no Python 3.11"; fi

say "paths (object keys, effects; stdlib pickler, hand-assembled opcodes)"
if [ -n "$PYDEB" ]; then
    "$PYDEB" "$SRC/gen_paths.py" "$TESTDATA/paths"
else skip "no Debian python3"; fi

say "oracle (pickletools)"
ORACLE_PY=${PY313:-$PY311}
if [ -n "$ORACLE_PY" ]; then
    "$ORACLE_PY" "$SRC/oracle.py" "$FIX"
else skip "no Python 3.13 or 3.11 for the oracle: .ops.jsonl/.dis.txt not refreshed"; fi

say "sizes"
du -sh "$FIX"/* "$TESTDATA/equiv" "$TESTDATA/differ" 2>/dev/null || true
