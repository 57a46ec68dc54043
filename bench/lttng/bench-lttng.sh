#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# LTTng benchmarks, on a private lttng-sessiond (tests/lttng/lttng-env.sh):
#
# 1. Cost per UST event (ust-lttng-app bench: N events from one call site
#    at a given recursion depth; the thread's CPU time, best of 7 runs),
#    with the provider preloaded in every run:
#      (a) no context            (b) vpid, vtid, ip
#      (c) $app.ustitch:stack_id at depth 16 and 64 by frame pointers
#          (USTITCH_LTTNG_UNWIND=fp, the walk before CFI)
#      (e) the same by CFI tables (the default)
#      (f) ust-lttng-cfi-app, built -O2 -fomit-frame-pointer: no context
#          and stack_id by CFI at depth 16
#      (d) $app.ustitch:locks (two mutexes held)
#    Overwrite-mode channels: the tracer writes every event, none is
#    discarded, so every configuration does the same work.
# 2. babeltrace2 text output of a 1M-event trace (ust-lttng-app mix:
#    ~150 stacks, varied lock sets; a blocking channel loses nothing):
#    sink.text.pretty vs sink.ustitch.text, which also prints ~28 stack
#    lines per event; and the same two sinks on a 1M-event trace without
#    our contexts (the printing itself, same output).
# 3. The one-time cost of each object's unwind table (build time, rows).
# Ratios are against (a) and against sink.text.pretty, from this run.
set -u
. "$UST_LTTNG_ENV"
N=${UST_BENCH_EVENTS:-300000}
TRACE_EVENTS=${UST_BENCH_TRACE_EVENTS:-1000000}
TIMEFORMAT=%R

cost() {	# NAME MODE DEPTH CONTEXT-ARGS...: prints best ns/event
	# (env UNWIND: USTITCH_LTTNG_UNWIND for the provider; APP=cfi: the
	# -O2 -fomit-frame-pointer ust-lttng-cfi-app instead of ust-lttng-app)
	local name=$1 mode=$2 depth=$3 best= ns i
	shift 3
	lt create "$name" --snapshot --output="$UST_TMP/$name"
	lt enable-channel -u c --overwrite --subbuf-size=1M --num-subbuf=4
	lt enable-event -u -c c 'ustlt:work,ustitch:*'
	(($#)) && lt add-context -u -c c "$@"
	lt start
	for i in 1 2 3 4 5 6 7; do
		if [[ ${APP:-} == cfi ]]; then
			ns=$(USTITCH_LTTNG_UNWIND=${UNWIND:-} run_cfi bench "$depth" "$N") || fail "bench $name"
		else
			ns=$(USTITCH_LTTNG_UNWIND=${UNWIND:-} run_app bench "$mode" "$depth" "$N") ||
				fail "bench $name"
		fi
		[[ -z "$best" ]] || (($(echo "$ns < $best" | bc))) && best=$ns
	done
	lt stop
	lt destroy "$name"
	echo "$best"
}

run_cfi() {	# the CFI application with the provider preloaded
	local preload=$UST_LTTNG_PROVIDER
	[[ -n "$UST_SAN_PRELOAD" ]] && preload=$UST_SAN_PRELOAD:$preload
	LD_PRELOAD=$preload timeout 120 "$UST_LTTNG_CFI_APP" "$@"
}

a=$(cost none plain 16)
b=$(cost basic plain 16 -t vpid -t vtid -t ip)
c16=$(UNWIND=fp cost stack16 plain 16 -t '$app.ustitch:stack_id')
c64=$(UNWIND=fp cost stack64 plain 64 -t '$app.ustitch:stack_id')
e16=$(cost cfi16fp plain 16 -t '$app.ustitch:stack_id')
e64=$(cost cfi64fp plain 64 -t '$app.ustitch:stack_id')
f16=$(APP=cfi cost cfi16 plain 16 -t '$app.ustitch:stack_id')
f0=$(APP=cfi cost cfi0 plain 16)
d=$(cost locks lock 16 -t '$app.ustitch:locks')
r() { echo "scale=2; $1 / $a" | bc; }
echo "UST event cost, best of 7 x $N events (thread CPU ns/event, ratio to no context):"
printf '  (a) no context                                   %8.1f  1.00\n' "$a"
printf '  (b) vpid,vtid,ip                                 %8.1f  %s\n' "$b" "$(r "$b")"
printf '  (c) stack_id by frame pointers, 16 deep          %8.1f  %s\n' "$c16" "$(r "$c16")"
printf '  (c) stack_id by frame pointers, 64 deep          %8.1f  %s\n' "$c64" "$(r "$c64")"
printf '  (e) stack_id by CFI, same program, 16 deep       %8.1f  %s\n' "$e16" "$(r "$e16")"
printf '  (e) stack_id by CFI, same program, 64 deep       %8.1f  %s\n' "$e64" "$(r "$e64")"
printf '  (f) -O2 -fomit-frame-pointer program: no context %8.1f\n' "$f0"
printf '  (f) ... stack_id by CFI, 16 deep                 %8.1f  +%.1f over its no-context\n' \
	"$f16" "$(echo "$f16 - $f0" | bc)"
printf '  (d) $app.ustitch:locks, 2 held                   %8.1f  %s\n' "$d" "$(r "$d")"

# One-time cost: each object's unwind table, built on first use by the
# provider's builder thread (USTITCH_LTTNG_STATS=1 prints them at exit).
echo "unwind tables built by the provider for ust-lttng-cfi-app (one-time, per object):"
session tables
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u -t '$app.ustitch:stack_id'
lt start
USTITCH_LTTNG_STATS=1 run_cfi all "$UST_LTTNG_CFI_DL" 2>&1 >/dev/null | grep '^ustitch-lttng: table' |
	sed -e 's/^ustitch-lttng: table /  /' || fail "tables"
lt stop
lt destroy tables

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
