#!/usr/bin/env bash
# Code-carrying states (issue 10's first target). Runs standalone or from
# scripts/bench.sh. testdata/states/gen_states.py writes a cloudpickle state
# (thousands of dynamic classes, functions and instances) and a dill
# recurse=True state of the same program; it runs twice, in two processes,
# so that pk diff compares states whose bytes differ. Each file goes through
#   pk hash, pk trace --top 20, pk diff (A against B)
# beside pickle.load of the same file with the producer importable.
# Targets (issue 10): hash >= 5x faster than pickle.load, trace --top 20 >= 3x,
# diff <= 2.5x the time of hashing both, peak RSS <= 2x the file + 16 MB.
# Needs a python3 with cloudpickle and dill (Debian: python3-cloudpickle,
# python3-dill); skips with a line saying so otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-bin/pk}
# The producers come from Debian's packages, so Debian's own python3 is
# tried when $PYTHON (pyenv's, say) has no cloudpickle and dill.
PY=${PYTHON:-python3}
"$PY" -c 'import cloudpickle, dill' 2>/dev/null || PY=/usr/bin/python3
RUNS=${BENCH_RUNS:-3}
DIR=${BENCH_DIR:-testdata/bench}/states
SCALE=${STATE_SCALE:-3200}
[ -x "$PK" ] || { mkdir -p "$(dirname "$PK")"; go build -o "$PK" .; }
if ! "$PY" -c 'import cloudpickle, dill' 2>/dev/null; then
  echo "states: SKIP: $PY cannot import cloudpickle and dill (apt-get install python3-cloudpickle python3-dill)"
  exit 0
fi
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi
for side in a b; do
  [ -s "$DIR/$side/cloudpickle_state.pkl" ] && [ -s "$DIR/$side/dill_state.pkl" ] && continue
  "$PY" testdata/states/gen_states.py "$DIR/$side" "$SCALE"
done
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"inf\" }"; }
over=0
for name in cloudpickle_state dill_state; do
  A=$DIR/a/$name.pkl B=$DIR/b/$name.pkl
  size_kb=$(( $(stat -c %s "$A") / 1024 ))
  limit_kb=$(( 2 * size_kb + 16 * 1024 ))
  read -r lt lc lm < <(measure "$RUNS" "$PY" -c 'import pickle, sys, cloudpickle, dill; pickle.load(open(sys.argv[1], "rb"))' "$A")
  read -r ht hc hm < <(measure "$RUNS" "$PK" hash "$A")
  read -r tt tc tm < <(measure "$RUNS" "$PK" trace --top 20 "$A")
  read -r h2 h2c h2m < <(measure "$RUNS" "$PK" hash "$A" "$B")
  read -r dt dc dm < <(measure "$RUNS" "$PK" diff "$A" "$B")
  echo "== $name.pkl ($((size_kb / 1024)) MB; RSS limit $((limit_kb / 1024)) MB); pickle.load ($("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')) ${lt}s, $((lm / 1024)) MB"
  echo "hash $name: pk ${ht}s (cpu ${hc}s, peak $((hm / 1024)) MB), pickle.load ${lt}s, ratio $(ratio "$lt" "$ht")x (target >= 5x)"
  echo "trace --top 20 $name: pk ${tt}s (peak $((tm / 1024)) MB), ratio $(ratio "$lt" "$tt")x (target >= 3x)"
  echo "diff $name a b: pk ${dt}s (peak $((dm / 1024)) MB), hash of both ${h2}s, ratio $(ratio "$dt" "$h2")x of hashing both (target <= 2.5x)"
  for m in "$hm" "$tm" "$dm"; do [ "$m" -le "$limit_kb" ] || over=$((over + 1)); done
  bench_target "#10" "states: pk hash $name, speed-up on pickle.load" "$(ratio "$lt" "$ht")" ">=" 5 x >/dev/null
  bench_target "#10" "states: pk trace --top 20 $name, speed-up" "$(ratio "$lt" "$tt")" ">=" 3 x >/dev/null
  bench_target "#10" "states: pk diff $name a b, time / hash of both" "$(ratio "$dt" "$h2")" "<=" 2.5 x >/dev/null
  bench_target "#10" "states: largest peak RSS of hash, trace, diff on $name" "$(( $(printf '%s\n' "$hm" "$tm" "$dm" | sort -n | tail -1) / 1024 ))" "<=" "$((limit_kb / 1024))" "MB (2x+16)" >/dev/null
done
echo "states: $over runs above the RSS limit (2x the file + 16 MB)"
