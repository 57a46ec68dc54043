#!/bin/bash
# Live tests of `ustitch record -e cpu-clock -g` on this kernel (root,
# tracefs, perf, BPF).  perf-prog spins in known call chains: the report's
# samples must carry them whole and in order, or say that the stack was
# lost, never show another one.
# usage: test-perf.sh deferred|fp|lost|badcmd|kernel|kernel-lost|debian
#   kernel, kernel-lost: perf's own deferred callchains (--call-graph defer)
#     of perf-prog built -O2 with frame pointers; on kernels that have them
#     (6.19+), else skipped;
#   debian: the default -g on Debian's own binaries (no frame pointers):
#     complete stacks where -g uses the BPF CFI walk, else skipped.
set -u
. "$(dirname "$0")/../lib.sh" perf "${1:-}" deferred fp lost badcmd kernel kernel-lost debian top writers

MAIN="perf_c;perf_b;perf_a;main"
THR="perf_c;thr_a;thr_main;start_thread"
CHILD="perf_c;child_y;child_x;main"

# record NAME [ustitch options] -- prog args: trace, report, samples, summary
record() {
	local name=$1; shift
	"$UST_USTITCH" record -v -o "$work/$name.dat" "$@" 2>"$work/$name.log" ||
		{ bad "$name: ustitch record failed: $(cat "$work/$name.log")"; return 1; }
	cat "$work/$name.log"
	report "$work/$name.dat" -O ustitch:folded="$work/$name.folded" >"$work/$name.report"
	awk -f "$here/samples.awk" "$work/$name.report" >"$work/$name.samples"
}

# The kernel's own unwinder follows frame pointers: a sample in perf_c's
# prologue or epilogue, before its frame is made or after it is undone,
# gets its caller's caller as the second frame (perf_b skipped).  Only
# there (kernel_fp=1), such stacks are not wrong ones, and rare.
kernel_fp=0
SKIPPED="perf_c;perf_a;main;|perf_c;thr_main;start_thread|perf_c;child_x;main;"
# others NAME: the user samples in perf_c with none of the chains, into
# NAME.other, their count in $other_n; with kernel_fp, those that only
# skip perf_c's caller apart, checked to be rare.
others() {
	local n skips
	awk '$1 == "user" && $5 ~ /^perf_c;/ && $8 != "unresolved"' "$work/$1.samples" |
		grep -v -e " $MAIN;" -e " $THR" -e " $CHILD;" >"$work/$1.other"
	if ((kernel_fp)); then
		n=$(awk '$1 == "user" && $5 ~ /^perf_c;/' "$work/$1.samples" | wc -l)
		skips=$(grep -cE " ($SKIPPED)" "$work/$1.other")
		at_most "$1: perf_c samples whose frame-pointer stack skips perf_c's caller (prologue, epilogue)" \
			"$skips" $((n / 100 + 1))
		grep -vE " ($SKIPPED)" "$work/$1.other" >"$work/$1.other2"
		mv "$work/$1.other2" "$work/$1.other"
	fi
	other_n=$(wc -l <"$work/$1.other")
}

# The user-mode samples in perf_c: every one of the three chains, whole,
# innermost first; any other stack for perf_c is a wrong one.  perf-prog
# runs its thread on another CPU than main (see there): samples on both.
check_chains() {
	local name=$1 min=$2 s="$work/$1.samples"
	at_least "$name: main thread samples with $MAIN" "$(grep -c " $MAIN;" "$s")" "$min"
	at_least "$name: thread samples with $THR" "$(grep -c " $THR" "$s")" "$min"
	at_least "$name: child process samples with $CHILD" "$(grep -c " $CHILD;" "$s")" "$min"
	others "$name"
	expect_eq "$name: samples in perf_c with another stack" "$other_n" 0 ||
		head -5 "$work/$name.other"
	# A sample's walk (interrupts off) finds one new VMA: a task's first
	# samples, before its files are known, may end at one left
	# unresolved, and say so; at most a few per task of the three.
	at_most "$name: samples in perf_c with frames left unresolved" \
		"$(awk '$1 == "user" && $5 ~ /^perf_c;/ && $8 == "unresolved"' "$s" | wc -l)" 9
	local cpus
	cpus=$(grep " $MAIN;\| $THR\| $CHILD;" "$s" | awk '{ print $3 }' | sort -u | wc -l)
	if [ "$(nproc)" -gt 1 ]; then
		[ "$cpus" -gt 1 ] && ok "$name: samples on $cpus CPUs" || bad "$name: samples on $cpus CPU only"
	fi
}

