#!/bin/bash
# temporary: why deep40's table is not found on 9p (6.1)
set -u
prog=$(readlink -f "$(dirname "$UST_USTITCH")/../tests/live/cfi/cfi-prog")
echo "prog=$prog"
stat -c 'stat: dev=%d devhex=%D ino=%i' "$prog"
"$prog" deep40 5 3000 & p=$!
sleep 0.5
grep cfi-prog /proc/$p/maps
ls -l /proc/$p/map_files/ | grep cfi-prog | head -3
for f in /proc/$p/map_files/*; do if [ "$(readlink "$f")" = "$prog" ]; then stat -L -c 'map_files stat: dev=%d devhex=%D ino=%i' "$f"; break; fi; done
wait $p
mkdir -p cache
USTITCH_CACHE_DIR=$PWD/cache USTITCH_TEST_TABLE_DELAY=300:cfi-prog "$UST_USTITCH" record -v -b 8192 \
	-e syscalls:sys_enter_read -e syscalls:sys_enter_sched_getscheduler -O userstacktrace_delay -o t.dat \
	-- sh -c "$prog deep40 5 1000; sleep 1; $prog deep40 5" >/dev/null 2>rec.err
echo "rc=$?"
cat rec.err
TRACEEVENT_PLUGIN_DIR=$UST_PLUGIN_DIR trace-cmd report t.dat 2>&1 | grep -E "user_mapping|no longer|=> .*cfi-prog" | sort | uniq -c | head -20
exit 0
