#!/bin/bash
# Install what is needed, build with gcc and clang, run every test, then
# run them again built with ASan+UBSan.  Prints one summary line.
set -u
cd "$(dirname "$0")"
bash tests/install-deps.sh || { echo "ustitch: installing packages failed"; exit 1; }

pass=0 fail=0 skip=0
# What failed in every lane, printed again just above the summary line:
# CI keeps only the end of this output, and the vm lane's failures would
# otherwise scroll away behind two more lanes.
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
# failed_parts LOG: each "not ok" subtest (and Bail out!) with the comment
# lines after it, at most 40 lines.
failed_parts() {
	awk '/^(not ok|Bail out!)/ { n = 4; print "  " $0; next }
	     n > 0 && /^#/ { n--; print "  " substr($0, 1, 300); next } { n = 0 }' "$1" | head -40
}
# note_failures LANE LOG: the lane's failing tests and their failing
# subtests, kept for the end.
note_failures() {
	{
		grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$2" | sed "s/^ */  $1: /" | sort -u
		failed_parts "$2" | head -12
	} >>"$failures"
}
lane() {	# lane NAME CC TEST-ARGS MESON-ARGS...
	local name=$1 cc=$2 testargs=$3; shift 3
	local dir=build-$name
	echo "=== lane $name"
	rm -rf "$dir"
	if ! CC=$cc meson setup "$dir" "$@" >"$dir.setup.log" 2>&1; then
		cat "$dir.setup.log"; fail=$((fail + 1)); return
	fi
	if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		tail -40 "$dir.build.log"; fail=$((fail + 1)); return
	fi
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs --num-processes 2 $testargs 2>&1 | tee "$dir.test.log" |
		grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass):' || true
	# What failed, from --print-errorlogs' copy of a failing test's TAP
	# output: CI shows this log's end only.
	failed_parts "$dir.test.log"
	note_failures "$name" "$dir.test.log"
	local ok f s t
	ok=$(awk '/^Ok:/{print $2}' "$dir.test.log"); f=$(awk '/^Fail:/{print $2}' "$dir.test.log")
	s=$(awk '/^Skipped:/{print $2}' "$dir.test.log"); t=$(awk '/^Timeout:/{print $2}' "$dir.test.log")
	pass=$((pass + ${ok:-0})); fail=$((fail + ${f:-0} + ${t:-0})); skip=$((skip + ${s:-0}))
	[ -n "$ok" ] || fail=$((fail + 1))
}

# The fuzz lane: the libFuzzer targets of tests/fuzz/ (clang, ASan+UBSan),
# built with their generated seed corpora, 30 s each; a crash, leak or
# timeout is a failure.  Counts one pass or fail per target.
fuzz_lane() {
	local dir=build-fuzz ok f
	echo "=== lane fuzz"
	rm -rf "$dir" "$dir.test.log"
	if ! bash tests/fuzz/build.sh "$dir" >"$dir.build.log" 2>&1; then
		tail -40 "$dir.build.log"; fail=$((fail + 1)); return
	fi
	bash tests/fuzz/run.sh 30 "$dir" 2>&1 | tee "$dir.test.log"
	grep -E 'findings [1-9]|==ERROR|deadly signal|runtime error:' "$dir.test.log" | sed 's/^/  fuzz: /' | head -5 >>"$failures"
	ok=$(sed -n 's/^fuzz: \([0-9]*\) passed, [0-9]* failed$/\1/p' "$dir.test.log")
	f=$(sed -n 's/^fuzz: [0-9]* passed, \([0-9]*\) failed$/\1/p' "$dir.test.log")
	pass=$((pass + ${ok:-0})); fail=$((fail + ${f:-0}))
	[ -n "$ok" ] || fail=$((fail + 1))
}

# The kernel matrix (Debian's kernels under QEMU, see tests/vm/) tests the
# kernels, not the compiler: it runs once, on the gcc build, after that
# lane and alone (each guest takes one CPU: two at a time).
vm_lane() {
	local dir=build-gcc ok f s
	echo "=== lane vm"
	if [ ! -d "$dir" ]; then
		fail=$((fail + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 --suite vm 2>&1 | tee "$dir.vm.log" |
		grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):' || true
	failed_parts "$dir.vm.log"
	note_failures vm "$dir.vm.log"
	ok=$(awk '/^Ok:/{print $2}' "$dir.vm.log"); f=$(awk '/^Fail:/{print $2}' "$dir.vm.log")
	s=$(awk '/^Skipped:/{print $2}' "$dir.vm.log"); t=$(awk '/^Timeout:/{print $2}' "$dir.vm.log")
	pass=$((pass + ${ok:-0})); fail=$((fail + ${f:-0} + ${t:-0})); skip=$((skip + ${s:-0}))
	[ -n "$ok" ] || fail=$((fail + 1))
}

lane gcc gcc "--no-suite vm"
vm_lane
lane clang clang "--no-suite vm"
lane asan gcc "--no-suite vm" -Db_sanitize=address,undefined -Db_lundef=false
fuzz_lane

if [ -s "$failures" ]; then
	echo "=== what failed"
	head -60 "$failures"
fi
echo "ustitch: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
