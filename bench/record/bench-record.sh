#!/bin/bash
# Recorder benchmark: the same workload (N getppid() calls, 12 and 40
# frames deep, built with frame pointers so that every walk can reach the
# bottom) run bare and under `ustitch record` with (a) no stacks, (b)
# ftrace's userstacktrace (at most 8 frames, never faulting), (c) deferred
# stacks walked by CFI tables (the default), (d) deferred stacks walked by
# frame pointers only (--unwind fp).  Per-event cost = (traced loop time -
# bare loop time) / events; events/unwinds says how many events one
# captured stack served.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
calls=${UST_BENCH_CALLS:-200000}
work=$(mktemp -d /tmp/ustitch-bench-rec.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Buffers large enough that no event is lost: lost events would make the
# traced runs look cheaper than they are.
ev="-b 65536 -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid"

loop_ns() { awk '{ print $1 }' "$1"; }
bare() { "$UST_WORKLOAD" "$calls" "$1" >"$work/bare.out"; loop_ns "$work/bare.out"; }
traced() {	# traced NAME EXTRA OPTIONS...
	local name=$1 extra=$2 s e; shift 2
	s=$(date +%s%N)
	# shellcheck disable=SC2086
	"$UST_USTITCH" record -o "$work/$name.dat" $ev "$@" -- "$UST_WORKLOAD" "$calls" "$extra" \
		>"$work/$name.out" 2>"$work/$name.err"
	e=$(date +%s%N)
	echo "$(loop_ns "$work/$name.out") $(( (e - s) / 1000000 ))"
}
count() { trace-cmd report "$work/$1.dat" 2>/dev/null | grep -c "$2"; }
frames() {	# frames NAME: frames of the first stack
	TRACEEVENT_PLUGIN_DIR=${UST_PLUGIN_DIR:-} trace-cmd report "$work/$1.dat" 2>/dev/null |
		grep -m1 -o 'user stack unwind, [0-9]* frames[^>]*' | sed 's/user stack unwind, //'
}

events=$((calls * 2))
per() { echo "scale=1; ($1 - $2) / $3" | bc; }
for depth in 12 40; do
	extra=$((depth - 12))
	# Best of three for the bare loop: it is the smallest number here.
	b1=$(bare "$extra"); b2=$(bare "$extra"); b3=$(bare "$extra")
	base=$(printf '%s\n' "$b1" "$b2" "$b3" | sort -n | head -1)
	read -r a_ns a_ms < <(traced "nostack$depth" "$extra")
	read -r b_ns b_ms < <(traced "userstack$depth" "$extra" -O userstacktrace)
	read -r c_ns c_ms < <(traced "cfi$depth" "$extra" -O userstacktrace_delay)
	read -r d_ns d_ms < <(traced "fp$depth" "$extra" -O userstacktrace_delay --unwind fp)
	b_unw=$(count "userstack$depth" 'user_stack:')
	c_unw=$(count "cfi$depth" 'user_unwind_stack:')
	d_unw=$(count "fp$depth" 'user_unwind_stack:')
	printf '\nworkload: %d getppid() calls, %d frames deep; bare loop %.1f ms\n' "$calls" "$depth" \
		"$(echo "$base / 1000000" | bc -l)"
	printf '%-40s %10s %10s %8s %9s  %s\n' mode "loop ms" "ns/event" "run ms" "unwinds" "first stack"
	printf '%-40s %10.1f %10s %8d %9d\n' "(a) no stacks" "$(echo "$a_ns/1000000" | bc -l)" \
		"$(per "$a_ns" "$base" "$events")" "$a_ms" 0
	printf '%-40s %10.1f %10s %8d %9d  %s\n' "(b) ftrace userstacktrace" "$(echo "$b_ns/1000000" | bc -l)" \
		"$(per "$b_ns" "$base" "$events")" "$b_ms" "$b_unw" "at most 8 frames"
	printf '%-40s %10.1f %10s %8d %9d  %s\n' "(c) ustitch deferred, CFI" "$(echo "$c_ns/1000000" | bc -l)" \
		"$(per "$c_ns" "$base" "$events")" "$c_ms" "$c_unw" "$(frames "cfi$depth")"
	printf '%-40s %10.1f %10s %8d %9d  %s\n' "(d) ustitch deferred, frame pointers" "$(echo "$d_ns/1000000" | bc -l)" \
		"$(per "$d_ns" "$base" "$events")" "$d_ms" "$d_unw" "$(frames "fp$depth")"
	printf 'ratios at %d frames, per event over (b): CFI %.2f, frame pointers %.2f; CFI over frame pointers %.2f\n' \
		"$depth" "$(echo "($c_ns - $base)/($b_ns - $base)" | bc -l)" \
		"$(echo "($d_ns - $base)/($b_ns - $base)" | bc -l)" \
		"$(echo "($c_ns - $base)/($d_ns - $base)" | bc -l)"
	printf 'events/unwinds: (b) %.2f, (c) %.2f, (d) %.2f\n' "$(echo "$events/$b_unw" | bc -l)" \
		"$(echo "$events/$c_unw" | bc -l)" "$(echo "$events/$d_unw" | bc -l)"
	lost=$(grep -ho '[0-9]* records lost' "$work/cfi$depth.err" "$work/fp$depth.err" | head -1)
	[ -n "$lost" ] && echo "BPF ring buffer: $lost"
done
exit 0