deferred() {
	record deferred -e cpu-clock -F 999 -g -- "$UST_PERF_PROG" 400 150 tf || return
	local s="$work/deferred.samples" n stitched
	n=$(wc -l <"$s")
	stitched=$(awk '$4 == "deferred" && $5 != "LOST" && $5 != "-"' "$s" | wc -l)
	echo "samples: $n, with a stitched user stack: $stitched"
	grep "samples per unwind" "$work/deferred.log" | sed 's/^ustitch record: perf: /events\/unwind: /'
	at_least "deferred: samples" "$n" 500
	at_least "deferred: stitched user stacks (98%)" "$stitched" $((n * 98 / 100))
	check_chains deferred 150
	# Samples in the kernel (read of /dev/zero): kernel frames, then the
	# user stack of the same kernel entry.
	at_least "deferred: kernel samples in read() with their user stack" \
		"$(awk '$1 == "kernel" && $6 ~ /read_zero|vfs_read/ && $5 ~ /perf_k;main;/' "$s" | wc -l)" 50
	# The kernel_stack lines are trace-cmd's own (its kernel_stack handler).
	grep -q "kernel_stack:         <stack trace >" "$work/deferred.report" &&
		ok "deferred: trace-cmd prints the kernel stacks" || bad "deferred: no trace-cmd kernel stack"
	# Perf sampling alone: the file's kallsyms holds the symbols of its
	# kernel addresses only, and trace-cmd names each kernel frame as the
	# whole /proc/kallsyms does: a symbol at the greatest address at or
	# below it, absolute ones aside (unnamed: none there).  BPF programs'
	# symbols (ustitch's own, in the samples) leave kallsyms with them.
	if [ "$(head -c 16 /proc/kallsyms)" = 0000000000000000 ]; then
		skip_part "deferred: kallsyms cut to the kernel frames" "kallsyms addresses hidden (kptr_restrict)"
	else
		local ks
		ks=$(trace-cmd dump --summary -i "$work/deferred.dat" 2>/dev/null |
			sed -n 's/.*\[Kallsyms, \([0-9]*\) bytes\].*/\1/p')
		at_most "deferred: kallsyms bytes in the file (of $(wc -c </proc/kallsyms))" "${ks:-0}" 200000
		local misnamed
		misnamed=$({
			awk '$2 != "A" && $2 != "a" && $3 !~ /^\$/ { print $1, "A", $3 }' /proc/kallsyms
			sed -n 's/^=> \([^ ]*\) (\(ffff[0-9a-f]*\))$/\2 B \1/p; s/^=> \(ffff[0-9a-f]*\)$/\1 B -/p' \
				"$work/deferred.report" | sort -u
			} | sort -k1,1 -k2,2 -s | awk '
				$2 == "A" { if ($1 != at) { at = $1; names = "|" } names = names $3 "|"; next }
				$3 ~ /^bpf_(prog|trampoline)_/ { next }
				{ if (!(names == "" && $3 == "-") && index(names, "|" $3 "|") == 0) print $1 ":" $3 }' |
			head -3 | tr '\n' ' ')
		expect_eq "deferred: kernel frames named otherwise than by /proc/kallsyms" "${misnamed:-none}" none
		at_least "deferred: kernel frames in the report" "$(grep -c '^=> .*ffff' "$work/deferred.report")" 50
	fi
	# Nor the kernel's printk formats and saved_cmdlines: perf names the
	# tasks, and every sample still has its program's name.
	local sum
	sum=$(trace-cmd dump --summary -i "$work/deferred.dat" 2>/dev/null)
	expect_eq "deferred: printk format bytes in the file" \
		"$(echo "$sum" | sed -n 's/.*\[Trace printk, \([0-9]*\) bytes\].*/\1/p')" 0
	at_most "deferred: saved command line bytes in the file" \
		"$(echo "$sum" | sed -n 's/.*\[Saved command lines, \([0-9]*\) bytes\].*/\1/p')" 1000
	expect_eq "deferred: samples of perf-prog named otherwise" \
		"$(grep ' sample: ' "$work/deferred.report" | grep -vc '^ustitch: *perf-prog-[0-9]')" 0
	# Without plugins the samples still print natively.
	report "$work/deferred.dat" -N | grep -q "sample: .*cpu-clock ip=.* period=[0-9]* user user_stack=deferred" &&
		ok "deferred: samples print without the plugin" || bad "deferred: no native sample line"
	# Folded stacks, for flame graphs: comm, user frames, kernel frames;
	# every line as flamegraph.pl reads it (frames;... count), no empty frame.
	expect_eq "deferred: folded lines not in the flame-graph format" \
		"$(grep -cvE '^[^; ]+(;[^;]+)* [0-9]+$' "$work/deferred.folded")" 0
	expect_eq "deferred: folded sample total" \
		"$(awk '{ n += $NF } END { print n }' "$work/deferred.folded")" "$(wc -l <"$s")"
	at_least "deferred: folded $MAIN line count" \
		"$(awk -v c="perf-prog;_start;__libc_start_main;__libc_start_call_main;main;perf_a;perf_b;perf_c" '$1 == c { print $2 }' \
			"$work/deferred.folded" | head -1)" 150
	[ $fails -eq 0 ] || { echo "--- samples:"; head -50 "$s"; }
}

