#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# An LTTng trace read where its binary is not: a private lttng-sessiond
# records ust-lttng-app (a stripped copy with a debuglink, whose debug
# file is elsewhere) with the ustitch contexts; then the copy is deleted
# and sink.ustitch.text reads the trace with
#   debuginfod=yes   a real debuginfod on 127.0.0.1 serving the stripped
#                    copy and its debug file: every frame of
#                    expected/basic.txt named, in order, locks named too
#                    (the whole output is basic.txt's); the binary and its
#                    debug file each asked once; with lines=yes, source
#                    lines and the tracepoint's inlined frame (DWARF's)
#   debuginfod=no    the same frames unnamed, "no longer exists"
#   archive=DIR      `ustitch archive -f` made before the copy went: named
#                    and with lines again, the server stopped
#   archive=DIR      with a malformed manifest line: said once, the rest used
#   archive=missing  a clear message, and babeltrace2 fails
#   server stopped   debuginfod=yes: unnamed frames, one message at the end
set -u
. "$(dirname "$0")/lttng-env.sh"
. "$(dirname "$0")/../e2e/debuginfod-lib.sh"
EXPECTED=$(dirname "$0")/expected
SRC=$(dirname "$0")/ust-lttng-app.c
CTX=(-t vpid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks')
command -v debuginfod >/dev/null || skip "no debuginfod (Debian: debuginfod)"
[[ -n "${UST_USTITCH:-}" ]] || skip "built without the ustitch tool"
W=$UST_TMP

check() {	# NAME GOT WANT
	if [[ "$2" != "$3" ]]; then
		diff -u <(echo "$3") <(echo "$2")
		fail "$1: output differs (above: - expected, + got)"
	fi
	echo "ok: $1"
}
# frames FILE: the stack lines of a sink's output, offsets out.
frames() { grep '^=> ' "$1" | sed -E 's/\+0x[0-9a-f]+ \(/+OFF (/; s/^=> 0x[0-9a-f]+ \(/=> 0xOFF (/'; }
# read_trace NAME PARAMS: the sink's output in NAME.out, stderr in NAME.err,
# a fresh debuginfod client cache each time.
read_trace() {
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$W/cache.$1 DEBUGINFOD_TIMEOUT=10 \
		bt2 "$W/t" -c sink.ustitch.text -p "$2" >"$W/$1.out" 2>"$W/$1.err"
}

# The traced copy: stripped of everything, with a debuglink to a debug
# file that only the server (and the archive) will have.
mkdir -p "$W/bin" "$W/srv" "$W/dbg"
app=$W/bin/ust-lttng-app
objcopy --only-keep-debug "$UST_LTTNG_APP" "$W/srv/ust-lttng-app.debug" || fail "objcopy --only-keep-debug"
objcopy --strip-all --add-gnu-debuglink="$W/srv/ust-lttng-app.debug" "$UST_LTTNG_APP" "$app" ||
	fail "objcopy --strip-all"
cp "$app" "$W/srv/"
id=$(bid "$app")
[[ -n "$id" && "$id" == "$(bid "$W/srv/ust-lttng-app.debug")" ]] || fail "no build-id shared by the copy and its debug file"

session t
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u "${CTX[@]}"
lt start
UST_LTTNG_APP=$app run_app basic || fail "ust-lttng-app basic exited with $?"
lt stop
lt destroy t

# The archive, made on the recording machine while the copy is there;
# its debug file from a build-id directory (as /usr/lib/debug has them).
mkdir -p "$W/dbg/.build-id/${id:0:2}"
cp "$W/srv/ust-lttng-app.debug" "$W/dbg/.build-id/${id:0:2}/${id:2}.debug"
out=$("$UST_USTITCH" archive -o "$W/arch" -f "$app" -d "$W/dbg" 2>&1 | head -1 | sed -E 's/\([0-9.]+ MiB\)/(N MiB)/')
check "ustitch archive -f" "$out" "1 file and 1 debug file (N MiB) archived in $W/arch"
check "ustitch archive -f: the manifest" "$(grep -v '^#' "$W/arch/manifest" | cut -d' ' -f3-)" \
	"$id $(stat -c %s "$app") $app"
out=$("$UST_USTITCH" archive -f "$app" 2>&1)
check "ustitch archive -f without -o: said" "$out" \
	"ustitch archive: -f names the files instead of a trace: say where with -o DIR"
out=$("$UST_USTITCH" archive -o "$W/arch2" -f "$W/bin/none" 2>&1)
check "ustitch archive -f of no file: said" "$out" "ustitch archive: $W/bin/none: No such file or directory"
rm -f "$app"

dbgd_start "$W" "$W/srv" "$id" || fail "debuginfod did not start"
UST_CHILDREN+=("$srv_pid")

# The frames of expected/basic.txt, and the first stack (tag 1) down to
# main with the source lines of its calls, as the sources have them.
named=$(grep '^=> ' "$EXPECTED/basic.txt")
line() { grep -n -m1 -F "$1" "${2:-$SRC}" | cut -d: -f1; }
tag1="=> lttng_ust_tracepoint_cb_ustlt___work [inlined] (ust-lttng-app) [ust_lttng_app_tp.h:$(line \
	'LTTNG_UST_TRACEPOINT_EVENT(ustlt, work,' "$(dirname "$0")/ust_lttng_app_tp.h")]
=> lt_emit+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'lttng_ust_tracepoint(ustlt, work, tag, n);')]
=> lt_inner+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'lt_emit(tag, 0);')]
=> lt_middle+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'lt_inner(tag);')]
=> lt_outer+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'lt_middle(tag);')]
=> basic+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'lt_outer(1);')]
=> main+OFF (ust-lttng-app) [ust-lttng-app.c:$(line 'return basic();')]"
unnamed=$(echo "$named" | sed -E 's/^=> [A-Za-z_0-9]+\+OFF \(ust-lttng-app\)$/=> 0xOFF (ust-lttng-app: no longer exists)/')

