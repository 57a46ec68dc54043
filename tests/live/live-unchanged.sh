#!/bin/bash
# Live: record a real trace of this kernel (own tracefs instance), then
# check that `trace-cmd report` prints it identically with and without our
# plugin: the plugin must only ever change the deferred-unwind events.
# Identical output proves nothing unless our plugin really was loaded by
# the one report and not by the other: the dynamic loader's log of each
# (LD_DEBUG, into files of their own) must show libtraceevent looking up
# the plugin entry point in our plugin_ustitch.so, and in no ustitch
# plugin for the plain report; `trace-cmd list -O` must show its options.
set -u
# TAP (protocol 'tap'): a test that cannot run here is "1..0 # SKIP why".
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 0; }
[ -d /sys/kernel/tracing/instances ] || { echo "1..0 # SKIP no tracefs"; exit 0; }
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
# A copy of the plugin installed in the system directory (the README's
# demo.sh puts one there) is loaded by every report.  The plain report must
# have none: it runs in a mount namespace of its own where the system
# directory is a copy of itself without plugin_ustitch.so.  The report with
# ours then loads both copies, and only the one loaded last may act.
sysdir=$(pkg-config --variable=libdir libtraceevent 2>/dev/null)/traceevent/plugins
without_system_copy() {
	if [ -e "$sysdir/plugin_ustitch.so" ]; then
		mkdir -p "$work/sysplugins"
		cp -a "$sysdir"/. "$work/sysplugins/"
		rm -f "$work/sysplugins/plugin_ustitch.so"
		unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
			"$work/sysplugins" "$sysdir" "$@"
	else
		"$@"
	fi
}
report without_system_copy env -u TRACEEVENT_PLUGIN_DIR LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$work/ld-plain" >"$work/plain"
report env TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
	LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$work/ld-ours" >"$work/ours"
# plugin_loaded LOG-PREFIX: the plugin files whose entry point was looked up.
plugin_loaded() {
	cat "$1".* 2>/dev/null | sed -n "s/.*binding file \([^ ]*plugin_ustitch[^ ]*\) .*symbol \`tep_plugin_loader'.*/\1/p" | sort -u
}
ours=$(realpath "$UST_PLUGIN_DIR/plugin_ustitch.so")
loaded=$(plugin_loaded "$work/ld-ours")
if [ -z "$loaded" ] || ! printf '%s\n' "$loaded" | xargs -r realpath | grep -qxF "$ours"; then
	echo "the report with TRACEEVENT_PLUGIN_DIR=$UST_PLUGIN_DIR did not load $ours (loaded: ${loaded:-no ustitch plugin}); the plugins it loaded:"
	cat "$work"/ld-ours.* | sed -n 's/.*calling init: \([^ ]*plugin_[^ ]*\).*/  \1/p' | sort -u
	exit 1
fi
loaded=$(plugin_loaded "$work/ld-plain")
if [ -n "$loaded" ]; then
	echo "the report without TRACEEVENT_PLUGIN_DIR loaded a ustitch plugin too ($loaded): nothing to compare against"
	exit 1
fi
if ! ( cd "$work" && env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
	${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} trace-cmd list -O 2>&1 ) | grep -q '^ *plugin:[[:space:]]*ustitch$'; then
	echo "trace-cmd list -O with TRACEEVENT_PLUGIN_DIR=$UST_PLUGIN_DIR shows no ustitch option: the plugin did not register"
	exit 1
fi
echo "ok - the plugin was loaded ($ours) and registered its options"
n=$(grep -c 'sys_enter_getppid:' "$work/plain")
if [ "$n" -ne 50 ]; then
	echo "expected 50 sys_enter_getppid events of ust-testprog, got $n"; head -30 "$work/plain"; exit 1
fi
if ! diff -u "$work/plain" "$work/ours"; then
	echo "the plugin changed the report of a trace without unwind events"; exit 1
fi
echo "ok - $(wc -l <"$work/plain") lines identical, $n getppid events"
