#!/bin/bash
# lock_held() costs, one run each, as ratios.
#  1. Per event of syscalls:sys_enter_getppid (N calls of getppid()), the
#     recording's added cost per event, for an event kept and for one
#     filtered out, by way of: (a) ftrace without a filter, (b) an ftrace
#     field filter, (c) lock_held() by owner inspection (mmap_lock:W),
#     (d) lock_held(rcu) (RCU nesting).  The lock_held() ones go through
#     perf + the BPF filter.
#  2. Throughput of a lock-heavy workload (mmap()+munmap(): two
#     mmap_write_lock()s each) while each mechanism is attached to an
#     event the workload does not cause: what the mechanism costs the rest
#     of the system (the mmap_lock read trackers run on every mmap_lock
#     acquire and release).
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
work=$(mktemp -d /tmp/ustitch-lhbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
N=${UST_LH_BENCH_N:-300000}
M=${UST_LH_BENCH_M:-100000}

once() {	# once MODE N [record args...] -> ns per op
	local mode=$1 n=$2; shift 2
	if [ $# -eq 0 ]; then
		"$UST_LH_BENCH" "$mode" "$n"
	else
		"$UST_USTITCH" record -q -o "$work/b.dat" -b 65536 "$@" -- "$UST_LH_BENCH" "$mode" "$n" 2>/dev/null
	fi
}

. "$(dirname "$0")/../best.sh"

base=$(best once events $N)
ev=syscalls:sys_enter_getppid
printf '%-46s %10s %12s %8s\n' "per event of $ev" "ns/event" "added ns" "ratio"
printf '%-46s %10.1f %12s %8s\n' "no recording" "$base" "-" "-"
declare -A add
for row in \
	"a-kept|(a) ftrace, no filter, kept|" \
	"b-kept|(b) ftrace field filter, kept|common_pid > 0" \
	"b-drop|(b) ftrace field filter, filtered out|common_pid < 0" \
	"c-kept|(c) owner inspection, kept|!lock_held(mmap_lock:W)" \
	"c-drop|(c) owner inspection, filtered out|lock_held(mmap_lock:W)" \
	"d-kept|(d) RCU nesting, kept|!lock_held(rcu)" \
	"d-drop|(d) RCU nesting, filtered out|lock_held(rcu)"; do
	IFS='|' read -r key label filter <<<"$row"
	if [ -n "$filter" ]; then
		t=$(best once events $N -e $ev -f "$filter")
	else
		t=$(best once events $N -e $ev)
	fi
	add[$key]=$(awk -v t="$t" -v b="$base" 'BEGIN { print t - b }')
	printf '%-46s %10.1f %12.1f %8.2f\n' "$label" "$t" "${add[$key]}" \
		"$(awk -v t="$t" -v b="$base" 'BEGIN { print t / b }')"
done
echo "(ratio: time per event over that of the same syscall not recorded)"
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
