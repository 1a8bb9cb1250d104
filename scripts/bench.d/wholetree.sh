#!/usr/bin/env bash
# Whole-file output (issue 10's third target): the whole tree of pk trace
# (--lines 0, as text and as JSON), its --svg and --html pictures, and pk diff of two tables of
# different lengths, against pickle.load of the same file. Targets: at most
# 2x pickle.load's time, peak RSS at most the file's size + 64 MB. Runs
# standalone or from scripts/bench.sh.
#
# The table is the issue's: 600,000 small dicts, each with a nested two-item
# list (about 27 MB, protocol 4), and its first 200,000 rows as the shorter
# file; made once by the Python below in $BENCH_DIR/wholetree (deterministic).
# One line a command:
#   wholetree trace --lines 0: pk 2.33 s cpu 2.30 s 939 MB | pickle.load 1.40 s | ratio 1.66x of pickle.load (target <= 2x); rss 939 MB (limit 91 MB)
# Then the same four whole-file outputs (the tree, its JSON, --svg, --html) for each of the seven
# table shapes of tables.sh (which runs first in scripts/bench.sh), and
# the slowest and the largest of each command as the targets' lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-bin/pk}
PY=${PYTHON:-python3}
RUNS=${BENCH_RUNS:-3}
DIR=${BENCH_DIR:-testdata/bench}/wholetree
[ -x "$PK" ] || { mkdir -p "$(dirname "$PK")"; go build -o "$PK" .; }
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi
T=$DIR/table.pkl S=$DIR/table_200k.pkl
if [ ! -s "$T" ] || [ ! -s "$S" ]; then
	mkdir -p "$DIR"
	"$PY" - "$T" "$S" <<'PY'
import pickle, sys
rows = [{"id": i, "name": "row%06d" % i, "score": i * 0.25, "pair": [i % 7, "t%d" % (i % 13)]} for i in range(600_000)]
with open(sys.argv[1], "wb") as f:
    pickle.dump(rows, f, protocol=4)
with open(sys.argv[2], "wb") as f:
    pickle.dump(rows[:200_000], f, protocol=4)
PY
fi
size=$(stat -c %s "$T")
limit_kb=$(( size / 1024 + 64 * 1024 ))
read -r lt lc lm < <(measure "$RUNS" "$PY" -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$T")
echo "== wholetree: $T ($(( size / 1048576 )) MB; RSS limit $(( limit_kb / 1024 )) MB); pickle.load ${lt}s (cpu ${lc}s, $(( lm / 1024 )) MB)"
over=0
run() {
	local name=$1
	shift
	read -r t c m < <(measure "$RUNS" "$@")
	local ratio
	ratio=$(awk -v a="$t" -v b="$lt" 'BEGIN{ if (b > 0) printf "%.2f", a / b; else print "inf" }')
	echo "wholetree $name: pk ${t}s (cpu ${c}s, peak $(( m / 1024 )) MB) | ratio ${ratio}x of pickle.load (target <= 2x); rss limit $(( limit_kb / 1024 )) MB"
	if awk -v r="$ratio" 'BEGIN{ exit !(r > 2) }' || [ "$m" -gt "$limit_kb" ]; then over=$((over + 1)); fi
	bench_target "#10" "whole-file output: $name, time / pickle.load" "$ratio" "<=" 2 x >/dev/null
	bench_target "#10" "whole-file output: $name, peak RSS" "$(( m / 1024 ))" "<=" "$(( limit_kb / 1024 ))" "MB (file+64)" >/dev/null
}
run "trace --lines 0" "$PK" trace --lines 0 --color=never "$T"
run "trace --lines 0 --json" "$PK" trace --lines 0 --json "$T"
run "trace --svg" "$PK" trace --svg /dev/null "$T"
run "trace --html" "$PK" trace --html /dev/null "$T"
run "diff (200,000 rows against 600,000)" "$PK" diff --color=never "$S" "$T"
"$PK" diff --color=never "$S" "$T" | head -3 || true
echo "wholetree: $over of 5 runs over a target (time <= 2x pickle.load, RSS <= file + 64 MB)"

# The same targets hold for every shape of table, not only the issue's:
# the whole tree (text and JSON) and the pictures of the seven shapes of tables.sh (made by
# it in $TABLES_DIR; skipped when they are not there), each against
# pickle.load of that file, and the slowest and largest of them.
TDIR=${TABLES_DIR:-${BENCH_DIR:-testdata/bench}/tables}
if ! ls "$TDIR"/*.pkl >/dev/null 2>&1; then
	echo "wholetree tables: no tables in $TDIR (scripts/bench.d/tables.sh makes them)"
	exit 0
fi
LOAD="$(cat scripts/bench.d/tables_mod.py)
import pickle
pickle.load(open(sys.argv[1], \"rb\"))"
tover=0 truns=0
declare -A worst_r worst_m
for f in "$TDIR"/*.pkl; do
	s=$(basename "$f" .pkl)
	size=$(stat -c %s "$f")
	lim=$(( size / 1024 + 64 * 1024 ))
	read -r lt _ _ < <(measure "$RUNS" "$PY" -c "$LOAD" "$f")
	for c in "trace --lines 0" "trace --lines 0 --json" "trace --svg" "trace --html"; do
		case $c in
		"trace --lines 0") set -- "$PK" trace --lines 0 --color=never "$f" ;;
		"trace --lines 0 --json") set -- "$PK" trace --lines 0 --json "$f" ;;
		"trace --svg") set -- "$PK" trace --svg /dev/null "$f" ;;
		"trace --html") set -- "$PK" trace --html /dev/null "$f" ;;
		esac
		read -r t cpu m < <(measure "$RUNS" "$@")
		r=$(awk -v a="$t" -v b="$lt" 'BEGIN{ if (b > 0) printf "%.2f", a / b; else print "inf" }')
		echo "wholetree tables $s ($(( size / 1048576 )) MB) $c: pk ${t}s (cpu ${cpu}s, peak $(( m / 1024 )) MB) | pickle.load ${lt}s | ratio ${r}x (target <= 2x); rss limit $(( lim / 1024 )) MB"
		truns=$((truns + 1))
		if awk -v r="$r" 'BEGIN{ exit !(r > 2) }' || [ "$m" -gt "$lim" ]; then tover=$((tover + 1)); fi
		if [ -z "${worst_r[$c]:-}" ] || awk -v a="$r" -v b="${worst_r[$c]%% *}" 'BEGIN{ exit !(a > b) }'; then worst_r[$c]="$r $s"; fi
		over_mb=$(( (m - lim) / 1024 ))
		if [ -z "${worst_m[$c]:-}" ] || [ "$over_mb" -gt "${worst_m[$c]%% *}" ]; then worst_m[$c]="$over_mb $s $(( m / 1024 )) $(( lim / 1024 ))"; fi
	done
done
for c in "trace --lines 0" "trace --lines 0 --json" "trace --svg" "trace --html"; do
	read -r r s <<<"${worst_r[$c]}"
	read -r _ ms m lim <<<"${worst_m[$c]}"
	echo "wholetree tables $c: slowest ${r}x of pickle.load ($s); largest against its limit ${m} MB ($ms, limit ${lim} MB)"
	bench_target "#10" "whole-file output, tables: $c, slowest time / pickle.load ($s)" "$r" "<=" 2 x >/dev/null
	bench_target "#10" "whole-file output, tables: $c, peak RSS over file+64 ($ms)" "$(( m - lim ))" "<=" 0 "MB" >/dev/null
done
echo "wholetree tables: $tover of $truns runs over a target (time <= 2x pickle.load, RSS <= file + 64 MB)"
