#!/usr/bin/env bash
# pk canon against pk hash of the same file (issue 14's target: pk canon of the
# 103 MB table of small dicts and of a 4 MB+ cloudpickle state takes at most
# twice the time of pk hash, with peak memory within the hash's). Runs
# standalone or from scripts/bench.sh. One line per file:
#   canon dicts.pkl (98.1 MB): canon 5.9s cpu 6.1s 147 MB | hash 1.5s cpu 1.5s 16 MB | time 3.9x, cpu 4.1x (target <= 2x: NOT met), peak RSS 9.2x (target <= 1x: NOT met)
# then the slowest file by CPU ratio. Files: the code-carrying states of
# testdata/states/gen_states.py ($BENCH_DIR/states/a, made here when missing and
# a python3 with cloudpickle and dill is at hand), the tables of
# scripts/bench-gen.py (dicts.pkl, dicts.pkl.gz) and of scripts/bench.d/hash.sh
# (dicts_1m.pkl, rows_dict.pkl, dataset.pkl, objects.pkl), those that exist.
# CANON_FILES="a.pkl b.pkl" replaces the list.
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-$PWD/bin/pk}
BENCH_DIR=${BENCH_DIR:-testdata/bench}
RUNS=${BENCH_RUNS:-3}
[ -x "$PK" ] || go build -o "$PK" .
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.1f\", $1 / $2; else print \"inf\" }"; }

if [ -n "${CANON_FILES:-}" ]; then
	read -r -a files <<<"$CANON_FILES"
else
	S=$BENCH_DIR/states/a
	PY=${PYTHON:-python3}
	"$PY" -c 'import cloudpickle, dill' 2>/dev/null || PY=/usr/bin/python3
	if [ ! -s "$S/cloudpickle_state.pkl" ] && "$PY" -c 'import cloudpickle, dill' 2>/dev/null; then
		"$PY" testdata/states/gen_states.py "$S" "${STATE_SCALE:-3200}" >/dev/null
	fi
	files=()
	for f in "$S/cloudpickle_state.pkl" "$S/dill_state.pkl" "$BENCH_DIR/dicts.pkl" "$BENCH_DIR/dicts.pkl.gz" \
		"$BENCH_DIR/dicts_1m.pkl" "$BENCH_DIR/rows_dict.pkl" "$BENCH_DIR/dataset.pkl" "$BENCH_DIR/objects.pkl"; do
		[ -s "$f" ] && files+=("$f")
	done
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "canon: SKIP: no input (run scripts/bench.sh, or set CANON_FILES)"
	exit 0
fi
worst="" worst_r=0
for f in "${files[@]}"; do
	read -r ct cc cm < <(measure "$RUNS" "$PK" canon "$f")
	read -r ht hc hm < <(measure "$RUNS" "$PK" hash "$f")
	rt=$(ratio "$ct" "$ht") rc=$(ratio "$cc" "$hc") rm=$(ratio "$cm" "$hm")
	vt=$(awk "BEGIN{print ($rc <= 2) ? \"met\" : \"NOT met\"}")
	vm=$(awk "BEGIN{print ($rm <= 1) ? \"met\" : \"NOT met\"}")
	echo "canon $(basename "$f") ($(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$f") / 1048576}") MB): canon ${ct}s cpu ${cc}s $((cm / 1024)) MB | hash ${ht}s cpu ${hc}s $((hm / 1024)) MB | time ${rt}x, cpu ${rc}x (target <= 2x: $vt), peak RSS ${rm}x (target <= 1x: $vm)"
	if awk "BEGIN{exit !($rc > $worst_r)}"; then worst=$(basename "$f") worst_r=$rc; fi
	bench_target "#14" "canon: pk canon $(basename "$f"), time / pk hash" "$rt" "<=" 2 x >/dev/null
	bench_target "#14" "canon: pk canon $(basename "$f"), peak RSS / pk hash" "$rm" "<=" 1 x >/dev/null
done
echo "canon: slowest against pk hash: $worst, ${worst_r}x the CPU (target <= 2x)"