fp() {
	record fp -e cpu-clock -F 999 -g --call-graph fp -- "$UST_PERF_PROG" 300 0 tf || return
	local s="$work/fp.samples"
	expect_eq "fp: samples without an immediate user stack" \
		"$(awk '$4 != "immediate"' "$s" | wc -l)" 0
	check_chains fp 100
}

# A one-page perf ring at 10 kHz: records are lost.  Samples whose stacks
# went with them say so; none shows another entry's stack.
lost() {
	USTITCH_PERF_PAGES=1 record lost -e cpu-clock -F 10000 -g -- "$UST_PERF_PROG" 300 300 tf || return
	check_lost lost lost 50
}

# check_lost LABEL NAME MIN: after records were lost, the chains of
# recording NAME (at least MIN each), no foreign stack, no lost sample
# with a stack.
check_lost() {
	local label=$1 name=$2 s="$work/$2.samples"
	# Nothing lost: the rest still holds, but what follows a loss went
	# untested, and says so.
	grep -q "records lost" "$work/$name.log" && ok "$label: perf records were lost" ||
		skip_part "$label: perf records were lost" "no perf records lost this time"
	check_chains "$name" "$3"
	expect_eq "$label: kernel samples in read() with a foreign user stack" \
		"$(awk '$1 == "kernel" && $6 ~ /read_zero/ && $5 != "LOST" && $5 != "-" && $5 !~ /perf_k;main;/' "$s" | wc -l)" 0
	expect_eq "$label: samples marked lost that show a stack" \
		"$(awk '$4 == "lost" && $5 != "LOST" && $5 != "-"' "$s" | wc -l)" 0
}

# What `ustitch probe` says -g and --call-graph defer use here.
probe_uses() { "$UST_USTITCH" probe --no-verify 2>/dev/null | grep "^record $1: "; }

need_kernel_defer() {
	probe_uses "--call-graph defer" | grep -q "deferred by the kernel" ||
		skip_all "this kernel has no perf defer_callchain"
}

# The kernel's own deferred callchains, stitched by cookie: the chains of
# an -O2 program with frame pointers, frame by frame, each stack saying that
# the kernel's unwinder made it.
kernel() {
	need_kernel_defer
	kernel_fp=1
	record kernel -e cpu-clock -F 999 -g --call-graph defer -- "$UST_PERF_PROG_O2" 400 150 tf || return
	local s="$work/kernel.samples" n stitched
	grep -q "user stacks: deferred by the kernel (perf defer_callchain)" "$work/kernel.log" &&
		ok "kernel: the kernel defers" || bad "kernel: not the kernel's deferred callchains"
	n=$(wc -l <"$s")
	stitched=$(awk '$4 == "deferred" && $5 != "LOST" && $5 != "-"' "$s" | wc -l)
	at_least "kernel: samples" "$n" 500
	at_least "kernel: stitched user stacks (98%)" "$stitched" $((n * 98 / 100))
	expect_eq "kernel: stitched stacks not said to be the kernel's" \
		"$(awk '$4 == "deferred" && $5 != "LOST" && $5 != "-" && $9 != "kernel"' "$s" | wc -l)" 0
	check_chains kernel 150
	at_least "kernel: kernel samples in read() with their user stack" \
		"$(awk '$1 == "kernel" && $6 ~ /read_zero|vfs_read/ && $5 ~ /perf_k;main;/' "$s" | wc -l)" 50
	[ $fails -eq 0 ] || { echo "--- samples:"; head -50 "$s"; }
	attached kernel-P -P --call-graph defer
	attached kernel-a -a --call-graph defer
}

