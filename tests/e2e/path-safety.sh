#!/bin/bash
# path-safety.sh RULE: paths a trace names (mapping records, .gnu_debuglink,
# archive manifests) are opened only as regular files of bounded size,
# and never through a symlink out of the directories they are looked in.
# ust-mktrace writes a trace whose one stack has a frame in a file that
# breaks RULE, made here in a temporary directory:
#   fifo       a mapping record names a FIFO (a blocking open would hang)
#   device     a mapping record names /dev/zero (reading it never ends)
#   huge       a mapping record names a 9 GiB sparse file (the cap is 8 GiB)
#   symlink    the program is reached only through a symlink in
#              search_dirs that leads out of them (by_handle=0: by handle
#              the program would be opened by its inode, wherever it is)
#   debuglink  a stripped program's .gnu_debuglink is "../outside/x.debug",
#              a real debug file with the right CRC: it must not be used
#   archive    the trace's archive holds a symlink to a program outside it,
#              and a FIFO, where the copies should be
# The frame must say what is wrong, the report must end (a time limit
# catches a hang) and the record after the stack must still print.
set -u
rule=$1
. "$(dirname "$0")/report-lib.sh"
work=$(mktemp -d /tmp/ustitch-paths.XXXXXX)
trap '[ -n "${UST_KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/t" "$work/outside"

maps="" frames="" args=() expect=()
case $rule in
fifo)
	mkfifo "$work/t/fifo"
	maps="mapping cpu=0 ts=900000 pid=100 path=$work/t/fifo buildid=none"
	frames="$work/t/fifo@0x1000"
	expect=("=> 0x1000 (fifo: not a regular file)")
	;;
device)
	maps="mapping cpu=0 ts=900000 pid=100 path=/dev/zero buildid=none"
	frames="/dev/zero@0x2000"
	expect=("=> 0x2000 (zero: not a regular file)")
	;;
huge)
	truncate -s 9G "$work/t/huge.so"
	maps="mapping cpu=0 ts=900000 pid=100 path=$work/t/huge.so buildid=none"
	frames="$work/t/huge.so@0x3000"
	expect=("=> 0x3000 (huge.so: larger than 8 GiB: not read)")
	;;
symlink)
	mkdir -p "$work/sd"
	cp "$UST_TESTPROG" "$work/outside/prog"
	ln -s "$work/outside/prog" "$work/sd/prog-link"
	dev=$(stat -c '%Hd:%Ld' "$work/outside/prog") ino=$(stat -c %i "$work/outside/prog")
	frames="kdev:$dev:ino=$ino@0x1139"
	args=(-O "ustitch:search_dirs=$work/sd" -O ustitch:by_handle=0)
	expect=("=> 0x1139 (dev $dev ino $ino: only a symlink out of the searched directories leads to it: not followed)")
	;;
debuglink)
	# The section: the name, NUL, padding to 4, the debug file's CRC32
	# (gzip's trailer holds it, little-endian as this ELF).
	dbg=$UST_TESTPROG_STRIPPED.debug
	cp "$dbg" "$work/outside/x.debug"
	cp "$UST_TESTPROG_STRIPPED" "$work/t/dl-prog"
	{ printf '../outside/x.debug\0\0'; gzip -c "$dbg" | tail -c8 | head -c4; } >"$work/link.sec"
	objcopy --remove-section .gnu_debuglink --add-section .gnu_debuglink="$work/link.sec" \
		"$work/t/dl-prog" || { echo "objcopy failed"; exit 1; }
	off=$(nm "$dbg" | awk '$3 == "ust_c" { print $1 }')
	maps="mapping cpu=0 ts=900000 pid=100 path=$work/t/dl-prog"
	frames="$work/t/dl-prog@0x$off"
	expect=("=> 0x$(printf %x $((16#$off))) (dl-prog)")
	;;
archive)
	# Files of a device no machine here has: only the archive could know them.
	a=$work/t/trace.dat.ustitch
	mkdir -p "$a/.by-inode"
	cp "$UST_TESTPROG" "$work/outside/prog"
	ln -s "$work/outside/prog" "$a/.by-inode/200-9-1234"
	mkfifo "$a/.by-inode/200-9-1235"
	printf '200:9 1234 - %s /orig/prog\n200:9 1235 - 0 /orig/fifo\n' \
		"$(stat -c %s "$work/outside/prog")" >"$a/manifest"
	frames="kdev:200:9:ino=1234@0x1139,kdev:200:9:ino=1235@0x10"
	args=(-O ustitch:by_handle=0)
	expect=("=> 0x1139 (prog: archive: .by-inode/200-9-1234: a symlink, not used)"
		"=> 0x10 (fifo: archive: .by-inode/200-9-1235: not a regular file, not used)")
	;;
*)
	echo "usage: path-safety.sh fifo|device|huge|symlink|debuglink|archive"; exit 2
	;;
esac

cat >"$work/spec" <<EOF
cpus 1
cmdline 100 victim
$maps
event cpu=0 ts=1000000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=1000000 pid=100 cookie=0x9
stack cpu=0 ts=1100000 pid=100 cookie=0x9 frames=$frames
event cpu=0 ts=1200000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
EOF
if ! "$UST_MKTRACE" "$work/spec" "$work/t/trace.dat"; then
	echo "ust-mktrace failed"; exit 1
fi
UST_REPORT_TIMEOUT=120 ust_report "$work/t" "$work/out" "$work/err" "${args[@]}" trace.dat || exit 1

fail=0
expect+=("          victim-100   [000]     0.001200: sys_enter_getppid:    ")
for line in "${expect[@]}"; do
	if ! grep -qxF -- "$line" "$work/out"; then
		echo "missing line: $line"; fail=1
	fi
done
# The test program's functions are all ust_*: none may be symbolized.
if grep -q '=> ust_' "$work/out"; then
	echo "a file that must not be used was symbolized"; fail=1
fi
if [ $fail -ne 0 ]; then
	echo "--- report:"; cat "$work/out"; echo "--- stderr:"; cat "$work/err"
	exit 1
fi
echo "ok $rule"
