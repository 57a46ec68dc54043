#!/bin/bash
# Benchmark: reading a trace elsewhere.  `trace-cmd report -O ustitch:lines=1`
# of a generated trace (UST_BENCH_EVENTS requesting events, default 200k,
# UST_BENCH_STACKS = 100k stacks) whose binary, a stripped one with a
# separate debug file, is gone from this machine; its files come
#   archive: from `ustitch archive` next to the trace (no server asked)
#   cold:    from a real debuginfod on 127.0.0.1, the client's cache empty
#   warm:    the same, the cache filled by the cold run
# Prints each report's wall and CPU time and the ratios to the archive's,
# all measured in this one run (best of UST_BENCH_RUNS, default 3).
set -u
command -v debuginfod >/dev/null || { echo "skip: no debuginfod (Debian: debuginfod)"; exit 77; }
events=${UST_BENCH_EVENTS:-200000} stacks=${UST_BENCH_STACKS:-100000} runs=${UST_BENCH_RUNS:-3}
work=$(mktemp -d "${UST_BENCH_DIR:-/tmp}/ustitch-bench-dbgd.XXXXXX")
srv_pid=
cleanup() { [ -n "$srv_pid" ] && { kill "$srv_pid"; wait "$srv_pid"; } 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/srv" "$work/bin" "$work/t"
prog=$UST_TESTPROG_STRIPPED
cp "$prog" "$prog.debug" "$work/srv/"
# Traced: the unstripped build (the same build-id; ust-mktrace --bench
# picks its functions from its .symtab), archived, then deleted.
cp "$(dirname "$prog")/ust-testprog-unstripped" "$work/bin/ust-testprog-stripped"
bin=$work/bin/ust-testprog-stripped
bid=$(readelf -n "$prog" | awk '/Build ID/ { print $3 }')
"$UST_MKTRACE" --bench "$events" "$stacks" "$work/t/trace.dat" --binary "$bin" >/dev/null || exit 1
echo "trace: $events requesting events, $stacks stacks, $(du -m "$work/t/trace.dat" | cut -f1) MB; binary $(basename "$prog") (stripped, build-id $bid)"

# The archive, made while the binary is still here.
(cd "$work/t" && "$UST_USTITCH" archive >/dev/null) || exit 1
mv "$work/t/trace.dat.ustitch" "$work/archive"
rm -f "$bin"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -p "$port" -d "$work/db.sqlite" -F -t 0 -g 0 "$work/srv" >"$work/server.log" 2>&1 &
srv_pid=$!
for i in $(seq 1 60); do
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$work/probe.$i \
		debuginfod-find executable "$bid" >/dev/null 2>&1 && break
	sleep 0.5
done

# run CACHE REPORT-ARGS...: "wall cpu" of one report; its frames' text in $work/frames
run() {
	local cache=$1 s e u sy
	shift
	s=$(date +%s.%N)
	( cd "$work/t" && env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
		DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH="$cache" \
		/usr/bin/time -f '%U %S' -o "$work/time.txt" \
		trace-cmd report -O ustitch:lines=1 "$@" trace.dat 2>"$work/err" | grep '^=>' | md5sum >"$work/frames" )
	e=$(date +%s.%N)
	read -r u sy <"$work/time.txt"
	echo "$(echo "$e - $s" | bc) $(echo "$u + $sy" | bc)"
}
best() { sort -n | head -1; }
arch=() cold=() warm=()
for r in $(seq 1 "$runs"); do
	arch+=("$(run "$work/cache.none.$r" -O ustitch:archive="$work/archive" -O ustitch:debuginfod=0)")
	sum_arch=$(cat "$work/frames")
	cold+=("$(run "$work/cache.$r")")
	sum_cold=$(cat "$work/frames")
	warm+=("$(run "$work/cache.$r")")
	sum_warm=$(cat "$work/frames")
done
[ "$sum_arch" = "$sum_cold" ] && [ "$sum_cold" = "$sum_warm" ] ||
	{ echo "FAIL: the three reports' frames differ"; exit 1; }
grep -q ' (ust-testprog-stripped) \[testprog.c:' <(cd "$work/t" && env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" \
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH="$work/cache.1" trace-cmd report -O ustitch:lines=1 trace.dat 2>/dev/null) ||
	{ echo "FAIL: the binary's frames are not symbolized with lines"; exit 1; }
gets=$(grep -ac 'GET /buildid/' "$work/server.log")
read -r wa ca <<<"$(printf '%s\n' "${arch[@]}" | best)"
read -r wc cc <<<"$(printf '%s\n' "${cold[@]}" | best)"
read -r ww cw <<<"$(printf '%s\n' "${warm[@]}" | best)"
printf '%-34s %8s %8s\n' "report -O ustitch:lines=1" "wall s" "cpu s"
printf '%-34s %8.3f %8.3f\n' "archive (no server)" "$wa" "$ca" "debuginfod, cold cache" "$wc" "$cc" \
	"debuginfod, warm cache" "$ww" "$cw"
echo "requests the server saw over $runs cold and $runs warm reports: $gets (the binary's executable and debuginfo, libc's debuginfo: a miss)"
printf 'cold/archive: wall %.2f, cpu %.2f   warm/archive: wall %.2f, cpu %.2f\n' \
	"$(echo "$wc / $wa" | bc -l)" "$(echo "$cc / $ca" | bc -l)" \
	"$(echo "$ww / $wa" | bc -l)" "$(echo "$cw / $ca" | bc -l)"