# The kernel's deferred records reach the ring of an event that carries
# defer_output: per task (the command, its thread and child by inherit,
# above), and also with -P (the threads a process has) and system-wide
# (per-CPU events, where they are side-band like MMAP2).
# attached NAME -P|-a [--call-graph M]: perf-prog-o2 with a thread, recorded
# from outside; its two chains whole, no other stack in perf_c.
attached() {
	local name=$1 how=$2 pp rp s i; shift 2
	rm -f "$work/go"
	if [ "$how" = -P ]; then
		# The process waits for the recorder, then becomes perf-prog-o2
		# (exec keeps its events; its thread, made after, inherits them).
		sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; shift; exec "$@"' sh "$work/go" \
			"$UST_PERF_PROG_O2" 700 0 t & pp=$!
		"$UST_USTITCH" record -o "$work/$name.dat" -e cpu-clock -F 999 -g "$@" -P "$pp" \
			2>"$work/$name.log" & rp=$!
	else
		"$UST_USTITCH" record -o "$work/$name.dat" -e cpu-clock -F 999 -g "$@" \
			2>"$work/$name.log" & rp=$!
	fi
	# Events are on once the recorder says so.
	for ((i = 0; i < 600; i++)); do
		grep -q "recording; stop with" "$work/$name.log" && break
		kill -0 "$rp" 2>/dev/null || break
		sleep 0.1
	done
	if [ "$how" = -P ]; then
		touch "$work/go"
	else
		"$UST_PERF_PROG_O2" 700 0 t & pp=$!
	fi
	wait "$pp"
	kill -INT "$rp"
	wait "$rp" || { bad "$name: ustitch record failed: $(cat "$work/$name.log")"; return 1; }
	cat "$work/$name.log"
	report "$work/$name.dat" >"$work/$name.report"
	s="$work/$name.samples"
	awk -f "$here/samples.awk" "$work/$name.report" | awk '$10 ~ /^perf-prog/' >"$s"
	local f0=$fails
	at_least "$name: main thread samples with $MAIN" "$(grep -c " $MAIN;" "$s")" 100
	at_least "$name: thread samples with $THR" "$(grep -c " $THR" "$s")" 100
	if [ $fails -ne $f0 ]; then
		# Whose samples these were, and what they showed.
		echo "# samples by task:"
		awk -f "$here/samples.awk" "$work/$name.report" | awk '{ print $10 }' | sort | uniq -c |
			sort -rn | head -8 | sed 's/^/#   /'
		echo "# perf-prog samples:"
		head -8 "$s" | cut -c1-300 | sed 's/^/#   /'
	fi
	others "$name"
	expect_eq "$name: samples in perf_c with another stack" "$other_n" 0 ||
		head -5 "$work/$name.other"
}

