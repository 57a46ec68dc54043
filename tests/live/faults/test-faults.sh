#!/bin/bash
# Faults around `ustitch record` (root, tracefs, BPF): the output is a
# valid trace.dat or says it is unfinished, the exit status and message are
# exact, and the recorder's tracefs instance, BPF programs and links are
# gone afterwards, with the top instance unchanged.
# usage: test-faults.sh enospc|overrun|command|kill|parallel
set -u
. "$(dirname "$0")/../lib.sh" faults "${1:-}" enospc overrun command kill parallel

prog=$UST_REC_PROG
base=$(basename "$prog")
main_chain="getppid;rec_c;rec_b;rec_a;main;__libc_start_call_main;__libc_start_main;_start"
thr_chain="getppid;thr_b;thr_a;rec_thread;start_thread;clone3"
child_chain="getppid;child_y;child_x;main;__libc_start_call_main;__libc_start_main;_start"
top_before=$(top_state)

# rec NAME ARGS...: `ustitch record ARGS` in the background; $pid, and its
# BPF ids sampled while it records in $work/NAME.ids.
rec() {
	local name=$1
	shift
	"$UST_USTITCH" record "$@" >"$work/$name.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		[ -d "/sys/kernel/tracing/instances/ustitch-$pid" ] && [ -n "$(bpf_ids $pid)" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	bpf_ids $pid >"$work/$name.ids"
}

