#!/bin/bash
# ustitch record -g against perf record --call-graph dwarf (8 KiB of stack
# per sample, the anchor) and perf record -g (frame pointers), side by side
# in one run, on Debian's own binaries (stripped, no frame pointers):
#   sampled by cpu-clock at 999 Hz and 10 kHz: a python3 JSON workload,
#     xz -9, sqlite3 with a recursive query, g++ -O2 of a small C++ file;
#   on system calls (sys_enter_write and sys_enter_read): tar, gzip, sort;
#     ustitch records them with -O userstacktrace_delay (its -g is for
#     sampling events).
# Per program, rate and way:
#   samples    samples (events) of the program with a user stack read;
#   reach%     the share whose user frames reach the bottom
#              (__libc_start_call_main, or start_thread/clone3 in a thread);
#   prog x     the program's CPU while recorded over its CPU run bare; each
#              is its own getrusage() (self and waited-for children: g++'s
#              cc1plus and as) at exit, written by rusage-at-exit.so
#              (LD_PRELOAD), so no wrapper process stands between recorder
#              and program;
#   rec s      the recorder's own CPU: the recorder's getrusage() at exit
#              (self + children) less the program's; of the best of five
#              recordings (the least recorder + program CPU), the three
#              ways taking turns;
#   rec us/s   recording cost per sample: the recorder's CPU plus what the
#              program spent over bare, less the way's fixed cost;
#   bytes/s    trace file bytes less the way's fixed bytes, per sample;
#   rep us/s   report CPU per sample: trace-cmd report with the plugin
#              (ustitch), perf script --no-inline (perf), both printing
#              every stack, function names only;
#   rep MiB    the report's peak RSS.
# Fixed costs (recording /bin/true) are printed apart.  Then per program
# and rate: ustitch's (rec + rep) per sample over perf dwarf's (issue 29's
# goal: <= 0.3) and over whole runs; its whole run over perf -g's (issue
# 38's goal: <= 1.3, with stacks as complete as perf dwarf's: the reach%
# column); its bytes per sample over perf dwarf's as written by default,
# compressed (goal <= 0.05), and with --compression none.  Figures, no
# asserts.
#   meson test -C build --benchmark dwarf -v
# UST_BENCH_SCALE divides the inputs; UST_BENCH_DWARF_PROGS (default
# "python3 xz sqlite3 g++ tar gzip sort") and UST_BENCH_DWARF_RATES
# (default "999 10000") choose some; UST_BENCH_DWARF_TRIES (default 5):
# recordings per way, program and rate, the best kept (and bare runs).
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
[ -x /usr/bin/perf ] || { echo "skip: no /usr/bin/perf (linux-perf)"; exit 77; }
work=$(mktemp -d /tmp/ustitch-bench-dwarf.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/perf record -q -e cpu-clock -o "$work/p.data" -- /bin/true 2>/dev/null ||
	{ echo "skip: perf record -e cpu-clock fails here"; exit 77; }
scale=${UST_BENCH_SCALE:-1}
progs=${UST_BENCH_DWARF_PROGS:-python3 xz sqlite3 g++ tar gzip sort}
rates=${UST_BENCH_DWARF_RATES:-999 10000}
tries=${UST_BENCH_DWARF_TRIES:-5}
# debian_bottom: the bottom frames of a complete stack (one definition).
# shellcheck source=tests/live/cfi/debian-progs.sh
. "$UST_CFI_DEBIAN_PROGS"
# shellcheck source=bench/stacks-lib.sh
# ust_sample_chains, perf_script_chains, share.
. "${BASH_SOURCE%/*}/../stacks-lib.sh"
perf=/usr/bin/perf

find /usr/share /usr/lib/python3 -type f 2>/dev/null | head -n $((60000 / scale)) >"$work/list"
for _ in 1 2 3 4; do cat "$work/list"; done | head -c $((6000000 / scale)) >"$work/big"
head -c $((700000 / scale)) "$work/big" >"$work/xzin"
cat >"$work/small.cc" <<'EOF'
#include <algorithm>
#include <map>
#include <string>
#include <vector>
int main(int argc, char **argv) {
	std::map<std::string, std::vector<int>> rows;
	for (int i = 1; i < argc; i++) rows[argv[i]].push_back(i);
	std::vector<std::string> keys;
	for (const auto &r : rows) keys.push_back(r.first);
	std::sort(keys.begin(), keys.end());
	return (int)keys.size();
}
EOF

cmd_of() {	# cmd_of PROG: sets cmd=(...), comm (a regex of its tasks' names), mode
	mode=sample
	comm="^$1\$"
	case $1 in
	python3) cmd=(/usr/bin/python3 -c "import json
d = [{'k': i, 'v': [str(j) for j in range(20)], 's': 'x' * (i % 50)} for i in range($((10000 / scale)))]
for _ in range(4): json.loads(json.dumps(d))") ;;
	xz) cmd=(/usr/bin/xz -9 -T1 -c "$work/xzin") ;;
	sqlite3) cmd=(/usr/bin/sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
WHERE x < $((700000 / scale))) SELECT count(*), sum(x * x % 7), max(length(printf('%x', x))) FROM c;") ;;
	g++)
		cmd=(/usr/bin/g++ -O2 -c -o "$work/small.o" "$work/small.cc")
		comm='^(g\+\+|cc1plus|as)$'
		;;
	# to a file: GNU tar reads no file contents for an archive on /dev/null
	tar) mode=syscall cmd=(/usr/bin/tar cf "$work/t.tar" -C /usr/lib python3.11/json python3.11/email python3.11/asyncio) ;;
	gzip) mode=syscall cmd=(/usr/bin/gzip -1 -c "$work/big") ;;
	sort) mode=syscall cmd=(/usr/bin/sort -S 256M "$work/list") ;;
	*) echo "unknown program $1" >&2; return 1 ;;
	esac
}

