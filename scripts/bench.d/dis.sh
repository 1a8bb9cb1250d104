#!/usr/bin/env bash
# pk dis against python -m pickletools (both writing to /dev/null).
# Issue 10's target: pk dis at least 50x faster than pickletools on every
# table shape; the slowest shape is the one that counts. Shapes: a 6.5 MB
# table of small dicts made here (smalldicts_65k.pkl), and the table_* cost
# shapes at full size from $BENCH_DIR/costshapes when costshapes.sh has made
# them (else from the committed testdata/costshapes/shapes/*.pkl.gz,
# decompressed into $BENCH_DIR/dis). pickletools only runs on files of at
# most 26 MiB (table_dicts_lists is 25 MiB; pickletools takes about 400 s on
# the 103 MB dicts.pkl); BENCH_QUICK=1 skips it. Ratios are given for wall and CPU (user+sys) time: on a loaded
# machine the CPU ratio is the fairer one.
set -euo pipefail
: "${PK:?set PK (scripts/bench.sh sets it)}"
: "${BENCH_DIR:?set BENCH_DIR}"
: "${BENCH_RUNS:=3}"
: "${PYTHON:=python3}"
BENCH_QUICK=${BENCH_QUICK:-0}
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi

mb() { awk "BEGIN{printf \"%.0f\", $1 / 1024}"; }
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.0f\", $1 / $2; else print \"-\" }"; }

# dicts.pkl (103 MB): pk alone; pickletools only on the smaller tables below
f="$BENCH_DIR/dicts.pkl"
read -r pw pc pr <<<"$(measure "$BENCH_RUNS" "$PK" dis "$f")"
read -r jw jc jr <<<"$(measure "$BENCH_RUNS" "$PK" dis --json "$f")"
echo "dis dicts.pkl: pk ${pw}s (cpu ${pc}s, peak $(mb "$pr") MB); pickletools not run (> 26 MiB; ~400 s)"
echo "dis --json dicts.pkl: pk ${jw}s (cpu ${jc}s, peak $(mb "$jr") MB)"

f="$BENCH_DIR/blobs.pkl"
read -r bw bc br <<<"$(measure "$BENCH_RUNS" "$PK" dis "$f")"
echo "dis blobs.pkl ($(($(stat -L -c %s "$f") / 1048576)) MiB): pk ${bw}s (cpu ${bc}s, peak $(mb "$br") MB)"

# the table shapes
D="$BENCH_DIR/dis"
mkdir -p "$D"
if [ ! -s "$D/smalldicts_65k.pkl" ]; then
	"$PYTHON" - "$D/smalldicts_65k.pkl" <<'PY'
import os, pickle, sys
# bench-gen.py's dicts.pkl rows, 65,000 of them (6.5 MB)
rows = [{"id": i, "name": "user%07d" % i, "score": i * 0.5, "tags": ["a", "b"],
         "email": "user%07d@example.com" % i, "city": "city%04d" % (i % 10000),
         "ratio": i / 7, "active": i % 3 == 0} for i in range(65_000)]
with open(sys.argv[1] + ".tmp", "wb") as f:
    pickle.dump(rows, f, protocol=4)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
PY
fi
files=("$D/smalldicts_65k.pkl")
for s in table_dicts_lists table_floats table_strings_memo table_namespaces table_objects; do
	if [ -s "$BENCH_DIR/costshapes/$s.pkl" ]; then
		files+=("$BENCH_DIR/costshapes/$s.pkl")
	elif [ -s "testdata/costshapes/shapes/$s.pkl.gz" ]; then
		[ -s "$D/$s.pkl" ] || { gzip -dc "testdata/costshapes/shapes/$s.pkl.gz" >"$D/$s.pkl.tmp" && mv "$D/$s.pkl.tmp" "$D/$s.pkl"; }
		files+=("$D/$s.pkl")
	fi
done

echo "== dis on table shapes (load average $(cut -d' ' -f1 /proc/loadavg); target: pk dis >= 50x faster than pickletools on each)"
worst="" worstr=""
for f in "${files[@]}"; do
	name=$(basename "$f" .pkl)
	size=$(stat -L -c %s "$f")
	read -r pw pc pr <<<"$(measure "$BENCH_RUNS" "$PK" dis "$f")"
	line=$(printf 'dis %-22s (%5.1f MB): pk %6ss cpu %5ss %4s MB' "$name" "$(awk "BEGIN{print $size / 1e6}")" "$pw" "$pc" "$(mb "$pr")")
	if [ "$BENCH_QUICK" = 1 ]; then
		echo "$line | pickletools skipped (BENCH_QUICK=1)"
		continue
	fi
	if [ "$size" -gt $((26 << 20)) ] && [ "${DIS_BENCH_BIG:-0}" != 1 ]; then
		echo "$line | pickletools skipped (> 26 MiB; DIS_BENCH_BIG=1 runs it)"
		continue
	fi
	read -r tw tc tr <<<"$(measure 1 "$PYTHON" -m pickletools "$f")"
	rw=$(ratio "$tw" "$pw")
	rc=$(ratio "$tc" "$pc")
	echo "$line | pickletools ${tw}s cpu ${tc}s $(mb "$tr") MB | ratio wall ${rw}x, cpu ${rc}x"
	# the slowest shape, by the CPU ratio
	if [ "$rc" != - ] && { [ -z "$worstr" ] || [ "$rc" -lt "$worstr" ]; }; then
		worst=$name worstr=$rc
	fi
done
if [ -n "$worst" ]; then
	verdict="met"
	[ "$worstr" -ge 50 ] || verdict="NOT met"
	echo "dis slowest table shape: $worst, ${worstr}x (cpu) against the 50x target: $verdict"
	bench_target "#10" "dis: slowest table shape ($worst), speed-up on pickletools (cpu)" "$worstr" ">=" 50 x >/dev/null
fi
