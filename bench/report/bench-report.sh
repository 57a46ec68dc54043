#!/bin/bash
# Benchmark: `trace-cmd report` of a generated trace (1M events, 100k
# stacks) with our plugin vs. without, and the share of the plugin's first
# pass.  Prints times and ratios measured in this one run.
set -u
events=${UST_BENCH_EVENTS:-1000000} stacks=${UST_BENCH_STACKS:-100000}
work=$(mktemp -d /tmp/ustitch-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

t0=$(date +%s.%N)
# UST_BENCH_ARGS: more ust-mktrace --bench options, e.g. issue 18's
# "--ordinary 20000000 --ustitch-buffer" or "--distinct 1000000".
# shellcheck disable=SC2086
"$UST_MKTRACE" --bench "$events" "$stacks" trace.dat ${UST_BENCH_ARGS:-} || exit 1
t1=$(date +%s.%N)
echo "generated $events events, $stacks stacks: $(du -m trace.dat | cut -f1) MB in $(echo "$t1 - $t0" | bc) s"

run() {	# run LABEL ENV... : wall seconds of one report to /dev/null
	local s e
	s=$(date +%s.%N)
	HOME=$work env "${@:2}" trace-cmd report trace.dat >out.txt 2>err.txt
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}
plain=$(run plain -u TRACEEVENT_PLUGIN_DIR)
lines_plain=$(wc -l <out.txt)
ours=$(run ours TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" USTITCH_DEBUG=1)
lines_ours=$(wc -l <out.txt)
scan=$(sed -n 's/.*first pass over .* in \([0-9.]*\) s$/\1/p' err.txt)
rss=$( { /usr/bin/time -f %M env HOME=$work TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report trace.dat >/dev/null; } 2>&1 | tail -1)
rss_plain=$( { /usr/bin/time -f %M env -u TRACEEVENT_PLUGIN_DIR HOME=$work trace-cmd report -N trace.dat >/dev/null; } 2>&1 | tail -1)

printf 'trace-cmd report, no plugin:    %8.2f s  %9d lines\n' "$plain" "$lines_plain"
printf 'trace-cmd report, with ustitch: %8.2f s  %9d lines\n' "$ours" "$lines_ours"
printf 'ratio with/without plugin:      %8.3f\n' "$(echo "$ours / $plain" | bc -l)"
[ -n "$scan" ] && printf 'first pass:                     %8.3f s = %.1f %% of a plain report\n' \
	"$scan" "$(echo "100 * $scan / $plain" | bc -l)"
[[ $rss =~ ^[0-9]+$ && $rss_plain =~ ^[0-9]+$ ]] &&
	printf 'max RSS with plugin / -N:       %d / %d KiB = %.2f, %d KiB more\n' "$rss" "$rss_plain" \
		"$(echo "$rss / $rss_plain" | bc -l)" "$((rss - rss_plain))"
exit 0