# rusage FILE COMM_RE [bare]: "RECORDER_US PROGRAM_US" from rusage-at-exit.so's
# lines: the top process is the one whose parent wrote none: the recorder,
# whose child of a matching name is the program; or, bare, the program.
rusage() {
	awk -v c="$2" -v bare="${3:-}" '{ pid[NR] = $1; ppid[NR] = $2; name[NR] = $3; tot[NR] = $4 + $5; seen[$1] = 1 }
		END {
			for (i = 1; i <= NR; i++) if (!(ppid[i] in seen)) top = i
			if (bare != "") { print 0, tot[top]; exit }
			for (i = 1; i <= NR; i++) if (ppid[i] == pid[top] && name[i] ~ c) p += tot[i]
			print tot[top] - p, p
		}' "$1"
}
# run_rusage FILE CMD...: runs CMD with rusage-at-exit.so writing to FILE.
run_rusage() {
	rm -f "$1"
	env LD_PRELOAD="$UST_RUSAGE_AT_EXIT" UST_BENCH_RUSAGE="$1" "${@:2}" >/dev/null 2>>"$work/err"
}

# record WAY RATE OUT CMD...: records CMD one way (RATE "-": system calls).
record() {
	local way=$1 rate=$2 out=$3 ev
	shift 3
	if [ "$rate" = - ]; then
		# shellcheck disable=SC2054  # perf's list of events has commas
		case $way in
		ustitch) ev=(-O userstacktrace_delay -e syscalls:sys_enter_write -e syscalls:sys_enter_read) ;;
		*) ev=(-e syscalls:sys_enter_write,syscalls:sys_enter_read) ;;
		esac
	else
		ev=(-e cpu-clock -F "$rate")
		[ "$way" = ustitch ] && ev+=(-g)
	fi
	case $way in
	ustitch) run_rusage "$out.rus" "$UST_USTITCH" record -q -o "$out" "${ev[@]}" -- "$@" ;;
	dwarf) run_rusage "$out.rus" "$perf" record -q -o "$out" "${ev[@]}" --call-graph dwarf -- "$@" ;;
	fp) run_rusage "$out.rus" "$perf" record -q -o "$out" "${ev[@]}" -g -- "$@" ;;
	esac
}
# report WAY FILE: "CPU_S PEAK_RSS_KB" of the report a user reads, its
# output in $work/rep.out: trace-cmd report with the plugin; perf script
# --no-inline (function names as the plugin prints them: perf 6.1's
# default also looks up inlined frames, 80 times the CPU on cc1plus).
report() {
	local cmd
	case $1 in
	ustitch) cmd=(env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report "$2") ;;
	*) cmd=("$perf" script --no-inline -i "$2") ;;
	esac
	/usr/bin/time -f '%U %S %M' -o "$work/rep.time" "${cmd[@]}" >"$work/rep.out" 2>>"$work/err"
	awk '{ print $1 + $2, $3 }' "$work/rep.time"
}
# chains WAY RATE COMM_RE: the user chains in $work/rep.out.
chains() {
	if [ "$1" != ustitch ]; then
		perf_script_chains "$3"
	elif [ "$2" != - ]; then
		ust_sample_chains "$3"
	else	# events: every one is the program's (the recorder follows it)
		awk -f "$UST_CFI_CHAINS" | awk '{ print $NF }'
	fi <"$work/rep.out"
}

