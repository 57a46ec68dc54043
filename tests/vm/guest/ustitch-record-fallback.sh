#!/bin/bash
# vm lane, in the guest: `ustitch record -O userstacktrace_delay` on a
# kernel that has neither the native deferred-unwind events nor BPF
# task_work (Debian's 6.12).  The recorder must fall back to stacks taken
# immediately by BPF, say so, and still give trace-cmd report a stack for
# every requesting event.
set -u
fail() { echo "FAIL: $*"; exit 1; }

t0=$(date +%s%N)
"$UST_USTITCH" record -o trace.dat -e syscalls:sys_enter_getppid -O userstacktrace_delay \
	"$UST_TESTPROG" 5 >record.log 2>&1
rc=$?
t1=$(date +%s%N)
cat record.log
[ "$rc" = 0 ] || fail "ustitch record exited with $rc"

# The fallback is marked where the user sees it: in the recorder's summary,
# and (below) at every stack in the report.
grep -q 'immediate: this kernel has no BPF task_work' record.log ||
	fail "the summary does not say that the stacks are immediate"
grep -Eq '(^|, )5 cookies, 5 user stacks' record.log || fail "expected 5 cookies and 5 user stacks"

env TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" ${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
	trace-cmd report trace.dat >report.txt 2>report.err
rc=$?
[ "$rc" = 0 ] || { cat report.err; fail "trace-cmd report exited with $rc"; }
t2=$(date +%s%N)
echo "times: record $(( (t1 - t0) / 1000000 )) ms, report $(( (t2 - t1) / 1000000 )) ms"
if [ -s report.err ]; then
	cat report.err
	fail "trace-cmd report wrote to stderr"
fi
! grep -E 'FAILED TO PARSE|\[ustitch:' report.txt || fail "unparsed records or plugin complaints"

# Each getppid event is followed by its cookie, marked as taken at the
# event, and the stitched stack: getppid <- ust_c <- ust_b <- ust_a <- main,
# symbolized.
n=$(grep -c 'sys_enter_getppid:' report.txt)
[ "$n" -eq 5 ] || { head -40 report.txt; fail "expected 5 sys_enter_getppid events, got $n"; }
mark='taken at the event: no BPF task_work on this kernel'
chains=$(awk -v mark="$mark" '
	/user_unwind_cookie:/ { s = index($0, mark) > 0; c = ""; next }
	s && /^=> / { c = c " " $2; next }
	s { if (c ~ /getppid\+0x[0-9a-f]+ ust_c\+0x[0-9a-f]+ ust_b\+0x[0-9a-f]+ ust_a\+0x[0-9a-f]+ main\+/) ok++; s = 0 }
	END { print ok + 0 }' report.txt)
[ "$chains" -eq 5 ] || { head -60 report.txt; fail "expected 5 stacks marked \"$mark\" and stitched as getppid<-ust_c<-ust_b<-ust_a<-main, got $chains"; }
echo "ok: 5 events, 5 immediate stacks marked, stitched and symbolized"
grep -m1 -A7 'sys_enter_getppid:' report.txt
