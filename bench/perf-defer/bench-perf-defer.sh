#!/bin/bash
# Sampling Debian's own binaries (stripped, no frame pointers) at 999 Hz,
# three ways, side by side in one run:
#   kernel   ustitch record -g --call-graph defer: perf's own deferred
#            callchains (6.19+: the kernel's unwinder, frame pointers only);
#   default  ustitch record -g: the BPF CFI walk at the return to user space
#            where BPF can defer, else as `ustitch probe` says;
#   dwarf    perf record --call-graph dwarf: 8 KiB of stack per sample,
#            unwound by perf script (libdw): the anchor for completeness.
# Per program and way: samples, the share whose user stack reaches the
# bottom (__libc_start_call_main, or start_thread/clone3 in a thread), CPU
# per sample while recording (recorder and program together, over the
# program run bare), bytes per sample, and the report's CPU per sample
# (trace-cmd report with the plugin, perf script).  Figures, no asserts.
#
# Run it where the kernel defers (Debian's 7.3 under QEMU):
#   UST_VM_TESTS=bench/perf-defer/vm-7.3.txt meson test -C build vm-7.3 -v
# or here: meson test -C build --benchmark perf-defer -v (no kernel rows
# before 6.19).  UST_BENCH_SCALE divides the inputs (the guest uses 4).
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
work=$(mktemp -d /tmp/ustitch-bench-defer.XXXXXX)
trap 'rm -rf "$work"' EXIT
scale=${UST_BENCH_SCALE:-1}
# debian_bottom: the bottom frames of a complete stack (one definition).
# shellcheck source=tests/live/cfi/debian-progs.sh
. "$UST_CFI_DEBIAN_PROGS"
# shellcheck source=bench/stacks-lib.sh
# cpu_of, ust_chains, perf_chains, share, report_cpu.
. "${BASH_SOURCE%/*}/../stacks-lib.sh"

find /usr/share /usr/lib/python3 -type f 2>/dev/null | head -n $((120000 / scale)) >"$work/list"
for _ in 1 2 3 4 5 6 7 8; do cat "$work/list"; done | head -c $((14000000 / scale)) >"$work/big"
cmd_of() {
	case $1 in
	gzip) cmd=(/usr/bin/gzip -9 -c "$work/big") ;;
	xz) cmd=(/usr/bin/xz -6 -T1 -c "$work/big") ;;
	sort) cmd=(/usr/bin/sort -S 256M "$work/big") ;;
	python3) cmd=(/usr/bin/python3 -c "import json
d = [{'k': i, 'v': [str(j) for j in range(20)], 's': 'x' * (i % 50)} for i in range($((40000 / scale)))]
for _ in range(6): json.loads(json.dumps(d))") ;;
	esac
}
progs="gzip xz sort python3"

ust_ok=1
kernel_ok=0
"$UST_USTITCH" probe --no-verify 2>/dev/null | grep -q "^record --call-graph defer: .*deferred by the kernel" &&
	kernel_ok=1
dwarf_ok=0
command -v perf >/dev/null && perf record -q -e cpu-clock -o "$work/p.data" -- true 2>/dev/null && dwarf_ok=1
echo "kernel $(uname -r); $(nproc) CPUs; ustitch -g: $("$UST_USTITCH" probe --no-verify 2>/dev/null |
	sed -n 's/^record -g: user stacks //p')"

# A way's fixed cost: recording /bin/true (loading BPF, the trace's
# headers and kernel symbols), taken off before dividing by the samples.
declare -A fix_cpu fix_bytes
fixed() {	# fixed WAY
	local t=(/bin/true)
	case $1 in
	kernel | default)
		local cg=()
		[ "$1" = kernel ] && cg=(--call-graph defer)
		fix_cpu[$1]=$(cpu_of "$UST_USTITCH" record -q -o "$work/fix.dat" -e cpu-clock -F 999 -g \
			"${cg[@]}" -- "${t[@]}")
		fix_bytes[$1]=$(stat -c %s "$work/fix.dat")
		;;
	dwarf)
		fix_cpu[$1]=$(cpu_of perf record -q -o "$work/fix.perf" -e cpu-clock -F 999 --call-graph dwarf \
			-- "${t[@]}")
		fix_bytes[$1]=$(stat -c %s "$work/fix.perf")
		;;
	esac
}
ways=()
((kernel_ok)) && ways+=(kernel)
((ust_ok)) && ways+=(default)
((dwarf_ok)) && ways+=(dwarf)
for way in "${ways[@]}"; do
	fixed "$way"
	printf 'fixed cost of %-8s %.3f s CPU, %d bytes (recording /bin/true)\n' "$way" "${fix_cpu[$way]}" \
		"${fix_bytes[$way]}"
done

printf '%-8s %-8s %8s %8s %7s %9s %10s %9s %10s\n' program way samples reach "reach%" \
	"rec x" "rec us/s" "bytes/s" "rep us/s"
row() {	# row PROG WAY SAMPLES REACH REC_CPU BARE_CPU BYTES REP_CPU
	local n=$3 w=$2
	if [ "$n" -eq 0 ]; then
		printf '%-8s %-8s %8s\n' "$1" "$2" "no samples"
		return
	fi
	printf '%-8s %-8s %8d %8d %6.1f%% %9.2f %10.1f %9.0f %10.1f\n' "$1" "$2" "$n" "$4" \
		"$(echo "100 * $4 / $n" | bc -l)" "$(echo "$5 / $6" | bc -l)" \
		"$(echo "($5 - $6 - ${fix_cpu[$w]}) * 1000000 / $n" | bc -l)" \
		"$(echo "($7 - ${fix_bytes[$w]}) / $n" | bc -l)" "$(echo "$8 * 1000000 / $n" | bc -l)"
}

for prog in $progs; do
	cmd_of "$prog"
	bare=$(cpu_of "${cmd[@]}")
	b2=$(cpu_of "${cmd[@]}")
	bare=$(printf '%s\n' "$bare" "$b2" | sort -n | head -1)
	for way in "${ways[@]}"; do
		case $way in
		kernel | default)
			cg=()
			[ "$way" = kernel ] && cg=(--call-graph defer)
			rec=$(cpu_of "$UST_USTITCH" record -q -o "$work/$prog.$way.dat" -e cpu-clock -F 999 -g \
				"${cg[@]}" -- "${cmd[@]}")
			read -r n r < <(ust_chains "$work/$prog.$way.dat" "^$prog\$" | share)
			rep=$(report_cpu trace-cmd report "$work/$prog.$way.dat")
			bytes=$(stat -c %s "$work/$prog.$way.dat")
			;;
		dwarf)
			rec=$(cpu_of perf record -q -o "$work/$prog.perf" -e cpu-clock -F 999 --call-graph dwarf \
				-- "${cmd[@]}")
			read -r n r < <(perf_chains "$work/$prog.perf" "^$prog\$" | share)
			rep=$(report_cpu perf script -i "$work/$prog.perf")
			bytes=$(stat -c %s "$work/$prog.perf")
			;;
		esac
		row "$prog" "$way" "$n" "$r" "$rec" "$bare" "$bytes" "$rep"
	done
done
echo "reach: user stacks whose bottom frames reach __libc_start_call_main (or start_thread/clone3)"
echo "rec x: recording CPU (recorder + program) over the program's own; rec us/s: the same less the"
echo "program's and the way's fixed cost, per sample; bytes/s: trace file less the fixed bytes, per"
echo "sample; rep us/s: report CPU per sample (trace-cmd report + plugin, perf script)"