# -O ustitch:top=N against `perf report --stdio --no-children` of the same
# program recorded by perf: the same function has the largest self share
# (perf_c, about two thirds: 400 ms in it, 200 in read()), and the shares
# agree within 8 points (two runs); main's total share is nearly all.
top() {
	command -v perf >/dev/null || skip_all "no perf (Debian: linux-perf)"
	record top -e cpu-clock -F 999 -g -- "$UST_PERF_PROG" 400 200 || return
	report "$work/top.dat" -O ustitch:top=5 >"$work/top.report"
	sed -n '/^# ustitch top 5 by self/,$p' "$work/top.report" | sed 's/^/# /'
	local uf us pf ps main
	read -r us uf < <(awk '/^# ustitch top 5 by self/ { on = 1; next } on && /^ +[0-9.]+%/ { sub(/%/, "", $1); print $1, $NF; exit }' \
		"$work/top.report")
	main=$(awk '/^# ustitch top 5 by children/ { on = 1; next } on && $NF == "main" { sub(/%/, "", $1); print $1; exit }' \
		"$work/top.report")
	if ! perf record -q -e cpu-clock -F 999 -g -o "$work/top.perf" -- "$UST_PERF_PROG" 400 200 \
		>/dev/null 2>"$work/perf.err"; then
		bad "perf record failed: $(cat "$work/perf.err")"
		return
	fi
	read -r ps pf < <(perf report -i "$work/top.perf" --stdio --no-children --sort sym -q 2>/dev/null |
		awk '/%/ { sub(/%/, "", $1); print $1, $NF; exit }')
	echo "# perf report --no-children: ${pf:-?} ${ps:-?} %; ustitch top: ${uf:-?} ${us:-?} %"
	expect_eq "top: the function with the largest self share" "${uf:-none}" "perf_c"
	expect_eq "top: perf report's too" "${pf:-none}" "perf_c"
	[ -n "${us:-}" ] && [ -n "${ps:-}" ] &&
		awk -v a="$us" -v b="$ps" 'BEGIN { d = a - b; exit !(d < 8 && d > -8) }' &&
		ok "top: perf_c's self share agrees with perf report's ($us % and $ps %)" ||
		bad "top: perf_c's self share $us %, perf report's $ps %"
	[ -n "${main:-}" ] && awk -v m="$main" 'BEGIN { exit !(m >= 95) }' &&
		ok "top: main's total share: $main %" || bad "top: main's total share '${main:-}', expected >= 95 %"
	# The same two call paths (perf_c's loop, 400 ms, and read(), 200 ms:
	# 2:1) as go tool pprof reads -O ustitch:pprof, by samples and by CPU
	# time: perf_c's cumulative share agrees with perf report's.
	command -v go >/dev/null || return
	report "$work/top.dat" -O ustitch:pprof="$work/top.pb.gz" >/dev/null
	local idx cum
	for idx in samples cpu; do
		cum=$(HOME=$work GOCACHE=$work/gocache go tool pprof -top -sample_index=$idx "$work/top.pb.gz" 2>/dev/null |
			awk '$NF == "perf_c" { sub(/%/, "", $5); print $5; exit }')
		[ -n "$cum" ] && [ -n "${ps:-}" ] &&
			awk -v a="$cum" -v b="$ps" 'BEGIN { d = a - b; exit !(d < 8 && d > -8) }' &&
			ok "top: go tool pprof -sample_index=$idx: perf_c's cumulative share $cum % (perf report: $ps %)" ||
			bad "top: go tool pprof -sample_index=$idx: perf_c '${cum:-none}' %, perf report's $ps %"
	done
}

# The profiles of an event recording: a program built here (-O2) writes 10
# bytes 300 times from small_writer, then 100 bytes 100 times from
# big_writer; its write() system calls recorded with deferred stacks.  As
# go tool pprof reads -O ustitch:pprof with weight=count: small_writer and
# big_writer 3:1 by events (300 and 100) and 3:10 by bytes (3000, 10000).
writers() {
	command -v go >/dev/null || skip_all "no go tool (Debian: golang-go)"
	cat >"$work/writers.c" <<'EOF'
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) static void small_writer(void)
{
	char b[10];
	memset(b, 's', sizeof(b));
	for (int i = 0; i < 300; i++)
		if (write(1, b, sizeof(b)) < 0)
			return;
}
__attribute__((noinline)) static void big_writer(void)
{
	char b[100];
	memset(b, 'b', sizeof(b));
	for (int i = 0; i < 100; i++)
		if (write(1, b, sizeof(b)) < 0)
			return;
}
int main(void)
{
	small_writer();
	big_writer();
	return 0;
}
EOF
	gcc -O2 -o "$work/writers" "$work/writers.c" || { bad "writers: gcc failed"; return; }
	"$UST_USTITCH" record -q -o "$work/writers.dat" -e syscalls:sys_enter_write -O userstacktrace_delay \
		-- "$work/writers" >/dev/null 2>"$work/writers.log" ||
		{ bad "writers: ustitch record failed: $(cat "$work/writers.log")"; return; }
	report "$work/writers.dat" -O ustitch:pprof="$work/writers.pb.gz" -O ustitch:weight=count \
		-O ustitch:folded="$work/writers.folded" >"$work/writers.report"
	grep '^# ustitch pprof' "$work/writers.report" | sed 's/^/# /'
	local idx fn want got
	for idx in events count; do
		HOME=$work GOCACHE=$work/gocache go tool pprof -top -sample_index=$idx "$work/writers.pb.gz" \
			2>/dev/null >"$work/writers.$idx"
		for fn in small_writer big_writer; do
			case $idx.$fn in
			events.small_writer) want=300 ;; events.big_writer) want=100 ;;
			count.small_writer) want=3000 ;; count.big_writer) want=10000 ;;
			esac
			got=$(awk -v f="$fn" '$NF == f { print $4 }' "$work/writers.$idx")
			expect_eq "writers: pprof -sample_index=$idx: $fn's cumulative" "${got:-none}" "$want"
		done
	done
	expect_eq "writers: folded: the events by stack" \
		"$(awk '{ n = split($1, f, ";"); print f[n - 1], $2 }' "$work/writers.folded" | grep _writer | sort | tr '\n' ' ')" \
		"big_writer 100 small_writer 300 "
}

