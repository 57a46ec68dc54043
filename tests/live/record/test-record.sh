#!/bin/bash
# Live tests of `ustitch record` on this kernel (root, tracefs, BPF).
# usage: test-record.sh chain|twins|fallback|signals|badcmd|compress|refused|messages|kallsyms
set -u
. "$(dirname "$0")/../lib.sh" rec "${1:-}" chain twins fallback signals badcmd compress refused messages kallsyms

instances() { ls /sys/kernel/tracing/instances | grep '^ustitch-' || true; }
# Of the BPF programs and links recorder @1 held ($work/ids, read while it
# recorded: this bpftool shows no owners), those still there.
our_progs() { bpf_left "$work/ids" | wc -l; }

# Small traces are small: a recording whose events show no kernel address
# (system calls with user stacks) keeps none of /proc/kallsyms (some 5 MB);
# one that shows some keeps it (kernel stacks, a field printed as a
# symbol), and --kallsyms keeps it whole anyway.
kallsyms() {
	local what args n
	for what in syscalls stacktrace symbol-field asked; do
		args=(-O userstacktrace_delay -e syscalls:sys_enter_getppid)
		case $what in
		stacktrace) args+=(-O stacktrace) ;;
		symbol-field) args+=(-e kmem:kmalloc) ;;
		asked) args+=(--kallsyms) ;;
		esac
		"$UST_USTITCH" record -q -o "$work/k.dat" "${args[@]}" -- "$UST_REC_PROG" 1 2>"$work/k.err" ||
			{ bad "$what: record failed: $(cat "$work/k.err")"; continue; }
		n=$(trace-cmd report -f "$work/k.dat" 2>/dev/null | wc -l)
		if [ "$what" = syscalls ]; then
			expect_eq "$what: kallsyms lines in the file ($(du -k "$work/k.dat" | cut -f1) KiB)" "$n" 0
		else
			at_least "$what: kallsyms lines in the file" "$n" 10000
		fi
		if [ "$what" = stacktrace ]; then
			report "$work/k.dat" >"$work/k.txt"
			at_least "$what: kernel stacks through the getppid system call, named" \
				"$(grep -c '^=> __x64_sys_getppid\|^=> __do_sys_getppid\|^=> do_syscall_64' "$work/k.txt")" 1
		fi
	done
}

