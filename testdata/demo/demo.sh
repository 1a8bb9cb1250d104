#!/usr/bin/env bash
# `make demo`: pk on the bundled example pickles (made by make_demo.py with
# cloudpickle; no Python is needed to run this). Usage: demo.sh [PATH-TO-PK]
set -u
PK=${1:-bin/pk}
case $PK in /*) ;; *) PK=$PWD/$PK ;; esac
D=$(cd "$(dirname "$0")" && pwd)
A=$D/scaler_a.pkl
B=$D/scaler_b.pkl
M=$D/model.pkl

if [ ! -x "$PK" ]; then
	echo "demo: $PK not found: run make build first" >&2
	exit 2
fi

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi
show() { printf '$ %s\n' "$*"; }

# has CMD: whether this pk has the subcommand (other parts may be missing)
has() { "$PK" "$1" --help >/dev/null 2>&1; }

run() {
	local cmd=$1
	if ! has "$cmd"; then
		echo "(pk $cmd is not in this build yet: skipped)"
		return 0
	fi
	shift
	show "pk $cmd $*"
	"$PK" "$cmd" "$@"
	local rc=$?
	echo "(exit $rc)"
}

say "Two cloudpickle dumps of the same class, each made by its own process"
show "cmp scaler_a.pkl scaler_b.pkl"
(cd "$D" && cmp scaler_a.pkl scaler_b.pkl)
echo "The bytes differ ($(cmp -l "$A" "$B" | wc -l) bytes): cloudpickle writes a random class-tracker id each time."

say "What is inside: pk dis (first 25 opcodes), nothing is executed"
if has dis; then
	show "pk dis scaler_a.pkl | head -25"
	"$PK" dis "$A" | head -25
else
	echo "(pk dis is not in this build yet: skipped)"
fi

say "Same class? pk hash gives both files the same digest"
(cd "$D" && run hash scaler_a.pkl scaler_b.pkl)

say "pk diff says why they are the same (exit 0 = same)"
(cd "$D" && run diff scaler_a.pkl scaler_b.pkl)

say "Make them byte-identical: pk canon writes the canonical pickle (class ids from content)"
if has canon; then
	T=$(mktemp -d)
	show "pk canon scaler_a.pkl -o a.canon.pkl; pk canon scaler_b.pkl -o b.canon.pkl; cmp a.canon.pkl b.canon.pkl"
	"$PK" canon "$A" -o "$T/a.canon.pkl" && "$PK" canon "$B" -o "$T/b.canon.pkl" && cmp "$T/a.canon.pkl" "$T/b.canon.pkl" && echo "identical ($(wc -c <"$T/a.canon.pkl") bytes each), and the same pk hash as the originals:"
	(cd "$T" && "$PK" hash a.canon.pkl)
	rm -rf "$T"
else
	echo "(pk canon is not in this build yet: skipped)"
fi

say "What would loading run? pk scan: cloudpickle files carry code (verdict code), clean under its preset"
if has scan; then
	show "pk scan scaler_a.pkl | tail -1"
	(cd "$D" && "$PK" scan scaler_a.pkl | tail -1)
	(cd "$D" && run scan --allow cloudpickle scaler_a.pkl)
else
	echo "(pk scan is not in this build yet: skipped)"
fi

say "Where do the bytes go? pk trace --top 5 on a model with one fat attribute"
(cd "$D" && run trace --top 5 model.pkl)
exit 0
