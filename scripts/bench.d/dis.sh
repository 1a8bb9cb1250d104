#!/usr/bin/env bash
# pk dis against python -m pickletools (both writing to /dev/null).
set -euo pipefail
: "${PK:?run through scripts/bench.sh}"

mb() { awk "BEGIN{printf \"%.0f\", $1 / 1024}"; }

f="$BENCH_DIR/dicts.pkl"
read -r pw pc pr <<<"$(measure "$BENCH_RUNS" "$PK" dis "$f")"
read -r jw jc jr <<<"$(measure "$BENCH_RUNS" "$PK" dis --json "$f")"
if [ "$BENCH_QUICK" = 1 ]; then
	echo "dis dicts.pkl: pk ${pw}s (cpu ${pc}s, peak $(mb "$pr") MB), pickletools skipped (BENCH_QUICK=1)"
else
	read -r tw tc tr <<<"$(measure 1 "$PYTHON" -m pickletools "$f")"
	echo "dis dicts.pkl: pk ${pw}s, pickletools ${tw}s, ratio $(awk "BEGIN{printf \"%.0f\", $tw / $pw}")x" \
		"(cpu: pk ${pc}s, pickletools ${tc}s, ratio $(awk "BEGIN{printf \"%.0f\", $tc / $pc}")x; peak RSS pk $(mb "$pr") MB, pickletools $(mb "$tr") MB)"
fi
echo "dis --json dicts.pkl: pk ${jw}s (cpu ${jc}s, peak $(mb "$jr") MB)"

f="$BENCH_DIR/blobs.pkl"
read -r bw bc br <<<"$(measure "$BENCH_RUNS" "$PK" dis "$f")"
echo "dis blobs.pkl ($(( $(stat -L -c %s "$f") / 1048576 )) MiB): pk ${bw}s (cpu ${bc}s, peak $(mb "$br") MB)"