# ends NAME STATUS [MESSAGE]: the recorder rec started ends with STATUS,
# having said exactly MESSAGE.
ends() {
	local rc=0
	wait $pid || rc=$?
	expect_eq "$1: exit status" $rc "$2"
	[ $# -lt 3 ] || expect_eq "$1: message" "$(cat "$work/$1.log")" "$3"
}

# at_sleep: wait until the command has done its rec-prog run and sleeps.
at_sleep() {
	for _ in $(seq 200); do
		pgrep -x -P $pid sleep >/dev/null && return
		sleep 0.05
	done
	bad "the command did not reach its sleep"
}

# restored NAME PID: its instance and BPF objects are gone, the top instance is as it was.
restored() {
	expect_eq "$1: instance ustitch-$2 left" \
		"$(ls /sys/kernel/tracing/instances | grep -c "^ustitch-$2\$")" 0
	[ -s "$work/$1.ids" ] || bad "$1: no BPF programs were seen while it recorded"
	expect_eq "$1: BPF programs and links left" "$(bpf_left "$work/$1.ids" | wc -l)" 0
	[ "$(top_state)" = "$top_before" ] && ok "$1: top instance unchanged" ||
		bad "$1: top instance changed"
}

valid() {
	trace-cmd dump -v "$2" 2>&1 | grep -q "is a valid trace-cmd file" &&
		ok "$1: valid trace.dat" || bad "$1: $2 is not a valid trace.dat"
}

# Stacks the plugin printed in rec-prog's tasks, each checked against its
# task's chain: "MAIN THREAD CHILD SHELL WRONG" counts.  The main thread is
# the smallest tid; SHELL is dash before it exec()s rec-prog (its own
# getppid() at start, in a dash without symbols: its entry point is
# _start, its functions unnamed).
chains() {
	awk -f "$here/blocks.awk" "$1" | sed -n "s/^$base-//p" | sort -n |
		awk -v m="$main_chain" -v t="$thr_chain" -v c="$child_chain" \
		-v sh='^getppid;(0x[0-9a-f]+;)+__libc_start_call_main;__libc_start_main;_start$' \
		'NR == 1 { first = $1 }
		$2 == m && $1 == first { nm++; next }
		$2 == t && $1 != first { nt++; next }
		$2 == c && $1 != first { nc++; next }
		$2 ~ sh { ns++; next }
		{ nw++ }
		END { printf "%d %d %d %d %d\n", nm, nt, nc, ns, nw }'
}

# a. The output's file system fills up: at the end (kallsyms alone is
# larger than it), and while pages are staged during the recording.
enospc() {
	local dir=$work/small out
	mkdir "$dir"
	# Room for the staging files of two events, not for the file at the
	# end: about 60 KiB since the file holds only the enabled events'
	# formats (saved_cmdlines, 11 KiB on a busy machine, and trace_printk's
	# formats are most of it).  At 64 KiB that file fitted, and only its
	# compressed copy did not (the trace is then kept uncompressed, exit
	# 0: not this test's failure).
	mount -t tmpfs -o size=32k tmpfs "$dir" || { bad "cannot mount a tmpfs"; return; }
	out=$dir/t.dat
	rec end -q -o "$out" -e syscalls:sys_enter_getppid -O userstacktrace_delay -- \
		sh -c "sleep 0.5; exec $prog 2"
	ends end 1 "ustitch record: writing the trace failed: $out: write failed: No space left on device"
	expect_eq "full at the end: files left" "$(ls -A "$dir" | wc -l)" 0
	expect_eq "full at the end: space left in use (KiB)" "$(df --output=used "$dir" | tail -1 | tr -d ' ')" 0
	restored end $pid
	rec staging -q -o "$out" -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid \
		-O userstacktrace_delay -- sh -c "sleep 0.5; exec $prog 20000"
	ends staging 1 "ustitch record: $out: staging file: write failed: No space left on device"
	expect_eq "full while recording: files left" "$(ls -A "$dir" | wc -l)" 0
	restored staging $pid
	umount "$dir"
}

# b. A 4 KiB ring buffer per CPU and 100k events: events are lost, the
# report says so, and every stack it prints is its own task's.
overrun() {
	local lost marks
	rec overrun -b 4 -o "$work/o.dat" -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid \
		-O userstacktrace_delay -- sh -c "sleep 0.5; exec $prog 10000"
	ends overrun 0
	valid overrun "$work/o.dat"
	# The summary's main buffer part: "N events, M lost (main buffer)".
	lost=$(sed -n 's/^ustitch record: wrote .*: [0-9]* events\{0,1\}, \([0-9]*\) lost (main buffer).*/\1/p' \
		"$work/overrun.log")
	at_least "overrun: events lost (the recorder's summary)" "$lost" 1
	report "$work/o.dat" >"$work/o.report"
	marks=$(grep -c '^ *CPU:[0-9]* \[EVENTS DROPPED\]$' "$work/o.report")
	at_least "overrun: the report's [EVENTS DROPPED] marks" "$marks" 1
	set -- $(chains "$work/o.report")
	at_least "overrun: main thread stacks" "$1" 1
	at_least "overrun: second thread stacks" "$2" 1
	expect_eq "overrun: the shell's stacks (enter, exit)" "$4" 2
	expect_eq "overrun: stacks that are not their task's chain" "$5" 0
	restored overrun $pid
}

# c. The command crashes (the trace is whole and says what it recorded), or
# cannot be run (a shell's 127 and 126, no file).
command() {
	local rc cmd want
	rec crash -q -o "$work/c.dat" -e syscalls:sys_enter_getppid -O userstacktrace_delay -- \
		sh -c "sleep 0.5; $prog 1; kill -SEGV \$\$"
	ends crash 0 "ustitch record: sh was killed by signal 11 (Segmentation fault)"
	valid crash "$work/c.dat"
	report "$work/c.dat" >"$work/c.report"
	set -- $(chains "$work/c.report")
	expect_eq "crash: stacks (main, thread, child, shell, wrong)" "$*" "3 2 1 0 0"
	restored crash $pid

	while IFS='|' read -r cmd want; do
		rc=0
		"$UST_USTITCH" record -q -o "$work/x.dat" -e syscalls:sys_enter_getppid \
			-O userstacktrace_delay -- $cmd >"$work/x.log" 2>&1 || rc=$?
		expect_eq "$cmd: exit status" $rc "${want%%|*}"
		expect_eq "$cmd: message" "$(cat "$work/x.log")" "${want#*|}"
		[ ! -e "$work/x.dat" ] && ok "$cmd: no trace.dat" || bad "$cmd: left $work/x.dat"
	done <<-EOF
	/nonexistent|127|ustitch record: cannot run /nonexistent: No such file or directory
	nosuchcommand-ustitch|127|ustitch record: cannot run nosuchcommand-ustitch: No such file or directory
	/etc/passwd|126|ustitch record: cannot run /etc/passwd: Permission denied
	EOF
	[ "$(top_state)" = "$top_before" ] && ok "exec failures: top instance unchanged" ||
		bad "exec failures: top instance changed"
}

# d. SIGKILL: the file says it is unfinished, the instance stays until the
# next run, BPF goes with the process.  SIGINT and SIGTERM with a command
# running: a whole trace, the command stopped too.
kill_cases() {
	local rc child line sig
	mkdir "$work/m"
	rec killed -o "$work/k.dat" -e syscalls:sys_enter_getppid -O userstacktrace_delay -- \
		sh -c "$prog 1; exec sleep 60"
	at_sleep
	child=$(pgrep -P $pid)
	kill -KILL $pid
	wait $pid 2>/dev/null
	kill $child
	report "$work/k.dat" >"$work/k.report"; rc=$?
	expect_eq "SIGKILL: report's exit status" $rc 0
	line=$(grep -c . "$work/k.report")
	expect_eq "SIGKILL: report lines" "$line" 2
	expect_eq "SIGKILL: report says unfinished" "$(sed -n 2p "$work/k.report" | tr -s ' ' | sed 's/^ //')" \
		"ustitch-$pid [000] 0.000000: unfinished: UNFINISHED: ustitch (pid $pid) has not finished writing this trace: it is still running, or it was killed before the end; its events are not in this file"
	expect_eq "SIGKILL: BPF programs and links left" "$(bpf_left "$work/killed.ids" | wc -l)" 0
	expect_eq "SIGKILL: its instance stays until ustitch reset" \
		"$(ls /sys/kernel/tracing/instances | grep -c "^ustitch-$pid\$")" 1
	# (Another recorder on this machine may remove it first: then 0.)
	"$UST_USTITCH" reset >"$work/reset.log" 2>&1; rc=$?
	expect_eq "SIGKILL: ustitch reset's exit status" $rc 0
	grep -Eq "^ustitch reset: removed [0-9]+ stale ustitch instances? of recorders that are gone$" \
		"$work/reset.log" && ok "SIGKILL: ustitch reset says what it removed" ||
		bad "SIGKILL: ustitch reset said: $(cat "$work/reset.log")"
	expect_eq "SIGKILL: instance after ustitch reset" \
		"$(ls /sys/kernel/tracing/instances | grep -c "^ustitch-$pid\$")" 0
	[ "$(top_state)" = "$top_before" ] && ok "SIGKILL: top instance unchanged" ||
		bad "SIGKILL: top instance changed"

	# SIGKILL while the file is written (the summary comes just before):
	# the placeholder or the whole trace, nothing between, no temporary file.
	rec midwrite -o "$work/m/t.dat" -e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid \
		-O userstacktrace_delay -- "$prog" 3000
	for _ in $(seq 20000); do grep -q '^ustitch record: wrote ' "$work/midwrite.log" && break; done
	kill -KILL $pid
	wait $pid 2>/dev/null
	report "$work/m/t.dat" >"$work/m.report"
	if grep -q ': UNFINISHED: ' "$work/m.report"; then
		expect_eq "SIGKILL while writing: the placeholder's lines" "$(grep -c . "$work/m.report")" 2
	else
		valid "SIGKILL while writing (after the rename)" "$work/m/t.dat"
	fi
	expect_eq "SIGKILL while writing: files beside it" "$(ls -A "$work/m")" t.dat
	"$UST_USTITCH" record -q -o "$work/next.dat" -e syscalls:sys_enter_getppid -- true
	expect_eq "SIGKILL while writing: instance after the next run" \
		"$(ls /sys/kernel/tracing/instances | grep -c "^ustitch-$pid\$")" 0

	for sig in INT TERM; do
		rec "SIG$sig" -q -o "$work/$sig.dat" -e syscalls:sys_enter_getppid -O userstacktrace_delay -- \
			sh -c "$prog 1; exec sleep 60"
		at_sleep
		kill -$sig $pid
		SECONDS=0
		ends "SIG$sig" 0 "ustitch record: sh was killed by signal $(kill -l $sig) ($(
			[ $sig = INT ] && echo Interrupt || echo Terminated))"
		[ $SECONDS -lt 10 ] && ok "SIG$sig: stopped the command too" || bad "SIG$sig: waited ${SECONDS}s"
		valid "SIG$sig" "$work/$sig.dat"
		report "$work/$sig.dat" >"$work/$sig.report"
		set -- $(chains "$work/$sig.report")
		expect_eq "SIG$sig: stacks (main, thread, child, shell, wrong)" "$*" "3 2 1 0 0"
		restored "SIG$sig" $pid
	done
}

