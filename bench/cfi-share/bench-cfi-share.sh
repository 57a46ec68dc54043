#!/bin/bash
# CFI benchmark: the share of real programs' user stacks that reach the
# bottom (__libc_start_call_main, or start_thread/clone3 in a thread, or
# _dl_start for the dynamic loader's own calls before main), for
# `ustitch record -O userstacktrace_delay` (deferred stacks, walked in BPF)
# and for `perf record --call-graph dwarf` (8 KiB stack copy, unwound
# afterwards with libdw: the anchor), side by side per program.  Debian 12's
# binaries have no frame pointers.  Prints figures, asserts nothing.
# One tracepoint per perf run (perf 6.1 gives one frame per event with two).
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v perf >/dev/null || { echo "skip: no perf"; exit 77; }
work=$(mktemp -d /tmp/ustitch-bench-cfi.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The Debian programs (debian_progs, cmd_of, debian_inputs, debian_bottom),
# as live-cfi-debian runs them.
. "$UST_CFI_DEBIAN_PROGS"
debian_inputs

# share FILE: "events reaching" of a file of "... chain" lines (chain last).
share() { awk -v re="$debian_bottom" '{ n++; if ($NF ~ re) r++ } END { print n + 0, r + 0 }' "$1"; }
pct() { [ "$1" -gt 0 ] && echo "scale=1; 100 * $2 / $1" | bc || echo -; }

ust() {	# ust NAME EVENT CMD...
	"$UST_USTITCH" record -q -b 8192 -O userstacktrace_delay -e "syscalls:sys_enter_$2" \
		-o "$work/$1.dat" -- "${@:3}" >/dev/null 2>"$work/$1.err" || return
	env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report "$work/$1.dat" 2>/dev/null |
		awk -f "$UST_CFI_CHAINS" >"$work/$1.ust"
	share "$work/$1.ust"
}
perf_dwarf() {	# perf_dwarf NAME EVENT CMD...
	# The command runs directly: perf 6.1 unwinds one frame only for a
	# program that a shell exec()ed.
	perf record -q -o "$work/$1.perf" --call-graph dwarf -e "syscalls:sys_enter_$2" \
		-- "${@:3}" >/dev/null 2>"$work/$1.perf.err" || return
	perf script -i "$work/$1.perf" -F ip,sym --no-inline 2>/dev/null |
		awk 'NF == 0 { if (c != "") print c; c = ""; next } { s = $2; sub(/@.*/, "", s); c = c (c == "" ? "" : ";") s }
		     END { if (c != "") print c }' >"$work/$1.perfchains"
	share "$work/$1.perfchains"
}

printf '%-8s %-11s | %8s %8s %7s | %8s %8s %7s\n' program event "ust ev" reach "ust %" "perf ev" reach "perf %"
for p in $debian_progs; do
	name=${p%%:*} ev=${p#*:}
	cmd_of "$name"
	read -r un ur < <(ust "$name" "$ev" "${cmd[@]}" || echo 0 0)
	read -r pn pr < <(perf_dwarf "$name" "$ev" "${cmd[@]}" || echo 0 0)
	printf '%-8s %-11s | %8d %8d %7s | %8d %8d %7s\n' "$name" "$ev" "$un" "$ur" "$(pct "$un" "$ur")" \
		"$pn" "$pr" "$(pct "$pn" "$pr")"
done
echo "reach: stacks whose bottom frames reach __libc_start_call_main (or start_thread/clone3)"

# Table memory for a process like python3: the rows its files took in the
# BPF map (16 bytes each), from the recorder's summary; cold (tables built)
# and warm (from the disk cache).
cmd_of python3
for run in cold warm; do
	[ "$run" = cold ] && export USTITCH_CACHE_DIR="$work/cache"
	"$UST_USTITCH" record -v -b 8192 -O userstacktrace_delay -e syscalls:sys_enter_write \
		-o "$work/py-$run.dat" -- "${cmd[@]}" >/dev/null 2>"$work/py-$run.err"
	line=$(grep -o 'unwind tables: .*' "$work/py-$run.err")
	rows=$(echo "$line" | sed -n 's/.*(\([0-9]*\) rows of.*/\1/p')
	printf 'python3 (%s): %s; %.2f MiB of rows\n' "$run" "$line" "$(echo "${rows:-0} * 16 / 1048576" | bc -l)"
done
exit 0
