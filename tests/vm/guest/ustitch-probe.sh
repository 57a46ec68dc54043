#!/bin/bash
# vm lane, in the guest: `ustitch probe` on a normal distribution kernel:
# what it must find there, each on its own "name: yes|no — reason" line,
# then the verifier's cost of every program ustitch loads, each far below
# the kernel's limit (at most 100,000 of 1,000,000 processed instructions)
# and none refused but what the kernel lacks.
set -u
"$UST_USTITCH" probe >probe.out 2>probe.err
rc=$?
cat probe.out
[ "$rc" = 0 ] || { cat probe.err; echo "FAIL: ustitch probe exited with $rc"; exit 1; }
bad=0
expect() {	# expect NAME yes|no
	if ! grep -q "^$1: $2 — ." probe.out; then
		echo "FAIL: expected \"$1: $2 — <reason>\""
		bad=1
	fi
}
uses() {	# uses "RECORD OPTIONS" TEXT: what probe says record uses
	if ! grep -qF "record $1: $2" probe.out; then
		echo "FAIL: expected \"record $1: $2\""
		bad=1
	fi
}
kver=$(uname -r)
# No Debian kernel has the series' ftrace events.
expect ftrace-deferred-unwind no
case $kver in
6.1.* | 6.12.*)
	# Before 6.18: no BPF task_work; before 6.19: no perf defer_callchain.
	expect perf-defer-callchain no
	expect bpf-task-work no
	# No BPF task_work: a sample's stack is walked at the sample, where
	# the kernel keeps the walk's VMAs between walks (6.12's mm_lock_seq),
	# else it is perf's immediate callchain.
	case $kver in
	6.1.*) uses "-g" "user stacks immediate (perf frame-pointer callchain) [no BPF task_work, and this kernel keeps no VMAs" ;;
	*) uses "-g" "user stacks deferred by BPF (perf_event program)" ;;
	esac
	uses "-O userstacktrace_delay" "the BPF backport, deferred: at system-call exits, else at the event (no BPF task_work)"
	;;
7.*)
	# Seed 002's perf interface is mainline, and so is the 6.19 task_work kfunc.
	expect perf-defer-callchain yes
	expect bpf-task-work yes
	grep -q '^bpf-task-work: yes — .*bpf_task_work_schedule_resume()' probe.out ||
		{ echo "FAIL: task_work by bpf_task_work_schedule_resume()"; bad=1; }
	# -g walks by CFI (the kernel's unwinder follows frame pointers only);
	# --call-graph defer is the kernel's, its records to defer_output events.
	uses "-g" "user stacks deferred by BPF (perf_event program) [the kernel's deferred callchains follow frame pointers only"
	uses "--call-graph defer" "user stacks deferred by the kernel (perf defer_callchain) (records to defer_output events, 6.19+)"
	uses "-O userstacktrace_delay" "the BPF backport, deferred: at system-call exits, else by BPF task_work [no ftrace/user_unwind_* events in this kernel]"
	;;
*)
	echo "FAIL: a kernel this test does not know: $kver"
	bad=1
	;;
esac
# A distribution kernel has the rest, fentry included (refused on the
# project's own machine).
expect btf yes
expect bpf-tracepoint yes
expect bpf-find-vma yes
expect bpf-tracing-progs yes
expect kprobes yes
expect uprobes yes
[ "$(sed -n '1,/^$/p' probe.out | grep -c .)" -eq 9 ] || { echo "FAIL: expected 9 probe lines"; bad=1; }
grep -q "^bpf-tracepoint: yes — the unwinder's .* programs load (CFI walk)" probe.out ||
	{ echo "FAIL: the unwinder's programs with the CFI walk"; bad=1; }

# The verifier's cost: every object loads, every program far below the limit.
for what in "the unwinder (CFI" "the unwinder (frame pointers" "the lock_held() filter" \
	"held-lock tracking (fentry/fexit)"; do
	grep -qF "$what" probe.out || { echo "FAIL: no verification of $what"; bad=1; continue; }
	grep -F "$what" probe.out | grep -q ': loads, at most' ||
		{ echo "FAIL: $what does not load"; bad=1; }
done
! grep -q 'REFUSED' probe.out || { echo "FAIL: a program was refused"; bad=1; }
over=$(awk '$3 == "insns" && $2 > 100000 { print $1 " " $2 }' probe.out)
[ -z "$over" ] || { echo "FAIL: over 100,000 processed instructions: $over"; bad=1; }
n=$(awk '$3 == "insns"' probe.out | wc -l)
[ "$n" -ge 20 ] || { echo "FAIL: only $n programs measured"; bad=1; }
echo "verified: $n programs, at most $(awk '$3 == "insns" { if ($2 > m) m = $2 } END { print m + 0 }' probe.out) instructions"
[ -s probe.err ] && { echo "FAIL: stderr:"; cat probe.err; bad=1; }
exit $bad
