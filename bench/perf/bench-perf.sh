#!/bin/bash
# Sampling benchmark: a fixed CPU-bound workload (12 frames deep) run bare
# and under `ustitch record -e cpu-clock` at 999 Hz and 10 kHz with
#   (a) no callchain,
#   (b) perf's immediate user callchain (--call-graph fp: PERF_SAMPLE_CALLCHAIN
#       unwinding the user stack in the interrupt),
#   (c) deferred user stacks made by BPF (perf_event program: at the sample
#       when it interrupted user code, else at the system call's exit or by task_work;
#       without task_work, -g falls back to (b)),
# and `perf record -e cpu-clock -g` on the same workload as the anchor.
# Overhead = loop time over the bare loop; one run each, ratios printed.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
iters=${UST_BENCH_ITERS:-400000000}
work=$(mktemp -d /tmp/ustitch-bench-perf.XXXXXX)
trap 'rm -rf "$work"' EXIT

wall() { awk '{ print $1 }' "$1"; }
cpu() { awk '{ print $2 }' "$1"; }
bare() { "$UST_WORKLOAD" "$iters" >"$work/bare.out"; wall "$work/bare.out"; }
samples() { grep -o 'perf: [0-9]* samples' "$1" | awk '{ print $2 }'; }

run() {	# run NAME FREQ [ustitch options]: "wall_ns cpu_ns samples unwinds"
	local name=$1 f=$2; shift 2
	"$UST_USTITCH" record -v -o "$work/$name.dat" -e cpu-clock -F "$f" "$@" -- \
		"$UST_WORKLOAD" "$iters" >"$work/$name.out" 2>"$work/$name.err"
	echo "$(wall "$work/$name.out") $(cpu "$work/$name.out") $(samples "$work/$name.err")" \
	     "$(grep -o '[0-9]* user stacks written' "$work/$name.err" | awk '{ print $1 }')"
}

perf_ok=0
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$work/probe.data" -- true 2>/dev/null; then
	perf_ok=1
fi
run_perf() {	# run_perf FREQ: "wall_ns cpu_ns samples"
	perf record -e cpu-clock -F "$1" -g -o "$work/perf.data" -- "$UST_WORKLOAD" "$iters" \
		>"$work/perf.out" 2>"$work/perf.err"
	echo "$(wall "$work/perf.out") $(cpu "$work/perf.out") $(grep -o '([0-9]* samples)' "$work/perf.err" | tr -d '()' | awk '{ print $1 }')"
}

b1=$(bare); b2=$(bare); b3=$(bare)
base=$(printf '%s\n' "$b1" "$b2" "$b3" | sort -n | head -1)
printf 'workload: %d iterations 12 frames deep; bare loop %.1f ms (best of 3); %d CPUs\n' \
	"$iters" "$(echo "$base / 1000000" | bc -l)" "$(nproc)"
printf '%-40s %9s %9s %9s %8s %9s %10s\n' mode "loop ms" "cpu ms" overhead samples unwinds "us/sample"
row() {	# row LABEL wall cpu samples unwinds
	local ov us
	ov=$(echo "($2 - $base) * 100 / $base" | bc -l)
	us=$( [ "${4:-0}" -gt 0 ] && echo "($2 - $base) / $4 / 1000" | bc -l || echo 0)
	printf '%-40s %9.1f %9.1f %8.1f%% %8s %9s %10.2f\n' "$1" "$(echo "$2/1000000" | bc -l)" \
		"$(echo "$3/1000000" | bc -l)" "$ov" "${4:--}" "${5:--}" "$us"
}
for f in 999 10000; do
	read -r aw ac as _ < <(run a$f "$f")
	read -r bw bc_ bs bu < <(run b$f "$f" -g --call-graph fp)
	read -r cw cc cs cu < <(run c$f "$f" -g)
	row "$f Hz (a) no callchain" "$aw" "$ac" "$as" ""
	row "$f Hz (b) perf immediate user callchain" "$bw" "$bc_" "$bs" "$bu"
	row "$f Hz (c) deferred, BPF" "$cw" "$cc" "$cs" "$cu"
	if [ $perf_ok = 1 ]; then
		read -r pw pc ps < <(run_perf "$f")
		row "$f Hz perf record -g (anchor)" "$pw" "$pc" "$ps" ""
		printf '%s Hz ratios of loop time: (b)/(a) %.3f, (c)/(a) %.3f, (c)/(b) %.3f, (c)/perf %.3f\n' \
			"$f" "$(echo "$bw/$aw" | bc -l)" "$(echo "$cw/$aw" | bc -l)" "$(echo "$cw/$bw" | bc -l)" \
			"$(echo "$cw/$pw" | bc -l)"
	else
		printf '%s Hz ratios of loop time: (b)/(a) %.3f, (c)/(a) %.3f, (c)/(b) %.3f (perf unusable here)\n' \
			"$f" "$(echo "$bw/$aw" | bc -l)" "$(echo "$cw/$aw" | bc -l)" "$(echo "$cw/$bw" | bc -l)"
	fi
	grep -h "BPF:\|records lost" "$work/c$f.err" | sed "s/^ustitch record: perf: /$f Hz (c): /"
done
exit 0
