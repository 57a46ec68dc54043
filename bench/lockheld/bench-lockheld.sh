#!/bin/bash
# lock_held() costs, one run each, as ratios.
#  1. Per event of syscalls:sys_enter_getppid (N calls of getppid()), the
#     recording's added cost per event, for an event kept and for one
#     filtered out, by way of: (a) ftrace without a filter, (b) an ftrace
#     field filter, (c) lock_held() by owner inspection (mmap_lock:W),
#     (d) lock_held(rcu) (RCU nesting).  The lock_held() ones are kept by
#     a BPF program on the sys_enter tracepoint that writes the kept record
#     itself, and again through perf + the BPF filter (the way events with
#     stacks or an ftrace part in their filter go).
#  2. Throughput of a lock-heavy workload (mmap()+munmap(): two
#     mmap_write_lock()s each) while each mechanism is attached to an
#     event the workload does not cause: what the mechanism costs the rest
#     of the system (the mmap_lock read trackers run on every mmap_lock
#     acquire and release).
#  Times are the workload's CPU time per operation (lh-bench), the least
#  of five runs (UST_BENCH_RUNS).  One more run of each lock_held() row,
#  with the kernel's BPF statistics on (kernel.bpf_stats_enabled,
#  restored), gives the filter program's own time per run: what of the
#  added cost is the program's, and what the perf tracepoint's around it.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
work=$(mktemp -d /tmp/ustitch-lhbench.XXXXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
trap 'echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; rm -rf "$work"' EXIT
N=${UST_LH_BENCH_N:-1000000}
M=${UST_LH_BENCH_M:-100000}

once() {	# once MODE N [record args...] -> ns per op
	local mode=$1 n=$2; shift 2
	if [ $# -eq 0 ]; then
		"$UST_LH_BENCH" "$mode" "$n"
	else
		"$UST_USTITCH" record -q -o "$work/b.dat" -b 65536 "$@" -- "$UST_LH_BENCH" "$mode" "$n" 2>/dev/null
	fi
}

# Runs of a second, five each: on this VM one run in three is disturbed.
UST_BENCH_RUNS=${UST_BENCH_RUNS:-5}
. "$(dirname "$0")/../best.sh"

# prog_ns N [record args...]: ns per run of the lock_held() filter program
# (ust_lh_filter, with the BPF functions it calls), from one recording
# with the kernel's BPF statistics on; "-" where they cannot be read.
prog_ns() {
	local n=$1; shift
	command -v bpftool >/dev/null && echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null ||
		{ echo -; return; }
	# ust_lh_filter on perf's tracepoint events, ust_lh_sys_enter (its
	# name cut to 15 characters) where the event is kept without perf.
	"$UST_USTITCH" record -q -o "$work/s.dat" -b 65536 "$@" -- sh -c \
		"'$UST_LH_BENCH' events $n >/dev/null; bpftool prog show" 2>/dev/null |
		awk '/ name ust_lh_(filter|sys_enter?) / && /run_time_ns/ {
			for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t += $(i + 1)
				if ($i == "run_cnt") c += $(i + 1) } }
			END { if (c) printf "%.1f\n", t / c; else print "-" }'
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
}

base=$(best once events $N)
ev=syscalls:sys_enter_getppid
printf '%-46s %10s %12s %8s %10s\n' "per event of $ev" "CPU ns" "added ns" "ratio" "BPF ns/run"
printf '%-46s %10.1f %12s %8s %10s\n' "no recording" "$base" "-" "-" "-"
declare -A add tm
for row in \
	"a-kept|(a) ftrace, no filter, kept|" \
	"b-kept|(b) ftrace field filter, kept|common_pid > 0" \
	"b-drop|(b) ftrace field filter, filtered out|common_pid < 0" \
	"c-kept|(c) owner inspection, kept|!lock_held(mmap_lock:W)" \
	"c-drop|(c) owner inspection, filtered out|lock_held(mmap_lock:W)" \
	"d-kept|(d) RCU nesting, kept|!lock_held(rcu)" \
	"d-drop|(d) RCU nesting, filtered out|lock_held(rcu)" \
	"c-perf|(c) owner inspection, kept, through perf|!lock_held(mmap_lock:W)" \
	"d-perf|(d) RCU nesting, kept, through perf|!lock_held(rcu)"; do
	IFS='|' read -r key label filter <<<"$row"
	# The rows "through perf" keep the event as a perf tracepoint sample
	# (USTITCH_LH_PERF=1), as every event with a kernel stack, a user stack
	# or an ftrace part in its filter is; the others are kept by the raw
	# tracepoint program (lib/record/rec_lockheld.c, raw_ok()).
	case $key in *-perf) export USTITCH_LH_PERF=1 ;; *) unset USTITCH_LH_PERF ;; esac
	if [ -n "$filter" ]; then
		t=$(best once events $N -e $ev -f "$filter")
	else
		t=$(best once events $N -e $ev)
	fi
	add[$key]=$(awk -v t="$t" -v b="$base" 'BEGIN { print t - b }')
	tm[$key]=$t
	pn=-
	case $filter in *lock_held*) pn=$(prog_ns $N -e $ev -f "$filter") ;; esac
	printf '%-46s %10.1f %12.1f %8.2f %10s\n' "$label" "$t" "${add[$key]}" \
		"$(awk -v t="$t" -v b="$base" 'BEGIN { print t / b }')" "$pn"
done
echo "(ratio: time per event over that of the same syscall not recorded)"
unset USTITCH_LH_PERF
printf 'kept, over the event kept by ftrace without a filter (goal <= 1.20): owner inspection %.2f, RCU nesting %.2f\n' \
	"$(awk -v t="${tm[c-kept]}" -v a="${tm[a-kept]}" 'BEGIN { print t / a }')" \
	"$(awk -v t="${tm[d-kept]}" -v a="${tm[a-kept]}" 'BEGIN { print t / a }')"
printf 'the same through perf: owner inspection %.2f, RCU nesting %.2f\n' \
	"$(awk -v t="${tm[c-perf]}" -v a="${tm[a-kept]}" 'BEGIN { print t / a }')" \
	"$(awk -v t="${tm[d-perf]}" -v a="${tm[a-kept]}" 'BEGIN { print t / a }')"
echo
# The baseline records too (an ftrace event, no BPF): the recorder's own
# polling is the same in every row.
mbase=$(best once mmap $M -e $ev)
printf '%-58s %10s %8s\n' "lock-heavy workload (mmap+munmap)" "ns/op" "ratio"
printf '%-58s %10.1f %8.2f\n' "nothing attached (recording $ev by ftrace)" "$mbase" 1
for row in \
	"owner inspection (lock_held(mmap_lock:W))|lock_held(mmap_lock:W)" \
	"mmap_lock read trackers (lock_held(mmap_lock))|lock_held(mmap_lock)" \
	"RCU nesting (lock_held(rcu))|lock_held(rcu)"; do
	IFS='|' read -r label filter <<<"$row"
	t=$(best once mmap $M -e $ev -f "$filter")
	printf '%-58s %10.1f %8.2f\n' "$label" "$t" "$(awk -v t="$t" -v b="$mbase" 'BEGIN { print t / b }')"
done