# chain [record args...]
chain() {
	local rounds=2 prog=$UST_REC_PROG base
	base=$(basename "$prog")
	"$UST_USTITCH" record -q -o "$work/t.dat" "$@" -e syscalls:sys_enter_getppid \
		-e syscalls:sys_exit_getppid -O userstacktrace_delay -- "$prog" $rounds ||
		{ bad "ustitch record failed"; return; }
	report "$work/t.dat" >"$work/report"
	awk -f "$here/stacks.awk" "$work/report" >"$work/stacks"
	local main="getppid(libc.so.6);rec_c($base);rec_b($base);rec_a($base);main($base)"
	local thr="getppid(libc.so.6);thr_b($base);thr_a($base);rec_thread($base);start_thread(libc.so.6)"
	local child="getppid(libc.so.6);child_y($base);child_x($base);main($base)"
	# main -> rec_a -> rec_b -> rec_c -> getppid, 3 calls a round, enter and exit
	expect_eq "main chain, sys_enter" "$(grep -c "^sys_enter_getppid .* $main;" "$work/stacks")" $((rounds * 3))
	expect_eq "main chain, sys_exit" "$(grep -c "^sys_exit_getppid .* $main;" "$work/stacks")" $((rounds * 3))
	# the thread, migrating between CPUs
	expect_eq "thread chain" "$(grep -c " $thr" "$work/stacks")" $((rounds * 2 * 2))
	local cpus
	cpus=$(grep " $thr" "$work/stacks" | awk '{ print $3 }' | sort -u | wc -l)
	if [ "$(nproc)" -gt 1 ]; then
		[ "$cpus" -gt 1 ] && ok "thread events on $cpus CPUs" || bad "thread events on $cpus CPU only"
	fi
	# the forked child, gone long before the recording ended
	expect_eq "exited child chain" "$(grep -c " $child" "$work/stacks")" 2
	# one kernel entry: enter and exit share one cookie, one stack
	local pairs
	pairs=$(awk '$1 == "sys_enter_getppid" { c[$2] = $4; next }
		     $1 == "sys_exit_getppid" { n++; if (c[$2] == $4 && $4 != "-") same++ }
		     END { print same + 0 "/" n + 0 }' "$work/stacks")
	expect_eq "enter/exit pairs with one cookie" "$pairs" "$(grep -c '^sys_exit_getppid' "$work/stacks")/$(grep -c '^sys_exit_getppid' "$work/stacks")"
	local distinct
	distinct=$(awk '$4 != "-" { print $4 }' "$work/stacks" | sort -u | wc -l)
	expect_eq "distinct cookies (one per kernel entry)" "$distinct" $((rounds * 3 + rounds * 2 + 1))
	expect_eq "stacks shown at 2 events each" "$(grep -c 'user_unwind_stack: .*shown at 2 events' "$work/report")" "$distinct"
	expect_eq "no events without a stack" "$(awk '$5 == "-"' "$work/stacks" | wc -l)" 0
	[ $fails -eq 0 ] || { echo "--- stacks:"; cat "$work/stacks"; }
}

# --compression as trace-cmd record's: a trace.dat of version 7 (zstd),
# read by trace-cmd and the plugin with the same exact stacks as chain's;
# an algorithm trace-cmd lacks is refused before anything is recorded.
compress() {
	chain --compression zstd
	expect_eq "file version" "$(head -c 13 "$work/t.dat" | tail -c 3 | tr -d '\0')" 7
	expect_eq "compression" "$(head -c 22 "$work/t.dat" | tail -c 4)" zstd
	rm -f "$work/n.dat"
	"$UST_USTITCH" record -q -o "$work/n.dat" --compression lz77 -e syscalls:sys_enter_getppid \
		-- true 2>"$work/err"
	expect_eq "unknown algorithm: exit status" "$?" 2
	expect_eq "unknown algorithm: said" "$(cat "$work/err")" \
		"ustitch record: --compression lz77: not an algorithm this trace-cmd has (trace-cmd list -c)"
	[ ! -e "$work/n.dat" ] && ok "unknown algorithm: nothing recorded" || bad "unknown algorithm: $work/n.dat written"
}

# A walk that reuses the task's last one when it starts from the same
# registers and every stack word it read is unchanged: twins a and b call
# getppid() from the same depth, a, a, b, b, ...; only a return address two
# frames up differs.  Every second walk of a pair is the last one again.
twins() {
	local prog=$UST_REC_PROG base rounds=4 seq want=""
	base=$(basename "$prog")
	"$UST_USTITCH" record -v -o "$work/t.dat" -e syscalls:sys_enter_getppid \
		-O userstacktrace_delay -- "$prog" twins $rounds 2>"$work/err" ||
		{ bad "ustitch record failed"; cat "$work/err"; return; }
	report "$work/t.dat" >"$work/report"
	awk -f "$here/stacks.awk" "$work/report" >"$work/stacks"
	for i in $(seq 0 $((rounds - 1))); do
		if [ $((i & 1)) = 1 ]; then want="${want}bb"; else want="${want}aa"; fi
	done
	# the chain of each event in order: which twin
	seq=$(awk '{ print $5 }' "$work/stacks" | sed -n "s/^getppid(libc.so.6);twin_leaf($base);twin_mid($base);twin_\([ab]\)($base);main($base);.*/\1/p" | tr -d '\n')
	expect_eq "twins in order, each stack exact" "$seq" "$want"
	expect_eq "events" "$(wc -l <"$work/stacks")" $((rounds * 2))
	# the exact frames, offsets included: main's is one call site
	expect_eq "distinct frame lists" "$(awk '/user_unwind_cookie:/ { s = 1; k = ""; next }
		s && /^=>/ { k = k $2 " "; next } s { print k; s = 0 } END { if (s) print k }' \
		"$work/report" | sort -u | wc -l)" 2
	# the second walk of each pair: every word the first read is the same
	expect_eq "walks that were the last one again" \
		"$(sed -n 's/.*their task.s last walk, every stack word it read unchanged: \([0-9]*\)$/\1/p' "$work/err")" \
		"$rounds"
	[ $fails -eq 0 ] || { echo "--- stacks:"; cat "$work/stacks"; cat "$work/err"; }
}

# The fallback of kernels without BPF task_work (forced here): the same
# frames, taken at the event, and the report says so.
fallback() {
	local prog=$UST_REC_PROG base
	base=$(basename "$prog")
	USTITCH_FORCE_IMMEDIATE=1 "$UST_USTITCH" record -q -o "$work/t.dat" \
		-e syscalls:sys_enter_getppid -O userstacktrace_delay -- "$prog" 1 ||
		{ bad "ustitch record failed"; return; }
	report "$work/t.dat" >"$work/report"
	awk -f "$here/stacks.awk" "$work/report" >"$work/stacks"
	local main="getppid(libc.so.6);rec_c($base);rec_b($base);rec_a($base);main($base)"
	expect_eq "main chain" "$(grep -c " $main;" "$work/stacks")" 3
	expect_eq "each stack marked as taken at the event, complete by CFI" \
		"$(grep -c 'user_unwind_cookie: .*; taken at the event: no BPF task_work on this kernel; complete, by CFI>' "$work/report")" \
		"$(grep -c 'user_unwind_cookie:' "$work/report")"
	expect_eq "every event has its own cookie" \
		"$(awk '$4 != "-" { print $4 }' "$work/stacks" | sort -u | wc -l)" "$(wc -l <"$work/stacks")"
}

# A kernel that has the task_work kfunc but refuses ustitch's callback
# (6.18.44): the first recording of the boot is refused it and remembers
# that in /run/ustitch/bpf-refused ($USTITCH_RUN_DIR/bpf-refused: this
# test's own, lib.sh), under the boot id and the object's hash; later
# recordings skip the refused load and say so, with the same exact stacks;
# a line of another boot is not taken; ustitch probe still asks the
# kernel.  With USTITCH_RUN_DIR set empty nothing is remembered.
refused() {
	local file=$USTITCH_RUN_DIR/bpf-refused boot line
	if ! "$UST_USTITCH" probe --no-verify 2>/dev/null |
		grep -q '^bpf-task-work: no .* is there, but .* is refused'; then
		skip_part "refusal remembered" "this kernel takes its task_work kfunc, or has none"
		return
	fi
	boot=$(cat /proc/sys/kernel/random/boot_id)
	rm -f "$file"
	chain_log() {	# -v: the refusal's own line (else one line without the why)
		"$UST_USTITCH" record -v -o "$work/t.dat" -e syscalls:sys_enter_getppid \
			-O userstacktrace_delay -- "$UST_REC_PROG" 1 2>"$work/$1.log" >/dev/null ||
			bad "$1: ustitch record failed"
		report "$work/t.dat" | awk -f "$here/stacks.awk" | grep -c ' getppid(libc.so.6);rec_c('
	}
	expect_eq "first: main chains" "$(chain_log first)" 3
	expect_eq "first: the refusal said, asked of the kernel" \
		"$(grep -c '^ustitch record: BPF: no BPF task_work: the kernel refused ust_bpfu_[a-z_]* .*) (verifier log: ' "$work/first.log")" 1
	line=$(grep -c "^$boot [0-9a-f]\{16\} the kernel refused ust_bpfu_[a-z_]* .*bpf_task_work_schedule_resume" "$file" 2>/dev/null)
	expect_eq "remembered: one line, this boot's" "$line" 1
	expect_eq "second: main chains" "$(chain_log second)" 3
	expect_eq "second: the refusal said, as remembered" \
		"$(grep -c "^ustitch record: BPF: no BPF task_work: the kernel refused ust_bpfu_[a-z_]* .*) (refused when first loaded this boot, as $file remembers; ustitch probe loads it again)\$" "$work/second.log")" 1
	expect_eq "second: nothing added" "$(wc -l <"$file")" 1
	# Another boot's line is not this one's.
	sed -i "s/^$boot /00000000-0000-0000-0000-000000000000 /" "$file"
	expect_eq "other boot: main chains" "$(chain_log other)" 3
	expect_eq "other boot: asked of the kernel again" \
		"$(grep -c 'the kernel refused ust_bpfu_[a-z_]* .*) (verifier log: ' "$work/other.log")" 1
	expect_eq "other boot: this boot's line added" "$(grep -c "^$boot " "$file")" 1
	expect_eq "probe: asks the kernel" \
		"$("$UST_USTITCH" probe --no-verify 2>/dev/null | grep '^bpf-task-work: no .* is refused' | grep -vc 'refused when first loaded')" 1
	# USTITCH_RUN_DIR set empty: nothing read, nothing remembered.
	expect_eq "USTITCH_RUN_DIR empty: main chains" "$(USTITCH_RUN_DIR= chain_log empty)" 3
	expect_eq "USTITCH_RUN_DIR empty: asked of the kernel" \
		"$(grep -c 'the kernel refused ust_bpfu_[a-z_]* .*) (verifier log: ' "$work/empty.log")" 1
	expect_eq "USTITCH_RUN_DIR empty: nothing added" "$(wc -l <"$file")" 2
	# Without -v: asked of the kernel, one short line; remembered, nothing.
	rm -f "$file"
	for n in 1 2; do
		"$UST_USTITCH" record -o "$work/t.dat" -e syscalls:sys_enter_getppid -O userstacktrace_delay -- \
			"$UST_REC_PROG" 1 2>"$work/short$n.log" >/dev/null || bad "short$n: ustitch record failed"
	done
	expect_eq "without -v, asked of the kernel: one short line" "$(grep '^ustitch record: BPF' "$work/short1.log")" \
		"ustitch record: BPF: this kernel refuses BPF task_work: stacks of events other than system calls are taken at the event (-v: why)"
	expect_eq "without -v, remembered: nothing said" "$(grep -c '^ustitch record: BPF' "$work/short2.log")" 0
	return 0
}

