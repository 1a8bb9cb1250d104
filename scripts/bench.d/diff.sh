#!/usr/bin/env bash
# pk diff benchmark (issue 4). Runs standalone or from scripts/bench.sh.
# Two ~100 MB pickles of a million small dicts that differ in one value deep
# inside (testdata/bench/dicts.pkl and dicts-b.pkl from scripts/bench-gen.py):
#   pk diff A B  vs  pk hash A B   (target: diff within 2.5x of hash)
#   peak RSS of pk diff vs the two files' size together (target: below)
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-bin/pk}
BENCH_DIR=${BENCH_DIR:-testdata/bench}
[ -x "$PK" ] || go build -o "$PK" .
A=$BENCH_DIR/dicts.pkl
B=$BENCH_DIR/dicts-b.pkl
if [ ! -s "$A" ] || [ ! -s "$B" ]; then
  ${PYTHON:-python3} scripts/bench-gen.py "$BENCH_DIR"
fi
# best of RUNS runs: prints "wall_seconds user+sys_seconds maxrss_kb" (the
# machine may be shared: compare CPU time too)
RUNS=${BENCH_RUNS:-1}
source scripts/bench.d/measure.sh
measure() { bench_measure "$RUNS" "$@"; }
sa=$(stat -c %s "$A"); sb=$(stat -c %s "$B")
echo "== pk diff: $A vs $B ($(( (sa + sb) / 1048576 )) MB together, one value changed)"
read -r d_t d_c d_m < <(measure "$PK" diff "$A" "$B")
read -r h_t h_c h_m < <(measure "$PK" hash --jobs 1 "$A" "$B")
echo "diff dicts: pk diff ${d_t}s (cpu ${d_c}s, peak $((d_m / 1024)) MB), pk hash of both ${h_t}s (cpu ${h_c}s, peak $((h_m / 1024)) MB), ratio $(echo "scale=2; $d_t / $h_t" | bc)x wall, $(echo "scale=2; $d_c / $h_c" | bc)x cpu (target <= 2.5x); diff peak / files $(echo "scale=2; $d_m * 1024 / ($sa + $sb)" | bc) (target < 1)"
"$PK" diff --color=never "$A" "$B" | tail -5 || true
bench_target "diff" "diff: pk diff dicts, time / pk hash of both" "$(echo "scale=2; $d_t / $h_t" | bc)" "<=" 2.5 x >/dev/null
bench_target "diff" "diff: pk diff dicts, peak RSS / both files" "$(echo "scale=2; $d_m * 1024 / ($sa + $sb)" | bc)" "<" 1 x >/dev/null
