#!/bin/sh
# split-debug.sh OBJCOPY STRIP READELF IN OUT_STRIPPED OUT_DEBUG DEBUG_ROOT
#
# Make a stripped binary plus its separate debug file the two ways
# distributions ship them: side by side through .gnu_debuglink, and in a
# build-id tree DEBUG_ROOT/.build-id/xx/rest.debug.  The binary keeps no
# .symtab at all (--strip-all), so its symbols can only come from the
# debug file.
set -eu
objcopy=$1 strip=$2 readelf=$3 in=$4 out=$5 dbg=$6 root=$7
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
in=$(abs "$in") out=$(abs "$out") dbg=$(abs "$dbg")

"$objcopy" --only-keep-debug "$in" "$dbg"
"$strip" --strip-all -o "$out.tmp" "$in"
# --add-gnu-debuglink records the basename and the CRC of the file it is
# given, and the debug file sits next to the binary: run from there.
dbgdir=$(dirname "$dbg")
(cd "$dbgdir" && "$objcopy" --add-gnu-debuglink="$(basename "$dbg")" \
	"$out.tmp" "$out.tmp2")
mv "$out.tmp2" "$out"
rm -f "$out.tmp"

id=$("$readelf" -n "$in" | sed -n 's/^ *Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || { echo "split-debug.sh: $in has no build-id" >&2; exit 1; }
rm -rf "$root/.build-id"
mkdir -p "$root/.build-id/$(echo "$id" | cut -c1-2)"
cp "$dbg" "$root/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
