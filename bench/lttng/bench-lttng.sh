#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# LTTng benchmarks, on a private lttng-sessiond (tests/lttng/lttng-env.sh):
#
# 1. Cost per UST event (ust-lttng-app bench: N events from one call site
#    at a given recursion depth; the thread's CPU time, best of 7 runs),
#    with the provider preloaded in every run:
#      (a) no context            (b) vpid, vtid, ip
#      (c) $app.ustitch:stack_id at depth 16 and 64
#      (d) $app.ustitch:locks (two mutexes held)
#    Overwrite-mode channels: the tracer writes every event, none is
#    discarded, so every configuration does the same work.
# 2. babeltrace2 text output of a 1M-event trace (ust-lttng-app mix:
#    ~150 stacks, varied lock sets; a blocking channel loses nothing):
#    sink.text.pretty vs sink.ustitch.text, which also prints ~28 stack
#    lines per event; and the same two sinks on a 1M-event trace without
#    our contexts (the printing itself, same output).
# Ratios are against (a) and against sink.text.pretty, from this run.
set -u
. "$UST_LTTNG_ENV"
N=${UST_BENCH_EVENTS:-300000}
TRACE_EVENTS=${UST_BENCH_TRACE_EVENTS:-1000000}
TIMEFORMAT=%R

cost() {	# NAME MODE DEPTH CONTEXT-ARGS...: prints best ns/event
	local name=$1 mode=$2 depth=$3 best= ns i
	shift 3
	lt create "$name" --snapshot --output="$UST_TMP/$name"
	lt enable-channel -u c --overwrite --subbuf-size=1M --num-subbuf=4
	lt enable-event -u -c c 'ustlt:work,ustitch:*'
	(($#)) && lt add-context -u -c c "$@"
	lt start
	for i in 1 2 3 4 5 6 7; do
		ns=$(run_app bench "$mode" "$depth" "$N") || fail "bench $name"
		[[ -z "$best" ]] || (($(echo "$ns < $best" | bc))) && best=$ns
	done
	lt stop
	lt destroy "$name"
	echo "$best"
}

a=$(cost none plain 16)
b=$(cost basic plain 16 -t vpid -t vtid -t ip)
c16=$(cost stack16 plain 16 -t '$app.ustitch:stack_id')
c64=$(cost stack64 plain 64 -t '$app.ustitch:stack_id')
d=$(cost locks lock 16 -t '$app.ustitch:locks')
r() { echo "scale=2; $1 / $a" | bc; }
echo "UST event cost, best of 7 x $N events (thread CPU ns/event, ratio to no context):"
printf '  (a) no context                       %8.1f  1.00\n' "$a"
printf '  (b) vpid,vtid,ip                     %8.1f  %s\n' "$b" "$(r "$b")"
printf '  (c) $app.ustitch:stack_id, 16 deep   %8.1f  %s\n' "$c16" "$(r "$c16")"
printf '  (c) $app.ustitch:stack_id, 64 deep   %8.1f  %s\n' "$c64" "$(r "$c64")"
printf '  (d) $app.ustitch:locks, 2 held       %8.1f  %s\n' "$d" "$(r "$d")"

trace() {	# NAME CONTEXT-ARGS...: a TRACE_EVENTS-event mix trace
	local name=$1
	shift
	session "$name"
	lt enable-channel -u c --blocking-timeout=inf --subbuf-size=4M --num-subbuf=4
	lt enable-event -u -c c 'ustlt:work,ustitch:*'
	(($#)) && lt add-context -u -c c "$@"
	lt start
	LTTNG_UST_ALLOW_BLOCKING=1 run_app mix "$TRACE_EVENTS" || fail "mix"
	lt stop
	lt destroy "$name"
	bt2 "$UST_TMP/$name" >/dev/null	# warm the page cache
}

rate() {	# NAME: times both sinks on trace NAME
	local name=$1 tp tu ev lp lu
	tp=$( { time bt2 "$UST_TMP/$name" >"$UST_TMP/pretty.txt"; } 2>&1 ) || fail "babeltrace2"
	tu=$( { time bt2 "$UST_TMP/$name" -c sink.ustitch.text >"$UST_TMP/ustitch.txt"; } 2>&1 ) ||
		fail "babeltrace2 -c sink.ustitch.text"
	ev=$(grep -c ' ustlt:work: ' "$UST_TMP/pretty.txt")
	lp=$(wc -l <"$UST_TMP/pretty.txt")
	lu=$(wc -l <"$UST_TMP/ustitch.txt")
	echo "  $ev events; sink.text.pretty $lp lines, sink.ustitch.text $lu lines:"
	printf '    sink.text.pretty    %6.2f s  %8.0f events/s\n' "$tp" "$(echo "$ev / $tp" | bc -l)"
	printf '    sink.ustitch.text   %6.2f s  %8.0f events/s  ratio %s\n' "$tu" \
		"$(echo "$ev / $tu" | bc -l)" "$(echo "scale=2; $tu / $tp" | bc)"
	rm -rf "$UST_TMP/$name" "$UST_TMP/pretty.txt" "$UST_TMP/ustitch.txt"
}

echo "babeltrace2 text output:"
trace stacks -t vpid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks'
echo " with vpid + \$app.ustitch:stack_id, :lock_depth, :locks (~150 stacks, symbolized):"
rate stacks
trace plain -t vpid -t vtid
echo " with vpid, vtid only (our sink prints what pretty prints):"
rate plain