ways="ustitch dwarf fp"
echo "kernel $(uname -r); $(nproc) CPUs; $("$perf" version); ustitch -g: $("$UST_USTITCH" probe --no-verify 2>/dev/null |
	sed -n 's/^record -g: user stacks //p')"

# ubytes FILE: its size as ustitch record --compression none writes it
# (trace.dat version 6; ustitch compresses by default), from a copy
# converted back by trace-cmd.
ubytes() {
	trace-cmd convert --file-version 6 -i "$1" -o "$1.u" >/dev/null 2>&1 &&
		stat -c %s "$1.u"
	rm -f "$1.u"
}

# Each way's fixed cost, per mode: recording /bin/true.
declare -A fix_cpu fix_bytes fix_ubytes
for m in sample syscall; do
	r=999
	[ $m = syscall ] && r=-
	for way in $ways; do
		record "$way" "$r" "$work/fix" /bin/true
		read -r rc _ < <(rusage "$work/fix.rus" '^true$')
		fix_cpu[$way.$m]=$rc
		fix_bytes[$way.$m]=$(stat -c %s "$work/fix")
		[ "$way" = ustitch ] && fix_ubytes[$way.$m]=$(ubytes "$work/fix")
		printf 'fixed cost of %-7s (%s): %.3f s CPU, %d bytes (recording /bin/true)\n' "$way" "$m" \
			"$(echo "$rc / 1000000" | bc -l)" "${fix_bytes[$way.$m]}"
	done
done

printf '%-8s %5s %-7s %7s %6s %6s %6s %9s %8s %9s %7s\n' program rate way samples reach% "prog x" \
	"rec s" "rec us/s" bytes/s "rep us/s" "rep MiB"
