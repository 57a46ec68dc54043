#!/bin/bash
# ustitch report: trace-cmd report with the plugin beside the ustitch
# binary, from the build tree, with no TRACEEVENT_PLUGIN_DIR:
#   - the stack's frames, exactly; --help on stdout; ustitch --help lists it
#   - another copy of the plugin in ~/.local (loaded after it) stands down
#   - progress lines (USTITCH_PROGRESS_DELAY=0: at once) of the first pass
#     and of ustitch archive on a terminal (script's pty), erased at the
#     end; none through a pipe
set -u
work=$(mktemp -d /tmp/ustitch-reportcmd.XXXXXX)
trap '[ -n "${UST_KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; diff <(echo "$3") <(echo "$2") | sed 's/^/    /'; fi
}

f=""
for fn in ust_c ust_b ust_a main; do f="$f${f:+,}$UST_TESTPROG:$fn+0x8"; done
cat >"$work/spec" <<EOF
cpus 1
cmdline 100 ust-testprog
mapping cpu=0 ts=900000 pid=100 path=$UST_TESTPROG
event cpu=0 ts=1000000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=1000000 pid=100 cookie=0x9
stack cpu=0 ts=1100000 pid=100 cookie=0x9 frames=$f
EOF
"$UST_MKTRACE" "$work/spec" "$work/trace.dat" || { echo "FAIL - ust-mktrace"; exit 1; }
want=$(printf '=> %s (ust-testprog)\n' ust_c+0x8 ust_b+0x8 ust_a+0x8 main+0x8)

# run OUT ERR ARGS...: ustitch ARGS in $work, HOME there, no plugin directory named.
run() {
	local out=$1 err=$2
	shift 2
	( cd "$work" && env -u TRACEEVENT_PLUGIN_DIR HOME="$work/home" \
		${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} "$UST_USTITCH" "$@" >"$out" 2>"$err" )
}

mkdir -p "$work/home"
run "$work/out" "$work/err" report -i trace.dat
expect "ustitch report: exit status" $? 0
expect "ustitch report: the stitched frames" "$(grep '^=>' "$work/out")" "$want"
expect "ustitch report: nothing on stderr" "$(cat "$work/err")" ""

run "$work/help" "$work/err" report --help
expect "ustitch report --help: exit status" $? 0
expect "ustitch report --help: usage on stdout" "$(head -1 "$work/help")" \
	"usage: ustitch report [trace-cmd report options] [trace.dat]"
run "$work/help" "$work/err" --help
expect "ustitch --help lists report" "$(grep -c '^  report   trace-cmd report with this ustitch' "$work/help")" 1

# A copy in ~/.local loads after the build's: ours acts all the same.
mkdir -p "$work/home/.local/lib/traceevent/plugins"
cp "$UST_PLUGIN_DIR/plugin_ustitch.so" "$work/home/.local/lib/traceevent/plugins/"
# Two instrumented copies in one process define the same globals, which
# ASan calls an ODR violation: here they are meant to.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0 \
	USTITCH_DEBUG=1 run "$work/out" "$work/err" report -i trace.dat
expect "with a copy in ~/.local: the frames" "$(grep '^=>' "$work/out")" "$want"
expect "with a copy in ~/.local: the build's copy acts" \
	"$(sed -n 's/^ustitch: acting copy: //p' "$work/err")" "$(readlink -f "$UST_PLUGIN_DIR/plugin_ustitch.so")"
rm -rf "$work/home/.local"

# Progress lines: on a terminal only.
export USTITCH_PROGRESS_DELAY=0
( cd "$work" && env -u TRACEEVENT_PLUGIN_DIR HOME="$work/home" \
	${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} \
	script -qec "\"$UST_USTITCH\" report -i trace.dat >/dev/null" /dev/null >"$work/tty" 2>&1 )
expect "first pass on a terminal: its progress line" \
	"$(tr '\r' '\n' <"$work/tty" | grep -c '^ustitch: first pass over trace.dat: *[0-9]* %')" 1
expect "first pass on a terminal: erased (the last thing written is a blank line)" \
	"$(tr '\r' '\n' <"$work/tty" | grep -v '^$' | tail -1 | tr -d ' ')" ""
run "$work/out" "$work/err" report -i trace.dat
expect "first pass into a pipe: no progress line" "$(grep -c 'first pass' "$work/err")" 0
( cd "$work" && env HOME="$work/home" script -qec "\"$UST_USTITCH\" archive -i trace.dat -o a1" /dev/null >"$work/tty" 2>&1 )
expect "archive on a terminal: its progress line" \
	"$(tr '\r' '\n' <"$work/tty" | grep -c '^ustitch archive: copying the files: *[0-9]* %')" 1
run "$work/out" "$work/err" archive -i trace.dat -o a2
expect "archive into a pipe: no progress line" "$(grep -c 'copying the files\|first pass' "$work/err")" 0
expect "archive into a pipe: the files archived" "$(head -1 "$work/out" | cut -d' ' -f1-2)" "1 file"
USTITCH_PROGRESS_DELAY=-1 script -qec "cd '$work' && \"$UST_USTITCH\" archive -i trace.dat -o a3" /dev/null >"$work/tty" 2>&1
expect "USTITCH_PROGRESS_DELAY=-1: none on a terminal" "$(grep -c 'copying the files' "$work/tty")" 0

[ $fails -eq 0 ]
