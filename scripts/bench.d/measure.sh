# bench_measure RUNS CMD...: runs CMD RUNS times under /usr/bin/time and
# prints "<best wall s> <user+sys s of that run> <peak RSS KB over the runs>".
# Sourced by the scripts of scripts/bench.d when they run standalone, and
# by scripts/bench.sh, whose measure adds hyperfine's best wall time.
bench_measure() {
	local runs=$1 tf w u s m best="" cpu="" rss=0 i
	shift
	tf=$(mktemp)
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -o "$tf" -f '%e %U %S %M' "$@" >/dev/null 2>/dev/null || true
		# GNU time writes "Command exited with non-zero status N" first when
		# the command fails (pk diff exits 1 on a difference): the figures
		# are the last line
		read -r w u s m < <(tail -n 1 "$tf")
		if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then
			best=$w
			cpu=$(awk "BEGIN{printf \"%.2f\", $u + $s}")
		fi
		if [ "$m" -gt "$rss" ]; then rss=$m; fi
	done
	rm -f "$tf"
	echo "$best $cpu $rss"
}

# bench_target ISSUE NAME VALUE OP LIMIT UNIT: one target of the issues,
# checked: prints "met" or "NOT met" (VALUE OP LIMIT, OP one of >= <= <;
# a VALUE of "inf" is larger than any limit) and, when BENCH_TARGETS names
# a file (scripts/bench.sh sets it), appends a tab-separated line
#   ISSUE NAME VALUE OP LIMIT UNIT VERDICT
# that bench.sh prints as the table of targets at its end.
bench_target() {
	local issue=$1 name=$2 value=$3 op=$4 limit=$5 unit=${6:-} v
	v=$(awk -v a="$value" -v b="$limit" -v op="$op" 'BEGIN{
		if (a == "inf") ok = (op == ">=")
		else if (op == ">=") ok = (a + 0 >= b + 0)
		else if (op == "<=") ok = (a + 0 <= b + 0)
		else ok = (a + 0 < b + 0)
		print ok ? "met" : "NOT met" }')
	if [ -n "${BENCH_TARGETS:-}" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$issue" "$name" "$value" "$op" "$limit" "$unit" "$v" >>"$BENCH_TARGETS"
	fi
	echo "$v"
}
