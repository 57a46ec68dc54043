#!/bin/bash
# --addr-filter costs, one run, as ratios against named anchors.
#  1. Per event of syscalls:sys_enter_getppid (lh-bench: N getppid() calls
#     through libc's syscall()): the time per event recorded by ftrace
#     without a filter (the anchor), and through perf + the BPF filter with
#     a file range that keeps every event (the user IP at entry is in
#     syscall()), one that drops every event (malloc), and a start/stop
#     switch that is on (started at main).
#  2. Per perf sample (cpu-clock at 10 kHz on a CPU-bound loop): the loop
#     time sampled without a filter (the anchor), with a file range that
#     keeps every sample (the loop's leaf function) and one that drops
#     every sample (a kernel range), with no callchain: the filter alone.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
work=$(mktemp -d /tmp/ustitch-afbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
N=${UST_AF_BENCH_N:-300000}
iters=${UST_BENCH_ITERS:-400000000}
libc=$(ldd "$UST_LH_BENCH" | awk '$1 ~ /^libc\.so/ { print $3 }')
ev=syscalls:sys_enter_getppid

once() {	# once N [record args...] -> ns per getppid()
	local n=$1; shift
	if [ $# -eq 0 ]; then
		"$UST_LH_BENCH" events "$n"
	else
		"$UST_USTITCH" record -q -o "$work/b.dat" -b 65536 "$@" -- "$UST_LH_BENCH" events "$n" \
			2>"$work/err" || { cat "$work/err" >&2; echo nan; }
	fi
}
. "$(dirname "$0")/../best.sh"

base=$(best once "$N")
anchor=$(best once "$N" -e $ev)
printf '%-52s %10s %12s %9s\n' "per event of $ev" "ns/event" "vs anchor" "kept"
printf '%-52s %10.1f %12s\n' "no recording" "$base" "-"
printf '%-52s %10.1f %12.2f\n' "(anchor) ftrace, no filter" "$anchor" 1
for row in \
	"filter file:syscall@libc (keeps all)|filter file:syscall@$libc" \
	"filter file:malloc@libc (drops all)|filter file:malloc@$libc" \
	"start file:main@lh-bench (switch on)|start file:main@$UST_LH_BENCH"; do
	IFS='|' read -r label spec <<<"$row"
	t=$(best once "$N" -e $ev --addr-filter "$spec")
	kept=$(trace-cmd report -N "$work/b.dat" 2>/dev/null | grep -c "sys_enter_getppid:")
	printf '%-52s %10.1f %12.2f %9d\n' "$label" "$t" \
		"$(awk -v t="$t" -v a="$anchor" 'BEGIN { print t / a }')" "$kept"
done
echo "(vs anchor: time per event over that of the ftrace recording without a filter)"
echo

# Samples: the loop's time (ns, first field of the workload's output).
srun() {	# srun [record args...] -> "loop_ns samples"
	"$UST_USTITCH" record -v -o "$work/s.dat" -e cpu-clock -F 10000 "$@" -- \
		"$UST_WORKLOAD" "$iters" >"$work/s.out" 2>"$work/s.err"
	echo "$(awk '{ print $1 }' "$work/s.out") $(grep -o 'perf: [0-9]* samples' "$work/s.err" | awk '{ print $2 }')"
}
read -r sa na < <(best srun)
printf '%-52s %10s %12s %9s\n' "cpu-clock at 10 kHz, no callchain" "loop ms" "vs anchor" "samples"
printf '%-52s %10.1f %12.3f %9s\n' "(anchor) no --addr-filter" "$(awk -v t="$sa" 'BEGIN { print t / 1e6 }')" 1 "${na:-?}"
for row in \
	"filter file:wl_leaf@workload (keeps nearly all)|filter file:wl_leaf@$UST_WORKLOAD" \
	"filter kernel:0xffffffff81000000/0x10 (drops all)|filter kernel:0xffffffff81000000/0x10"; do
	IFS='|' read -r label spec <<<"$row"
	read -r t n < <(best srun --addr-filter "$spec")
	printf '%-52s %10.1f %12.3f %9s\n' "$label" "$(awk -v t="$t" 'BEGIN { print t / 1e6 }')" \
		"$(awk -v t="$t" -v a="$sa" 'BEGIN { print t / a }')" "${n:-?}"
done
echo "(vs anchor: loop time over that of the same sampling without a filter)"
exit 0
