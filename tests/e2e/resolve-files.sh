#!/bin/bash
# Traces as the stock `trace-cmd record -O userstacktrace_delay` writes them
# (no ustitch/user_mapping records: (dev, inode, offset) per frame only) of
# a program built at test time in a temporary directory that no source of
# the plugin knows by path.  Each check compares the frames exactly.
#   - found by file handle; the same after a move within the file system
#   - by_handle=0: unnamed; search_dirs names them
#   - without CAP_DAC_READ_SEARCH: the one message at the end; search_dirs works
#   - rewritten in place after the trace: frames marked =>?, said at the end
#   - rebuilt at the same path (a new inode): never its symbols
#   - tmpfs (handles refused): the trace's directory finds it
#   - overlayfs: the kernel records the underlying file; found by handle
#   - ustitch archive, then the program deleted: identical frames, from
#     TRACE.ustitch/ next to the trace and from -O ustitch:archive=DIR
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root (open_by_handle_at)"; exit 77; }
work=$(mktemp -d /tmp/ustitch-resfiles.XXXXXX)
shm=$(mktemp -d /dev/shm/ustitch-resfiles.XXXXXX)
cleanup() { umount "$work/ovl/m" 2>/dev/null; rm -rf "$work" "$shm"; }
trap cleanup EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
src=$(dirname "$0")/../progs/testprog.c

build() { gcc -O0 -g -fno-omit-frame-pointer -o "$1" "$src" || { echo "cannot build $1"; exit 1; }; }

# mktrace PROG_FRAMES_SOURCE DIR: a trace in DIR with one stack of PROG's chain.
# $2 frames spec: PATH (stat here) or kdev:MAJ:MIN:ino=N (explicit).
mktrace() {
	local p=$1 dir=$2 f=""
	mkdir -p "$dir"
	for fn in ust_c ust_b ust_a main; do
		f="$f${f:+,}$p:$fn+0x8"
	done
	cat >"$dir/spec" <<-EOF
	cpus 1
	cmdline 100 prog
	event cpu=0 ts=1000000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
	cookie cpu=0 ts=1000000 pid=100 cookie=0x9
	stack cpu=0 ts=1100000 pid=100 cookie=0x9 frames=$f
	EOF
	"$UST_MKTRACE" "$dir/spec" "$dir/trace.dat" || { echo "ust-mktrace failed"; exit 1; }
}

# frames DIR [report options]: the frame lines of the report of DIR/trace.dat,
# run in DIR (the current directory is searched too); stderr in DIR/err.
frames() {
	local d=$1; shift
	( cd "$d" && env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
		${UST_SAN_PRELOAD:+LD_PRELOAD=$UST_SAN_PRELOAD} ${WRAP:-} trace-cmd report "$@" trace.dat \
		2>err | grep '^=>' )
}
named() { printf '=>%s ust_c+0x8 (%s)\n=>%s ust_b+0x8 (%s)\n=>%s ust_a+0x8 (%s)\n=>%s main+0x8 (%s)\n' \
	"${2:-}" "$1" "${2:-}" "$1" "${2:-}" "$1" "${2:-}" "$1"; }
# expect NAME GOT WANT
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; diff <(echo "$3") <(echo "$2") | sed 's/^/    /'; fi
}
# A frame's "dev M:m ino N" as the report prints it.
devino() { stat -c 'dev %Hd:%Ld ino %i' "$1"; }
offsets() { frames "$1" -O ustitch:symbols=0 | awk '{ print $2 }'; }

mkdir -p "$work/bin"
prog=$work/bin/prog
build "$prog"
mktrace "$prog" "$work/t"

expect "found by file handle" "$(frames "$work/t")" "$(named prog)"
expect "nothing said at the end" "$(cat "$work/t/err")" ""
offs=$(offsets "$work/t")
di=$(devino "$prog")
expect "by_handle=0: not found" "$(frames "$work/t" -O ustitch:by_handle=0)" \
	"$(for o in $offs; do echo "=> $o ($di)"; done)"
expect "by_handle=0, search_dirs: found" \
	"$(frames "$work/t" -O ustitch:by_handle=0 -O ustitch:search_dirs="$work/bin")" "$(named prog)"

# Without the capability (dropped from the bounding set: root's exec gets
# no CAP_DAC_READ_SEARCH): one message, at the end; search_dirs still works.
nocap() { WRAP="setpriv --bounding-set -dac_read_search" frames "$@"; }
expect "without CAP_DAC_READ_SEARCH: not found" "$(nocap "$work/t")" \
	"$(for o in $offs; do echo "=> $o ($di)"; done)"
expect "without CAP_DAC_READ_SEARCH: said once" "$(cat "$work/t/err")" \
	"ustitch: 1 file was not opened by handle: open_by_handle_at needs CAP_DAC_READ_SEARCH (report as root, or name their directories with -O ustitch:search_dirs=DIR)"
expect "without CAP_DAC_READ_SEARCH: search_dirs" \
	"$(nocap "$work/t" -O ustitch:search_dirs="$work/bin")" "$(named prog)"

