#!/bin/bash
# Recorder benchmark: the same workload (N getppid() calls, 12 and 40
# frames deep, built with frame pointers so that every walk can reach the
# bottom) run bare and under `ustitch record` with (a) no stacks, (b)
# ftrace's userstacktrace (at most 8 frames, never faulting), (c) deferred
# stacks walked by CFI tables (the default), (d) deferred stacks walked by
# frame pointers only (--unwind fp), (e) as (c) with no two stacks in a
# row alike (every other call by syscall(2)), so that no walk can reuse the
# task's last one: the cost of the walk itself.  Per-event cost = (traced loop time -
# bare loop time) / events, in the loop's CPU time (what tracing costs the
# traced task, whatever else the machine runs: the ratios hold on a busy
# machine) and in its wall time; best of three runs each, the modes taking
# turns (UST_BENCH_RUNS rounds).  events/unwinds
# says how many events one captured stack served.  The recorder's own CPU
# time (everything `ustitch record` used but the loop) is the price paid
# on the other CPUs.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
calls=${UST_BENCH_CALLS:-200000}
runs=${UST_BENCH_RUNS:-3}
work=$(mktemp -d /tmp/ustitch-bench-rec.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Buffers large enough that no event is lost: lost events would make the
# traced runs look cheaper than they are.
ev="-b 65536 -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null)" = 1 ] &&
	echo "note: kernel.bpf_stats_enabled is 1: two clock reads more per BPF program run in (c) and (d)"

