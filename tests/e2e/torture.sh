#!/bin/bash
# torture.sh [FIRST_SEED [COUNT]]: lost-event torture.  For each seed,
# `ust-mktrace --torture` writes a random trace spec (cookies, stacks and
# pages dropped with the kernel's missed-events marks, on 1-4 CPUs, kernel
# and BPF buffer layouts, cookies reused as after a counter wrap) and the
# truth about it; the real `trace-cmd report` with our plugin renders it,
# and every cookie and stack line must say exactly what the truth says:
#   - a cookie whose entry's stack was kept: that entry's frames, no others
#   - a cookie whose stack was dropped: "never arrived"
#   - a stack: "shown at N events" for its N cookies kept, or, when all were
#     dropped, "no event in this trace requested cookie" and its frames
#   - every loss: trace-cmd's "[N EVENTS DROPPED]" mark on its buffer and
#     CPU, without N where the page had no room for the count
# with the exact number of each.
set -u
first=${1:-1} count=${2:-${UST_TORTURE_SEEDS:-200}}
. "$(dirname "$0")/report-lib.sh"
work=$(mktemp -d /tmp/ustitch-torture.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The report as "KIND TS_US COOKIE WHAT" lines, in the truth's terms.
observe() {
	awk '
	function flush() {
		if (kind == "") return
		if (kind == "C") {
			# Refused as another task stack: also said, and not shown
			# (a task whose own requests were all lost looks so).
			if (msg ~ /never arrived|, not to the requesting task [0-9]+: not shown/) what = "missing"
			else if (msg != "") what = "message " msg
			else what = "stack " fr
		} else if (shown != "") {
			what = "shown " shown
			if (fr != "" || msg != "") what = what " but " msg fr
		} else if (msg ~ /no event in this trace requested cookie|requested only by another task.s events: not stitched/) {
			what = "orphan " fr
		} else {
			what = "message " msg " " fr
		}
		print kind, ts, cookie, what
		kind = ""
	}
	/^=> / { fr = fr (fr == "" ? "" : ",") $2; next }
	/^ *([a-z]+: +)?CPU:[0-9]+ \[([0-9]+ )?EVENTS DROPPED\]$/ {
		flush()
		buf = $1 ~ /:$/ && $1 !~ /^CPU/ ? substr($1, 1, length($1) - 1) : "top"
		cpu = $0; sub(/.*CPU:/, "", cpu); sub(/ .*/, "", cpu)
		n = $0; sub(/.*\[/, "", n); sub(/ .*/, "", n)
		print "L", buf, cpu, n ~ /^[0-9]+$/ ? n : "?"
		next
	}
	/^\[ustitch: / { msg = msg $0; next }
	{
		flush()
		if ($0 !~ /user_unwind_(cookie|stack):/) next
		kind = $0 ~ /user_unwind_cookie:/ ? "C" : "S"
		fr = ""; msg = ""; shown = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				split(substr($i, 1, length($i) - 1), p, ".")
				ts = p[1] * 1000000 + p[2]
			} else if ($i ~ /^[0-9]+:$/ && $(i - 1) ~ /^\[[0-9]+\]$/) {
				ts = int(substr($i, 1, length($i) - 1) / 1000)	# raw ns (see run-case.sh)
			} else if ($i ~ /^cookie=/) {
				cookie = substr($i, 8)
			}
		}
		if (match($0, /shown at [0-9]+ event/)) {
			shown = substr($0, RSTART + 9, RLENGTH - 15)
		}
	}
	END { flush() }'
}

fail=0 shown=0 missing=0 orphans=0 stacks=0 losses=0
for ((seed = first; seed < first + count; seed++)); do
	d=$work/$seed
	mkdir -p "$d"
	if ! "$UST_MKTRACE" --torture "$seed" "$d/spec" "$d/truth" ||
	   ! "$UST_MKTRACE" "$d/spec" "$d/trace.dat" 2>"$d/mk.err"; then
		echo "seed $seed: ust-mktrace failed:"; cat "$d/mk.err"; exit 1
	fi
	# Odd seeds: the plugin keeps the text of a few stacks at a time and
	# prints the others through its evictions (plugin_ustitch.c).
	if ((seed % 2)); then export USTITCH_RENDERED_BUDGET=512; else unset USTITCH_RENDERED_BUDGET; fi
	ust_report "$d" "$d/out" "$d/err" trace.dat || { echo "seed $seed"; exit 1; }
	observe <"$d/out" >"$d/seen"
	# Losses: as a set (see mkt_torture.c); the rest in order.
	if ! diff -u <(grep '^L' "$d/truth" | sort) <(grep '^L' "$d/seen" | sort) >"$d/diff" ||
	   ! diff -u <(grep -v '^L' "$d/truth") <(grep -v '^L' "$d/seen") >>"$d/diff"; then
		echo "seed $seed: the report differs from the truth (- truth, + report):"
		grep '^[-+][CSL]' "$d/diff" | head -20
		echo "--- stderr:"; head -5 "$d/err"
		cp "$d/spec" "/tmp/ustitch-torture-$seed.spec"
		cp "$d/out" "/tmp/ustitch-torture-$seed.out"
		echo "spec and report kept as /tmp/ustitch-torture-$seed.{spec,out}"
		fail=1
		continue
	fi
	shown=$((shown + $(grep -c '^C .* stack ' "$d/truth")))
	missing=$((missing + $(grep -c '^C .* missing$' "$d/truth")))
	stacks=$((stacks + $(grep -c '^S ' "$d/truth")))
	orphans=$((orphans + $(grep -c '^S .* orphan ' "$d/truth")))
	losses=$((losses + $(grep -c '^L ' "$d/truth")))
	rm -rf "$d"
done
[ $fail -eq 0 ] || exit 1
echo "ok: $count seeds from $first: $shown cookies shown with their own stack, $missing said never arrived, $stacks stacks ($orphans requested by no kept event), $losses losses marked"
