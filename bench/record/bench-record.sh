#!/bin/bash
# Recorder benchmark: the same workload (N getppid() calls 12 frames deep)
# run bare and under `ustitch record` with (a) no stacks, (b) ftrace's
# userstacktrace, (c) deferred stacks (BPF task_work on this kernel).
# Per-event cost = (traced loop time - bare loop time) / events; the ratio
# events/unwinds says how many events one captured stack served.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
calls=${UST_BENCH_CALLS:-200000}
work=$(mktemp -d /tmp/ustitch-bench-rec.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Buffers large enough that no event is lost: lost events would make the
# traced runs look cheaper than they are.
ev="-b 65536 -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid"

loop_ns() { awk '{ print $1 }' "$1"; }
bare() { "$UST_WORKLOAD" "$calls" >"$work/bare.out"; loop_ns "$work/bare.out"; }
traced() {	# traced NAME OPTIONS...
	local name=$1 s e; shift
	s=$(date +%s%N)
	# shellcheck disable=SC2086
	"$UST_USTITCH" record -o "$work/$name.dat" $ev "$@" -- "$UST_WORKLOAD" "$calls" \
		>"$work/$name.out" 2>"$work/$name.err"
	e=$(date +%s%N)
	echo "$(loop_ns "$work/$name.out") $(( (e - s) / 1000000 ))"
}
count() { trace-cmd report "$work/$1.dat" 2>/dev/null | grep -c "$2"; }

# Best of three for the bare loop: it is the smallest number here.
b1=$(bare); b2=$(bare); b3=$(bare)
base=$(printf '%s\n' "$b1" "$b2" "$b3" | sort -n | head -1)
read -r a_ns a_ms < <(traced nostack)
read -r b_ns b_ms < <(traced userstack -O userstacktrace)
read -r c_ns c_ms < <(traced deferred -O userstacktrace_delay)

events=$((calls * 2))
a_ev=$(count nostack 'sys_e[a-z]*_getppid:')
b_ev=$(count userstack 'sys_e[a-z]*_getppid:')
b_unw=$(count userstack 'user_stack:')
c_ev=$(count deferred 'sys_e[a-z]*_getppid:')
c_unw=$(count deferred 'user_unwind_stack:')
lost=$(grep -o '[0-9]* records lost' "$work/deferred.err" | head -1)

per() { echo "scale=1; ($1 - $base) / $2" | bc; }
printf 'workload: %d getppid() calls, 12 frames deep; bare loop %.1f ms\n' "$calls" "$(echo "$base / 1000000" | bc -l)"
printf '%-34s %10s %12s %10s %9s\n' mode "loop ms" "ns/event" "run ms" "unwinds"
printf '%-34s %10.1f %12s %10d %9d\n' "(a) no stacks" "$(echo "$a_ns/1000000" | bc -l)" "$(per "$a_ns" "$events")" "$a_ms" 0
printf '%-34s %10.1f %12s %10d %9d\n' "(b) ftrace userstacktrace" "$(echo "$b_ns/1000000" | bc -l)" "$(per "$b_ns" "$events")" "$b_ms" "$b_unw"
printf '%-34s %10.1f %12s %10d %9d\n' "(c) ustitch deferred (BPF)" "$(echo "$c_ns/1000000" | bc -l)" "$(per "$c_ns" "$events")" "$c_ms" "$c_unw"
printf 'ratios: loop time (b)/(a) %.2f, (c)/(a) %.2f, (c)/(b) %.2f\n' \
	"$(echo "$b_ns/$a_ns" | bc -l)" "$(echo "$c_ns/$a_ns" | bc -l)" "$(echo "$c_ns/$b_ns" | bc -l)"
printf 'events/unwinds: (b) %.2f, (c) %.2f   (events recorded of %d: %d, %d, %d)\n' \
	"$(echo "$b_ev/$b_unw" | bc -l)" "$(echo "$c_ev/$c_unw" | bc -l)" "$events" "$a_ev" "$b_ev" "$c_ev"
[ -n "$lost" ] && echo "BPF ring buffer: $lost"
exit 0
