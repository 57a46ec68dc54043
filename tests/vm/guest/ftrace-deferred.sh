#!/bin/bash
# vm lane, in the guest of --kernel 7.3-deferred: Linux 7.3 with seed
# 004's ftrace patches (kernel-bits/patches/), the kernel's own deferred
# user stacks met by our tools.
#
#  1. The kernel's format files of ftrace/user_unwind_cookie and
#     ftrace/user_unwind_stack are kernel-bits/'s field for field, and
#     header_page's fields lie where kernel-bits/ has them (a difference
#     fails; one in a print fmt or a field's declared type is said).
#  2. Stock `trace-cmd record -O userstacktrace_delay` (trace-cmd's own
#     recorder on real ftrace), then `trace-cmd report` with the plugin:
#     each getppid() of ust-testprog (frame pointers) has its stitched
#     stack, the kernel's frame-pointer walk's (ust_c, whose caller
#     getppid keeps no frame, skipped), said in the header; and what that
#     walk gives for Debian's sort (no frame pointers).
#  3. `ustitch record -O userstacktrace_delay`: by default BPF makes the
#     stacks, walking by CFI (ustitch probe says so, and why); with
#     --unwind kernel the kernel's own.  On one workload both agree frame
#     for frame, but the frame the kernel's walk cannot see.
#  4. An instance buffer with the option, by trace-cmd's recorder and by
#     ustitch record --unwind kernel: the stacks are the instance's.
#  5. Lost events: a burst into one-page buffers; every stack shown is its
#     own event's (ust-paths: the path is in the event), the stacks
#     dropped with the ring's records are marked so.
set -u
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=/sys/kernel/tracing
K=$UST_VM_SRC/kernel-bits
# A trace of trace-cmd's has no mapping records, and 9p no file handles:
# the report finds the test program by (device, inode) in its directory.
report() {	# report TRACE OUT: trace-cmd report with the plugin, stderr apart
	env TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
		trace-cmd report -O ustitch:search_dirs="$(dirname "$UST_TESTPROG")" "$1" >"$2" 2>"$2.err" ||
		bad "trace-cmd report $1 exited with $?"
	[ ! -s "$2.err" ] || bad "trace-cmd report $1 wrote to stderr: $(head -3 "$2.err")"
	! grep -qE 'FAILED TO PARSE|\[ustitch:' "$2" || bad "$1: unparsed records or plugin complaints"
	awk -f "$UST_VM_SRC/tests/live/record/stacks.awk" "$2" >"$2.stacks"
}
uname -r

# ---- 1. the ABI -------------------------------------------------------------
[ -e "$T/options/userstacktrace_delay" ] || { bad "no options/userstacktrace_delay"; exit 1; }
for ev in user_unwind_cookie user_unwind_stack; do
	kf=$T/events/ftrace/$ev/format ours=$K/events/ftrace/$ev/format
	for key in name ID; do
		a=$(sed -n "s/^$key: //p" "$kf") b=$(sed -n "s/^$key: //p" "$ours")
		[ "$a" = "$b" ] && ok "$ev: $key $a" || bad "$ev: $key: the kernel's $a, kernel-bits' $b"
	done
	if diff <(grep 'field:' "$kf") <(grep 'field:' "$ours") >"$ev.diff"; then
		ok "$ev: its $(grep -c 'field:' "$kf") fields are kernel-bits', field for field"
	else
		bad "$ev: the fields differ from kernel-bits': $(cat "$ev.diff")"
	fi
	a=$(grep '^print fmt' "$kf") b=$(grep '^print fmt' "$ours")
	[ "$a" = "$b" ] || echo "# $ev: print fmt differs (fields unaffected): kernel: $a; kernel-bits: $b"
done
# header_page: each field's name, offset and size; its declared type
# changed in mainline (7.x: "char overwrite", 6.x: "int overwrite").
layout() { sed -n 's/.*field: *\([^;]*\);.*offset:\([0-9]*\);.*size:\([0-9]*\);.*/\1 \2 \3/p' "$1" |
	awk '{ print $(NF - 2), $(NF - 1), $NF }'; }
if diff <(layout "$T/events/header_page") <(layout "$K/header_page") >hp.diff; then
	ok "header_page: its fields where kernel-bits' are ($(layout "$T/events/header_page" | tr '\n' ' '))"
