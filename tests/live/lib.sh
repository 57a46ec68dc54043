# Sourced by the live test scripts:
#   . "$(dirname "$0")/../lib.sh" NAME [CASE KNOWN...]
# With CASE (the script's argument), CASE must be one of the KNOWN test
# names: an unknown or missing one fails (exit 2), checked first, so that
# a misspelt name fails even where the test would skip.  The output is
# TAP (the tests are registered with protocol 'tap'): "ok - ...",
# "not ok - ...", a part that cannot run here "ok - ... # SKIP why", and a
# test that cannot run at all "1..0 # SKIP why" (skip_all).  It skips
# without root or tracefs; gives a work directory removed at exit ($work,
# /tmp/ustitch-NAME.*; $USTITCH_RUN_DIR is in it), the script's directory ($here), and the result
# helpers, which count failures in $fails and skipped parts in $skips (end
# with `finish`).

# known_case CASE KNOWN...: CASE is one of KNOWN, else says so.
known_case() {
	local c=$1
	shift
	[ -n "$c" ] && [[ " $* " == *" $c "* ]] && return 0
	echo "Bail out! $0: unknown test '$c' (known: $*)"
	return 1
}
if [ $# -gt 1 ]; then
	known_case "$2" "${@:3}" || exit 2
fi
# skip_all REASON: the whole test cannot run here (before any other line).
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -d /sys/kernel/tracing/instances ] || skip_all "no tracefs"
work=$(mktemp -d "/tmp/ustitch-$1.XXXXXX")
trap 'rm -rf "$work"' EXIT
# What ustitch remembers for the boot (/run/ustitch: the BPF refusals) is
# the test's own: a recording of the user's neither sees nor gets its lines.
export USTITCH_RUN_DIR=$work/run
here=$(dirname "$0")
fails=0 skips=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
# skip_part NAME REASON: a part of the test that cannot run here, said as
# a TAP skip (never as passed, never left out).
skip_part() { echo "ok - $1 # SKIP $2"; skips=$((skips + 1)); }
# expect_eq NAME GOT WANT
expect_eq() { [ "$2" = "$3" ] && ok "$1: $2" || { bad "$1: got '$2', expected '$3'"; return 1; }; }
# at_least NAME GOT MIN, at_most NAME GOT MAX
at_least() { [ "$2" -ge "$3" ] && ok "$1: $2 (>= $3)" || bad "$1: got $2, expected at least $3"; }
at_most() { [ "$2" -le "$3" ] && ok "$1: $2 (<= $3)" || bad "$1: got $2, expected at most $3"; }
# report FILE [trace-cmd report options]: the report with our plugin.
report() {
	local f=$1; shift
	env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
		${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} trace-cmd report "$@" "$f" 2>&1
}
# The exit status: 0, or 1 after saying how many checks failed.
finish() {
	[ "$skips" = 0 ] || echo "# $skips part(s) skipped"
	[ "$fails" = 0 ] && exit 0
	echo "# $fails failed"
	exit 1
}
# bpf_ids PID: the BPF programs and links process PID holds ("prog N",
# "link N"), from its fdinfo (bpftool here does not show owners' pids).
bpf_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print "prog", $2 }
		$1 == "link_id:" { print "link", $2 }' | sort -u
}
# bpf_left FILE: those of bpf_ids' list in FILE that still exist.
bpf_left() {
	local kind id
	while read -r kind id; do
		bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "$kind $id"
	done <"$1"
}
# The top instance's state that a recorder must not change.
top_state() {
	local t=/sys/kernel/tracing
	cat $t/trace_options $t/tracing_on $t/current_tracer $t/trace_clock $t/buffer_size_kb
}
