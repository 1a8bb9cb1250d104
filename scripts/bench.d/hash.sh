#!/usr/bin/env bash
# pk hash benchmarks (issue 3). Runs standalone or from scripts/bench.sh.
#   1. ~100 MB pickle of a million small dicts (testdata/bench/dicts.pkl from
#      scripts/bench-gen.py, and this script's 70 MB dicts_1m.pkl): pk hash
#      vs python3 pickle.load (target: >= 5x faster, peak RSS below the file)
#   2. ~500 MB pickle of a few large byte arrays: pk hash vs sha256sum of the
#      file (target: >= 0.7x the throughput, RSS < 100 MB)
#   3. other shapes the streaming path takes: a dict and an object holding a
#      big table, a million class instances, stdin (pk numbers only)
# Inputs are generated under testdata/bench/ (gitignored) on first run.
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -F bench_target >/dev/null || source scripts/bench.d/measure.sh # bench_target, standalone
PK=${PK:-bin/pk}
PY=${PY:-python3}
[ -x "$PK" ] || go build -o "$PK" .
mkdir -p testdata/bench
D=testdata/bench/dicts_1m.pkl
B=testdata/bench/bytes_500m.pkl
if [ ! -s "$D" ]; then
  "$PY" - "$D" <<'PY'
import pickle, sys
rows = [{"id": i, "name": "user%07d" % i, "score": i * 0.5, "tags": ("a", "b"), "ok": i % 3 == 0,
         "email": "user%07d@example.com" % i} for i in range(1_000_000)]
with open(sys.argv[1], "wb") as f:
    pickle.dump(rows, f, protocol=4)
PY
fi
if [ ! -s "$B" ]; then
  "$PY" - "$B" <<'PY'
import pickle, sys, os
blobs = [os.urandom(125 << 20) for _ in range(4)]
with open(sys.argv[1], "wb") as f:
    pickle.dump({"weights": blobs, "name": "model"}, f, protocol=5)
PY
fi

# run CMD...: prints "seconds maxrss_kb"
measure() {
  local out
  out=$( { /usr/bin/time -f "%e %M" "$@" >/dev/null; } 2>&1 | tail -1 )
  echo "$out"
}
size_mb() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }

# The issue's file: ~100 MB, a million small dicts (scripts/bench-gen.py's
# dicts.pkl, made by scripts/bench.sh); then this script's own 70 MB variant
# (tuples and fewer keys), for comparison.
for F in testdata/bench/dicts.pkl "$D"; do
  [ -s "$F" ] || continue
  echo "== pk hash: $F ($(size_mb "$F") MB, a million small dicts)"
  read -r pk_t pk_m < <(measure "$PK" hash "$F")
  read -r py_t py_m < <(measure "$PY" -c "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$F")
  echo "pk hash        ${pk_t}s  maxrss $((pk_m/1024)) MB"
  echo "python load    ${py_t}s  maxrss $((py_m/1024)) MB"
  echo "ratio (python/pk): $(echo "scale=2; $py_t / $pk_t" | bc)x   (target >= 5x; pk RSS / file size: $(echo "scale=2; $pk_m / 1024 / $(size_mb "$F")" | bc), target < 1)"
  bench_target "hash" "hash: pk hash $(basename "$F"), speed-up on pickle.load" "$(echo "scale=2; $py_t / $pk_t" | bc)" ">=" 5 x >/dev/null
  bench_target "hash" "hash: pk hash $(basename "$F"), peak RSS / file" "$(echo "scale=2; $pk_m / 1024 / $(size_mb "$F")" | bc)" "<" 1 x >/dev/null
done