else
	bad "header_page's fields differ: $(cat hp.diff)"
fi
diff <(grep 'field:' "$T/events/header_page") <(grep 'field:' "$K/header_page") | grep '^[<>]' |
	sed 's/^/# header_page, declared: /'

# ---- 2. stock trace-cmd -----------------------------------------------------
prog=$(basename "$UST_TESTPROG")
trace-cmd record -o tc.dat -O userstacktrace_delay -e syscalls:sys_enter_getppid \
	"$UST_TESTPROG" 5 >tc.log 2>&1 || { cat tc.log; bad "trace-cmd record exited with $?"; }
report tc.dat tc.txt
n=$(grep -c "^sys_enter_getppid " tc.txt.stacks)
[ "$n" -eq 5 ] && ok "trace-cmd: 5 getppid events" || bad "trace-cmd: $n getppid events, expected 5"
# The frame-pointer walk: getppid keeps no frame, so ust_c (its caller)
# is skipped; then the program's frames, down to main.
fp_chain='getppid(libc.so.6);ust_b(ust-testprog);ust_a(ust-testprog);main(ust-testprog);'
n=$(grep -c "^sys_enter_getppid .* $fp_chain" tc.txt.stacks)
[ "$n" -eq 5 ] && ok "trace-cmd: each stack is the kernel's frame-pointer chain ${fp_chain//;/ }" ||
	{ head -8 tc.txt.stacks; bad "trace-cmd: $n of 5 stacks begin $fp_chain"; }
n=$(grep -c "user_unwind_cookie:.*by the kernel's unwinder (frame pointers only)" tc.txt)
[ "$n" -eq 5 ] && ok "trace-cmd: each header says the kernel's unwinder took it" ||
	bad "trace-cmd: $n of 5 headers say the kernel's unwinder"
grep -m1 -A6 'sys_enter_getppid:' tc.txt | sed 's/^/# /'
# Debian's sort (no frame pointers): what the kernel's walk gives.  (7.3's
# sys_enter_write carries the written bytes, which trace-cmd 3.1.6 cannot
# parse: read.)
trace-cmd record -o sort.dat -F -O userstacktrace_delay -e syscalls:sys_enter_read \
	sort -o /tmp/sorted /etc/services >sort.log 2>&1 || { cat sort.log; bad "trace-cmd record sort exited with $?"; }
report sort.dat sort.txt
awk '$1 == "sys_enter_read" { n++; if ($5 != "-") f += split($5, x, ";")
			       if ($5 ~ /__libc_start_main/) full++ }
     END { printf "# sort: %d read() stacks of %.1f frames on average by the kernel'"'"'s walk, %d reaching __libc_start_main\n", n, n ? f / n : 0, full }' \
	sort.txt.stacks
grep -m1 -A6 'sys_enter_read:' sort.txt | sed 's/^/# /'

# ---- 3. ustitch record -------------------------------------------------------
"$UST_USTITCH" probe --no-verify >probe.out 2>&1
grep -q '^ftrace-deferred-unwind: yes — ' probe.out && ok "probe: ftrace-deferred-unwind yes" ||
	bad "probe: $(grep ftrace-deferred probe.out)"
grep -q "^record -O userstacktrace_delay: the BPF backport, deferred: .* \[the kernel's own deferred stacks (ftrace/user_unwind_\*) follow frame pointers only; --unwind kernel records those\]" probe.out &&
	ok "probe: -O userstacktrace_delay by BPF, and why" || bad "probe: $(grep 'record -O' probe.out)"
cfi_chain='getppid(libc.so.6);ust_c(ust-testprog);ust_b(ust-testprog);ust_a(ust-testprog);main(ust-testprog);'
for way in bpf kernel; do
	args=()
	[ "$way" = kernel ] && args=(--unwind kernel)
	"$UST_USTITCH" record -v "${args[@]}" -o "$way.dat" -O userstacktrace_delay \
		-e syscalls:sys_enter_getppid "$UST_TESTPROG" 5 >"$way.log" 2>&1 ||
		{ cat "$way.log"; bad "ustitch record ($way) exited with $?"; continue; }
	report "$way.dat" "$way.txt"
	n=$(grep -c "^sys_enter_getppid " "$way.txt.stacks")
	[ "$n" -eq 5 ] && ok "ustitch record ($way): 5 getppid events" || bad "ustitch record ($way): $n getppid events"
done
n=$(grep -c "^sys_enter_getppid .* $cfi_chain" bpf.txt.stacks)
[ "$n" -eq 5 ] && ok "ustitch record: BPF's stacks are the whole chain, ust_c included" ||
	{ head -8 bpf.txt.stacks; head -60 bpf.txt; cat bpf.log; bad "ustitch record: $n of 5 BPF stacks begin $cfi_chain"; }
n=$(grep -c "user_unwind_cookie:.*complete, by CFI" bpf.txt)
[ "$n" -eq 5 ] && ok "ustitch record: BPF's stacks complete, by CFI" || bad "ustitch record: $n of 5 BPF stacks complete by CFI"
n=$(grep -c "^sys_enter_getppid .* $fp_chain" kernel.txt.stacks)
[ "$n" -eq 5 ] && ok "ustitch record --unwind kernel: the kernel's chain, as trace-cmd's" ||
	{ head -8 kernel.txt.stacks; bad "ustitch record --unwind kernel: $n of 5 stacks begin $fp_chain"; }
# Frame for frame, as far as the kernel's walk goes (libc keeps no frame
# pointer: it ends in __libc_start_call_main), the kernel's are BPF's but
# ust_c.
paste -d' ' <(awk '$1 == "sys_enter_getppid" { print $5 }' bpf.txt.stacks) \
	<(awk '$1 == "sys_enter_getppid" { print $5 }' kernel.txt.stacks) |
	awk '{ b = $1; sub(/ust_c\(ust-testprog\);/, "", b); n++
	       if ($2 != "-" && substr(b, 1, length($2)) == $2) same++ }
	     END { print same + 0, n + 0 }' >agree.txt