signals() {
	local sig pid rc
	for sig in INT TERM; do
		"$UST_USTITCH" record -o "$work/$sig.dat" -e sched:sched_switch -O userstacktrace_delay \
			>"$work/$sig.log" 2>&1 &
		pid=$!
		for _ in $(seq 50); do grep -q recording "$work/$sig.log" && break; sleep 0.1; done
		bpf_ids $pid >"$work/ids"
		[ -s "$work/ids" ] || bad "SIG$sig: no BPF programs seen while recording"
		sleep 0.3
		kill -$sig $pid
		wait $pid; rc=$?
		expect_eq "SIG$sig: exit status" $rc 0
		trace-cmd dump -v "$work/$sig.dat" 2>&1 | grep -q "is a valid trace-cmd file" &&
			ok "SIG$sig: valid trace.dat" || bad "SIG$sig: trace.dat not valid: $(cat "$work/$sig.log")"
		expect_eq "SIG$sig: instances left" "$(instances | grep -c "ustitch-$pid" || true)" 0
		expect_eq "SIG$sig: BPF programs left" "$(our_progs $pid)" 0
	done
	"$UST_USTITCH" record -o "$work/kill.dat" -e sched:sched_switch -O userstacktrace_delay \
		>"$work/kill.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do grep -q recording "$work/kill.log" && break; sleep 0.1; done
	bpf_ids $pid >"$work/ids"
	[ -s "$work/ids" ] || bad "SIGKILL: no BPF programs seen while recording"
	kill -KILL $pid
	wait $pid 2>/dev/null
	sleep 0.2
	expect_eq "SIGKILL: BPF programs left" "$(our_progs $pid)" 0
	expect_eq "SIGKILL: its instance stays until the next run" "$(instances | grep -c "ustitch-$pid" || true)" 1
	"$UST_USTITCH" record -o "$work/next.dat" -e sched:sched_switch -- true 2>"$work/next.log"
	grep -q "removed 1 stale ustitch instance" "$work/next.log" && ok "next run removed the stale instance" ||
		bad "next run did not say it removed the stale instance: $(cat "$work/next.log")"
	expect_eq "SIGKILL: instances left after the next run" "$(instances | grep -c "ustitch-$pid" || true)" 0
}