echo "== pk hash: $B ($(size_mb "$B") MB, large byte arrays)"
cat "$B" >/dev/null
read -r pk_t pk_m < <(measure "$PK" hash "$B")
read -r sh_t sh_m < <(measure sha256sum "$B")
echo "pk hash        ${pk_t}s  maxrss $((pk_m/1024)) MB"
echo "sha256sum      ${sh_t}s  maxrss $((sh_m/1024)) MB"
echo "throughput ratio (pk/sha256sum): $(echo "scale=2; $sh_t / $pk_t" | bc)x   (target >= 0.7x, RSS < 100 MB)"
bench_target "hash" "hash: pk hash of blobs, throughput / sha256sum" "$(echo "scale=2; $sh_t / $pk_t" | bc)" ">=" 0.7 x >/dev/null
bench_target "hash" "hash: pk hash of blobs, peak RSS" "$((pk_m / 1024))" "<" 100 MB >/dev/null

# 3. other shapes the streaming path takes (docs/pk-hash.md quotes these):
#    a dict whose value is a big table, an object whose state holds one, a
#    list of a million class instances, and stdin.
S=testdata/bench
if [ ! -s "$S/rows_dict.pkl" ] || [ ! -s "$S/dataset.pkl" ] || [ ! -s "$S/objects.pkl" ]; then
  "$PY" - "$S" <<'PY'
import os, pickle, sys, types
out = sys.argv[1]
mod = types.ModuleType("pkbench")          # pickled by reference, never imported
sys.modules["pkbench"] = mod
class Dataset:
    def __init__(self, rows): self.rows, self.name = rows, "train"
class P:
    def __init__(self, i):
        self.i, self.name, self.score, self.tags = i, "n%d" % i, i * 0.5, ["a", "b"]
for c in (Dataset, P):
    c.__module__ = "pkbench"; setattr(mod, c.__name__, c)
rows = [{"id": i, "name": "user%07d" % i, "score": i * 0.5} for i in range(1_000_000)]
for name, obj in (("rows_dict", {"rows": rows, "meta": {"n": 1}}), ("dataset", Dataset(rows)),
                  ("objects", [P(i) for i in range(1_000_000)])):
    with open(os.path.join(out, name + ".pkl"), "wb") as f:
        pickle.dump(obj, f, protocol=4)
PY
fi
echo "== pk hash: other shapes (streaming path)"
for F in "$S/rows_dict.pkl" "$S/dataset.pkl" "$S/objects.pkl"; do
  read -r pk_t pk_m < <(measure "$PK" hash "$F")
  echo "pk hash $(basename "$F") ($(size_mb "$F") MB)   ${pk_t}s  maxrss $((pk_m/1024)) MB"
done
if [ -s "$S/dicts.pkl.gz" ]; then
  read -r pk_t pk_m < <(measure sh -c "gzip -dc $S/dicts.pkl.gz | $PK hash -")
  echo "gzip -dc dicts.pkl.gz | pk hash -   ${pk_t}s  maxrss $((pk_m/1024)) MB (of the pipeline's largest process)"
fi

# 4. shapes the streaming path refuses, read through the canon sink (docs/engine.md
#    §4, session 8): a table of types.SimpleNamespace objects (a `types` global),
#    and a dict of them; against pickle.load.
if [ ! -s "$S/namespaces.pkl" ] || [ ! -s "$S/namespace_dict.pkl" ]; then
  "$PY" - "$S" <<'PY'
import os, pickle, sys, types
out = sys.argv[1]
rows = [types.SimpleNamespace(i=i, name="n%d" % i, v=[i, i * 0.5]) for i in range(500_000)]
for name, obj in (("namespaces", rows), ("namespace_dict", {"k%d" % i: r for i, r in enumerate(rows)})):
    with open(os.path.join(out, name + ".pkl"), "wb") as f:
        pickle.dump(obj, f, protocol=4)
PY
fi
echo "== pk hash: shapes the streaming path refuses (the canon sink)"
for F in "$S/namespaces.pkl" "$S/namespace_dict.pkl"; do
  read -r pk_t pk_m < <(measure "$PK" hash "$F")
  read -r py_t py_m < <(measure "$PY" -c "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$F")
  echo "pk hash $(basename "$F") ($(size_mb "$F") MB)   ${pk_t}s  maxrss $((pk_m/1024)) MB;  pickle.load ${py_t}s  maxrss $((py_m/1024)) MB;  ratio (python/pk) $(echo "scale=2; $py_t / $pk_t" | bc)x"
done
