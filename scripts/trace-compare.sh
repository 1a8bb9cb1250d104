#!/usr/bin/env bash
# trace-compare.sh OLD NEW [DIR|FILE]... — run two pk binaries' `pk trace` over
# every file given (directories recursively; default: testdata) in the modes
# the store engine serves (the default view, --lines, --top, --top --json,
# --bytes, --ascii, the whole tree) and report every file whose stdout, stderr
# or exit code differ. Exit 1 when any differ. FLAGS (env) replaces the list
# of flag sets, one set per line. JOBS (env, default 2) runs files in parallel.
set -u
old=$1 new=$2
shift 2
[ $# -eq 0 ] && set -- testdata
FLAGS=${FLAGS:-"--color=never
--color=never --lines 5
--color=never --lines 2 --bytes
--color=never --ascii
--top 1
--top 3
--top 20
--top 20 --json
--top 7 --bytes
--top 5 --leaves
--color=never --lines 0"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export old new tmp FLAGS
one() {
	f=$1
	while IFS= read -r fl; do
		[ -z "$fl" ] && continue
		# shellcheck disable=SC2086
		"$old" trace $fl "$f" >"$tmp/$$.o1" 2>"$tmp/$$.e1"; r1=$?
		# shellcheck disable=SC2086
		"$new" trace $fl "$f" >"$tmp/$$.o2" 2>"$tmp/$$.e2"; r2=$?
		if [ $r1 != $r2 ] || ! cmp -s "$tmp/$$.o1" "$tmp/$$.o2" || ! cmp -s "$tmp/$$.e1" "$tmp/$$.e2"; then
			echo "DIFF: pk trace $fl $f (exit $r1 / $r2)"
		fi
		echo run >>"$tmp/$$.count"
	done <<<"$FLAGS"
}
export -f one
find "$@" -type f | sort | xargs -P "${JOBS:-2}" -I{} bash -c 'one "$1"' _ {} >"$tmp/diffs"
runs=$(cat "$tmp"/*.count 2>/dev/null | wc -l)
diffs=$(wc -l <"$tmp/diffs")
cat "$tmp/diffs"
echo "trace-compare: $runs runs, $diffs differ"
[ "$diffs" -eq 0 ]
