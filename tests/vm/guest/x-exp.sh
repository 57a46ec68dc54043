#!/bin/bash
B=$UST_VM_BUILD
U=$UST_USTITCH
P=$B/tests/live/perf/perf-prog-o2
rep() { env HOME=/tmp TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report "$@" 2>&1; }
USTITCH_PERF_PAGES=1 $U record -o k.dat -e cpu-clock -F 10000 -g --call-graph defer -- $P 300 300 tf 2>&1 | tail -5
rep -i k.dat > k.rep
awk -f $UST_VM_SRC/tests/live/perf/samples.awk k.rep > k.samples
awk '{print $2, $3, $5}' k.samples | sort | uniq -c | sort -rn | head -20
grep -c "DROPPED" k.rep
grep "DROPPED" k.rep | head
exit 1
