#!/bin/bash
# Benchmark: `trace-cmd report` of a generated trace (1M events, 100k
# stacks) with our plugin vs. without, the share of the plugin's first
# pass, and the memory the plugin adds over `trace-cmd report -N`.  Prints
# times, ratios and bytes measured in this one run.
#
# UST_BENCH_LARGE=1: issue 18's traces instead (about 0.5 and 1 GB, written
# under $UST_BENCH_DIR or /tmp and removed), with their goals:
#   (a) 1M requesting events among 20M ordinary ones, cookies and stacks in
#       a "ustitch" buffer (the BPF layout): extra max RSS under 64 MB, wall
#       time with symbols at most 1.3 times -N's;
#   (b) 10M requesting events, 1M stacks, all distinct: extra max RSS under
#       48 bytes per request besides what the distinct stacks hold, wall
#       time with symbols at most 1.3 times -N's.
#
# Time: wall and CPU (user + system) time of each report; on a busy
# machine the CPU time is the one to compare.
#
# Memory: max RSS is the kernel's (VmHWM, by /usr/bin/time); it counts the
# pages of the trace.dat that trace-cmd maps, as many with the plugin as
# with -N, so the difference is the plugin's.  Peak RssAnon (sampled every
# 50 ms) leaves the file's pages out altogether.
set -u
events=${UST_BENCH_EVENTS:-1000000} stacks=${UST_BENCH_STACKS:-100000}
work=$(mktemp -d "${UST_BENCH_DIR:-/tmp}/ustitch-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkfifo out.fifo || exit 1

# run plugin|none [REPORT ARGS...]: "wall_s cpu_s max_rss_kib peak_anon_kib lines" of one report
run() {
	local mode=$1 s e tp wc pid='' peak=0 k v u sy rss
	local -a envs=(-u TRACEEVENT_PLUGIN_DIR)

	shift
	[ "$mode" = plugin ] && envs=(TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" USTITCH_DEBUG=1)
	wc -l <out.fifo >lines.txt &
	wc=$!
	s=$(date +%s.%N)
	env "${envs[@]}" HOME="$work" /usr/bin/time -f '%U %S %M' -o rss.txt \
		trace-cmd report "$@" trace.dat >out.fifo 2>err.txt &
	tp=$!
	while kill -0 "$tp" 2>/dev/null; do
		[ -n "$pid" ] || read -r pid _ <"/proc/$tp/task/$tp/children" 2>/dev/null
		if [ -n "$pid" ]; then
			while read -r k v _; do
				[ "$k" = RssAnon: ] && ((v > peak)) && peak=$v
			done <"/proc/$pid/status" 2>/dev/null
		fi
		sleep 0.05
	done
	wait "$tp"
	e=$(date +%s.%N)
	wait "$wc"
	read -r u sy rss <<<"$(tail -1 rss.txt)"
	echo "$(echo "$e - $s" | bc) $(echo "$u + $sy" | bc) $rss $peak $(cat lines.txt)"
}

# measure LABEL NEVENTS NSTACKS [UST-MKTRACE OPTIONS...]: prints one trace's figures
measure() {
	local label=$1 ev=$2 st=$3 t0 t1 plain nop ours scan scan_cpu reqs dstacks dbytes
	local w_plain w_n w_ours c_plain c_n c_ours hwm_n hwm_ours anon_n anon_ours
	local lines_plain lines_ours
	shift 3

	t0=$(date +%s.%N)
	"$UST_MKTRACE" --bench "$ev" "$st" trace.dat "$@" || exit 1
	t1=$(date +%s.%N)
	echo "== $label: ust-mktrace --bench $ev $st $*"
	echo "generated: $(du -m trace.dat | cut -f1) MB in $(echo "$t1 - $t0" | bc) s"
	plain=$(run none)
	nop=$(run none -N)
	ours=$(run plugin)
	read -r w_plain c_plain _ _ lines_plain <<<"$plain"
	read -r w_n c_n hwm_n anon_n _ <<<"$nop"
	read -r w_ours c_ours hwm_ours anon_ours lines_ours <<<"$ours"
	scan=$(sed -n 's/.*first pass over .* in \([0-9.]*\) s (.*/\1/p' err.txt)
	scan_cpu=$(sed -n 's/.*first pass over .* (\([0-9.]*\) s of CPU)$/\1/p' err.txt)
	reqs=$(sed -n 's/.*first pass over .*, \([0-9]*\) requests, .*/\1/p' err.txt)
	dstacks=$(sed -n 's/.*distinct stacks: \([0-9]*\), .*/\1/p' err.txt)
	dbytes=$(sed -n 's/.*distinct stacks: .*, \([0-9]*\) bytes$/\1/p' err.txt)

	printf 'load average before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '                                  wall, s   CPU, s       lines\n'
	printf 'trace-cmd report, no plugin:    %8.2f %8.2f  %10d\n' "$w_plain" "$c_plain" "$lines_plain"
	printf 'trace-cmd report -N:            %8.2f %8.2f\n' "$w_n" "$c_n"
	printf 'trace-cmd report, with ustitch: %8.2f %8.2f  %10d\n' "$w_ours" "$c_ours" "$lines_ours"
	printf 'ratio with/without plugin:      %8.3f %8.3f\n' \
		"$(echo "$w_ours / $w_plain" | bc -l)" "$(echo "$c_ours / $c_plain" | bc -l)"
	printf 'ratio with plugin / -N:         %8.3f %8.3f\n' \
		"$(echo "$w_ours / $w_n" | bc -l)" "$(echo "$c_ours / $c_n" | bc -l)"
	[ -n "$scan" ] && [ -n "$scan_cpu" ] &&
		printf 'first pass:                     %8.3f %8.3f  = %.1f %% / %.1f %% of a plain report\n' \
			"$scan" "$scan_cpu" "$(echo "100 * $scan / $w_plain" | bc -l)" \
			"$(echo "100 * $scan_cpu / $c_plain" | bc -l)"
	printf 'max RSS with plugin / -N:       %d / %d KiB, %d KiB more\n' "$hwm_ours" "$hwm_n" \
		"$((hwm_ours - hwm_n))"
	printf 'peak RssAnon with plugin / -N:  %d / %d KiB, %d KiB more\n' "$anon_ours" "$anon_n" \
		"$((anon_ours - anon_n))"
	if [ -n "$reqs" ] && [ -n "$dbytes" ] && ((reqs > 0)); then
		printf 'requests %d, distinct stacks %d holding %d KiB (frames, index, text)\n' \
			"$reqs" "$dstacks" "$((dbytes / 1024))"
		printf 'extra max RSS besides the distinct stacks, per request: %.1f bytes\n' \
			"$(echo "((($hwm_ours - $hwm_n) * 1024) - $dbytes) / $reqs" | bc -l)"
	fi
	extra_kib=$((hwm_ours - hwm_n)) over_n=$(echo "$w_ours / $w_n" | bc -l)
	over_n_cpu=$(echo "$c_ours / $c_n" | bc -l)
	per_req=$(echo "((($hwm_ours - $hwm_n) * 1024) - ${dbytes:-0}) / ${reqs:-1}" | bc -l)
	rm -f trace.dat
}

goal() {	# goal TEXT OK: one line of the goals
	printf '%-66s %s\n' "$1" "$([ "$2" = 1 ] && echo met || echo MISSED)"
}

# profiles LABEL NEVENTS NSTACKS: the report with and without the three
# profile outputs (issue 41: flamegraph=, pprof=, top=; goal: at most 1.2
# times the report's time without them), best of 3 each, in CPU time.
profiles() {
	local label=$1 ev=$2 st=$3 i c best_p='' best_o='' r
	"$UST_MKTRACE" --bench "$ev" "$st" trace.dat || exit 1
	echo "== $label: ust-mktrace --bench $ev $st, $(du -m trace.dat | cut -f1) MB"
	for i in 1 2 3; do
		r=$(run plugin)
		c=$(cut -d' ' -f2 <<<"$r")
		[ -z "$best_p" ] || (($(echo "$c < $best_p" | bc))) && best_p=$c
		r=$(run plugin -O ustitch:flamegraph="$work/p.svg" -O ustitch:pprof="$work/p.pb.gz" \
			-O ustitch:top=10)
		c=$(cut -d' ' -f2 <<<"$r")
		[ -z "$best_o" ] || (($(echo "$c < $best_o" | bc))) && best_o=$c
	done
	printf 'report CPU, s: %.2f without, %.2f with flamegraph + pprof + top: %.3f times\n' \
		"$best_p" "$best_o" "$(echo "$best_o / $best_p" | bc -l)"
	goal "profiles: $(printf %.2f "$(echo "$best_o / $best_p" | bc -l)") times the report <= 1.2" \
		"$(echo "$best_o / $best_p <= 1.2" | bc)"
	rm -f trace.dat "$work/p.svg" "$work/p.pb.gz"
}

if [ -z "${UST_BENCH_LARGE:-}" ]; then
	# UST_BENCH_ARGS: more ust-mktrace --bench options (e.g. --distinct N).
	# shellcheck disable=SC2086
	measure "report-plugin" "$events" "$stacks" ${UST_BENCH_ARGS:-}
	profiles "profiles (166 MB)" 1650000 165000
	exit 0
fi
measure "(a) 1M requests among 20M ordinary events, ustitch buffer" 1000000 100000 \
	--ordinary "${UST_BENCH_ORDINARY:-20000000}" --ustitch-buffer
a_extra=$extra_kib a_ratio=$over_n a_ratio_cpu=$over_n_cpu
measure "(b) 10M requests, 1M distinct stacks" 10000000 1000000 --distinct 1000000
echo "== goals"
goal "(a) extra max RSS $((a_extra / 1024)) MiB < 64 MB" \
	"$(echo "$a_extra * 1024 < 64000000" | bc)"
goal "(a) wall time with symbols over -N $(printf %.2f "$a_ratio") <= 1.3" \
	"$(echo "$a_ratio <= 1.3" | bc)"
goal "(a) the same in CPU time $(printf %.2f "$a_ratio_cpu") <= 1.3" \
	"$(echo "$a_ratio_cpu <= 1.3" | bc)"
goal "(b) extra max RSS besides the distinct stacks $(printf %.1f "$per_req") B/request < 48" \
	"$(echo "$per_req < 48" | bc)"
goal "(b) wall time with symbols over -N $(printf %.2f "$over_n") <= 1.3" \
	"$(echo "$over_n <= 1.3" | bc)"
goal "(b) the same in CPU time $(printf %.2f "$over_n_cpu") <= 1.3" \
	"$(echo "$over_n_cpu <= 1.3" | bc)"
exit 0
