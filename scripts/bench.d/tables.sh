#!/usr/bin/env bash
# Plain tables (issue 10's table target): pk hash >= 5x faster than
# pickle.load on each shape, peak RSS below the file's size; the slowest shape
# is the one that counts. Runs standalone or from scripts/bench.sh.
#
# Seven shapes of 20-60 MB each, made once by the Python below (stdlib
# pickle.dump, protocols 4 and 5, deterministic: no randomness, no hash
# order; files that exist are kept) in $TABLES_DIR (default $BENCH_DIR/tables):
#   dicts_lists     rows of small dicts holding nested lists          (proto 4)
#   dicts_tuples    rows of small dicts holding tuples                (proto 5)
#   floats          a list of distinct floats                         (proto 4)
#   strings_memo    rows of dicts whose str values are memo-shared    (proto 5)
#   objects         class instances, NEWOBJ + BUILD of a dict state   (proto 4)
#   namespaces      types.SimpleNamespace, REDUCE + BUILD             (proto 5)
#   tuples          a list of tuples (int, str, float)                (proto 4)
# The instances' class lives in a module "pktables" that both the generator
# and the pickle.load reference make (types.ModuleType in sys.modules), so
# pickle.load really loads every file. For each shape one line:
#   tables dicts_lists (41.0 MB): pk 0.52 s cpu 0.51 s 9 MB | pickle.load 3.10 s cpu 3.05 s 590 MB | ratio 6.0x (cpu 6.0x) rss/file 0.22
# then the slowest ratio against the 5x target. BENCH_QUICK=1 skips
# pickle.load; TABLES_ONLY=a,b runs only those shapes.
set -euo pipefail
cd "$(dirname "$0")/../.."
PK=${PK:-bin/pk}
PY=${PYTHON:-python3}
RUNS=${BENCH_RUNS:-3}
BENCH_QUICK=${BENCH_QUICK:-0}
DIR=${TABLES_DIR:-${BENCH_DIR:-testdata/bench}/tables}
[ -x "$PK" ] || { mkdir -p "$(dirname "$PK")"; go build -o "$PK" .; }
if ! declare -F measure >/dev/null; then
	# standalone: scripts/bench.d/measure.sh
	source scripts/bench.d/measure.sh
	measure() { bench_measure "$@"; }
fi

# The module of the instances' class, as the generator and the loader make it.
MOD=$(cat scripts/bench.d/tables_mod.py)

shapes=(dicts_lists dicts_tuples floats strings_memo objects namespaces tuples)
missing=0
for s in "${shapes[@]}"; do [ -s "$DIR/$s.pkl" ] || missing=1; done
if [ "$missing" = 1 ]; then
	mkdir -p "$DIR"
	echo "tables: making the shapes in $DIR" >&2
	"$PY" - "$DIR" "$MOD" <<'PY'
import os, pickle, sys, types
out, mod_src = sys.argv[1], sys.argv[2]
exec(mod_src)
Row = sys.modules["pktables"].Row

def dicts_lists(n=400_000):
    return [{"id": i, "name": "user%07d" % i, "score": i * 0.5,
             "tags": ["t%d" % (i % 7), "u%d" % (i % 13)], "vals": [i, i + 1, [i % 5, "x"]]}
            for i in range(n)], 4

def dicts_tuples(n=500_000):
    return [{"id": i, "pos": (i, i * 0.25), "pair": ("a%d" % (i % 10), i % 3 == 0),
             "name": "row%07d" % i} for i in range(n)], 5

def floats(n=4_000_000):
    return [i * 1.0000001 + 0.5 for i in range(n)], 4

def strings_memo(n=1_000_000):
    # 5,000 names and 50 cities, each pickled once and then read back by
    # BINGET; the keys are memo-shared too
    names = ["name-%05d" % k for k in range(5000)]
    cities = ["city-%02d" % k for k in range(50)]
    return [{"id": i, "name": names[i % 5000], "city": cities[i % 50], "code": cities[(i * 7) % 50]}
            for i in range(n)], 5

