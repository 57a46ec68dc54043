#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# Sourced by the tests that read a trace elsewhere against a real
# debuginfod server on 127.0.0.1 (tests/e2e/debuginfod.sh,
# tests/lttng/test-lttng-elsewhere.sh): the server's database in the
# caller's work directory, its scan directory given.
#
#   bid FILE                        the GNU build-id of FILE, in hex
#   free_port                       a free TCP port on 127.0.0.1
#   dbgd_start WORK SCANDIR BID     sets port and srv_pid; returns once the
#                                   server serves the executable of BID
#   dbgd_stop                       stops it (and waits for it)

bid() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Each try with a fresh client cache: the client remembers misses.  The
# server's log ($1/server.log) is emptied once it is up, so a test can
# count the requests that follow.
dbgd_start() {
	local work=$1 scan=$2 want=$3 i
	port=$(free_port)
	debuginfod -p "$port" -d "$work/db.sqlite" -F -t 0 -g 0 "$scan" >"$work/server.log" 2>&1 &
	srv_pid=$!
	for i in $(seq 1 60); do
		if DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$work/probe.$i \
		   debuginfod-find executable "$want" >/dev/null 2>&1; then
			rm -rf "$work"/probe.*; : >"$work/server.log"; return 0
		fi
		sleep 0.5
	done
	echo "debuginfod did not come up:"; cat "$work/server.log"
	return 1
}
dbgd_stop() { kill "$srv_pid"; wait "$srv_pid" 2>/dev/null; }