declare -A cost whole bps ubps
for prog in $progs; do
	cmd_of "$prog" || continue
	# The program bare, best of $tries (each its own rusage): other jobs share the CPUs.
	bare=
	for ((t = 0; t < tries; t++)); do
		run_rusage "$work/bare.rus" "${cmd[@]}"
		read -r _ b < <(rusage "$work/bare.rus" "$comm" bare)
		[ -z "$bare" ] || [ "$b" -lt "$bare" ] && bare=$b
	done
	prates=$rates
	[ $mode = syscall ] && prates=-
	for rate in $prates; do
		# Best of $tries recordings each (the least recorder + program
		# CPU), the ways taking turns: at 10 kHz a program's CPU under
		# perf -g alone moved between 1.2 and 1.9 times its bare CPU from
		# one run to the next here, and g++'s bare CPU between 0.58 and
		# 0.98 s within a minute; one way's tries in a row would all fall
		# in the same slow minute.
		declare -A best_rc=() best_pc=()
		for ((t = 0; t < tries; t++)); do
			for way in $ways; do
				out=$work/$prog.$rate.$way
				record "$way" "$rate" "$out.try" "${cmd[@]}"
				read -r c1 p1 < <(rusage "$out.try.rus" "$comm")
				[ -z "${best_rc[$way]:-}" ] ||
					[ $((c1 + p1)) -lt $((best_rc[$way] + best_pc[$way])) ] || continue
				best_rc[$way]=$c1 best_pc[$way]=$p1
				mv "$out.try" "$out"
			done
		done
		for way in $ways; do
			out=$work/$prog.$rate.$way
			rc=${best_rc[$way]} pc=${best_pc[$way]}
			read -r rep rss < <(report "$way" "$out")
			read -r n r < <(chains "$way" "$rate" "$comm" | share)
			bytes=$(stat -c %s "$out")
			if [ "$n" -eq 0 ]; then
				printf '%-8s %5s %-7s %7s\n' "$prog" "$rate" "$way" "no samples"
				continue
			fi
			cost[$prog.$rate.$way]=$(echo "(($rc - ${fix_cpu[$way.$mode]} + $pc - $bare) / 1000000 + $rep) / $n" | bc -l)
			whole[$prog.$rate.$way]=$(echo "($rc + $pc - $bare) / 1000000 + $rep" | bc -l)
			bps[$prog.$rate.$way]=$(echo "($bytes - ${fix_bytes[$way.$mode]}) / $n" | bc -l)
			[ "$way" = ustitch ] && ubps[$prog.$rate.$way]=$(echo "($(ubytes "$out") - ${fix_ubytes[$way.$mode]}) / $n" | bc -l)
			printf '%-8s %5s %-7s %7d %5.1f%% %6.2f %6.2f %9.1f %8.0f %9.1f %7.1f\n' "$prog" "$rate" "$way" "$n" \
				"$(echo "100 * $r / $n" | bc -l)" "$(echo "$pc / $bare" | bc -l)" \
				"$(echo "$rc / 1000000" | bc -l)" \
				"$(echo "($rc - ${fix_cpu[$way.$mode]} + $pc - $bare) / $n" | bc -l)" \
				"${bps[$prog.$rate.$way]}" "$(echo "$rep * 1000000 / $n" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
			rm -f "$out" "$out.try"
		done
	done
done

echo
echo "goals per program and rate: ustitch over perf --call-graph dwarf (issue 29) and over perf -g (issue 38)"
printf '%-8s %5s %17s %10s %16s %16s %14s\n' program rate "rec+rep/sample" "whole" "whole over -g" "bytes" \
	"uncompressed"
printf '%-8s %5s %17s %10s %16s %16s %14s\n' "" "" "vs dwarf <= 0.3" "vs dwarf" "<= 1.3" "vs dwarf <= 0.05" "vs dwarf"
ok() { echo "$1" | bc | sed 's/1/met/;s/0/MISS/'; }
for prog in $progs; do
	cmd_of "$prog" || continue
	prates=$rates
	[ $mode = syscall ] && prates=-
	for rate in $prates; do
		u=$prog.$rate.ustitch d=$prog.$rate.dwarf f=$prog.$rate.fp
		[ -n "${cost[$u]:-}" ] && [ -n "${cost[$d]:-}" ] && [ -n "${whole[$f]:-}" ] || continue
		# perf's marginal cost can vanish in the noise of a short run
		c=$(echo "if (${cost[$d]} > 0) ${cost[$u]} / ${cost[$d]} else -1" | bc -l)
		w=$(echo "${whole[$u]} / ${whole[$d]}" | bc -l)
		g=$(echo "${whole[$u]} / ${whole[$f]}" | bc -l)
		b=$(echo "${bps[$u]} / ${bps[$d]}" | bc -l)
		z=$(echo "${ubps[$u]:-0} / ${bps[$d]}" | bc -l)
		cs=$(printf '%11.3f %-5s' "$c" "$(ok "$c <= 0.3")")
		[ "$(echo "$c < 0" | bc)" = 1 ] && cs=$(printf '%17s' "n/a (perf <= 0)")
		printf '%-8s %5s %s %10.3f %10.3f %-5s %10.4f %-5s %14.4f\n' "$prog" "$rate" "$cs" "$w" "$g" \
			"$(ok "$g <= 1.3")" "$b" "$(ok "$b <= 0.05")" "$z"
	done
done
echo "rec+rep/sample: each way's fixed cost apart; whole: recorder (with its trace-cmd convert) +"
echo "the program's extra CPU + report, fixed costs included; rate -: system-call events (write, read),"
echo "not sampled; bytes: ustitch's file as written by default (compressed as by --compression any),"
echo "against perf dwarf's default (uncompressed: perf -z not used); uncompressed: --compression none"
