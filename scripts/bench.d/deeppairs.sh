#!/usr/bin/env bash
# pk diff of pairs that differ at every level (issue 10's bounds: 5 s of CPU,
# 256 MB). Runs standalone or from scripts/bench.sh. The cost shapes' changed
# copies differ in one place; these differ everywhere, which is where pk diff's
# costs grew with the square of the depth until session 16 (docs/engine.md §4):
#   nest   two nestings of 200,000 lists, l_k = [l_{k+1}, 1] against [.., 2]
#          (200,000 entries, each a level deeper)
#   chain  two chains of 200,000 lists, each holding its parent on one side and
#          its grandparent on the other (an alias change at every level)
# The inputs are made once in $BENCH_DIR/deeppairs by the Python below (bytes
# written directly, no pickler: deterministic).
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-bin/pk}
BENCH_DIR=${BENCH_DIR:-testdata/bench}
PY=${PYTHON:-python3}
RUNS=${BENCH_RUNS:-1}
[ -x "$PK" ] || go build -o "$PK" .
declare -F bench_target >/dev/null || source scripts/bench.d/measure.sh
D=$BENCH_DIR/deeppairs
N=${DEEPPAIRS_LEVELS:-200000}
mkdir -p "$D"
if [ ! -s "$D/chain-$N-b.pkl" ]; then
	"$PY" - "$D" "$N" <<'PY'
import os, struct, sys
out, n = sys.argv[1], int(sys.argv[2])

def nest(v):
    return b"\x80\x04" + b"]" * (n + 1) + (b"aK" + bytes([v]) + b"a") * n + b"."

def chain(back):
    b = bytearray(b"\x80\x04")
    for k in range(n + 1):
        b += b"]r" + struct.pack("<I", k)
    for k in range(n, 0, -1):
        if k < n:
            b += b"a"
        b += b"j" + struct.pack("<I", max(k - back, 0)) + b"a"
    return bytes(b + b"a.")

for name, data in (("nest-%d-a" % n, nest(1)), ("nest-%d-b" % n, nest(2)),
                   ("chain-%d-a" % n, chain(1)), ("chain-%d-b" % n, chain(2))):
    with open(os.path.join(out, name + ".pkl"), "wb") as f:
        f.write(data)
PY
fi
for kind in nest chain; do
	a=$D/$kind-$N-a.pkl b=$D/$kind-$N-b.pkl
	read -r t c m < <(bench_measure "$RUNS" "$PK" diff "$a" "$b")
	echo "deeppairs $kind ($N levels, $(( $(stat -c %s "$a") / 1024 )) KB): pk diff ${t}s (cpu ${c}s, peak $((m / 1024)) MB) | $("$PK" diff --color=never "$a" "$b" | tail -n 1 | sed 's/^.* differ: //')"
	bench_target "#10" "deeppairs: pk diff $kind, CPU seconds" "$c" "<=" 5 s >/dev/null
	bench_target "#10" "deeppairs: pk diff $kind, peak RSS" "$((m / 1024))" "<=" 256 MB >/dev/null
done