badcmd() {
	local before after
	before=$(ls /sys/kernel/tracing/instances; cat /sys/kernel/tracing/trace_options)
	while IFS='|' read -r args msg; do
		[ -z "$args" ] && continue
		# shellcheck disable=SC2086
		out=$(cd "$work" && "$UST_USTITCH" record $args 2>&1); rc=$?
		[ $rc -eq 2 ] && [ "$out" = "$msg" ] && ok "record $args" ||
			bad "record $args: status $rc, said '$out', expected '$msg'"
		[ ! -e "$work/trace.dat" ] || { bad "record $args left a trace.dat"; rm -f "$work/trace.dat"; }
	done <"$here/badcmd.txt"
	# help on stdout with status 0; a wrong argument is one line on stderr
	out=$("$UST_USTITCH" record --help 2>/dev/null); rc=$?
	out=${out%%$'\n'*}
	[ $rc -eq 0 ] && [ "$out" = "usage: ustitch record [options] [--] [command [args...]]" ] &&
		ok "record --help" || bad "record --help: status $rc, stdout '$out'"
	out=$("$UST_USTITCH" probe --help 2>/dev/null); rc=$?
	[ $rc -eq 0 ] && [ "${out%%$'\n'*}" = "usage: ustitch probe [--no-verify]" ] && ok "probe --help" ||
		bad "probe --help: status $rc, stdout '$out'"
	out=$("$UST_USTITCH" probe --bogus 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "ustitch probe: unrecognized argument '--bogus' (see ustitch probe --help)" ] &&
		ok "probe --bogus" || bad "probe --bogus: status $rc, said '$out'"
	after=$(ls /sys/kernel/tracing/instances; cat /sys/kernel/tracing/trace_options)
	[ "$before" = "$after" ] && ok "tracefs unchanged" || bad "tracefs changed"
}

