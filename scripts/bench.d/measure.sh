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
