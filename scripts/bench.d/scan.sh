#!/usr/bin/env bash
# pk scan beside picklescan (issue 13's benchmarks). Runs standalone or from
# scripts/bench.sh. testdata/scan/gen_bench.py writes, once, in $BENCH_DIR/scan:
#   smalldicts.pkl  ~27 MB: a list of small dicts (SCAN_DICTS_MB)
#   bytes.pkl       ~400 MB: four 100 MB bytes objects (SCAN_BYTES_MB; 0 skips it)
# and each file goes through `pk scan` and, when it can be run, picklescan
# (the `picklescan` command, or `$PYTHON -m picklescan`; PICKLESCAN="cmd args"
# names another), BENCH_RUNS times each (best wall time, highest peak RSS, from
# /usr/bin/time -f '%e %M'). One line per file:
#   scan smalldicts.pkl (26 MB): pk 0.61s (peak 310 MB) | picklescan 24.10s (peak 1400 MB) | 39.5x faster, 0.22x the memory
# Targets (issue 13): small dicts >= 20x faster than picklescan with peak RSS
# below the file's size; bytes no slower than picklescan, peak RSS < 100 MB.
# Without picklescan (it is on PyPI only) its runs are skipped with a line
# saying so, and pk's figures are still printed against the RSS targets. Its
# public source runs as it is from a checkout:
#   git clone https://github.com/mmaitre314/picklescan; PYTHONPATH=picklescan/src make bench
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -F bench_target >/dev/null || source scripts/bench.d/measure.sh # bench_target, standalone
PK=${PK:-$PWD/bin/pk}
PY=${PYTHON:-python3}
RUNS=${BENCH_RUNS:-3}
DIR=${BENCH_DIR:-testdata/bench}/scan
DICTS_MB=${SCAN_DICTS_MB:-27}
BYTES_MB=${SCAN_BYTES_MB:-400}
[ -x "$PK" ] || { mkdir -p "$(dirname "$PK")"; go build -o "$PK" .; }
[ -x /usr/bin/time ] || { echo "scan: SKIP: /usr/bin/time is missing (apt-get install time)"; exit 0; }
"$PY" testdata/scan/gen_bench.py "$DIR" "$DICTS_MB" "$BYTES_MB"

# timed RUNS CMD...: "best_wall peak_kb" over RUNS runs (exit status ignored:
# scanners exit 1 on a finding; GNU time then writes a "Command exited" line
# first, so the figures are read from the last line).
timed() {
  local runs=$1 best="" rss=0 i w m tf
  shift
  tf=$(mktemp)
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
    read -r w m < <(tail -n 1 "$tf")
    if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w; fi
    if [ "$m" -gt "$rss" ]; then rss=$m; fi
  done
  rm -f "$tf"
  echo "$best $rss"
}
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1 / $2; else print \"inf\" }"; }

PS=()
if [ -n "${PICKLESCAN:-}" ]; then
  read -r -a PS <<<"$PICKLESCAN"
elif command -v picklescan >/dev/null 2>&1; then
  PS=(picklescan)
elif "$PY" -c 'import picklescan' 2>/dev/null; then
  PS=("$PY" -m picklescan)
fi
if [ ${#PS[@]} -eq 0 ]; then
  echo "scan: picklescan: SKIP: no picklescan command and $PY cannot import picklescan (pip install picklescan, or PICKLESCAN=\"cmd args\"); pk scan alone"
fi

over=0
for name in smalldicts.pkl bytes.pkl; do
  f=$DIR/$name
  [ -s "$f" ] || continue
  size_kb=$(( $(stat -c %s "$f") / 1024 ))
  if [ "$name" = smalldicts.pkl ]; then limit_kb=$size_kb; limit="below the file's size"; else limit_kb=$((100 * 1024)); limit="under 100 MB"; fi
  read -r pt pm < <(timed "$RUNS" "$PK" scan "$f")
  line="scan $name ($((size_kb / 1024)) MB): pk ${pt}s (peak $((pm / 1024)) MB, $(ratio "$pm" "$size_kb")x the file; target $limit)"
  [ "$pm" -lt "$limit_kb" ] || over=$((over + 1))
  bench_target "scan" "scan: pk scan $name, peak RSS" "$((pm / 1024))" "<" "$((limit_kb / 1024))" MB >/dev/null
  if [ ${#PS[@]} -gt 0 ]; then
    read -r st sm < <(timed "$RUNS" "${PS[@]}" --path "$f")
    target=">= 20x"; [ "$name" = bytes.pkl ] && target=">= 1x"
    line="$line | picklescan ${st}s (peak $((sm / 1024)) MB) | $(ratio "$st" "$pt")x faster (target $target), $(ratio "$pm" "$sm")x the memory"
  fi
  echo "$line"
done
echo "scan: $over runs of pk scan above the RSS target"
