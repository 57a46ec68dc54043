#!/bin/bash
# The recorder's memory over a long recording: `ustitch record -g` and
# `perf record -g` (the anchor) sampling a busy `python3` (Debian's, no
# frame pointers) at 10 kHz for 4 and for 24 seconds.  Per way and
# length: the recorder's peak anonymous memory (RssAnon of its process,
# read every 100 ms: heap and private maps, not the pages of files it
# writes and maps) and how much it grew per second between the two
# lengths.  perf writes its ring to the file as it goes.  ustitch holds a
# sample until its user stack is stitched, and hands out what is settled
# about a second behind the newest record (lib/perf/perf_stitch.c,
# ust_perf_stitch_flush()); its spool keeps the records on disk and their
# index in sorted runs of 256k entries (lib/record/rec_spool.c).  One run
# each, about 70 s.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v perf >/dev/null || { echo "skip: no perf"; exit 77; }
work=$(mktemp -d /tmp/ustitch-bench-mem.XXXXXX)
trap 'rm -rf "$work"' EXIT

# peak_anon CMD...: runs CMD, prints the peak RssAnon (kB) of its process.
peak_anon() {
	local pid peak=0 v
	"$@" >/dev/null 2>"$work/err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
		sleep 0.1
	done
	wait "$pid"
	echo "$peak"
}

# The program recorded: busy for $1 seconds, growing nothing.
cat >"$work/busy.py" <<'PY'
import sys, time
t = time.time()
d = {}
while time.time() - t < float(sys.argv[1]):
    d[len(d) % 1000] = str(len(d)) * 10
PY

declare -A peak
printf '%-8s %8s %14s\n' way seconds "peak anon kB"
for way in ustitch perf; do
	for s in 4 24; do
		case $way in
		ustitch) peak[$way.$s]=$(peak_anon "$UST_USTITCH" record -q -o "$work/u.dat" -e cpu-clock \
					-F 10000 -g -- /usr/bin/python3 "$work/busy.py" "$s") ;;
		perf) peak[$way.$s]=$(peak_anon perf record -q -o "$work/p.data" -e cpu-clock -F 10000 -g \
				     -- /usr/bin/python3 "$work/busy.py" "$s") ;;
		esac
		printf '%-8s %8d %14d\n' "$way" "$s" "${peak[$way.$s]}"
	done
done
growth() { awk -v a="${peak[$1.4]}" -v b="${peak[$1.24]}" 'BEGIN { printf "%.0f", (b - a) / 20 }'; }
printf 'growth per second of recording, kB: ustitch %s, perf %s\n' "$(growth ustitch)" "$(growth perf)"
printf 'peak over perf -g'"'"'s, 24 s: %.2f\n' \
	"$(awk -v u="${peak[ustitch.24]}" -v p="${peak[perf.24]}" 'BEGIN { print u / p }')"