read -r same n <agree.txt
[ "$n" -eq 5 ] && [ "$same" -eq 5 ] && ok "both ways agree frame for frame as far as the kernel's walk goes, but ust_c (5 of 5)" ||
	bad "both ways agree on $same of $n stacks (ust_c aside)"

# lock_held() filters record through perf: their stacks are BPF's, and
# --unwind kernel, which cannot give them any, is refused by name.
if "$UST_USTITCH" record --unwind kernel -p lockheld -o lh.dat -O userstacktrace_delay \
	-e kmem:mm_page_alloc -f 'lock_held(mmap_lock)' true >lh.log 2>&1; then
	bad "record --unwind kernel -p lockheld: accepted"
elif grep -q "^ustitch record: --unwind kernel: lock_held() filters record their events through perf, and the kernel's own deferred stacks come with ftrace's events only" lh.log; then
	ok "record --unwind kernel -p lockheld: refused, and why"
else
	bad "record --unwind kernel -p lockheld: $(cat lh.log)"
fi

# ---- 4. an instance buffer ----------------------------------------------------
# The option is the instance's (-O after -B): its events get the kernel's
# stacks, by trace-cmd's recorder and by ours.
trace-cmd record -o inst.dat -B ust -O userstacktrace_delay -e syscalls:sys_enter_getppid \
	"$UST_TESTPROG" 5 >inst.log 2>&1 || bad "trace-cmd record -B exited with $?: $(cat inst.log)"
"$UST_USTITCH" record --unwind kernel -o inst2.dat -B ust -O userstacktrace_delay \
	-e syscalls:sys_enter_getppid "$UST_TESTPROG" 5 >inst2.log 2>&1 ||
	bad "ustitch record --unwind kernel -B exited with $?: $(cat inst2.log)"
for t in inst inst2; do
	report "$t.dat" "$t.txt"
	n=$(grep -c "^sys_enter_getppid .* $fp_chain" "$t.txt.stacks")
	[ "$n" -eq 5 ] && ok "$t: in instance ust, each of 5 stacks the kernel's chain" ||
		{ head -20 "$t.txt"; bad "$t: $n of 5 stacks in instance ust begin $fp_chain"; }
	n=$(grep -c 'user_unwind_stack:' "$t.txt")
	[ "$n" -eq 5 ] && ok "$t: 5 user_unwind_stack records" || bad "$t: $n user_unwind_stack records, expected 5"
	grep -m1 'user_unwind_stack:' "$t.txt" | sed 's/^/# /'
