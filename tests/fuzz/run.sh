#!/bin/bash
# run.sh SECONDS BUILDDIR [TARGET...]: run each libFuzzer target (default:
# all) for SECONDS over its generated seeds (BUILDDIR/fuzz-corpus/<t>) and
# the corpus it grew before (BUILDDIR/fuzz-work/<t>).  Prints per target the
# executions, the corpus size and the findings (crash-*, leak-*, timeout-*,
# oom-* files in BUILDDIR/fuzz-findings/), with the report of each; then
# "fuzz: N passed, N failed".  Exit status 1 when a target found something.
# UST_FUZZ_REPLAY="t ...": those targets only run their seeds and grown
# corpus once each (regression inputs), without fuzzing.
set -u
secs=$1 dir=$(cd "$2" && pwd) || exit 1
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode scan sym cfi perf lh af bt2 park)
mkdir -p "$dir/fuzz-findings" "$dir/fuzz-logs"
cat "$src/tests/lsan.supp" "$src/tests/fuzz/lsan.supp" >"$dir/fuzz-lsan.supp"
pass=0 fail=0
for t in "${targets[@]}"; do
	exe=$dir/tests/fuzz/fuzz_$t seeds=$dir/fuzz-corpus/$t work=$dir/fuzz-work/$t
	log=$dir/fuzz-logs/$t.log art=$dir/fuzz-findings/$t-
	mkdir -p "$work"
	if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
		echo "fuzz_$t: not built (tests/fuzz/build.sh)"; fail=$((fail + 1)); continue
	fi
	# fuzz_scan: libtracecmd leaks on every corrupt file (lsan.supp), which
	# would make libFuzzer run a full leak check after each input; leaks are
	# still checked at exit.
	extra=(-max_total_time="$secs")
	[[ " ${UST_FUZZ_REPLAY:-} " == *" $t "* ]] && extra=(-runs=0)
	[ "$t" = scan ] && extra+=(-detect_leaks=0)
	before=$(find "$dir/fuzz-findings" -name "$t-*" | wc -l)
	# Leaks inside the system's libraries are not ours (lsan.supp).
	( cd /tmp && ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:allocator_may_return_null=1 \
		LSAN_OPTIONS=suppressions=$dir/fuzz-lsan.supp \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		UST_FUZZ_SCAN_TEMPLATES=$dir/fuzz-corpus/scan-templates \
		"$exe" -timeout=25 -rss_limit_mb=2048 -max_len=1048576 \
		-print_final_stats=1 -artifact_prefix="$art" "${extra[@]}" "$work" "$seeds" ) >"$log" 2>&1
	rc=$?
	execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
	units=$(find "$work" -type f | wc -l)
	found=$(( $(find "$dir/fuzz-findings" -name "$t-*" | wc -l) - before ))
	printf 'fuzz_%-7s %10s executions in %s s, corpus %d, findings %d\n' \
		"$t" "${execs:-?}" "$secs" "$units" "$found"
	if [ $rc -ne 0 ] || [ "$found" -gt 0 ]; then
		fail=$((fail + 1))
		grep -E -A30 '^==[0-9]+==ERROR|runtime error:|^==[0-9]+== ERROR|deadly signal|Test unit written|ALARM' "$log" | head -60
		grep -qE '^==[0-9]+==|Test unit written|ALARM' "$log" || tail -5 "$log"
	else
		pass=$((pass + 1))
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
