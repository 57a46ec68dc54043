#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# Stacks through code without frame pointers: ust-lttng-cfi-app and its
# libraries are built -O2 -fomit-frame-pointer, so the provider must walk
# by CFI (its in-process unwind tables).  Every chain of the application
# (see ust-lttng-cfi-app.c: a leaf under a lock, a qsort() comparator, a
# signal handler, a thread, JIT code, a dlopen()ed library before and
# after dlclose() and a dlopen() at another address) must print exactly
# its frames (expected/cfi.txt, offsets and addresses normalized) and say
# how it was taken: "complete, by CFI", or for the JIT chain "by CFI and
# frame pointers; some frames unresolved" (the JIT frame is an address in
# no object).  The dlopen()ed library must be described at two addresses.
set -u
. "$(dirname "$0")/lttng-env.sh"
EXPECTED=$(dirname "$0")/expected
[[ -n "${UST_LTTNG_CFI_APP:-}" && -n "${UST_LTTNG_CFI_DL:-}" ]] || skip "no ust-lttng-cfi-app"

# lttng-env.sh's normalize, and the JIT frame's address (in no object) hidden.
normalize_cfi() {
	normalize | sed -E 's/^=> 0x[0-9a-f]+$/=> 0xJIT/'
}

session cfi
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u -t vpid -t '$app.ustitch:stack_id' -t '$app.ustitch:lock_depth' -t '$app.ustitch:locks'
lt start
preload=$UST_LTTNG_PROVIDER
[[ -n "$UST_SAN_PRELOAD" ]] && preload=$UST_SAN_PRELOAD:$preload
LD_PRELOAD=$preload timeout 120 "$UST_LTTNG_CFI_APP" all "$UST_LTTNG_CFI_DL" ||
	fail "ust-lttng-cfi-app exited with $?"
lt stop
lt destroy cfi
bt2 "$UST_TMP/cfi" -c sink.ustitch.text >"$UST_TMP/cfi.out" 2>"$UST_TMP/cfi.err" ||
	fail "babeltrace2: $(cat "$UST_TMP/cfi.err")"
normalize_cfi <"$UST_TMP/cfi.out" >"$UST_TMP/cfi.norm"
if ! diff -u "$EXPECTED/cfi.txt" "$UST_TMP/cfi.norm"; then
	fail "cfi: output differs from expected/cfi.txt (above)"
fi
echo "ok: 7 chains, exact"

# The library was described at two load addresses.
bases=$(grep ' ustitch:object: ' "$UST_TMP/cfi.out" | grep 'libustlt-cfi-dl.so"' |
	grep -oE 'base = 0x[0-9a-f]+' | sort -u | wc -l)
[[ $bases == 2 ]] || fail "libustlt-cfi-dl.so described at $bases addresses, expected 2"
echo "ok: dlopen, dlclose, dlopen elsewhere"

# The application frames are return addresses right after the call of
# the frame above (the same check as lttng-flow).
nm --defined-only "$UST_LTTNG_CFI_APP" >"$UST_TMP/nm"
objdump -d --no-show-raw-insn "$UST_LTTNG_CFI_APP" >"$UST_TMP/dis"
n=$(awk -v obj="$(basename "$UST_LTTNG_CFI_APP")" -f "$(dirname "$0")/check-callsites.awk" \
	"$UST_TMP/nm" "$UST_TMP/dis" "$UST_TMP/cfi.out") || fail "frames: $n"
echo "ok: $n frames of the application, each right after the call of the frame above"

# Without CFI (USTITCH_LTTNG_UNWIND=fp) the same application gets at most
# the probe's frame: the walk without tables is what the tables fix.
session fp
lt enable-event -u 'ustlt:*,ustitch:*'
lt add-context -u -t '$app.ustitch:stack_id'
lt start
USTITCH_LTTNG_UNWIND=fp LD_PRELOAD=$preload timeout 120 "$UST_LTTNG_CFI_APP" all "$UST_LTTNG_CFI_DL" ||
	fail "ust-lttng-cfi-app (fp) exited with $?"
lt stop
lt destroy fp
bt2 "$UST_TMP/fp" -c sink.ustitch.text >"$UST_TMP/fp.out" 2>&1
full=$(grep -c 'how = "complete, by CFI"' "$UST_TMP/fp.out")
[[ $full == 0 ]] || fail "fp: $full stacks by CFI with CFI off"
echo "ok: USTITCH_LTTNG_UNWIND=fp walks by frame pointers only"
exit 0
