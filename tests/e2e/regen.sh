#!/bin/bash
# Developer aid, never run by the suite: print a case's actual output with
# machine-specific values turned back into @PLACEHOLDERS@, to be reviewed
# line by line before it becomes the case's .expected file.
# usage (from the build dir): tests/e2e/regen.sh NAME
set -u
src=$(dirname "$0")
out=$(UST_REGEN=1 meson test --no-rebuild e2e-"$1" -v 2>&1 | sed -n '/^===REGEN===$/,/^===END===$/p' | sed '1d;$d')
printf '%s\n' "$out"
