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
# at_least NAME GOT MIN
at_least() { [ "$2" -ge "$3" ] && ok "$1: $2 (>= $3)" || bad "$1: got $2, expected at least $3"; }
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
