#!/bin/bash
# Runs inside the vm lane's guest, chrooted into the host's root (read-only
# 9p): every test of the job that vm-lane.sh wrote into the scratch share,
# one at a time, each with its own time limit.  Per test it leaves
# results/ID.log (stdout and stderr) and then results/ID.rc; an .rc file
# means that test finished, so a guest that dies half-way still leaves the
# results of the tests before.
set -u
scratch=$1
job=$scratch/job
res=$scratch/results
# shellcheck source=/dev/null
. "$job/env"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8 TERM=dumb
# The host's /root is read-only here.
export HOME=/tmp/home
mkdir -p "$HOME" "$res"

# The verdict in meson's terms: PASS, FAIL or SKIP, plus a reason.
verdict() {	# verdict PROTOCOL RC LOG
	local proto=$1 rc=$2 log=$3
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "FAIL timed out"
	elif [ "$proto" = tap ]; then
		if [ "$rc" != 0 ]; then
			echo "FAIL exit status $rc"
		elif grep -q '^not ok' "$log"; then
			echo "FAIL a TAP subtest failed"
		elif grep -Eq '^1\.\.0( |$)' "$log"; then
			echo "SKIP $(sed -n 's/^1\.\.0 *# *[Ss][Kk][Ii][Pp] *//p' "$log" | head -1)"
		else
			echo "PASS"
		fi
	elif [ "$rc" = 0 ]; then
		echo "PASS"
	elif [ "$rc" = 77 ]; then
		echo "SKIP $(tail -n 1 "$log")"
	else
		echo "FAIL exit status $rc"
	fi
}

uname -r >"$res/kernel"
while read -r id name proto limit _show; do
	log=$res/$id.log
	# A fresh directory per test: scripts and tools write next to themselves.
	dir=$(mktemp -d "/tmp/vm-test.$id.XXXXXX")
	t0=$(date +%s%N)
	( cd "$dir" && exec timeout -k 10 "$limit" bash "$job/$id.sh" ) </dev/null >"$log" 2>&1
	rc=$?
	t1=$(date +%s%N)
	v=$(verdict "$proto" "$rc" "$log")
	ms=$(( (t1 - t0) / 1000000 ))
	echo "ustitch-vm: $name: ${v%% *} ($rc, $ms ms)" >/dev/console
	printf '%s\n%s\n%s\n' "$rc" "$ms" "$v" >"$res/$id.rc"
	sync
	rm -rf "$dir"
done <"$job/tests"
echo finished >"$res/done"
