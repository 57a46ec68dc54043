#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# The LTTng flow end to end, on a private lttng-sessiond:
#   basic    every event of ust-lttng-app's known call chains shows its
#            exact frames and exact held locks (expected/basic.txt); each
#            stack is carried once; same stack, same id
#   filter   --filter '$app.ustitch:lock_depth > 0' keeps exactly the
#            events taken under a lock
#   late     provider dlopen()ed after tracing started: no value before,
#            values after (expected/late.txt)
#   missing  no provider: every ustitch context has no value, in
#            sink.text.pretty's output and in ours (expected/missing.txt)
#   second   a session started while the process runs (another one
#            recording too) still gets every stack its events use
#   nostack  stack ids recorded but ustitch:stack not enabled: each event
#            says its stack is not in the trace, after the lookahead
#   profiles folded stacks, flame graph, pprof profile and summary of the
#            events' stacks (sink.ustitch.text's parameters)
#   pretty   for events without our contexts (the filter trace),
#            sink.ustitch.text prints exactly what sink.text.pretty prints
set -u
. "$(dirname "$0")/lttng-env.sh"
EXPECTED=$(dirname "$0")/expected
CTX=(-t vpid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks')

# normalize: lttng-env.sh's.

check() {	# NAME FILE: FILE must match expected/NAME.txt
	if ! diff -u "$EXPECTED/$1.txt" "$2"; then
		fail "$1: output differs from expected/$1.txt (above)"
	fi
	echo "ok: $1"
}

# --- basic ---------------------------------------------------------------
session basic
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u "${CTX[@]}"
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy basic
bt2 "$UST_TMP/basic" -c sink.ustitch.text >"$UST_TMP/basic.out" 2>"$UST_TMP/basic.err" ||
	fail "babeltrace2: $(cat "$UST_TMP/basic.err")"
normalize <"$UST_TMP/basic.out" >"$UST_TMP/basic.norm"
check basic "$UST_TMP/basic.norm"

# Same stack, same id: the three tag-6 events share one id, and every id
# is carried by exactly one ustitch:stack event.
ids6=$(grep -E 'tag = 6,' "$UST_TMP/basic.out" | grep -oE 'stack_id = 0x[0-9a-f]+' | sort -u | wc -l)
[[ $ids6 == 1 ]] || fail "the repeated stack got $ids6 ids"
dups=$(grep ' ustitch:stack: ' "$UST_TMP/basic.out" | grep -oE 'stack_id = 0x[0-9a-f]+' | sort | uniq -d)
[[ -z "$dups" ]] || fail "stacks emitted more than once: $dups"
used=$(grep ' ustlt:work: ' "$UST_TMP/basic.out" | grep -oE 'stack_id = 0x[0-9a-f]+' | sort -u)
have=$(grep ' ustitch:stack: ' "$UST_TMP/basic.out" | grep -oE 'stack_id = 0x[0-9a-f]+' | sort -u)
[[ "$used" == "$have" ]] || fail "stack ids used and carried differ"
echo "ok: one id per stack, one ustitch:stack per id"
nm --defined-only "$UST_LTTNG_APP" >"$UST_TMP/nm"
objdump -d --no-show-raw-insn "$UST_LTTNG_APP" >"$UST_TMP/dis"
n=$(awk -v obj="$(basename "$UST_LTTNG_APP")" -f "$(dirname "$0")/check-callsites.awk" \
	"$UST_TMP/nm" "$UST_TMP/dis" "$UST_TMP/basic.out") || fail "frames: $n"
echo "ok: $n frames, each right after the call of the frame above"

# --- profiles ------------------------------------------------------------
# The events' stacks as profiles, from sink.ustitch.text's parameters, as
# trace-cmd's -O ustitch:folded/flamegraph/pprof/top: the folded stacks
# exactly those of expected/basic.txt (one count an event, under the
# procname), the summary's top function lt_emit (every event's innermost),
# the SVG well formed, and go tool pprof reading the profile.
session profiles
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u -t vpid -t vtid -t procname -t '$app.ustitch:stack_id'
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy profiles
bt2 "$UST_TMP/profiles" -c sink.ustitch.text \
	-p "folded=\"$UST_TMP/prof.folded\",flamegraph=\"$UST_TMP/prof.svg\",pprof=\"$UST_TMP/prof.pb.gz\",top=3" \
	>"$UST_TMP/prof.out" 2>"$UST_TMP/prof.err" || fail "profiles: babeltrace2: $(cat "$UST_TMP/prof.err")"
[[ -s "$UST_TMP/prof.err" ]] && fail "profiles: said on stderr: $(cat "$UST_TMP/prof.err")"
app=$(basename "$UST_LTTNG_APP")
awk -v root="${app:0:15}" '
	function flush() { if (st != "") n[st]++; st = "" }
	/^=> / { f = $2; sub(/\+OFF$/, "", f); fr[++k] = f; next }
	{ if (k) { s = root; for (i = k; i >= 1; i--) s = s ";" fr[i]; n[s]++ } k = 0 }
	END { if (k) { s = root; for (i = k; i >= 1; i--) s = s ";" fr[i]; n[s]++ }
	      for (s in n) print s, n[s] }' <(grep -v 'ustitch:stack:' "$EXPECTED/basic.txt") |
	LC_ALL=C sort >"$UST_TMP/prof.expected"
LC_ALL=C sort "$UST_TMP/prof.folded" >"$UST_TMP/prof.got"
diff -u "$UST_TMP/prof.expected" "$UST_TMP/prof.got" || fail "profiles: folded stacks differ from expected/basic.txt's (above)"
grep -qx "# ustitch folded stacks: 11 samples, $(wc -l <"$UST_TMP/prof.expected") distinct stacks, written to $UST_TMP/prof.folded" \
	"$UST_TMP/prof.out" || fail "profiles: no folded line: $(grep '^# ustitch' "$UST_TMP/prof.out")"
echo "ok: profiles: folded stacks, $(wc -l <"$UST_TMP/prof.expected") distinct, as expected/basic.txt's"
# The summary: lt_emit is every event's innermost frame.
self=$(awk '/^# ustitch top 3 by self, of 11 events:/ { on = 1; next } on && /%/ { print $1, $3, $4; exit }' "$UST_TMP/prof.out")
[[ "$self" == "100.00% $app lt_emit" ]] || fail "profiles: top by self: '$self'"
# Two of the 11 events are a thread's: 9 go through main.
kids=$(awk '/^# ustitch top 3 by children \(self and callees\), of 11 events:/ { on = 1; next }
	    on && /%/ { printf "%s %s;", $1, $4 }' "$UST_TMP/prof.out")
[[ "$kids" == "100.00% lt_emit;81.82% __libc_start_call_main;81.82% __libc_start_main;" ]] ||
	fail "profiles: top by children: '$kids': $(sed -n '/^# ustitch top/,$p' "$UST_TMP/prof.out")"
echo "ok: profiles: top: lt_emit 100 % self and children, libc's start 9 of 11"
command -v xmllint >/dev/null && { xmllint --noout "$UST_TMP/prof.svg" || fail "profiles: the SVG is not well formed"; }
grep -q "^# ustitch flame graph: 11 events, .* written to $UST_TMP/prof.svg" "$UST_TMP/prof.out" ||
	fail "profiles: no flame graph line"
grep -q '<title>all (11 events, 100.00%)</title>' "$UST_TMP/prof.svg" || fail "profiles: the SVG's root is not 11 events"
echo "ok: profiles: flame graph"
if command -v go >/dev/null; then
	top=$(HOME=$UST_TMP GOCACHE=$UST_TMP/gocache go tool pprof -top -sample_index=events "$UST_TMP/prof.pb.gz" 2>&1 |
		awk '$NF == "lt_emit" { print $1, $4 }')
	[[ "$top" == "11 11" ]] || fail "profiles: pprof -top: lt_emit '$top', expected flat 11, cumulative 11"
	tags=$(HOME=$UST_TMP GOCACHE=$UST_TMP/gocache go tool pprof -tags "$UST_TMP/prof.pb.gz" 2>&1)
	grep -q 'ustlt:work$' <<<"$tags" && grep -q "${app:0:15}\$" <<<"$tags" ||
		fail "profiles: pprof -tags: $tags"
	echo "ok: profiles: go tool pprof: lt_emit 11 of 11 events, labels event and comm"
fi

# --- filter --------------------------------------------------------------
# The filter reads the context without it being recorded.
session filter
lt enable-event -u 'ustlt:work' --filter '$app.ustitch:lock_depth > 0'
lt add-context -u -t vpid -t vtid -t ip -t procname
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy filter
tags=$(bt2 "$UST_TMP/filter" | grep -oE 'tag = [0-9]+' | tr '\n' ' ')
[[ "$tags" == "tag = 2 tag = 3 tag = 4 tag = 8 tag = 9 " ]] ||
	fail "filter kept: '$tags', expected tags 2 3 4 8 9"
echo "ok: filter"

# --- late ----------------------------------------------------------------
session late
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u "${CTX[@]}"
lt start
run_app --no-provider late "$UST_LTTNG_PROVIDER" || fail "ust-lttng-app late exited with $?"
lt stop
lt destroy late
bt2 "$UST_TMP/late" -c sink.ustitch.text | normalize >"$UST_TMP/late.norm"
check late "$UST_TMP/late.norm"

# --- missing -------------------------------------------------------------
session missing
lt enable-event -u 'ustlt:work'
lt add-context -u "${CTX[@]}"
lt start
run_app --no-provider basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy missing
n=$(bt2 "$UST_TMP/missing" | grep -c '_app_ustitch_stack_id_tag = ( "_none" : container = 0 ), _app_ustitch_stack_id = { { } }, _app_ustitch_lock_depth_tag = ( "_none" : container = 0 ), _app_ustitch_lock_depth = { { } }, _app_ustitch_locks_tag = ( "_none" : container = 0 ), _app_ustitch_locks = { { } }')
[[ $n == 11 ]] || fail "sink.text.pretty: $n of 11 events show no value"
bt2 "$UST_TMP/missing" -c sink.ustitch.text | normalize >"$UST_TMP/missing.norm"
check missing "$UST_TMP/missing.norm"

# --- second --------------------------------------------------------------
for s in first second; do
	session $s
	lt enable-event -u -s $s 'ustlt:*,ustitch:*'
	lt add-context -u -s $s "${CTX[@]}"
	[[ $s == first ]] && lt start first
	[[ $s == first ]] || continue
	run_app pause "$UST_TMP/go" &
	app=$!
	for ((i = 0; i < 600; i++)); do
		[[ -e "$UST_TMP/go.ready" ]] && break
		sleep 0.1
	done
	[[ -e "$UST_TMP/go.ready" ]] || fail "second: the application never got ready"
done
lt start second
touch "$UST_TMP/go"
wait $app || fail "ust-lttng-app pause exited with $?"
lt stop first
lt stop second
lt destroy first
lt destroy second
for s in first second; do
	bt2 "$UST_TMP/$s" -c sink.ustitch.text >"$UST_TMP/$s.out" 2>&1
	grep -q '^\[ustitch: stack' "$UST_TMP/$s.out" && fail "second: $s lacks a stack: $(cat "$UST_TMP/$s.out")"
done
[[ $(grep -c ' ustlt:work: ' "$UST_TMP/first.out") == 2 && $(grep -c ' ustlt:work: ' "$UST_TMP/second.out") == 1 ]] ||
	fail "second: expected 2 events in the first session and 1 in the second"
grep -A1 ' ustlt:work: ' "$UST_TMP/second.out" | grep -q '^=> lt_emit+' || fail "second: no stack shown"
echo "ok: second"

# --- nostack -------------------------------------------------------------
session nostack
lt enable-event -u 'ustlt:work'
lt add-context -u -t '$app.ustitch:stack_id'
lt start
run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy nostack
bt2 "$UST_TMP/nostack" -c sink.ustitch.text >"$UST_TMP/nostack.out" 2>"$UST_TMP/nostack.err"
n=$(grep -c '^\[ustitch: stack 0x[0-9a-f]* is not in this trace: its ustitch:stack event was lost, disabled, or recorded before the trace began\]$' "$UST_TMP/nostack.out")
[[ $n == 11 ]] || fail "nostack: $n of 11 events say their stack is missing"
grep -q '^ustitch: 11 events referenced a stack missing from the trace$' "$UST_TMP/nostack.err" ||
	fail "nostack: no summary on stderr: $(cat "$UST_TMP/nostack.err")"
echo "ok: nostack"

# --- pretty --------------------------------------------------------------
bt2 "$UST_TMP/filter" >"$UST_TMP/p1"
bt2 "$UST_TMP/filter" -c sink.ustitch.text >"$UST_TMP/p2"
[[ -s "$UST_TMP/p1" ]] && cmp -s "$UST_TMP/p1" "$UST_TMP/p2" ||
	fail "sink.ustitch.text differs from sink.text.pretty: $(diff "$UST_TMP/p1" "$UST_TMP/p2" | head -5)"
echo "ok: pretty"
exit 0
