#!/bin/bash
# vm lane, in the guest: `ustitch record -O userstacktrace_delay` on a
# distribution kernel without the series' ftrace events.  The recorder
# defers by whatever the kernel allows: stacks at the system call's exit
# everywhere, BPF task_work where the kernel has the kfunc it was built
# for (7.x), and says which; trace-cmd report then stitches one stack per
# kernel entry, exactly getppid <- ust_c <- ust_b <- ust_a <- main, shown
# at both events of the entry.
set -u
fail() { echo "FAIL: $*"; exit 1; }

t0=$(date +%s%N)
# -v: how the stacks were taken, and why, besides the one-line summary.
"$UST_USTITCH" record -v -o trace.dat -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid \
	-O userstacktrace_delay "$UST_TESTPROG" 5 >record.log 2>&1
rc=$?
t1=$(date +%s%N)
cat record.log
[ "$rc" = 0 ] || fail "ustitch record exited with $rc"

# How the stacks were taken, where the user sees it.
case $(uname -r) in
7.*) how='deferred: at system-call exits, else by BPF task_work' ;;
*) how='deferred: at system-call exits, else at the event (no BPF task_work)' ;;
esac
grep -qF "user stacks ($how)" record.log || fail "the summary does not say \"$how\""
case $(uname -r) in
7.*) ! grep -q 'BPF: no BPF task_work' record.log || fail "task_work refused on $(uname -r)" ;;
*) grep -q 'BPF: no BPF task_work: the kernel has no BPF task_work kfuncs' record.log ||
	fail "no line saying why there is no task_work" ;;
esac
# A cookie record per event, a stack per entry.
grep -qx 'ustitch record: wrote trace.dat: 10 events (main buffer); 5 user stacks (buffer ustitch)' record.log ||
	fail "expected the summary of 10 events and 5 user stacks"
grep -q '^ustitch record: BPF: 10 cookies, 5 user stacks ' record.log || fail "expected 10 cookies and 5 user stacks"
grep -q "user stacks taken at the system call's exit: 5 " record.log ||
	fail "expected the 5 stacks taken at the system calls' exits"

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

# Each entry: its two events share a cookie, and the stack, stitched to
# both, is the exact chain, complete by CFI.
n=$(grep -c 'sys_enter_getppid:' report.txt)
[ "$n" -eq 5 ] || { head -40 report.txt; fail "expected 5 sys_enter_getppid events, got $n"; }
awk -f "$UST_VM_SRC/tests/live/record/stacks.awk" report.txt >stacks.txt
chain='getppid(libc.so.6);ust_c(ust-testprog);ust_b(ust-testprog);ust_a(ust-testprog);main(ust-testprog);'
for ev in sys_enter_getppid sys_exit_getppid; do
	got=$(grep -c "^$ev .* $chain" stacks.txt)
	[ "$got" -eq 5 ] || { cat stacks.txt; fail "$ev: $got of 5 with the exact chain"; }
done
cookies=$(awk '$4 != "-" { print $4 }' stacks.txt | sort -u | wc -l)
[ "$cookies" -eq 5 ] || { cat stacks.txt; fail "expected 5 cookies, one per kernel entry, got $cookies"; }
got=$(grep -c 'user_unwind_stack: .*complete, by CFI, shown at 2 events' report.txt)
[ "$got" -eq 5 ] || { grep user_unwind_stack report.txt; fail "$got of 5 stacks complete by CFI at 2 events"; }
echo "ok: 5 kernel entries, 10 events, 5 stacks, each the exact chain at both events"
grep -m1 -A7 'sys_enter_getppid:' report.txt
