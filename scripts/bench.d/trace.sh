#!/usr/bin/env bash
# pk trace benchmark (issue 5). Runs standalone or from scripts/bench.sh.
# On a ~100 MB pickle of a million small dicts (testdata/bench/dicts.pkl, made by
# scripts/bench-gen.py when absent): `pk trace --top 20` vs CPython's pickle.load.
# Targets: >= 3x faster than pickle.load, peak RSS below the file's size.
# --top and --depth on plain data take the streaming fast paths
# (docs/pk-trace.md); the graph path (PK_TRACE_FAST=0) is measured too.
# Prints wall and CPU (user+sys) seconds: on a loaded machine the CPU ratio is
# the fairer one. Measured with /usr/bin/time (GNU time).
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -F bench_target >/dev/null || source scripts/bench.d/measure.sh # bench_target, standalone
PK=${PK:-bin/pk}
PY=${PY:-python3}
RUNS=${RUNS:-1}
[ -x "$PK" ] || { mkdir -p "$(dirname "$PK")"; go build -o "$PK" .; }
D=testdata/bench/dicts.pkl
if [ ! -s "$D" ]; then
  if [ -f scripts/bench-gen.py ]; then
    "$PY" scripts/bench-gen.py testdata/bench
  else
    mkdir -p testdata/bench
    "$PY" - "$D" <<'PY'
import pickle, sys
rows = [{"id": i, "name": "user%07d" % i, "score": i * 0.5, "tags": ["a", "b"],
         "email": "user%07d@example.com" % i, "city": "city%04d" % (i % 10000),
         "ratio": i / 7, "active": i % 3 == 0} for i in range(1_000_000)]
with open(sys.argv[1], "wb") as f:
    pickle.dump(rows, f, protocol=4)
PY
  fi
fi

# best of RUNS: prints "wall cpu maxrss_kb"
measure() {
  local best=""
  for _ in $(seq "$RUNS"); do
    local out
    out=$( { /usr/bin/time -f "%e %U %S %M" "$@" >/dev/null; } 2>&1 | tail -1 )
    read -r e u s m <<<"$out"
    local cpu
    cpu=$(echo "$u + $s" | bc)
    if [ -z "$best" ] || (( $(echo "$e < ${best%% *}" | bc) )); then best="$e $cpu $m"; fi
  done
  echo "$best"
}

size=$(stat -c %s "$D")
echo "pk trace --top 20 on $D ($(echo "scale=1; $size/1048576" | bc) MiB, load average $(cut -d' ' -f1 /proc/loadavg))"
read -r pw pc pm <<<"$(measure "$PK" trace --top 20 "$D")"
read -r jw jc jm <<<"$(measure "$PK" trace --top 20 --json "$D")"
read -r gw gc gm <<<"$(measure env PK_TRACE_FAST=0 "$PK" trace --top 20 "$D")"
read -r dw dc dm <<<"$(measure "$PK" trace --depth 1 "$D")"
read -r ew ec em <<<"$(measure env PK_TRACE_FAST=0 "$PK" trace --depth 1 "$D")"
read -r yw yc ym <<<"$(measure "$PY" -c "import pickle,sys; pickle.load(open(sys.argv[1],'rb'))" "$D")"
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "pk trace --top 20" "$pw" "$pc" $((pm / 1024))
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "pk trace --top 20 --json" "$jw" "$jc" $((jm / 1024))
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "  graph path (PK_TRACE_FAST=0)" "$gw" "$gc" $((gm / 1024))
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "pk trace --depth 1" "$dw" "$dc" $((dm / 1024))
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "  graph path (PK_TRACE_FAST=0)" "$ew" "$ec" $((em / 1024))
printf "  %-28s %8s s wall %8s s cpu %8d MiB peak RSS\n" "python3 pickle.load" "$yw" "$yc" $((ym / 1024))
echo "  speed-up (wall): $(echo "scale=2; $yw / $pw" | bc)x   speed-up (cpu): $(echo "scale=2; $yc / $pc" | bc)x   (target >= 3x)"
echo "  peak RSS / file size: $(echo "scale=2; $pm * 1024 / $size" | bc)   (target < 1)"
bench_target "trace" "trace: pk trace --top 20 dicts, speed-up on pickle.load" "$(echo "scale=2; $yw / $pw" | bc)" ">=" 3 x >/dev/null
bench_target "trace" "trace: pk trace --top 20 dicts, peak RSS / file" "$(echo "scale=2; $pm * 1024 / $size" | bc)" "<" 1 x >/dev/null
