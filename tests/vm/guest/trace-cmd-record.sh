#!/bin/bash
# vm lane, in the guest: the flow users type, with the stock trace-cmd.
# On a normal kernel `trace-cmd record` works (this project's own machine
# blocks the function-tracer files it opens), so here it records a real
# trace, which `trace-cmd report` must print with our plugin loaded, clean
# and exactly as without it: the trace has no deferred-unwind events, and the
# plugin must not change anything else.  That the plugin was loaded (and by
# the one report only) is proven from the dynamic loader's log, as in
# tests/live/live-unchanged.sh: otherwise identical output proves nothing.
set -u
fail() { echo "FAIL: $*"; exit 1; }

# 5 loops of main -> ust_a -> ust_b -> ust_c -> getppid().
trace-cmd record -o trace.dat -e syscalls:sys_enter_getppid -O userstacktrace \
	"$UST_TESTPROG" 5 >record.log 2>&1
rc=$?
[ "$rc" = 0 ] || { cat record.log; fail "trace-cmd record exited with $rc"; }
echo "record: $(grep -c . record.log) lines of output, $(stat -c %s trace.dat) bytes of trace"

# A copy of the plugin installed in the system directory (the README's
# demo.sh puts one there) is loaded by every report.  The plain report
# runs in a mount namespace of its own where that directory is a copy of
# itself without plugin_ustitch.so; the report with ours loads both, and
# only ours acts.
sysdir=$(pkg-config --variable=libdir libtraceevent 2>/dev/null)/traceevent/plugins
without_system_copy() {
	if [ -e "$sysdir/plugin_ustitch.so" ]; then
		mkdir -p sysplugins
		cp -a "$sysdir"/. sysplugins/
		rm -f sysplugins/plugin_ustitch.so
		unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
			"$PWD/sysplugins" "$sysdir" "$@"
	else
		"$@"
	fi
}
report() {	# [hide=1] report OUTPUT [ENV...]: trace-cmd report, stderr apart
	local out=$1 rc
	shift
	${hide:+without_system_copy} env "$@" trace-cmd report trace.dat >"$out" 2>"$out.err"
	rc=$?
	[ "$rc" = 0 ] || { cat "$out.err"; fail "trace-cmd report ($*) exited with $rc"; }
}
hide=1 report plain -u TRACEEVENT_PLUGIN_DIR LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$PWD/ld-plain"
report ours TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
	LD_DEBUG=files,bindings LD_DEBUG_OUTPUT="$PWD/ld-ours"
# plugin_loaded LOG-PREFIX: the plugin files whose entry point was looked up.
plugin_loaded() {
	cat "$1".* 2>/dev/null | sed -n "s/.*binding file \([^ ]*plugin_ustitch[^ ]*\) .*symbol \`tep_plugin_loader'.*/\1/p" | sort -u
}
loaded=$(plugin_loaded ld-ours)
[ -n "$loaded" ] && xargs -r realpath <<<"$loaded" | grep -qxF "$(realpath "$UST_PLUGIN_DIR/plugin_ustitch.so")" ||
	fail "trace-cmd report with TRACEEVENT_PLUGIN_DIR=$UST_PLUGIN_DIR did not load its plugin_ustitch.so (${loaded:-no ustitch plugin})"
loaded=$(plugin_loaded ld-plain)
[ -z "$loaded" ] || fail "trace-cmd report without TRACEEVENT_PLUGIN_DIR loaded $loaded too"

# The report runs clean: nothing on stderr, nothing unparsed, no ustitch
# complaint.
if [ -s ours.err ]; then
	cat ours.err
	fail "trace-cmd report with the plugin wrote to stderr"
fi
! grep -E 'FAILED TO PARSE|\[ustitch:' ours || fail "unparsed records or plugin complaints"

# The expected events: 5 getppid entries of the test program, each with its
# user stack (ftrace's immediate one: a user_stack event whose frames print
# as "=> 0xADDR", the first on the event's own line, zeros past the end).
prog=$(basename "$UST_TESTPROG")
n=$(grep -c "^ *${prog:0:15}-[0-9]* .*sys_enter_getppid:" ours)
[ "$n" -eq 5 ] || { head -40 ours; fail "expected 5 sys_enter_getppid events of $prog, got $n"; }
n=$(grep -c "^ *${prog:0:15}-[0-9]* .*user_stack:" ours)
[ "$n" -eq 5 ] || { head -40 ours; fail "expected 5 user_stack events of $prog, got $n"; }
# Each one has the whole chain: getppid, 3 frames of the program (the
# frame-pointer walk skips ust_c: getppid keeps no frame), libc's start.
short=$(awk '/user_stack:/ { if (s && f < 5) bad++; s = 1; f = 0 }
	     s && /=> 0x/ { if ($NF != "0x0") f++; next }
	     s { if (f < 5) bad++; s = 0 }
	     END { if (s && f < 5) bad++; print bad + 0 }' ours)
[ "$short" -eq 0 ] || { head -60 ours; fail "$short user stack(s) with fewer than 5 frames"; }

diff -u plain ours >/dev/null || { diff -u plain ours | head -40; fail "the plugin changed the report"; }
echo "ok: $(wc -l <ours) lines, 5 getppid events with 5-frame user stacks, identical without the plugin"
grep -m1 -A6 'sys_enter_getppid:' ours
