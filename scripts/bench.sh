#!/usr/bin/env bash
# pk's benchmarks (run by `make bench`):
#   1. builds pk into bin/pk,
#   2. makes the inputs under testdata/bench/ (scripts/bench-gen.py; skips
#      files that exist),
#   3. runs the Go benchmarks briefly (go test -bench . -run '^$' ./...),
#   4. runs every scripts/bench.d/*.sh, each printing lines such as
#        dis dicts.pkl: pk 2.10s (peak 270 MB), pickletools 160.3s, ratio 76x
#
# Environment: BENCHTIME (go test -benchtime, default 1x), BENCH_RUNS (runs
# per pk timing, default 3), PYTHON (reference Python, default python3),
# BENCH_QUICK=1 skips the slow Python reference runs.
#
# For scripts in bench.d: PK (the binary), BENCH_DIR (the inputs), PYTHON,
# BENCH_RUNS, BENCH_QUICK are exported, and so is the shell function
#   measure RUNS CMD [ARGS...]
# which runs CMD RUNS times with stdout to /dev/null and prints
#   "<best wall seconds> <user+sys seconds of that run> <peak RSS in KB>"
# (wall time from hyperfine when it is installed, else /usr/bin/time; peak
# RSS always from /usr/bin/time, Debian package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."

export PK="${PK:-$PWD/bin/pk}"
export BENCH_DIR="${BENCH_DIR:-$PWD/testdata/bench}"
export PYTHON="${PYTHON:-python3}"
export BENCH_RUNS="${BENCH_RUNS:-3}"
export BENCH_QUICK="${BENCH_QUICK:-0}"

# hyperfine and GNU time come from Debian packages; install them when we can.
if { ! command -v hyperfine >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; } &&
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	apt-get install -y -qq hyperfine time >/dev/null 2>&1 || true
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench: /usr/bin/time is missing (apt-get install -y time)" >&2
	exit 2
fi

echo "== build"
go build -o "$PK" .

echo "== inputs ($BENCH_DIR)"
"$PYTHON" scripts/bench-gen.py "$BENCH_DIR"

# shellcheck source=bench.d/measure.sh
. scripts/bench.d/measure.sh
export -f bench_measure bench_target
# every script records its targets here (bench_target); printed at the end
BENCH_TARGETS=$(mktemp)
export BENCH_TARGETS
trap 'rm -f "$BENCH_TARGETS"' EXIT
measure() {
	local runs=$1
	shift
	local best cpu rss
	read -r best cpu rss < <(bench_measure "$runs" "$@")
	if command -v hyperfine >/dev/null 2>&1 && [ "$runs" -gt 1 ]; then
		local json
		json=$(mktemp)
		if hyperfine --style none --warmup 1 --runs "$runs" --export-json "$json" \
			"$(printf '%q ' "$@") >/dev/null" >/dev/null 2>&1; then
			best=$("$PYTHON" -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["min"])' "$json")
		fi
		rm -f "$json"
	fi
	echo "$best $cpu $rss"
}
export -f measure

echo "== go test -bench (benchtime ${BENCHTIME:-1x})"
go test -run '^$' -bench . -benchtime "${BENCHTIME:-1x}" ./...

echo "== commands"
status=0
for s in scripts/bench.d/*.sh; do
	[ -e "$s" ] || continue
	bash "$s" || { echo "bench: $s failed" >&2; status=1; }
done

# The issues' targets as this run measured them, one line each (the
# scripts above print how each figure was measured).
echo "== targets ($(grep -c . "$BENCH_TARGETS" || true) checked, $(grep -c $'\tmet$' "$BENCH_TARGETS" || true) met; load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs)"
sort -s -t$'\t' -k1,1 "$BENCH_TARGETS" | awk -F'\t' '{ printf "%-6s %-72s %8s %-2s %-8s %-14s %s\n", $1, $2, $3, $4, $5, $6, $7 }'
exit $status