# e. Two recorders at once, on the same events and on different ones:
# each trace has its own command's events and stacks only.
parallel() {
	local a b rca rcb
	for ev in same different; do
		local eva=syscalls:sys_enter_getppid evb=syscalls:sys_enter_getppid
		[ $ev = different ] && evb=syscalls:sys_exit_getppid
		rec "$ev-a" -q -o "$work/$ev-a.dat" -e $eva -O userstacktrace_delay -- \
			sh -c "sleep 0.5; exec $prog 3"
		a=$pid
		rec "$ev-b" -q -o "$work/$ev-b.dat" -e $evb -O userstacktrace_delay -- \
			sh -c "sleep 0.2; exec $prog 2"
		b=$pid
		wait $a; rca=$?
		wait $b; rcb=$?
		expect_eq "$ev events: exit statuses" "$rca $rcb" "0 0"
		report "$work/$ev-a.dat" >"$work/$ev-a.report"
		report "$work/$ev-b.dat" >"$work/$ev-b.report"
		# rec-prog's 16 and 11 getppid() calls, and its shell's one
		expect_eq "$ev events: A's events" "$(grep -c " ${eva#*:}: " "$work/$ev-a.report")" 17
		expect_eq "$ev events: B's events" "$(grep -c " ${evb#*:}: " "$work/$ev-b.report")" 12
		expect_eq "$ev events: A's other events" "$(grep -Ec ' (sys_enter|sys_exit)_[a-z]+: ' \
			"$work/$ev-a.report")" 17
		expect_eq "$ev events: B's other events" "$(grep -Ec ' (sys_enter|sys_exit)_[a-z]+: ' \
			"$work/$ev-b.report")" 12
		set -- $(chains "$work/$ev-a.report")
		expect_eq "$ev events: A's stacks (main, thread, child, shell, wrong)" "$*" "9 6 1 1 0"
		set -- $(chains "$work/$ev-b.report")
		expect_eq "$ev events: B's stacks (main, thread, child, shell, wrong)" "$*" "6 4 1 1 0"
		expect_eq "$ev events: tasks in both traces" "$(comm -12 \
			<(grep -o "$base-[0-9]*" "$work/$ev-a.report" | sort -u) \
			<(grep -o "$base-[0-9]*" "$work/$ev-b.report" | sort -u) | wc -l)" 0
		restored "$ev-a" $a
		restored "$ev-b" $b
	done
}

case $1 in
kill) kill_cases ;;
enospc | overrun | command | parallel) "$1" ;;
esac
finish
