#!/bin/bash
# Reading a trace elsewhere, against a real debuginfod server on 127.0.0.1
# (its own database and scan directory in a temp dir) and the real
# libdebuginfod client (its own cache per check).  The trace's two files,
# a stripped binary and an unstripped one, are copied, recorded by their
# mapping records (build-ids), then deleted: only the server has them.
#   - server up: function names and source lines, each file asked once
#   - -O ustitch:debuginfod=0: the files stay unnamed
#   - ustitch archive --debuginfod, then the server stopped: the archive
#     symbolizes alone
#   - server stopped: one message at the end, the report goes on
#   - a server (python3 http.server laid out as /buildid/ID/executable)
#     answering with another binary: refused, said at those frames
set -u
. "$(dirname "$0")/report-lib.sh"
. "$(dirname "$0")/debuginfod-lib.sh"
command -v debuginfod >/dev/null || { echo "skip: no debuginfod (Debian: debuginfod)"; exit 77; }
work=$(mktemp -d /tmp/ustitch-dbgd.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; diff <(echo "$3") <(echo "$2") | sed 's/^/    /'; fi
}
progdir=$(dirname "$UST_TESTPROG_STRIPPED")
unstripped=$progdir/ust-testprog-unstripped
# fileoff BIN FUNC+0xOFF: the file offset of that address (as an unnamed frame prints it).
fileoff() {
	local f=${2%+*} off=$((${2#*+})) a typ o v p fs rest
	a=$(nm --defined-only "$1" | awk -v f="$f" '$3 == f { print $1; exit }')
	a=$((16#$a + off))
	while read -r typ o v p fs rest; do
		[ "$typ" = LOAD ] || continue
		if ((a >= v && a < v + fs)); then printf '0x%x\n' $((a - v + o)); return; fi
	done < <(readelf -lW "$1")
}

bid_st=$(bid "$UST_TESTPROG_STRIPPED") bid_tp=$(bid "$UST_TESTPROG_NOPIE")
ret_c_st=$(ret_after "$unstripped" ust_c 'call') ret_main_st=$(ret_after "$unstripped" main 'call.*ust_a')
ret_c=$(ret_after "$UST_TESTPROG_NOPIE" ust_c 'call') ret_main=$(ret_after "$UST_TESTPROG_NOPIE" main 'call.*ust_a')
off_c_st=$(fileoff "$unstripped" "$ret_c_st") off_main_st=$(fileoff "$unstripped" "$ret_main_st")

# The server's files: the stripped binary, its debug file, the unstripped one.
mkdir -p "$work/srv" "$work/bin" "$work/t"
cp "$UST_TESTPROG_STRIPPED" "$UST_TESTPROG_STRIPPED.debug" "$UST_TESTPROG_NOPIE" "$work/srv/"
# The traced copies, deleted after the trace is made.
# (ust-mktrace names the stripped one's functions through its debuglink.)
# On another file system than the work directory where it can be (tmpfs):
# on ext4 the client's cached copy of the same binary, written later, took
# the freed inode number now and then, and the report found the "gone"
# file again by (device, inode), its build-id right (the asan lane once).
bin=$work/bin
if [ -d /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$work")" ] &&
	bin=$(mktemp -d /dev/shm/ustitch-dbgd-bin.XXXXXX 2>/dev/null); then
	trap 'cleanup; rm -rf "$bin"' EXIT
else
	bin=$work/bin
fi
cp "$UST_TESTPROG_STRIPPED" "$UST_TESTPROG_STRIPPED.debug" "$UST_TESTPROG_NOPIE" "$bin/"
st=$bin/$(basename "$UST_TESTPROG_STRIPPED") tp=$bin/$(basename "$UST_TESTPROG_NOPIE")
cat >"$work/spec" <<EOF
cpus 1
cmdline 100 ust-testprog-st
cmdline 101 ust-testprog-no
mapping cpu=0 ts=900000 pid=100 path=$st as=/gone/ust-testprog-stripped
mapping cpu=0 ts=900001 pid=101 path=$tp as=/gone/ust-testprog-nopie
event cpu=0 ts=1000000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=1000000 pid=100 cookie=0x9
stack cpu=0 ts=1100000 pid=100 cookie=0x9 frames=$st:$ret_c_st,$st:$ret_main_st
event cpu=0 ts=2000000 pid=101 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=2000000 pid=101 cookie=0xb
stack cpu=0 ts=2100000 pid=101 cookie=0xb frames=$tp:$ret_c,$tp:$ret_main
event cpu=0 ts=3000000 pid=100 sys=syscalls name=sys_enter_getppid __syscall_nr=110
cookie cpu=0 ts=3000000 pid=100 cookie=0xd
stack cpu=0 ts=3100000 pid=100 cookie=0xd frames=$st:$ret_c_st,$st:$ret_main_st
EOF
"$UST_MKTRACE" "$work/spec" "$work/t/trace.dat" || { echo "ust-mktrace failed"; exit 1; }
rm -f "$st" "$st.debug" "$tp"

# start_server: a debuginfod on a free port scanning srv/ (debuginfod-lib.sh).
start_server() {
	dbgd_start "$work" "$work/srv" "$bid_st" || exit 1
	pids+=("$srv_pid")
}
stop_server() { dbgd_stop; }
# report NAME [ARGS...]: the report of t/trace.dat with a fresh client cache.
report() {
	local n=$1; shift
	DEBUGINFOD_URLS=${URLS:-http://127.0.0.1:$port} DEBUGINFOD_CACHE_PATH=$work/cache.$n \
		DEBUGINFOD_TIMEOUT=${DEBUGINFOD_TIMEOUT:-10} \
		ust_report "$work/t" "$work/$n.out" "$work/$n.err" "$@" trace.dat || bad "$n: report failed"
	grep '^=>' "$work/$n.out"
}

start_server
named="=> $ret_c_st (ust-testprog-stripped) [testprog.c:22]
=> $ret_main_st (ust-testprog-stripped) [testprog.c:49]
=> $ret_c (ust-testprog-nopie) [testprog.c:22]
=> $ret_main (ust-testprog-nopie) [testprog.c:49]
=> $ret_c_st (ust-testprog-stripped) [testprog.c:22]
=> $ret_main_st (ust-testprog-stripped) [testprog.c:49]"
expect "server up: names and lines from the server's files" "$(report up -O ustitch:lines=1)" "$named"
expect "server up: nothing on stderr" "$(cat "$work/up.err")" ""
expect "each file asked once (executables of both, debuginfo of the stripped one)" \
	"$(grep -ao 'GET /buildid/[0-9a-f]*/[a-z]*' "$work/server.log" | sort)" \
	"$(printf 'GET /buildid/%s/debuginfo\nGET /buildid/%s/executable\nGET /buildid/%s/executable\n' \
		"$bid_st" "$bid_st" "$bid_tp" | sort)"

gone_st="=> $off_c_st (ust-testprog-stripped: no longer exists)
=> $off_main_st (ust-testprog-stripped: no longer exists)"
expect "debuginfod=0: not asked" "$(report off -O ustitch:debuginfod=0 | head -2)" "$gone_st"

# The archive, filled from the server where the files are not here.
out=$(cd "$work/t" && DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$work/cache.arch \
	"$UST_USTITCH" archive --debuginfod 2>&1 | head -1)
expect "ustitch archive --debuginfod" "$out" \
	"2 files and 1 debug file (0.0 MiB) archived in trace.dat.ustitch; 3 fetched from debuginfod"
stop_server

expect "server stopped, archive there: symbolized from it" "$(report arch -O ustitch:lines=1)" "$named"
expect "server stopped, archive there: nothing on stderr" "$(cat "$work/arch.err")" ""
rm -rf "$work/t/trace.dat.ustitch"

expect "server stopped: frames unnamed, the report goes on" "$(report down | head -2)" "$gone_st"
expect "server stopped: said once" "$(cat "$work/down.err")" \
	"ustitch: debuginfod (http://127.0.0.1:$port): Connection refused, asking for the executable of build-id $bid_st: not asked again in this report (3 more requests not made)"

# A server that accepts connections and never answers: one bounded wait
# (DEBUGINFOD_TIMEOUT=2), then no more asking.
sport=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64); time.sleep(600)' "$sport" &
pids+=("$!")
sleep 1
t0=$(date +%s)
got=$(DEBUGINFOD_TIMEOUT=2 URLS=http://127.0.0.1:$sport report slow | head -2)
t1=$(date +%s)
expect "silent server: frames unnamed, the report goes on" "$got" "$gone_st"
expect "silent server: said once, one wait" "$(sed 's/: [A-Z][a-z ]*, asking/: ERR, asking/' "$work/slow.err")" \
	"ustitch: debuginfod (http://127.0.0.1:$sport): ERR, asking for the executable of build-id $bid_st: not asked again in this report (3 more requests not made)"
echo "    (the report took $((t1 - t0)) s; $(cat "$work/slow.err" | sed 's/.*): \([^,]*\),.*/\1/'))"

# A server that answers the stripped binary's build-id with another binary.
mkdir -p "$work/wrong/buildid/$bid_st"
cp "$UST_TESTPROG_NOPIE" "$work/wrong/buildid/$bid_st/executable"
wport=$(free_port)
(cd "$work/wrong" && exec python3 -m http.server --bind 127.0.0.1 "$wport") >"$work/wrong.log" 2>&1 &
pids+=("$!")
for i in $(seq 1 60); do
	curl -sf "http://127.0.0.1:$wport/buildid/$bid_st/executable" -o /dev/null && break
	sleep 0.2
done
refused="debuginfod: file for build-id $bid_st has build-id $bid_tp: refused"
expect "wrong file: refused, said at its frames" "$(URLS=http://127.0.0.1:$wport report wrong | head -2)" \
	"=> $off_c_st (ust-testprog-stripped: $refused)
=> $off_main_st (ust-testprog-stripped: $refused)"
expect "wrong file: nothing else said" "$(cat "$work/wrong.err")" ""

[ $fails -eq 0 ]