# best: of lines "cpu_ns wall_ns [rest]", the one with the least CPU time
best() { sort -n | head -1; }
bare() {	# bare "EXTRA [alt]": "cpu_ns wall_ns" of one run
	# shellcheck disable=SC2086
	"$UST_WORKLOAD" "$calls" $1 | awk '{ print $3, $1 }'
}
traced() {	# traced NAME "EXTRA [alt]" OPTIONS...: "cpu_ns wall_ns recorder_cpu_ms" of one run
	local name=$1 extra=$2; shift 2
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S' -o "$work/$name.time" "$UST_USTITCH" record -v -o "$work/$name.dat" \
		$ev "$@" -- "$UST_WORKLOAD" "$calls" $extra >"$work/$name.out" 2>"$work/$name.err"
	# user + system of the recorder and its command, less the loop's
	awk -v t="$(tail -1 "$work/$name.time")" '{ split(t, a, " ");
		printf "%d %d %d\n", $3, $1, (a[1] + a[2]) * 1000 - $3 / 1e6 }' "$work/$name.out"
}
# rounds DEPTH: $runs rounds of every mode, one run each in turn (a slow
# minute of this VM then falls on all modes, not on one mode's runs), each
# line into $work/MODE.lines; the best of each is read back by pick MODE.
rounds() {
	local extra=$(($1 - 12)) i
	rm -f "$work"/*.lines
	for i in $(seq "$runs"); do
		bare "$extra" >>"$work/base.lines"
		traced "nostack$1" "$extra" >>"$work/a.lines"
		traced "userstack$1" "$extra" -O userstacktrace >>"$work/b.lines"
		traced "cfi$1" "$extra" -O userstacktrace_delay >>"$work/c.lines"
		traced "fp$1" "$extra" -O userstacktrace_delay --unwind fp >>"$work/d.lines"
		bare "$extra alt" >>"$work/alt.lines"
		traced "alt$1" "$extra alt" -O userstacktrace_delay >>"$work/e.lines"
	done
}
pick() { best <"$work/$1.lines"; }
reused() {	# reused NAME: stacks the recorder says were the last walk again
	local n
	n=$(sed -n 's/.*last walk, every stack word it read unchanged: //p' "$work/$1.err")
	echo "${n:-0}"
}
count() { trace-cmd report "$work/$1.dat" 2>/dev/null | grep -c "$2"; }
frames() {	# frames NAME: frames of the first stack
	TRACEEVENT_PLUGIN_DIR=${UST_PLUGIN_DIR:-} trace-cmd report "$work/$1.dat" 2>/dev/null |
		grep -m1 -o 'user stack unwind, [0-9]* frames[^>]*' | sed 's/user stack unwind, //'
}

events=$((calls * 2))
per() { echo "scale=1; ($1 - $2) / $3" | bc; }
ratio() { echo "($1 - $3) / ($2 - $3)" | bc -l; }
for depth in 12 40; do
	rounds "$depth"
	read -r base_c base_w < <(pick base)
	read -r a_c a_w a_r < <(pick a)
	read -r b_c b_w b_r < <(pick b)
	read -r c_c c_w c_r < <(pick c)
	read -r d_c d_w d_r < <(pick d)
	read -r alt_c alt_w < <(pick alt)
	read -r e_c e_w e_r < <(pick e)
	b_unw=$(count "userstack$depth" 'user_stack:')
	c_unw=$(count "cfi$depth" 'user_unwind_stack:')
	d_unw=$(count "fp$depth" 'user_unwind_stack:')
	printf '\nworkload: %d getppid() calls, %d frames deep; bare loop %.1f ms CPU, %.1f ms wall\n' \
		"$calls" "$depth" "$(echo "$base_c / 1000000" | bc -l)" "$(echo "$base_w / 1000000" | bc -l)"
	printf '%-40s %12s %13s %12s %9s  %s\n' mode "ns/event CPU" "ns/event wall" "recorder ms" \
		"unwinds" "first stack"
	printf '%-40s %12s %13s %12d %9d\n' "(a) no stacks" "$(per "$a_c" "$base_c" "$events")" \
		"$(per "$a_w" "$base_w" "$events")" "$a_r" 0
	printf '%-40s %12s %13s %12d %9d  %s\n' "(b) ftrace userstacktrace" \
		"$(per "$b_c" "$base_c" "$events")" "$(per "$b_w" "$base_w" "$events")" "$b_r" "$b_unw" \
		"at most 8 frames"
	printf '%-40s %12s %13s %12d %9d  %s\n' "(c) ustitch deferred, CFI" \
		"$(per "$c_c" "$base_c" "$events")" "$(per "$c_w" "$base_w" "$events")" "$c_r" "$c_unw" \
		"$(frames "cfi$depth")"
	printf '%-40s %12s %13s %12d %9d  %s\n' "(d) ustitch deferred, frame pointers" \
		"$(per "$d_c" "$base_c" "$events")" "$(per "$d_w" "$base_w" "$events")" "$d_r" "$d_unw" \
		"$(frames "fp$depth")"
	printf '%-40s %12s %13s %12d %9s  %s\n' "(e) deferred, CFI, no two stacks alike" \
		"$(per "$e_c" "$alt_c" "$events")" "$(per "$e_w" "$alt_w" "$events")" "$e_r" "-" \
		"$(frames "alt$depth")"
	printf 'ratios at %d frames, per event over (b), CPU: CFI %.2f, frame pointers %.2f, CFI without reuse %.2f; wall: %.2f, %.2f, %.2f\n' \
		"$depth" "$(ratio "$c_c" "$b_c" "$base_c")" "$(ratio "$d_c" "$b_c" "$base_c")" \
		"$(echo "($e_c - $alt_c) / ($b_c - $base_c)" | bc -l)" \
		"$(ratio "$c_w" "$b_w" "$base_w")" "$(ratio "$d_w" "$b_w" "$base_w")" \
		"$(echo "($e_w - $alt_w) / ($b_w - $base_w)" | bc -l)"
	printf 'stacks that were their task'"'"'s last walk again: (c) %d, (e) %d\n' \
		"$(reused "cfi$depth")" "$(reused "alt$depth")"
	printf 'events/unwinds: (b) %.2f, (c) %.2f, (d) %.2f\n' "$(echo "$events/$b_unw" | bc -l)" \
		"$(echo "$events/$c_unw" | bc -l)" "$(echo "$events/$d_unw" | bc -l)"
	lost=$(grep -ho '[0-9]* records lost' "$work/cfi$depth.err" "$work/fp$depth.err" | head -1)
	[ -n "$lost" ] && echo "BPF ring buffer: $lost"
done
exit 0
