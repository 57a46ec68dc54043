#!/bin/bash
# Live tests of `ustitch record --addr-filter` (root, tracefs, BPF,
# uprobes).  af-prog (see af-prog.c) makes 19 getppid() calls per process,
# in two processes that map af-lib at different addresses: 7 of them from
# inside af_lib_call(), 6 between af_phase_begin() and af_phase_end().
#
# usage: test-addrfilter.sh filter|startstop|combine|refusals
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
[ -d /sys/kernel/tracing/instances ] || { echo "skip: no tracefs"; exit 77; }
work=$(mktemp -d /tmp/ustitch-af.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
expect_eq() { [ "$2" = "$3" ] && ok "$1: $2" || bad "$1: got '$2', expected '$3'"; }

LIB=$UST_AF_LIB
PROG=$UST_AF_PROG

# rec OUT ARGS...: record sys_enter_getppid of af-prog with ARGS.
rec() {
	local out=$1; shift
	"$UST_USTITCH" record -o "$work/$out.dat" -e syscalls:sys_enter_getppid "$@" \
		-- "$PROG" "$LIB" >"$work/$out.out" 2>"$work/$out.log" ||
		{ bad "record $*: $(cat "$work/$out.log")"; return 1; }
	trace-cmd report -N "$work/$out.dat" >"$work/$out.txt" 2>/dev/null
}

# count OUT PID: the getppid events of PID in the report.
count() {
	# "[ustitch:] COMM-PID [CPU] TIME: EVENT:" (the buffer's name when there are several)
	awk -v P="$2" '/sys_enter_getppid:/ && match($0, /-[0-9]+ +\[[0-9]+\]/) {
			pid = substr($0, RSTART + 1, RLENGTH); sub(/ .*/, "", pid); if (pid == P) n++ }
		END { print n + 0 }' "$work/$1.txt"
}

# check OUT WHAT N: N events in each of the two processes, which mapped
# the library at different addresses.
check() {
	local pids addrs p
	pids=$(awk '$1 == "af-prog" { print $2 }' "$work/$1.out")
	addrs=$(awk '$1 == "af-prog" { print $3 }' "$work/$1.out" | sort -u | wc -l)
	expect_eq "$2: processes" "$(echo $pids | wc -w)" 2
	expect_eq "$2: distinct addresses of af_lib_call" "$addrs" 2
	for p in $pids; do
		expect_eq "$2: events of process $p" "$(count "$1" "$p")" "$3"
	done
}

filter() {
	rec all || return
	check all "no --addr-filter (ftrace)" 19
	rec lib --addr-filter "filter file:af_lib_call@$LIB" || return
	check lib "filter file:af_lib_call@LIB" 7
	grep -q 'sys_enter_getppid' "$work/lib.txt" && ok "events in the report" || bad "no event in the report"
	# By offset: the function's range, as a number.
	local off size a line fo va fsz
	read -r a size < <(nm -S --defined-only "$LIB" | awk '$4 == "af_lib_call" { print $1, $2 }')
	a=$((16#$a))
	# Address to file offset through the LOAD segment that holds it.
	while read -r line; do
		set -- $line
		fo=$(($2)) va=$(($3)) fsz=$(($5))
		[ "$a" -ge "$va" ] && [ "$a" -lt $((va + fsz)) ] && off=$(printf '0x%x' $((a - va + fo)))
	done < <(readelf -lW "$LIB" | awk '$1 == "LOAD"')
	rec off --addr-filter "filter file:$off/0x$size@$LIB" || return
	check off "filter file:$off/0x$size@LIB" 7
	# Two ranges add up: the library and the program's own syscalls.
	rec two --addr-filter "filter file:af_lib_call@$LIB" --addr-filter "filter file:own_getppid@$PROG" || return
	check two "library + own_getppid" 10
}

startstop() {
	rec phase --addr-filter "start file:af_phase_begin@$PROG, stop file:af_phase_end@$PROG" || return
	check phase "start af_phase_begin, stop af_phase_end" 6
	rec both --addr-filter "start file:af_phase_begin@$PROG stop file:af_phase_end@$PROG" \
		--addr-filter "filter file:af_lib_call@$LIB" || return
	check both "start/stop and filter af_lib_call" 2
}

combine() {
	rec rcu -f '!lock_held(rcu)' --addr-filter "filter file:af_lib_call@$LIB" || return
	check rcu "!lock_held(rcu) && filter af_lib_call" 7
	rec rcuno -f 'lock_held(rcu)' --addr-filter "filter file:af_lib_call@$LIB" || return
	check rcuno "lock_held(rcu) && filter af_lib_call" 0
}

# refuse EXPECTED-MESSAGE ARGS...: exit 2, exactly that message, nothing touched.
refuse() {
	local want=$1 got rc; shift
	got=$("$UST_USTITCH" record -o "$work/no.dat" -e syscalls:sys_enter_getppid "$@" -- /bin/true 2>&1)
	rc=$?
	expect_eq "refused: $*: exit" "$rc" 2
	expect_eq "refused: $*: message" "$got" "$want"
	[ ! -e "$work/no.dat" ] || bad "refused: $*: wrote a file"
}

refusals() {
	local kp="this kernel has none (no kprobe PMU in /sys/bus/event_source/devices)"
	[ -e /sys/bus/event_source/devices/kprobe/type ] && kp="not supported yet"
	refuse "ustitch record: --addr-filter: column 8: no function af_nope in $LIB" \
		--addr-filter "filter file:af_nope@$LIB"
	refuse "ustitch record: --addr-filter: column 8: no such file: /nope/libx.so" \
		--addr-filter "filter file:0x10@/nope/libx.so"
	refuse "ustitch record: --addr-filter: column 1: expected filter, start or stop, got 'begin'" \
		--addr-filter "begin file:af_lib_call@$LIB"
	refuse "ustitch record: --addr-filter: column 8: 'file:af_lib_call': expected file:OFFSET[/SIZE]@PATH" \
		--addr-filter "filter file:af_lib_call"
	refuse "ustitch record: --addr-filter: column 1: 'filter' without a range" \
		--addr-filter "filter"
	refuse "ustitch record: --addr-filter: column 1: 'start kernel:schedule': start/stop at kernel addresses need kprobes: $kp" \
		--addr-filter "start kernel:schedule"
	local first="stop file:af_phase_end@$PROG, "
	refuse "ustitch record: --addr-filter: column $((${#first} + 1)): 'filter kernel:0xffffffff81000000/0x10': filters on kernel addresses apply to sampled kernel IPs: not supported yet (tracepoint events have none)" \
		--addr-filter "start file:af_phase_begin@$PROG" --addr-filter "${first}filter kernel:0xffffffff81000000/0x10"
	refuse "ustitch record: --addr-filter with perf samples (-e cpu-clock, -F, ...): filtering samples is not supported yet" \
		-e cpu-clock --addr-filter "filter file:af_lib_call@$LIB"
	# Columns count leading separators.
	refuse "ustitch record: --addr-filter: column 2: 'stop kernel:schedule': start/stop at kernel addresses need kprobes: $kp" \
		--addr-filter " stop kernel:schedule"
}

case ${1:-} in
filter | startstop | combine | refusals) "$1" ;;
*) echo "usage: $0 filter|startstop|combine|refusals"; exit 2 ;;
esac
[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
