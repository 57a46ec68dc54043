#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# Sourced by the LTTng tests: a private lttng-sessiond, started and
# stopped by the test itself, that can never meet another one.
#
# As root, the test re-runs itself in a new mount namespace with private
# tmpfs mounts on /run/lttng (the root session daemon's sockets and pid
# file) and /dev/shm (lttng-ust's wait shm), plus its own LTTNG_HOME.
# Without root, LTTNG_HOME alone isolates a per-user daemon.  The daemon
# is stopped by the pid in its own pid file, at exit, whatever happens.
# A test that sets UST_LTTNG_NETNS=1 before sourcing this also gets its
# own network namespace (root only: its loopback is brought up), so the
# relay daemon's ports meet nobody else's (relayd-env.sh).
#
# Environment from meson: UST_LTTNG_PROVIDER, UST_BT2_PLUGIN_DIR,
# UST_LTTNG_APP, UST_SAN_PRELOAD (sanitizer runtimes, may be empty),
# UST_SANITIZED (1 in a sanitized build).

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[[ -n "${UST_LTTNG_PROVIDER:-}" && -n "${UST_BT2_PLUGIN_DIR:-}" && -n "${UST_LTTNG_APP:-}" ]] ||
	skip "built without lttng-ust or babeltrace2 development files"
for tool in lttng lttng-sessiond babeltrace2 unshare; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done
[[ "${UST_SANITIZED:-0}" != 1 || -n "${UST_SAN_PRELOAD:-}" ]] ||
	skip "sanitized build without preloadable sanitizer runtimes (gcc only)"

if [[ $(id -u) == 0 && -z "${UST_LTTNG_NS:-}" ]]; then
	export UST_LTTNG_NS=1
	exec unshare --mount ${UST_LTTNG_NETNS:+--net} --propagation private -- "$BASH" "$0" "$@"
fi

UST_TMP=$(mktemp -d /tmp/ustitch-lttng.XXXXXX) || fail "mktemp"
if [[ $(id -u) == 0 ]]; then
	mkdir -p /run/lttng
	mount -t tmpfs ustitch-lttng /run/lttng || skip "cannot mount a private /run/lttng"
	mount -t tmpfs ustitch-shm /dev/shm || skip "cannot mount a private /dev/shm"
	UST_PIDFILE=/run/lttng/lttng-sessiond.pid
	if [[ -n "${UST_LTTNG_NETNS:-}" ]]; then
		command -v ip >/dev/null || skip "ip (iproute2) is not installed"
		ip link set lo up || skip "cannot bring up the loopback of a private network namespace"
	fi
else
	UST_PIDFILE=$UST_TMP/.lttng/lttng-sessiond.pid
fi
export LTTNG_HOME=$UST_TMP HOME=$UST_TMP
# Host tools loading our (possibly sanitized) plugin.
export ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:${ASAN_OPTIONS}}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}

# Processes the test started itself (a relay daemon, a live reader):
# stopped after the session daemon, whose consumers talk to them.
UST_CHILDREN=()

# stop_pid PID: TERM, up to 10 s to go, then KILL.
stop_pid() {
	local i
	kill "$1" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
}

# forget_child PID: a child the test has reaped itself (wait), whose pid
# may belong to another process by the time the test exits.
forget_child() {
	local i
	for i in "${!UST_CHILDREN[@]}"; do
		[[ ${UST_CHILDREN[$i]} == "$1" ]] && unset 'UST_CHILDREN[i]'
	done
	return 0
}

ust_lttng_stop() {
	local pid i
	pid=$(cat "$UST_PIDFILE" 2>/dev/null)
	if [[ -n "$pid" ]]; then
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		# Still there (a session left active by a failed step): the
		# daemon and its consumer daemons, which share its process
		# group (it called setsid when it daemonized).
		if kill -0 "$pid" 2>/dev/null; then
			kill -9 -- "-$pid" 2>/dev/null
			kill -9 "$pid" 2>/dev/null
		fi
	fi
	for pid in "${UST_CHILDREN[@]}"; do
		stop_pid "$pid"
	done
	[[ -n "${UST_KEEP:-}" ]] || rm -rf "$UST_TMP"
}
trap ust_lttng_stop EXIT

lttng-sessiond --daemonize --no-kernel >"$UST_TMP/sessiond.log" 2>&1 ||
	fail "lttng-sessiond did not start: $(cat "$UST_TMP/sessiond.log")"
for ((i = 0; i < 100; i++)); do
	[[ -s "$UST_PIDFILE" ]] && lttng list >/dev/null 2>&1 && break
	sleep 0.1
done
[[ -s "$UST_PIDFILE" ]] || fail "lttng-sessiond wrote no pid file"

# lt: lttng, quiet unless it fails.
lt() {
	local out
	out=$(lttng "$@" 2>&1) || fail "lttng $*: $out"
}

# run_app [--no-provider] ARGS...: the test application, with the provider
# (and the sanitizer runtimes it needs in a sanitized build) preloaded.
run_app() {
	local preload=$UST_LTTNG_PROVIDER
	if [[ $1 == --no-provider ]]; then
		preload=
		shift
	fi
	[[ -n "$UST_SAN_PRELOAD" ]] && preload=$UST_SAN_PRELOAD${preload:+:$preload}
	LD_PRELOAD=$preload timeout 120 "$UST_LTTNG_APP" "$@"
}

# bt2 DIR [babeltrace2 args]: read a trace with our plugin available.
bt2() {
	local dir=$1
	shift
	LD_PRELOAD=$UST_SAN_PRELOAD timeout 120 babeltrace2 --plugin-path="$UST_BT2_PLUGIN_DIR" \
		"$dir" "$@"
}

# A recording session NAME writing to $UST_TMP/NAME.
session() {
	lt create "$1" --output="$UST_TMP/$1"
}

# normalize: the sink's text with machine- and build-dependent parts out: time, host, cpu, pids, ids,
# function offsets (gcc and clang lay code out differently), heap
# addresses, and the ustitch:object lines (inodes, load addresses).
normalize() {
	grep -v ' ustitch:object: ' |
	sed -E -e 's/^\[[^]]*\] \([^)]*\) [^ ]+ //' \
		-e 's/cpu_id = [0-9]+/cpu_id = C/' \
		-e 's/(vpid|pid) = [0-9]+/\1 = PID/g' \
		-e 's/stack_id = 0x[0-9a-f]+/stack_id = 0xID/g' \
		-e 's/\+0x[0-9a-f]+ \(/+OFF (/' \
		-e 's/locks = \[ 0x[0-9a-f]+ \]/locks = [ 0xHEAP ]/'
}
