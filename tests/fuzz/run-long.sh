#!/bin/bash
# run-long.sh [SECONDS-PER-TARGET] [BUILDDIR]: build (tests/fuzz/build.sh),
# then run every target for SECONDS (default 3600) and print executions and
# findings per target.  The grown corpora stay in BUILDDIR/fuzz-work, the
# findings in BUILDDIR/fuzz-findings.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3600} dir=${2:-$here/../../build-fuzz}
bash "$here/build.sh" "$dir" >"$dir.build.log" 2>&1 || { tail -40 "$dir.build.log"; exit 1; }
start=$(date +%s)
rc=0
bash "$here/run.sh" "$secs" "$dir" || rc=$?
echo "fuzz: $(( ($(date +%s) - start) / 60 )) minutes in all"
exit $rc
