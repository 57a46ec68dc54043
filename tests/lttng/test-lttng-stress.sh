#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# Stress: 8 threads recursing to random depths (up to 48) under random
# locks while another thread sends them SIGUSR1 and the process SIGALRM
# (handled on an alternate stack); the handlers take tracepoints too.
# Every run must end, in bounded time, with exit 0 (no crash, no
# deadlock), and the trace must read back with every recorded stack id
# resolved, unless the tracer reported discarded events.
set -u
. "$(dirname "$0")/lttng-env.sh"

session stress
lt enable-channel -u big --subbuf-size=1M --num-subbuf=8
lt enable-event -u -c big 'ustlt:*,ustitch:*'
lt add-context -u -c big -t vpid -t vtid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks'
lt start
start=$(date +%s)
for round in 1 2 3; do
	run_app stress 8 4000
	rc=$?
	[[ $rc == 0 ]] || fail "round $round: ust-lttng-app stress exited with $rc (124: deadlock/timeout)"
done
echo "ok: 3 rounds, $(( $(date +%s) - start )) s"
lt stop
lt destroy stress

bt2 "$UST_TMP/stress" -c sink.ustitch.text >"$UST_TMP/out" 2>"$UST_TMP/err" ||
	fail "babeltrace2: $(tail -5 "$UST_TMP/err")"
events=$(grep -c ' ustlt:' "$UST_TMP/out")
sigs=$(grep -c ' ustlt:sig: ' "$UST_TMP/out")
missing=$(grep -c '^\[ustitch: stack .* is not in this trace' "$UST_TMP/out")
echo "events: $events (signal handlers: $sigs), stacks: $(grep -c ' ustitch:stack: ' "$UST_TMP/out"), missing: $missing"
[[ $events -gt 100000 ]] || fail "only $events events"
[[ $sigs -gt 0 ]] || fail "no event from a signal handler"
if [[ $missing != 0 ]] && ! grep -q 'discarded' "$UST_TMP/err"; then
	fail "$missing events reference a stack missing from a trace that lost nothing"
fi
# A handler's stack goes through the signal frame into the interrupted code.
grep -A3 ' ustlt:sig: ' "$UST_TMP/out" | grep -q '^=> ' || fail "no signal handler stack"
exit 0
