#!/bin/bash
# The profile outputs of a report.  -O ustitch:flamegraph=PATH: the
# samples' flame graph as one SVG, from a
# trace ust-mktrace makes: ust-testprog sampled 4 times in getppid (libc)
# under ust_c, 2 times in ust_b, and ust-testprog-lib 3 times in
# libusttest.so.  Each frame of the SVG is checked: its name, samples,
# position (data-x, samples before it), depth, title and colour (the
# program's red to orange, a library's yellow, the rest grey); the file is
# well-formed XML (xmllint); the icicle and per-thread variants.  Then
# -O ustitch:top=N's two tables, share for share; -O ustitch:pprof=PATH
# as go tool pprof reads it.  Then a recording of events (system calls
# with deferred stacks), folded and as pprof's events/count.
set -u
. "$(dirname "$0")/report-lib.sh"
work=$(mktemp -d /tmp/ustitch-flame.XXXXXX)
trap '[ -n "${UST_KEEP:-}" ] || rm -rf "$work"' EXIT

libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
tp=$UST_TESTPROG lib=$UST_LIBUSTTEST tpl=$UST_TESTPROG_LIB
ip=$(ret_after "$libc" getppid 'syscall')
r_c=$(ret_after "$tp" ust_c 'call') r_b=$(ret_after "$tp" ust_b 'call')
r_a=$(ret_after "$tp" ust_a 'call') r_main=$(ret_after "$tp" main 'call.*ust_a')
r_inner=$(ret_after "$lib" ust_lib_inner 'call') r_entry=$(ret_after "$lib" ust_lib_entry 'call')
r_lmain=$(ret_after "$tpl" main 'call.*ust_lib_entry')

{
	echo "cpus 1"
	echo "cmdline 100 ust-testprog"
	echo "cmdline 101 ust-testprog-li"
	echo "mapping cpu=0 ts=900000 pid=100 path=$tp"
	echo "mapping cpu=0 ts=900001 pid=101 path=$tpl"
	echo "mapping cpu=0 ts=900002 pid=101 path=$lib"
	ts=1000000 c=1
	sample() {	# sample PID FRAMES
		echo "event cpu=0 ts=$ts pid=$1 sys=ustitch name=sample ip=0x1000 period=1000000 event=cpu-clock mode=2 user_stack=1 kernel_frames=0"
		printf 'cookie cpu=0 ts=%d pid=%d cookie=0x%x\n' $ts "$1" $((c * 2 + 1))
		printf 'stack cpu=0 ts=%d pid=%d cookie=0x%x frames=%s\n' $((ts + 100)) "$1" $((c * 2 + 1)) "$2"
		ts=$((ts + 1000)) c=$((c + 1))
	}
	for i in 1 2 3 4; do sample 100 "$libc:$ip,$tp:$r_c,$tp:$r_b,$tp:$r_a,$tp:$r_main"; done
	for i in 1 2; do sample 100 "$tp:$r_b,$tp:$r_a,$tp:$r_main"; done
	for i in 1 2 3; do sample 101 "$lib:$r_inner,$lib:$r_entry,$tpl:$r_lmain"; done
} >"$work/spec"
if ! "$UST_MKTRACE" "$work/spec" "$work/trace.dat" 2>"$work/mk.err"; then
	echo "ust-mktrace failed:"; cat "$work/mk.err"; exit 1
fi

# frames SVG: "name samples x depth" per frame, by depth, then x.
frames() {
	sed -n 's/.*<g class="f" data-x="\([0-9]*\)" data-n="\([0-9]*\)" data-d="\([0-9]*\)" [^>]*data-name="\([^"]*\)".*/\4 \2 \1 \3/p' "$1" |
		sort -s -k4,4n -k3,3n
}
# kind SVG NAME: the frame's colour class, by its fill.
kind() {
	sed -n "s/.*data-name=\"$2\".*fill=\"rgb(\([0-9]*\),\([0-9]*\),\([0-9]*\))\".*/\1 \2 \3/p" "$1" | head -1 |
		awk '{ if ($1 >= 205 && $2 <= 150 && $3 <= 55) print "program";
		       else if ($1 == $2 && $1 >= 175 && $1 <= 230 && $3 >= 50 && $3 <= 70) print "library";
		       else if ($1 == $2 && $2 == $3) print "grey"; else print "other(" $0 ")" }'
}
# y SVG NAME: the frame's rect y.
y_of() { sed -n "s/.*data-name=\"$2\".*<rect x=\"[0-9.]*\" y=\"\([0-9]*\)\".*/\1/p" "$1" | head -1; }