done

# ---- 5. lost events ------------------------------------------------------------
# A burst into one-page buffers that trace-cmd's recorder empties every
# 0.2 s: the ring drops most records, cookies and stacks alike.  Each call
# of ust-paths goes through ust_even or ust_odd by its lseek offset's
# parity: a stack shown under another call's event would say the other
# function.  A cookie whose stack was dropped says so; none is given
# another's stack.
trace-cmd record -o lost.dat -b 4 -s 200000 -O userstacktrace_delay -e syscalls:sys_enter_lseek \
	"$UST_PATHSPROG" 4000 >lost.log 2>&1 || bad "trace-cmd record (lost) exited with $?: $(tail -3 lost.log)"
env TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
	trace-cmd report -O ustitch:search_dirs="$(dirname "$UST_PATHSPROG")" lost.dat >lost.txt 2>lost.err ||
	bad "trace-cmd report lost.dat exited with $?"
[ ! -s lost.err ] || bad "trace-cmd report lost.dat wrote to stderr: $(head -3 lost.err)"
# Per event: the parity of its offset, then the path its stack shows.  A
# cookie line right after its event is that event's; one right after a
# drop notice is a cookie whose event was dropped (its own stack under it,
# no event's); one after anything else would be astray.  A stack whose
# cookie line was dropped is shown under its own user_unwind_stack line,
# which says no event requested it.
awk 'function kind() { return /EVENTS DROPPED|LOST EVENTS|LOST [0-9]+ EVENTS/ ? "drop" : "other" }
     function show(what,   i) { if (shown[what]++ >= 3) return
				  print "# " what ":" > "lost.cases"
				  for (i = NR - 9; i <= NR; i++) if (i > 0) print "#   " ring[i % 10] > "lost.cases" }
     { ring[NR % 10] = $0 }
     / sys_enter_lseek: / { o = $0; sub(/.*offset: /, "", o); sub(/,.*/, "", o)
			    want = (o ~ /[13579bdf]$/) ? "ust_odd" : "ust_even"; ev++; prev = "event"; cur = ""; next }
     / user_unwind_cookie: / { cur = prev == "event" ? want : prev == "drop" ? "orphan" : "stray"
			       prev = "cookie"; next }
     / user_unwind_stack: / { cur = "stackline"; prev = "other"; next }
     /^\[ustitch: user stack for cookie .* never arrived: events were lost/ { lostmark++; next }
     /^\[ustitch: no event in this trace requested cookie/ { if (cur == "stackline") cur = "unrequested"; next }
     /^=> ust_(even|odd)\+/ { f = $2; sub(/\+.*/, "", f); stacks++
			      if (cur == "orphan") orphan++
			      else if (cur == "unrequested") unreq++
			      else if (cur == "ust_even" || cur == "ust_odd") { if (f == cur) right++; else { wrong++; show("wrong") } }
			      else { stray++; show("astray") }
			      cur = ""; next }
     /^=> / { next }
     { prev = kind(); cur = ""; if (prev == "drop") dropped++ }
     END { printf "%d %d %d %d %d %d %d %d %d\n", ev, stacks, right, wrong, stray, orphan, unreq, lostmark, dropped }' \
	lost.txt >lost.sum
read -r ev stacks right wrong stray orphan unreq lostmark dropped <lost.sum
echo "# lost: $ev lseek events, $stacks stacks shown ($right under their own event, $orphan under a cookie whose event was dropped, $unreq under their stack record, no event's: its cookie dropped; $wrong wrong, $stray astray), $lostmark marked lost, $dropped drop notices"
[ "$dropped" -gt 0 ] && ok "lost: the ring dropped records ($dropped notices)" || bad "lost: no records dropped: the burst proves nothing"
[ "$right" -gt 0 ] && [ "$wrong" -eq 0 ] && [ "$stray" -eq 0 ] &&
	ok "lost: each of $right stacks under its own event's path; $orphan under their own cookie only, $unreq said to be no event's" ||
	{ cat lost.cases; bad "lost: $wrong stacks under another event's path, $stray astray, of $stacks"; }
[ "$lostmark" -gt 0 ] && ok "lost: $lostmark stacks that never arrived are marked so" ||
	bad "lost: no stack marked as lost though records were dropped"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