# What a recording says: without -v one summary line, exactly; -q nothing;
# on a terminal (script's pty) the status line and, with no cached table,
# the table builds' progress (USTITCH_PROGRESS_DELAY=0: at once), each
# erased; none of it through a pipe.
messages() {
	local rec=("$UST_USTITCH" record -o "$work/m.dat" -e syscalls:sys_enter_getppid -O userstacktrace_delay)
	"${rec[@]}" -- "$UST_REC_PROG" 1 2>"$work/m.log" >/dev/null || bad "ustitch record failed"
	expect_eq "summary: one line" "$(grep -v '^ustitch record: BPF: ' "$work/m.log")" \
		"ustitch record: wrote $work/m.dat: 6 events (main buffer); 6 user stacks (buffer ustitch)"
	"${rec[@]}" -q -- "$UST_REC_PROG" 1 2>"$work/q.log" >/dev/null || bad "ustitch record -q failed"
	expect_eq "-q: nothing said" "$(cat "$work/q.log")" ""
	"${rec[@]}" -v -- "$UST_REC_PROG" 1 2>"$work/v.log" >/dev/null || bad "ustitch record -v failed"
	expect_eq "-v: the summary line, then the details" \
		"$(grep -v '^ustitch record: BPF: no BPF task_work' "$work/v.log" | sed -n '1p;3s/ (deferred: .*), / (...), /p')" \
		"ustitch record: wrote $work/m.dat: 6 events (main buffer); 6 user stacks (buffer ustitch)
ustitch record: BPF: 6 cookies, 6 user stacks (...), 2 files"
	expect_eq "-v: the unwind tables" "$(grep -c '^ustitch record: unwind tables: ' "$work/v.log")" 1
	USTITCH_CACHE_DIR=$work/cache USTITCH_PROGRESS_DELAY=0 \
		script -qec "$(printf '%q ' "${rec[@]}") -- $UST_REC_PROG 1" /dev/null >"$work/tty" 2>&1 </dev/null
	tr '\r' '\n' <"$work/tty" >"$work/tty.lines"
	at_least "terminal: the table of the command built, with its progress line" \
		"$(grep -c "^ustitch: building the unwind table of $(basename "$UST_REC_PROG"): *[0-9]* %" "$work/tty.lines")" 1
	at_least "terminal: the status line" \
		"$(grep -Ec '^ustitch record: [0-9]+ events?, [0-9]+ user stacks?, [0-9.]+ s' "$work/tty.lines")" 1
	expect_eq "terminal: the summary" "$(grep -c "^ustitch record: wrote $work/m.dat: 6 events (main buffer); 6 user stacks (buffer ustitch)" "$work/tty.lines")" 1
	rm -rf "$work/cache"
	USTITCH_CACHE_DIR=$work/cache USTITCH_PROGRESS_DELAY=0 "${rec[@]}" -- "$UST_REC_PROG" 1 2>"$work/pipe.log" >/dev/null
	expect_eq "pipe: no progress, no status line" "$(grep -c 'building the unwind table\|s  *$' "$work/pipe.log")" 0
}

"$1"
finish
