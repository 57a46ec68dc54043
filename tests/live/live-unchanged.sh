#!/bin/bash
# Live: record a real trace of this kernel (own tracefs instance), then
# check that `trace-cmd report` prints it identically with and without our
# plugin: the plugin must only ever change the deferred-unwind events.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
[ -d /sys/kernel/tracing/instances ] || { echo "skip: no tracefs"; exit 77; }
work=$(mktemp -d /tmp/ustitch-live.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! "$UST_LIVE_CAPTURE" "$work/trace.dat" \
	sched:sched_switch,syscalls:sys_enter_getppid,raw_syscalls:sys_enter,sched:sched_process_exit \
	-- "$UST_TESTPROG" 50 2>"$work/cap.err"; then
	echo "capture failed:"; cat "$work/cap.err"; exit 1
fi
report() {
	( cd "$work" && HOME=$work "$@" trace-cmd report trace.dat 2>&1 )
}
report env -u TRACEEVENT_PLUGIN_DIR >"$work/plain"
report env TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} >"$work/ours"
n=$(grep -c 'sys_enter_getppid:' "$work/plain")
if [ "$n" -ne 50 ]; then
	echo "expected 50 sys_enter_getppid events of ust-testprog, got $n"; head -30 "$work/plain"; exit 1
fi
if ! diff -u "$work/plain" "$work/ours"; then
	echo "the plugin changed the report of a trace without unwind events"; exit 1
fi
echo "ok: $(wc -l <"$work/plain") lines identical, $n getppid events"
