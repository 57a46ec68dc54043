#!/bin/bash
# vm lane, in the guest: `ustitch probe` on Debian's 6.12, a normal kernel
# without the deferred-unwind series: what it must find there, each on its
# own "name: yes|no — reason" line.
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
# Not in 6.12: the series' ftrace events and perf option, BPF task_work.
expect ftrace-deferred-unwind no
expect perf-defer-callchain no
expect bpf-task-work no
# A distribution kernel has the rest, fentry included (refused here on
# the project's own machine).
expect btf yes
expect bpf-tracepoint yes
expect bpf-find-vma yes
expect bpf-tracing-progs yes
expect kprobes yes
expect uprobes yes
[ "$(grep -c . probe.out)" -eq 9 ] || { echo "FAIL: expected 9 lines"; bad=1; }
[ -s probe.err ] && { echo "FAIL: stderr:"; cat probe.err; bad=1; }
exit $bad
