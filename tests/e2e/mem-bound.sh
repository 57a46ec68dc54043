#!/bin/bash
# Issue 18's memory bound on a 175 MB trace: 200k requesting events among
# 9.6M ordinary ones, their cookies and stacks in a "ustitch" buffer (the
# BPF layout, read merged with the top buffer).
#
# The measure is max RSS (VmHWM) of `trace-cmd report` with the plugin
# minus that of `trace-cmd report -N` on the same file.  Both map the file
# alike, so the file's pages cancel out; what remains is the plugin's, and
# also what of the file its first pass would keep mapped (libtracecmd
# 1.3.1's leftovers, unmapped by ust_scan_file(): without that, about the
# trace's size).  The bound is the benchmark's goal for (b), 48 bytes per
# request plus what the distinct stacks hold (the plugin says, under
# USTITCH_DEBUG), plus 16 MiB for what does not grow with the trace: the
# plugin and its libraries, the symbolizer's tables of the two files, libc's
# arenas.  A first pass keeping 8 bytes per event (78 MB here) fails it.
set -u
[ -z "${UST_SAN_PRELOAD:-}" ] || { echo "skip: ASan's shadow memory is RSS too: the bound is for plain builds"; exit 77; }
command -v /usr/bin/time >/dev/null || { echo "skip: needs /usr/bin/time (Debian package time)"; exit 77; }
requests=200000 stacks=20000 ordinary=9600000
work=$(mktemp -d /tmp/ustitch-membound.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$UST_MKTRACE" --bench $requests $stacks trace.dat --ordinary $ordinary --ustitch-buffer || exit 1

maxrss() {	# maxrss ENV...: -- REPORT-ARGS...: max RSS in KiB of one report to /dev/null
	local -a envs=()

	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" HOME="$work" /usr/bin/time -f %M -o rss.txt \
		trace-cmd report "$@" trace.dat >/dev/null 2>err.txt || { cat err.txt; exit 1; }
	tail -1 rss.txt
}
n=$(maxrss -u TRACEEVENT_PLUGIN_DIR -- -N)
ours=$(maxrss TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" USTITCH_DEBUG=1 --)
pass=$(grep 'first pass over' err.txt)
dbytes=$(sed -n 's/.*distinct stacks: .*, \([0-9]*\) bytes$/\1/p' err.txt)
echo "max RSS: -N $n KiB, with the plugin $ours KiB; $pass; distinct stacks hold $dbytes bytes"

fail=0
# What the first pass found is exact: every request and every stack.
case $pass in
*", $requests requests, $stacks stacks in "*) ;;
*) echo "FAIL: the first pass should find $requests requests and $stacks stacks"; fail=1 ;;
esac
[[ $n =~ ^[0-9]+$ && $ours =~ ^[0-9]+$ && $dbytes =~ ^[0-9]+$ ]] ||
	{ echo "FAIL: no figures"; exit 1; }
bound=$(( (48 * requests + dbytes) / 1024 + 16 * 1024 ))
extra=$((ours - n))
echo "extra max RSS $extra KiB, bound $bound KiB"
if ((extra > bound)); then
	echo "FAIL: the plugin adds $extra KiB of max RSS over -N, more than $bound KiB"
	fail=1
fi
exit $fail