def objects(n=400_000):
    rows = []
    for i in range(n):
        r = Row()
        r.id, r.name, r.score, r.tags = i, "obj%07d" % i, i * 0.5, ["a", "b"]
        rows.append(r)
    return rows, 4

def namespaces(n=440_000):
    return [types.SimpleNamespace(id=i, name="ns%07d" % i, v=[i, i * 0.5]) for i in range(n)], 5

def tuples(n=1_000_000):
    return [(i, "s%07d" % i, i * 0.5) for i in range(n)], 4

for fn in (dicts_lists, dicts_tuples, floats, strings_memo, objects, namespaces, tuples):
    path = os.path.join(out, fn.__name__ + ".pkl")
    if os.path.exists(path) and os.path.getsize(path) > 0:
        continue
    obj, proto = fn()
    with open(path + ".tmp", "wb") as f:
        pickle.dump(obj, f, protocol=proto)
    os.replace(path + ".tmp", path)
    del obj
PY
fi

LOAD="$MOD
import pickle
pickle.load(open(sys.argv[1], \"rb\"))"
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.1f\", $1 / $2; else print \"inf\" }"; }
mb() { awk "BEGIN{printf \"%.0f\", $1 / 1024}"; }
# which Python loads matters: pickle.load of these tables ranges over 3x
# between interpreters and builds, so the line names it
echo "== tables ($DIR; pk hash against pickle.load ($("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')), best of $RUNS; load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs)"
worst="" worst_r="" over=0
for s in "${shapes[@]}"; do
	if [ -n "${TABLES_ONLY:-}" ] && [[ ",$TABLES_ONLY," != *",$s,"* ]]; then continue; fi
	f=$DIR/$s.pkl
	size_kb=$(($(stat -c %s "$f") / 1024))
	read -r ht hc hm < <(measure "$RUNS" "$PK" hash "$f")
	[ "$hm" -lt "$size_kb" ] || over=$((over + 1))
	if [ "$BENCH_QUICK" = 1 ]; then
		printf 'tables %-13s (%5.1f MB): pk %5s s cpu %5s s %4s MB | pickle.load skipped (BENCH_QUICK=1) | rss/file %s\n' \
			"$s" "$(awk "BEGIN{print $size_kb / 1024}")" "$ht" "$hc" "$(mb "$hm")" "$(awk "BEGIN{printf \"%.2f\", $hm / $size_kb}")"
		continue
	fi
	read -r lt lc lm < <(measure "$RUNS" "$PY" -c "$LOAD" "$f")
	r=$(ratio "$lt" "$ht")
	bench_target "#10" "tables: pk hash $s, speed-up on pickle.load" "$r" ">=" 5 x >/dev/null
	bench_target "#10" "tables: pk hash $s, peak RSS / file" "$(awk "BEGIN{printf \"%.2f\", $hm / $size_kb}")" "<" 1 x >/dev/null
	printf 'tables %-13s (%5.1f MB): pk %5s s cpu %5s s %4s MB | pickle.load %5s s cpu %5s s %4s MB | ratio %sx (cpu %sx) rss/file %s\n' \
		"$s" "$(awk "BEGIN{print $size_kb / 1024}")" "$ht" "$hc" "$(mb "$hm")" "$lt" "$lc" "$(mb "$lm")" \
		"$r" "$(ratio "$lc" "$hc")" "$(awk "BEGIN{printf \"%.2f\", $hm / $size_kb}")"
	if [ -z "$worst" ] || awk "BEGIN{exit !($r < $worst_r)}"; then worst=$s worst_r=$r; fi
done
if [ -n "$worst" ]; then
	met=no
	awk "BEGIN{exit !($worst_r >= 5)}" && met=yes
	echo "tables: slowest ratio ${worst_r}x ($worst); target >= 5x: $met; $over shapes with pk's peak RSS not below the file"
else
	echo "tables: $over shapes with pk's peak RSS not below the file"
fi
