#!/usr/bin/env bash
# Arrays (issue 11's targets). Runs standalone or from scripts/bench.sh.
#   pk hash of a 500 MB numpy array pickle vs sha256sum of the same file
#     (target: pk hash at 0.7x or more of sha256sum's throughput, peak
#     memory under 100 MB)
#   pk diff of two 300 MB array pickles that differ in one element vs pk
#     hash of both (target: at most 2.5x the time, the element named)
# Inputs, made once into $BENCH_DIR/arrays (numpy, in separate processes):
# a500.pkl (float64, 62.5 M elements, protocol 4), a300.pkl and a300-b.pkl
# (float32 (7500, 10000), protocol 5, one element changed at [4321, 1234]).
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-$PWD/bin/pk}
BENCH_DIR=${BENCH_DIR:-testdata/bench}
RUNS=${BENCH_RUNS:-1}
[ -x "$PK" ] || go build -o "$PK" .
D=$BENCH_DIR/arrays
mkdir -p "$D"
PY=${PYTHON:-python3}
"$PY" -c 'import numpy' 2>/dev/null || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	echo "arrays: SKIP: no python3 with numpy to make the inputs"
	exit 0
fi
[ -s "$D/a500.pkl" ] || "$PY" -c '
import pickle, sys, numpy as np
a = np.arange(62_500_000, dtype="<f8") * 0.5
with open(sys.argv[1], "wb") as f: pickle.dump(a, f, protocol=4)' "$D/a500.pkl"
for side in a b; do
	f=$D/a300.pkl
	[ $side = b ] && f=$D/a300-b.pkl
	[ -s "$f" ] || "$PY" -c '
import pickle, sys, numpy as np
a = np.arange(75_000_000, dtype="<f4").reshape(7500, 10000)
if sys.argv[2] == "b": a[4321, 1234] = -1.5
with open(sys.argv[1], "wb") as f: pickle.dump(a, f, protocol=5)' "$f" $side
done
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"inf\" }"; }
mb() { awk "BEGIN{printf \"%.0f\", $(stat -c %s "$1") / 1048576}"; }

# warm the page cache: both commands then read from memory
cat "$D/a500.pkl" "$D/a300.pkl" "$D/a300-b.pkl" >/dev/null
read -r ht hc hm < <(measure "$RUNS" "$PK" hash "$D/a500.pkl")
read -r st sc sm < <(measure "$RUNS" sha256sum "$D/a500.pkl")
echo "arrays hash a500.pkl ($(mb "$D/a500.pkl") MB): pk hash ${ht}s cpu ${hc}s $((hm / 1024)) MB | sha256sum ${st}s cpu ${sc}s | throughput $(ratio "$st" "$ht")x of sha256sum (target >= 0.7x), memory $((hm / 1024)) MB (target < 100 MB)"
bench_target "arrays" "arrays: pk hash a500.pkl, throughput / sha256sum" "$(ratio "$st" "$ht")" ">=" 0.7 x >/dev/null
bench_target "arrays" "arrays: pk hash a500.pkl, peak RSS" "$((hm / 1024))" "<" 100 MB >/dev/null

read -r dt dc dm < <(measure "$RUNS" "$PK" diff "$D/a300.pkl" "$D/a300-b.pkl")
read -r h2t h2c h2m < <(measure "$RUNS" "$PK" hash --jobs 1 "$D/a300.pkl" "$D/a300-b.pkl")
named=$("$PK" diff --color=never "$D/a300.pkl" "$D/a300-b.pkl" | head -n 1 || true)
echo "arrays diff a300.pkl a300-b.pkl ($(mb "$D/a300.pkl") MB each): pk diff ${dt}s cpu ${dc}s $((dm / 1024)) MB | pk hash of both ${h2t}s cpu ${h2c}s $((h2m / 1024)) MB | time $(ratio "$dt" "$h2t")x (cpu $(ratio "$dc" "$h2c")x; target <= 2.5x) | names: $named"
bench_target "arrays" "arrays: pk diff a300.pkl a300-b.pkl, time / pk hash of both" "$(ratio "$dt" "$h2t")" "<=" 2.5 x >/dev/null
