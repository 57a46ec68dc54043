# Sourced by the live test scripts: `. "$(dirname "$0")/../lib.sh" NAME`.
# Skips (77) without root or tracefs; gives a work directory removed at exit
# ($work, /tmp/ustitch-NAME.*), the script's directory ($here), and the
# result helpers, which count failures in $fails (end with `finish`).
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
[ -d /sys/kernel/tracing/instances ] || { echo "skip: no tracefs"; exit 77; }
work=$(mktemp -d "/tmp/ustitch-$1.XXXXXX")
trap 'rm -rf "$work"' EXIT
here=$(dirname "$0")
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
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
	[ "$fails" = 0 ] && exit 0
	echo "$fails failed"
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