read_trace up 'debuginfod=yes' || fail "babeltrace2 (server up): $(cat "$W/up.err")"
check "debuginfod=yes: every frame named, in order" "$(frames "$W/up.out")" "$named"
check "debuginfod=yes: the whole output as expected/basic.txt (locks named from the debug file)" \
	"$(normalize <"$W/up.out")" "$(cat "$EXPECTED/basic.txt")"
check "debuginfod=yes: nothing on stderr" "$(cat "$W/up.err")" ""
check "debuginfod=yes: the binary and its debug file asked once each" \
	"$(grep -ao "GET /buildid/$id/[a-z]*" "$W/server.log" | sort)" \
	"GET /buildid/$id/debuginfo
GET /buildid/$id/executable"
read_trace lines 'debuginfod=yes,lines=yes' || fail "babeltrace2 (lines=yes): $(cat "$W/lines.err")"
check "debuginfod=yes,lines=yes: source lines" "$(frames "$W/lines.out" | head -7)" "$tag1"

read_trace off 'debuginfod=no' || fail "babeltrace2 (debuginfod=no): $(cat "$W/off.err")"
check "debuginfod=no: frames unnamed" "$(frames "$W/off.out")" "$unnamed"

dbgd_stop

read_trace arch "archive=\"$W/arch\",debuginfod=no" || fail "babeltrace2 (archive): $(cat "$W/arch.err")"
check "archive=DIR: every frame named, in order" "$(frames "$W/arch.out")" "$named"
check "archive=DIR: the whole output as expected/basic.txt" \
	"$(normalize <"$W/arch.out")" "$(cat "$EXPECTED/basic.txt")"
read_trace archlines "archive=\"$W/arch\",debuginfod=no,lines=yes" ||
	fail "babeltrace2 (archive, lines=yes): $(cat "$W/archlines.err")"
check "archive=DIR,lines=yes: source lines" "$(frames "$W/archlines.out" | head -7)" "$tag1"
check "archive=DIR: nothing on stderr" "$(cat "$W/arch.err")" ""

cp -r "$W/arch" "$W/arch-bad"
echo "not a manifest line" >>"$W/arch-bad/manifest"
read_trace archbad "archive=\"$W/arch-bad\",debuginfod=no" || fail "babeltrace2 (archive, a bad line): $(cat "$W/archbad.err")"
check "archive=DIR with a malformed line: the rest used" "$(frames "$W/archbad.out")" "$named"
check "archive=DIR with a malformed line: said once" "$(cat "$W/archbad.err")" \
	"ustitch: archive $W/arch-bad: 1 malformed manifest line ignored"

read_trace noarch "archive=\"$W/none\"" && fail "archive=DIR without an archive: babeltrace2 succeeded"
check "archive=DIR without an archive: said" "$(grep '^ustitch:' "$W/noarch.err")" \
	"ustitch: archive $W/none: No such file or directory"

read_trace down 'debuginfod=yes' || fail "babeltrace2 (server stopped): $(cat "$W/down.err")"
check "server stopped: frames unnamed, the output goes on" "$(frames "$W/down.out")" "$unnamed"
check "server stopped: said once" "$(cat "$W/down.err")" \
	"ustitch: debuginfod (http://127.0.0.1:$port): Connection refused, asking for the executable of build-id $id: not asked again in this report (1 more request not made)"
exit 0