if ! ust_report "$work" "$work/out" "$work/err" -O ustitch:flamegraph="$work/f.svg" trace.dat; then
	cat "$work/err"; exit 1
fi
grep -qx "# ustitch flame graph: 9 samples, 3 distinct stacks, written to $work/f.svg" "$work/out" &&
	ok "the report says where the flame graph went" || bad "no line saying where: $(grep flame "$work/out")"
grep -q 'ustitch' "$work/err" && bad "the plugin said: $(cat "$work/err")" || ok "nothing said on stderr"
if xmllint --noout "$work/f.svg" 2>"$work/xml.err"; then
	ok "the SVG is well-formed"
else
	bad "the SVG is not well-formed: $(head -3 "$work/xml.err")"
fi
# What people look at it with: Chromium (Debian's, headless) runs the
# script with no error in its console (?s= searches: the 4 samples of
# ust_c matched), and its screenshot shows the frames in their colours
# (pixels counted with netpbm).  A script error is seen in that console
# (a broken file proves the check).
if command -v chromium >/dev/null && command -v pngtopnm >/dev/null; then
	chrome() {	# chrome ERR ARGS...: headless, its own profile, console on stderr
		local err=$1; shift
		HOME=$work timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--user-data-dir="$work/chromium" --enable-logging=stderr --v=0 "$@" 2>"$err"
	}
	chrome "$work/c1.err" --dump-dom "file://$work/f.svg?s=ust_c" >"$work/dom" || true
	grep -q 'data-ready="1"' "$work/dom" && grep -q 'data-matched="4"' "$work/dom" &&
		ok "chromium: the script ran, ?s=ust_c matched its 4 samples" ||
		bad "chromium: script state: $(grep -o 'data-[a-z]*="[^"]*"' "$work/dom" | tr '\n' ' ')"
	grep -q ':CONSOLE' "$work/c1.err" && bad "chromium: console: $(grep ':CONSOLE' "$work/c1.err")" ||
		ok "chromium: nothing in the console"
	printf '%s' '<svg xmlns="http://www.w3.org/2000/svg"><script><![CDATA[ no_such(); ]]></script></svg>' >"$work/bad.svg"
	chrome "$work/c2.err" --dump-dom "file://$work/bad.svg" >/dev/null || true
	grep -q ':CONSOLE.*Uncaught ReferenceError' "$work/c2.err" && ok "chromium: a broken script is seen in the console" ||
		bad "chromium: a broken script left no console line: the check above proves nothing"
	chrome "$work/c3.err" --window-size=1200,$(sed -n 's/^<svg .* height="\([0-9]*\)".*/\1/p' "$work/f.svg" | head -1) \
		--screenshot="$work/f.png" "file://$work/f.svg" >/dev/null || true
	if [ -s "$work/f.png" ]; then
		# Pixels by colour: the program's red-orange, the libraries' yellow.
		pngtopnm "$work/f.png" | ppmhist -noheader |
			awk '$1 >= 205 && $2 <= 150 && $3 <= 55 { p += $5 }
			     $1 == $2 && $1 >= 175 && $1 <= 230 && $3 >= 50 && $3 <= 70 { l += $5 }
			     END { print p + 0, l + 0 }' >"$work/px"
		read -r px_prog px_lib <"$work/px"
		[ "$px_prog" -gt 20000 ] && [ "$px_lib" -gt 5000 ] &&
			ok "chromium: the screenshot shows the frames ($px_prog pixels of program frames, $px_lib of library frames)" ||
			bad "chromium: screenshot: $px_prog program pixels, $px_lib library pixels"
	else
		bad "chromium: no screenshot: $(grep -v dbus "$work/c3.err" | tail -3)"
	fi
else
	echo "# chromium or netpbm not installed: the SVG not rendered"
fi
# Siblings in name order; a frame's x is where its parent's starts plus
# its elder siblings' samples.
cat >"$work/expected" <<'EOF'
all 9 0 0
ust-testprog 6 0 1
ust-testprog-li 3 6 1
main 6 0 2
main 3 6 2
ust_a 6 0 3
ust_lib_entry 3 6 3
ust_b 6 0 4
ust_lib_inner 3 6 4
ust_c 4 0 5
getppid 4 0 6
EOF
frames "$work/f.svg" >"$work/got"
same "every frame: name, samples, position, depth" "$work/got"
grep -q '<title>ust_c (4 samples, 44.44%)</title>' "$work/f.svg" && ok "a frame's title: its samples and share" ||
	bad "no title 'ust_c (4 samples, 44.44%)'"
grep -q '<title>all (9 samples, 100.00%)</title>' "$work/f.svg" && ok "the root's title" || bad "no root title"
for f in main:program ust_a:program ust_c:program getppid:library ust_lib_inner:library \
	ust-testprog:grey all:grey; do
	[ "$(kind "$work/f.svg" "${f%%:*}")" = "${f#*:}" ] && ok "${f%%:*}: coloured as ${f#*:}" ||
		bad "${f%%:*}: coloured as $(kind "$work/f.svg" "${f%%:*}"), expected ${f#*:}"
done
# A flame: the root at the bottom, callees above their callers.
ya=$(y_of "$work/f.svg" all) yg=$(y_of "$work/f.svg" getppid)
[ -n "$ya" ] && [ -n "$yg" ] && [ "$ya" -gt "$yg" ] && ok "flame: the root below its callees ($ya > $yg)" ||
	bad "flame: root at y=$ya, getppid at y=$yg"
# The names are in the file (for viewers without scripts) where they fit.
grep -q '>ust_lib_inner</text>' "$work/f.svg" && ok "names written where they fit" || bad "no ust_lib_inner label"

# An icicle: the root on top.
ust_report "$work" "$work/out2" "$work/err2" -O ustitch:flamegraph="$work/i.svg" \
	-O ustitch:flamegraph_icicle=1 trace.dat || { cat "$work/err2"; exit 1; }
ya=$(y_of "$work/i.svg" all) yg=$(y_of "$work/i.svg" getppid)
[ -n "$ya" ] && [ -n "$yg" ] && [ "$ya" -lt "$yg" ] && ok "icicle: the root above its callees ($ya < $yg)" ||
	bad "icicle: root at y=$ya, getppid at y=$yg"
grep -q '<text id="title" x="600" y="24">Icicle Graph</text>' "$work/i.svg" && ok "icicle: its title" ||
	bad "icicle: no title"
frames "$work/i.svg" >"$work/got"
same "icicle: the same frames" "$work/got"

# Per thread: the roots are comm-TID.
ust_report "$work" "$work/out3" "$work/err3" -O ustitch:flamegraph="$work/t.svg" \
	-O ustitch:flamegraph_threads=1 trace.dat || { cat "$work/err3"; exit 1; }
frames "$work/t.svg" | awk '$4 == 1 { print $1, $2 }' >"$work/got"
printf '%s\n' "ust-testprog-100 6" "ust-testprog-li-101 3" >"$work/expected"
same "per thread: one root per thread" "$work/got"

# A path that cannot be written: said, the report still printed.
ust_report "$work" "$work/out4" "$work/err4" -O ustitch:flamegraph=/nonexistent/dir/f.svg trace.dat ||
	{ cat "$work/err4"; exit 1; }
grep -q "ustitch: flame graph: cannot write /nonexistent/dir/f.svg: No such file or directory" "$work/err4" &&
	ok "an unwritable path is said" || bad "unwritable path: $(cat "$work/err4")"
grep -q 'sample:' "$work/out4" && ok "the report still printed" || bad "no report"

# -O ustitch:top=N: the functions by self share, then by total
# ("children", as perf report --children), each with its object; main is
# in two programs.
ust_report "$work" "$work/out5" "$work/err5" -O ustitch:top=3 trace.dat || { cat "$work/err5"; exit 1; }
lib_base=$(basename "$lib")
cat >"$work/expected" <<EOF
# ustitch top 3 by self, of 9 samples:
#
#     Self  Children  Object                Function
    44.44%    44.44%  libc.so.6             getppid
    33.33%    33.33%  $(printf '%-20s' "$lib_base")  ust_lib_inner
    22.22%    66.67%  ust-testprog          ust_b
#
# ustitch top 3 by children (self and callees), of 9 samples:
#
# Children      Self  Object                Function
   100.00%     0.00%  [several]             main
    66.67%    22.22%  ust-testprog          ust_b
    66.67%     0.00%  ust-testprog          ust_a
#
EOF
sed -n '/^# ustitch top/,$p' "$work/out5" >"$work/got"
same "top=3: both tables" "$work/got"
grep -q 'ustitch' "$work/err5" && bad "top=3: the plugin said: $(cat "$work/err5")" || ok "top=3: nothing said on stderr"

# -O ustitch:pprof=PATH, read by the real client (go tool pprof, Debian's
# golang-go): every sample counted, each function's flat and cumulative
# samples, the cpu/nanoseconds type from the periods, the labels, and the
# mappings with their paths and build-ids.
if ! command -v go >/dev/null; then
	echo "skip: pprof: no go tool (Debian: golang-go)"
else
	ust_report "$work" "$work/out6" "$work/err6" -O ustitch:pprof="$work/p.pb.gz" trace.dat ||
		{ cat "$work/err6"; exit 1; }
	grep -qx "# ustitch pprof profile: 9 samples, 0 events, 8 locations, 7 functions, written to $work/p.pb.gz" \
		"$work/out6" && ok "pprof: the report says where" || bad "pprof: $(grep pprof "$work/out6")"
	gop() { HOME=$work GOCACHE=$work/gocache go tool pprof "$@" "$work/p.pb.gz" 2>"$work/go.err"; }
	gop -top -sample_index=samples | awk '$NF ~ /^[a-z_]+$/ && $1 ~ /^[0-9]+$/ { print $NF, $1, $4 }' |
		sort >"$work/got"
	printf '%s\n' "getppid 4 4" "main 0 9" "ust_a 0 6" "ust_b 2 6" "ust_c 0 4" "ust_lib_entry 0 3" \
		"ust_lib_inner 3 3" >"$work/expected"
	same "pprof -top (samples): each function's flat and cumulative samples" "$work/got"
	gop -top -sample_index=samples | grep -q 'Total samples = 9 *$' && ok "pprof: every sample counted" ||
		bad "pprof: $(gop -top -sample_index=samples | grep Total)"
	gop -top -sample_index=cpu | grep -q '^ *4ms 44.44% .* getppid$' &&
		ok "pprof -top (cpu/nanoseconds): getppid 4 ms from the periods" || bad "pprof cpu: $(gop -top -sample_index=cpu | head -12)"
	gop -tags >"$work/tags"
	for t in 'ust-testprog$' 'ust-testprog-li$' 'cpu-clock$'; do
		grep -q "$t" "$work/tags" && ok "pprof -tags: ${t%$}" || bad "pprof -tags: no ${t%$}"
	done
	grep -A2 '^ cpu:' "$work/tags" | grep -q '9.0ms (  100%): 0' && ok "pprof -tags: cpu 0 for all" ||
		bad "pprof -tags: cpu: $(grep -A2 '^ cpu:' "$work/tags")"
	# With -O ustitch:lines=1 a location has its source line and the
	# functions inlined there as lines of it (innermost first), as pprof
	# shows inlined frames: ust-testprog-inline's ust_inl_deep.
	inl=$UST_TESTPROG_INLINE
	r_deep=$(ret_after "$inl" ust_inl_deep 'call.*getppid')
	mkdir -p "$work/inl"
	printf '%s\n' "cpus 1" "cmdline 102 ust-testprog-in" \
		"mapping cpu=0 ts=900000 pid=102 path=$inl" \
		"event cpu=0 ts=1000000 pid=102 sys=ustitch name=sample ip=0x1000 period=1000000 event=cpu-clock mode=2 user_stack=1 kernel_frames=0" \
		"cookie cpu=0 ts=1000000 pid=102 cookie=0x3" \
		"stack cpu=0 ts=1000100 pid=102 cookie=0x3 frames=$libc:$ip,$inl:$r_deep" >"$work/inl/spec"
	"$UST_MKTRACE" "$work/inl/spec" "$work/inl/trace.dat" 2>"$work/mk.err" || { cat "$work/mk.err"; exit 1; }
	ust_report "$work/inl" "$work/out7" "$work/err7" -O ustitch:lines=1 -O ustitch:pprof="$work/inl.pb.gz" \
		trace.dat || { cat "$work/err7"; exit 1; }
	HOME=$work GOCACHE=$work/gocache go tool pprof -traces -lines "$work/inl.pb.gz" 2>/dev/null |
		awk '/^ *1ms / { on = 1; sub(/^ *1ms +/, "") } on && /^-/ { on = 0 } on { sub(/^ +/, ""); sub(/ [^ ]*\//, " "); print }' \
		>"$work/got"
	printf '%s\n' "getppid syscall-template.S:93" "ust_inl_leaf testprog-inline.c:22 (inline)" \
		"ust_inl_leaf2 testprog-inline.c:29 (inline)" "ust_inl_deep testprog-inline.c:45" >"$work/expected"
	same "pprof with lines=1: inlined frames as lines of one location, with their source lines" "$work/got"
	gop -raw | sed -n '/^Mappings/,$p' >"$work/maps"
	for b in "$tp" "$lib"; do
		bid=$(readelf -n "$b" | awk '/Build ID/ { print $3 }')
		grep -q " $b $bid " "$work/maps" && ok "pprof: mapping $(basename "$b") with its build-id" ||
			bad "pprof: no mapping '$b $bid' in: $(cat "$work/maps")"
	done
fi

# A recording of events, not samples (system calls with deferred stacks):
# its folded stacks count events, and pprof's sample type is events/count;
# with -O ustitch:weight=count one more, the bytes written.  Two writers,
# 3:1 by events, 3:10 by bytes: ust_c writes 10 bytes 3 times, ust_b 100
# bytes once.
mkdir -p "$work/ev"
{
	echo "cpus 1"
	echo "cmdline 100 ust-testprog"
	echo "mapping cpu=0 ts=900000 pid=100 path=$tp"
	ts=1000000 c=1
	event() {	# event BYTES FRAMES
		echo "event cpu=0 ts=$ts pid=100 sys=syscalls name=sys_enter_write __syscall_nr=1 fd=1 count=$1"
		shift
		printf 'cookie cpu=0 ts=%d pid=100 cookie=0x%x\n' $ts $((c * 2 + 1))
		printf 'stack cpu=0 ts=%d pid=100 cookie=0x%x frames=%s\n' $((ts + 100)) $((c * 2 + 1)) "$1"
		ts=$((ts + 1000)) c=$((c + 1))
	}
	for i in 1 2 3; do event 10 "$libc:$ip,$tp:$r_c,$tp:$r_b,$tp:$r_a,$tp:$r_main"; done
	event 100 "$libc:$ip,$tp:$r_b,$tp:$r_a,$tp:$r_main"
} >"$work/ev/spec"
"$UST_MKTRACE" "$work/ev/spec" "$work/ev/trace.dat" 2>"$work/mk.err" || { cat "$work/mk.err"; exit 1; }
if ust_report "$work/ev" "$work/out8" "$work/err8" -O ustitch:folded=1 trace.dat; then
	sed -n '/^# ustitch folded/,$p' "$work/out8" >"$work/got"
	printf '%s\n' "# ustitch folded stacks: 4 samples, 2 distinct stacks" \
		"ust-testprog;main;ust_a;ust_b;getppid 1" "ust-testprog;main;ust_a;ust_b;ust_c;getppid 3" \
		>"$work/expected"
	same "events: folded stacks, an event a count" "$work/got"
else
	bad "events: report failed: $(cat "$work/err8")"
fi
if command -v go >/dev/null; then
	ust_report "$work/ev" "$work/out9" "$work/err9" -O ustitch:pprof="$work/ev.pb.gz" -O ustitch:weight=count \
		trace.dat || { cat "$work/err9"; exit 1; }
	grep -q "# ustitch pprof profile: 0 samples, 4 events," "$work/out9" && ok "events: pprof says 4 events" ||
		bad "events: pprof: $(grep pprof "$work/out9")"
	# ev_top INDEX: each function's flat and cumulative value of that type.
	ev_top() {
		HOME=$work GOCACHE=$work/gocache go tool pprof -top -sample_index="$1" "$work/ev.pb.gz" 2>/dev/null |
			awk '$NF ~ /^[a-z_]+$/ && $1 ~ /^[0-9]+$/ { print $NF, $1, $4 }' | sort >"$work/got"
	}
	ev_top events
	printf '%s\n' "getppid 4 4" "main 0 4" "ust_a 0 4" "ust_b 0 4" "ust_c 0 3" >"$work/expected"
	same "events: pprof -top -sample_index=events, flat and cumulative" "$work/got"
	HOME=$work GOCACHE=$work/gocache go tool pprof -tags "$work/ev.pb.gz" 2>/dev/null >"$work/tags"
	grep -q 'sys_enter_write$' "$work/tags" && ok "events: pprof -tags: the event's name" ||
		bad "events: pprof -tags: $(cat "$work/tags")"
	ev_top count
	printf '%s\n' "getppid 130 130" "main 0 130" "ust_a 0 130" "ust_b 0 130" "ust_c 0 30" >"$work/expected"
	same "events: pprof -top -sample_index=count (weight=count): the bytes by stack" "$work/got"
fi

# -O ustitch:top=N of events of two names: the tables of all, then one
# pair per event name.
mkdir -p "$work/ev2"
{
	echo "cpus 1"
	echo "cmdline 100 ust-testprog"
	echo "mapping cpu=0 ts=900000 pid=100 path=$tp"
	ts=1000000 c=1
	ev2() {	# ev2 NAME FIELDS FRAMES
		echo "event cpu=0 ts=$ts pid=100 sys=syscalls name=$1 $2"
		printf 'cookie cpu=0 ts=%d pid=100 cookie=0x%x\n' $ts $((c * 2 + 1))
		printf 'stack cpu=0 ts=%d pid=100 cookie=0x%x frames=%s\n' $((ts + 100)) $((c * 2 + 1)) "$3"
		ts=$((ts + 1000)) c=$((c + 1))
	}
	for i in 1 2; do ev2 sys_enter_write "__syscall_nr=1 fd=1 count=1" "$tp:$r_c,$tp:$r_b,$tp:$r_a,$tp:$r_main"; done
	ev2 sys_enter_getppid "__syscall_nr=110" "$tp:$r_b,$tp:$r_a,$tp:$r_main"
} >"$work/ev2/spec"
"$UST_MKTRACE" "$work/ev2/spec" "$work/ev2/trace.dat" 2>"$work/mk.err" || { cat "$work/mk.err"; exit 1; }
if ust_report "$work/ev2" "$work/out10" "$work/err10" -O ustitch:top=1 trace.dat; then
	grep '^# ustitch top\|%  ' "$work/out10" >"$work/got"
	cat >"$work/expected" <<EOF
# ustitch top 1 by self, of 3 events:
    66.67%    66.67%  ust-testprog          ust_c
# ustitch top 1 by children (self and callees), of 3 events:
   100.00%    33.33%  ust-testprog          ust_b
# ustitch top 1 by self, of 2 sys_enter_write events:
   100.00%   100.00%  ust-testprog          ust_c
# ustitch top 1 by children (self and callees), of 2 sys_enter_write events:
   100.00%   100.00%  ust-testprog          ust_c
# ustitch top 1 by self, of 1 sys_enter_getppid events:
   100.00%   100.00%  ust-testprog          ust_b
# ustitch top 1 by children (self and callees), of 1 sys_enter_getppid events:
   100.00%   100.00%  ust-testprog          ust_b
EOF
	same "top=1 of two event names: all, then per event name" "$work/got"
else
	bad "top per event: report failed: $(cat "$work/err10")"
fi

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