mv "$prog" "$work/bin/prog-moved"
expect "moved within the file system: found by handle" "$(frames "$work/t")" "$(named prog-moved)"

# Rewritten in place (same inode) after the trace, no build-id in the trace.
cp "$work/bin/prog-moved" "$work/copy"
sleep 0.05
cat "$work/copy" >"$work/bin/prog-moved"
expect "rewritten after the trace: marked" "$(frames "$work/t")" "$(named prog-moved '?')"
expect "rewritten after the trace: said at the end" "$(cat "$work/t/err")" \
	"ustitch: $work/bin/prog-moved ($di): modified after the trace was recorded, and the trace has no build-id for it: its frames are marked =>?"

# Rebuilt at the same path: the linker makes a new inode; the traced one is
# gone, or its number now belongs to the new file.  Never its symbols.
build "$work/bin/prog-moved"
want_gone=$(for o in $offs; do echo "=> $o ($di: no longer exists)"; done)
want_reused=$(for o in $offs; do echo "=> $o ($di: not the traced file: created after the trace (inode number reused))"; done)
# gone_or_reused NAME: the traced inode is free, or any file created since
# (the rebuilt one, or one of a test running beside) has its number.
gone_or_reused() {
	local got
	got=$(frames "$work/t")
	if [ "$got" = "$want_gone" ] || [ "$got" = "$want_reused" ]; then
		ok "$1: not used ($(echo "$got" | head -1 | sed 's/.*ino [0-9]*: //; s/)$//'))"
	else
		bad "$1"; echo "$got" | sed 's/^/    /'
	fi
}
gone_or_reused "rebuilt at the same path"
rm "$work/bin/prog-moved"
gone_or_reused "deleted"

# tmpfs refuses handles made from inode numbers: the trace's directory.
build "$shm/prog"
mktrace "$shm/prog" "$shm"
mkdir -p "$work/elsewhere"
cp "$shm/trace.dat" "$work/elsewhere/"
expect "tmpfs, trace elsewhere: not found, nothing said" "$(frames "$work/elsewhere" | sed 's/ (dev .*//')" \
	"$(offsets "$shm" | sed 's/^/=> /')"
expect "tmpfs, trace in the program's directory: found" "$(frames "$shm")" "$(named prog)"

# overlayfs: a mapping holds the underlying (upper or lower) file, and the
# kernel records its device and inode; the handle opens it there.
mkdir -p "$work/ovl/l" "$work/ovl/u" "$work/ovl/w" "$work/ovl/m"
build "$work/ovl/l/prog"
if unshare -m sh -c "mount -t overlay overlay -o lowerdir=$work/ovl/l,upperdir=$work/ovl/u,workdir=$work/ovl/w $work/ovl/m && test -x $work/ovl/m/prog"; then
	# Frames under the lower file's real (dev, inode), as the kernel records them.
	mktrace "$work/ovl/l/prog" "$work/ovl/t0"
	expect "overlayfs lower file: found by handle" "$(frames "$work/ovl/t0")" "$(named prog)"
else
	echo "ok - # SKIP no overlayfs here"
fi

# ustitch archive: then the program goes away; the frames stay.
build "$work/bin/prog2"
mktrace "$work/bin/prog2" "$work/a"
before=$(frames "$work/a")
out=$("$UST_USTITCH" archive -i "$work/a/trace.dat" 2>&1)
bid=$(readelf -n "$work/bin/prog2" | awk '/Build ID/ { print $3 }')
size=$(stat -c %s "$work/bin/prog2")
expect "archive: manifest" "$(grep -v '^#' "$work/a/trace.dat.ustitch/manifest")" \
	"$(devino "$work/bin/prog2" | awk '{ print $2, $4 }') $bid $size $work/bin/prog2"
expect "archive: its summary" "$(echo "$out" | head -1)" \
	"1 file and 0 debug files ($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB) archived in $work/a/trace.dat.ustitch"
cmp -s "$work/bin/prog2" "$work/a/trace.dat.ustitch/.build-id/${bid:0:2}/${bid:2}" &&
	ok "archive: the copy, by build-id" || bad "archive: the copy, by build-id"
rm "$work/bin/prog2"
expect "archive, program deleted: identical frames" "$(frames "$work/a")" "$before"
expect "archive: nothing said at the end" "$(cat "$work/a/err")" ""
mkdir -p "$work/moved"
mv "$work/a/trace.dat" "$work/moved/"
mv "$work/a/trace.dat.ustitch" "$work/arch"
expect "archive elsewhere, -O ustitch:archive=DIR: identical frames" \
	"$(frames "$work/moved" -O ustitch:archive="$work/arch")" "$before"
expect "-O ustitch:archive=DIR that is none: said" \
	"$(frames "$work/moved" -O ustitch:archive="$work/bin" >/dev/null; cat "$work/moved/err")" \
	"ustitch: archive $work/bin: no manifest (No such file or directory)"

[ "$fails" = 0 ] && exit 0
echo "$fails failed"
exit 1