# A one-page ring at 10 kHz: deferred callchains are lost with the rest;
# their samples say so, and none borrows another entry's stack.
kernel-lost() {
	need_kernel_defer
	kernel_fp=1
	USTITCH_PERF_PAGES=1 record klost -e cpu-clock -F 10000 -g --call-graph defer -- \
		"$UST_PERF_PROG_O2" 300 300 tf || return
	check_lost kernel-lost klost 20
	at_least "kernel-lost: samples marked lost" \
		"$(awk '$4 == "lost" || $5 == "LOST"' "$work/klost.samples" | wc -l)" 1
}

# Debian's gzip and sort (stripped, no frame pointers) under the default
# -g: their stacks reach the outermost frame by CFI tables, through
# __libc_start_main (main threads) or start_thread and clone3 (sort's).
debian() {
	probe_uses "-g" | grep -q "deferred by BPF" ||
		skip_all "-g does not walk by CFI here ($(probe_uses "-g"))"
	local kb=${UST_DEBIAN_KB:-6000} prog s n full
	seq 1 $((kb * 1000 / 7)) | awk '{ print ($1 * 7919) % 100003, $1 }' >"$work/input.txt"
	record gzip -e cpu-clock -F 999 -g -- /bin/sh -c "gzip -9 -c '$work/input.txt' >'$work/input.gz'" || return
	record sort -e cpu-clock -F 999 -g -- sort -n -S 64M "$work/input.txt" -o "$work/sorted.txt" || return
	# python3's allocator maps and unmaps memory all the time, moving the
	# mm's sequence between samples: the walk must keep the files it knows
	# (a walk in an interrupt gets one bpf_find_vma()).
	record python3 -e cpu-clock -F 999 -g -- /usr/bin/python3 -c "import json
d = [{'k': i, 'v': [str(j) for j in range(20)], 's': 'x' * (i % 50)} for i in range(20000)]
for _ in range(6): json.loads(json.dumps(d))" || return
	for prog in gzip sort python3; do
		s="$work/$prog.samples"
		n=$(awk -v c="$prog" '$1 == "user" && $10 == c && $4 == "deferred"' "$s" | wc -l)
		full=$(awk -v c="$prog" '$1 == "user" && $10 == c && $4 == "deferred" && $9 == "complete" && $5 ~ /;(__libc_start_main;[^;]+|start_thread;clone3)$/' "$s" | wc -l)
		at_least "debian: $prog: user samples with a deferred stack" "$n" 50
		at_least "debian: $prog: complete to the outermost frame by default (90%)" "$full" $((n * 90 / 100))
	done
	if probe_uses "--call-graph defer" | grep -q "deferred by the kernel"; then
		record kgzip -e cpu-clock -F 999 -g --call-graph defer -- /bin/sh -c "gzip -9 -c '$work/input.txt' >'$work/input.gz'" || return
		s="$work/kgzip.samples"
		echo "note: gzip under the kernel's own deferred callchains: $(awk '$1 == "user" && $10 == "gzip" && $5 ~ /;__libc_start_main;/' "$s" | wc -l)" \
			"of $(awk '$1 == "user" && $10 == "gzip" && $4 == "deferred"' "$s" | wc -l) reach __libc_start_main (frame pointers only)"
	fi
}

badcmd() {
	local before after out rc
	before=$(ls /sys/kernel/tracing/instances)
	while IFS='|' read -r args msg; do
		[ -z "$args" ] && continue
		# shellcheck disable=SC2086
		out=$(cd "$work" && "$UST_USTITCH" record $args 2>&1); rc=$?
		[ $rc -eq 2 ] && [[ "$out" == $msg ]] && ok "record $args" ||
			bad "record $args: status $rc, said '$out', expected '$msg'"
		[ ! -e "$work/trace.dat" ] || { bad "record $args left a trace.dat"; rm -f "$work/trace.dat"; }
	done <"$here/badcmd.txt"
	after=$(ls /sys/kernel/tracing/instances)
	[ "$before" = "$after" ] && ok "tracefs unchanged" || bad "tracefs changed"
}

case $1 in
deferred | fp | lost | badcmd | kernel | kernel-lost | debian | top | writers) "$1" ;;
*) bad "unknown test '$1'" ;;
esac
finish
