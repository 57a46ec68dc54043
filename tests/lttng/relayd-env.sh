#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# Sourced by the LTTng tests that stream through a relay daemon: the
# private lttng-sessiond of lttng-env.sh, in its own network namespace
# when root, plus a private lttng-relayd started by relayd_start:
#
#   RELAYD_OUT      its --output directory (HOST/SESSION-DATE/ust/... below)
#   RELAYD_CTRL, RELAYD_DATA, RELAYD_LIVE
#                   its ports on 127.0.0.1, chosen free
#   RELAYD_HOST     the host name it files the sessions under
#   RELAYD_PID      its pid
#
# The daemon runs in the foreground, a child of the test, so it is
# stopped by its pid at exit (after the session daemon).

UST_LTTNG_NETNS=1
. "$(dirname "${BASH_SOURCE[0]}")/lttng-env.sh"
command -v lttng-relayd >/dev/null || skip "lttng-relayd is not installed"

RELAYD_OUT=$UST_TMP/relayd
RELAYD_HOST=$(hostname)

# Whether something listens on TCP port $1 (any address, IPv4 or IPv6).
port_listening() {
	local hex
	printf -v hex '%04X' "$1"
	# local_address is column 2 ("ADDR:PORT"), state column 4 (0A: LISTEN).
	awk -v p=":$hex" 'NR > 1 && substr($2, length($2) - 4) == p && $4 == "0A" { f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# A port nothing listens on, from the ephemeral-free range 20000-29999.
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 10000))
		[[ " $* " == *" $p "* ]] && continue
		port_listening "$p" || { echo "$p"; return 0; }
	done
	return 1
}

# relayd_start: a relay daemon listening on three free ports, or fail.  A
# port taken between the check and the bind makes it exit: tried again.
relayd_start() {
	local try i pid
	mkdir -p "$RELAYD_OUT"
	for ((try = 0; try < 3; try++)); do
		RELAYD_CTRL=$(free_port) && RELAYD_DATA=$(free_port "$RELAYD_CTRL") &&
			RELAYD_LIVE=$(free_port "$RELAYD_CTRL" "$RELAYD_DATA") || fail "no free TCP port"
		lttng-relayd --output="$RELAYD_OUT" \
			--control-port="tcp://127.0.0.1:$RELAYD_CTRL" \
			--data-port="tcp://127.0.0.1:$RELAYD_DATA" \
			--live-port="tcp://127.0.0.1:$RELAYD_LIVE" >"$UST_TMP/relayd.log" 2>&1 &
		pid=$!
		RELAYD_PID=$pid
		UST_CHILDREN+=("$pid")
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			port_listening "$RELAYD_CTRL" && port_listening "$RELAYD_DATA" &&
				port_listening "$RELAYD_LIVE" && return 0
			sleep 0.1
		done
		stop_pid "$pid"
		wait "$pid" 2>/dev/null
		forget_child "$pid"
	done
	fail "lttng-relayd did not start: $(tail -5 "$UST_TMP/relayd.log")"
}

# relayd_trace SESSION: the one trace directory the relay daemon wrote
# for SESSION (HOST/SESSION-DATE), or fail.
relayd_trace() {
	local d=("$RELAYD_OUT/$RELAYD_HOST/$1"-[0-9]*)
	[[ ${#d[@]} == 1 && -d "${d[0]}" ]] ||
		fail "relayd wrote no single trace for $1: $(cd "$RELAYD_OUT" && find . -maxdepth 3 | head)"
	echo "${d[0]}"
}
