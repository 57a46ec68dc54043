#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# LTTng through a relay daemon: a private lttng-sessiond and lttng-relayd
# (relayd-env.sh: own network namespace when root, ports chosen free),
# the trace streamed over TCP on 127.0.0.1 and read on the receiving side.
#
#   streamed  `lttng create --set-url=net://...`: the relay daemon's
#             trace (HOST/SESSION-DATE/) read by sink.ustitch.text has
#             exactly the frames and locks of the local flow
#             (expected/basic.txt); each object is described by its path
#             and the build-id the file has
#   urls      `lttng create -C tcp://... -D tcp://...`, with the filter
#             on $app.ustitch:lock_depth: exactly the events under a lock;
#             LTTng's statedump events print as sink.text.pretty's
#   live      `babeltrace2 --input-format=lttng-live` with our sink,
#             attached before the application runs: while the session
#             still records, it has printed every event with exactly the
#             frames and locks of expected/basic.txt; it ends by itself
#             when the session is destroyed
#   attach    a live reader attached after a stack was recorded: the
#             event that uses that stack again says its stack is not in
#             the trace (while the session records: trace time goes on
#             through the source's inactivity messages), and the summary
#             says why a live reader lacks it
#
# babeltrace2 2.0.4's live source sometimes aborts on its own assertion
# (docs/lttng.md): a live or attach attempt where it did is said
# ("note: ...") and made again with a new session, 3 times at most.
set -u
. "$(dirname "$0")/relayd-env.sh"
EXPECTED=$(dirname "$0")/expected
CTX=(-t vpid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks')
MISSING_RE='^\[ustitch: stack 0x[0-9a-f]+ is not in this trace: its ustitch:stack event was lost, disabled, or recorded before the trace began\]$'
LIVE_NOTE="ustitch: a live reader sees only what is recorded after it attaches: stacks recorded before are not in its view; start it before the application, or read the relay daemon's trace directory"


# From the basic chains' first event on (the live reader's output starts
# with the tag 99 markers and their stack).
from_basic() {
	awk '/^ustlt:work: .*\{ tag = 1, n = 0 \}$/ { on = 1 } on'
}

# wait_grep FILE ERE SECONDS: until a line of FILE matches.
wait_grep() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# live_reader SESSION OUT: babeltrace2 following SESSION live through the
# relay daemon, with our sink, in the background (pid in $reader).
# babeltrace2 2.0.4's live source reads metadata memory it did not
# initialize: with ASan's malloc fill it always fails an assertion
# (update_field_class_stored_value_index(): tgt_fc), so in a sanitized
# build fresh memory is left unfilled for it.
live_reader() {
	ASAN_OPTIONS=$ASAN_OPTIONS:max_malloc_fill_size=0 \
	LD_PRELOAD=$UST_SAN_PRELOAD timeout 120 babeltrace2 --plugin-path="$UST_BT2_PLUGIN_DIR" \
		--input-format=lttng-live "net://127.0.0.1:$RELAYD_LIVE/host/$RELAYD_HOST/$1" \
		-c sink.ustitch.text >"$2" 2>"$2.err" &
	reader=$!
	UST_CHILDREN+=("$reader")
}

# end_live WHAT OUT: the application ($app) told to end, the session
# stopped and destroyed, and the reader ($reader, writing OUT) waited for:
# it must end by itself within 30 s of the session's end, and well.
end_live() {
	local i
	touch "$cur_go.end"
	wait $app || fail "$1: ust-lttng-app exited with $?"
	lt stop "$cur_session"
	lt destroy "$cur_session"
	for ((i = 0; i < 300; i++)); do
		kill -0 $reader 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $reader 2>/dev/null && fail "$1: the reader still runs 30 s after the session was destroyed"
	wait $reader || fail "$1: babeltrace2 exited with $?: $(cat "$2.err")"
	forget_child $reader
}

relayd_start
NET=(--set-url="net://127.0.0.1:$RELAYD_CTRL:$RELAYD_DATA")

# --- streamed ------------------------------------------------------------
lt create streamed "${NET[@]}"
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u "${CTX[@]}"
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy streamed
trace=$(relayd_trace streamed)
[[ -s "$trace/ust/uid/$(id -u)/64-bit/metadata" ]] || fail "streamed: no metadata under $trace"
bt2 "$trace" -c sink.ustitch.text >"$UST_TMP/streamed.out" 2>"$UST_TMP/streamed.err" ||
	fail "babeltrace2: $(cat "$UST_TMP/streamed.err")"
normalize <"$UST_TMP/streamed.out" >"$UST_TMP/streamed.norm"
diff -u "$EXPECTED/basic.txt" "$UST_TMP/streamed.norm" ||
	fail "streamed: output differs from expected/basic.txt (above)"
[[ ! -s "$UST_TMP/streamed.err" ]] || fail "streamed: babeltrace2 said: $(cat "$UST_TMP/streamed.err")"
echo "ok: streamed: exact frames and locks from the relay daemon's trace"
bid=$(readelf -n "$UST_LTTNG_APP" | awk '/Build ID:/ { print $3 }')
obj="path = \"$UST_LTTNG_APP\", build_id = $bid }"
n=$(grep ' ustitch:object: ' "$UST_TMP/streamed.out" | grep -cF "$obj")
[[ -n "$bid" && $n == 1 ]] || fail "streamed: the application described $n times with build-id '$bid'"
echo "ok: streamed: the application described once, with its build-id"

# --- urls ----------------------------------------------------------------
lt create urls -C "tcp://127.0.0.1:$RELAYD_CTRL" -D "tcp://127.0.0.1:$RELAYD_DATA"
lt enable-event -u 'ustlt:work' --filter '$app.ustitch:lock_depth > 0'
lt enable-event -u 'lttng_ust_statedump:*'
lt add-context -u -t vpid
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy urls
trace=$(relayd_trace urls)
bt2 "$trace" -c sink.ustitch.text >"$UST_TMP/urls.out" 2>&1
tags=$(grep -oE 'tag = [0-9]+' "$UST_TMP/urls.out" | tr '\n' ' ')
[[ "$tags" == "tag = 2 tag = 3 tag = 4 tag = 8 tag = 9 " ]] ||
	fail "urls: filter kept: '$tags', expected tags 2 3 4 8 9"
echo "ok: urls: -C/-D, filter"
# LTTng's statedump (the application's own objects, their build-ids)
# prints exactly as sink.text.pretty prints it.
bt2 "$trace" >"$UST_TMP/urls.pretty" 2>&1
grep -F "path = \"$UST_LTTNG_APP\"" "$UST_TMP/urls.out" | grep -q ' lttng_ust_statedump:bin_info: ' ||
	fail "urls: no lttng_ust_statedump:bin_info for the application"
cmp -s <(grep ' lttng_ust_statedump:' "$UST_TMP/urls.out") <(grep ' lttng_ust_statedump:' "$UST_TMP/urls.pretty") ||
	fail "urls: statedump events differ from sink.text.pretty's"
echo "ok: urls: $(grep -c ' lttng_ust_statedump:' "$UST_TMP/urls.out") statedump events as sink.text.pretty prints them"

# babeltrace2 2.0.4's live source (Debian 12) sometimes aborts on this
# assertion, whichever the sink (docs/lttng.md); an attempt where it did
# is abandoned and made again with a new session, at most 3 times.
BT2_BUG="update_field_class_stored_value_index(): Assertion"
broke() {	# ERRFILE...: a reader hit it
	local f
	for f in "$@"; do
		grep -qF "$BT2_BUG" "$f" 2>/dev/null && return 0
	done
	return 1
}

# The abandoned attempt's application, session and readers go.
abandon() {
	local pid
	touch "$cur_go" "$cur_go.end"
	wait $app 2>/dev/null
	lttng stop "$cur_session" >/dev/null 2>&1
	lttng destroy "$cur_session" >/dev/null 2>&1
	for pid in "${UST_CHILDREN[@]}"; do
		[[ $pid == "$RELAYD_PID" ]] && continue
		stop_pid "$pid"
		wait "$pid" 2>/dev/null
		forget_child "$pid"
	done
}

# attempt NAME: up to 3 runs of NAME_try TRY until one is not abandoned.
attempt() {
	local try rc
	for try in 1 2 3; do
		cur_session=$1$try
		cur_go=$UST_TMP/go-$1$try
		"$1_try" "$try"
		rc=$?
		[[ $rc == 0 ]] && return 0
		abandon
		echo "note: $1: attempt $try abandoned: babeltrace2 aborted ($BT2_BUG 'tgt_fc' failed)"
	done
	fail "$1: babeltrace2's live source aborted in 3 attempts"
}

# --- live ----------------------------------------------------------------
live_try() {
	local out=$UST_TMP/live$1.out i m
	lt create "$cur_session" --live=100000 "${NET[@]}"
	lt enable-event -u -s "$cur_session" 'ustlt:*,ustitch:*'
	lt add-context -u -s "$cur_session" "${CTX[@]}"
	lt start "$cur_session"
	live_reader "$cur_session" "$out"
	run_app live "$cur_go" basic &
	app=$!
	# A marker printed: the reader is attached and reading (what it
	# prints, it prints while the session records).
	wait_grep "$out" '\{ tag = 99, n = [0-9]+ \}$' 60 ||
		{ broke "$out.err" && return 2; fail "live: the reader printed no marker: $(cat "$out.err")"; }
	touch "$cur_go"
	for ((i = 0; i < 600; i++)); do
		normalize <"$out" | from_basic >"$out.norm"
		cmp -s "$EXPECTED/basic.txt" "$out.norm" && break
		broke "$out.err" && return 2
		sleep 0.1
	done
	kill -0 $app 2>/dev/null || fail "live: the application ended before the check"
	diff -u "$EXPECTED/basic.txt" "$out.norm" ||
		fail "live: while the session records, the output differs from expected/basic.txt (above)"
	echo "ok: live: exact frames and locks printed while the session records"
	end_live live "$out"
	normalize <"$out" | from_basic >"$out.norm"
	diff -u "$EXPECTED/basic.txt" "$out.norm" ||
		fail "live: the final output differs from expected/basic.txt (above)"
	[[ ! -s "$out.err" ]] || fail "live: babeltrace2 said: $(cat "$out.err")"
	m=$(grep -c ' ustlt:work: .*{ tag = 99, ' "$out")
	echo "ok: live: the reader ended with the session ($m markers before the chains)"
}
attempt live

# --- attach --------------------------------------------------------------
# A first reader sees tag 1 and its stack, then markers; once it printed
# the seventh marker (packets of later markers are at the relay daemon
# too), it is stopped and a second reader attaches: it starts at the
# newest packet, after the stack.
attach_try() {
	local first_out=$UST_TMP/first$1.out out=$UST_TMP/second$1.out first i events missing
	lt create "$cur_session" --live=100000 "${NET[@]}"
	lt enable-event -u -s "$cur_session" 'ustlt:*,ustitch:*'
	lt add-context -u -s "$cur_session" "${CTX[@]}"
	lt start "$cur_session"
	live_reader "$cur_session" "$first_out"
	first=$reader
	run_app live "$cur_go" again &
	app=$!
	wait_grep "$first_out" '\{ tag = 99, n = 6 \}$' 60 ||
		{ broke "$first_out.err" && return 2;
		  fail "attach: the first reader printed no seventh marker: $(cat "$first_out.err")"; }
	grep -qE ' ustlt:work: .*\{ tag = 1, n = 0 \}$' "$first_out" ||
		fail "attach: the first reader did not see tag 1"
	stop_pid $first
	wait $first 2>/dev/null
	forget_child $first
	live_reader "$cur_session" "$out"
	wait_grep "$out" '\{ tag = 99, n = [0-9]+ \}$' 60 ||
		{ broke "$out.err" && return 2; fail "attach: the second reader printed no marker: $(cat "$out.err")"; }
	grep -qE ' ustlt:work: .*\{ tag = 1, n = 0 \}$' "$out" &&
		fail "attach: the second reader saw the first tag 1"
	touch "$cur_go"
	# The application is quiet now: only the live source's inactivity
	# messages move trace time past the lookahead.
	# (The file may end inside the event's text for a moment.)
	for ((i = 0; i < 300; i++)); do
		grep -A1 -E ' ustlt:work: .*\{ tag = 1, n = 0 \}$' "$out" | sed 1d | grep -qE "$MISSING_RE" && break
		broke "$out.err" && return 2
		sleep 0.1
	done
	grep -qE ' ustlt:work: .*\{ tag = 1, n = 0 \}$' "$out" ||
		fail "attach: tag 1 not printed while the session records: $(tail -3 "$out")"
	grep -A1 -E ' ustlt:work: .*\{ tag = 1, n = 0 \}$' "$out" | sed 1d | grep -qE "$MISSING_RE" ||
		fail "attach: tag 1 does not say its stack is missing: $(grep -A1 'tag = 1,' "$out")"
	kill -0 $app 2>/dev/null || fail "attach: the application ended before the check"
	echo "ok: attach: the event says its stack is not in the live reader's trace, while the session records"
	end_live attach "$out"
	# Every event it printed says so: the markers' stack came before it too.
	events=$(grep -c ' ustlt:work: ' "$out")
	missing=$(grep -cE "$MISSING_RE" "$out")
	[[ $events -ge 2 && $missing == "$events" ]] ||
		fail "attach: $missing of $events events say their stack is missing"
	printf 'ustitch: %s events referenced a stack missing from the trace\n%s\n' "$events" "$LIVE_NOTE" \
		>"$UST_TMP/attach.err.expected"
	diff -u "$UST_TMP/attach.err.expected" "$out.err" || fail "attach: summary differs (above)"
	echo "ok: attach: $events events, each says its stack is missing; the summary says why"
}
attempt attach
exit 0
