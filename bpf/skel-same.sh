#!/bin/sh
# skel-same.sh OUT REF.skel.h VARIANT.skel.h...: the variants of one BPF
# object (bpfu.bpf.c built with other UST_BPFU_* values) are opened through
# REF's skeleton (lib/record/bpfu_obj.c), so each must have REF's maps and
# programs, by name, and REF's global variables at REF's offsets.  Writes
# OUT (a stamp) when they do; fails the build, naming the first
# difference, when they do not.
set -eu
out=$1 ref=$2
shift 2
# The skeleton struct of a header, with its name made neutral: maps and
# programs sorted (libbpf finds them by name), the datasec structs as
# they are (their members' order is their layout).
shape() {
	sed -n '/^struct [a-z0-9_]* {$/,/^};$/p' "$1" | grep -E 'struct bpf_(map|program) \*' | sort
	sed -n '/^struct [a-z0-9_]* {$/,/^};$/p' "$1" |
		sed -n '/^	struct [a-z0-9_]*__\(rodata\|bss\|data\) {$/,/^	} \*[a-z]*;$/p' |
		sed 's/struct [a-z0-9_]*__\(rodata\|bss\|data\) {/struct X__\1 {/'
}
shape "$ref" >"$out.ref"
for v in "$@"; do
	shape "$v" >"$out.var"
	if ! diff -u "$out.ref" "$out.var" >"$out.diff"; then
		echo "$v: not the same maps, programs or globals as $ref:" >&2
		cat "$out.diff" >&2
		exit 1
	fi
done
rm -f "$out.ref" "$out.var" "$out.diff"
echo ok >"$out"
