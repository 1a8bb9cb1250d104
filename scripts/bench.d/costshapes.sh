#!/usr/bin/env bash
# Cost shapes (issue 10 §4; docs/cost.md). Runs standalone or from scripts/bench.sh.
# Makes the full-size shapes of testdata/costshapes/gen.py in $BENCH_DIR/costshapes
# (once; ~340 MB, a few minutes: every shape is also loaded by CPython), then
# runs every pk command on every shape and prints one line per command:
#   costshapes nest_list_mark (1.9 MB) dis   1.00 s  cpu 0.15 s  63 MB  exit 0 | pickle.load 1.99 s  cpu 0.40 s  98 MB
# and a summary: the runs over the bounds (5 s CPU, 256 MB peak RSS; the bounds
# cmd/costshape_test.go asserts on the committed copies) and the slowest.
# pickle.load loads every pickle in the file until EOF, under `ulimit -v` 8 GiB
# (memo_sparse would have CPython grow a 32 GiB memo array); BENCH_QUICK=1
# skips it. Each run is stopped after COSTSHAPES_TIMEOUT seconds (default 60).
# A tab-separated copy of the results goes to $BENCH_DIR/costshapes/results.tsv.
# COSTSHAPES_ONLY=name,name runs only those shapes.
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -F bench_target >/dev/null || source scripts/bench.d/measure.sh # bench_target, standalone
PK=${PK:-$PWD/bin/pk}
BENCH_DIR=${BENCH_DIR:-testdata/bench}
PYTHON=${PYTHON:-python3}
BENCH_QUICK=${BENCH_QUICK:-0}
T=${COSTSHAPES_TIMEOUT:-60}
[ -x "$PK" ] || go build -o "$PK" .
D=$BENCH_DIR/costshapes
if [ ! -s "$D/manifest.json" ]; then
	echo "costshapes: making the shapes in $D (gen.py --raw --changed)" >&2
	mkdir -p "$D"
	"$PYTHON" testdata/costshapes/gen.py --raw --changed "$D" 2>"$D.gen.log" || {
		echo "costshapes: gen.py failed, see $D.gen.log" >&2
		exit 1
	}
fi

# run CMD...: prints "wall cpu rss_kb exit" (exit 124/137: stopped after $T s).
# Not bench.sh's measure: that one reads GNU time's first line, which is
# "Command exited with non-zero status N" when pk exits 1 or 2.
run() {
	local tf w u s m x
	tf=$(mktemp)
	/usr/bin/time -o "$tf" -f '%e %U %S %M %x' timeout -k 5 "$T" "$@" >/dev/null 2>&1 || true
	read -r w u s m x < <(tail -n 1 "$tf")
	rm -f "$tf"
	echo "$w $(awk "BEGIN{printf \"%.2f\", $u + $s}") $m $x"
}
mb() { awk "BEGIN{printf \"%.0f\", $1 / 1024}"; }

PYLOAD='import pickle, sys
f = open(sys.argv[1], "rb")
while f.peek(1):
    pickle.load(f)'
pyload() { bash -c 'ulimit -v 8388608; exec "$0" -c "$1" "$2"' "$PYTHON" "$PYLOAD" "$1"; }
export -f pyload
export PYTHON PYLOAD

mapfile -t shapes < <("$PYTHON" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["shapes"]:
    print(e["name"], e["size"], e["cpython"], 1 if e["change"] else 0)' "$D/manifest.json")

cmds=("dis" "hash" "trace" "trace --top 20" "trace --lines 0" "trace --svg" "scan" "canon" "diff same" "diff changed")
res=$D/results.tsv
printf 'shape\tsize\tcommand\twall_s\tcpu_s\trss_kb\texit\tpy_wall_s\tpy_cpu_s\tpy_rss_kb\tpy_exit\n' >"$res"
echo "== cost shapes ($D, ${#shapes[@]} shapes; bounds 5 s CPU, 256 MB; runs stopped after ${T}s; load average $(cut -d' ' -f1 /proc/loadavg))"
for line in "${shapes[@]}"; do
	read -r name size cpy haschange <<<"$line"
	if [ -n "${COSTSHAPES_ONLY:-}" ] && [[ ",$COSTSHAPES_ONLY," != *",$name,"* ]]; then continue; fi
	f=$D/$name.pkl
	if [ "$BENCH_QUICK" = 1 ]; then
		pw=- pc=- pr=0 px=-
	else
		read -r pw pc pr px <<<"$(run bash -c 'pyload "$0"' "$f")"
	fi
	for c in "${cmds[@]}"; do
		case $c in
		"diff same") args=(diff "$f" "$f") ;;
		"diff changed")
			[ "$haschange" = 1 ] || continue
			args=(diff "$f" "$D/$name-changed.pkl")
			;;
		"trace --svg") args=(trace --svg /dev/null "$f") ;;
		*) read -ra args <<<"$c" && args+=("$f") ;;
		esac
		read -r w cpu rss x <<<"$(run "$PK" "${args[@]}")"
		note=""
		if [ "$x" = 124 ] || [ "$x" = 137 ]; then note=" (stopped at ${T}s)"; fi
		if [ "$BENCH_QUICK" = 1 ]; then py="pickle.load skipped (BENCH_QUICK=1)"; else
			py=$(printf 'pickle.load %6s s  cpu %6s s %6s MB%s' "$pw" "$pc" "$(mb "$pr")" "$([ "$cpy" = refused ] && echo " (refused, exit $px)")")
		fi
		printf 'costshapes %-24s (%5.1f MB) %-15s %7s s  cpu %7s s %6s MB  exit %-3s%s | %s\n' \
			"$name" "$(awk "BEGIN{print $size / 1048576}")" "$c" "$w" "$cpu" "$(mb "$rss")" "$x" "$note" "$py"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$size" "$c" "$w" "$cpu" "$rss" "$x" "$pw" "$pc" "$pr" "$px" >>"$res"
	done
done
awk -F'\t' -v T="$T" 'NR > 1 {
	n++
	over = ($5 > 5 || $6 > 262144 || $7 == 124 || $7 == 137)
	if ($5 > 5 || $7 == 124 || $7 == 137) slow++
	if ($6 > 262144) big++
	if (over) o++
	if ($5 > mc) { mc = $5; mw = $4; ms = $1 " " $3 }
	if ($6 > mr) { mr = $6; mrs = $1 " " $3 }
}
END {
	printf "costshapes summary: %d runs, %d over the bounds: %d over 5 s CPU (or stopped at %d s), %d over 256 MB; most CPU: %s %.2f s (%.2f s wall); largest: %s %.0f MB\n", n, o, slow, T, big, ms, mc, mw, mrs, mr / 1024
}' "$res"
read -r nruns nover < <(awk -F'\t' 'NR > 1 { n++; if ($5 > 5 || $6 > 262144 || $7 == 124 || $7 == 137) o++ } END { print n + 0, o + 0 }' "$res")
bench_target "#10" "cost shapes: runs over 5 s CPU or 256 MB (of $nruns)" "$nover" "<=" 0 runs >/dev/null
